//! Expressions: each checked against the type its place wants, names
//! resolved in scope, calls and fields typed, and lowered to [`Ex`].

use super::*;

impl Compiler {
    pub fn expect(&mut self, got: &Ty, want: &Ty, span: Span, what: &str) -> bool {
        let ok = match (got, want) {
            (Ty::Symbols(a), Ty::Symbols(b)) => a.iter().all(|x| b.contains(x)),
            _ => got == want,
        };
        if !ok {
            let (g, w) = (self.rs.ty_name(got), self.rs.ty_name(want));
            self.err(
                Diag::new(
                    "muster::type",
                    format!("{what} should be {w}, but this is {g}"),
                )
                .at(span, format!("this is {g}"))
                .help(format!("write an expression of type {w} here")),
            );
        }
        ok
    }

    /// Compile an expression; `want` guides how bare names resolve (enum
    /// values and outcome symbols). `None` means an error was reported.
    /// Compile an expression (on a stack with room for it: see
    /// [`crate::front::nesting`]).
    pub fn expr(
        &mut self,
        e: &syntax::Expr,
        sc: &mut Scope,
        want: Option<&Ty>,
    ) -> Option<(Ex, Ty)> {
        crate::front::nesting::guarded(|| self.expr_here(e, sc, want))
    }

    pub(super) fn expr_here(
        &mut self,
        e: &syntax::Expr,
        sc: &mut Scope,
        want: Option<&Ty>,
    ) -> Option<(Ex, Ty)> {
        use syntax::BinOp as B;
        if want == Some(&Ty::Dice) && crate::compile::rolls::is_pool_syntax(self, sc, e) {
            return crate::compile::rolls::pool_value(self, e, sc);
        }
        Some(match &e.kind {
            ExprKind::Roll { .. } => return crate::compile::rolls::roll(self, e, sc),
            ExprKind::Int(i) => (Ex::Const(Value::Int(*i)), Ty::Int),
            ExprKind::Bool(b) => (Ex::Const(Value::Bool(*b)), Ty::Bool),
            // `none`: a missing stat (a number), or no unit / no side.
            ExprKind::None => (
                Ex::Const(Value::None),
                match want {
                    Some(t @ (Ty::Unit | Ty::Side)) => t.clone(),
                    _ => Ty::Int,
                },
            ),
            ExprKind::Unlimited => (Ex::Const(Value::Int(UNLIMITED)), Ty::Int),
            ExprKind::Name(n) => return self.name_expr(n, sc, want),
            ExprKind::Field(x, f) => {
                let (xe, xt) = self.expr(x, sc, None)?;
                return self.field(xe, xt, f, sc.stat_fields, x.span);
            }
            ExprKind::Original(x) => {
                let ExprKind::Field(u, f) = &x.kind else {
                    self.err(
                        Diag::new("muster::original", "`original(...)` takes a unit's stat")
                            .at(x.span, "not `unit.stat`")
                            .help("write `original(u.resolve)` for the unit's starting value"),
                    );
                    return None;
                };
                let (ue, ut) = self.expr(u, sc, None)?;
                if ut != Ty::Unit {
                    return self.not_unit(&ut, u.span);
                }
                match self.stat_names.get(&f.text) {
                    Some(s) => (Ex::Stat(Box::new(ue), *s), Ty::Int),
                    None => {
                        self.unknown_field(f, "stat");
                        return None;
                    }
                }
            }
            ExprKind::Call(n, args) => return self.call(n, args, sc, e.span),
            ExprKind::Odds(o) => return crate::compile::chance::compile(self, o, sc, e.span),
            ExprKind::Neg(x) => {
                let (xe, xt) = self.expr(x, sc, None)?;
                self.expect(&xt, &Ty::Int, x.span, "the operand of `-`");
                (Ex::Neg(Box::new(xe)), Ty::Int)
            }
            ExprKind::Not(x) => {
                let (xe, xt) = self.expr(x, sc, None)?;
                self.expect(&xt, &Ty::Bool, x.span, "the operand of `not`");
                (Ex::Not(Box::new(xe)), Ty::Bool)
            }
            ExprKind::Binary(op, a, b) => {
                let bin = match op {
                    B::Or => Bin::Or,
                    B::And => Bin::And,
                    B::Eq => Bin::Eq,
                    B::Ne => Bin::Ne,
                    B::Lt => Bin::Lt,
                    B::Le => Bin::Le,
                    B::Gt => Bin::Gt,
                    B::Ge => Bin::Ge,
                    B::Add => Bin::Add,
                    B::Sub => Bin::Sub,
                    B::Mul => Bin::Mul,
                    B::Div => Bin::Div,
                };
                let (ae, at) = self.expr(a, sc, None)?;
                let (be, bt) = self.expr(b, sc, Some(&at))?;
                let ty = match bin {
                    Bin::Or | Bin::And => {
                        self.expect(&at, &Ty::Bool, a.span, "each side of `and`/`or`");
                        self.expect(&bt, &Ty::Bool, b.span, "each side of `and`/`or`");
                        Ty::Bool
                    }
                    Bin::Eq | Bin::Ne => {
                        self.expect(&bt, &at, b.span, "the right side of the comparison");
                        Ty::Bool
                    }
                    Bin::Lt | Bin::Le | Bin::Gt | Bin::Ge => {
                        self.expect(&at, &Ty::Int, a.span, "a number compared with `<`/`>`");
                        self.expect(&bt, &Ty::Int, b.span, "a number compared with `<`/`>`");
                        Ty::Bool
                    }
                    _ => {
                        self.expect(&at, &Ty::Int, a.span, "an arithmetic operand");
                        self.expect(&bt, &Ty::Int, b.span, "an arithmetic operand");
                        Ty::Int
                    }
                };
                (Ex::Bin(bin, Box::new(ae), Box::new(be)), ty)
            }
            ExprKind::Is(x, names, neg) => {
                let (xe, xt) = self.expr(x, sc, None)?;
                let ex = match &xt {
                    // `u is inferior`: a test of the unit's quality.
                    Ty::Unit
                        if !names.is_empty()
                            && names
                                .iter()
                                .all(|n| matches!(self.lookup(&n.text), Some(Def::Quality(_)))) =>
                    {
                        let mut set = vec![false; self.rs.qualities.len()];
                        for n in names {
                            if let Some(Def::Quality(q)) = self.lookup(&n.text) {
                                set[q as usize] = true;
                            }
                        }
                        Ex::IsQuality(Box::new(xe), set)
                    }
                    Ty::Unit => Ex::IsType(Box::new(xe), self.type_set(names)?),
                    Ty::Enum(en) => {
                        let mut syms = Vec::new();
                        for n in names {
                            match self.lookup(&n.text) {
                                Some(Def::Variant(e2, s)) if e2 == *en => syms.push(s),
                                _ => {
                                    let ename = self.rs.enums[*en as usize].name.clone();
                                    let vars: Vec<String> = self.rs.enums[*en as usize]
                                        .variants
                                        .iter()
                                        .map(|v| self.rs.symbols[*v as usize].clone())
                                        .collect();
                                    self.err(
                                        Diag::new(
                                            "muster::unknown_name",
                                            format!("`{}` is not a value of {ename}", n.text),
                                        )
                                        .at(n.span, format!("not one of {}", vars.join(" | ")))
                                        .help(format!("{ename} is one of: {}", vars.join(", "))),
                                    );
                                    return None;
                                }
                            }
                        }
                        Ex::IsSym(Box::new(xe), syms)
                    }
                    other => {
                        let t = self.rs.ty_name(other);
                        self.err(
                            Diag::new("muster::type", format!("`is` needs a unit or an enum value, but this is {t}"))
                                .at(x.span, format!("this is {t}"))
                                .help("use `is` to test a unit's type or class (`u is Horse`) or an enum (`position(a, b) is to_flank`); compare numbers with `==`"),
                        );
                        return None;
                    }
                };
                let ex = if *neg { Ex::Not(Box::new(ex)) } else { ex };
                (ex, Ty::Bool)
            }
            ExprKind::If(c, a, b) => {
                let (ce, ct) = self.expr(c, sc, None)?;
                self.expect(&ct, &Ty::Bool, c.span, "the condition of `if`");
                let (ae, at) = self.expr(a, sc, want)?;
                let (be, bt) = self.expr(b, sc, Some(want.unwrap_or(&at)))?;
                let ty = match (&at, &bt) {
                    (Ty::Symbols(x), Ty::Symbols(y)) => {
                        let mut v = x.clone();
                        v.extend(y.iter().filter(|s| !x.contains(s)));
                        Ty::Symbols(v)
                    }
                    _ => {
                        self.expect(&bt, &at, b.span, "the `else` branch");
                        at
                    }
                };
                (Ex::If(Box::new(ce), Box::new(ae), Box::new(be)), ty)
            }
            ExprKind::Quant(q, var, coll, body, value) => {
                let sides = match coll {
                    None => false,
                    Some(c) if c.text == "sides" => true,
                    Some(c) if c.text == "units" => false,
                    Some(c) => {
                        self.err(
                            Diag::new(
                                "muster::quantifier",
                                format!("cannot range over `{}`", c.text),
                            )
                            .at(c.span, "not a collection")
                            .help("quantifiers range over `units` (the default) or `sides`"),
                        );
                        return None;
                    }
                };
                let totals = matches!(
                    q,
                    syntax::Quant::Sum | syntax::Quant::Min | syntax::Quant::Max
                );
                let word = match q {
                    syntax::Quant::Sum => "sum",
                    syntax::Quant::Min => "min",
                    syntax::Quant::Max => "max",
                    syntax::Quant::Any => "any",
                    syntax::Quant::All => "all",
                    syntax::Quant::Count => "count",
                    syntax::Quant::First => "first",
                };
                match (totals, value) {
                    (true, None) => {
                        self.err(
                            Diag::new("muster::quantifier", format!("`{word}` needs a value to add up"))
                                .at(e.span, "no `of VALUE`")
                                .help(format!("write `{word} {}: CONDITION of VALUE`, e.g. `sum u: u.side == s of u.resolve`", var.text)),
                        );
                        return None;
                    }
                    (false, Some(v)) => {
                        self.err(
                            Diag::new("muster::quantifier", format!("`{word}` takes no `of VALUE`"))
                                .at(v.span, "a value here")
                                .help("only `sum`, `min` and `max` add up a value; `any`, `all`, `count` and `first` test a condition"),
                        );
                        return None;
                    }
                    _ => {}
                }
                let m = sc.mark();
                let slot = sc.bind(&var.text, if sides { Ty::Side } else { Ty::Unit });
                let r = self.expr(body, sc, None);
                let v = value.as_ref().map(|v| self.expr(v, sc, None));
                sc.reset(m);
                let (be, bt) = r?;
                self.expect(&bt, &Ty::Bool, body.span, "the condition of a quantifier");
                let be = match (v, value) {
                    (Some(v), Some(vs)) => {
                        let (ve, vt) = v?;
                        self.expect(&vt, &Ty::Int, vs.span, "the value a quantifier adds up");
                        // Over the units that qualify: sum adds 0 for the
                        // rest, min and max skip them (`none`).
                        let skip = if *q == syntax::Quant::Sum {
                            Value::Int(0)
                        } else {
                            Value::None
                        };
                        Ex::If(Box::new(be), Box::new(ve), Box::new(Ex::Const(skip)))
                    }
                    _ => be,
                };
                let ty = match q {
                    syntax::Quant::Count
                    | syntax::Quant::Sum
                    | syntax::Quant::Min
                    | syntax::Quant::Max => Ty::Int,
                    syntax::Quant::First if sides => Ty::Side,
                    syntax::Quant::First => Ty::Unit,
                    _ => Ty::Bool,
                };
                (Ex::Quant(*q, sides, slot, Box::new(be)), ty)
            }
            ExprKind::Dice {
                count,
                die,
                scoring,
                counting,
                reroll,
            } => {
                if !sc.dice {
                    self.err(
                        Diag::new("muster::dice_outside_procedure", "dice can only be rolled inside a procedure")
                            .at(e.span, "a roll here")
                            .help("tables, defines and quantities describe facts; roll in a procedure and pass the result in"),
                    );
                    return None;
                }
                let (ce, ct) = self.expr(count, sc, None)?;
                self.expect(&ct, &Ty::Int, count.span, "the number of dice");
                self.check_pool_count(&ce, count.span);
                let Some(Def::Die(d)) = self.lookup(&die.text) else {
                    self.unknown(
                        die,
                        "die",
                        Some("declare it, e.g. `die d6 = 1..6`, or `import core`".into()),
                    );
                    return None;
                };
                let mode = if let Some(t) = scoring {
                    let (te, tt) = self.expr(t, sc, None)?;
                    self.expect(&tt, &Ty::Int, t.span, "the score needed");
                    DiceMode::Scoring(Box::new(te))
                } else if !counting.is_empty() {
                    let faces = self.rs.dice[d as usize].faces.clone();
                    let mut marks = vec![false; faces.len()];
                    for f in counting {
                        let mut hit = false;
                        for (i, (n, _)) in faces.iter().enumerate() {
                            if *n == f.text {
                                marks[i] = true;
                                hit = true;
                            }
                        }
                        if !hit {
                            let names: Vec<String> = faces.iter().map(|x| x.0.clone()).collect();
                            self.err(
                                Diag::new(
                                    "muster::unknown_name",
                                    format!("die `{}` has no face `{}`", die.text, f.text),
                                )
                                .at(f.span, "no such face")
                                .help(format!("its faces are: {}", names.join(", "))),
                            );
                        }
                    }
                    DiceMode::Counting(marks)
                } else {
                    DiceMode::Sum
                };
                (
                    Ex::Dice {
                        count: Box::new(ce),
                        die: d,
                        mode,
                        reroll: *reroll,
                        span: e.span,
                    },
                    Ty::Int,
                )
            }
        })
    }

    /// A pool whose number of dice is a constant: negative is an error
    /// (a roll cannot have fewer than no dice; one computed at run time
    /// fails there), none a warning (it rolls nothing, always 0).
    pub(super) fn check_pool_count(&mut self, count: &Ex, span: Span) {
        match const_int(count) {
            Some(n) if n < 0 => self.err(
                Diag::new("muster::negative_pool", format!("a pool of {n} dice"))
                    .at(span, "this is negative")
                    .help("a pool rolls 0 or more dice; check the number of dice"),
            ),
            Some(0) => self.warn(
                Diag::new("muster::empty_pool", "a pool of 0 dice rolls nothing")
                    .at(span, "always 0 dice")
                    .help("this roll always reads 0; give the number of dice the rule means, or remove the roll"),
            ),
            _ => {}
        }
    }

    pub(super) fn not_unit<X>(&mut self, t: &Ty, span: Span) -> Option<X> {
        let tn = self.rs.ty_name(t);
        self.err(
            Diag::new("muster::type", format!("expected a unit, but this is {tn}"))
                .at(span, format!("this is {tn}"))
                .help("stats and state belong to units (and side state to sides)"),
        );
        None
    }

    pub(super) fn unknown_field(&mut self, f: &Name, what: &str) {
        let mut cands: Vec<&str> = self.rs.stats.iter().map(|s| s.as_str()).collect();
        cands.extend(self.rs.states.iter().map(|s| s.name.as_str()));
        cands.extend(self.rs.side_states.iter().map(|s| s.name.as_str()));
        let sugg = suggest(&f.text, cands.into_iter());
        self.err(
            Diag::new(
                "muster::unknown_name",
                format!("unknown {what} `{}`", f.text),
            )
            .at(f.span, format!("no {what} of this name"))
            .help(match sugg {
                Some(s) => format!("did you mean `{s}`?"),
                None => "declare it with `stat`, `state` or `side_state`".into(),
            }),
        );
    }

    pub(super) fn field(
        &mut self,
        xe: Ex,
        xt: Ty,
        f: &Name,
        stat_fields: bool,
        span: Span,
    ) -> Option<(Ex, Ty)> {
        match xt {
            Ty::Unit => {
                if f.text == "side" {
                    return Some((Ex::SideOf(Box::new(xe)), Ty::Side));
                }
                if !stat_fields {
                    if let Some(s) = self.state_names.get(&f.text) {
                        let ty = self.rs.states[*s as usize].ty.clone();
                        return Some((Ex::State(Box::new(xe), *s), ty));
                    }
                }
                if let Some(s) = self.stat_names.get(&f.text) {
                    return Some((Ex::Stat(Box::new(xe), *s), Ty::Int));
                }
                self.unknown_field(f, if stat_fields { "stat" } else { "stat or state" });
                None
            }
            Ty::Side => {
                if let Some(s) = self.side_state_names.get(&f.text) {
                    let ty = self.rs.side_states[*s as usize].ty.clone();
                    return Some((Ex::SideState(Box::new(xe), *s), ty));
                }
                self.unknown_field(f, "side state");
                None
            }
            Ty::Tallies(fx) => crate::compile::rolls::tally_field(self, xe, fx, f),
            other => self.not_unit(&other, span),
        }
    }

    pub(super) fn name_expr(
        &mut self,
        n: &Name,
        sc: &mut Scope,
        want: Option<&Ty>,
    ) -> Option<(Ex, Ty)> {
        if let Some(Ty::Symbols(syms)) = want {
            if let Some(s) = self.sym_ids.get(&n.text) {
                if syms.contains(s) {
                    return Some((Ex::Const(Value::Sym(*s)), Ty::Symbols(vec![*s])));
                }
            }
        }
        if let Some((ty, slot)) = sc.lookup(&n.text) {
            return Some((Ex::Local(slot), ty));
        }
        match self.lookup(&n.text) {
            Some(Def::Option(o)) => match self.rs.options[o as usize].number {
                // A number option is fixed when the ruleset is compiled.
                Some(v) => Some((Ex::Const(Value::Int(v)), Ty::Int)),
                None => Some((Ex::Option(o), Ty::Bool)),
            },
            Some(Def::Side(s)) => Some((Ex::Const(Value::Side(s)), Ty::Side)),
            Some(Def::Variant(e, s)) => Some((Ex::Const(Value::Sym(s)), Ty::Enum(e))),
            Some(Def::Die(_)) => {
                let one = syntax::Expr {
                    kind: ExprKind::Int(1),
                    span: n.span,
                };
                let e = syntax::Expr {
                    kind: ExprKind::Dice {
                        count: Box::new(one),
                        die: n.clone(),
                        scoring: None,
                        counting: vec![],
                        reroll: None,
                    },
                    span: n.span,
                };
                self.expr(&e, sc, want)
            }
            Some(Def::Fact(_) | Def::Define(_) | Def::Table(_) | Def::Quantity(_)) => {
                self.err(
                    Diag::new("muster::call", format!("`{}` takes arguments", n.text))
                        .at(n.span, "used without arguments")
                        .help(format!(
                            "call it as `{}(...)`, with no space before the parenthesis",
                            n.text
                        )),
                );
                None
            }
            Some(Def::UnitType(_) | Def::Class(_) | Def::Group(_)) => {
                self.err(
                    Diag::new(
                        "muster::type",
                        format!("`{}` is a kind of unit, not a value", n.text),
                    )
                    .at(n.span, "a unit type, class or group")
                    .help(format!(
                        "test a unit against it with `is`: `u is {}`",
                        n.text
                    )),
                );
                None
            }
            Some(_) | None if sc.failed.contains(&n.text) => None,
            None if want == Some(&Ty::Dice) => {
                // Where dice are wanted (a pool, a table of dice), an unknown
                // name is most likely a die not declared.
                let dice: Vec<String> = self
                    .names
                    .iter()
                    .filter(|(_, (d, _))| matches!(d, Def::Die(_)))
                    .map(|(k, _)| k.clone())
                    .collect();
                let help = match suggest(&n.text, dice.iter().map(|s| s.as_str())) {
                    Some(s) => format!("did you mean `{}`?", self.display_name(&s)),
                    None => format!(
                        "declare it, e.g. `die {} = {{ blank x3, S, W1 x2 }}`, or name a table or define of type `dice`",
                        n.text
                    ),
                };
                self.err(
                    Diag::new("muster::unknown_name", format!("unknown die `{}`", n.text))
                        .at(n.span, "not a die, nor a local or option")
                        .help(help),
                );
                None
            }
            Some(_) | None => {
                let mut cands: Vec<String> = self.names.keys().cloned().collect();
                cands.extend(sc.locals.iter().map(|l| l.0.clone()));
                if let Some(Ty::Symbols(s)) = want {
                    cands.extend(s.iter().map(|x| self.rs.symbols[*x as usize].clone()));
                }
                let sugg = suggest(&n.text, cands.iter().map(|s| s.as_str()));
                let help = match (sugg, want) {
                    (Some(s), _) => format!("did you mean `{}`?", self.display_name(&s)),
                    (None, Some(w @ Ty::Symbols(_))) => {
                        format!("this outcome is one of: {}", self.rs.ty_name(w))
                    }
                    _ => "declare it first, or check the spelling".to_string(),
                };
                self.err(
                    Diag::new("muster::unknown_name", format!("unknown name `{}`", n.text))
                        .at(n.span, "not a parameter, local, option, side or enum value")
                        .help(help),
                );
                None
            }
        }
    }

    pub(super) fn call(
        &mut self,
        n: &Name,
        args: &[syntax::Expr],
        sc: &mut Scope,
        span: Span,
    ) -> Option<(Ex, Ty)> {
        let callable = matches!(
            self.lookup(&n.text),
            Some(
                Def::Fact(_)
                    | Def::Define(_)
                    | Def::Table(_)
                    | Def::Quantity(_)
                    | Def::Procedure(_)
            )
        );
        if let (false, Some(b)) = (callable, Builtin::named(&n.text)) {
            let (ps, ret) = b.signature();
            let mut params = Vec::new();
            for p in ps {
                params.push(self.builtin_ty(*p, n)?);
            }
            let ret = self.builtin_ty(ret, n)?;
            let args = self.args(n, args, &params, sc, span)?;
            return Some((Ex::Builtin(b, args), ret));
        }
        let (params, ret, mk): (Vec<Ty>, Ty, MakeCall) = match self.lookup(&n.text) {
            Some(Def::Fact(i)) => {
                let f = &self.rs.facts[i as usize];
                (f.params.clone(), f.ty.clone(), |i, a| Ex::Fact(i, a))
            }
            Some(Def::Define(i)) => {
                let f = &self.rs.defines[i as usize];
                (
                    f.params.iter().map(|p| p.1.clone()).collect(),
                    f.ty.clone(),
                    |i, a| Ex::Define(i, a),
                )
            }
            Some(Def::Table(i)) => {
                let f = &self.rs.tables[i as usize];
                (
                    f.params.iter().map(|p| p.1.clone()).collect(),
                    f.ty.clone(),
                    |i, a| Ex::Table(i, a),
                )
            }
            Some(Def::Quantity(i)) => {
                let f = &self.rs.quantities[i as usize].func;
                (
                    f.params.iter().map(|p| p.1.clone()).collect(),
                    f.ty.clone(),
                    |i, a| Ex::Quantity(i, a),
                )
            }
            Some(Def::Procedure(_)) => {
                self.err(
                    Diag::new(
                        "muster::call",
                        format!("`{}` is a procedure, not a value", n.text),
                    )
                    .at(n.span, "a procedure")
                    .help(format!(
                        "run it as a statement: `call {}(...)`; read its results through state",
                        n.text
                    )),
                );
                return None;
            }
            _ => {
                self.unknown(n, "fact, define, table or quantity", None);
                return None;
            }
        };
        let id = match self.lookup(&n.text) {
            Some(Def::Fact(i) | Def::Define(i) | Def::Table(i) | Def::Quantity(i)) => i,
            _ => unreachable!(),
        };
        let args = self.args(n, args, &params, sc, span)?;
        Some((mk(id, args), ret))
    }

    /// The type a builtin's parameter or result has in this ruleset.
    pub(super) fn builtin_ty(&mut self, t: BTy, n: &Name) -> Option<Ty> {
        let enum_named = |c: &Self, name: &str| match c.lookup(name) {
            Some(Def::Enum(e)) => Some(Ty::Enum(e)),
            _ => None,
        };
        Some(match t {
            BTy::Num => Ty::Int,
            BTy::Bool => Ty::Bool,
            BTy::Unit => Ty::Unit,
            BTy::Zone | BTy::Terrain => {
                let (name, module) = if t == BTy::Zone {
                    ("zone", "core")
                } else {
                    ("terrain", "battle")
                };
                match enum_named(self, name) {
                    Some(ty) => ty,
                    None => {
                        self.err(
                            Diag::new(
                                "muster::unknown_name",
                                format!("`{}` needs the enum `{name}`", n.text),
                            )
                            .at(n.span, format!("no `enum {name}` is declared"))
                            .help(format!("add `import {module}` near the top of the ruleset")),
                        );
                        return None;
                    }
                }
            }
        })
    }

    pub fn args(
        &mut self,
        n: &Name,
        args: &[syntax::Expr],
        params: &[Ty],
        sc: &mut Scope,
        span: Span,
    ) -> Option<Vec<Ex>> {
        if args.len() != params.len() {
            self.err(
                Diag::new(
                    "muster::arity",
                    format!(
                        "`{}` takes {} argument{}, but {} {} given",
                        n.text,
                        params.len(),
                        if params.len() == 1 { "" } else { "s" },
                        args.len(),
                        if args.len() == 1 { "is" } else { "are" }
                    ),
                )
                .at(span, "wrong number of arguments")
                .help(format!(
                    "its parameters are: ({})",
                    params
                        .iter()
                        .map(|p| self.rs.ty_name(p))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
            return None;
        }
        let mut out = Vec::with_capacity(args.len());
        let mut ok = true;
        for (a, p) in args.iter().zip(params) {
            match self.expr(a, sc, Some(p)) {
                Some((e, t)) => {
                    ok &= self.expect(&t, p, a.span, "this argument");
                    out.push(e);
                }
                None => ok = false,
            }
        }
        ok.then_some(out)
    }
}
