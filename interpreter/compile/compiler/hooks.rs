//! Hooks: where each runs (before the bodies compile, so the outcomes a
//! hook adds are its procedure's own), and its script compiled and
//! checked against the script API ([`crate::compile::scripts`]).

use super::*;

impl Compiler {
    /// Resolve where each hook runs (before the bodies compile, so that the
    /// outcomes hooks add are the procedures' own).
    pub(super) fn hook_points(
        &mut self,
        items: &[syntax::Item],
    ) -> Vec<Option<crate::compile::ir::Point>> {
        use crate::compile::ir::Point;
        let mut out = Vec::new();
        for it in items {
            let ItemKind::Hook(h) = &it.kind else {
                continue;
            };
            let proc = |c: &mut Self, n: &Name| match c.lookup(&n.text) {
                Some(Def::Procedure(p)) => Some(p),
                _ => {
                    let sugg = suggest(&n.text, c.rs.procedures.iter().map(|p| p.name.as_str()));
                    c.err(
                        Diag::new("muster::hook", format!("hook `{}` names no procedure `{}`", h.name.text, n.text))
                            .at(n.span, "no such procedure")
                            .help(match sugg {
                                Some(s) => format!("did you mean `{s}`?"),
                                None => "a hook runs before or after a procedure, replaces one, derives a fact, or runs before or after a step".into(),
                            }),
                    );
                    None
                }
            };
            let point = match &h.point {
                syntax::HookPoint::Procedure { after, proc: n } => proc(self, n).map(|p| {
                    if *after {
                        Point::After(p)
                    } else {
                        Point::Before(p)
                    }
                }),
                syntax::HookPoint::Replace(n) => proc(self, n).map(Point::Replace),
                syntax::HookPoint::Step { after, step } => Some(if *after {
                    Point::AfterStep(step.text.clone())
                } else {
                    Point::BeforeStep(step.text.clone())
                }),
                syntax::HookPoint::Fact(n) => match self.lookup(&n.text) {
                    Some(Def::Fact(f)) => Some(Point::Fact(f)),
                    _ => {
                        let sugg = suggest(&n.text, self.rs.facts.iter().map(|f| f.name.as_str()));
                        self.err(
                            Diag::new(
                                "muster::hook",
                                format!("hook `{}` names no fact `{}`", h.name.text, n.text),
                            )
                            .at(n.span, "no such fact")
                            .help(match sugg {
                                Some(s) => format!("did you mean `{s}`?"),
                                None => "declare the fact with `fact NAME(params): TYPE`".into(),
                            }),
                        );
                        None
                    }
                },
            };
            let takes_outcomes = matches!(
                point,
                Some(Point::Before(_) | Point::After(_) | Point::Replace(_))
            );
            if !h.outcomes.is_empty() && !takes_outcomes {
                self.err(
                    Diag::new("muster::hook", format!("hook `{}` declares outcomes but is not on a procedure", h.name.text))
                        .at(h.outcomes[0].name.span, "outcomes need a procedure")
                        .help("outcomes belong to procedures: attach the hook with `before`, `after` or `replace`"),
                );
            }
            if let Some(Point::Before(p) | Point::After(p) | Point::Replace(p)) = point {
                for o in &h.outcomes {
                    let ty = self.outcome_ty(&o.ty);
                    let outs = &mut self.rs.procedures[p as usize].outcomes;
                    if outs.iter().any(|x| x.name == o.name.text) {
                        self.err(
                            Diag::new("muster::duplicate", format!("procedure `{}` already has an outcome `{}`", self.rs.procedures[p as usize].name, o.name.text))
                                .at(o.name.span, "declared again")
                                .help("a hook's outcomes are added to its procedure's; give this one another name"),
                        );
                    } else {
                        outs.push(OutcomeDef {
                            name: o.name.text.clone(),
                            ty,
                        });
                    }
                }
            }
            out.push(point);
        }
        out
    }

    /// Compile each hook's script against the finished ruleset and attach it.
    pub(super) fn hook_scripts(
        &mut self,
        items: &[syntax::Item],
        points: Vec<Option<crate::compile::ir::Point>>,
    ) {
        use crate::compile::ir::Point;
        let hooks = items.iter().filter_map(|it| match &it.kind {
            ItemKind::Hook(h) => Some(h),
            _ => None,
        });
        for (h, point) in hooks.zip(points) {
            let Some(point) = point else { continue };
            let syntax::Script::Inline { text, span } = &h.script else {
                continue; // the loader reported the missing file
            };
            let no_outcomes: &[OutcomeDef] = &[];
            let (vars, outcomes): (Vec<String>, &[OutcomeDef]) = match &point {
                Point::Before(p) | Point::Replace(p) => {
                    let pd = &self.rs.procedures[*p as usize];
                    (
                        pd.params.iter().map(|x| x.0.clone()).collect(),
                        &pd.outcomes,
                    )
                }
                Point::After(p) => {
                    let pd = &self.rs.procedures[*p as usize];
                    (pd.names.iter().map(|x| x.0.clone()).collect(), &pd.outcomes)
                }
                Point::BeforeStep(n) | Point::AfterStep(n) => {
                    let known = self
                        .rs
                        .graph
                        .as_ref()
                        .is_some_and(|g| g.nodes.iter().any(|x| &x.name == n));
                    if !known {
                        let steps: Vec<String> = self
                            .rs
                            .graph
                            .iter()
                            .flat_map(|g| g.nodes.iter().map(|x| x.name.clone()))
                            .collect();
                        let sugg = suggest(n, steps.iter().map(|s| s.as_str()));
                        let step_span = match &h.point {
                            syntax::HookPoint::Step { step, .. } => step.span,
                            _ => h.name.span,
                        };
                        self.err(
                            Diag::new(
                                "muster::hook",
                                format!("hook `{}` names no step \"{n}\"", h.name.text),
                            )
                            .at(step_span, "no such step in the sequence of play")
                            .help(match sugg {
                                Some(s) => format!("did you mean \"{s}\"?"),
                                None => "name a step of the sequence of play".into(),
                            }),
                        );
                        continue;
                    }
                    (vec!["turn".to_string()], no_outcomes)
                }
                Point::Fact(f) => {
                    let decl = items.iter().find_map(|it| match &it.kind {
                        ItemKind::Fact(fd) if fd.name.text == self.rs.facts[*f as usize].name => {
                            Some(fd)
                        }
                        _ => None,
                    });
                    let names: Option<Vec<String>> = decl
                        .map(|fd| {
                            fd.params
                                .iter()
                                .map(|p| p.0.as_ref().map(|n| n.text.clone()))
                                .collect()
                        })
                        .unwrap_or(Some(Vec::new()));
                    let Some(names) = names else {
                        self.err(
                            Diag::new(
                                "muster::hook",
                                format!(
                                    "hook `{}` derives fact `{}`, whose parameters have no names",
                                    h.name.text, self.rs.facts[*f as usize].name
                                ),
                            )
                            .at(h.name.span, "the script could not name its arguments")
                            .help("name the fact's parameters: `fact F(a: unit, b: unit): bool`"),
                        );
                        continue;
                    };
                    (names, no_outcomes)
                }
            };
            let outcomes = outcomes.to_vec();
            let declared = crate::compile::scripts::Declared {
                name: &h.name.text,
                doc: h.doc.clone(),
                point: point.clone(),
                vars,
                outcomes: &outcomes,
                text,
                span: *span,
            };
            match crate::compile::scripts::compile(&self.rs, declared) {
                Ok(def) => {
                    let id = self.rs.hooks.len() as Id;
                    match point {
                        Point::Before(p) => self.rs.procedures[p as usize].hooks.before.push(id),
                        Point::After(p) => self.rs.procedures[p as usize].hooks.after.push(id),
                        Point::Replace(p) => {
                            if self.rs.procedures[p as usize].hooks.replace.is_some() {
                                self.err(
                                    Diag::new("muster::hook", format!("procedure `{}` is replaced by two hooks", self.rs.procedures[p as usize].name))
                                        .at(h.name.span, "the second")
                                        .help("one hook at most may replace a procedure; remove one, or make one run `after`"),
                                );
                            }
                            self.rs.procedures[p as usize].hooks.replace = Some(id);
                        }
                        Point::Fact(f) => {
                            let fd = &self.rs.facts[f as usize];
                            if fd.battle.is_some() || fd.hook.is_some() {
                                let name = fd.name.clone();
                                self.err(
                                    Diag::new(
                                        "muster::hook",
                                        format!("fact `{name}` is already derived"),
                                    )
                                    .at(h.name.span, "a second derivation")
                                    .help(
                                        "a fact is derived one way: by `in battle:` or by one hook",
                                    ),
                                );
                            }
                            self.rs.facts[f as usize].hook = Some(id);
                        }
                        Point::BeforeStep(_) | Point::AfterStep(_) => {}
                    }
                    self.rs.hooks.push(def);
                }
                Err(d) => self.err(d),
            }
        }
    }
}
