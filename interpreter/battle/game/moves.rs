//! `move`: the moves the rules offer one unit, and the policy's choice
//! among them.
//!
//! The engine makes a handful of candidate moves per manoeuvre the rules
//! allow (straight, wheel, about face, oblique, turn, sideways, backwards,
//! pivot, free) and keeps those that pass the rules' checks: the table's
//! edge, the enemy buffer zone, an enemy's zone of control, the units in
//! the way (passed only where `through` allows) and the allowance over the
//! path actually taken. A group's moves are in [`super::groups`].

use super::{place, Event, Game, How, Prefer};
use crate::base::value::Value;
use crate::compile::ir::{ChoiceDef, Id, Search};
use crate::front::diagnostic::Diag;
use crate::run::battlefield::{self, Base, Pt};
use crate::run::field::{to_len, Field};

/// A candidate move before the rules' checks: how the log tells it, where
/// it ends, the way there.
pub(super) type Candidate = (How, Base, Way);

/// The move that wheels `w` degrees (ending at `wheeled`), then goes `d`
/// straight on: ahead (`sign` 1, a wheel) or back (`sign` -1, a back wheel).
fn wheel_then(wheeled: Base, w: f64, d: f64, sign: f64) -> Candidate {
    let end = if d > 1e-9 {
        wheeled.straight_end(sign * d)
    } else {
        wheeled
    };
    let how = if sign > 0.0 {
        How::WheelsAndAdvances(w, d)
    } else {
        How::WheelsAndMovesBack(w, d)
    };
    (how, end, Way::from(Step::Wheel(w, sign * d)))
}

/// A legal move: how the log tells it, the change of direction that ends it
/// (if any), where it ends, and its manoeuvre.
pub(super) type Legal = (How, Option<Finish>, Base, u32);

/// The buffers a unit's move search fills afresh each unit-turn, kept by
/// the game so that the candidate loop allocates nothing once they have
/// grown (taken out while a search runs; a search inside another, were
/// there one, would start with empty ones).
#[derive(Default)]
pub(super) struct Scratch {
    allowed: Vec<(u32, f64, Finishes)>,
    near: Vec<usize>,
    enemies: Vec<Watched>,
    path: Vec<Base>,
    purposes: Vec<Purpose>,
    cands: Vec<Candidate>,
    firsts: Vec<Candidate>,
    /// Per manoeuvre searched, the point it heads for ([`Game::target_for`]).
    targets: Vec<(u32, Option<Pt>)>,
    /// The legal moves of the unit being moved ([`Game::move_units`]).
    pub legal: Vec<Legal>,
}

/// An enemy near a unit whose moves are searched, as the enemy buffer
/// zone looks at it ([`Game::watch_buffer`]): where it stands, how far
/// from it an end is plainly clear of the zone, and how near an end may
/// come, once asked.
#[derive(Clone, Copy, Debug)]
pub(super) struct Watched {
    o: usize,
    base: Base,
    /// The buffer and the enemy's radius, with room to spare for rounding:
    /// an end whose centre is further than this and its own radius from
    /// the enemy's centre is further than the buffer from its base.
    clear: f64,
    /// How near an end may come: the buffer, or, for a unit already
    /// nearer, what it is where it stands (less 1e-9); worked out the
    /// first time an end comes close enough to ask.
    least: Option<f64>,
}

/// One move's end and the enemies [`Game::watch_buffer`] keeps: by how
/// much the end breaks the buffer zone, as
/// [`Game::buffer_shortfall_near`] says for a start where the unit
/// stands.
pub(super) struct BufferCheck<'w> {
    pub u: usize,
    pub buffer: f64,
    pub watched: &'w mut [Watched],
}

impl<'r> Game<'r> {
    pub(super) fn on_table(&self, b: &Base) -> bool {
        self.field().holds(b)
    }

    /// Is the path (start excluded) clear for unit `u`: on the table, not
    /// through enemies, through friends only where `through` allows, ending
    /// on nobody.
    pub(super) fn path_clear(
        &self,
        ch: &ChoiceDef,
        u: u16,
        path: &[Base],
        frame: &mut [Value],
    ) -> Result<bool, Diag> {
        self.path_clear_near(ch, u, path, frame, &self.code.everyone)
    }

    /// Does a base of unit `u` at `end` overlap one of the units `near`
    /// that are on the table? Then no path there is clear
    /// ([`Game::path_clear_near`] turns down a path that ends on anyone).
    pub(super) fn ends_on_someone(&self, u: u16, end: &Base, near: &[usize]) -> bool {
        let f = self.field();
        near.iter()
            .any(|&o| o != u as usize && f.on_table[o] && end.overlaps(&f.bases[o]))
    }

    /// [`Game::path_clear`], looking only at the units `near` (in order):
    /// every other unit is too far from the path to matter.
    pub(super) fn path_clear_near(
        &self,
        ch: &ChoiceDef,
        u: u16,
        path: &[Base],
        frame: &mut [Value],
        near: &[usize],
    ) -> Result<bool, Diag> {
        let f = self.field();
        let end = path.last().expect("a path has an end");
        // Most paths are well inside the table: no base to look at.
        let bounds = battlefield::Bounds::of(path);
        if !bounds.within(f.width, f.depth) && !path.iter().all(|b| self.on_table(b)) {
            return Ok(false);
        }
        // Most bases are far from the whole path: no overlap to look for.
        for &o in near {
            let ob = &f.bases[o];
            if o == u as usize || !f.on_table[o] || bounds.clear_of(ob, 0.0) {
                continue;
            }
            if end.overlaps(ob) {
                return Ok(false);
            }
            if path.iter().skip(1).any(|b| b.overlaps(ob)) {
                let friend = self.world.units[o].side == self.world.units[u as usize].side;
                let allowed = match (&ch.through, friend) {
                    (Some((slot, e)), true) => {
                        frame[*slot as usize] = Value::Unit(o as u16);
                        self.eval(e, frame)?.as_bool()
                    }
                    _ => false,
                };
                if !allowed {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// Per mover, the units outside `movers` on the table whose bases its
    /// path (its start left out) goes through: the friends a `retire`
    /// passed (`retired_through`). `paths[i]` is `movers[i]`'s.
    pub(super) fn gone_through(&self, movers: &[u16], paths: &[Vec<Base>]) -> Vec<Vec<u16>> {
        let f = self.field();
        paths
            .iter()
            .map(|path| {
                let bounds = battlefield::Bounds::of(path);
                (0..f.bases.len())
                    .filter(|&o| {
                        let ob = &f.bases[o];
                        f.on_table[o]
                            && !movers.contains(&(o as u16))
                            && !bounds.clear_of(ob, 0.0)
                            && path.iter().skip(1).any(|b| b.overlaps(ob))
                    })
                    .map(|o| o as u16)
                    .collect()
            })
            .collect()
    }

    /// `meeting e: COND` of a `retire` of unit `u` from `start`, `d` straight
    /// back: the nearest enemy on the table in its way (as `room_behind`
    /// measures), when the retire would reach it and COND holds for it
    /// (with `e` bound to it and `u` where it stands); with how far back
    /// `u`'s base touches it. None when no enemy is in the way within `d`,
    /// or COND holds for none of the nearest: the retire then stops short
    /// of it, as without the clause.
    pub(super) fn enemy_behind(
        &self,
        u: u16,
        start: &Base,
        d: f64,
        e_slot: u16,
        cond: &crate::compile::ir::Ex,
        frame: &mut [Value],
    ) -> Result<Option<(u16, f64)>, Diag> {
        let f = self.field();
        let side = self.world.units[u as usize].side;
        let behind: Vec<(u16, f64)> = (0..f.bases.len())
            .filter(|&o| o != u as usize && f.on_table[o] && self.world.units[o].side != side)
            .filter_map(|o| {
                // The room left before contact; the gap itself, 0 within contact.
                let r = start.room_behind_to(&f.bases[o])?;
                Some((
                    o as u16,
                    if r > 0.0 {
                        r + battlefield::CONTACT
                    } else {
                        0.0
                    },
                ))
            })
            .collect();
        let Some(nearest) = behind.iter().map(|x| x.1).reduce(f64::min) else {
            return Ok(None);
        };
        let furthest = retreats(d, f.longest_move()).next().unwrap_or(0.0);
        if nearest > furthest + 1e-9 {
            return Ok(None);
        }
        for &(o, gap) in behind.iter().filter(|x| x.1 <= nearest + 1e-9) {
            frame[e_slot as usize] = Value::Unit(o);
            if self.eval(cond, frame)?.as_bool() {
                return Ok(Some((o, gap)));
            }
        }
        frame[e_slot as usize] = Value::None;
        Ok(None)
    }

    /// The enemies of unit `u` among `near` that are on the table, in
    /// `near`'s order, each with whether it is certainly further than
    /// `buffer` from where `u` stands ([`Field::apart`]): what
    /// [`Game::buffer_shortfall_near`] looks at. While `u` stands where it
    /// is, a caller may keep them for all its candidate ends: a distance
    /// remembered later only confirms what the bound said.
    pub(super) fn buffer_enemies<'a>(
        &'a self,
        u: u16,
        buffer: f64,
        near: &'a [usize],
    ) -> impl Iterator<Item = (usize, bool)> + 'a {
        let f = self.field();
        let side = self.world.units[u as usize].side;
        near.iter()
            .filter(move |&&o| f.on_table[o] && self.world.units[o].side != side)
            .map(move |&o| (o, f.apart(u as usize, o, buffer - 1e-9)))
    }

    /// The enemies of unit `u` among `near` that are on the table, in
    /// `near`'s order, written into `out` for [`Game::buffer_short`]: the
    /// list a unit's move search checks each end against, made once while
    /// it stands where it is.
    pub(super) fn watch_buffer(&self, u: u16, buffer: f64, near: &[usize], out: &mut Vec<Watched>) {
        let f = self.field();
        let side = self.world.units[u as usize].side;
        out.clear();
        out.extend(
            near.iter()
                .filter(|&&o| f.on_table[o] && self.world.units[o].side != side)
                .map(|&o| Watched {
                    o,
                    base: f.bases[o],
                    clear: buffer + f.bases[o].radius() + 1e-6,
                    least: None,
                }),
        );
    }

    /// [`Game::buffer_shortfall_near`] of unit `u` moving from where it
    /// stands to `end`, against the enemies of [`Game::watch_buffer`]: the
    /// same answer, found with fewer exact distances. An end whose centre
    /// is plainly further from an enemy's than the buffer and both radii
    /// is further than the buffer from it, so no nearer than the unit may
    /// come (no nearer than the buffer, or than it stands); an end the
    /// separating axes put further than that ([`Base::surely_apart`]) is
    /// too; only the others are measured.
    ///
    /// Without `amount`, whether it breaks the zone is all that is asked:
    /// an end plainly nearer than allowed ([`Base::surely_within`]) breaks
    /// it without being measured, and the answer is then Some(0).
    pub(super) fn buffer_short(
        &self,
        end: &Base,
        check: &mut BufferCheck,
        amount: bool,
    ) -> Option<f64> {
        let f = self.field();
        let r = end.radius();
        for w in check.watched.iter_mut() {
            let apart = w.clear + r;
            let d = end.centre - w.base.centre;
            if apart <= 0.0 || d.dot(d) > apart * apart {
                continue;
            }
            let least = *w.least.get_or_insert_with(|| {
                let before = f.dist(check.u, w.o);
                if before >= check.buffer - 1e-9 {
                    check.buffer - 1e-9
                } else {
                    before - 1e-9
                }
            });
            if end.surely_apart(&w.base, least) {
                continue;
            }
            if !amount && end.surely_within(&w.base, least) {
                return Some(0.0);
            }
            let after = end.distance(&w.base);
            if after < least {
                return Some(least - after);
            }
        }
        None
    }

    /// By how much unit `u`, moving from `start` to `end`, breaks the enemy
    /// buffer zone (the end no closer than `buffer` to any enemy, or, for a
    /// unit already closer, no closer than it was), looking only at the
    /// `enemies` ([`Game::buffer_enemies`]: every other enemy is too far
    /// from the start and the end to matter): None when it does not; else
    /// how much nearer than allowed it comes to the first of them it comes
    /// too near. A base moved `x` comes at most `x` nearer to anything, so
    /// an end moved less than that from this one breaks the zone too.
    pub(super) fn buffer_shortfall_near(
        &self,
        u: u16,
        start: &Base,
        end: &Base,
        buffer: f64,
        enemies: impl IntoIterator<Item = (usize, bool)>,
    ) -> Option<f64> {
        let f = self.field();
        for (o, apart) in enemies {
            let ob = &f.bases[o];
            // No point of a base is further than its radius from its
            // centre: far apart at the end and at the start, no exact
            // distance is needed.
            let far_at_end = end.centre.dist(ob.centre) - end.radius() - ob.radius() >= buffer;
            if far_at_end && apart {
                continue;
            }
            // The start is where the unit stands: its distances are known.
            let before = f.dist(u as usize, o);
            if before >= buffer - 1e-9 && far_at_end {
                continue;
            }
            let before = if start == &f.bases[u as usize] {
                before
            } else {
                start.distance(ob)
            };
            // No nearer than the buffer, or, already nearer, than before.
            let least = if before >= buffer - 1e-9 {
                buffer - 1e-9
            } else {
                before - 1e-9
            };
            // Plainly further than that by the separating axes: not short,
            // and no exact distance is needed.
            if end.surely_apart(ob, least) {
                continue;
            }
            let after = end.distance(ob);
            if after < least {
                return Some(least - after);
            }
        }
        None
    }

    /// Candidate moves of one unit with one manoeuvre, before the rules'
    /// checks: (description, where it ends, the way there).
    pub(super) fn candidates(
        &self,
        m: u32,
        b: &Base,
        allowance: f64,
        target: Option<Pt>,
    ) -> Vec<Candidate> {
        let mut out = Vec::new();
        self.candidates_into(m, b, allowance, target, &mut out);
        out
    }

    /// [`Game::candidates`], added to `out` (a buffer used again).
    fn candidates_into(
        &self,
        m: u32,
        b: &Base,
        allowance: f64,
        target: Option<Pt>,
        out: &mut Vec<Candidate>,
    ) {
        let mm = self.m;
        let two = |to: Base| (to, Way::from(Step::Two(to)));
        // A handful of moves per manoeuvre: the whole allowance and half of
        // it (the policy picks among them; a finer grid costs time).
        let fractions = [1.0, 0.5];
        if m == mm.straight {
            for fr in fractions {
                let d = allowance * fr;
                out.push((
                    How::Advances(d),
                    b.straight_end(d),
                    Way::from(Step::Straight(d)),
                ));
            }
        } else if m == mm.wheel {
            self.wheels_then(b, allowance, 1.0, out);
        } else if m == mm.back_wheel {
            self.wheels_then(b, allowance, -1.0, out);
        } else if m == mm.about_face {
            let turned = b.pivoted(180.0);
            let (end, way) = two(turned);
            out.push((How::AboutFaces, end, way));
            for fr in [1.0, 0.5] {
                let d = allowance * fr;
                out.push((
                    How::AboutFacesAndAdvances(d),
                    turned.straight_end(d),
                    Way::from(Step::AboutFace(d)),
                ));
            }
        } else if m == mm.oblique {
            for a in [-45.0, 45.0] {
                let d = allowance;
                out.push((
                    How::Obliquely(a, d),
                    b.oblique_end(a, d),
                    Way::from(Step::Oblique(a, d)),
                ));
            }
        } else if m == mm.turn {
            for a in [-90.0, 90.0] {
                let (end, way) = two(b.pivoted(a));
                out.push((How::Turns(a), end, way));
            }
        } else if m == mm.sideways {
            for s in [-allowance, allowance] {
                let (end, way) = two(b.shifted(s));
                out.push((How::Shifts(s), end, way));
            }
        } else if m == mm.backwards {
            for fr in [1.0, 0.5] {
                let d = allowance * fr;
                out.push((
                    How::MovesBack(d),
                    b.straight_end(-d),
                    Way::from(Step::Straight(-d)),
                ));
            }
        } else if m == mm.pivot {
            if let Some(t) = target {
                let a = battlefield::norm_angle(battlefield::bearing(b.centre, t) - b.facing);
                if a.abs() > 1.0 {
                    let (end, way) = two(b.pivoted(a));
                    out.push((How::Pivots(a), end, way));
                }
            }
        } else if m == mm.free {
            out.extend(target.and_then(|t| ride_toward(b, t, allowance)));
        }
    }

    /// A wheel of 22.5 or 45 degrees either way (about a front corner, its
    /// chord the cost), then straight on all or half of what is left:
    /// ahead (`sign` 1, manoeuvre `wheel`) or back (`sign` -1, `back_wheel`,
    /// a retire that wheels).
    fn wheels_then(&self, b: &Base, allowance: f64, sign: f64, out: &mut Vec<Candidate>) {
        for w in [-45.0, -22.5, 22.5, 45.0] {
            let cost = b.wheel_cost(w);
            if cost > allowance + 1e-9 {
                continue;
            }
            let wheeled = b.wheel_end(w);
            for fr in [1.0, 0.5] {
                out.push(wheel_then(wheeled, w, (allowance - cost) * fr, sign));
            }
        }
    }

    /// Candidate moves with manoeuvre `m` that end with a change of
    /// direction (`finishes`): each of [`Game::candidates`]' moves, then an
    /// about face or a turn in place; and the same moves made within what
    /// the allowance leaves after a finishing wheel's cost, then the wheel.
    /// Added to `out`; `firsts` is a buffer for the moves before the
    /// finish (made once per allowance the finishes leave).
    #[allow(clippy::too_many_arguments)]
    fn finished_into(
        &self,
        m: u32,
        b: &Base,
        allowance: f64,
        target: Option<Pt>,
        finishes: Finishes,
        out: &mut Vec<Candidate>,
        firsts: &mut Vec<Candidate>,
    ) {
        firsts.clear();
        // Per allowance left, where its moves are in `firsts` (at most one
        // per finish: four wheels, an about face, two turns).
        let mut spans = [(0.0f64, 0usize, 0usize); 7];
        let mut n = 0;
        for finish in Finish::all(finishes) {
            let cost = finish.cost(b);
            let spare = allowance - cost;
            if cost > 0.0 && spare <= 1e-9 {
                continue;
            }
            let (lo, hi) = match spans[..n].iter().find(|(s, ..)| *s == spare) {
                Some(&(_, lo, hi)) => (lo, hi),
                None => {
                    let lo = firsts.len();
                    self.candidates_into(m, b, spare, target, firsts);
                    spans[n] = (spare, lo, firsts.len());
                    n += 1;
                    (lo, firsts.len())
                }
            };
            for &(how, end, way) in &firsts[lo..hi] {
                out.push((how, finish.end(&end), way.then(finish)));
            }
        }
    }

    /// Where a unit heads with a pivot (to face the nearest enemy) or a free
    /// move (just behind the rear edge of the wider friendly base nearest
    /// the enemy). Known limit: this target is the engine's choice, not the
    /// policy's; a policy only accepts or refuses the move. A group's move
    /// passes the other members (`skip`): none of them is the friend.
    pub(super) fn target_for(&self, u: u16, skip: &[u16], m: u32) -> Option<Pt> {
        // Only a pivot and a free move head for a point.
        if m != self.m.pivot && m != self.m.free {
            return None;
        }
        let f = self.field();
        let me = &f.bases[u as usize];
        let side = self.world.units[u as usize].side;
        if m == self.m.pivot {
            return match f.nearest(&self.world, u as usize, true) {
                Value::Unit(e) => Some(f.bases[e as usize].centre),
                _ => None,
            };
        }
        let enemies: Vec<&Base> = f
            .bases
            .iter()
            .enumerate()
            .filter(|(o, _)| f.on_table[*o] && self.world.units[*o].side != side)
            .map(|(_, b)| b)
            .collect();
        let nearest = |p: Pt| {
            enemies
                .iter()
                .map(|e| e.distance_to_point(p))
                .fold(f64::INFINITY, f64::min)
        };
        // Free move: behind the friend (of the same army, not a commander-sized base) nearest the enemy.
        let mut best: Option<(f64, Pt)> = None;
        for (o, b) in f.bases.iter().enumerate() {
            if o == u as usize
                || skip.contains(&(o as u16))
                || !f.on_table[o]
                || self.world.units[o].side != side
                || b.width <= me.width
            {
                continue;
            }
            let d = nearest(b.centre);
            let spot = b.advanced(-(b.depth + me.depth) / 2.0 - 0.01).centre;
            if best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, spot));
            }
        }
        best.map(|(_, p)| p)
    }

    /// How far the mover may go with manoeuvre `m` (bound in `frame`), and
    /// which changes of direction may finish the move; or None when the
    /// rules refuse it: the `manoeuvre` clause does not hold, or the
    /// allowance is 0 for anything but a turn in place.
    pub(super) fn manoeuvre_allowance(
        &mut self,
        ch: &ChoiceDef,
        d: Id,
        m: u32,
        frame: &mut [Value],
    ) -> Result<Option<(f64, Finishes)>, Diag> {
        let Some((m_slot, m_ok)) = &ch.manoeuvre else {
            return Ok(None);
        };
        frame[*m_slot as usize] = Value::Sym(m);
        let fixed = self.code.fixed_manoeuvres.get(d as usize) == Some(&true);
        let key = match frame[ch.vars[0] as usize] {
            Value::Unit(u) if fixed => Some((d, u, m)),
            _ => None,
        };
        let known = match key.and_then(|k| self.manoeuvres_known.get(&k)) {
            Some(known) => *known,
            None => {
                let known = if self.eval(m_ok, frame)?.as_bool() {
                    Some(self.finishes(ch, frame)?)
                } else {
                    None
                };
                if let Some(k) = key {
                    self.manoeuvres_known.insert(k, known);
                }
                known
            }
        };
        let Some(finishes) = known else {
            return Ok(None);
        };
        let Some(allowance) = ch
            .allowance
            .as_ref()
            .map(|e| self.eval(e, frame))
            .transpose()?
            .and_then(to_len)
        else {
            return Ok(None);
        };
        let turns_only = m == self.m.pivot || m == self.m.turn || m == self.m.about_face;
        if allowance <= 1e-9 && !turns_only {
            return Ok(None);
        }
        Ok(Some((allowance, finishes)))
    }

    /// Which changes of direction the `finish n:` condition lets end a move
    /// (the manoeuvre already bound in `frame`): none without the clause.
    fn finishes(&mut self, ch: &ChoiceDef, frame: &mut [Value]) -> Result<Finishes, Diag> {
        let Some((n_slot, ok)) = &ch.finish else {
            return Ok(Finishes::default());
        };
        let mut may = |n: u32, game: &mut Self| -> Result<bool, Diag> {
            frame[*n_slot as usize] = Value::Sym(n);
            Ok(game.eval(ok, frame)?.as_bool())
        };
        Ok(Finishes {
            wheel: may(self.m.wheel, self)?,
            about_face: may(self.m.about_face, self)?,
            turn: may(self.m.turn, self)?,
        })
    }

    /// Every move the rules allow unit `u` (with `frame` holding the
    /// decision's arguments). Each has been checked against the table's
    /// edges, other units (friends only where `through` allows), the enemy
    /// buffer zone, an enemy zone of control holding the unit (stand,
    /// close, or move directly away) and the allowance over its actual path.
    /// Found by `search`, without a move ending at `shun` (see
    /// [`Game::shunned`]). Written into `out` (emptied first).
    #[inline(never)]
    pub(super) fn legal_moves(
        &mut self,
        ch: &ChoiceDef,
        d: Id,
        u: u16,
        (search, shun): (Search, Option<Pt>),
        frame: &mut [Value],
        out: &mut Vec<Legal>,
    ) -> Result<(), Diag> {
        out.clear();
        if ch.manoeuvre.is_none() {
            return Ok(());
        }
        let Scratch {
            mut allowed,
            mut near,
            mut enemies,
            mut path,
            mut purposes,
            mut cands,
            mut firsts,
            mut targets,
            legal,
        } = std::mem::take(&mut self.scratch);
        targets.clear();
        let all = self.m.all();
        let start = self.field().bases[u as usize];
        // Which enemy holds the unit in its zone of control (the closest).
        let mut zoc: Option<(u16, f64)> = None;
        if let Some((e_slot, cond)) = &ch.control {
            let reach = self.control_reach(d, u);
            for e in 0..self.world.units.len() as u16 {
                if !self.field().on_table[e as usize]
                    || self.world.units[e as usize].side == self.world.units[u as usize].side
                {
                    continue;
                }
                if self.controls(cond, *e_slot, reach.as_ref(), e, u, frame)? {
                    let gap = self.field().dist(u as usize, e as usize);
                    if zoc.is_none_or(|(_, least)| gap < least) {
                        zoc = Some((e, gap));
                    }
                }
            }
        }
        let buffer = match &ch.buffer {
            Some(e) => to_len(self.eval(e, frame)?).unwrap_or(0.0),
            None => 0.0,
        };
        allowed.clear();
        for m in all {
            if let Some((allowance, finishes)) = self.manoeuvre_allowance(ch, d, m, frame)? {
                allowed.push((m, allowance, finishes));
            }
        }
        // No centre of any path below moves further than the allowance and
        // a wheel about a corner (twice the base's radius): the units further
        // than that, the bases' sizes and the buffer zone, with room to
        // spare, can neither block a path nor be too close at its end.
        // (A finishing change of direction stays within the same bound: a
        // wheel's cost comes out of the allowance, a turn is in place.)
        let reach = allowed.iter().fold(0.0f64, |r, (_, a, _)| r.max(*a)) + 2.0 * start.radius();
        self.field()
            .near(u as usize, &start, reach, buffer.max(0.0), &mut near);
        self.watch_buffer(u, buffer, &near, &mut enemies);
        // Lent a path, the table's answers change only for
        // `touches_terrain` of the unit: not for a path clear of all
        // terrain when the unit standing is.
        let terrain = self.field().terrain_within(&start, reach);
        match search {
            Search::Thorough => purposes.clear(),
            Search::Purposeful | Search::StandOff => self.purposes(u, &start, &mut purposes),
        }
        if !allowed.is_empty() {
            self.move_stats.unit_turns += 1;
        }
        // The moves that end with a second change of direction come after
        // every other (a second pass): a policy that scores two moves the
        // same takes the first, so a unit makes the second change only when
        // it gains something by it.
        let finishing = allowed
            .iter()
            .filter(|(_, _, fins)| fins.any())
            .map(|&(m, allowance, fins)| (m, allowance, Some(fins)));
        let passes = allowed
            .iter()
            .map(|&(m, a, _)| (m, a, None))
            .chain(finishing);
        for (m, allowance, finishes) in passes {
            let Some((m_slot, _)) = &ch.manoeuvre else {
                unreachable!("a manoeuvre was allowed")
            };
            frame[*m_slot as usize] = Value::Sym(m);
            // The table does not change while the moves are found: a
            // manoeuvre's target, found for its first pass, serves its
            // finishing pass too.
            let target = match targets.iter().find(|(tm, _)| *tm == m) {
                Some(&(_, t)) => t,
                None => {
                    let t = self.target_for(u, &[], m);
                    targets.push((m, t));
                    t
                }
            };
            cands.clear();
            match (search, finishes) {
                (Search::Thorough, None) => {
                    self.candidates_into(m, &start, allowance, target, &mut cands)
                }
                (Search::Thorough, Some(fins)) => {
                    self.finished_into(m, &start, allowance, target, fins, &mut cands, &mut firsts)
                }
                (Search::Purposeful | Search::StandOff, None) => {
                    let stand_off = search == Search::StandOff;
                    self.purposeful(
                        m, &start, allowance, target, &purposes, stand_off, &mut cands,
                    )
                }
                (Search::Purposeful | Search::StandOff, Some(fins)) => {
                    self.purposeful_finished(m, &start, allowance, fins, &purposes, &mut cands)
                }
            }
            if m == self.m.straight && finishes.is_none() {
                // As far ahead as the unit may go (up to the enemy buffer
                // zone, a friend, the table's edge), in quarters of the measure.
                cands.extend(advance_as_far(
                    &start,
                    allowance,
                    self.field().longest_move(),
                    |d| {
                        let mut check = BufferCheck {
                            u: u as usize,
                            buffer,
                            watched: &mut enemies,
                        };
                        self.buffer_short(&start.advanced(d), &mut check, true)
                    },
                    |end| self.on_table(end),
                    |path| self.path_clear_near(ch, u, path, frame, &near),
                )?);
            }
            self.move_stats.generated += cands.len() as u64;
            for &(how, end, way) in &cands {
                // A purposeful player's move back to a spot the game has
                // moved the unit off ([`Game::shunned`]).
                if shun.is_some_and(|at| same_spot(at, end.centre)) {
                    self.move_stats.shunned += 1;
                    continue;
                }
                // The checks that need only the end come first: most
                // candidates fail one of them, and then no path is laid.
                // (Each check is a question about the move alone, so which
                // fails first changes nothing but the time it takes.)
                let mut check = BufferCheck {
                    u: u as usize,
                    buffer,
                    watched: &mut enemies,
                };
                if self.buffer_short(&end, &mut check, false).is_some() {
                    continue;
                }
                if let Some((e, before)) = zoc {
                    if !zoc_allows(&start, &end, &self.field().bases[e as usize], before) {
                        continue;
                    }
                }
                if self.ends_on_someone(u, &end, &near) {
                    continue;
                }
                // A path that ends off the table is not clear: turned away
                // before it is laid (a rule's huge allowance would lay one
                // of millions of bases).
                if !self.on_table(&end) {
                    continue;
                }
                let finish = way.finish();
                self.move_stats.laid += 1;
                let first = way.lay(&start, &mut path);
                debug_assert!(path.last() == Some(&end), "{how:?}");
                debug_assert!(path
                    .iter()
                    .all(|b| b.centre.dist(start.centre) <= reach + 1e-9));
                if !self.path_clear_near(ch, u, &path, frame, &near)? {
                    continue;
                }
                // A finishing change of direction passes through nobody,
                // friend or not (a unit passes through a friend only moving
                // straight: `through` speaks for the move before it).
                if path[first..]
                    .iter()
                    .any(|b| self.ends_on_someone(u, b, &near))
                {
                    continue;
                }
                // The allowance again, now that the path is known (the
                // path lent to the field for `touches_terrain`, then taken
                // back), unless the path reads as the unit standing: then
                // it is the allowance worked out above.
                let allowed_now = if Field::path_clear_of_terrain(&path, &terrain) {
                    allowance
                } else {
                    self.field_path_mut().path = Some((u, std::mem::take(&mut path)));
                    let allowed_now = ch
                        .allowance
                        .as_ref()
                        .map(|e| self.eval(e, frame))
                        .transpose();
                    path = match self.field_path_mut().path.take() {
                        Some((_, p)) => p,
                        None => unreachable!("the path was just lent"),
                    };
                    allowed_now?.and_then(to_len).unwrap_or(0.0)
                };
                let cost = path_cost(&path[..first], self.m.wheels(m))
                    + finish.map_or(0.0, |f| f.cost(&start));
                if cost > allowed_now + 1e-6 && cost > 1e-9 {
                    continue;
                }
                out.push((how, finish, end, m));
            }
        }
        self.move_stats.legal += out.len() as u64;
        self.scratch = Scratch {
            allowed,
            near,
            enemies,
            path,
            purposes,
            cands,
            firsts,
            targets,
            legal,
        };
        Ok(())
    }

    /// `move`: every legal unit of the side may move; the policy scores
    /// where each legal move would leave it against staying put.
    ///
    /// When no unit moves and some searched purposefully, those units
    /// look again, one by one, with the thorough fan ([`Search::Thorough`]):
    /// a side whose purposes all lie where standing is worth more (an enemy
    /// beyond the buffer zone, a friend's place it holds) still makes a
    /// move the fan finds, where without it both sides could stand, or a
    /// unit step out and back, turn after turn until the turn limit. Only
    /// units that found nothing better than standing look again (a unit
    /// that failed its check is not asked twice).
    #[inline(never)]
    pub(super) fn move_units(
        &mut self,
        ch: &ChoiceDef,
        prefer: Prefer,
        mut frame: Vec<Value>,
    ) -> Result<(), Diag> {
        let u_slot = ch.vars[0] as usize;
        let Some((m_slot, _)) = &ch.manoeuvre else {
            return Ok(());
        };
        // One army's policy answers, and it has no line for the decision:
        // every move scores 0, as staying does, so none is made. Finding
        // the moves would only cost time (Thistle's `regroup`, which the
        // shipped policies leave alone, is asked every turn).
        if self.policy_is_silent(prefer) {
            return Ok(());
        }
        // Units that have had their turn: moved or stayed, alone or with
        // a group (kept only with `together`).
        let mut had_turn = vec![false; self.world.units.len()];
        // Units whose purposeful search found no move worth more than
        // standing, and whether any unit moved.
        let mut stood = Vec::new();
        let mut moved = false;
        for u in self.units_on_table() {
            if !self.field().on_table[u as usize] || had_turn[u as usize] {
                continue;
            }
            frame[u_slot] = Value::Unit(u);
            if !self.eval(&ch.legal, &mut frame)?.as_bool() {
                continue;
            }
            if ch.together.is_some() {
                let others = self.together_with(ch, u, None, &had_turn, &mut frame)?;
                had_turn[u as usize] = true;
                for o in &others {
                    had_turn[*o as usize] = true;
                }
                if !others.is_empty() {
                    let before = self.field().bases[u as usize];
                    for &g in others.iter().chain([&u]) {
                        self.remember_move(g, None);
                    }
                    self.move_group(ch, prefer, u, &others, &mut frame)?;
                    moved |= self.field().bases[u as usize] != before;
                    continue;
                }
            }
            let search = self.search_for(Some(prefer), u);
            match self.move_alone(ch, prefer, u, search, *m_slot, &mut frame)? {
                Some(true) => moved = true,
                Some(false) => {}
                None if search.has_purposes() => stood.push(u),
                None => {}
            }
        }
        if moved {
            return Ok(());
        }
        for u in stood {
            if !self.field().on_table[u as usize] {
                continue;
            }
            frame[u_slot] = Value::Unit(u);
            if !self.eval(&ch.legal, &mut frame)?.as_bool() {
                continue;
            }
            // The same unit-turn, looked at again.
            let turns = self.move_stats.unit_turns;
            let again = self.move_alone(ch, prefer, u, Search::Thorough, *m_slot, &mut frame);
            self.move_stats.unit_turns = turns;
            self.move_stats.second_looks += 1;
            again?;
        }
        Ok(())
    }

    /// Unit `u`, alone, makes its best move found by `search` if it scores
    /// above standing and passes the decision's check. Some(true) when it
    /// moved, Some(false) when it failed the check, None when no move
    /// scored above standing (a unit with no legal move stays without
    /// being scored: about two units in five of those asked, in TVBD; a
    /// policy's score reads only the decision's arguments and the unit,
    /// which finding the moves leaves as they were).
    fn move_alone(
        &mut self,
        ch: &ChoiceDef,
        prefer: Prefer,
        u: u16,
        search: Search,
        m_slot: u16,
        frame: &mut [Value],
    ) -> Result<Option<bool>, Diag> {
        let shun = self.shunned(Some(prefer), u);
        let mut moves = std::mem::take(&mut self.scratch.legal);
        let found = self.legal_moves(ch, prefer.d, u, (search, shun), frame, &mut moves);
        let weighed = found.and_then(|()| self.weigh_moves(prefer, u, m_slot, &moves, frame));
        self.scratch.legal = moves;
        let Some((stay, (s, how, finish, end, m))) = weighed? else {
            return Ok(None);
        };
        if s.num_cmp(stay) != Some(std::cmp::Ordering::Greater) {
            return Ok(None);
        }
        frame[m_slot as usize] = Value::Sym(m);
        if !self.passes_check(ch, u, frame)? {
            return Ok(Some(false));
        }
        let start = self.field().bases[u as usize];
        self.set_base(u as usize, end);
        self.remember_move(u, Some(end));
        // The name is copied only for a log kept (`note`).
        self.note(|g| Event::Move {
            unit: g.world.units[u as usize].name.clone(),
            how: told(how, finish),
            from: place(&start),
            to: place(&end),
            with: Vec::new(),
        });
        self.run_then(ch, frame)?;
        Ok(Some(true))
    }

    /// The spot a purposeful player does not move unit `u` back to, facing
    /// whichever way (within 0.05 of its centre): where the unit's own last
    /// single move put it, when the game has since moved it off (a fall back, a rout, a rally back the rules or another
    /// decision made). Going back would leave it where the rules did not
    /// let it stay, to be moved off again: a unit advancing into shooting
    /// range each turn and falling back from it each turn, while its side
    /// counts it as moving, never stands to let the side's second look
    /// find another move (issue 33). The spot is shunned until the unit
    /// makes a move of its own elsewhere. None for a thorough player (the
    /// engine's reference search is kept as it was).
    pub(super) fn shunned(&self, prefer: Option<Prefer>, u: u16) -> Option<Pt> {
        if !self.search_for(prefer, u).has_purposes() {
            return None;
        }
        let at = self.moved_to.get(u as usize).copied().flatten()?.centre;
        (!same_spot(at, self.field().bases[u as usize].centre)).then_some(at)
    }

    /// Where unit `u`'s own last single move put it (None: a group's move).
    fn remember_move(&mut self, u: u16, to: Option<Base>) {
        let n = self.world.units.len();
        if self.moved_to.len() < n {
            self.moved_to.resize(n, None);
        }
        self.moved_to[u as usize] = to;
    }

    /// Unit `u`'s score standing, and its best of the legal `moves` (the
    /// first of those scored highest), each scored where it would leave
    /// the unit (put back after); None when there is no move.
    #[allow(clippy::type_complexity)]
    fn weigh_moves(
        &mut self,
        prefer: Prefer,
        u: u16,
        m_slot: u16,
        moves: &[Legal],
        frame: &mut [Value],
    ) -> Result<Option<(Value, (Value, How, Option<Finish>, Base, u32))>, Diag> {
        if moves.is_empty() {
            return Ok(None);
        }
        self.move_stats.scored += moves.len() as u64;
        let stand = self.field().stand(u as usize);
        let stay = self.score(prefer, frame)?;
        let mut best: Option<(Value, How, Option<Finish>, Base, u32)> = None;
        for &(how, finish, end, m) in moves {
            frame[m_slot as usize] = Value::Sym(m);
            self.set_base(u as usize, end);
            let s = self.score(prefer, frame);
            self.field_mut().put_back(&stand);
            let s = s?;
            if best
                .as_ref()
                .is_none_or(|(bs, ..)| s.num_cmp(*bs) == Some(std::cmp::Ordering::Greater))
            {
                best = Some((s, how, finish, end, m));
            }
        }
        Ok(best.map(|b| (stay, b)))
    }

    /// The moves the rules offer unit `u` under decision `name` (called
    /// with `args`), as (description, where it would end): what a policy
    /// chooses among, found by the search the unit's player makes (a
    /// purposeful player's: without the spot it shuns, and, when none of
    /// them is worth more than standing, with the thorough fan's moves its
    /// second look weighs if its side moves nobody). For tests and tools;
    /// a game does this itself.
    pub fn offered_moves(
        &mut self,
        name: &str,
        args: &[Value],
        u: u16,
    ) -> Result<Vec<(String, Base)>, Diag> {
        let rs = self.rs;
        let Some(d) = rs.decisions.iter().position(|d| d.name == name) else {
            return Err(Diag::new("muster::battle", format!("no decision `{name}`")));
        };
        let Some(ch) = &rs.decisions[d].choice else {
            return Ok(Vec::new());
        };
        let mut frame = vec![Value::None; (ch.slots as usize).max(args.len() + 4)];
        frame[..args.len()].copy_from_slice(args);
        frame[ch.vars[0] as usize] = Value::Unit(u);
        if !self.eval(&ch.legal, &mut frame)?.as_bool() {
            return Ok(Vec::new());
        }
        if ch.together.is_some() {
            let done = vec![false; self.world.units.len()];
            let others = self.together_with(ch, u, None, &done, &mut frame)?;
            if !others.is_empty() {
                let mut group = vec![u];
                group.extend(others);
                return Ok(self
                    .group_moves(ch, d as Id, &group, &mut frame)?
                    .into_iter()
                    .map(|mv| {
                        let end = *mv.paths[0].last().expect("a path has an end");
                        (mv.how.to_string(), end)
                    })
                    .collect());
            }
        }
        let prefer = self.prefer_for(d as Id, ch, args);
        let search = self.search_for(Some(prefer), u);
        let shun = self.shunned(Some(prefer), u);
        let mut moves = Vec::new();
        self.legal_moves(ch, d as Id, u, (search, shun), &mut frame, &mut moves)?;
        // A purposeful unit whose moves are worth no more than standing
        // looks again through the thorough fan when its side moves nobody
        // (`move_units`): those moves are offered too.
        if search.has_purposes() && !self.policy_is_silent(prefer) {
            let Some((m_slot, _)) = &ch.manoeuvre else {
                return Ok(Vec::new());
            };
            let better = self
                .weigh_moves(prefer, u, *m_slot, &moves, &mut frame)?
                .is_some_and(|(stay, (s, ..))| {
                    s.num_cmp(stay) == Some(std::cmp::Ordering::Greater)
                });
            if !better {
                let mut fan = Vec::new();
                self.legal_moves(
                    ch,
                    d as Id,
                    u,
                    (Search::Thorough, shun),
                    &mut frame,
                    &mut fan,
                )?;
                for mv in fan {
                    if !moves.iter().any(|o| o.3 == mv.3 && alike(&o.2, &mv.2)) {
                        moves.push(mv);
                    }
                }
            }
        }
        Ok(moves
            .into_iter()
            .map(|(how, finish, end, _)| (told(how, finish), end))
            .collect())
    }
}

/// What a purposeful search moves toward ([`Game::purposes`]): a point, and
/// how far short of it a move means to stop (half the two bases' depths
/// for an enemy's centre: its front; nothing for a place in a line).
#[derive(Clone, Copy, Debug)]
pub(super) struct Purpose {
    pub at: Pt,
    pub short: f64,
}

impl Purpose {
    /// How far a base at `b` would go toward it.
    fn want(&self, b: &Base) -> f64 {
        (b.centre.dist(self.at) - self.short).max(0.0)
    }

    /// Its bearing off the facing of a base at `b`, in (-180, 180].
    fn off(&self, b: &Base) -> f64 {
        battlefield::norm_angle(battlefield::bearing(b.centre, self.at) - b.facing)
    }
}

/// Whether two ends of moves are the same for the search: centres within
/// 0.05 and facings within 1 degree.
pub(super) fn alike(a: &Base, b: &Base) -> bool {
    same_spot(a.centre, b.centre) && battlefield::norm_angle(a.facing - b.facing).abs() < 1.0
}

/// Whether two centres are the same spot for the search (within 0.05):
/// `alike` ends, and a shunned spot (`shunned`).
fn same_spot(a: Pt, b: Pt) -> bool {
    a.dist(b) < 0.05
}

/// A free move of a unit standing at `b` straight toward `t`, facing
/// kept, as far as the allowance goes; None when it stands there.
fn ride_toward(b: &Base, t: Pt, allowance: f64) -> Option<Candidate> {
    let (dx, dy) = (t.x - b.centre.x, t.y - b.centre.y);
    let len = (dx * dx + dy * dy).sqrt();
    if len <= 1e-9 {
        return None;
    }
    let go = len.min(allowance);
    let end = Base::new(
        Pt {
            x: b.centre.x + dx / len * go,
            y: b.centre.y + dy / len * go,
        },
        b.facing,
        b.width,
        b.depth,
    );
    Some((How::Rides(go), end, Way::from(Step::Two(end))))
}

/// The wheel (22.5 or 45 degrees either way, within `allowance`) that
/// leaves purpose `p`, off to the front of a base at `b` (10 to 67.5
/// degrees), most nearly ahead: the wheel, where it leaves the base, and
/// the allowance it leaves; None when no wheel brings it nearer ahead.
fn facing_wheel(p: &Purpose, b: &Base, allowance: f64) -> Option<(f64, Base, f64)> {
    let a = p.off(b).abs();
    if !(10.0..=67.5).contains(&a) {
        return None;
    }
    let (left, w) = [-45.0, -22.5, 22.5, 45.0]
        .into_iter()
        .filter(|w| b.wheel_cost(*w) <= allowance + 1e-9)
        .map(|w| (p.off(&b.wheel_end(w)).abs(), w))
        .min_by(|x, y| x.0.total_cmp(&y.0))?;
    (left < a).then(|| (w, b.wheel_end(w), allowance - b.wheel_cost(w)))
}

/// The most enemies a purposeful search heads for: the nearest ones.
const PURPOSE_ENEMIES: usize = 2;

/// A distance toward a purpose, down to the quarter of the measure and no
/// more than `allowance`; None when less than a quarter.
fn toward(want: f64, allowance: f64) -> Option<f64> {
    let d = (want.min(allowance) * 4.0).floor() / 4.0;
    (d >= 0.25 - 1e-9).then_some(d)
}

impl<'r> Game<'r> {
    /// What a purposeful search of unit `u` standing at `start` heads for:
    /// the nearest enemies on the table ([`PURPOSE_ENEMIES`]; those the
    /// policy may shoot or charge), and the place beside the nearest
    /// friend of its command on the table, on the side nearer the unit
    /// (its place in the command's line). Standing still is always
    /// weighed; falling back is the `backwards` manoeuvre's whole
    /// allowance.
    /// Written into `out` (emptied first).
    pub(super) fn purposes(&self, u: u16, start: &Base, out: &mut Vec<Purpose>) {
        out.clear();
        let f = self.field();
        let side = self.world.units[u as usize].side;
        // The nearest enemies by the bound, then the units' order (the same
        // on any machine), kept in order as they are found.
        let mut enemies = [(f64::INFINITY, usize::MAX); PURPOSE_ENEMIES];
        let mut n = 0;
        let mut friend: Option<(f64, usize)> = None;
        for o in 0..f.bases.len() {
            if o == u as usize || !f.on_table[o] {
                continue;
            }
            let ob = &f.bases[o];
            let gap = start.centre.dist(ob.centre) - ob.radius();
            if self.world.units[o].side != side {
                let key = |e: &(f64, usize)| e.0.total_cmp(&gap).then(e.1.cmp(&o));
                let at = enemies[..n].partition_point(|e| key(e).is_lt());
                if at < PURPOSE_ENEMIES {
                    n = (n + 1).min(PURPOSE_ENEMIES);
                    enemies[at..n].rotate_right(1);
                    enemies[at] = (gap, o);
                }
            } else if f.command[o] == f.command[u as usize] && friend.is_none_or(|(g, _)| gap < g) {
                friend = Some((gap, o));
            }
        }
        out.extend(enemies[..n].iter().map(|&(_, o)| Purpose {
            at: f.bases[o].centre,
            short: (start.depth + f.bases[o].depth) / 2.0,
        }));
        if let Some((_, o)) = friend {
            let fb = &f.bases[o];
            let beside = (fb.width + start.width) / 2.0 + 0.01;
            let spots = [fb.shifted(beside).centre, fb.shifted(-beside).centre];
            let at = if start.centre.dist(spots[0]) <= start.centre.dist(spots[1]) {
                spots[0]
            } else {
                spots[1]
            };
            out.push(Purpose { at, short: 0.0 });
        }
    }

    /// Candidate moves of one unit with manoeuvre `m` toward its
    /// `purposes`, before the rules' checks: for each, the one move of the
    /// manoeuvre that serves it, where the manoeuvre can (an advance when
    /// it lies ahead, a wheel when it lies off to the front, a turn or an
    /// about face when it lies to a side or behind, a pivot to face an
    /// enemy, a free move toward it); and the whole allowance straight
    /// ahead and straight back (closing in general, falling back). Moves
    /// alike are made once.
    ///
    /// With `stand_off` ([`Search::StandOff`]), stops short of each purpose
    /// too: all and half of what a wheel leaves, a back wheel facing it,
    /// an oblique toward it for the whole allowance and away from it, the
    /// about face in place and with half the allowance, half a fall back,
    /// and shifts along the line either way, all and half the allowance
    /// (issue 33: a policy that values a gap to keep rather than an enemy
    /// to reach, Matchlocks', played weaker with contact stops alone).
    /// Added to `out` (alike only to those added here).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn purposeful(
        &self,
        m: u32,
        b: &Base,
        allowance: f64,
        target: Option<Pt>,
        purposes: &[Purpose],
        stand_off: bool,
        out: &mut Vec<Candidate>,
    ) {
        let mm = self.m;
        let from = out.len();
        let mut push = |c: Candidate| {
            let (_, end, _) = &c;
            if !out[from..].iter().any(|(_, e, _)| alike(e, end)) {
                out.push(c);
            }
        };
        let two = |to: Base| (to, Way::from(Step::Two(to)));
        if m == mm.straight {
            // Closing in general, at the whole and half the allowance (a
            // line advances together); then level with each purpose ahead
            // (an enemy's front, a friend's place in the line).
            for fr in [1.0, 0.5] {
                let d = allowance * fr;
                push((
                    How::Advances(d),
                    b.straight_end(d),
                    Way::from(Step::Straight(d)),
                ));
            }
            for p in purposes {
                let ahead = (p.at - b.centre).dot(b.forward()) - p.short;
                if let Some(d) = toward(ahead, allowance) {
                    push((
                        How::Advances(d),
                        b.straight_end(d),
                        Way::from(Step::Straight(d)),
                    ));
                }
            }
        } else if m == mm.backwards {
            // Falling back, all the allowance (standing off: half too).
            let fractions: &[f64] = if stand_off { &[1.0, 0.5] } else { &[1.0] };
            for &fr in fractions {
                let d = allowance * fr;
                push((
                    How::MovesBack(d),
                    b.straight_end(-d),
                    Way::from(Step::Straight(-d)),
                ));
            }
        } else if m == mm.wheel || (stand_off && m == mm.back_wheel) {
            // The wheel that leaves each purpose off to the front most
            // nearly ahead, then on toward it as far as its front (standing
            // off: all and half of what the wheel leaves, ahead, and back
            // facing it).
            let sign = if m == mm.wheel { 1.0 } else { -1.0 };
            for p in purposes {
                let Some((w, wheeled, spare)) = facing_wheel(p, b, allowance) else {
                    continue;
                };
                let closing = (sign > 0.0).then(|| toward(p.want(&wheeled), spare).unwrap_or(0.0));
                let stops = [closing, Some(spare), Some(spare * 0.5)];
                let stops = if stand_off { &stops[..] } else { &stops[..1] };
                for d in stops.iter().copied().flatten() {
                    push(wheel_then(wheeled, w, d, sign));
                }
            }
        } else if m == mm.about_face {
            // Facing each purpose behind where the unit stands, then
            // toward it as far as its front (in place when it is no
            // further); standing off: in place, as far as its front and
            // half the allowance.
            for p in purposes.iter().filter(|p| p.off(b).abs() > 112.5) {
                let turned = b.pivoted(180.0);
                let closing = toward(p.want(&turned), allowance);
                if stand_off || closing.is_none() {
                    let (end, way) = two(turned);
                    push((How::AboutFaces, end, way));
                }
                let half = stand_off
                    .then(|| toward(allowance * 0.5, allowance))
                    .flatten();
                for d in [closing, half].into_iter().flatten() {
                    push((
                        How::AboutFacesAndAdvances(d),
                        turned.straight_end(d),
                        Way::from(Step::AboutFace(d)),
                    ));
                }
            }
        } else if m == mm.oblique {
            // Toward each purpose off to the front as far as its front
            // (standing off: the whole allowance toward it, and away from
            // it, closing less and drawing it ahead).
            for p in purposes {
                let a = p.off(b);
                if !(20.0..=70.0).contains(&a.abs()) {
                    continue;
                }
                let side = 45.0f64.copysign(a);
                let stops = [
                    (side, toward(p.want(b), allowance)),
                    (side, Some(allowance)),
                    (-side, Some(allowance)),
                ];
                let stops = if stand_off { &stops[..] } else { &stops[..1] };
                for &(side, d) in stops {
                    let Some(d) = d else { continue };
                    push((
                        How::Obliquely(side, d),
                        b.oblique_end(side, d),
                        Way::from(Step::Oblique(side, d)),
                    ));
                }
            }
        } else if m == mm.turn {
            for p in purposes {
                let a = p.off(b);
                if (45.0..=135.0).contains(&a.abs()) {
                    let t = 90.0f64.copysign(a);
                    let (end, way) = two(b.pivoted(t));
                    push((How::Turns(t), end, way));
                }
            }
        } else if m == mm.sideways {
            // Level with each purpose first (of moves scored alike, the
            // first is taken: the shortest step that serves); standing
            // off, then along the line either way, all and half the
            // allowance (keeping the gap and the facing elsewhere).
            for p in purposes {
                // The shift that brings the unit level with it.
                let across = (p.at - b.centre).dot(b.right());
                let s = across.clamp(-allowance, allowance);
                if s.abs() >= 0.25 {
                    let (end, way) = two(b.shifted(s));
                    push((How::Shifts(s), end, way));
                }
            }
            let along = [-allowance, allowance, -allowance / 2.0, allowance / 2.0];
            for s in along.into_iter().filter(|_| stand_off) {
                let (end, way) = two(b.shifted(s));
                push((How::Shifts(s), end, way));
            }
        } else if m == mm.pivot {
            for p in purposes.iter().filter(|p| p.short > 0.0) {
                let a = p.off(b);
                if a.abs() > 1.0 {
                    let (end, way) = two(b.pivoted(a));
                    push((How::Pivots(a), end, way));
                }
            }
        } else if m == mm.free {
            let points = target.into_iter().chain(purposes.iter().map(|p| p.at));
            for t in points {
                if let Some(c) = ride_toward(b, t, allowance) {
                    push(c);
                }
            }
        }
    }

    /// [`Game::purposeful`] moves ending with a change of direction
    /// (`finishes`), for the straight manoeuvre: toward each purpose, the
    /// advance the allowance leaves after the finish, then the finish that
    /// leaves the purpose most nearly ahead, when it does so by more than
    /// the smallest wheel's half.
    pub(super) fn purposeful_finished(
        &self,
        m: u32,
        b: &Base,
        allowance: f64,
        finishes: Finishes,
        purposes: &[Purpose],
        out: &mut Vec<Candidate>,
    ) {
        if m != self.m.straight {
            return;
        }
        for p in purposes {
            let mut best: Option<(f64, Candidate)> = None;
            for finish in Finish::all(finishes) {
                let spare = allowance - finish.cost(b);
                if finish.cost(b) > 0.0 && spare <= 1e-9 {
                    continue;
                }
                let Some(d) = toward(p.want(b), spare.min(allowance)) else {
                    continue;
                };
                let reached = b.straight_end(d);
                let end = finish.end(&reached);
                let (before, after) = (p.off(&reached).abs(), p.off(&end).abs());
                if after >= before - 11.25 || best.as_ref().is_some_and(|(x, _)| *x <= after) {
                    continue;
                }
                let way = Way::from(Step::Straight(d)).then(finish);
                best = Some((after, (How::Advances(d), end, way)));
            }
            out.extend(best.map(|(_, c)| c));
        }
    }
}

/// A move as the log tells it: how, then the change of direction that
/// finishes it, if any ("advances 4.5, then wheels +45").
fn told(how: How, finish: Option<Finish>) -> String {
    match finish {
        Some(f) => format!("{how}, {f}"),
        None => how.to_string(),
    }
}

/// The way a candidate move goes from its start (laid out as a path only
/// for a move whose end passes the first checks: most are turned down by
/// the end alone): a step, then the change of direction that finishes it,
/// if any. Plain data: a candidate is made without allocating.
#[derive(Clone, Copy)]
pub(super) struct Way {
    step: Step,
    finish: Option<Finish>,
}

/// The part of a [`Way`] before any finishing change of direction.
#[derive(Clone, Copy)]
pub(super) enum Step {
    /// Straight to this end.
    Two(Base),
    /// Straight ahead `d` (back, when negative), a base every half measure.
    Straight(f64),
    /// A wheel of `w` degrees about a front corner, then ahead `d` (back,
    /// when negative).
    Wheel(f64, f64),
    /// An about face, then ahead `d`.
    AboutFace(f64),
    /// Obliquely: `d` along the bearing `a` off the facing, facing kept.
    Oblique(f64, f64),
}

impl From<Step> for Way {
    fn from(step: Step) -> Way {
        Way { step, finish: None }
    }
}

impl Way {
    /// The same way, then `finish` at its end.
    fn then(self, finish: Finish) -> Way {
        Way {
            finish: Some(finish),
            ..self
        }
    }

    /// The path from `b`, start first, laid into `out` (emptied first: one
    /// buffer serves every candidate of a move). Its last base is the end
    /// [`Game::candidates`] gave, bit for bit. Returns where the finishing
    /// change of direction starts in `out` (its length when there is none).
    pub(super) fn lay(&self, b: &Base, out: &mut Vec<Base>) -> usize {
        out.clear();
        match self.step {
            Step::Two(end) => out.extend([*b, end]),
            Step::Straight(d) => out.extend(b.straight_bases(d)),
            Step::Wheel(w, d) => {
                out.extend(b.wheel_bases(w));
                if d.abs() > 1e-9 {
                    let end = *out.last().expect("a path has an end");
                    out.extend(end.straight_bases(d).skip(1));
                }
            }
            Step::AboutFace(d) => {
                out.push(*b);
                out.extend(b.pivoted(180.0).straight_bases(d));
            }
            Step::Oblique(a, d) => out.extend(b.oblique_bases(a, d)),
        }
        let first = out.len();
        if let Some(f) = self.finish {
            f.lay(out);
        }
        first
    }

    /// The change of direction that ends this way, if any.
    fn finish(&self) -> Option<Finish> {
        self.finish
    }
}

/// A change of direction at the end of a move, after its straight part
/// (a `move` decision's `finish n:` clause): TVBD's superior units
/// (§Optional Rule: Unit Quality).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Finish {
    /// A wheel of this many degrees about a front corner, costing what its
    /// outside corner travels.
    Wheel(f64),
    /// An about face in place, costing nothing.
    AboutFace,
    /// A turn of this many degrees (+-90) in place, costing nothing.
    Turn(f64),
}

impl Finish {
    /// Every finish the engine offers of the kinds `fins` allows: wheels of
    /// 22.5 and 45 degrees either way, the about face, turns either way.
    fn all(fins: Finishes) -> impl Iterator<Item = Finish> {
        let wheels = [-45.0, -22.5, 22.5, 45.0].map(Finish::Wheel);
        let turns = [-90.0, 90.0].map(Finish::Turn);
        (wheels.into_iter().filter(move |_| fins.wheel))
            .chain(
                [Finish::AboutFace]
                    .into_iter()
                    .filter(move |_| fins.about_face),
            )
            .chain(turns.into_iter().filter(move |_| fins.turn))
    }

    /// The base a unit standing at `b` ends at.
    fn end(self, b: &Base) -> Base {
        match self {
            Finish::Wheel(w) => b.wheel_end(w),
            Finish::AboutFace => b.pivoted(180.0),
            Finish::Turn(a) => b.pivoted(a),
        }
    }

    /// The bases it passes through after the last of `out`, laid onto it.
    fn lay(self, out: &mut Vec<Base>) {
        let from = *out.last().expect("a path has an end");
        match self {
            Finish::Wheel(w) => out.extend(from.wheel_bases(w).skip(1)),
            _ => out.push(self.end(&from)),
        }
    }

    /// What it costs a base the size of `b` against the allowance.
    pub(super) fn cost(self, b: &Base) -> f64 {
        match self {
            Finish::Wheel(w) => b.wheel_cost(w),
            _ => 0.0,
        }
    }
}

impl std::fmt::Display for Finish {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Finish::Wheel(w) => write!(f, "then wheels {w:+.0}"),
            Finish::AboutFace => write!(f, "then about faces"),
            Finish::Turn(a) => write!(f, "then turns {a:+.0}"),
        }
    }
}

/// Which changes of direction may end a move (`finish n:`), found once
/// per unit and manoeuvre.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Finishes {
    pub wheel: bool,
    pub about_face: bool,
    pub turn: bool,
}

impl Finishes {
    /// Whether any change of direction may end the move.
    pub(super) fn any(self) -> bool {
        self.wheel || self.about_face || self.turn
    }
}

/// The furthest straight advance from `start` ([`furthest_advance`], its
/// path `clear`) as a candidate move, when it is neither the whole nor half
/// the allowance, which [`Game::candidates`] offers already. `on_table`
/// says whether the mover, standing at an end, is wholly on the table: a
/// path is laid only to an end that is (no other path is clear).
pub(super) fn advance_as_far<E>(
    start: &Base,
    allowance: f64,
    longest: f64,
    shortfall: impl FnMut(f64) -> Option<f64>,
    on_table: impl Fn(&Base) -> bool,
    mut clear: impl FnMut(&[Base]) -> Result<bool, E>,
) -> Result<Option<Candidate>, E> {
    // No advance longer than `longest` ends on the table, so the search
    // starts there: the same quarters, without the millions a rule's huge
    // allowance would have it try first.
    // One buffer for every advance tried (the path of the one found is
    // laid again, as `Step::Straight`, when its candidate is checked).
    let mut path = Vec::new();
    let found = furthest_advance(allowance.min(longest), shortfall, |d| {
        if !on_table(&start.straight_end(d)) {
            return Ok(None);
        }
        path.clear();
        path.extend(start.straight_bases(d));
        Ok(clear(&path)?.then(|| *path.last().expect("a path has an end")))
    })?;
    Ok(found.and_then(|(d, end)| {
        let new =
            d < allowance * 0.5 - 1e-9 || (d < allowance - 1e-9 && d > allowance * 0.5 + 1e-9);
        new.then_some((How::AdvancesAsFar(d), end, Way::from(Step::Straight(d))))
    }))
}

/// The distances a `retire` of `d` tries, longest first: `d` to the
/// nearest quarter of the measure, then a quarter less each time, down to
/// a quarter. None is longer than `longest` (a longer move from anywhere
/// on the table ends off it, where no path is clear): a rule's huge `d`
/// would otherwise have millions tried, the first with a path of billions
/// of bases.
pub(super) fn retreats(d: f64, longest: f64) -> impl Iterator<Item = f64> {
    let top = (longest / 0.25).ceil();
    let k = (d / 0.25).round();
    // (A `d` that is not a number tries nothing, as `k as i64` makes it.)
    let k = if k > top { top } else { k };
    (1..=k as i64).rev().map(|k| k as f64 * 0.25)
}

/// The furthest advance, in quarters of the measure down from `allowance`,
/// whose end keeps the enemy buffer zone and whose path is `clear` (which
/// gives what it found), or None. `shortfall` says by how much an end
/// breaks the zone (see [`Game::buffer_shortfall_near`]): the quarters that
/// would move it less than that are skipped, since a base moved `x` comes
/// at most `x` nearer to anything (less a margin for rounding). The buffer
/// comes first: it needs only the end, and it is what usually stops an
/// advance.
pub(super) fn furthest_advance<T, E>(
    allowance: f64,
    mut shortfall: impl FnMut(f64) -> Option<f64>,
    mut clear: impl FnMut(f64) -> Result<Option<T>, E>,
) -> Result<Option<(f64, T)>, E> {
    let mut d = (allowance * 4.0).floor() / 4.0;
    while d > 0.0 {
        if let Some(short) = shortfall(d) {
            let mut back = 0.25;
            d -= 0.25;
            while d > 0.0 && back < short - 1e-6 {
                back += 0.25;
                d -= 0.25;
            }
            continue;
        }
        if let Some(found) = clear(d)? {
            return Ok(Some((d, found)));
        }
        d -= 0.25;
    }
    Ok(None)
}

/// May a unit held in an enemy's zone of control (the enemy's base `eb`,
/// `before` away at the start) move from `start` to `end`? Only if it ends
/// closer to that enemy, or goes directly away from it (within 15 degrees
/// of the line from the enemy's centre through the unit's).
///
/// The direction is asked first: it needs two bearings, where closing
/// needs an exact distance between the bases.
pub(super) fn zoc_allows(start: &Base, end: &Base, eb: &Base, before: f64) -> bool {
    let moved = end.centre.dist(start.centre);
    let directly_away = moved > 1e-6 && {
        let away = battlefield::bearing(eb.centre, start.centre);
        let dir = battlefield::bearing(start.centre, end.centre);
        battlefield::norm_angle(dir - away).abs() <= 15.0
    };
    directly_away || (!end.surely_apart(eb, before - 1e-6) && end.distance(eb) < before - 1e-6)
}

/// What a path costs against the allowance: the distance the centre
/// travels, except that a wheel costs what its outside corner travels
/// (the first part of a wheel path turns in place about a corner).
pub(super) fn path_cost(path: &[Base], wheel: bool) -> f64 {
    let mut cost = 0.0;
    let mut i = 0;
    if wheel {
        // The wheel: consecutive bases whose facing changes.
        while i + 1 < path.len() && (path[i + 1].facing - path[i].facing).abs() > 1e-9 {
            i += 1;
        }
        if i > 0 {
            cost += path[0].wheel_cost(battlefield::norm_angle(path[i].facing - path[0].facing));
        }
    }
    for w in path[i..].windows(2) {
        cost += w[0].centre.dist(w[1].centre);
    }
    cost
}

#[cfg(test)]
mod tests {
    use super::{furthest_advance, retreats};
    use crate::run::battlefield::tests::Rng;
    use crate::run::battlefield::{Base, Pt};

    /// A retire tries its distance to the nearest quarter, then a quarter
    /// less each time; never more than the table's diagonal allows (the
    /// next quarter up from it), however far the rule says.
    #[test]
    fn retreats_start_no_further_than_the_table_allows() {
        let tried = |d: f64, longest: f64| retreats(d, longest).collect::<Vec<_>>();
        assert_eq!(tried(1.1, 54.08), [1.0, 0.75, 0.5, 0.25]);
        assert_eq!(tried(1.2, 54.08), [1.25, 1.0, 0.75, 0.5, 0.25]);
        for huge in [54.2, 1e6, 2147483647.0, 9.2e18, f64::INFINITY] {
            let t = tried(huge, 54.08);
            assert_eq!((t.len(), t[0], t[216]), (217, 54.25, 0.25), "{huge}");
        }
        for none in [0.0, 0.1, -3.0, f64::NAN] {
            assert!(tried(none, 54.08).is_empty(), "{none}");
        }
    }

    /// The buffer rule for enemies `es` (as the game applies it): an end
    /// no nearer than `buffer` to each, or, for one already nearer at the
    /// start, no nearer than it was; by how much it falls short.
    fn shortfall(start: &Base, end: &Base, es: &[Base], buffer: f64) -> Option<f64> {
        es.iter().find_map(|e| {
            let before = start.distance(e);
            let after = end.distance(e);
            let least = if before >= buffer - 1e-9 {
                buffer - 1e-9
            } else {
                before - 1e-9
            };
            (after < least).then_some(least - after)
        })
    }

    /// Skipping the quarters a shortfall rules out finds the advance that
    /// trying every quarter finds, over random starts, enemies around the
    /// line of advance, and paths blocked at random; and it skips.
    #[test]
    fn furthest_advance_skips_only_what_the_buffer_rules_out() {
        let mut r = Rng(7);
        let (mut asked, mut asked_each, mut found, mut none) = (0, 0, 0, 0);
        for _ in 0..20_000 {
            let start = Base::new(
                Pt::new(r.range(0.0, 40.0), r.range(0.0, 40.0)),
                r.range(0.0, 360.0),
                r.range(1.0, 4.0),
                r.range(0.5, 2.0),
            );
            let allowance = r.range(0.0, 12.0);
            let buffer = [1.0, 2.0, 0.5][(r.next() % 3) as usize];
            let es: Vec<Base> = (0..(r.next() % 4))
                .map(|_| {
                    let ahead = start.advanced(r.range(-2.0, 14.0));
                    let off = ahead.shifted(r.range(-4.0, 4.0));
                    Base::new(
                        off.centre,
                        r.range(0.0, 360.0),
                        r.range(1.0, 4.0),
                        r.range(0.5, 2.0),
                    )
                })
                .collect();
            let blocked: Vec<bool> = (0..64).map(|_| r.next().is_multiple_of(3)).collect();
            let clear = |d: f64| -> Result<Option<f64>, ()> {
                Ok((!blocked[(d * 4.0) as usize % 64]).then_some(d))
            };
            let mut calls = 0;
            let got = furthest_advance(
                allowance,
                |d| {
                    calls += 1;
                    shortfall(&start, &start.advanced(d), &es, buffer)
                },
                clear,
            )
            .unwrap();
            // Every quarter tried in turn.
            let mut want = None;
            let mut d = (allowance * 4.0).floor() / 4.0;
            while d > 0.0 {
                asked_each += 1;
                if shortfall(&start, &start.advanced(d), &es, buffer).is_none() {
                    if let Some(x) = clear(d).unwrap() {
                        want = Some((d, x));
                        break;
                    }
                }
                d -= 0.25;
            }
            assert_eq!(got, want, "{start:?} {allowance} {buffer} {es:?}");
            asked += calls;
            match got {
                Some(_) => found += 1,
                None => none += 1,
            }
        }
        assert!(found > 5_000 && none > 1_000, "{found} found, {none} none");
        assert!(
            asked * 10 < asked_each * 8,
            "{asked} asked, {asked_each} each"
        );
    }
}
