//! The sequence of play as a graph: steps are nodes, and edges are the order
//! of play, `goto`s and the end of the game. Built and validated here (no
//! dangling step, no unreachable step, a way out of the turn loop), and
//! rendered as Graphviz dot or Mermaid.

use crate::base::value::Value;
use crate::compile::compiler::{suggest, Compiler, Scope};
use crate::compile::ir::{Ex, Id, Ty};
use crate::front::diagnostic::Diag;
use crate::front::syntax::{self, Action, PhaseOrStep, Span};

/// What a step (or a card) does.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum StepAction {
    /// Run a procedure (or ask a decision), once, for each side or for each unit.
    Do {
        procedure: bool,
        target: Id,
        args: Vec<Ex>,
        each: Option<Repeat>,
        /// The frame the arguments are evaluated in.
        slots: u16,
    },
    /// `draw DECK(ARGS) [until N left]`: turn the top card of the deck's
    /// pile and resolve it; with `until`, one card after another while the
    /// pile holds more than N.
    Draw {
        deck: Id,
        args: Vec<Ex>,
        until: Option<u32>,
        each: Option<Repeat>,
        slots: u16,
    },
    /// `shuffle DECK`: the pile becomes the deck's cards not held in a
    /// hand, in a random order.
    Shuffle { deck: Id },
    /// `deal DECK to HOLDER up to N` (or, `discard`, `discard DECK from
    /// HOLDER down to N`): a hand filled from the pile, or cut down.
    Deal {
        deck: Id,
        holder: Ex,
        size: Ex,
        discard: bool,
        each: Option<Repeat>,
        slots: u16,
    },
    /// `alternate DECISION(ARGS) for each s in sides [from SIDE]`: the sides
    /// asked in turn, one option each time, until all pass in a row.
    Alternate {
        decision: Id,
        args: Vec<Ex>,
        each: Repeat,
        from: Option<Ex>,
        slots: u16,
        /// The decision's name where the action asks it.
        span: Span,
    },
}

/// `for each V in sides|units [where COND]`: a repetition of an action, or
/// the cards of a `for each` card.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Repeat {
    /// The slot that holds the side or unit.
    pub slot: u16,
    /// Over the sides (else over the units, in scenario order).
    pub sides: bool,
    /// Checked for each side or unit, just before its repetition.
    pub cond: Option<Ex>,
}

/// Compile `for each V in sides|units [where COND]`, binding V in `sc`
/// (the caller marks and resets the scope).
pub(crate) fn repeat(c: &mut Compiler, each: &syntax::Each, sc: &mut Scope) -> Option<Repeat> {
    let ty = match each.coll.text.as_str() {
        "sides" => Ty::Side,
        "units" => Ty::Unit,
        _ => {
            c.err(
                Diag::new(
                    "muster::quantifier",
                    format!(
                        "`for each` repeats for each of `sides` or `units`, not `{}`",
                        each.coll.text
                    ),
                )
                .at(each.coll.span, "not `sides` or `units`")
                .help("write `do army_morale(s) for each s in sides` or `do unit_rally(u) for each u in units`"),
            );
            return None;
        }
    };
    if sc.lookup(&each.var.text).is_some() {
        c.err(
            Diag::new(
                "muster::duplicate",
                format!("`{}` is already bound here", each.var.text),
            )
            .at(each.var.span, "bound again")
            .help("give the repetition's variable a name of its own"),
        );
        return None;
    }
    let slot = sc.bind(&each.var.text, ty.clone());
    let cond = match &each.cond {
        None => None,
        Some(e) => {
            let (ex, t) = c.expr(e, sc, None)?;
            if !c.expect(&t, &Ty::Bool, e.span, "the condition after `where`") {
                return None;
            }
            Some(ex)
        }
    };
    Some(Repeat {
        slot,
        sides: ty == Ty::Side,
        cond,
    })
}

fn do_action(
    c: &mut Compiler,
    target: &syntax::Name,
    args: &[syntax::Expr],
    each: Option<&syntax::Each>,
    span: Span,
    sc: &mut Scope,
) -> Option<StepAction> {
    let (procedure, id, params) = c.action_target(target)?;
    let each = match each {
        Some(e) => Some(repeat(c, e, sc)?),
        None => None,
    };
    let args = c.args(target, args, &params, sc, span)?;
    Some(StepAction::Do {
        procedure,
        target: id,
        args,
        each,
        slots: sc.max,
    })
}

/// Compile a `do`, `draw` or `shuffle` action of a step or a card; `sc`
/// holds what it may read (nothing in a step; the deck's parameters and the
/// card's variable in a card). `None`: a problem was reported (or the
/// action is a `goto` or `end game`, which the caller handles).
pub(crate) fn play_action(c: &mut Compiler, a: &Action, sc: &mut Scope) -> Option<StepAction> {
    let m = sc.mark();
    let out = match a {
        Action::Do {
            target,
            args,
            each,
            span,
        } => do_action(c, target, args, each.as_ref(), *span, sc),
        Action::Draw {
            deck,
            args,
            until,
            each,
            span,
        } => crate::compile::decks::draw_action(
            c,
            deck,
            args.as_deref(),
            *until,
            each.as_ref(),
            *span,
            sc,
        ),
        Action::Shuffle { deck, .. } => {
            crate::compile::decks::deck_named(c, deck).map(|deck| StepAction::Shuffle { deck })
        }
        Action::Deal {
            deck,
            holder,
            size,
            each,
            ..
        } => crate::compile::hands::deal_action(c, deck, holder, size, each.as_ref(), false, sc),
        Action::Discard {
            deck,
            holder,
            size,
            each,
            ..
        } => crate::compile::hands::deal_action(c, deck, holder, size, each.as_ref(), true, sc),
        Action::Alternate {
            target,
            args,
            each,
            from,
            span,
        } => {
            crate::compile::hands::alternate_action(c, target, args, each, from.as_ref(), *span, sc)
        }
        Action::Goto { .. } | Action::End { .. } => None,
    };
    sc.reset(m);
    out
}

/// An edge: where play goes after a step, and when.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Edge {
    pub to: usize,
    pub when: Option<Ex>,
    pub label: String,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Node {
    pub name: String,
    pub phase: Option<String>,
    pub in_turn: bool,
    pub actions: Vec<StepAction>,
    pub edges: Vec<Edge>,
    pub span: Span,
}

/// The compiled sequence of play. Node `end` is the end of the game; node
/// `turn_end` decides between another turn and the end.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct PhaseGraph {
    pub nodes: Vec<Node>,
    pub start: usize,
    pub turn_start: usize,
    pub turn_end: usize,
    pub end: usize,
}

struct Flat<'a> {
    step: &'a syntax::Step,
    phase: Option<&'a str>,
    in_turn: bool,
}

pub(crate) fn build(c: &mut Compiler, seq: &syntax::Sequence) -> Option<PhaseGraph> {
    let mut flat: Vec<Flat> = Vec::new();
    for (list, in_turn) in [(&seq.setup, false), (&seq.turn, true)] {
        for p in list {
            match p {
                PhaseOrStep::Phase(n, steps) => {
                    if steps.is_empty() {
                        c.err(
                            Diag::new(
                                "muster::empty_phase",
                                format!("phase \"{}\" has no steps", n.text),
                            )
                            .at(n.span, "empty phase")
                            .help("give the phase at least one step, or remove it"),
                        );
                    }
                    flat.extend(steps.iter().map(|s| Flat {
                        step: s,
                        phase: Some(n.text.as_str()),
                        in_turn,
                    }))
                }
                PhaseOrStep::Step(s) => flat.push(Flat {
                    step: s,
                    phase: None,
                    in_turn,
                }),
            }
        }
    }
    let turn_start = flat.iter().position(|f| f.in_turn);
    let Some(turn_start) = turn_start else {
        c.err(
            Diag::new("muster::empty_turn", "the turn has no steps")
                .at(seq.span, "empty turn")
                .help("a sequence of play needs at least one step inside `turn { }`"),
        );
        return None;
    };
    // Names must be unique (the first step of each name, by name: a
    // sequence of many patched steps is checked in linear time).
    let mut first: std::collections::HashMap<&str, usize> = Default::default();
    for (i, f) in flat.iter().enumerate() {
        if let Some(&j) = first.get(f.step.name.text.as_str()) {
            c.err(
                Diag::new(
                    "muster::duplicate",
                    format!("step \"{}\" appears twice", f.step.name.text),
                )
                .at(f.step.name.span, "second step of this name")
                .note(flat[j].step.name.span, "first one")
                .help("`goto` finds steps by name, so each needs its own"),
            );
        } else {
            first.insert(&f.step.name.text, i);
        }
    }
    let n = flat.len();
    let (turn_end, end) = (n, n + 1);
    let mut nodes: Vec<Node> = Vec::new();
    let mut ok = true;
    // Each unconditional `goto`: (from, to, where it is written).
    let mut gotos: Vec<(usize, usize, Span)> = Vec::new();
    for (i, f) in flat.iter().enumerate() {
        let mut actions = Vec::new();
        let mut edges = Vec::new();
        let mut falls_through = true;
        for a in &f.step.actions {
            match a {
                Action::Do { .. }
                | Action::Draw { .. }
                | Action::Shuffle { .. }
                | Action::Deal { .. }
                | Action::Discard { .. }
                | Action::Alternate { .. } => {
                    let mut sc = Scope::new(false);
                    match play_action(c, a, &mut sc) {
                        Some(x) => actions.push(x),
                        None => ok = false,
                    }
                }
                Action::Goto { when, target, span } => {
                    let to = flat.iter().position(|g| g.step.name.text == target.text);
                    let Some(to) = to else {
                        let sugg =
                            suggest(&target.text, flat.iter().map(|g| g.step.name.text.as_str()));
                        c.err(
                            Diag::new(
                                "muster::dangling_step",
                                format!(
                                    "`goto` names a step that does not exist: \"{}\"",
                                    target.text
                                ),
                            )
                            .at(target.span, "no step of this name")
                            .help(match sugg {
                                Some(s) => format!("did you mean \"{s}\"?"),
                                None => {
                                    "name a step of this sequence exactly as it is written".into()
                                }
                            }),
                        );
                        ok = false;
                        continue;
                    };
                    let cond = when.as_ref().and_then(|w| condition(c, w));
                    if when.is_none() {
                        falls_through = false;
                        gotos.push((i, to, *span));
                    }
                    edges.push(Edge {
                        to,
                        when: cond,
                        label: if when.is_some() {
                            "if".into()
                        } else {
                            "goto".into()
                        },
                    });
                }
                Action::End { when, .. } => {
                    let cond = when.as_ref().and_then(|w| condition(c, w));
                    if when.is_none() {
                        falls_through = false;
                    }
                    edges.push(Edge {
                        to: end,
                        when: cond,
                        label: "game over".into(),
                    });
                }
            }
        }
        if falls_through {
            let next = if i + 1 < n { i + 1 } else { turn_end };
            edges.push(Edge {
                to: next,
                when: None,
                label: String::new(),
            });
        }
        nodes.push(Node {
            name: f.step.name.text.clone(),
            phase: f.phase.map(str::to_string),
            in_turn: f.in_turn,
            actions,
            edges,
            span: f.step.name.span,
        });
    }
    let until = condition(c, &seq.until);
    let until_false = matches!(until, Some(Ex::Const(Value::Bool(false))));
    nodes.push(Node {
        name: "end of turn".into(),
        phase: None,
        in_turn: true,
        actions: vec![],
        edges: vec![
            Edge {
                to: end,
                when: until,
                label: "until".into(),
            },
            Edge {
                to: turn_start,
                when: None,
                label: "next turn".into(),
            },
        ],
        span: seq.until.span,
    });
    nodes.push(Node {
        name: "end of game".into(),
        phase: None,
        in_turn: false,
        actions: vec![],
        edges: vec![],
        span: seq.span,
    });
    // Reachability from the first step.
    let mut seen = vec![false; nodes.len()];
    let mut stack = vec![0usize];
    while let Some(u) = stack.pop() {
        if std::mem::replace(&mut seen[u], true) {
            continue;
        }
        stack.extend(nodes[u].edges.iter().map(|e| e.to));
    }
    for (i, node) in nodes.iter().enumerate().take(n) {
        if !seen[i] {
            ok = false;
            c.err(
                Diag::new("muster::unreachable_step", format!("step \"{}\" can never run", node.name))
                    .at(node.span, "no path of play leads here")
                    .help("the step before it always jumps elsewhere; add a `goto` to it or remove the step"),
            );
        }
    }
    // A way out of the turn loop.
    let exits_elsewhere = nodes[..n]
        .iter()
        .any(|nd| nd.in_turn && nd.edges.iter().any(|e| e.to == end));
    if !until_false && !seen[end] {
        if let Some(d) = goto_cycle(&gotos, &seen, seq.until.span) {
            c.err(d);
            return None;
        }
    }
    if (until_false && !exits_elsewhere) || !seen[end] {
        ok = false;
        c.err(
            Diag::new("muster::endless_turns", "the turn loop has no way out: the game can never end")
                .at(seq.until.span, if until_false { "this is always false" } else { "never reached" })
                .help("end the turn loop with a condition that can become true (e.g. `until any s in sides: s.defeated`) or an `end game when ...` action"),
        );
    }
    ok.then_some(PhaseGraph {
        nodes,
        start: 0,
        turn_start,
        turn_end,
        end,
    })
}

/// Where play goes round for ever without reaching the end of the turn:
/// the first unconditional `goto` on the way that jumps back (to its own
/// step or an earlier one), else the first on the way. None when play
/// takes no such `goto`.
fn goto_cycle(gotos: &[(usize, usize, Span)], seen: &[bool], until: Span) -> Option<Diag> {
    let taken = || gotos.iter().filter(|(from, _, _)| seen[*from]);
    let (_, _, at) = taken()
        .find(|(from, to, _)| to <= from)
        .or_else(|| taken().next())?;
    Some(
        Diag::new(
            "muster::endless_turns",
            "the steps go round for ever: play never reaches the end of the turn",
        )
        .at(*at, "this `goto` always jumps back")
        .note(until, "never reached")
        .help("give the `goto` a condition (`goto \"STEP\" when COND`), or end the game on the way (`end game when ...`)"),
    )
}

fn condition(c: &mut Compiler, e: &syntax::Expr) -> Option<Ex> {
    let mut sc = Scope::new(false);
    let (ex, ty) = c.expr(e, &mut sc, None)?;
    c.expect(
        &ty,
        &Ty::Bool,
        e.span,
        "a condition of the sequence of play",
    );
    Some(ex)
}

/// A step's action as `muster graph` labels it: `melee (each side)`,
/// `decide charge`, `draw play until 1 left`, `shuffle play`.
pub fn describe(rs: &crate::compile::ir::Ruleset, a: &StepAction) -> String {
    let each = |e: &Option<Repeat>| match e {
        Some(r) if r.sides => " (each side)",
        Some(_) => " (each unit)",
        None => "",
    };
    match a {
        StepAction::Do {
            procedure,
            target,
            each: e,
            ..
        } => {
            let name = if *procedure {
                rs.procedures[*target as usize].name.clone()
            } else {
                format!("decide {}", rs.decisions[*target as usize].name)
            };
            format!("{name}{}", each(e))
        }
        StepAction::Draw {
            deck,
            until,
            each: e,
            ..
        } => {
            let name = &rs.decks[*deck as usize].name;
            match until {
                Some(n) => format!("draw {name} until {n} left{}", each(e)),
                None => format!("draw {name}{}", each(e)),
            }
        }
        StepAction::Shuffle { deck } => format!("shuffle {}", rs.decks[*deck as usize].name),
        StepAction::Deal {
            deck,
            discard,
            each: e,
            ..
        } => {
            let name = &rs.decks[*deck as usize].name;
            let verb = if *discard { "discard" } else { "deal" };
            format!("{verb} {name}{}", each(e))
        }
        StepAction::Alternate { decision, .. } => {
            format!("alternate {}", rs.decisions[*decision as usize].name)
        }
    }
}

/// How the graph is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Format {
    Dot,
    Mermaid,
}

impl PhaseGraph {
    /// Render the graph; `names` labels each step's actions.
    pub fn render(&self, format: Format, action_name: impl Fn(&StepAction) -> String) -> String {
        let label = |i: usize| {
            let n = &self.nodes[i];
            let acts: Vec<String> = n.actions.iter().map(&action_name).collect();
            if acts.is_empty() {
                n.name.clone()
            } else {
                format!("{}\\n{}", n.name, acts.join("\\n"))
            }
        };
        let mut out = String::new();
        match format {
            Format::Dot => {
                out.push_str("digraph sequence {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\"];\n");
                let mut phase: Option<&str> = None;
                let mut cluster = 0;
                for (i, n) in self.nodes.iter().enumerate() {
                    if n.phase.as_deref() != phase {
                        if phase.is_some() {
                            out.push_str("  }\n");
                        }
                        if let Some(p) = &n.phase {
                            cluster += 1;
                            out.push_str(&format!(
                                "  subgraph cluster_{cluster} {{\n    label=\"{}\";\n",
                                p.replace('"', "'")
                            ));
                        }
                        phase = n.phase.as_deref();
                    }
                    let shape = if i >= self.turn_end {
                        ", shape=ellipse"
                    } else {
                        ""
                    };
                    out.push_str(&format!(
                        "  n{i} [label=\"{}\"{shape}];\n",
                        label(i).replace('"', "'")
                    ));
                }
                if phase.is_some() {
                    out.push_str("  }\n");
                }
                for (i, n) in self.nodes.iter().enumerate() {
                    for e in &n.edges {
                        let l = if e.label.is_empty() {
                            String::new()
                        } else {
                            format!(" [label=\"{}\"]", e.label)
                        };
                        out.push_str(&format!("  n{i} -> n{}{l};\n", e.to));
                    }
                }
                out.push_str("}\n");
            }
            Format::Mermaid => {
                out.push_str("flowchart TD\n");
                let mut phase: Option<&str> = None;
                for (i, n) in self.nodes.iter().enumerate() {
                    if n.phase.as_deref() != phase {
                        if phase.is_some() {
                            out.push_str("  end\n");
                        }
                        if let Some(p) = &n.phase {
                            out.push_str(&format!("  subgraph \"{}\"\n", p.replace('"', "'")));
                        }
                        phase = n.phase.as_deref();
                    }
                    let text = label(i).replace("\\n", "<br/>").replace('"', "'");
                    if i >= self.turn_end {
                        out.push_str(&format!("  n{i}([\"{text}\"])\n"));
                    } else {
                        out.push_str(&format!("  n{i}[\"{text}\"]\n"));
                    }
                }
                if phase.is_some() {
                    out.push_str("  end\n");
                }
                for (i, n) in self.nodes.iter().enumerate() {
                    for e in &n.edges {
                        if e.label.is_empty() {
                            out.push_str(&format!("  n{i} --> n{}\n", e.to));
                        } else {
                            out.push_str(&format!("  n{i} -->|{}| n{}\n", e.label, e.to));
                        }
                    }
                }
            }
        }
        out
    }
}
