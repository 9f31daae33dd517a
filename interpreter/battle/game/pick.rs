//! `pick`: the options of a decision over one or more units, taken one at
//! a time by the rules' order and the policy's score. A `face` decision's
//! options (a unit and the enemy it turns to face) are found and taken the
//! same way; taking one turns the unit ([`Game::turn_to_face`]).
//!
//! Finding the options is a scan over every pair (or tuple) of units, so
//! LEGAL is split once, with the scenario, into its `and`-ed parts by the
//! names they read ([`Split`]): the parts of the first unit alone and of
//! the second alone are asked once per unit, and a part that only bases
//! within a distance can satisfy ([`Bound`]) turns the plainly further
//! pairs away before anything is asked of them. The same bound serves a
//! `move`'s `control` condition (which enemy holds the mover in its zone
//! of control: [`Game::control_reach`]).

use super::{place, Event, Game, Prefer};
use crate::base::value::Value;
use crate::compile::ir::{Bin, ChoiceDef, ChoiceKind, Ex, Id, Ruleset};
use crate::front::diagnostic::Diag;
use crate::run::field::Field;
use crate::run::nearness::{self, Near};
use std::sync::Arc;

impl<'r> Game<'r> {
    /// `pick`: take legal options one at a time (each at most once), the
    /// ones the rules say must be taken first, then the policy's favourite
    /// while it scores 0 or more.
    #[inline(never)]
    pub(super) fn pick(
        &mut self,
        ch: &ChoiceDef,
        prefer: Prefer,
        mut frame: Vec<Value>,
    ) -> Result<(), Diag> {
        use std::cmp::Ordering::{Equal, Greater, Less};
        let n = ch.vars.len();
        // Options a `pay` refused earlier in an alternation are not offered.
        let mut taken: Vec<Vec<u16>> = self.refused(prefer.d);
        let once = self.prompted(prefer.d);
        // The options found legal so far; after each one taken only these
        // are checked again, and the whole table once more when they run
        // out (an action can make a new option legal: a rout opens a line
        // of fire).
        let mut known: Vec<Vec<u16>> = Vec::new();
        let mut failed: Vec<u16> = Vec::new();
        let mut rescanned = false;
        // Whether `known` was found by the scan just made: nothing has
        // changed since, so LEGAL holds for each of them and is not asked
        // again (the same answers: the scan asked every part of it).
        let mut fresh = false;
        let cap = self.world.units.len().pow(n as u32).min(100_000) + 1;
        for _ in 0..cap {
            // The best so far by where it is in `still` (no option copied).
            let mut best: Option<(bool, Value, Value, usize)> = None;
            let mut still = Vec::with_capacity(known.len());
            for opt in std::mem::take(&mut known) {
                for (k, s) in ch.vars.iter().enumerate() {
                    frame[*s as usize] = Value::Unit(opt[k]);
                }
                if !fresh && !self.eval(&ch.legal, &mut frame)?.as_bool() {
                    continue;
                }
                let must = match &ch.must {
                    Some(m) => self.eval(m, &mut frame)?.as_bool(),
                    None => false,
                };
                let order = match &ch.order {
                    Some(o) => self.eval(o, &mut frame)?,
                    None => Value::Int(0),
                };
                let score = self.score(prefer, &mut frame)?;
                still.push(opt);
                if !(must || score.num_cmp(Value::Int(0)) != Some(Less)) {
                    continue;
                }
                let better = match &best {
                    None => true,
                    Some((bm, bo, bs, _)) => {
                        (must && !bm)
                            || (must == *bm
                                && (order.num_cmp(*bo) == Some(Less)
                                    || (order.num_cmp(*bo) == Some(Equal)
                                        && score.num_cmp(*bs) == Some(Greater))))
                    }
                };
                if better {
                    best = Some((must, order, score, still.len() - 1));
                }
            }
            known = still;
            fresh = false;
            let Some((_, _, _, i)) = best else {
                if rescanned {
                    break;
                }
                known = self.scan(prefer.d, ch, &mut frame, &taken)?;
                known.retain(|o| !failed.contains(&o[0]));
                rescanned = true;
                fresh = true;
                continue;
            };
            rescanned = false;
            let opt = known[i].clone();
            known.retain(|o| *o != opt);
            for (k, s) in ch.vars.iter().enumerate() {
                frame[*s as usize] = Value::Unit(opt[k]);
            }
            taken.push(opt.clone());
            if !self.passes_check(ch, opt[0], &mut frame)? {
                // A check is the unit's: failed, it takes no other option.
                known.retain(|o| o[0] != opt[0]);
                failed.push(opt[0]);
                continue;
            }
            if let Some(pay) = &ch.pay {
                if !self.pay(pay, &opt, &mut frame)? {
                    if let Some(p) = &mut self.prompt {
                        p.refused.push(opt.clone());
                    }
                    continue;
                }
            }
            if ch.kind == ChoiceKind::Face {
                // A unit turns once, whether there was room or not.
                known.retain(|o| o[0] != opt[0]);
                failed.push(opt[0]);
                if !self.turn_to_face(opt[0], opt[1]) {
                    continue;
                }
            }
            self.run_then(ch, &mut frame)?;
            if once {
                // Asked in an alternation: one option, then the other side.
                if let Some(p) = &mut self.prompt {
                    p.took = true;
                }
                break;
            }
        }
        Ok(())
    }

    /// `face u toward t`: unit `u` turns to face `t`, which it touches, and
    /// closes up against it ([`crate::run::battlefield::Base::faced_against`]),
    /// if its new base is on
    /// the table and overlaps no other unit's ("if there is space"); else
    /// it stays as it is. Whether it turned.
    pub(super) fn turn_to_face(&mut self, u: u16, t: u16) -> bool {
        let f = self.field();
        let (start, tb) = (f.bases[u as usize], f.bases[t as usize]);
        let end = start.faced_against(&tb);
        let unit = self.world.units[u as usize].name.clone();
        let target = self.world.units[t as usize].name.clone();
        if !self.on_table(&end) || self.ends_on_someone(u, &end, &self.code.everyone) {
            self.note(|_| Event::Stays {
                unit,
                why: format!("no room to face {target}"),
            });
            return false;
        }
        self.set_base(u as usize, end);
        self.note(|_| Event::Move {
            unit,
            how: format!("turns to face {target}"),
            from: place(&start),
            to: place(&end),
            with: Vec::new(),
        });
        true
    }

    /// Every legal option of a `pick` not yet taken, in the units' order.
    /// Units off the table are among the options (a routed enemy is what
    /// heroics reward); the rules' `where` says which may take part.
    ///
    /// The parts of LEGAL that name only the option's first unit (`s.side
    /// == side`, `not s.shot_this_turn`, opened up from the defines LEGAL
    /// calls) are checked once per first unit, not once per option: the
    /// same answer, far fewer evaluations. Should such a part fail to
    /// evaluate, the unit's options are judged whole.
    #[inline(never)]
    pub(super) fn scan(
        &mut self,
        d: Id,
        ch: &ChoiceDef,
        frame: &mut [Value],
        taken: &[Vec<u16>],
    ) -> Result<Vec<Vec<u16>>, Diag> {
        let units: Vec<u16> = (0..self.world.units.len() as u16).collect();
        let n = ch.vars.len();
        let mut out = Vec::new();
        if units.is_empty() || n == 0 {
            return Ok(out);
        }
        // The split is made (and compiled) once, with the scenario; its
        // parts' own slots start past the decision's names and arguments.
        let split = match &self.code.splits[d as usize] {
            Some(s) if s.frame <= frame.len() => s.clone(),
            _ => Arc::new(Split::of(self.rs, ch, frame.len())),
        };
        let Split {
            first_only,
            second_only,
            both,
            width,
            sides,
            contact,
            bound,
            first_side,
            second_sure,
            ..
        } = &*split;
        let bound_swapped = bound.as_ref().is_some_and(|bd| bd.swapped);
        let mut wide = frame.to_vec();
        wide.resize(*width, Value::None);
        // Per unit: does it pass the parts naming only the second name?
        // (None: a part failed to evaluate; judge its options whole.)
        // Worked out when a first unit first passes its own parts (none
        // may: then they are not asked at all).
        let mut second_ok: Vec<Option<bool>> = Vec::new();
        // With second parts that cannot fail, each unit's answer is asked
        // when a pair first needs it (0: not yet asked, 1: false, 2: true).
        let mut second_asked: Vec<u8> = Vec::new();
        if n == 2 && *second_sure {
            second_asked.resize(units.len(), 0);
        }
        // The deciding side, when the first unit's own side test is made here.
        let side = first_side.and_then(|(k, same)| match wide[k as usize] {
            Value::Side(s) => Some((s, same)),
            _ => None,
        });
        for &u0 in &units {
            if let Some((s, same)) = side {
                if (self.world.units[u0 as usize].side == s) != same {
                    continue;
                }
            }
            wide[ch.vars[0] as usize] = Value::Unit(u0);
            let own = self.all_hold(first_only, &mut wide);
            if n == 2 && own == Some(true) && second_ok.is_empty() && !*second_sure {
                for &u in &units {
                    wide[ch.vars[1] as usize] = Value::Unit(u);
                    second_ok.push(self.all_hold(second_only, &mut wide));
                }
            }
            match own {
                Some(false) => continue,
                Some(true) => {}
                None => {
                    // Judge this unit's options whole.
                    frame[ch.vars[0] as usize] = Value::Unit(u0);
                    self.scan_whole(ch, frame, taken, &units, u0, &mut out)?;
                    continue;
                }
            }
            frame[ch.vars[0] as usize] = Value::Unit(u0);
            let reach = match bound {
                Some(bd) if n == 2 => self.reach(bd, u0),
                _ => None,
            };
            if n == 1 {
                if !taken.iter().any(|t| t[..] == [u0])
                    && self.all_hold(both, &mut wide) == Some(true)
                {
                    out.push(vec![u0]);
                }
                continue;
            }
            if n == 2 {
                for (j, &u1) in units.iter().enumerate() {
                    // Whether the second unit passes its own parts: known,
                    // or (when they cannot fail) taken as passed until a
                    // pair that reaches them asks them below.
                    let mut passed = if *second_sure {
                        Some(true)
                    } else {
                        second_ok[j]
                    };
                    // (A second unit already found not to pass is passed over.)
                    let failed_own = *second_sure && second_asked[j] == 1;
                    if passed == Some(false)
                        || failed_own
                        || taken.iter().any(|t| t[..] == [u0, u1])
                    {
                        continue;
                    }
                    wide[ch.vars[1] as usize] = Value::Unit(u1);
                    // A first part that compares the two sides is settled
                    // here (it cannot fail): the rest is asked only of the
                    // pairs it lets through.
                    let mut rest = match (sides, passed) {
                        (Some(same), Some(true)) => {
                            let w = &self.world.units;
                            if (w[u0 as usize].side == w[u1 as usize].side) != *same {
                                continue;
                            }
                            &both[1..]
                        }
                        _ => &both[..],
                    };
                    // A next part that only bases within a distance can
                    // satisfy is settled for the pairs plainly further
                    // apart: false, as the part itself would find.
                    // (With the second unit's parts passed, the sides
                    // test, if any, is settled above: `rest` starts at it.)
                    if let (Some(r), Some(true)) = (&reach, passed) {
                        let (a, b) = if bound_swapped { (u1, u0) } else { (u0, u1) };
                        if r.turns_away(self.field(), a as usize, b as usize) {
                            continue;
                        }
                    }
                    // So is a next part asking whether the two touch: the
                    // table's own measure, the value the part would have.
                    if let (Some(swapped), Some(true)) = (contact, passed) {
                        let (a, b) = if *swapped { (u1, u0) } else { (u0, u1) };
                        let touch = self.field().of_two(
                            crate::compile::ir::Builtin::InContact,
                            a as usize,
                            b as usize,
                        );
                        if touch != Some(Value::Bool(true)) {
                            continue;
                        }
                        rest = &rest[1..];
                    }
                    if *second_sure {
                        if second_asked[j] == 0 {
                            second_asked[j] = match self.all_hold(second_only, &mut wide) {
                                Some(false) => 1,
                                Some(true) => 2,
                                None => 3,
                            };
                        }
                        match second_asked[j] {
                            1 => continue,
                            2 => {}
                            // (They cannot fail: should one, LEGAL is asked whole.)
                            _ => passed = None,
                        }
                    }
                    let ok = match (passed, self.all_hold(rest, &mut wide)) {
                        (Some(true), Some(b)) => b,
                        _ => {
                            frame[ch.vars[1] as usize] = Value::Unit(u1);
                            self.eval(&ch.legal, frame)?.as_bool()
                        }
                    };
                    if ok {
                        out.push(vec![u0, u1]);
                    }
                }
                continue;
            }
            self.scan_whole(ch, frame, taken, &units, u0, &mut out)?;
        }
        Ok(out)
    }

    /// What bound `bd` says of the pairs whose first unit is `u0`, or None
    /// when PRE or LIMIT fails to evaluate or LIMIT is not a whole number
    /// (its pairs are then asked the fact itself).
    pub(super) fn reach(&self, bd: &Bound, u0: u16) -> Option<Reach> {
        // A frame on the stack when it is small (asked for every mover).
        let mut small = [Value::None; 16];
        let mut big;
        let frame: &mut [Value] = if bd.slots <= small.len() {
            &mut small[..bd.slots]
        } else {
            big = vec![Value::None; bd.slots];
            &mut big
        };
        frame[bd.first] = Value::Unit(u0);
        match self.all_hold(&bd.pre, frame)? {
            false => Some(Reach::None),
            true => match self.eval_raw(&bd.limit, frame) {
                Ok(Value::Int(n)) => Some(Reach::within(n)),
                _ => None,
            },
        }
    }

    /// What the bound of decision `d`'s `control` condition, if it has one,
    /// says of mover `u` ([`Game::reach`]).
    pub(super) fn control_reach(&self, d: Id, u: u16) -> Option<Reach> {
        let bd = self.code.controls.get(d as usize)?.as_ref()?;
        self.reach(bd, u)
    }

    /// Does enemy `e` hold unit `u` in its zone of control (`cond`, the
    /// `control` condition, with `e` in `e_slot` and `u` in the frame)?
    /// Settled without asking when `reach` (the condition's bound for `u`)
    /// says so.
    #[inline]
    pub(super) fn controls(
        &mut self,
        cond: &Ex,
        e_slot: u16,
        reach: Option<&Reach>,
        e: u16,
        u: u16,
        frame: &mut [Value],
    ) -> Result<bool, Diag> {
        if let Some(r) = reach {
            if r.turns_away(self.field(), u as usize, e as usize) {
                return Ok(false);
            }
        }
        frame[e_slot as usize] = Value::Unit(e);
        Ok(self.eval(cond, frame)?.as_bool())
    }

    /// Do all the parts hold? (None: one failed to evaluate.)
    pub(super) fn all_hold(&self, parts: &[Ex], frame: &mut [Value]) -> Option<bool> {
        for p in parts {
            match self.eval_raw(p, frame) {
                Ok(v) if !v.as_bool() => return Some(false),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        Some(true)
    }

    /// The options of a `pick` whose first unit is `u0`, each judged by
    /// LEGAL whole.
    fn scan_whole(
        &mut self,
        ch: &ChoiceDef,
        frame: &mut [Value],
        taken: &[Vec<u16>],
        units: &[u16],
        u0: u16,
        out: &mut Vec<Vec<u16>>,
    ) -> Result<(), Diag> {
        let n = ch.vars.len();
        let mut idx = vec![0usize; n - 1];
        'rest: loop {
            let mut opt = Vec::with_capacity(n);
            opt.push(u0);
            opt.extend(idx.iter().map(|i| units[*i]));
            if !taken.contains(&opt) {
                for (k, s) in ch.vars.iter().enumerate() {
                    frame[*s as usize] = Value::Unit(opt[k]);
                }
                if self.eval(&ch.legal, frame)?.as_bool() {
                    out.push(opt);
                }
            }
            let mut k = n - 1;
            loop {
                if k == 0 {
                    break 'rest;
                }
                k -= 1;
                idx[k] += 1;
                if idx[k] < units.len() {
                    break;
                }
                idx[k] = 0;
            }
        }
        Ok(())
    }
}

/// A `pick`'s LEGAL split into its `and`-ed parts (see [`conjuncts`]) by
/// the option's names they read: only the first, only the second (of two),
/// or both (or more).
pub(super) struct Split {
    /// The length of the decision's frame the split was made for.
    pub(super) frame: usize,
    /// The frame's length with the slots the opened-up defines need.
    pub(super) width: usize,
    pub(super) first_only: Vec<Ex>,
    pub(super) second_only: Vec<Ex>,
    pub(super) both: Vec<Ex>,
    /// With two names, when the first part of `both` only compares the two
    /// units' sides (`enemies(s, t)`: other sides): whether it asks for the
    /// same side. The scan then makes that test itself.
    sides: Option<bool>,
    /// With two names, when the next part of `both` (after the sides test,
    /// if any) is whether the two are in contact (`in_contact(a, d)`, or a
    /// battle fact derived as that, `engaged(a, d)`): whether it names them
    /// the other way round. The scan then measures that itself.
    contact: Option<bool>,
    /// With two names and no contact test, when the next part of `both`
    /// (after the sides test, if any) can hold only for bases within a
    /// distance the first unit settles (TVBD's and Thistle's `in_range(s,
    /// t)`): see [`Bound`].
    bound: Option<Bound>,
    /// When a part of `first_only` compares the first unit's side with
    /// another name (`s.side == side`: the deciding side) and every part
    /// before it cannot fail: that name's slot and whether it asks for the
    /// same side. The scan then passes over the units of the other sides
    /// (or of that side) unasked: their parts come to false, as asked.
    first_side: Option<(u16, bool)>,
    /// With two names, whether every part of `second_only` cannot fail:
    /// they are then asked of a second unit only when a pair reaches them
    /// (after the sides test, the bound and the contact test), the same
    /// answers in fewer questions.
    second_sure: bool,
}

/// A define, or a battle fact without a hook, of two units (a pick's two,
/// or a `move`'s unit and the enemy `control` asks about) whose body is
/// `... and distance(x, y) <= LIMIT and ...` (or `<`, or `reachable(x, y,
/// LIMIT, WHEEL)` with a WHEEL surely a number: see `distance_within`),
/// where LIMIT reads only the parameter the first unit is passed as and
/// rolls no dice, and each part before the distance either reads only
/// that parameter too (PRE) or cannot fail ([`crate::run::eval::cannot_fail`]):
/// TVBD's and Thistle's `in_range(s, t)` (`s.range != none and distance(s,
/// t) <= s.range`), TVBD's `can_reach(c, t)` and `zone_of_control(e, u)`.
/// Per first unit the caller works out PRE (false: the body is false for
/// every second unit) and LIMIT, and turns away a pair whose bases'
/// centres put them plainly further apart than LIMIT
/// ([`Field::apart_by_centres`]), as the comparison would itself before
/// measuring (`Lower::distance_compared`): the body's value, found without
/// asking it, since no part before the distance can fail instead. (By the
/// centres alone, not by remembered distances: a replay, remembering none,
/// must ask the rules the same questions.)
#[derive(Clone, Debug)]
pub(super) struct Bound {
    /// The fact's own frame: its parameters, then its slots.
    slots: usize,
    /// The parameter the first unit is passed as (0 or 1).
    first: usize,
    /// The conjuncts before the distance that read only the first unit,
    /// in the body's frame.
    pre: Vec<Ex>,
    limit: Ex,
    /// Whether the distance names the second unit first.
    swapped: bool,
}

/// What a [`Bound`] says of one first unit's pairs.
pub(super) enum Reach {
    /// PRE does not hold: the fact is false for every second unit.
    None,
    /// Pairs plainly further apart than this are turned away.
    Within(f64),
}

impl Reach {
    /// What a LIMIT of `n` (a whole number of the measure) settles: the
    /// pairs further apart than it, with the margin `distance_compared`
    /// allows (distances are kept to 1/64 of the measure).
    fn within(n: i64) -> Reach {
        Reach::Within(crate::run::field::plainly_beyond(n))
    }

    /// Does this turn units `a` and `b` of the table away unasked? With a
    /// limit, when they are certainly further apart ([`Field::beyond`]:
    /// off the table, their distance is `unlimited` and `reachable`
    /// false).
    fn turns_away(&self, f: &Field, a: usize, b: usize) -> bool {
        match self {
            Reach::None => true,
            Reach::Within(k) => f.beyond(a, b, *k),
        }
    }
}

impl Split {
    pub(super) fn of(rs: &Ruleset, ch: &ChoiceDef, frame: usize) -> Split {
        let mut next = frame as u16;
        let mut parts = Vec::new();
        conjuncts(rs, &ch.legal, &mut next, &mut parts, 0);
        let later = &ch.vars[1..];
        let (first_only, rest): (Vec<Ex>, Vec<Ex>) = parts
            .into_iter()
            .partition(|p| !later.iter().any(|s| reads_local(p, *s)));
        // With two names, the parts that name only the second are checked
        // once per unit too.
        let (second_only, both): (Vec<Ex>, Vec<Ex>) = if ch.vars.len() == 2 {
            rest.into_iter().partition(|p| !reads_local(p, ch.vars[0]))
        } else {
            (Vec::new(), rest)
        };
        let sides = match (&ch.vars[..], both.first()) {
            ([a, b], Some(p)) => side_test(rs, p, *a, *b),
            _ => None,
        };
        let next_part = both.get(usize::from(sides.is_some()));
        let contact = match (&ch.vars[..], next_part) {
            ([a, b], Some(p)) => contact_test(rs, p, *a, *b),
            _ => None,
        };
        let bound = match (&ch.vars[..], next_part, contact) {
            ([a, b], Some(p), None) => bound_test(rs, p, *a, *b),
            _ => None,
        };
        let units = ch
            .vars
            .iter()
            .filter(|v| **v < 64)
            .fold(0u64, |m, v| m | 1 << v);
        let sure = |p: &Ex| crate::run::eval::cannot_fail(rs, p, units);
        let first_side = first_only.iter().enumerate().find_map(|(i, p)| {
            let found = own_side_test(p, ch.vars[0]).filter(|(k, _)| !ch.vars.contains(k));
            match found {
                Some(f) if first_only[..i].iter().all(sure) => Some(Some(f)),
                Some(_) => Some(None),
                None => None,
            }
        });
        let second_sure = ch.vars.len() == 2 && second_only.iter().all(sure);
        Split {
            first_side: first_side.flatten(),
            second_sure,
            frame,
            width: next as usize,
            first_only,
            second_only,
            both,
            sides,
            contact,
            bound,
        }
    }
}

/// Is `e` a comparison of the side of the unit in slot `a` with another
/// local (`a.side == side`, `side != a.side`)? That local's slot, and
/// whether it asks for the same side.
fn own_side_test(e: &Ex, a: u16) -> Option<(u16, bool)> {
    let Ex::Bin(op @ (Bin::Eq | Bin::Ne), x, y) = e else {
        return None;
    };
    let side_of_a = |x: &Ex| matches!(x, Ex::SideOf(u) if matches!(**u, Ex::Local(l) if l == a));
    let other = |x: &Ex| match x {
        Ex::Local(k) if *k != a => Some(*k),
        _ => None,
    };
    let k = if side_of_a(x) {
        other(y)?
    } else if side_of_a(y) {
        other(x)?
    } else {
        return None;
    };
    Some((k, *op == Bin::Eq))
}

/// Is `e` a comparison of the sides of the units in slots `a` and `b`
/// (`a.side == b.side`, `a.side != b.side`, or a define called with the
/// two whose body is one)? Some(true) for the same side, Some(false) for
/// other sides. It cannot fail to evaluate on two units.
fn side_test(rs: &Ruleset, e: &Ex, a: u16, b: u16) -> Option<bool> {
    let of = |x: &Ex| match x {
        Ex::SideOf(u) => match **u {
            Ex::Local(l) => Some(l),
            _ => None,
        },
        _ => None,
    };
    match e {
        Ex::Bin(op @ (Bin::Eq | Bin::Ne), x, y) => {
            let (p, q) = (of(x)?, of(y)?);
            ((p, q) == (a, b) || (p, q) == (b, a)).then_some(*op == Bin::Eq)
        }
        Ex::Define(d, args) => {
            let f = &rs.defines[*d as usize];
            let local = |x: &Ex| match x {
                Ex::Local(l) => Some(*l),
                _ => None,
            };
            let (p, q) = match &args[..] {
                [x, y] if f.slots == 2 => (local(x)?, local(y)?),
                _ => return None,
            };
            let inner = side_test(rs, &f.body, 0, 1)?;
            ((p, q) == (a, b) || (p, q) == (b, a)).then_some(inner)
        }
        _ => None,
    }
}

/// Is `e` whether the units in slots `a` and `b` are in contact
/// (`in_contact` of the two, or a battle fact of the two, without a hook,
/// derived as `in_contact` of its parameters in order)? Some(false) when
/// it names them `a` first, Some(true) when `b` first. On two units it is
/// the table's measure and cannot fail to evaluate.
fn contact_test(rs: &Ruleset, e: &Ex, a: u16, b: u16) -> Option<bool> {
    let contact = |e: &Ex| match nearness::leaf(e) {
        Some(Near {
            a: Ex::Local(p),
            b: Ex::Local(q),
            reach: nearness::Reach::Contact,
        }) => Some((*p, *q)),
        _ => None,
    };
    let (p, q) = match e {
        Ex::Fact(f, args) => {
            let fd = &rs.facts[*f as usize];
            let derived = fd.battle.as_ref()?;
            if fd.hook.is_some() || contact(&derived.body) != Some((0, 1)) {
                return None;
            }
            match &args[..] {
                [Ex::Local(p), Ex::Local(q)] => (*p, *q),
                _ => return None,
            }
        }
        e => contact(e)?,
    };
    if (p, q) == (a, b) {
        Some(false)
    } else if (p, q) == (b, a) {
        Some(true)
    } else {
        None
    }
}

/// The `and`-ed parts of a condition, with the calls of defines whose
/// bodies are themselves `and`s opened up (two levels deep), rewritten into
/// the caller's frame: the define's parameters become the call's arguments,
/// its other locals move to fresh slots from `next` on.
pub(super) fn conjuncts(rs: &Ruleset, e: &Ex, next: &mut u16, out: &mut Vec<Ex>, depth: u8) {
    match e {
        Ex::Bin(Bin::And, a, b) => {
            conjuncts(rs, a, next, out, depth);
            conjuncts(rs, b, next, out, depth);
        }
        Ex::Define(d, args)
            if depth < 2
                && args
                    .iter()
                    .all(|a| matches!(a, Ex::Local(_) | Ex::Const(_)))
                && matches!(rs.defines[*d as usize].body, Ex::Bin(Bin::And, ..)) =>
        {
            let f = &rs.defines[*d as usize];
            let np = args.len() as u16;
            let base = *next;
            *next += f.slots.saturating_sub(np);
            let mut remap = |x: &Ex| -> Option<Ex> {
                None.or(match x {
                    Ex::Local(i) if *i < np => Some(args[*i as usize].clone()),
                    Ex::Local(i) => Some(Ex::Local(base + i - np)),
                    _ => None,
                })
            };
            let body = remap_quants(&f.body, np, base, &mut remap);
            conjuncts(rs, &body, next, out, depth + 1);
        }
        e => out.push(e.clone()),
    }
}

/// Is `e` a define or battle fact of the units in slots `a` and `b` that
/// only bases within a distance settled by `a` can satisfy ([`Bound`])?
pub(super) fn bound_test(rs: &Ruleset, e: &Ex, a: u16, b: u16) -> Option<Bound> {
    let (derived, args) = match e {
        Ex::Fact(f, args) => {
            let fd = &rs.facts[*f as usize];
            if fd.hook.is_some() {
                return None;
            }
            (fd.battle.as_ref()?, args)
        }
        Ex::Define(d, args) => (&rs.defines[*d as usize], args),
        _ => return None,
    };
    let first = match &args[..] {
        [Ex::Local(p), Ex::Local(q)] if (*p, *q) == (a, b) => 0u16,
        [Ex::Local(p), Ex::Local(q)] if (*p, *q) == (b, a) => 1,
        _ => return None,
    };
    let second = 1 - first;
    let mut parts = Vec::new();
    derived.body.conjuncts(&mut parts);
    let mut pre = Vec::new();
    for part in parts {
        if let Some((p, q, limit)) = distance_within(rs, part) {
            if (p, q) == (first, second) || (p, q) == (second, first) {
                if reads_local(limit, second) || crate::run::eval::rolls_dice(rs, limit) {
                    return None;
                }
                return Some(Bound {
                    slots: (derived.slots as usize).max(2),
                    first: first as usize,
                    pre,
                    limit: limit.clone(),
                    swapped: p == second,
                });
            }
        }
        if crate::run::eval::rolls_dice(rs, part) {
            return None;
        }
        if reads_local(part, second) {
            // Asked of each pair before the distance: passed over for
            // the pairs further apart, so only if it cannot fail (the
            // parameters are the two units).
            if !crate::run::eval::cannot_fail(rs, part, 0b11) {
                return None;
            }
            continue;
        }
        pre.push(part.clone());
    }
    None
}

/// Is `e` a [`nearness::leaf`] of two locals that bounds their distance
/// by a limit this scan can work out first: `distance(p, q) <= limit` (or
/// `<`), or `reachable(p, q, limit, wheel)` whose wheel, worked out and
/// taken as a length before the reach is, is surely a number
/// ([`nearness::surely_a_number`])? Then (p, q, limit). (Contact is
/// settled by its own scan: [`contact_test`].)
fn distance_within<'e>(rs: &Ruleset, e: &'e Ex) -> Option<(u16, u16, &'e Ex)> {
    let near = nearness::leaf(e)?;
    let (Ex::Local(p), Ex::Local(q)) = (near.a, near.b) else {
        return None;
    };
    match near.reach {
        nearness::Reach::Within(limit) => Some((*p, *q, limit)),
        nearness::Reach::Charge { limit, wheel } if *p < 64 && *q < 64 => {
            let units = 1u64 << p | 1u64 << q;
            nearness::surely_a_number(rs, wheel, units).then_some((*p, *q, limit))
        }
        _ => None,
    }
}

/// The noted facts of two units, one of which must hold of units `a` and
/// `b` (in slots `a` and `b`) for `e` to be true, each with whether it
/// names them the other way round; and where none holds, `e` is false
/// without failing. A fact counts that is noted only (no table body, no
/// hook) with a default of false, called with the two; an `and` needs what
/// its first part needs, or what its second needs when the first cannot
/// fail; an `or` what both of its parts need; a define called with the
/// two what its body needs. TVBD's charge moves: `charges(c, t) or (c is
/// Commander and joins(c, t))`, declared (`declared_charge(c, t)`) or
/// joined (`declared_join(c, t)`).
pub(super) fn needs_noted(rs: &Ruleset, e: &Ex, a: u16, b: u16) -> Option<Vec<(Id, bool)>> {
    fn walk(rs: &Ruleset, e: &Ex, a: u16, b: u16, depth: u8) -> Option<Vec<(Id, bool)>> {
        match e {
            Ex::Bin(Bin::And, x, y) => walk(rs, x, a, b, depth).or_else(|| {
                let units = (1u64 << a) | (1u64 << b);
                crate::run::eval::cannot_fail(rs, x, units)
                    .then(|| walk(rs, y, a, b, depth))
                    .flatten()
            }),
            Ex::Bin(Bin::Or, x, y) => {
                let mut need = walk(rs, x, a, b, depth)?;
                need.extend(walk(rs, y, a, b, depth)?);
                Some(need)
            }
            Ex::Fact(f, args) => {
                let fd = &rs.facts[*f as usize];
                let noted = fd.battle.is_none()
                    && fd.hook.is_none()
                    && fd.default == Some(Value::Bool(false));
                match &args[..] {
                    [Ex::Local(p), Ex::Local(q)] if noted && (*p, *q) == (a, b) => {
                        Some(vec![(*f, false)])
                    }
                    [Ex::Local(p), Ex::Local(q)] if noted && (*p, *q) == (b, a) => {
                        Some(vec![(*f, true)])
                    }
                    _ => None,
                }
            }
            Ex::Define(d, args) if depth < 4 => {
                let at = |s: u16| {
                    args.iter()
                        .position(|x| matches!(x, Ex::Local(l) if *l == s))
                };
                let (p, q) = (at(a)?, at(b)?);
                if p >= 64
                    || q >= 64
                    || args
                        .iter()
                        .any(|x| !matches!(x, Ex::Local(_) | Ex::Const(_)))
                {
                    return None;
                }
                walk(
                    rs,
                    &rs.defines[*d as usize].body,
                    p as u16,
                    q as u16,
                    depth + 1,
                )
            }
            _ => None,
        }
    }
    if a >= 64 || b >= 64 {
        return None;
    }
    walk(rs, e, a, b, 0)
}

/// Rewrite a define's body into another frame: locals by `remap`, and the
/// slots quantifiers bind moved the same way (`slot - params + base`).
fn remap_quants(e: &Ex, np: u16, base: u16, remap: &mut dyn FnMut(&Ex) -> Option<Ex>) -> Ex {
    crate::run::odds::map(e, &mut |x| match x {
        Ex::Quant(q, sides, slot, body) => Some(Ex::Quant(
            *q,
            *sides,
            base + slot - np,
            Box::new(remap_quants(body, np, base, remap)),
        )),
        other => remap(other),
    })
}

/// Does the expression read local `slot`?
pub(super) fn reads_local(e: &Ex, slot: u16) -> bool {
    match e {
        Ex::Local(s) => *s == slot,
        e => e.any_child(&mut |c| reads_local(c, slot)),
    }
}

#[cfg(test)]
mod tests {
    use super::Split;
    use crate::battle::game::tests::{choice, ruleset};
    use crate::run::battlefield::{Base, Pt};

    /// The scan settles a pair's side test itself where LEGAL's first part
    /// naming both units is one: TVBD's shooting, charges, melees and
    /// heroics (a unit rewarded for an enemy's rout) open with
    /// `enemies(..)`; point blank (contact first) does not.
    #[test]
    fn a_pick_that_opens_with_a_side_test_is_split_so() {
        let rs = &ruleset("rules/tillys_very_bad_day.muster");
        let sides = |name: &str| split(rs, name).sides;
        assert_eq!(sides("shooting"), Some(false));
        assert_eq!(sides("declare_charges"), Some(false));
        assert_eq!(sides("melee_opponents"), Some(false));
        assert_eq!(sides("heroics"), Some(false));
        assert_eq!(sides("point_blank"), None);
    }

    /// TVBD's shooting and melee pass over the units of the other side
    /// unasked (the side test, or the parts before it, cannot fail: melee
    /// asks `may_fight(u)` first), and ask a second unit's own parts only
    /// of the pairs that reach them; a first part that may fail before the
    /// side test keeps every unit asked.
    #[test]
    fn a_pick_passes_over_the_other_side_unasked() {
        use crate::base::value::Value;
        use crate::compile::ir::{Bin, Ex};
        let rs = &ruleset("rules/tillys_very_bad_day.muster");
        let side = |name: &str| {
            let d = rs.decisions.iter().find(|d| d.name == name).expect(name);
            d.params
                .iter()
                .position(|(p, _)| p == "side")
                .expect("a side") as u16
        };
        for name in [
            "shooting",
            "declare_charges",
            "melee_opponents",
            "divide_hits",
        ] {
            let s = split(rs, name);
            assert_eq!(s.first_side, Some((side(name), true)), "{name}");
        }
        assert!(
            split(rs, "shooting").second_sure,
            "`not (t is Commander)`, `not t.routed`"
        );
        // commander_charges asks `in_a_fight(f)` (a quantifier) of the second.
        assert!(!split(rs, "commander_charges").second_sure);
        let mut failing = rs.clone();
        let d = failing.decisions.iter().position(|d| d.name == "shooting");
        let ch = failing.decisions[d.expect("shooting")]
            .choice
            .as_mut()
            .expect("a choice");
        let s = Ex::Local(ch.vars[0]);
        let resolve = rs
            .states
            .iter()
            .position(|x| x.name == "resolve")
            .expect("resolve");
        let sum = Ex::Bin(
            Bin::Add,
            Box::new(Ex::State(Box::new(s), resolve as u16)),
            Box::new(Ex::Const(Value::Int(0))),
        );
        let may_fail = Ex::Bin(Bin::Ge, Box::new(sum), Box::new(Ex::Const(Value::Int(0))));
        ch.legal = Ex::Bin(Bin::And, Box::new(may_fail), Box::new(ch.legal.clone()));
        assert_eq!(split(&failing, "shooting").first_side, None);
    }

    /// TVBD's charge moves (`charges(c, t) or (c is Commander and joins(c,
    /// t))`) can hold only of a pair declared (`declared_charge(c, t)`) or
    /// joined (`declared_join(c, t)`): only those pairs are asked. Thistle's
    /// (`declared(c, t) == part`, a number) needs none, nor does a fact
    /// asked after a part that may fail; one named the other way round is
    /// told so.
    #[test]
    fn a_charge_move_is_asked_only_of_the_noted_pairs() {
        use crate::base::value::Value;
        use crate::compile::ir::{Bin, Ex};
        let rs = &ruleset("rules/tillys_very_bad_day.muster");
        let ch = choice(rs, "charge_moves");
        let (c, t) = (ch.vars[0], ch.vars[1]);
        let need = super::needs_noted(rs, &ch.legal, c, t);
        let declared = fact_id(rs, "declared_charge");
        let joined = fact_id(rs, "declared_join");
        assert_eq!(need, Some(vec![(declared, false), (joined, false)]));
        let fact = |a, b| Ex::Fact(declared, vec![Ex::Local(a), Ex::Local(b)]);
        assert_eq!(
            super::needs_noted(rs, &fact(t, c), c, t),
            Some(vec![(declared, true)])
        );
        let resolve = rs
            .states
            .iter()
            .position(|x| x.name == "resolve")
            .expect("resolve");
        let state = Ex::State(Box::new(Ex::Local(c)), resolve as u16);
        let zero = || Box::new(Ex::Const(Value::Int(0)));
        let sure = Ex::Bin(Bin::Ge, Box::new(state.clone()), zero());
        let sum = Ex::Bin(Bin::Add, Box::new(state), zero());
        let may_fail = Ex::Bin(Bin::Ge, Box::new(sum), zero());
        let and = |a: &Ex, b: Ex| Ex::Bin(Bin::And, Box::new(a.clone()), Box::new(b));
        assert!(super::needs_noted(rs, &and(&sure, fact(c, t)), c, t).is_some());
        assert!(super::needs_noted(rs, &and(&may_fail, fact(c, t)), c, t).is_none());
        let or = Ex::Bin(Bin::Or, Box::new(fact(c, t)), Box::new(sure));
        assert!(super::needs_noted(rs, &or, c, t).is_none());
        let mut true_by_default = rs.clone();
        true_by_default.facts[declared as usize].default = Some(Value::Bool(true));
        assert!(super::needs_noted(&true_by_default, &fact(c, t), c, t).is_none());
        let thistle = &ruleset("rules/thistle_lily_and_rose.muster");
        let ch = choice(thistle, "charge_moves");
        assert!(super::needs_noted(thistle, &ch.legal, ch.vars[0], ch.vars[1]).is_none());
    }

    /// The id of the ruleset's fact `name`.
    fn fact_id(rs: &crate::compile::ir::Ruleset, name: &str) -> u16 {
        rs.facts.iter().position(|f| f.name == name).expect(name) as u16
    }

    /// The split a `pick` decision of `rs` is scanned by.
    fn split(rs: &crate::compile::ir::Ruleset, name: &str) -> Split {
        let ch = choice(rs, name);
        Split::of(rs, ch, ch.slots as usize)
    }

    /// Point blank (contact first) and melee (contact after the side test)
    /// have their contact test made by the scan; shooting and charges do
    /// not touch. A fact counts only when derived as `in_contact` of its
    /// parameters in order (either way round at the call), without a hook.
    #[test]
    fn a_pick_that_asks_for_contact_is_split_so() {
        use crate::compile::ir::{Builtin, Ex};
        let rs = &ruleset("rules/tillys_very_bad_day.muster");
        let contact = |name: &str| split(rs, name).contact;
        assert_eq!(contact("point_blank"), Some(false));
        assert_eq!(contact("melee_opponents"), Some(false));
        assert_eq!(contact("shooting"), None);
        assert_eq!(contact("declare_charges"), None);
        let engaged = fact_id(rs, "engaged");
        let fact = |a, b| Ex::Fact(engaged, vec![Ex::Local(a), Ex::Local(b)]);
        assert_eq!(super::contact_test(rs, &fact(3, 4), 3, 4), Some(false));
        assert_eq!(super::contact_test(rs, &fact(4, 3), 3, 4), Some(true));
        assert_eq!(super::contact_test(rs, &fact(3, 5), 3, 4), None);
        let touch = Ex::Builtin(Builtin::InContact, vec![Ex::Local(4), Ex::Local(3)]);
        assert_eq!(super::contact_test(rs, &touch, 3, 4), Some(true));
        // Derived the other way round, or with a hook: not the measure.
        let mut turned = rs.clone();
        let f = &mut turned.facts[engaged as usize];
        f.battle.as_mut().expect("derived").body =
            Ex::Builtin(Builtin::InContact, vec![Ex::Local(1), Ex::Local(0)]);
        assert_eq!(super::contact_test(&turned, &fact(3, 4), 3, 4), None);
        let mut hooked = rs.clone();
        hooked.facts[engaged as usize].hook = Some(0);
        assert_eq!(super::contact_test(&hooked, &fact(3, 4), 3, 4), None);
    }

    /// Shooting's `in_range(s, t)` (`s.range != none and distance(s, t) <=
    /// s.range`) is bounded by the shooter, in TVBD and Thistle alike, and
    /// so is TVBD's charge declaration, by `can_reach(u, t)`
    /// (`reachable(u, t, 3, if position(u, t) is to_front then 0 else
    /// 45)`: its wheel cannot fail); point blank and melee are not. A
    /// limit that reads the second unit, a wheel that may fail, a hook, or
    /// a fact asked the other way round with its distance so too, are told
    /// apart.
    #[test]
    fn a_pick_that_asks_for_range_is_bounded_by_it() {
        use crate::base::value::Value;
        use crate::compile::ir::{Bin, Builtin, Ex};
        let rs = &ruleset("rules/tillys_very_bad_day.muster");
        let bound = |rs: &crate::compile::ir::Ruleset, name: &str| split(rs, name).bound;
        let b = bound(rs, "shooting").expect("shooting is bounded");
        assert_eq!((b.first, b.pre.len(), b.swapped), (0, 1, false));
        let b = bound(rs, "declare_charges").expect("charges are bounded");
        assert_eq!((b.first, b.pre.len(), b.swapped), (0, 0, false));
        assert!(matches!(b.limit, Ex::Const(Value::Int(3))), "{:?}", b.limit);
        for name in ["point_blank", "melee_opponents"] {
            assert!(bound(rs, name).is_none(), "{name}");
        }
        // A wheel that may fail (arithmetic on a stat), or may not be a
        // number (a stat, which may be `none`), leaves the charge
        // unbounded, and a reach the target settles does too.
        let can_reach = fact_id(rs, "can_reach") as usize;
        let reach_body = |limit: Ex, wheel: Ex| {
            let mut r = rs.clone();
            let body = &mut r.facts[can_reach].battle.as_mut().expect("derived").body;
            let Ex::Builtin(Builtin::Reachable, args) = body else {
                panic!("can_reach is reachable(...): {body:?}")
            };
            (args[2], args[3]) = (limit, wheel);
            r
        };
        let three = || Ex::Const(Value::Int(3));
        let moves = rs.stats.iter().position(|s| s == "move").expect("move") as u16;
        let stat = |l: u16| Ex::Stat(Box::new(Ex::Local(l)), moves);
        let sum = Ex::Bin(
            Bin::Add,
            Box::new(stat(0)),
            Box::new(Ex::Const(Value::Int(0))),
        );
        assert!(bound(&reach_body(three(), sum), "declare_charges").is_none());
        assert!(bound(&reach_body(three(), stat(0)), "declare_charges").is_none());
        assert!(bound(&reach_body(stat(1), three()), "declare_charges").is_none());
        let b = bound(&reach_body(stat(0), three()), "declare_charges");
        assert!(b.is_some(), "a reach the charger settles");
        let thistle = &ruleset("rules/thistle_lily_and_rose.muster");
        let b = bound(thistle, "shooting").expect("Thistle's shooting is bounded");
        assert_eq!((b.first, b.pre.len(), b.swapped), (0, 1, false));

        let in_range = fact_id(rs, "in_range");
        let fact = |a, b| Ex::Fact(in_range, vec![Ex::Local(a), Ex::Local(b)]);
        // Asked of (t, s): the first unit is the fact's second parameter,
        // whose range is not what it reads.
        assert!(super::bound_test(rs, &fact(4, 3), 3, 4).is_none());
        assert!(super::bound_test(rs, &fact(3, 5), 3, 4).is_none());
        let mut flipped = rs.clone();
        let body = &mut flipped.facts[in_range as usize]
            .battle
            .as_mut()
            .expect("derived")
            .body;
        // With its parameters swapped (`b.range != none and distance(b, a)
        // <= b.range` for in_range(a, b)), asked as in_range(t, s) it is
        // bounded by the pick's first unit, passed second; asked as
        // in_range(s, t), not.
        *body = crate::run::odds::map(body, &mut |x| match x {
            Ex::Local(0) => Some(Ex::Local(1)),
            Ex::Local(1) => Some(Ex::Local(0)),
            _ => None,
        });
        let b = super::bound_test(&flipped, &fact(4, 3), 3, 4).expect("bounded by s");
        assert_eq!((b.first, b.swapped), (1, false));
        assert!(super::bound_test(&flipped, &fact(3, 4), 3, 4).is_none());
        let mut hooked = rs.clone();
        hooked.facts[in_range as usize].hook = Some(0);
        assert!(super::bound_test(&hooked, &fact(3, 4), 3, 4).is_none());
    }

    /// TVBD's `control e: zone_of_control(e, u)` (`enemies(e, u) and not
    /// (e is Commander) and not e.routed and distance(e, u) <= 3 and ...`)
    /// is bounded by the mover, passed second, at 3: the parts before the
    /// distance read the enemy but cannot fail. Asked with the enemy first,
    /// its two parts of the enemy alone are the PRE. A part before the
    /// distance that may fail (arithmetic) leaves it unbounded.
    #[test]
    fn a_zone_of_control_is_bounded_by_its_distance() {
        use crate::base::value::Value;
        use crate::compile::ir::{Bin, Ex};
        use crate::run::eval::cannot_fail;
        let rs = &ruleset("rules/tillys_very_bad_day.muster");
        let ch = choice(rs, "move");
        let (e, cond) = ch.control.as_ref().expect("a control clause");
        let u = ch.vars[0];
        let b = super::bound_test(rs, cond, u, *e).expect("bounded by the mover");
        assert_eq!((b.first, b.pre.len(), b.swapped), (1, 0, true));
        assert!(matches!(b.limit, Ex::Const(Value::Int(3))), "{:?}", b.limit);
        let b = super::bound_test(rs, cond, *e, u).expect("bounded by the enemy");
        assert_eq!((b.first, b.pre.len(), b.swapped), (0, 2, false));

        let zoc = rs.defines.iter().position(|d| d.name == "zone_of_control");
        let zoc = zoc.expect("zone_of_control");
        let resolve = rs.states.iter().position(|s| s.name == "resolve");
        let resolve = resolve.expect("resolve") as u16;
        let local = |s: u16| Box::new(Ex::Local(s));
        let e_resolve = || Box::new(Ex::State(local(0), resolve));
        let sum = Ex::Bin(Bin::Add, e_resolve(), Box::new(Ex::Const(Value::Int(0))));
        let may_fail = Ex::Bin(Bin::Ge, Box::new(sum), e_resolve());
        let mut failing = rs.clone();
        let body = &mut failing.defines[zoc].body;
        *body = Ex::Bin(Bin::And, Box::new(may_fail.clone()), Box::new(body.clone()));
        assert!(super::bound_test(&failing, cond, u, *e).is_none());

        // What cannot fail: a state, a side, a type of a unit known to be
        // one; a define of those (`enemies`); a fact with a default.
        let units = 0b11;
        let compare = Ex::Bin(Bin::Ge, e_resolve(), e_resolve());
        assert!(cannot_fail(rs, &compare, units));
        assert!(
            !cannot_fail(rs, &compare, 0b10),
            "local 0 is not known a unit"
        );
        assert!(!cannot_fail(rs, &may_fail, units));
        let enemies = rs.defines.iter().position(|d| d.name == "enemies");
        let enemies = enemies.expect("core's enemies") as u16;
        let call = Ex::Define(enemies, vec![Ex::Local(0), Ex::Local(1)]);
        assert!(cannot_fail(rs, &call, units));
        let swapped = Ex::Define(enemies, vec![Ex::Local(1), Ex::Local(2)]);
        assert!(
            !cannot_fail(rs, &swapped, units),
            "local 2 is not known a unit"
        );
        let charging = Ex::Fact(fact_id(rs, "charging"), vec![Ex::Local(0)]);
        assert!(cannot_fail(rs, &charging, units));
        let mut no_default = rs.clone();
        no_default.facts[fact_id(rs, "charging") as usize].default = None;
        assert!(!cannot_fail(&no_default, &charging, units));
        // A measure of two units cannot fail, nor a fact the table derives
        // as one (`engaged(a, b)`: `in_contact(a, b)`); another measure
        // may (the nearest enemy, of a unit off the table), as may one of
        // a local not known to be a unit.
        use crate::compile::ir::Builtin;
        let measure =
            |b, args: &[u16]| Ex::Builtin(b, args.iter().map(|l| Ex::Local(*l)).collect());
        assert!(cannot_fail(rs, &measure(Builtin::Zone, &[0, 1]), units));
        assert!(!cannot_fail(rs, &measure(Builtin::Zone, &[0, 2]), units));
        assert!(!cannot_fail(
            rs,
            &measure(Builtin::NearestEnemy, &[0]),
            units
        ));
        let engaged = Ex::Fact(fact_id(rs, "engaged"), vec![Ex::Local(0), Ex::Local(1)]);
        assert!(cannot_fail(rs, &engaged, units));
    }

    /// A bound turns away only pairs plainly further apart than its limit.
    /// Two square bases corner to corner along the line of their centres
    /// (where the centres' bound is as tight as it gets) exactly 3 apart,
    /// or a shade more that the rules still see as 3, are kept; 1/16
    /// further apart, they are turned away. A pair one of which is
    /// off the table is turned away unless the limit is `unlimited`.
    /// Where PRE fails, every pair is.
    #[test]
    fn a_bound_keeps_bases_at_its_limit() {
        use super::Reach;
        use crate::run::field::Field;
        let at = |x: f64| Base::new(Pt::new(x, 10.0), 45.0, 1.0, 1.0);
        let r = at(0.0).radius();
        let field = |gap: f64| {
            let bases = vec![at(10.0), at(10.0 + 2.0 * r + gap)];
            let f = Field::new(
                45.0,
                30.0,
                Default::default(),
                bases,
                vec![0.0; 2],
                vec![0, 1],
                [0, 1, 2],
            );
            let d = f.bases[0].distance(&f.bases[1]);
            assert!((d - gap).abs() < 1e-9, "corner to corner: {d}");
            f
        };
        let exact = field(3.0);
        assert!(!Reach::within(3).turns_away(&exact, 0, 1));
        assert!(!Reach::within(3).turns_away(&exact, 1, 0));
        assert!(Reach::None.turns_away(&exact, 0, 1));
        // A shade further, the rules still see 3 (distances are kept to
        // 1/64): kept too.
        let shade = field(3.0 + 1.0 / 130.0);
        let d = shade.bases[0].distance(&shade.bases[1]);
        assert_eq!(
            crate::run::field::to_value(d),
            crate::base::value::Value::Int(3)
        );
        assert!(!Reach::within(3).turns_away(&shade, 0, 1));
        let further = field(3.0 + 1.0 / 16.0);
        assert!(Reach::within(3).turns_away(&further, 0, 1));
        // Off the table, the distance is `unlimited`: more than any other
        // limit (turned away), not more than `unlimited` (asked).
        let mut off = field(1.0);
        off.on_table[1] = false;
        use crate::base::value::{Value, UNLIMITED};
        let d = off.of_two(crate::compile::ir::Builtin::Distance, 0, 1);
        assert_eq!(d, Some(Value::Int(UNLIMITED)));
        assert!(Reach::within(3).turns_away(&off, 0, 1));
        assert!(Reach::within(3).turns_away(&off, 1, 0));
        assert!(Reach::within(UNLIMITED - 1).turns_away(&off, 0, 1));
        assert!(!Reach::within(UNLIMITED).turns_away(&off, 0, 1));
        assert!(!Reach::within(UNLIMITED).turns_away(&further, 0, 1));
    }
}
