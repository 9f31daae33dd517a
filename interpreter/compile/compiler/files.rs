//! `for file f[, l, r] of FORMATION where COND [from START] { ... }` and `mark
//! N`: the file-by-file loop, lowered to the statements every engine
//! already runs (`let` and `if`), so that a battle, exact odds and sampled
//! odds all play it alike. The loop's bookkeeping lives in hidden locals
//! (the set of files, the queue of files that fight next, the marks; see
//! [`crate::run::battlefield::files`]) and the body is written out once for
//! each file a formation may have, each copy guarded by "a file is left to
//! fight": a battle skips the copies past the last file, and exact odds
//! fold them away where the files are known.

use super::{Compiler, Scope};
use crate::base::value::Value;
use crate::compile::ir::MAX_FILES;
use crate::compile::ir::{Bin, Builtin, Ex, OutcomeDef, St, Ty};
use crate::front::diagnostic::Diag;
use crate::front::syntax::{ForFile, Span};

/// The hidden local a `mark` writes (no name the author can write has a space).
const MARK: &str = " file mark";

fn int(n: i64) -> Ex {
    Ex::Const(Value::Int(n))
}

fn call(b: Builtin, args: Vec<Ex>) -> Ex {
    Ex::Builtin(b, args)
}

impl Compiler {
    /// Lower a `for file` loop (see the module's doc).
    pub(super) fn for_file(
        &mut self,
        ff: &ForFile,
        sc: &mut Scope,
        outcomes: &[OutcomeDef],
    ) -> Option<St> {
        let beside: Vec<&crate::front::syntax::Name> =
            ff.beside.iter().flat_map(|(l, r)| [l, r]).collect();
        for n in std::iter::once(&ff.var).chain(beside.iter().copied()) {
            if sc.lookup(&n.text).is_some() {
                self.err(
                    Diag::new(
                        "muster::duplicate",
                        format!("`{}` is already bound here", n.text),
                    )
                    .at(n.span, "bound again")
                    .help("give the loop's file (and its neighbours' marks) names of their own"),
                );
                return None;
            }
        }
        let formation = self.expr(&ff.formation, sc, None);
        let m = sc.mark();
        let form = sc.bind(" file formation", Ty::Int);
        let set = sc.bind(" file set", Ty::Int);
        let queue = sc.bind(" file queue", Ty::Int);
        let marks = sc.bind(" file marks", Ty::Int);
        let mark = sc.bind(MARK, Ty::Int);
        let f = sc.bind(&ff.var.text, Ty::Int);
        let beside = ff
            .beside
            .as_ref()
            .map(|(l, r)| (sc.bind(&l.text, Ty::Int), sc.bind(&r.text, Ty::Int)));
        let cond = self.expr(&ff.cond, sc, None);
        let start = ff.start.as_ref().map(|s| (self.expr(s, sc, None), s.span));
        let body = self.block(&ff.body, sc, outcomes);
        sc.reset(m);
        let (fe, ft) = formation?;
        self.expect(
            &ft,
            &Ty::Int,
            ff.formation.span,
            "a formation (`for file ... of`)",
        );
        let (ce, ct) = cond?;
        self.expect(&ct, &Ty::Bool, ff.cond.span, "the condition of `for file`");
        let start = match start {
            Some((Some((se, st)), span)) => {
                self.expect(&st, &Ty::Int, span, "the first file (`from`)");
                Some(se)
            }
            Some((None, _)) => return None,
            None => None,
        };
        let local = Ex::Local;
        // The loop's bookkeeping is reported at the loop (a fault in it is
        // the engine's).
        let at = ff.span;
        let let_ = |slot, e| St::Let(slot, e, at);
        let if_ = |c, a, b| St::If(c, a, b, at);
        let mut out = vec![
            let_(form, fe),
            let_(set, int(0)),
            let_(queue, int(0)),
            let_(marks, int(0)),
        ];
        // The files that fight: those of the formation for which COND holds.
        let files = call(Builtin::Files, vec![local(form)]);
        for i in 1..=MAX_FILES as i64 {
            let add = call(Builtin::LoopAdd, vec![local(set), int(i), ce.clone()]);
            out.push(if_(
                Ex::Bin(Bin::Le, Box::new(int(i)), Box::new(files.clone())),
                vec![let_(f, int(i)), let_(set, add)],
                Vec::new(),
            ));
        }
        if let Some(se) = start {
            out.push(let_(
                queue,
                call(Builtin::LoopStart, vec![local(queue), local(set), se]),
            ));
        }
        // One round per file it may have: the next file, if one is left.
        for _ in 0..MAX_FILES {
            out.push(let_(
                f,
                call(Builtin::LoopNext, vec![local(set), local(queue)]),
            ));
            let mut round = vec![
                let_(set, call(Builtin::LoopTook, vec![local(set), local(f)])),
                let_(
                    queue,
                    call(Builtin::LoopUnqueue, vec![local(queue), local(f)]),
                ),
            ];
            if let Some((l, r)) = beside {
                for (slot, step) in [(l, -1), (r, 1)] {
                    let j = Ex::Bin(Bin::Add, Box::new(local(f)), Box::new(int(step)));
                    round.push(let_(
                        slot,
                        call(Builtin::LoopMarkOf, vec![local(marks), local(set), j]),
                    ));
                }
            }
            round.push(let_(mark, int(0)));
            round.extend(body.iter().cloned());
            round.push(let_(
                marks,
                call(Builtin::LoopMark, vec![local(marks), local(f), local(mark)]),
            ));
            round.push(let_(
                queue,
                call(
                    Builtin::LoopAfter,
                    vec![local(queue), local(set), local(f), local(mark)],
                ),
            ));
            out.push(if_(
                Ex::Bin(Bin::Gt, Box::new(local(f)), Box::new(int(0))),
                round,
                Vec::new(),
            ));
        }
        Some(St::If(Ex::Const(Value::Bool(true)), out, Vec::new(), at))
    }

    /// Lower `mark N`: it writes the loop's hidden mark.
    pub(super) fn mark(
        &mut self,
        e: &crate::front::syntax::Expr,
        span: Span,
        sc: &mut Scope,
    ) -> Option<St> {
        let Some((_, slot)) = sc.lookup(MARK) else {
            self.err(
                Diag::new("muster::mark", "`mark` outside a `for file` loop")
                    .at(span, "no file is being fought here")
                    .help("`mark N` says what the file a `for file` loop is fighting leaves for its neighbours; write it inside the loop's body"),
            );
            return None;
        };
        let (ex, ty) = self.expr(e, sc, None)?;
        self.expect(&ty, &Ty::Int, e.span, "a mark");
        Some(St::Let(slot, ex, e.span))
    }
}
