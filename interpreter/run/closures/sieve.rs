//! A quantifier's sieve: the test of each unit that settles a body
//! without running it.
//!
//! `any e: enemies(u, e) and in_contact(u, e) and ...` runs its body for
//! every unit of the table; the body's first parts say that for a friend,
//! or a unit far from `u`, it is false whatever follows. [`Lower::sieve`]
//! finds such parts (a side, a type, a group, a command, a fact only ever
//! noted, a reach: [`Part`]) and [`quantifier`] runs the body only for the
//! units they do not settle. The values are the tree evaluator's exactly:
//! a part is taken only where what precedes it cannot fail to evaluate.

use super::{At, Cx, Fun, Lower, Scope, INLINE_DEPTH};
use crate::base::value::Value;
use crate::compile::ir::{Bin, Builtin, Ex, Id};
use crate::front::syntax::Quant;
use crate::run::eval;
use crate::run::nearness::{self, Reach};

impl Lower<'_> {
    /// A test of a quantifier's unit alone (in slot `var`, its side against
    /// another unit's or a side, or its type) that settles the body `e` for
    /// the units it turns away: the body's first `and`ed part, say (`any e:
    /// enemies(u, e) and ...`: not an enemy, the body is false), or its
    /// first `or`ed one (`all f: not friends(f, u) or ...`: not a friend,
    /// the body is true). (For `sum`, `min` and `max`, whose body is `if
    /// COND then VALUE else DEFAULT`, the caller looks in COND.)
    pub(super) fn sieve(&self, e: &Ex, sc: &Scope, var: usize) -> Option<Sieve> {
        match self.decides(e, sc, var, 0) {
            Part::Test(test, on) => Some(Sieve {
                test,
                when: !on,
                val: false,
                sure: true,
                command: None,
                near: None,
            }),
            Part::Sieve(s) => Some(s),
            Part::Harmless | Part::Near { .. } | Part::Other => None,
        }
    }

    /// What `e` is for a unit in slot `var` by a test of that unit alone
    /// ([`Part`]), looking through `not`, the first parts of `and`s and
    /// `or`s (past parts that cannot fail to evaluate:
    /// [`eval::cannot_fail`], the quantifier's unit known to be one), and
    /// the defines called with locals.
    fn decides(&self, e: &Ex, sc: &Scope, var: usize, depth: u8) -> Part {
        match self.decides_part(e, sc, var, depth) {
            Part::Other => {
                if eval::cannot_fail(self.rs, e, locals_at(sc, &[var])) {
                    Part::Harmless
                } else {
                    Part::Other
                }
            }
            p => p,
        }
    }

    /// For `A and B` where A may fail to evaluate and B is false for a far
    /// unit ([`Part::Near`]): B's part when A cannot fail with the units
    /// that B's reach reads known to be units (the sieve is made ready
    /// only when they are: TVBD's `in_range(s, t)`, `s.range != none and
    /// distance(s, t) <= s.range`).
    fn near_after(&self, a: &Ex, b: &Ex, sc: &Scope, var: usize, depth: u8) -> Part {
        match self.decides(b, sc, var, depth) {
            Part::Near { of, limit } => {
                let slots = match limit {
                    Limit::Stat { of: s, .. } => vec![var, of, s],
                    Limit::Const(_) => vec![var, of],
                };
                if eval::cannot_fail(self.rs, a, locals_at(sc, &slots)) {
                    Part::Near { of, limit }
                } else {
                    Part::Other
                }
            }
            _ => Part::Other,
        }
    }

    fn decides_part(&self, e: &Ex, sc: &Scope, var: usize, depth: u8) -> Part {
        if let Some(near) = nearness::leaf(e) {
            return self.near_leaf(near, sc, var);
        }
        let slot = |x: &Ex| sc.slot_of(x);
        let side = |x: &Ex| match x {
            Ex::SideOf(u) => slot(u),
            _ => None,
        };
        match e {
            Ex::Bin(op @ (Bin::And | Bin::Or), a, b) => {
                // The value that settles the chain.
                let settles = *op == Bin::Or;
                // `x == g or grouped(g, x)` (a define `in_group(g, x)`, say):
                // the unit is g or in g's group.
                if settles {
                    if let Some(of) = self.group_of_slot(a, b, sc, var) {
                        return Part::Test(Test::Group { of }, true);
                    }
                }
                let first = self.decides(a, sc, var, depth);
                // Both parts false for a far unit: so is the `or`.
                if let (true, Part::Near { of: p, limit: x }) = (settles, &first) {
                    return match (*x, self.near(b, sc, var, depth)) {
                        (Limit::Const(x), Some((q, Limit::Const(y)))) if q == *p => Part::Near {
                            of: q,
                            limit: Limit::Const(x.max(y)),
                        },
                        (x, Some((q, y))) if q == *p && x == y => Part::Near { of: q, limit: x },
                        _ => Part::Other,
                    };
                }
                let settled = |p: Part| match p {
                    Part::Test(test, on) => Part::Sieve(Sieve {
                        test,
                        when: if settles { on } else { !on },
                        val: settles,
                        sure: true,
                        command: None,
                        near: None,
                    }),
                    Part::Sieve(s) if s.val == settles => Part::Sieve(s),
                    Part::Harmless => Part::Harmless,
                    // An `and` whose first part is false for a far unit.
                    p @ Part::Near { .. } if !settles => p,
                    _ => Part::Other,
                };
                match settled(first) {
                    Part::Harmless => settled(self.decides(b, sc, var, depth)),
                    // An `and` whose first part cannot fail to evaluate: a
                    // later part naming the unit's command settles it false
                    // for a unit of another command too. (Parts that cannot
                    // fail are looked past.)
                    Part::Sieve(first) if !settles && first.sure => {
                        match self.decides(b, sc, var, depth) {
                            Part::Test(Test::Command { of }, true) => Part::Sieve(Sieve {
                                command: first.command.or(Some(of)),
                                ..first
                            }),
                            Part::Test(..) | Part::Harmless => Part::Sieve(first),
                            Part::Sieve(s) if s.sure => Part::Sieve(Sieve {
                                command: first.command.or(s.command),
                                near: nearer(first.near, s.near),
                                ..first
                            }),
                            // A later part false for a far unit: so is
                            // the body (what follows it is not looked at).
                            Part::Near { of, limit } => Part::Sieve(Sieve {
                                near: nearer(first.near, Some((of, limit))),
                                sure: false,
                                ..first
                            }),
                            _ => Part::Sieve(Sieve {
                                sure: false,
                                ..first
                            }),
                        }
                    }
                    Part::Sieve(s) => Part::Sieve(Sieve { sure: false, ..s }),
                    Part::Other if !settles => self.near_after(a, b, sc, var, depth),
                    p => p,
                }
            }
            Ex::Not(x) => match self.decides(x, sc, var, depth) {
                Part::Test(t, on) => Part::Test(t, !on),
                // (What a unit of another command gives is not negated
                // with it: dropped.)
                Part::Sieve(s) => Part::Sieve(Sieve {
                    val: !s.val,
                    command: None,
                    near: None,
                    ..s
                }),
                // (`not` of a part false for a far unit: nothing known.)
                Part::Near { .. } => Part::Other,
                p => p,
            },
            Ex::Define(d, args)
                if depth < INLINE_DEPTH
                    && !self.remembered[*d as usize]
                    && self.pairs.define[*d as usize].is_none()
                    && args
                        .iter()
                        .all(|a| matches!(a, Ex::Local(_) | Ex::Const(_))) =>
            {
                match self.scope_of(args, sc) {
                    Some(inner) => {
                        self.decides(&self.rs.defines[*d as usize].body, &inner, var, depth + 1)
                    }
                    None => Part::Other,
                }
            }
            Ex::Bin(op @ (Bin::Eq | Bin::Ne), x, y) => {
                let same = *op == Bin::Eq;
                let test = |of, unit| Part::Test(Test::Side { of, unit, same }, true);
                match (side(x), side(y), slot(x), slot(y)) {
                    (Some(p), Some(q), _, _) if p == var && q != var => test(q, true),
                    (Some(p), Some(q), _, _) if q == var && p != var => test(p, true),
                    (Some(p), None, _, Some(q)) if p == var && q != var => test(q, false),
                    (None, Some(p), Some(q), _) if p == var && q != var => test(q, false),
                    // Equality never fails to evaluate, nor does a local.
                    (None, None, Some(_), Some(_)) => Part::Harmless,
                    _ => Part::Other,
                }
            }
            // A fact only ever noted, not true by default: true exactly
            // for the units it is noted true of.
            Ex::Fact(f, args) if self.noted_only(*f) => match self.noted_args(args, sc, var) {
                Some(args) => Part::Test(Test::Noted { fact: *f, args }, true),
                None => Part::Other,
            },
            // A battle fact: what its derivation is (a battle's world has
            // the table, and sieves are made ready only there).
            Ex::Fact(f, args)
                if depth < INLINE_DEPTH
                    && self.rs.facts[*f as usize].hook.is_none()
                    && self.rs.facts[*f as usize].battle.is_some() =>
            {
                let body = match &self.rs.facts[*f as usize].battle {
                    Some(b) => &b.body,
                    None => unreachable!("matched above"),
                };
                match self.scope_of(args, sc) {
                    Some(inner) => match self.decides(body, &inner, var, depth + 1) {
                        // Only what is false for a far unit is taken: a
                        // test or sieve of the body would also have to
                        // know its parts cannot fail.
                        p @ Part::Near { .. } => p,
                        _ => Part::Other,
                    },
                    None => Part::Other,
                }
            }
            Ex::Builtin(Builtin::SameCommand, args) => match &args[..] {
                [x, y] => match (slot(x), slot(y)) {
                    (Some(p), Some(q)) if p == var && q != var => {
                        Part::Test(Test::Command { of: q }, true)
                    }
                    (Some(p), Some(q)) if q == var && p != var => {
                        Part::Test(Test::Command { of: p }, true)
                    }
                    _ => Part::Other,
                },
                _ => Part::Other,
            },
            Ex::IsType(x, set) if slot(x) == Some(var) => {
                Part::Test(Test::Type(set.clone().into_boxed_slice()), true)
            }
            _ => Part::Other,
        }
    }

    /// A [`nearness::leaf`] of the quantifier's unit (in slot `var`) and
    /// another unit: [`Part::Near`] when its reach can be read when the
    /// sieve is made ready: a whole number of the measure, or a stat of a
    /// unit other than the quantifier's (as `distance_compared` reads it:
    /// distances are kept to 1/64 of the measure), and a charge's wheel
    /// surely a number.
    fn near_leaf(&self, near: nearness::Near, sc: &Scope, var: usize) -> Part {
        let Some(of) = self.other_of_pair(near.a, near.b, sc, var) else {
            return Part::Other;
        };
        let limit = |k: &Ex| match k {
            Ex::Const(Value::Int(k)) if (0..crate::base::value::UNLIMITED).contains(k) => {
                Some(Limit::of_int(*k))
            }
            Ex::Stat(u, stat) => match sc.slot_of(u) {
                Some(s) if s != var => Some(Limit::Stat {
                    of: s,
                    stat: *stat as usize,
                }),
                _ => None,
            },
            _ => None,
        };
        let limit = match near.reach {
            Reach::Contact => Some(Limit::Const(crate::run::battlefield::CONTACT)),
            Reach::Within(k) => limit(k),
            Reach::Charge { limit: k, wheel } => limit(k).filter(|l| {
                let slots = match *l {
                    Limit::Stat { of: s, .. } => vec![var, of, s],
                    Limit::Const(_) => vec![var, of],
                };
                nearness::surely_a_number(self.rs, wheel, locals_at(sc, &slots))
            }),
        };
        match limit {
            Some(limit) => Part::Near { of, limit },
            None => Part::Other,
        }
    }

    /// Is fact `f` only ever noted (no derivation in a battle, no hook),
    /// and its default not true? (Without a default, an unnoted fact
    /// fails to evaluate.)
    fn noted_only(&self, f: Id) -> bool {
        let fd = &self.rs.facts[f as usize];
        fd.hook.is_none() && fd.battle.is_none() && fd.default.is_some_and(|v| !v.as_bool())
    }

    /// The arguments of a [`Test::Noted`] fact: locals and constants, the
    /// quantifier's unit (in slot `var`) exactly once among them.
    fn noted_args(&self, args: &[Ex], sc: &Scope, var: usize) -> Option<Box<[NotedArg]>> {
        let args = args
            .iter()
            .map(|a| match a {
                Ex::Local(l) => match sc.try_get(*l)? {
                    At::Slot(s) if s as usize == var => Some(NotedArg::Unit),
                    At::Slot(s) => Some(NotedArg::Slot(s as usize)),
                    At::Value(v) => Some(NotedArg::Value(v)),
                },
                Ex::Const(v) => Some(NotedArg::Value(*v)),
                _ => None,
            })
            .collect::<Option<Box<[NotedArg]>>>()?;
        let units = args.iter().filter(|a| matches!(a, NotedArg::Unit)).count();
        (units == 1).then_some(args)
    }

    /// The part a [`Lower::decides`] finds false for a far unit, if it is one.
    fn near(&self, e: &Ex, sc: &Scope, var: usize, depth: u8) -> Option<(usize, Limit)> {
        match self.decides(e, sc, var, depth) {
            Part::Near { of, limit } => Some((of, limit)),
            _ => None,
        }
    }

    /// For a measure of two units `x, y` of which one is the quantifier's
    /// (in slot `var`): the other's slot.
    fn other_of_pair(&self, x: &Ex, y: &Ex, sc: &Scope, var: usize) -> Option<usize> {
        match (sc.slot_of(x)?, sc.slot_of(y)?) {
            (p, q) if p == var && q != var => Some(q),
            (p, q) if q == var && p != var => Some(p),
            _ => None,
        }
    }

    /// The scope of a body called with `args`, when each is a local or a
    /// constant.
    fn scope_of(&self, args: &[Ex], sc: &Scope) -> Option<Scope> {
        let at = args
            .iter()
            .map(|a| match a {
                Ex::Local(l) => sc.try_get(*l),
                Ex::Const(v) => Some(At::Value(*v)),
                _ => None,
            })
            .collect::<Option<Vec<At>>>()?;
        Some(Scope { at })
    }

    /// For `x == g or grouped(g, x)` (either way round each; `grouped`
    /// directly or through a battle fact whose battle value it is), x the
    /// quantifier's unit in slot `var`: g's slot.
    fn group_of_slot(&self, a: &Ex, b: &Ex, sc: &Scope, var: usize) -> Option<usize> {
        let slot = |x: &Ex| sc.slot_of(x);
        let other = |p: &Ex, q: &Ex| match (slot(p)?, slot(q)?) {
            (p, q) if p == var && q != var => Some(q),
            (p, q) if q == var && p != var => Some(p),
            _ => None,
        };
        let Ex::Bin(Bin::Eq, x, y) = a else {
            return None;
        };
        let g = other(x, y)?;
        let pair = match b {
            Ex::Builtin(Builtin::Grouped, args) => args,
            Ex::Fact(f, args) => {
                let fd = &self.rs.facts[*f as usize];
                let plain = |b: &crate::compile::ir::Func| match &b.body {
                    Ex::Builtin(Builtin::Grouped, ps) => {
                        matches!(
                            &ps[..],
                            [Ex::Local(0), Ex::Local(1)] | [Ex::Local(1), Ex::Local(0)]
                        )
                    }
                    _ => false,
                };
                if fd.hook.is_some() || !fd.battle.as_ref().is_some_and(plain) {
                    return None;
                }
                args
            }
            _ => return None,
        };
        match &pair[..] {
            [p, q] if other(p, q) == Some(g) => Some(g),
            _ => None,
        }
    }
}

/// What [`Lower::decides`] finds of an expression, for the unit of a
/// quantifier.
enum Part {
    /// The expression is true exactly when the test comes out as given.
    Test(Test, bool),
    /// When the test comes out `when`, the expression is `val`, whatever
    /// else holds.
    Sieve(Sieve),
    /// It cannot fail to evaluate, and tells nothing: look further.
    Harmless,
    /// False, without failing to evaluate, for a unit whose base is
    /// further than `limit` from that of the unit in slot `of`, or when
    /// either is off the table (`in_contact`, `distance(..) <= K`); what
    /// it is for a unit closer is not known.
    Near { of: usize, limit: Limit },
    /// Nothing to go by.
    Other,
}

/// How far a [`Part::Near`] reaches: a number of the measure, or a stat
/// of the unit in slot `of` (read when the sieve is made ready), either
/// with the margin `distance_compared` allows (distances are kept to
/// 1/64 of the measure).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Limit {
    Const(f64),
    Stat { of: usize, stat: usize },
}

impl Limit {
    /// A whole number `k` of the measure, with the margin.
    fn of_int(k: i64) -> Limit {
        Limit::Const(crate::run::field::plainly_beyond(k))
    }

    /// The reach for one run, or None when the stat's unit is not a unit
    /// or the stat not a whole number below `unlimited` (nothing known).
    fn read(self, cx: &Cx, fr: &[Value]) -> Option<f64> {
        match self {
            Limit::Const(x) => Some(x),
            Limit::Stat { of, stat } => match fr[of] {
                Value::Unit(u) => match cx.c.world.units.get(u as usize)?.stats.get(stat)? {
                    Value::Int(k) if (0..crate::base::value::UNLIMITED).contains(k) => {
                        Some(crate::run::field::plainly_beyond(*k))
                    }
                    _ => None,
                },
                _ => None,
            },
        }
    }
}

/// The locals of scope `sc` that are in one of `slots`, as a mask.
fn locals_at(sc: &Scope, slots: &[usize]) -> u64 {
    (0..64u16)
        .filter(|l| matches!(sc.try_get(*l), Some(At::Slot(s)) if slots.contains(&(s as usize))))
        .fold(0u64, |m, l| m | 1 << l)
}

/// A test a quantifier makes of each unit before its body.
enum Test {
    /// The unit's side the same as (`same`), or other than, the side of
    /// the unit (`unit`) or the side in slot `of`.
    Side { of: usize, unit: bool, same: bool },
    /// The unit's type one of these.
    Type(Box<[bool]>),
    /// The unit the one in slot `of`, or of its group on the table.
    Group { of: usize },
    /// The unit of the command of the unit in slot `of`.
    Command { of: usize },
    /// A fact only ever noted (no derivation, no hook), whose default is
    /// not true, noted true with these arguments, the unit among them.
    Noted { fact: Id, args: Box<[NotedArg]> },
}

/// An argument of a [`Test::Noted`] fact.
enum NotedArg {
    /// The quantifier's unit.
    Unit,
    /// The value in this slot.
    Slot(usize),
    Value(Value),
}

/// A quantifier's sieve ([`Lower::sieve`]): a unit whose test comes out
/// `when` makes the body `val` (for `sum`, `min` and `max`, whose body is
/// `if COND then VALUE else DEFAULT`, COND `val`), so the body is not run
/// for it where that settles what the body gives.
pub(super) struct Sieve {
    test: Test,
    when: bool,
    val: bool,
    /// Does the part it was made from never fail to evaluate? (Then a
    /// later part's test may be made first.)
    sure: bool,
    /// For a sieve that settles the body false (`val` false): the unit
    /// must also be of the command of the unit in this slot, else the body
    /// is false.
    command: Option<usize>,
    /// For a sieve that settles the body false: the unit's base must also
    /// be within this of the base of the unit in this slot, both on the
    /// table, else the body is false (a later part is [`Part::Near`]).
    near: Option<(usize, Limit)>,
}

/// The nearer of two [`Sieve::near`]s about one slot, both numbers, else
/// the first (each is a reach the body needs).
fn nearer(a: Option<(usize, Limit)>, b: Option<(usize, Limit)>) -> Option<(usize, Limit)> {
    match (a, b) {
        (Some((p, Limit::Const(x))), Some((q, Limit::Const(y)))) if p == q => {
            Some((p, Limit::Const(x.min(y))))
        }
        (a, b) => a.or(b),
    }
}

/// A [`Sieve`] ready for one run of a quantifier: the side it compares
/// with read once. None when it cannot be (its slot does not hold a unit
/// or a side: the body itself then reports or decides).
struct Ready<'s> {
    test: Tested<'s>,
    when: bool,
    val: bool,
    /// The command the unit must be of, if the sieve asks.
    command: Option<u16>,
    /// The unit (of the table) the unit's base must be within the limit
    /// of, if the sieve asks.
    near: Option<(usize, f64)>,
}

enum Tested<'s> {
    Side(u16, bool),
    Type(&'s [bool]),
    Command(u16),
    /// The unit and its group (None: off the table).
    Group(usize, Option<usize>),
    /// The units for which the fact is noted true.
    Noted(Vec<u16>),
}

impl Sieve {
    fn ready(&self, cx: &Cx, fr: &[Value]) -> Option<Ready<'_>> {
        let test = match &self.test {
            Test::Side { of, unit, same } => match (fr[*of], unit) {
                (Value::Unit(u), true) => {
                    Tested::Side(cx.c.world.units.get(u as usize)?.side, *same)
                }
                (Value::Side(s), false) => Tested::Side(s, *same),
                _ => return None,
            },
            Test::Type(set) => Tested::Type(set),
            Test::Group { of } => match fr[*of] {
                Value::Unit(g) if (g as usize) < cx.c.world.units.len() => {
                    let f = cx.c.world.field.as_ref()?;
                    Tested::Group(g as usize, f.group_of(cx.c.world, g as usize))
                }
                _ => return None,
            },
            Test::Command { of } => match fr[*of] {
                Value::Unit(u) => {
                    Tested::Command(*cx.c.world.field.as_ref()?.command.get(u as usize)?)
                }
                _ => return None,
            },
            Test::Noted { fact, args } => {
                let mut units = Vec::new();
                'noted: for (key, v) in cx.c.world.facts.get(*fact as usize)? {
                    if !v.as_bool() || key.len() != args.len() {
                        continue;
                    }
                    let mut unit = None;
                    for (k, a) in key.iter().zip(args.iter()) {
                        match (a, k) {
                            (NotedArg::Unit, Value::Unit(x)) => unit = Some(*x),
                            (NotedArg::Slot(s), k) if *k == fr[*s] => {}
                            (NotedArg::Value(c), k) if k == c => {}
                            _ => continue 'noted,
                        }
                    }
                    units.extend(unit);
                }
                Tested::Noted(units)
            }
        };
        let command = match self.command {
            Some(of) => match fr[of] {
                Value::Unit(u) => Some(*cx.c.world.field.as_ref()?.command.get(u as usize)?),
                _ => return None,
            },
            None => None,
        };
        let near = match self.near {
            Some((of, limit)) => match fr[of] {
                Value::Unit(u) if (u as usize) < cx.c.world.field.as_ref()?.bases.len() => {
                    limit.read(cx, fr).map(|limit| (u as usize, limit))
                }
                _ => return None,
            },
            None => None,
        };
        Some(Ready {
            test,
            when: self.when,
            val: self.val,
            command,
            near,
        })
    }
}

impl Ready<'_> {
    /// The body's value for unit `i`, when the sieve settles it.
    #[inline(always)]
    fn settles(&self, cx: &Cx, i: usize) -> Option<bool> {
        let u = &cx.c.world.units[i];
        let t = match self.test {
            Tested::Side(s, same) => (u.side == s) == same,
            Tested::Type(set) => set[u.ty as usize],
            Tested::Noted(ref units) => units.contains(&(i as u16)),
            Tested::Command(c) => cx.c.world.field.as_ref().is_some_and(|f| f.command[i] == c),
            Tested::Group(g, group) => {
                i == g
                    || (group.is_some()
                        && cx
                            .c
                            .world
                            .field
                            .as_ref()
                            .is_some_and(|f| f.group_of(cx.c.world, i) == group))
            }
        };
        if t == self.when {
            return Some(self.val);
        }
        match self.command {
            Some(c) if cx.c.world.field.as_ref().is_some_and(|f| f.command[i] != c) => {
                return Some(false)
            }
            _ => {}
        }
        match (self.near, &cx.c.world.field) {
            (Some((o, limit)), Some(f)) if f.beyond(i, o, limit) => Some(false),
            _ => None,
        }
    }
}

/// A quantifier's sieve ready for a run over `n` units. Its slot is read as
/// the body's first part would read it: only when there is a unit to run
/// the body for.
fn ready<'s>(
    sieve: &'s Option<(Sieve, Option<Value>)>,
    n: usize,
    cx: &Cx,
    fr: &[Value],
) -> Option<Ready<'s>> {
    if n == 0 {
        return None;
    }
    sieve.as_ref().and_then(|(s, _)| s.ready(cx, fr))
}

/// `any`, `all`, `first`, `count`, `sum`, `min` and `max` over the units
/// (or sides), the variable in `slot`, as the tree evaluator runs them; a
/// unit whose body the sieve settles is not run (for `sum`, `min` and
/// `max`, a unit whose COND it settles false gives `default`, the body's
/// constant otherwise).
pub(super) fn quantifier(
    q: Quant,
    sides: bool,
    slot: usize,
    body: Box<Fun>,
    sieve: Option<(Sieve, Option<Value>)>,
) -> Box<Fun> {
    let n = move |cx: &Cx| {
        if sides {
            cx.c.world.side_names.len()
        } else {
            cx.c.world.units.len()
        }
    };
    let var = move |i: usize| {
        if sides {
            Value::Side(i as u16)
        } else {
            Value::Unit(i as u16)
        }
    };
    let default = sieve.as_ref().and_then(|(_, d)| *d);
    match q {
        Quant::Any => Box::new(move |cx, fr| {
            let r = ready(&sieve, n(cx), cx, fr);
            for i in 0..n(cx) {
                match r.as_ref().and_then(|r| r.settles(cx, i)) {
                    Some(true) => return Ok(Value::Bool(true)),
                    Some(false) => continue,
                    None => {}
                }
                fr[slot] = var(i);
                if body(cx, fr)?.as_bool() {
                    return Ok(Value::Bool(true));
                }
            }
            Ok(Value::Bool(false))
        }),
        Quant::All => Box::new(move |cx, fr| {
            let r = ready(&sieve, n(cx), cx, fr);
            for i in 0..n(cx) {
                match r.as_ref().and_then(|r| r.settles(cx, i)) {
                    Some(false) => return Ok(Value::Bool(false)),
                    Some(true) => continue,
                    None => {}
                }
                fr[slot] = var(i);
                if !body(cx, fr)?.as_bool() {
                    return Ok(Value::Bool(false));
                }
            }
            Ok(Value::Bool(true))
        }),
        Quant::First => Box::new(move |cx, fr| {
            let r = ready(&sieve, n(cx), cx, fr);
            for i in 0..n(cx) {
                match r.as_ref().and_then(|r| r.settles(cx, i)) {
                    Some(true) => {
                        fr[slot] = var(i);
                        return Ok(fr[slot]);
                    }
                    Some(false) => continue,
                    None => {}
                }
                fr[slot] = var(i);
                if body(cx, fr)?.as_bool() {
                    return Ok(fr[slot]);
                }
            }
            Ok(Value::None)
        }),
        Quant::Count => Box::new(move |cx, fr| {
            let r = ready(&sieve, n(cx), cx, fr);
            let mut count = 0i64;
            for i in 0..n(cx) {
                if let Some(b) = r.as_ref().and_then(|r| r.settles(cx, i)) {
                    count += i64::from(b);
                    continue;
                }
                fr[slot] = var(i);
                count += i64::from(body(cx, fr)?.as_bool());
            }
            Ok(Value::Int(count))
        }),
        Quant::Sum | Quant::Min | Quant::Max => Box::new(move |cx, fr| {
            let r = ready(&sieve, n(cx), cx, fr);
            let mut best = eval::total_start(q);
            for i in 0..n(cx) {
                let v = match (r.as_ref().and_then(|r| r.settles(cx, i)), default) {
                    (Some(false), Some(d)) => d,
                    _ => {
                        fr[slot] = var(i);
                        body(cx, fr)?
                    }
                };
                best = eval::total_step(q, best, v)?;
            }
            Ok(best)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{thistle, tvbd};
    use super::super::{Lower, Scope};
    use super::{Limit, Test};
    use crate::battle::game::tests::{ruleset, tvbd_game};
    use crate::compile::ir::Ex;

    /// `count u: in_group(g, u) and ...` (Thistle's group_size): the
    /// quantifier runs its body only for g and the units of g's group,
    /// `in_group` being `u == g or same_group(g, u)` and `same_group` the
    /// table's `grouped`.
    #[test]
    fn a_quantifier_over_a_group_looks_only_at_the_group() {
        let rs = thistle();
        let lower = Lower::new(&rs);
        let sieve_of = |name: &str| {
            let d = rs.defines.iter().find(|d| d.name == name).expect(name);
            let Ex::Quant(_, false, slot, body) = &d.body else {
                panic!("{name} is a quantifier over the units")
            };
            lower.sieve(body, &Scope::top(), *slot as usize)
        };
        let Some(s) = sieve_of("group_size") else {
            panic!("group_size has a sieve")
        };
        assert!(matches!(s.test, Test::Group { of: 0 }));
        assert!(!s.when && !s.val, "not of the group: the body is false");
        let Some(s) = sieve_of("groups_engaged") else {
            panic!("groups_engaged has a sieve")
        };
        assert!(matches!(s.test, Test::Group { of: 0 }));
    }

    /// Matchlocks counts a unit's brigade mates placed: `count f:
    /// brigade_mate(f, u) and ...`, a brigade mate being another unit,
    /// a friend, of the same command, not a leader. The quantifier tests
    /// the side first, then, those parts being sure to evaluate, the
    /// command too: the body runs only for friends of u's command.
    #[test]
    fn a_quantifier_over_a_command_looks_only_at_the_command() {
        let rs = ruleset("rules/never_mind_the_matchlocks.muster");
        let lower = Lower::new(&rs);
        let d = rs
            .defines
            .iter()
            .find(|d| d.name == "placed_mates")
            .expect("placed_mates");
        let Ex::Quant(_, false, slot, body) = &d.body else {
            panic!("a quantifier over the units")
        };
        let Some(s) = lower.sieve(body, &Scope::top(), *slot as usize) else {
            panic!("placed_mates has a sieve")
        };
        assert!(matches!(
            s.test,
            Test::Side {
                of: 0,
                unit: true,
                same: true
            }
        ));
        assert_eq!(s.command, Some(0));
        assert!(!s.val && !s.sure);
        // Negated, a unit of another command makes the body true, not
        // false: the command is not tested.
        let not = Ex::Not(body.clone());
        let Some(s) = lower.sieve(&not, &Scope::top(), *slot as usize) else {
            panic!("the negation has a sieve")
        };
        assert_eq!(s.command, None);
        assert!(s.val);
    }

    /// The sieve of a quantifier over the units in define `name`'s body
    /// (or a fact's battle derivation).
    fn sieve_of(
        lower: &Lower,
        rs: &crate::compile::ir::Ruleset,
        name: &str,
    ) -> Option<super::Sieve> {
        let body = match rs.defines.iter().find(|d| d.name == name) {
            Some(d) => &d.body,
            None => {
                let f = rs.facts.iter().find(|f| f.name == name).expect(name);
                &f.battle.as_ref().expect("derived in battle").body
            }
        };
        let Ex::Quant(_, false, slot, body) = body else {
            panic!("{name} is a quantifier over the units")
        };
        lower.sieve(body, &Scope::top(), *slot as usize)
    }

    /// TVBD asks whether an enemy is in contact (`locked_in_melee`, a
    /// battle fact; `engaged_with_enemy`, either way round through the
    /// fact `engaged`) and whether a friendly horse is within 3 TUM
    /// (`cavalry_support`, past `not f.routed`, which cannot fail for the
    /// quantifier's own unit): after the side, each body is false for a
    /// unit out of that reach, so the quantifier does not run it there.
    /// Negated, or with a part before that may fail, or with a reach that
    /// is not a number, nothing is known.
    #[test]
    fn a_quantifier_that_asks_for_nearness_skips_the_units_out_of_reach() {
        use crate::base::value::Value;
        use crate::compile::ir::{Bin, Builtin};
        use crate::run::battlefield::CONTACT;
        let rs = &tvbd();
        let lower = Lower::new(rs);
        let near = |name: &str| match sieve_of(&lower, rs, name) {
            Some(s) => {
                assert!(!s.val, "{name}: a far unit makes the body false");
                s.near
            }
            None => panic!("{name} has a sieve"),
        };
        let three = Some((0, Limit::Const(3.0 + 1.0 / 64.0)));
        assert_eq!(near("locked_in_melee"), Some((0, Limit::Const(CONTACT))));
        assert_eq!(near("engaged_with_enemy"), Some((0, Limit::Const(CONTACT))));
        assert_eq!(near("cavalry_support"), three);
        // Shooting's range is the shooter's stat, read when the sieve is
        // made ready: `in_range(s, t)` asks `s.range != none` first, which
        // cannot fail once the shooter is known to be a unit.
        let range = rs.stat("range").expect("range") as usize;
        let by_range = Some((0, Limit::Stat { of: 0, stat: range }));
        assert_eq!(near("enemy_in_range_to_front"), by_range);
        assert_eq!(near("friends_in_range_to_front"), by_range);

        let d = rs.defines.iter().find(|d| d.name == "cavalry_support");
        let Ex::Quant(_, false, slot, body) = &d.expect("cavalry_support").body else {
            panic!("a quantifier")
        };
        let var = *slot as usize;
        let not = Ex::Not(body.clone());
        let s = lower.sieve(&not, &Scope::top(), var).expect("a sieve");
        assert_eq!((s.val, s.near), (true, None), "negated: not false when far");
        // `resolve + 0 >= resolve` of the other unit may fail (it is not
        // known to be a unit): put first after the side, the distance
        // after it is not looked at.
        let resolve = rs.states.iter().position(|s| s.name == "resolve");
        let resolve = resolve.expect("resolve") as u16;
        let of = |l: u16| Box::new(Ex::State(Box::new(Ex::Local(l)), resolve));
        let sum = Ex::Bin(Bin::Add, of(0), Box::new(Ex::Const(Value::Int(0))));
        let may_fail = Ex::Bin(Bin::Ge, Box::new(sum), of(0));
        // The chain's first part: `friends(u, f)`.
        let mut side = &**body;
        while let Ex::Bin(Bin::And, a, _) = side {
            side = a;
        }
        assert!(matches!(side, Ex::Define(..)), "{side:?}");
        let side = &Box::new(side.clone());
        let distance = Ex::Builtin(Builtin::Distance, vec![Ex::Local(0), Ex::Local(1)]);
        let within = |k: Ex| Ex::Bin(Bin::Le, Box::new(distance.clone()), Box::new(k));
        let chain = |a: Ex, b: Ex| Ex::Bin(Bin::And, Box::new(a), Box::new(b));
        let three = || Ex::Const(Value::Int(3));
        let plain = chain((**side).clone(), within(three()));
        let s = lower.sieve(&plain, &Scope::top(), var).expect("a sieve");
        assert_eq!(s.near, Some((0, Limit::Const(3.0 + 1.0 / 64.0))));
        let failing = chain(chain((**side).clone(), may_fail.clone()), within(three()));
        let s = lower.sieve(&failing, &Scope::top(), var).expect("a sieve");
        assert_eq!(s.near, None);
        // The same part asked of the quantifier's unit cannot fail.
        let own = |l: u16| Box::new(Ex::State(Box::new(Ex::Local(l)), resolve));
        let harmless = Ex::Bin(Bin::Ge, own(1), own(1));
        let sure = chain(chain((**side).clone(), harmless), within(three()));
        let s = lower.sieve(&sure, &Scope::top(), var).expect("a sieve");
        assert_eq!(s.near, Some((0, Limit::Const(3.0 + 1.0 / 64.0))));
        // A reach that is a stat of the other unit (`move`, stat 0).
        let stat = |l: u16| Ex::Stat(Box::new(Ex::Local(l)), 0);
        let by_stat = Some((0, Limit::Stat { of: 0, stat: 0 }));
        let plain = chain((**side).clone(), within(stat(0)));
        let s = lower.sieve(&plain, &Scope::top(), var).expect("a sieve");
        assert_eq!(s.near, by_stat);
        // Of the quantifier's own unit: a reach per unit, nothing known.
        let own = chain((**side).clone(), within(stat(1)));
        let s = lower.sieve(&own, &Scope::top(), var).expect("a sieve");
        assert_eq!(s.near, None);
        // A part just before the distance (the two `and`ed together, as
        // `in_range` has them) that reads the other unit (`x.move !=
        // none`) cannot fail once the sieve knows that unit is one; one
        // that reads a third local may.
        let ne_none =
            |l: u16| Ex::Bin(Bin::Ne, Box::new(stat(l)), Box::new(Ex::Const(Value::None)));
        let known = chain((**side).clone(), chain(ne_none(0), within(stat(0))));
        let s = lower.sieve(&known, &Scope::top(), var).expect("a sieve");
        assert_eq!(s.near, by_stat);
        let third = chain((**side).clone(), chain(ne_none(2), within(stat(0))));
        let s = lower.sieve(&third, &Scope::top(), var).expect("a sieve");
        assert_eq!(s.near, None);
        // And one that may fail even so.
        let failing = chain((**side).clone(), chain(may_fail, within(stat(0))));
        let s = lower.sieve(&failing, &Scope::top(), var).expect("a sieve");
        assert_eq!(s.near, None);
    }

    /// `expr`, with the unit `a` in it, evaluated in `world` by the tree
    /// evaluator and compiled: the same value (asserted), as a truth.
    fn both(
        build: &mut crate::Build,
        world: &crate::run::world::World,
        a: usize,
        expr: &str,
    ) -> bool {
        use crate::base::value::Value;
        use crate::run::eval::{Ctx, Eval, NoDice};
        let rs = &build.ruleset;
        let locals = [("a".to_string(), crate::compile::ir::Ty::Unit)];
        let file = build.sources.add("query", expr);
        let e = crate::front::parse::parse_expr(expr, file, 0).expect("parses");
        let mut c = crate::compile::compiler::Compiler::from_ruleset(rs);
        let (ex, _, slots) = c.query(&e, &locals).expect("compiles");
        let mut frame = vec![Value::None; (slots as usize).max(1)];
        frame[0] = Value::Unit(a as u16);
        let ev = Eval::new(rs);
        let tree = ev.eval(Ctx::new(world), &ex, &mut frame.clone(), &mut NoDice);
        let code = Lower::new(rs).code(&ex, frame.len());
        let compiled = code.run(&ev, Ctx::new(world), &mut frame, &mut NoDice);
        match (tree, compiled) {
            (Ok(t), Ok(c)) => {
                assert_eq!(t, c, "{expr}: the tree's value");
                t.as_bool()
            }
            _ => panic!("{expr} evaluates"),
        }
    }

    /// The `n`th unit of `side` that is not a commander.
    fn nth_of(
        rs: &crate::compile::ir::Ruleset,
        w: &crate::run::world::World,
        side: u16,
        n: usize,
    ) -> usize {
        let units = w.units.iter().enumerate().filter(|(_, u)| {
            u.side == side && !rs.unit_types[u.ty as usize].name.contains("Commander")
        });
        units.map(|(i, _)| i).nth(n).expect("units enough")
    }

    /// Compiled, a quantifier that skips the units out of reach gives what
    /// the tree evaluator gives, at the reach and just beyond it: two
    /// square bases corner to corner along the line of their centres
    /// (where the centres' bound is as tight as it gets), every other
    /// unit off the table.
    #[test]
    fn a_quantifier_that_asks_for_nearness_keeps_the_units_at_its_reach() {
        use crate::run::battlefield::{Base, Pt};
        let (mut build, mut game) = tvbd_game();
        let nth = |side, n| nth_of(&build.ruleset, &game.world, side, n);
        let (a, friend, enemy) = (nth(0, 0), nth(0, 1), nth(1, 0));
        let at = |x: f64| Base::new(Pt::new(x, 10.0), 45.0, 1.0, 1.0);
        let r = at(0.0).radius();
        let f = game.world.field.as_mut().expect("a battle has a table");
        for u in 0..f.bases.len() {
            f.set_on_table(u, false);
        }
        for u in [a, friend, enemy] {
            f.set_on_table(u, true);
        }
        f.set_base(a, at(20.0));
        let mut ask =
            |world: &crate::run::world::World, expr: &str| both(&mut build, world, a, expr);
        // In contact (0.005 apart, under CONTACT), then not (0.02).
        let contact = "any e: enemies(a, e) and in_contact(a, e)";
        for (gap, holds) in [(0.005, true), (0.02, false)] {
            let f = game.world.field.as_mut().expect("a table");
            f.set_base(enemy, at(20.0 + 2.0 * r + gap));
            f.set_base(friend, at(40.0));
            assert_eq!(ask(&game.world, contact), holds, "gap {gap}");
            assert_eq!(ask(&game.world, "locked_in_melee(a)"), holds, "gap {gap}");
        }
        // Exactly 3 apart, or a shade more that the rules read as 3: kept;
        // 1/16 more: not.
        let support = "any f: friends(a, f) and not f.routed and distance(a, f) <= 3";
        for (gap, holds) in [
            (3.0, true),
            (3.0 + 1.0 / 130.0, true),
            (3.0 + 1.0 / 16.0, false),
        ] {
            let f = game.world.field.as_mut().expect("a table");
            f.set_base(enemy, at(80.0));
            f.set_base(friend, at(20.0 + 2.0 * r + gap));
            assert_eq!(ask(&game.world, support), holds, "gap {gap}");
        }
        // Off the table, the friend is never within reach.
        let f = game.world.field.as_mut().expect("a table");
        f.set_base(friend, at(20.0 + 2.0 * r + 1.0));
        assert!(ask(&game.world, support));
        let f = game.world.field.as_mut().expect("a table");
        f.set_on_table(friend, false);
        assert!(!ask(&game.world, support));

        // A reach that is a stat, read as the run begins: a shooter's own
        // range (4 TUM: not a horse, whose range is 2), kept at it and a
        // shade more, not 1/16 more. A unit with no range (none) reaches
        // no one, and no reach is read.
        use crate::base::value::{Value, UNLIMITED};
        let range = build.ruleset.stat("range").expect("range") as usize;
        let of_side_0 = |ranged: bool| {
            let w = &game.world.units;
            let has = |u: &crate::run::world::UnitInst| {
                matches!(u.stats[range], Value::Int(k) if k < UNLIMITED) == ranged
            };
            w.iter()
                .position(|u| u.side == 0 && has(u) && u.stats[range] != Value::Int(2))
        };
        let (shooter, unranged) = (of_side_0(true), of_side_0(false));
        let (shooter, unranged) = (shooter.expect("a shooter"), unranged.expect("no range"));
        assert_eq!(game.world.units[shooter].stats[range], Value::Int(4));
        let in_range = "any f: friends(a, f) and in_range(a, f)";
        for (gap, holds) in [
            (4.0, true),
            (4.0 + 1.0 / 130.0, true),
            (4.0 + 1.0 / 16.0, false),
        ] {
            let f = game.world.field.as_mut().expect("a table");
            f.set_on_table(friend, true);
            for u in [a, shooter, unranged] {
                f.set_on_table(u, u == shooter);
            }
            f.set_base(shooter, at(20.0));
            f.set_base(friend, at(20.0 + 2.0 * r + gap));
            let got = both(&mut build, &game.world, shooter, in_range);
            assert_eq!(got, holds, "gap {gap}");
            let f = game.world.field.as_mut().expect("a table");
            f.set_on_table(shooter, false);
            f.set_on_table(unranged, true);
            f.set_base(unranged, at(20.0));
            let got = both(&mut build, &game.world, unranged, in_range);
            assert!(!got, "gap {gap}: no range");
        }
    }

    /// TVBD asks `charges_this_turn(c)`: `any t: charges(c, t)`, a charge
    /// being `declared_charge(c, t) and not charge_cancelled(c)`, and
    /// `declared_charge` a fact only ever noted, false by default. The
    /// quantifier runs its body only for the units the fact is noted true
    /// of, with c first. A fact with a derivation, a hook, no default or a
    /// default of true is not such a test.
    #[test]
    fn a_quantifier_over_a_noted_fact_looks_only_at_the_units_noted() {
        use super::NotedArg;
        let rs = &mut tvbd();
        let sieve = |rs: &crate::compile::ir::Ruleset, name: &str| {
            let lower = Lower::new(rs);
            sieve_of(&lower, rs, name).map(|s| (s.test, s.when, s.val))
        };
        let Some((Test::Noted { fact, args }, false, false)) = sieve(rs, "charges_this_turn")
        else {
            panic!("charges_this_turn is sieved by the noted charges")
        };
        assert_eq!(rs.facts[fact as usize].name, "declared_charge");
        assert!(matches!(&args[..], [NotedArg::Slot(0), NotedArg::Unit]));
        let declared = rs.facts.iter().position(|f| f.name == "declared_charge");
        let declared = declared.expect("declared_charge");
        // True by default, or without a default: the test would be wrong.
        for default in [Some(crate::base::value::Value::Bool(true)), None] {
            rs.facts[declared].default = default;
            assert!(
                !matches!(
                    sieve(rs, "charges_this_turn"),
                    Some((Test::Noted { .. }, ..))
                ),
                "{default:?}"
            );
        }
    }

    /// Compiled, a quantifier over a noted fact gives what the tree gives:
    /// with nothing noted, with charges noted for other units and the
    /// other way round, with one noted false, and with one noted true.
    #[test]
    fn a_quantifier_over_a_noted_fact_finds_what_is_noted() {
        use crate::base::value::Value;
        let (mut build, mut game) = tvbd_game();
        let nth = |side, n| nth_of(&build.ruleset, &game.world, side, n);
        let (a, b, e, f) = (nth(0, 0), nth(0, 1), nth(1, 0), nth(1, 1));
        let declared = build
            .ruleset
            .fact("declared_charge")
            .expect("declared_charge");
        let unit = |u: usize| Value::Unit(u as u16);
        // (Nobody charges a or b: neither's own charge is cancelled.)
        let charges = "any t: charges(a, t)";
        let declares = "any t: declared_charge(a, t)";
        let charged = "any c: declared_charge(c, a)";
        let w = &mut game.world;
        assert!(!both(&mut build, w, a, charges));
        assert!(!both(&mut build, w, a, charged));
        w.set_fact(declared, vec![unit(b), unit(e)], Value::Bool(true));
        w.set_fact(declared, vec![unit(a), unit(f)], Value::Bool(false));
        assert!(!both(&mut build, w, a, charges), "noted false");
        assert!(!both(&mut build, w, a, declares), "noted false");
        assert!(!both(&mut build, w, a, charged));
        assert!(both(&mut build, w, b, charges));
        assert!(both(&mut build, w, e, charged));
        assert!(!both(&mut build, w, e, declares), "noted the other way");
        w.set_fact(declared, vec![unit(a), unit(e)], Value::Bool(true));
        assert!(both(&mut build, w, a, charges));
        w.set_fact(declared, vec![unit(f), unit(a)], Value::Bool(true));
        assert!(both(&mut build, w, a, declares));
        assert!(both(&mut build, w, a, charged));
    }
}
