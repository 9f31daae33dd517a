//! Groups: units that move as one body. A `move`, `retire` or `charge`
//! decision with a `together g: COND` clause takes, with its mover (or
//! charger), every other unit on the table for which COND holds, and moves
//! them all as one rigid body: the moves are those of the group's outline
//! (the smallest rectangle in the mover's facing that holds every member's
//! base, [`Body`]), and each member goes with the outline. The engine never
//! decides who belongs to a group: COND does (usually with the `grouped`
//! measure). A decision without the clause, or a mover with no one to take
//! along, takes the single-unit code of [`super`], unchanged.

use super::moves::{advance_as_far, path_cost, retreats, zoc_allows};
use super::{place, Event, Game, How, MovedWith, Prefer};
use crate::base::value::Value;
use crate::compile::ir::{ChoiceDef, Id};
use crate::front::diagnostic::Diag;
use crate::run::battlefield::{self, charge_path_body_onto, Base, Body};
use crate::run::field::to_len;
use std::cmp::Ordering::Greater;

/// A move of a group that the rules allow.
pub(super) struct GroupMove {
    pub how: How,
    /// The manoeuvre.
    pub m: u32,
    /// Per member, the mover first: its path.
    pub paths: Vec<Vec<Base>>,
}

impl Game<'_> {
    /// `together g: COND`: the other units on the table for which COND
    /// holds (the frame holds the option's names), leaving out `target` and
    /// every unit marked in `skip` (those that have had their turn).
    pub(super) fn together_with(
        &self,
        ch: &ChoiceDef,
        lead: u16,
        target: Option<u16>,
        skip: &[bool],
        frame: &mut [Value],
    ) -> Result<Vec<u16>, Diag> {
        let Some((slot, cond)) = &ch.together else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for g in self.units_on_table() {
            if g == lead || Some(g) == target || skip[g as usize] {
                continue;
            }
            frame[*slot as usize] = Value::Unit(g);
            if self.eval(cond, frame)?.as_bool() {
                out.push(g);
            }
        }
        Ok(out)
    }

    /// The group's body: its members' bases and their outline, in the
    /// facing of the first (the mover).
    fn body_of(&self, group: &[u16]) -> Body {
        let f = self.field();
        let bases: Vec<Base> = group.iter().map(|g| f.bases[*g as usize]).collect();
        Body::new(bases[0].facing, &bases)
    }

    /// Are the members' paths clear: every base along them on the table,
    /// none ending on a unit outside the group, none passing through an
    /// enemy, or through a friend outside the group unless `through`
    /// (asked with `u` bound to the member that passes) allows it. Members
    /// never block each other.
    fn group_path_clear(
        &self,
        ch: &ChoiceDef,
        group: &[u16],
        paths: &[Vec<Base>],
        frame: &mut [Value],
    ) -> Result<bool, Diag> {
        if !paths.iter().flatten().all(|b| self.on_table(b)) {
            return Ok(false);
        }
        let u_slot = ch.vars[0] as usize;
        let lead = frame[u_slot];
        for (&m, path) in group.iter().zip(paths) {
            let end = path.last().expect("a path has an end");
            let bounds = battlefield::Bounds::of(path);
            let side = self.world.units[m as usize].side;
            for o in 0..self.world.units.len() {
                let f = self.field();
                let ob = &f.bases[o];
                if group.contains(&(o as u16)) || !f.on_table[o] || bounds.clear_of(ob, 0.0) {
                    continue;
                }
                if end.overlaps(ob) {
                    return Ok(false);
                }
                if path.iter().skip(1).any(|b| b.overlaps(ob)) {
                    let friend = self.world.units[o].side == side;
                    let allowed = match (&ch.through, friend) {
                        (Some((slot, e)), true) => {
                            frame[u_slot] = Value::Unit(m);
                            frame[*slot as usize] = Value::Unit(o as u16);
                            let r = self.eval(e, frame);
                            frame[u_slot] = lead;
                            r?.as_bool()
                        }
                        _ => false,
                    };
                    if !allowed {
                        return Ok(false);
                    }
                }
            }
        }
        Ok(true)
    }

    /// The enemy buffer zone for every member, from where it stands to
    /// `ends`: by how much the first member (in the group's order) that
    /// breaks it does ([`Game::buffer_shortfall_near`]), if one does.
    fn group_buffer_shortfall(
        &self,
        group: &[u16],
        body: &Body,
        ends: &[Base],
        buffer: f64,
    ) -> Option<f64> {
        let everyone = &self.code.everyone;
        group.iter().enumerate().find_map(|(i, &m)| {
            let enemies = self.buffer_enemies(m, buffer, everyone);
            self.buffer_shortfall_near(m, &body.bases[i], &ends[i], buffer, enemies)
        })
    }

    /// Every move the rules allow the group (the mover first): the moves
    /// of [`Game::candidates`] for the outline, each member carried along,
    /// checked as a unit's are (see `legal_moves`) for every member: the
    /// table's edges, units outside the group, the buffer; the zone of
    /// control of the closest enemy that holds any member (`control` asked
    /// with `u` bound to each member), tested on the outline; and the
    /// allowance (with `u` the mover, each member's `touches_terrain`
    /// looking along its own path) against the outline's path cost.
    pub(super) fn group_moves(
        &mut self,
        ch: &ChoiceDef,
        d: Id,
        group: &[u16],
        frame: &mut [Value],
    ) -> Result<Vec<GroupMove>, Diag> {
        let mut out = Vec::new();
        if ch.manoeuvre.is_none() {
            return Ok(out);
        }
        let u = group[0];
        let u_slot = ch.vars[0] as usize;
        let all = self.m.all();
        let body = self.body_of(group);
        let start = body.outline;
        // Which enemy holds the group in its zone of control: the closest
        // (to the outline) of those that hold a member.
        let mut zoc: Option<(u16, f64)> = None;
        if let Some((e_slot, cond)) = &ch.control {
            let reaches: Vec<_> = group.iter().map(|m| self.control_reach(d, *m)).collect();
            for e in self.units_on_table() {
                if group.contains(&e) {
                    continue;
                }
                for (&m, reach) in group.iter().zip(&reaches) {
                    if self.world.units[e as usize].side == self.world.units[m as usize].side {
                        continue;
                    }
                    frame[u_slot] = Value::Unit(m);
                    let held = self.controls(cond, *e_slot, reach.as_ref(), e, m, frame);
                    frame[u_slot] = Value::Unit(u);
                    if held? {
                        let gap = start.distance(&self.field().bases[e as usize]);
                        if zoc.is_none_or(|(_, least)| gap < least) {
                            zoc = Some((e, gap));
                        }
                        break;
                    }
                }
            }
        }
        let buffer = match &ch.buffer {
            Some(e) => to_len(self.eval(e, frame)?).unwrap_or(0.0),
            None => 0.0,
        };
        let ends_at =
            |end: &Base| -> Vec<Base> { (0..body.len()).map(|i| body.part_at(i, end)).collect() };
        let mut path = Vec::new();
        for m in all {
            let Some((allowance, _)) = self.manoeuvre_allowance(ch, d, m, frame)? else {
                continue;
            };
            let target = self.target_for(u, &group[1..], m);
            let mut cands = self.candidates(m, &start, allowance, target);
            if m == self.m.straight {
                // As far ahead as the whole group may go, in quarters (the
                // members move with the outline, each as far).
                cands.extend(advance_as_far(
                    &start,
                    allowance,
                    self.field().longest_move(),
                    |d| {
                        self.group_buffer_shortfall(
                            group,
                            &body,
                            &ends_at(&start.advanced(d)),
                            buffer,
                        )
                    },
                    |end| ends_at(end).iter().all(|b| self.on_table(b)),
                    |path| self.group_path_clear(ch, group, &body.paths(path), frame),
                )?);
            }
            for (how, end, way) in cands {
                // The checks that need only the ends first, as for one
                // unit ([`Game::legal_moves`]).
                let ends = ends_at(&end);
                // Ends off the table: not clear, and not laid (as for one unit).
                if !ends.iter().all(|b| self.on_table(b)) {
                    continue;
                }
                if self
                    .group_buffer_shortfall(group, &body, &ends, buffer)
                    .is_some()
                {
                    continue;
                }
                if let Some((e, before)) = zoc {
                    if !zoc_allows(&start, &end, &self.field().bases[e as usize], before) {
                        continue;
                    }
                }
                way.lay(&start, &mut path);
                debug_assert!(path.last() == Some(&end), "{how:?}");
                let paths = body.paths(&path);
                debug_assert!(path_ends(&paths) == ends);
                if !self.group_path_clear(ch, group, &paths, frame)? {
                    continue;
                }
                // The allowance again, each member's path known.
                {
                    let f = self.field_path_mut();
                    f.path = Some((u, paths[0].clone()));
                    f.member_paths = group[1..]
                        .iter()
                        .zip(&paths[1..])
                        .map(|(g, p)| (*g, p.clone()))
                        .collect();
                }
                let allowed_now = ch
                    .allowance
                    .as_ref()
                    .map(|e| self.eval(e, frame))
                    .transpose();
                {
                    let f = self.field_path_mut();
                    f.path = None;
                    f.member_paths.clear();
                }
                let allowed_now = allowed_now?.and_then(to_len).unwrap_or(0.0);
                let cost = path_cost(&path, self.m.wheels(m));
                if cost > allowed_now + 1e-6 && cost > 1e-9 {
                    continue;
                }
                out.push(GroupMove { how, m, paths });
            }
        }
        Ok(out)
    }

    /// Put each member of the group on its base in `bases`.
    fn set_group(&mut self, group: &[u16], bases: &[Base]) {
        for (g, b) in group.iter().zip(bases) {
            self.set_base(*g as usize, *b);
        }
    }

    /// The log's line for a group's move: the mover's, naming the others.
    fn note_group_move(&mut self, group: &[u16], from: &[Base], to: &[Base], how: String) {
        self.note(|g| {
            let name = |u: u16| g.world.units[u as usize].name.clone();
            Event::Move {
                unit: name(group[0]),
                how,
                from: place(&from[0]),
                to: place(&to[0]),
                with: (1..group.len())
                    .map(|i| MovedWith {
                        unit: name(group[i]),
                        from: place(&from[i]),
                        to: place(&to[i]),
                    })
                    .collect(),
            }
        });
    }

    /// `move` for a mover `u` with `others` in its group: the policy scores
    /// each of the group's moves with every member where it would end, and
    /// the best is made if it scores more than staying put; `check` and
    /// `then` are the mover's.
    pub(super) fn move_group(
        &mut self,
        ch: &ChoiceDef,
        prefer: Prefer,
        u: u16,
        others: &[u16],
        frame: &mut [Value],
    ) -> Result<(), Diag> {
        let Some((m_slot, _)) = &ch.manoeuvre else {
            return Ok(());
        };
        let mut group = vec![u];
        group.extend_from_slice(others);
        let starts: Vec<Base> = group
            .iter()
            .map(|g| self.field().bases[*g as usize])
            .collect();
        // No legal move: the group stays unscored, as a unit does
        // ([`Game::move_units`]).
        let moves = self.group_moves(ch, prefer.d, &group, frame)?;
        if moves.is_empty() {
            return Ok(());
        }
        let stay = self.score(prefer, frame)?;
        let mut best: Option<(Value, GroupMove)> = None;
        for mv in moves {
            frame[*m_slot as usize] = Value::Sym(mv.m);
            let ends = path_ends(&mv.paths);
            self.set_group(&group, &ends);
            let s = self.score(prefer, frame);
            self.set_group(&group, &starts);
            let s = s?;
            if best
                .as_ref()
                .is_none_or(|(bs, _)| s.num_cmp(*bs) == Some(Greater))
            {
                best = Some((s, mv));
            }
        }
        let Some((s, mv)) = best else {
            return Ok(());
        };
        if s.num_cmp(stay) != Some(Greater) {
            return Ok(());
        }
        frame[*m_slot as usize] = Value::Sym(mv.m);
        if !self.passes_check(ch, u, frame)? {
            return Ok(());
        }
        let ends = path_ends(&mv.paths);
        self.set_group(&group, &ends);
        self.note_group_move(&group, &starts, &ends, mv.how.to_string());
        self.run_then(ch, frame)
    }

    /// `retire` for a mover `u` with `others` in its group: the outline goes
    /// straight back `d`, or 0.25 less each time while any member's way is
    /// blocked; the group stays if no distance fits. With `turn`, the group
    /// then turns about in place (the outline about its centre: it covers
    /// the same ground).
    pub(super) fn retire_group(
        &mut self,
        ch: &ChoiceDef,
        u: u16,
        others: &[u16],
        d: f64,
        turn: bool,
        frame: &mut [Value],
    ) -> Result<(), Diag> {
        let mut group = vec![u];
        group.extend_from_slice(others);
        let body = self.body_of(&group);
        let start = body.outline;
        let mut found = None;
        for dist in retreats(d, self.field().longest_move()) {
            // A member that would end off the table: not clear, and not laid.
            let end = start.straight_end(-dist);
            if !(0..group.len()).all(|i| self.on_table(&body.part_at(i, &end))) {
                continue;
            }
            let path = start.straight_path(-dist);
            let paths = body.paths(&path);
            if self.group_path_clear(ch, &group, &paths, frame)? {
                found = Some((dist, end));
                break;
            }
        }
        // What each member went through (`retired_through`).
        let passed = match found {
            Some((dist, _)) => self.gone_through(&group, &body.paths(&start.straight_path(-dist))),
            None => vec![Vec::new(); group.len()],
        };
        for (g, through) in group.iter().zip(&passed) {
            self.field_mut().retired(*g, through);
        }
        let turned = if turn { ", turning about" } else { "" };
        let ends_at = |outline: &Base| -> Vec<Base> {
            let outline = if turn {
                outline.pivoted(180.0)
            } else {
                *outline
            };
            (0..group.len())
                .map(|i| body.part_at(i, &outline))
                .collect()
        };
        match found {
            Some((dist, end)) => {
                let ends = ends_at(&end);
                self.set_group(&group, &ends);
                self.note_group_move(
                    &group,
                    &body.bases,
                    &ends,
                    format!("falls back {dist:.1}{turned}"),
                );
            }
            None if turn => {
                let ends = ends_at(&start);
                self.set_group(&group, &ends);
                self.note_group_move(
                    &group,
                    &body.bases,
                    &ends,
                    "has no room to fall back, turning about".into(),
                );
            }
            None => {
                let unit = self.world.units[u as usize].name.clone();
                self.note(|_| Event::Stays {
                    unit,
                    why: "no room to fall back".into(),
                });
            }
        }
        Ok(())
    }

    /// `charge` by a group (the charger first) onto `t`: the outline's
    /// cheapest charge until a member touches the target
    /// ([`charge_path_body`]), through no unit outside the group; half the
    /// straight distance when the two meet half way (`mutual`, and no
    /// wheel); with `front`, only a path that ends with a member touching
    /// the target's front (the `frontal` clause). None when the group could not reach (nobody moved); else
    /// whether `then` runs (a member in contact, or meeting half way).
    pub(super) fn charge_group(
        &mut self,
        group: &[u16],
        t: u16,
        reach: f64,
        wheel: f64,
        front: bool,
        mutual: bool,
    ) -> Option<bool> {
        let f = self.field();
        let tb = f.bases[t as usize];
        if group.iter().any(|g| f.bases[*g as usize].in_contact(&tb)) {
            return Some(true);
        }
        let obstacles: Vec<Base> = f
            .bases
            .iter()
            .enumerate()
            .filter(|(o, _)| f.on_table[*o] && *o != t as usize && !group.contains(&(*o as u16)))
            .map(|(_, b)| *b)
            .collect();
        let body = self.body_of(group);
        let target = self.world.units[t as usize].name.clone();
        let Some((path, _)) = charge_path_body_onto(&body, &tb, reach, wheel, &obstacles, front)
        else {
            let unit = self.world.units[group[0] as usize].name.clone();
            self.note(|_| Event::Stays {
                unit,
                why: format!("cannot reach {target}"),
            });
            return None;
        };
        let half = mutual && path.wheel.abs() < 1e-9;
        let end = if half {
            body.outline.advanced(path.distance / 2.0)
        } else {
            path.end
        };
        let ends: Vec<Base> = (0..body.len()).map(|i| body.part_at(i, &end)).collect();
        self.set_group(group, &ends);
        let how = if half {
            format!("charges {target}, meeting half way")
        } else if path.wheel.abs() > 1e-9 {
            format!("wheels {:+.0} and charges {target}", path.wheel)
        } else {
            format!("charges {target}")
        };
        self.note_group_move(group, &body.bases, &ends, how);
        Some(mutual || ends.iter().any(|b| b.in_contact(&tb)))
    }
}

/// Where each member's path ends.
fn path_ends(paths: &[Vec<Base>]) -> Vec<Base> {
    paths
        .iter()
        .map(|p| *p.last().expect("a path has an end"))
        .collect()
}
