//! Statements: the bodies of procedures and decisions (`let`, `if`,
//! `for`, rolls, outcomes, state changes, calls) lowered to [`St`].

use super::*;

impl Compiler {
    pub(super) fn block(
        &mut self,
        stmts: &[Stmt],
        sc: &mut Scope,
        outcomes: &[OutcomeDef],
    ) -> Vec<St> {
        let m = sc.mark();
        let mut out = Vec::new();
        for s in stmts {
            if let Some(st) = self.stmt(s, sc, outcomes) {
                out.push(st);
            }
        }
        sc.reset(m);
        out
    }

    pub(super) fn stmt(&mut self, s: &Stmt, sc: &mut Scope, outcomes: &[OutcomeDef]) -> Option<St> {
        crate::front::nesting::guarded(|| self.stmt_here(s, sc, outcomes))
    }

    pub(super) fn stmt_here(
        &mut self,
        s: &Stmt,
        sc: &mut Scope,
        outcomes: &[OutcomeDef],
    ) -> Option<St> {
        match s {
            Stmt::Let(n, e) => {
                let Some((ex, ty)) = self.expr(e, sc, None) else {
                    sc.failed.push(n.text.clone());
                    return None;
                };
                if let Some((_, _)) = sc.lookup(&n.text) {
                    self.err(
                        Diag::new(
                            "muster::duplicate",
                            format!("`{}` is already bound here", n.text),
                        )
                        .at(n.span, "bound again")
                        .help("give each `let` its own name"),
                    );
                    return None;
                }
                let slot = sc.bind(&n.text, ty);
                Some(St::Let(slot, ex, e.span))
            }
            Stmt::Outcome(n, e) => {
                let Some(i) = outcomes.iter().position(|o| o.name == n.text) else {
                    let sugg = suggest(&n.text, outcomes.iter().map(|o| o.name.as_str()));
                    let ty = self
                        .expr(e, sc, None)
                        .map(|(_, t)| self.rs.ty_name(&t))
                        .unwrap_or_else(|| "int".into());
                    self.err(
                        Diag::new(
                            "muster::unknown_outcome",
                            format!("`{}` is not an outcome of this procedure", n.text),
                        )
                        .at(n.span, "not declared in `outcomes { }`")
                        .help(match sugg {
                            Some(s) => format!("did you mean `{s}`?"),
                            None => format!(
                                "declare it in the procedure's header: `outcomes {{ {}: {ty} }}`",
                                n.text
                            ),
                        }),
                    );
                    return None;
                };
                let want = outcomes[i].ty.clone();
                let (ex, ty) = self.expr(e, sc, Some(&want))?;
                self.expect(&ty, &want, e.span, &format!("outcome `{}`", n.text));
                Some(St::Outcome(i as u16, ex, e.span))
            }
            Stmt::Require(e, msg, span) => {
                let (ex, ty) = self.expr(e, sc, None)?;
                self.expect(&ty, &Ty::Bool, e.span, "a requirement");
                Some(St::Require(ex, msg.clone(), *span))
            }
            Stmt::If(c, a, b) => {
                let (ce, ct) = self.expr(c, sc, None)?;
                self.expect(&ct, &Ty::Bool, c.span, "the condition of `if`");
                let a = self.block(a, sc, outcomes);
                let b = self.block(b, sc, outcomes);
                Some(St::If(ce, a, b, c.span))
            }
            Stmt::ForFile(ff) => self.for_file(ff, sc, outcomes),
            Stmt::Mark(e, span) => self.mark(e, *span, sc),
            Stmt::For(var, coll, c, body) => {
                let sides = match coll {
                    None => false,
                    Some(n) if n.text == "sides" => true,
                    Some(n) if n.text == "units" => false,
                    Some(n) => {
                        self.err(
                            Diag::new(
                                "muster::quantifier",
                                format!("cannot range over `{}`", n.text),
                            )
                            .at(n.span, "not a collection")
                            .help("`for` ranges over `units` (the default) or `sides`"),
                        );
                        return None;
                    }
                };
                if sc.lookup(&var.text).is_some() {
                    self.err(
                        Diag::new(
                            "muster::duplicate",
                            format!("`{}` is already bound here", var.text),
                        )
                        .at(var.span, "bound again")
                        .help("give the loop's variable a name of its own"),
                    );
                    return None;
                }
                let m = sc.mark();
                let slot = sc.bind(&var.text, if sides { Ty::Side } else { Ty::Unit });
                let r = self.expr(c, sc, None);
                let body = self.block(body, sc, outcomes);
                sc.reset(m);
                let (ce, ct) = r?;
                self.expect(&ct, &Ty::Bool, c.span, "the condition of `for`");
                Some(St::For(sides, slot, ce, body, c.span))
            }
            Stmt::Assign(target, op, v, span) => {
                let ExprKind::Field(x, f) = &target.kind else {
                    self.err(
                        Diag::new("muster::assign", "only unit or side state can be changed")
                            .at(target.span, "not `unit.state`")
                            .help(
                                "write `u.resolve -= hits`; locals made with `let` do not change",
                            ),
                    );
                    return None;
                };
                let (xe, xt) = self.expr(x, sc, None)?;
                let op = match op {
                    syntax::AssignOp::Set => ModOp::Set,
                    syntax::AssignOp::Add => ModOp::Add,
                    syntax::AssignOp::Sub => ModOp::Sub,
                };
                let (is_side, id, ty) = match xt {
                    Ty::Unit => match self.state_names.get(&f.text) {
                        Some(i) => (false, *i, self.rs.states[*i as usize].ty.clone()),
                        None => {
                            let what = if self.stat_names.contains_key(&f.text) {
                                self.err(
                                    Diag::new("muster::assign", format!("`{}` is a stat, which never changes", f.text))
                                        .at(f.span, "a stat")
                                        .help(format!("declare a state for what changes in play: `state {}: int = self.{}`", f.text, f.text)),
                                );
                                return None;
                            } else {
                                "state"
                            };
                            self.unknown_field(f, what);
                            return None;
                        }
                    },
                    Ty::Side => match self.side_state_names.get(&f.text) {
                        Some(i) => (true, *i, self.rs.side_states[*i as usize].ty.clone()),
                        None => {
                            self.unknown_field(f, "side state");
                            return None;
                        }
                    },
                    other => return self.not_unit(&other, x.span),
                };
                let (ve, vt) = self.expr(v, sc, Some(&ty))?;
                if op == ModOp::Set {
                    self.expect(&vt, &ty, v.span, "the new value");
                } else {
                    self.expect(&ty, &Ty::Int, f.span, "a state changed with += or -=");
                    self.expect(&vt, &Ty::Int, v.span, "the amount");
                }
                Some(if is_side {
                    St::AssignSideState {
                        side: xe,
                        state: id,
                        op,
                        value: ve,
                        span: *span,
                    }
                } else {
                    St::AssignState {
                        unit: xe,
                        state: id,
                        op,
                        value: ve,
                        span: *span,
                    }
                })
            }
            Stmt::Note(n, args, v, span) => {
                let Some(Def::Fact(f)) = self.lookup(&n.text) else {
                    self.unknown(n, "fact", None);
                    return None;
                };
                let def = self.rs.facts[f as usize].clone();
                if def.battle.is_some() {
                    self.err(
                        Diag::new(
                            "muster::note",
                            format!("fact `{}` is derived from the table, so it cannot be noted", n.text),
                        )
                        .at(n.span, "derived `in battle:`")
                        .help("note facts that procedures decide (declared charges, hits this turn), not measured ones"),
                    );
                    return None;
                }
                let args = self.args(n, args, &def.params, sc, *span)?;
                let value = match v {
                    Some(e) => {
                        let (ex, ty) = self.expr(e, sc, Some(&def.ty))?;
                        self.expect(&ty, &def.ty, e.span, "the noted value");
                        ex
                    }
                    None => {
                        if def.ty != Ty::Bool {
                            self.err(
                                Diag::new(
                                    "muster::note",
                                    format!("fact `{}` is not true or false", n.text),
                                )
                                .at(n.span, "needs a value")
                                .help(format!("write `note {}(...) = VALUE`", n.text)),
                            );
                            return None;
                        }
                        Ex::Const(Value::Bool(true))
                    }
                };
                Some(St::Note(f, args, value, *span))
            }
            Stmt::Call(n, args, span) => {
                let Some(Def::Procedure(p)) = self.lookup(&n.text) else {
                    self.unknown(n, "procedure", None);
                    return None;
                };
                let params: Vec<Ty> = self.rs.procedures[p as usize]
                    .params
                    .iter()
                    .map(|x| x.1.clone())
                    .collect();
                let args = self.args(n, args, &params, sc, *span)?;
                Some(St::Call(p, args, *span))
            }
        }
    }
}
