//! Sweeps and charges: how far a base moves before it first touches
//! another, and the cheapest charge (a wheel, then straight ahead into
//! contact) of a unit or of a body of bases.

use super::{norm_angle, Base, Body, Pt, EPS, SLACK, WHEEL_STEP};

/// The least and greatest `u` of a convex polygon (given as (u, v) points)
/// on the line `v = const`; None when the line misses it.
fn extent_at(poly: &[Pt; 4], v: f64) -> Option<(f64, f64)> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for i in 0..4 {
        let p = poly[i];
        let q = poly[(i + 1) % 4];
        if (p.y - v) * (q.y - v) > 0.0 {
            continue;
        }
        let dv = q.y - p.y;
        if dv.abs() < 1e-15 {
            lo = lo.min(p.x.min(q.x));
            hi = hi.max(p.x.max(q.x));
        } else {
            let t = ((v - p.y) / dv).clamp(0.0, 1.0);
            let u = p.x + (q.x - p.x) * t;
            lo = lo.min(u);
            hi = hi.max(u);
        }
    }
    (lo <= hi).then_some((lo, hi))
}

/// How far the quadrilateral `a` must travel along the unit vector `dir`
/// before it first touches `b`: the least gap, over the lateral band both
/// cover, between `a`'s leading boundary and `b`'s trailing one. The gap is
/// piecewise linear and convex in the lateral coordinate, so its least
/// value is at a vertex or an end of the band. None when the band is
/// narrower than [`EPS`], or when `b` is behind `a` or overlaps it.
fn sweep(a: &[Pt; 4], b: &[Pt; 4], dir: Pt) -> Option<f64> {
    let perp = Pt::new(dir.y, -dir.x);
    let frame = |q: &[Pt; 4]| q.map(|p| Pt::new(p.dot(dir), p.dot(perp)));
    let (fa, fb) = (frame(a), frame(b));
    let lat = |q: &[Pt; 4]| {
        q.iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| {
                (l.min(p.y), h.max(p.y))
            })
    };
    let ((alo, ahi), (blo, bhi)) = (lat(&fa), lat(&fb));
    let (lo, hi) = (alo.max(blo), ahi.min(bhi));
    if hi - lo <= EPS {
        return None;
    }
    let mut best = f64::INFINITY;
    let candidates = [lo, hi]
        .into_iter()
        .chain(fa.iter().chain(fb.iter()).map(|p| p.y))
        .filter(|v| *v >= lo && *v <= hi);
    // Each candidate's gap is worked out once: the band's ends are corners'
    // coordinates too, and square bases share theirs, so candidates repeat,
    // bit for bit, and the same inputs give the same gap, folded in again.
    let mut known = [(0u64, None); 10];
    let mut n = 0;
    for v in candidates {
        let gap = match known[..n].iter().find(|(bits, _)| *bits == v.to_bits()) {
            Some(&(_, gap)) => gap,
            None => {
                let gap = match (extent_at(&fa, v), extent_at(&fb, v)) {
                    (Some((_, a_hi)), Some((b_lo, _))) => Some(b_lo - a_hi),
                    _ => None,
                };
                known[n] = (v.to_bits(), gap);
                n += 1;
                gap
            }
        };
        if let Some(gap) = gap {
            best = best.min(gap);
        }
    }
    if !best.is_finite() || best < -EPS {
        None
    } else {
        Some(best.max(0.0))
    }
}

impl Base {
    /// How far this base must advance straight ahead until it first touches
    /// `o` (0 if it already does); None if it never would (no lateral
    /// overlap wider than [`EPS`], or `o` behind it, or the two overlap).
    pub fn contact_distance(&self, o: &Base) -> Option<f64> {
        sweep(&self.corners(), &o.corners(), self.forward())
    }

    /// Moving along `dir` (any vector; facing kept), which of `others` is
    /// touched first and after how far: `(index, distance)`, the lowest
    /// index on a tie; None if the move is never blocked.
    pub fn first_hit_distance(&self, dir: Pt, others: &[Base]) -> Option<(usize, f64)> {
        let l = dir.len();
        if l == 0.0 || !l.is_finite() {
            return None;
        }
        let dir = dir * (1.0 / l);
        let mine = self.corners();
        let mut best: Option<(usize, f64)> = None;
        for (i, o) in others.iter().enumerate() {
            if let Some(d) = sweep(&mine, &o.corners(), dir) {
                if best.is_none_or(|(_, b)| d < b) {
                    best = Some((i, d));
                }
            }
        }
        best
    }
}

/// A charge: a wheel, then straight ahead, ending in contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChargePath {
    /// The wheel at the start, degrees (positive = right).
    pub wheel: f64,
    /// The straight move after the wheel.
    pub distance: f64,
    /// The wheel's cost plus the straight distance.
    pub cost: f64,
    /// The base at the end, in contact with the target.
    pub end: Base,
}

/// What the centres say of [`sweep`] of the base `mover` along the unit
/// vector `dir` into `o`: None when it surely finds no contact (`o` plainly
/// off to either side, so that the lateral bands miss, or wholly behind),
/// else a distance no contact it finds is nearer than. Each base lies
/// within its radius of its centre, and the slack is far above rounding.
fn sweep_floor(mover: &Base, dir: Pt, o: &Base) -> Option<f64> {
    let off = o.centre - mover.centre;
    let reach = mover.radius() + o.radius() + SLACK * mover.scale(o);
    let (ahead, aside) = (off.dot(dir), off.cross(dir));
    (aside.abs() <= reach && ahead + reach >= -EPS).then_some(ahead - reach)
}

/// Whether the base `mover` (its [`Base::corners`] `corners`), moving
/// along the unit vector `dir`, goes `d` (less [`EPS`]) before it touches
/// `o`, if ever: [`sweep`] finds no contact, or none before `d - EPS`;
/// settled by [`sweep_floor`] when it can be.
fn passes_clear(mover: &Base, corners: &[Pt; 4], dir: Pt, o: &Base, d: f64) -> bool {
    match sweep_floor(mover, dir, o) {
        None => true,
        Some(floor) if floor > d => true,
        _ => sweep(corners, &o.corners(), dir).is_none_or(|t| t >= d - EPS),
    }
}

/// Whether a charge costing `cost` is out of the `allowance` or no cheaper
/// than the `best` found so far (a candidate then gives way).
fn too_dear(cost: f64, allowance: f64, best: Option<ChargePath>) -> bool {
    cost > allowance + EPS || best.is_some_and(|b| cost >= b.cost - 1e-9)
}

/// Whether a charge whose wheel costs `wheel_cost` and whose straight part
/// has the [`sweep_floor`] `floor` may be in reach and beat the `best`:
/// its contact is no nearer than the floor, so (rounding being monotonic)
/// its cost no less than `wheel_cost + floor`.
fn may_pay(floor: Option<f64>, wheel_cost: f64, allowance: f64, best: Option<ChargePath>) -> bool {
    floor.is_some_and(|f| !too_dear(wheel_cost + f, allowance, best))
}

/// The wheels a charge tries before going straight: none, those that
/// square the front edge to an edge of the target, and every
/// [`WHEEL_STEP`] degrees out to `max_wheel` either way. A wheel of more
/// than 180 degrees one way is one of less the other, so `max_wheel` is
/// taken as at most 180 (a rule's 1e12 would otherwise ask for 4e11 wheels).
fn charge_wheels(unit: &Base, target: &Base, max_wheel: f64) -> Vec<f64> {
    let max_wheel = max_wheel.abs().min(180.0);
    let mut cands = vec![0.0];
    for k in 0..4 {
        let w = norm_angle(target.facing + 90.0 * k as f64 + 180.0 - unit.facing);
        if w != 0.0 && w.abs() <= max_wheel + 1e-9 {
            cands.push(w);
        }
    }
    let mut a = WHEEL_STEP;
    while a < max_wheel {
        cands.push(a);
        cands.push(-a);
        a += WHEEL_STEP;
    }
    if max_wheel > 0.0 {
        cands.push(max_wheel);
        cands.push(-max_wheel);
    }
    cands
}

/// The cheapest charge (a wheel of at most `max_wheel` degrees, then
/// straight ahead) that brings the unit's front edge into contact with
/// `target`, costing at most `allowance` (cost = wheel cost + straight
/// distance), and passing through none of `obstacles`.
///
/// Candidate wheels, tried in this order (the first of equal cost wins): no
/// wheel; each wheel that makes the front edge parallel to an edge of the
/// target; then every 5 degrees out to `max_wheel`, right before left, and
/// `max_wheel` itself. The wheel is checked against the obstacles (and the
/// target) every 5 degrees; the straight part exactly, by a swept collision.
/// "Charge front before flank" is the caller's: to charge straight ahead
/// only, pass `max_wheel = 0`.
pub fn charge_path(
    unit: &Base,
    target: &Base,
    allowance: f64,
    max_wheel: f64,
    obstacles: &[Base],
) -> Option<ChargePath> {
    charge_path_onto(unit, target, allowance, max_wheel, obstacles, false)
}

/// Whether a charger ending at `end` in contact with `target` touches its
/// front: `end` lies wholly on the far side of the line of the target's
/// front edge, and some part of it in the target's front zone. A base
/// touching a flank edge has no part in the front zone; one that meets the
/// front corner while reaching past the front edge's line is on the flank.
fn onto_front(target: &Base, end: &Base) -> bool {
    let front_line = target.depth * 0.5 - EPS;
    target.local_corners(end).iter().all(|q| q.x >= front_line) && target.in_front_zone(end)
}

/// [`charge_path`], and with `front` only the paths that end touching the
/// target's front ([`onto_front`]): the cheapest of those, however much
/// cheaper a contact with a flank would be (a rule's "a target partly in
/// front is charged in its front").
pub fn charge_path_onto(
    unit: &Base,
    target: &Base,
    allowance: f64,
    max_wheel: f64,
    obstacles: &[Base],
    front: bool,
) -> Option<ChargePath> {
    let cands = charge_wheels(unit, target, max_wheel);

    let mut best: Option<ChargePath> = None;
    for w in cands {
        let wheel_cost = unit.wheel_cost(w);
        if wheel_cost > allowance + EPS {
            continue;
        }
        // The wheel's whole path only once the wheel is worth checking.
        let wheeled = unit.wheel_end(w);
        let floor = sweep_floor(&wheeled, wheeled.forward(), target);
        if !may_pay(floor, wheel_cost, allowance, best) {
            continue;
        }
        let Some(d) = wheeled.contact_distance(target) else {
            continue;
        };
        let cost = wheel_cost + d;
        if too_dear(cost, allowance, best) {
            continue;
        }
        if front && !onto_front(target, &wheeled.advanced(d)) {
            continue;
        }
        let path = unit.wheel_path(w);
        let wheel_clear = path[1..]
            .iter()
            .all(|b| !b.overlaps(target) && obstacles.iter().all(|o| !b.overlaps(o)));
        let (f, corners) = (wheeled.forward(), wheeled.corners());
        let straight_clear = obstacles
            .iter()
            .all(|o| passes_clear(&wheeled, &corners, f, o, d));
        if wheel_clear && straight_clear {
            best = Some(ChargePath {
                wheel: w,
                distance: d,
                cost,
                end: wheeled.advanced(d),
            });
        }
    }
    best
}

/// A body's charge (see [`charge_path`]): the cheapest wheel of the outline
/// (pivoting on the outline's inner front corner, costing the chord of its
/// outer front corner) then straight ahead, until some base of the body
/// touches `target`, costing at most `allowance`, no base passing through
/// `target` or any of `obstacles`. The wheels tried are those of
/// [`charge_path`] for the outline. Returns the outline's path and each
/// base's end.
pub fn charge_path_body(
    body: &Body,
    target: &Base,
    allowance: f64,
    max_wheel: f64,
    obstacles: &[Base],
) -> Option<(ChargePath, Vec<Base>)> {
    charge_path_body_onto(body, target, allowance, max_wheel, obstacles, false)
}

/// [`charge_path_body`], and with `front` only the paths that end with a
/// member touching the target's front ([`onto_front`]).
pub fn charge_path_body_onto(
    body: &Body,
    target: &Base,
    allowance: f64,
    max_wheel: f64,
    obstacles: &[Base],
    front: bool,
) -> Option<(ChargePath, Vec<Base>)> {
    let unit = &body.outline;
    let cands = charge_wheels(unit, target, max_wheel);
    let mut best: Option<ChargePath> = None;
    for w in cands {
        let wheel_cost = unit.wheel_cost(w);
        if wheel_cost > allowance + EPS {
            continue;
        }
        let wheeled = unit.wheel_end(w);
        let parts: Vec<Base> = (0..body.len()).map(|i| body.part_at(i, &wheeled)).collect();
        // The first base of the body to touch the target, all of them
        // going the way the outline faces.
        let f = wheeled.forward();
        let floor = parts
            .iter()
            .filter_map(|p| sweep_floor(p, f, target))
            .min_by(f64::total_cmp);
        if !may_pay(floor, wheel_cost, allowance, best) {
            continue;
        }
        let tc = target.corners();
        let Some(d) = parts
            .iter()
            .filter_map(|p| sweep(&p.corners(), &tc, f))
            .min_by(f64::total_cmp)
        else {
            continue;
        };
        let cost = wheel_cost + d;
        if too_dear(cost, allowance, best) {
            continue;
        }
        if front
            && !parts.iter().any(|p| {
                let end = p.advanced(d);
                end.in_contact(target) && onto_front(target, &end)
            })
        {
            continue;
        }
        let path = unit.wheel_path(w);
        let wheel_clear = path[1..].iter().all(|o| {
            (0..body.len()).all(|i| {
                let b = body.part_at(i, o);
                !b.overlaps(target) && obstacles.iter().all(|x| !b.overlaps(x))
            })
        });
        let straight_clear = parts.iter().all(|p| {
            let corners = p.corners();
            obstacles.iter().all(|o| passes_clear(p, &corners, f, o, d))
        });
        if wheel_clear && straight_clear {
            best = Some(ChargePath {
                wheel: w,
                distance: d,
                cost,
                end: wheeled.advanced(d),
            });
        }
    }
    best.map(|p| {
        let ends = (0..body.len()).map(|i| body.part_at(i, &p.end)).collect();
        (p, ends)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::battlefield::tests::{
        base_numbers, cases, close, each_pair, random_base, random_facing, random_pair,
        random_size, unit, Rng,
    };
    use crate::run::battlefield::Zone;

    /// Contact distance straight ahead.
    #[test]
    fn contact_distance_face_to_face() {
        let a = unit(0.0, 0.0, 0.0);
        let b = unit(0.0, 5.0, 180.0);
        assert!(close(a.contact_distance(&b).unwrap(), 4.0, 1e-12));
        assert!(close(b.contact_distance(&a).unwrap(), 4.0, 1e-12));
        assert!(a.contact_distance(&unit(2.5, 5.0, 180.0)).is_none());
        assert!(a.contact_distance(&unit(2.0, 5.0, 180.0)).is_none()); // edges in line
        assert!(a.contact_distance(&unit(0.0, -5.0, 0.0)).is_none()); // behind
                                                                      // A tilted target: its nearest corner is met first.
        let t = Base::new(Pt::new(0.0, 5.0), 45.0, 2.0, 1.0);
        let d = a.contact_distance(&t).unwrap();
        let low = t.corners().iter().fold(f64::INFINITY, |m, p| m.min(p.y));
        assert!(close(d, low - 0.5, 1e-12));
        assert!(a.advanced(d).in_contact(&t) && !a.advanced(d).overlaps(&t));
        let hit = a.first_hit_distance(Pt::new(0.0, 2.0), &[unit(5.0, 5.0, 0.0), b]);
        assert_eq!(hit.map(|h| h.0), Some(1));
    }

    // -- Charges -------------------------------------------------------------

    /// "Charge front before flank": an enemy squarely ahead is charged
    /// straight, with no change of direction.
    #[test]
    fn charge_straight_ahead() {
        let a = unit(0.0, 0.0, 0.0);
        let e = unit(0.0, 3.5, 180.0);
        let c = charge_path(&a, &e, 3.0, 45.0, &[]).unwrap();
        assert_eq!(c.wheel, 0.0);
        assert!(close(c.distance, 2.5, 1e-12));
        assert!(close(c.cost, 2.5, 1e-12));
        assert!(c.end.in_contact(&e));
    }

    /// "Charge front before flank": with no enemy to front, wheel (at most
    /// 45 degrees) to charge one to the front-flank.
    #[test]
    fn charge_with_a_wheel() {
        let a = unit(0.0, 0.0, 0.0);
        let e = unit(2.2, 1.6, 225.0);
        assert!(a.contact_distance(&e).is_none());
        let c = charge_path(&a, &e, 3.0, 45.0, &[]).unwrap();
        assert!(c.wheel > 0.0 && c.wheel <= 45.0, "{c:?}");
        assert!(c.cost <= 3.0 + 1e-9);
        assert!(close(c.cost, a.wheel_cost(c.wheel) + c.distance, 1e-12));
        assert!(c.end.in_contact(&e) && !c.end.overlaps(&e));
        assert_eq!(c.end.zone_of(&e), Zone::Front);
        // Straight only (front before flank): no charge.
        assert!(charge_path(&a, &e, 3.0, 0.0, &[]).is_none());
    }

    /// "Movement allowance": all charge moves are at most 3 TUM.
    #[test]
    fn charge_out_of_reach() {
        let a = unit(0.0, 0.0, 0.0);
        assert!(charge_path(&a, &unit(0.0, 4.5, 180.0), 3.0, 45.0, &[]).is_none());
    }

    /// "Interpenetration": units cannot pass through other units, so a base in
    /// between blocks the charge.
    #[test]
    fn charge_blocked_by_a_base_between() {
        let a = unit(0.0, 0.0, 0.0);
        let e = unit(0.0, 3.5, 180.0);
        let friend = Base::new(Pt::new(0.0, 1.75), 0.0, 4.0, 0.5);
        assert!(charge_path(&a, &e, 3.0, 45.0, &[friend]).is_none());
        // Off to the side, it is no obstacle.
        let aside = Base::new(Pt::new(4.0, 1.75), 0.0, 2.0, 0.5);
        assert!(charge_path(&a, &e, 3.0, 45.0, &[aside]).is_some());
    }

    /// A body charges until its first base touches the target.
    #[test]
    fn a_body_charges_into_contact() {
        // Two bases side by side facing +y; the target ahead of the right one.
        let pair = [unit(1.0, 0.5, 0.0), unit(3.0, 0.5, 0.0)];
        let body = Body::new(0.0, &pair);
        let target = unit(3.5, 3.5, 180.0);
        let (p, ends) = charge_path_body(&body, &target, 3.0, 0.0, &[]).expect("in reach");
        assert!(close(p.distance, 2.0, 1e-9), "{p:?}");
        assert!(ends[1].in_contact(&target) && !ends[0].overlaps(&target));
        // An obstacle in front of the left base blocks the charge.
        let block = unit(1.0, 2.0, 0.0);
        assert!(charge_path_body(&body, &target, 3.0, 0.0, &[block]).is_none());
        // Out of reach.
        assert!(charge_path_body(&body, &target, 1.5, 0.0, &[]).is_none());
    }

    /// `charge_path` before its shortcuts, verbatim.
    fn charge_path_reference(
        unit: &Base,
        target: &Base,
        allowance: f64,
        max_wheel: f64,
        obstacles: &[Base],
    ) -> Option<ChargePath> {
        let cands = charge_wheels(unit, target, max_wheel);

        let mut best: Option<ChargePath> = None;
        for w in cands {
            let wheel_cost = unit.wheel_cost(w);
            if wheel_cost > allowance + EPS {
                continue;
            }
            let path = unit.wheel_path(w);
            let wheeled = *path.last().unwrap_or(unit);
            let Some(d) = wheeled.contact_distance(target) else {
                continue;
            };
            let cost = wheel_cost + d;
            if cost > allowance + EPS || best.is_some_and(|b| cost >= b.cost - 1e-9) {
                continue;
            }
            let wheel_clear = path[1..]
                .iter()
                .all(|b| !b.overlaps(target) && obstacles.iter().all(|o| !b.overlaps(o)));
            let (f, corners) = (wheeled.forward(), wheeled.corners());
            let straight_clear = obstacles
                .iter()
                .all(|o| sweep(&corners, &o.corners(), f).is_none_or(|t| t >= d - EPS));
            if wheel_clear && straight_clear {
                best = Some(ChargePath {
                    wheel: w,
                    distance: d,
                    cost,
                    end: wheeled.advanced(d),
                });
            }
        }
        best
    }

    /// `charge_path_body` before its shortcuts, verbatim.
    fn charge_path_body_reference(
        body: &Body,
        target: &Base,
        allowance: f64,
        max_wheel: f64,
        obstacles: &[Base],
    ) -> Option<(ChargePath, Vec<Base>)> {
        let unit = &body.outline;
        let cands = charge_wheels(unit, target, max_wheel);
        let mut best: Option<ChargePath> = None;
        for w in cands {
            let wheel_cost = unit.wheel_cost(w);
            if wheel_cost > allowance + EPS {
                continue;
            }
            let path = unit.wheel_path(w);
            let wheeled = *path.last().unwrap_or(unit);
            let parts: Vec<Base> = (0..body.len()).map(|i| body.part_at(i, &wheeled)).collect();
            // The first base of the body to touch the target, all of them
            // going the way the outline faces.
            let f = wheeled.forward();
            let tc = target.corners();
            let Some(d) = parts
                .iter()
                .filter_map(|p| sweep(&p.corners(), &tc, f))
                .min_by(f64::total_cmp)
            else {
                continue;
            };
            let cost = wheel_cost + d;
            if cost > allowance + EPS || best.is_some_and(|b| cost >= b.cost - 1e-9) {
                continue;
            }
            let wheel_clear = path[1..].iter().all(|o| {
                (0..body.len()).all(|i| {
                    let b = body.part_at(i, o);
                    !b.overlaps(target) && obstacles.iter().all(|x| !b.overlaps(x))
                })
            });
            let straight_clear = parts.iter().all(|p| {
                let corners = p.corners();
                obstacles
                    .iter()
                    .all(|o| sweep(&corners, &o.corners(), f).is_none_or(|t| t >= d - EPS))
            });
            if wheel_clear && straight_clear {
                best = Some(ChargePath {
                    wheel: w,
                    distance: d,
                    cost,
                    end: wheeled.advanced(d),
                });
            }
        }
        best.map(|p| {
            let ends = (0..body.len()).map(|i| body.part_at(i, &p.end)).collect();
            (p, ends)
        })
    }

    /// A charge's every number and base, as bits.
    fn charge_bits(c: &ChargePath) -> Vec<u64> {
        [c.wheel, c.distance, c.cost]
            .into_iter()
            .chain(base_numbers(&c.end))
            .map(f64::to_bits)
            .collect()
    }

    /// A charge to try: the charger, a target before it (square to it,
    /// turned, off to a side, in reach or not), and others about them,
    /// some in the way.
    fn random_charge(r: &mut Rng) -> (Base, Base, f64, f64, Vec<Base>) {
        let unit = random_base(r);
        let (w, d) = random_size(r);
        let ahead =
            r.pick(&[0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 4.0]) + r.pick(&[0.0, 0.25, 1e-9, -1e-9]);
        let side = r.quarter(-4.0, 4.0);
        let facing = match r.below(3) {
            0 => unit.facing + 180.0,
            1 => unit.facing + r.pick(&[90.0, 135.0, 225.0, 270.0]),
            _ => random_facing(r),
        };
        let centre = unit.centre
            + unit.forward() * (unit.depth * 0.5 + d * 0.5 + ahead)
            + unit.right() * side;
        let target = Base::new(centre, facing, w, d);
        let mut others = Vec::new();
        for _ in 0..r.below(8) {
            let near = if r.below(2) == 0 { &unit } else { &target };
            let (a, b) = random_pair(r);
            let off = b.centre - a.centre;
            others.push(Base::new(near.centre + off, b.facing, b.width, b.depth));
        }
        let allowance = r.pick_or(&[3.0, 1.5, 6.0], 0.0, 8.0);
        let max_wheel = r.pick_or(&[0.0, 45.0, 90.0], 0.0, 120.0);
        (unit, target, allowance, max_wheel, others)
    }

    #[test]
    fn charges_are_the_original() {
        let mut r = Rng(6);
        let mut found = 0;
        for _ in 0..cases() {
            let (unit, target, allowance, max_wheel, others) = random_charge(&mut r);
            let got = charge_path(&unit, &target, allowance, max_wheel, &others);
            let want = charge_path_reference(&unit, &target, allowance, max_wheel, &others);
            assert_eq!(
                got.as_ref().map(charge_bits),
                want.as_ref().map(charge_bits),
                "{unit:?} {target:?} {allowance} {max_wheel} {others:?}"
            );
            found += got.is_some() as usize;
        }
        assert!(found > cases() / 10, "{found}");
    }

    #[test]
    fn body_charges_are_the_original() {
        let mut r = Rng(7);
        let mut found = 0;
        for _ in 0..cases() {
            let (unit, target, allowance, max_wheel, others) = random_charge(&mut r);
            // A line or a column led by `unit`.
            let mut bases = vec![unit];
            for _ in 0..r.below(3) {
                let last = bases[bases.len() - 1];
                bases.push(match r.below(3) {
                    0 => last.shifted(last.width),
                    1 => last.shifted(-last.width),
                    _ => last.advanced(-last.depth),
                });
            }
            let body = Body::new(unit.facing, &bases);
            let got = charge_path_body(&body, &target, allowance, max_wheel, &others);
            let want = charge_path_body_reference(&body, &target, allowance, max_wheel, &others);
            let bits = |c: &(ChargePath, Vec<Base>)| {
                let ends = c.1.iter().flat_map(base_numbers).map(f64::to_bits);
                charge_bits(&c.0)
                    .into_iter()
                    .chain(ends)
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                got.as_ref().map(bits),
                want.as_ref().map(bits),
                "{bases:?} {target:?} {allowance} {max_wheel} {others:?}"
            );
            found += got.is_some() as usize;
        }
        assert!(found > cases() / 10, "{found}");
    }

    #[test]
    fn passes_clear_is_the_sweep() {
        let mut r = Rng(8);
        let mut clear = 0;
        each_pair(8, |a, b| {
            let dir = if r.below(2) == 0 {
                a.forward()
            } else {
                Pt::from_bearing(random_facing(&mut r))
            };
            let corners = a.corners();
            let swept = sweep(&corners, &b.corners(), dir);
            // Moves the rulesets make, any, and ones that end at the
            // contact or a hair either side (the boundary).
            let any = r.range(0.0, 8.0);
            let contact = swept.unwrap_or(any) + EPS + r.pick(&[0.0, 1e-12, -1e-12, 1e-9, -1e-9]);
            let d = r.pick(&[0.0, 1.0, 3.0, any, contact, contact]);
            let got = passes_clear(a, &corners, dir, b, d);
            let want = swept.is_none_or(|t| t >= d - EPS);
            assert_eq!(got, want, "{a:?} {b:?} {dir:?} {d}");
            clear += got as usize;
        });
        assert!(
            clear > cases() / 10 && clear < 2 * cases() - cases() / 10,
            "{clear}"
        );
    }

    /// `sweep` before the shortcuts, verbatim.
    fn sweep_reference(a: &[Pt; 4], b: &[Pt; 4], dir: Pt) -> Option<f64> {
        let perp = Pt::new(dir.y, -dir.x);
        let frame = |q: &[Pt; 4]| q.map(|p| Pt::new(p.dot(dir), p.dot(perp)));
        let (fa, fb) = (frame(a), frame(b));
        let lat = |q: &[Pt; 4]| {
            q.iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| {
                    (l.min(p.y), h.max(p.y))
                })
        };
        let ((alo, ahi), (blo, bhi)) = (lat(&fa), lat(&fb));
        let (lo, hi) = (alo.max(blo), ahi.min(bhi));
        if hi - lo <= EPS {
            return None;
        }
        let mut best = f64::INFINITY;
        let candidates = [lo, hi]
            .into_iter()
            .chain(fa.iter().chain(fb.iter()).map(|p| p.y))
            .filter(|v| *v >= lo && *v <= hi);
        for v in candidates {
            if let (Some((_, a_hi)), Some((b_lo, _))) = (extent_at(&fa, v), extent_at(&fb, v)) {
                best = best.min(b_lo - a_hi);
            }
        }
        if !best.is_finite() || best < -EPS {
            None
        } else {
            Some(best.max(0.0))
        }
    }

    #[test]
    fn sweep_is_the_original() {
        let mut r = Rng(12);
        let mut found = 0;
        each_pair(12, |a, b| {
            // Along either base's facing, either way, or any bearing.
            let dir = match r.below(4) {
                0 => a.forward(),
                1 => -b.forward(),
                2 => Pt::from_bearing(random_facing(&mut r)),
                _ => b.forward(),
            };
            let (ca, cb) = (a.corners(), b.corners());
            let got = sweep(&ca, &cb, dir);
            let want = sweep_reference(&ca, &cb, dir);
            assert_eq!(
                got.map(f64::to_bits),
                want.map(f64::to_bits),
                "{a:?} {b:?} {dir:?}"
            );
            found += got.is_some() as usize;
        });
        assert!(found > cases() / 10, "{found}");
    }
}
