//! The calls between a ruleset's functions (defines, tables, quantities with
//! their modifiers, facts derived in battle) and between its procedures:
//! the compiler refuses a loop among them, and a chain of calls that goes
//! too deep once expanded.
//!
//! The odds engine inlines calls, and the analyses and evaluators follow
//! them, recursing a level for each level of an expression and again into
//! each body called. A loop would never end; a very long chain (ten
//! thousand defines, each calling the next) would overflow the stack. Both
//! are diagnostics here, found without recursion over the chain itself.

use crate::compile::compiler::Compiler;
use crate::compile::ir::{Ex, St};
use crate::front::diagnostic::Diag;
use crate::front::nesting::{guarded, MAX_EXPANDED_DEPTH};
use crate::front::syntax::Span;

/// One function or procedure: its name and place, and what it calls.
struct Node {
    name: String,
    span: Span,
    /// The nodes it calls, and how deep in its body each call stands.
    calls: Vec<(usize, usize)>,
    /// How deep its own body goes, calls not expanded.
    depth: usize,
}

/// Check the calls of a compiled ruleset: loops, then expanded depth.
pub(crate) fn check(c: &mut Compiler) {
    let funcs = functions(c);
    if !report_loops(c, &funcs) {
        report_too_deep(c, &funcs, "the defines, tables and quantities it calls");
    }
    let procs = procedures(c);
    if !report_loops(c, &procs) {
        report_too_deep(c, &procs, "the procedures it calls");
    }
}

/// Defines, tables, quantities and facts derived in battle, numbered in that
/// order.
fn functions(c: &Compiler) -> Vec<Node> {
    let rs = &c.rs;
    let (nd, nt, nq) = (rs.defines.len(), rs.tables.len(), rs.quantities.len());
    let index = |e: &Ex| -> Option<usize> {
        match e {
            Ex::Define(i, _) => Some(*i as usize),
            Ex::Table(i, _) => Some(nd + *i as usize),
            Ex::Quantity(i, _) => Some(nd + nt + *i as usize),
            Ex::Fact(i, _) if rs.facts[*i as usize].battle.is_some() => {
                Some(nd + nt + nq + *i as usize)
            }
            _ => None,
        }
    };
    let node = |name: &str, span: Span, bodies: &[&Ex]| {
        let mut n = Node {
            name: name.to_string(),
            span,
            calls: Vec::new(),
            depth: 0,
        };
        for b in bodies {
            walk(b, 1, &index, &mut n);
        }
        n
    };
    let mut out = Vec::new();
    for f in rs.defines.iter().chain(&rs.tables) {
        out.push(node(&f.name, f.span, &[&f.body]));
    }
    for q in &rs.quantities {
        // Modifiers apply in the quantity's frame, after its body.
        let mut bodies = vec![&q.func.body];
        for m in &q.modifiers {
            let md = &rs.modifiers[*m as usize];
            bodies.push(&md.amount);
            bodies.extend(&md.when);
        }
        out.push(node(&q.func.name, q.func.span, &bodies));
    }
    for f in &rs.facts {
        match &f.battle {
            Some(b) => out.push(node(&f.name, b.span, &[&b.body])),
            // A placeholder keeps the numbering; it calls nothing.
            None => out.push(node(&f.name, Span::default(), &[])),
        }
    }
    out
}

/// Note how deep `e` goes (from `d`) and the calls in it.
fn walk(e: &Ex, d: usize, index: &dyn Fn(&Ex) -> Option<usize>, n: &mut Node) {
    guarded(|| {
        n.depth = n.depth.max(d);
        if let Some(k) = index(e) {
            n.calls.push((k, d));
        }
        e.any_child(&mut |x| {
            walk(x, d + 1, index, n);
            false
        });
    })
}

/// Procedures: what each `call`s, and how deep (statements and their
/// expressions) its body goes.
fn procedures(c: &Compiler) -> Vec<Node> {
    fn block(b: &[St], d: usize, n: &mut Node) {
        let none = |_: &Ex| None;
        for s in b {
            guarded(|| match s {
                St::Call(p, args, _) => {
                    n.calls.push((*p as usize, d));
                    args.iter().for_each(|a| walk(a, d + 1, &none, n));
                }
                St::If(e, a, b, _) => {
                    walk(e, d + 1, &none, n);
                    block(a, d + 1, n);
                    block(b, d + 1, n);
                }
                St::For(_, _, e, a, _) => {
                    walk(e, d + 1, &none, n);
                    block(a, d + 1, n)
                }
                St::Let(_, e, _) | St::Outcome(_, e, _) | St::Require(e, _, _) => {
                    walk(e, d + 1, &none, n)
                }
                St::AssignState { unit, value, .. } => {
                    walk(unit, d + 1, &none, n);
                    walk(value, d + 1, &none, n)
                }
                St::AssignSideState { side, value, .. } => {
                    walk(side, d + 1, &none, n);
                    walk(value, d + 1, &none, n)
                }
                St::Note(_, args, v, _) => {
                    args.iter().for_each(|a| walk(a, d + 1, &none, n));
                    walk(v, d + 1, &none, n)
                }
            })
        }
    }
    c.rs.procedures
        .iter()
        .map(|p| {
            let mut n = Node {
                name: p.name.clone(),
                span: p.span,
                calls: Vec::new(),
                depth: 0,
            };
            block(&p.body, 1, &mut n);
            n
        })
        .collect()
}

/// Report each loop of calls once (at the node where a search first closes
/// it); true if there was one. The search keeps its own stack, so a chain
/// of any length is walked without recursion.
fn report_loops(c: &mut Compiler, nodes: &[Node]) -> bool {
    let n = nodes.len();
    // 0: not seen, 1: on the current path, 2: done.
    let mut state = vec![0u8; n];
    let mut reported = vec![false; n];
    let mut any = false;
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        let mut found: Vec<Vec<usize>> = Vec::new();
        // The path, with the next call of each node on it to follow.
        let mut path: Vec<(usize, usize)> = vec![(root, 0)];
        state[root] = 1;
        while let Some(&mut (u, ref mut next)) = path.last_mut() {
            match nodes[u].calls.get(*next) {
                Some(&(v, _)) => {
                    *next += 1;
                    if state[v] == 1 {
                        let start = path.iter().position(|(x, _)| *x == v).expect("on the path");
                        found.push(path[start..].iter().map(|(x, _)| *x).collect());
                    } else if state[v] == 0 {
                        state[v] = 1;
                        path.push((v, 0));
                    }
                }
                None => {
                    state[u] = 2;
                    path.pop();
                }
            }
        }
        for cyc in found {
            if reported[cyc[0]] {
                continue;
            }
            reported[cyc[0]] = true;
            any = true;
            let first = &nodes[cyc[0]];
            let chain: Vec<&str> = cyc
                .iter()
                .chain(std::iter::once(&cyc[0]))
                .map(|i| nodes[*i].name.as_str())
                .collect();
            c.err(
                Diag::new(
                    "muster::recursion",
                    format!("`{}` calls itself: {}", first.name, chain.join(" -> ")),
                )
                .at(first.span, "part of a loop")
                .help("rules are evaluated, not iterated: break the loop by computing the value from facts and state directly"),
            );
        }
    }
    any
}

/// Report the nodes that go deeper than [`MAX_EXPANDED_DEPTH`] with their
/// calls expanded, where the depth starts (not every caller above them).
/// Callees are measured before their callers, by counting down the calls
/// each node still waits on, so a long chain needs no recursion.
fn report_too_deep(c: &mut Compiler, nodes: &[Node], what: &str) {
    let n = nodes.len();
    let mut waits: Vec<usize> = nodes.iter().map(|x| x.calls.len()).collect();
    let mut callers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (u, x) in nodes.iter().enumerate() {
        for &(v, _) in &x.calls {
            callers[v].push(u);
        }
    }
    // Capped just past the limit, so that sums cannot overflow.
    let mut expanded = vec![0usize; n];
    let mut ready: Vec<usize> = (0..n).filter(|u| waits[*u] == 0).collect();
    while let Some(u) = ready.pop() {
        let x = &nodes[u];
        let deepest_call = x
            .calls
            .iter()
            .map(|&(v, d)| d + expanded[v])
            .max()
            .unwrap_or(0);
        expanded[u] = x.depth.max(deepest_call).min(MAX_EXPANDED_DEPTH + 1);
        let starts_here = x
            .calls
            .iter()
            .all(|&(v, _)| expanded[v] <= MAX_EXPANDED_DEPTH);
        if expanded[u] > MAX_EXPANDED_DEPTH && starts_here {
            c.err(
                Diag::new(
                    "muster::nesting",
                    format!(
                        "`{}` goes more than {MAX_EXPANDED_DEPTH} levels deep with {what} expanded",
                        x.name
                    ),
                )
                .at(x.span, "too deep once its calls are expanded")
                .help(
                    "each call adds the depth of what it calls (a table's rows count a level \
                     each): shorten the chain of calls or the table",
                ),
            );
        }
        for &w in &callers[u] {
            waits[w] -= 1;
            if waits[w] == 0 {
                ready.push(w);
            }
        }
    }
}
