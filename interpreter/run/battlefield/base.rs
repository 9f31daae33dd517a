//! A unit's base: its construction, corners and own frame; the box about
//! a run of bases ([`Bounds`]); and how two bases stand apart: overlap,
//! distance and contact (separating axes, with fast paths that keep the
//! exact answer's bits), and whether a point or a segment meets a base.

use super::{Pt, CONTACT, EPS, SLACK};

/// `x` if positive, else 0: `x.max(0.0)` for the bounds of the fast paths,
/// where a plain comparison (one instruction) does, no NaN being about.
pub(super) fn positive(x: f64) -> f64 {
    if x > 0.0 {
        x
    } else {
        0.0
    }
}

/// Distance from a point to a segment.
pub(super) fn point_segment_distance(p: Pt, a: Pt, b: Pt) -> f64 {
    point_segment_distance_sq(p, a, b).sqrt()
}

/// The square of [`point_segment_distance`] (its square root is exactly
/// that distance: the least of several distances is the root of the least
/// square, one root instead of many).
fn point_segment_distance_sq(p: Pt, a: Pt, b: Pt) -> f64 {
    let ab = b - a;
    let l2 = ab.dot(ab);
    let d = if l2 == 0.0 {
        p - a
    } else {
        let t = ((p - a).dot(ab) / l2).clamp(0.0, 1.0);
        p - (a + ab * t)
    };
    d.dot(d)
}

/// Whether two segments cross at a single point interior to both.
pub(super) fn segments_cross(a: Pt, b: Pt, c: Pt, d: Pt) -> bool {
    let o1 = (b - a).cross(c - a);
    let o2 = (b - a).cross(d - a);
    let o3 = (d - c).cross(a - c);
    let o4 = (d - c).cross(b - c);
    o1 * o2 < 0.0 && o3 * o4 < 0.0
}

/// Distance between two segments (0 when they cross or touch).
pub(super) fn segment_distance(a: Pt, b: Pt, c: Pt, d: Pt) -> f64 {
    if segments_cross(a, b, c, d) {
        return 0.0;
    }
    point_segment_distance_sq(a, c, d)
        .min(point_segment_distance_sq(b, c, d))
        .min(point_segment_distance_sq(c, a, b))
        .min(point_segment_distance_sq(d, a, b))
        .sqrt()
}

/// The largest separation of two convex quadrilaterals along the given
/// axes (unit vectors): positive when a gap separates them, otherwise minus
/// the smallest penetration.
fn sat_gap(a: &[Pt; 4], b: &[Pt; 4], axes: &[Pt; 4]) -> f64 {
    let mut gap = f64::NEG_INFINITY;
    for n in axes {
        let (mut amin, mut amax) = (f64::INFINITY, f64::NEG_INFINITY);
        for p in a {
            let d = n.dot(*p);
            amin = amin.min(d);
            amax = amax.max(d);
        }
        let (mut bmin, mut bmax) = (f64::INFINITY, f64::NEG_INFINITY);
        for p in b {
            let d = n.dot(*p);
            bmin = bmin.min(d);
            bmax = bmax.max(d);
        }
        gap = gap.max((bmin - amax).max(amin - bmax));
    }
    gap
}

/// A box around the centres of a run of bases (a move's path) and the
/// largest of their radii: a cheap test that no base of the run can
/// overlap (or be within `gap` of) another base.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    lo: Pt,
    hi: Pt,
    radius: f64,
}

impl Bounds {
    pub fn of(bases: &[Base]) -> Bounds {
        let mut b = Bounds {
            lo: Pt::new(f64::INFINITY, f64::INFINITY),
            hi: Pt::new(f64::NEG_INFINITY, f64::NEG_INFINITY),
            radius: 0.0,
        };
        for x in bases {
            b.lo = Pt::new(b.lo.x.min(x.centre.x), b.lo.y.min(x.centre.y));
            b.hi = Pt::new(b.hi.x.max(x.centre.x), b.hi.y.max(x.centre.y));
            b.radius = b.radius.max(x.radius());
        }
        b
    }

    /// The bounding box of the segment from `p` to `q` (a run of points:
    /// radius 0).
    pub fn of_segment(p: Pt, q: Pt) -> Bounds {
        Bounds {
            lo: Pt::new(p.x.min(q.x), p.y.min(q.y)),
            hi: Pt::new(p.x.max(q.x), p.y.max(q.y)),
            radius: 0.0,
        }
    }

    /// The run's bounds with every base's centre free to move `by` further
    /// (its radius taken as that much larger).
    pub fn widened(self, by: f64) -> Bounds {
        Bounds {
            radius: self.radius + by,
            ..self
        }
    }

    /// Is every base of the run clearly further than `gap` from `o` (with
    /// a margin far above rounding, so that an exact test could only agree)?
    pub fn clear_of(&self, o: &Base, gap: f64) -> bool {
        let c = o.centre;
        let dx = (self.lo.x - c.x).max(c.x - self.hi.x).max(0.0);
        let dy = (self.lo.y - c.y).max(c.y - self.hi.y).max(0.0);
        let reach = self.radius + o.radius() + gap + 1e-6;
        dx * dx + dy * dy > reach * reach
    }

    /// Is every base of the run certainly inside the box from (0, 0) to
    /// (`width`, `depth`)? (No corner is further from its centre than the
    /// radius; `false` means "look at each base to know".)
    pub fn within(&self, width: f64, depth: f64) -> bool {
        let r = self.radius;
        self.lo.x - r >= 0.0
            && self.lo.y - r >= 0.0
            && self.hi.x + r <= width
            && self.hi.y + r <= depth
    }

    /// Is every base of the run clearly apart from the box `lo`..`hi`?
    pub fn clear_of_box(&self, (lo, hi): (Pt, Pt)) -> bool {
        let dx = (self.lo.x - hi.x).max(lo.x - self.hi.x).max(0.0);
        let dy = (self.lo.y - hi.y).max(lo.y - self.hi.y).max(0.0);
        let reach = self.radius + 1e-6;
        dx * dx + dy * dy > reach * reach
    }
}

/// A unit's base: a rectangle `width` wide (across its front) and `depth`
/// deep, centred on `centre`, its front edge facing the compass bearing
/// `facing`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Base {
    /// The centre point (the stand's position, where that matters).
    pub centre: Pt,
    /// The compass bearing the front edge faces, degrees.
    pub facing: f64,
    /// Along the front edge.
    pub width: f64,
    /// From the front edge to the rear edge.
    pub depth: f64,
    /// The unit vector of `facing`, computed once (the hot path asks for it
    /// constantly). Build bases with [`Base::new`] or the movement methods,
    /// which keep it in step with `facing`.
    pub(super) fwd: Pt,
    /// Half the diagonal, computed once too (bounds on distances ask for it
    /// constantly); width and depth never change after [`Base::new`].
    pub(super) rad: f64,
}

impl Base {
    /// Every number of the base, as bits: two bases are the same base only
    /// when these are equal (the same coordinates, sign of zero and all).
    pub fn bits(&self) -> [u64; 8] {
        [
            self.centre.x.to_bits(),
            self.centre.y.to_bits(),
            self.facing.to_bits(),
            self.width.to_bits(),
            self.depth.to_bits(),
            self.fwd.x.to_bits(),
            self.fwd.y.to_bits(),
            self.rad.to_bits(),
        ]
    }

    /// A base at `centre` facing `facing` (a bearing in degrees, kept as
    /// given).
    pub fn new(centre: Pt, facing: f64, width: f64, depth: f64) -> Base {
        Base {
            centre,
            facing,
            width,
            depth,
            fwd: Pt::from_bearing(facing),
            rad: 0.5 * (width * width + depth * depth).sqrt(),
        }
    }

    /// The same base turned to face `facing` (its radius, which the turn
    /// leaves alone, kept rather than worked out again: the same bits).
    pub fn facing_to(&self, facing: f64) -> Base {
        Base {
            facing,
            fwd: Pt::from_bearing(facing),
            ..*self
        }
    }

    /// The same base with another width (and depth).
    pub fn sized(&self, width: f64, depth: f64) -> Base {
        Base::new(self.centre, self.facing, width, depth)
    }

    /// The unit vector the base faces.
    #[inline]
    pub fn forward(&self) -> Pt {
        self.fwd
    }

    /// Half the diagonal: no point of the base is further from its centre.
    #[inline]
    pub fn radius(&self) -> f64 {
        self.rad
    }

    /// The unit vector to the unit's right (its facing turned 90 degrees
    /// clockwise).
    pub fn right(&self) -> Pt {
        let f = self.forward();
        Pt::new(f.y, -f.x)
    }

    /// The corners: front-left, front-right, rear-right, rear-left.
    pub fn corners(&self) -> [Pt; 4] {
        let f = self.forward() * (self.depth * 0.5);
        let r = self.right() * (self.width * 0.5);
        rect(self.centre, f, r)
    }

    /// A point in the unit's frame: how far it is ahead of the centre (along
    /// the facing) and to the right of it.
    pub fn local(&self, p: Pt) -> (f64, f64) {
        let d = p - self.centre;
        (d.dot(self.forward()), d.dot(self.right()))
    }

    /// Another base's corners in this unit's frame, as (ahead, right).
    pub(super) fn local_corners(&self, o: &Base) -> [Pt; 4] {
        let (f, r) = (self.forward(), self.right());
        o.corners().map(|p| {
            let d = p - self.centre;
            Pt::new(d.dot(f), d.dot(r))
        })
    }

    fn axes(&self, o: &Base) -> [Pt; 4] {
        [self.forward(), self.right(), o.forward(), o.right()]
    }

    /// Whether the interiors of the two bases intersect by more than
    /// [`EPS`]; bases that only touch do not overlap.
    pub fn overlaps(&self, o: &Base) -> bool {
        let reach = self.radius() + o.radius();
        if self.centre.dist(o.centre) >= reach {
            return false;
        }
        // `Relative::gap` is within a rounding of `sat_gap`, far less than
        // the slack: clear of -EPS by more, it decides.
        let (gap, slack) = (Relative::new(self, o).gap(self, o), SLACK * self.scale(o));
        if gap < -EPS - slack {
            return true;
        }
        if gap > -EPS + slack {
            return false;
        }
        sat_gap(&self.corners(), &o.corners(), &self.axes(o)) < -EPS
    }

    /// The closest distance between the two rectangles; 0 when they touch
    /// or overlap.
    ///
    /// Exactly the root of the least of the 32 corner-to-edge squares
    /// [`point_segment_distance_sq`] gives (corners of each base to edges
    /// of the other) once [`sat_gap`] finds a gap. Two shortcuts keep the
    /// bits: [`Relative::gap`] settles the gap's sign when it is further
    /// from zero than [`SLACK`] allows for rounding, and only the pairs
    /// that [`Base::nearest_pairs`] cannot prove further than the least
    /// are measured (the least of a set does not depend on which larger
    /// members are left out).
    pub fn distance(&self, o: &Base) -> f64 {
        let slack = SLACK * self.scale(o);
        let rel = Relative::new(self, o);
        let gap = rel.gap(self, o);
        if gap < -slack {
            return 0.0;
        }
        let (a, b) = (self.corners(), o.corners());
        if gap <= slack && sat_gap(&a, &b, &self.axes(o)) <= 0.0 {
            return 0.0;
        }
        let (la, lb) = (rel.a_in_b(self), rel.b_in_a(o));
        let (ra, rb) = (o.outside_sq(&la), self.outside_sq(&lb));
        let least = ra
            .iter()
            .chain(&rb)
            .fold(f64::INFINITY, |m, x| if *x < m { *x } else { m });
        let limit = (least.sqrt() + slack) * (least.sqrt() + slack);
        self.nearest_pairs(&a, &b, &lb, &rb, limit)
            .min(o.nearest_pairs(&b, &a, &la, &ra, limit))
            .sqrt()
    }

    /// Is [`Base::distance`] to `o` certainly more than `d`? Decided by the
    /// separating axes alone ([`Relative::gap`]): along any axis the two
    /// bases are no further apart than they are, so a gap clear of `d` by
    /// more than any rounding (of the gap and of the distance: [`SLACK`]
    /// of the scale, and [`EPS`] besides) puts the distance beyond `d`.
    /// A few products where the distance measures up to 32 corner-to-edge
    /// pairs; `false` means "measure to know".
    #[inline]
    pub fn surely_apart(&self, o: &Base, d: f64) -> bool {
        let slack = SLACK * self.scale(o) + EPS;
        Relative::new(self, o).gap(self, o) > d + slack
    }

    /// Is [`Base::distance`] to `o` certainly less than `d`? Bases that
    /// overlap by more than rounding are 0 apart (as the distance says);
    /// else a corner of this base no further than `d`, less any rounding
    /// ([`Base::surely_apart`]'s), from `o` puts the bases nearer than `d`.
    /// `false` means "measure to know".
    #[inline]
    pub fn surely_within(&self, o: &Base, d: f64) -> bool {
        let slack = SLACK * self.scale(o);
        if Relative::new(self, o).gap(self, o) < -slack {
            return 0.0 < d;
        }
        let limit = d - slack - EPS;
        self.corners()
            .iter()
            .any(|c| o.distance_to_point(*c) < limit)
    }

    /// A bound on the size of the coordinates of the two bases (centres,
    /// corners, and corners in either frame): the rounding of any
    /// computation on them is a few units in the last place of it.
    pub(super) fn scale(&self, o: &Base) -> f64 {
        let c = |b: &Base| b.centre.x.abs() + b.centre.y.abs() + b.radius();
        1.0 + c(self) + c(o)
    }

    /// Half the depth and half the width, as lengths (a negative size
    /// makes the same rectangle as its opposite).
    fn half_sizes(&self) -> (f64, f64) {
        (self.depth.abs() * 0.5, self.width.abs() * 0.5)
    }

    /// Per point (in this unit's frame), the square of its distance from
    /// the base: 0 inside it.
    fn outside_sq(&self, local: &[Pt; 4]) -> [f64; 4] {
        let (hd, hw) = self.half_sizes();
        local.map(|q| {
            let du = positive(q.x.abs() - hd);
            let dv = positive(q.y.abs() - hw);
            du * du + dv * dv
        })
    }

    /// The square of the distance from a point (in this unit's frame) to
    /// edge `i` of the base, the edge from corner `i` to the next of
    /// [`Base::corners`]: front, right, rear, left (for a negative size,
    /// the opposite edge: the line is at the signed half-size, the edge's
    /// extent along it the length).
    fn edge_sq(&self, q: Pt, i: usize) -> f64 {
        let (hd, hw) = (self.depth * 0.5, self.width * 0.5);
        let (ld, lw) = self.half_sizes();
        let (across, along) = match i {
            0 => (q.x - hd, q.y.abs() - lw),
            1 => (q.y - hw, q.x.abs() - ld),
            2 => (q.x + hd, q.y.abs() - lw),
            _ => (q.y + hw, q.x.abs() - ld),
        };
        let along = positive(along);
        across * across + along * along
    }

    /// The least [`point_segment_distance_sq`] from the points `pts` to
    /// this base's edges (`corners` its [`Base::corners`]) over the pairs
    /// that may be within `limit`: a point whose distance from the base
    /// (`outside`, squared), or from an edge ([`Base::edge_sq`], `local`
    /// the points in this frame), exceeds `limit` is skipped. Those agree
    /// with the exact pair to far less than the slack in `limit`, so no
    /// skipped pair attains the least; both edges at a corner are kept
    /// when it is nearest (the two formulas may differ in the last bit).
    fn nearest_pairs(
        &self,
        corners: &[Pt; 4],
        pts: &[Pt; 4],
        local: &[Pt; 4],
        outside: &[f64; 4],
        limit: f64,
    ) -> f64 {
        // The pairs first (bit `4 * j + i`), then their exact squares.
        let mut near = 0u32;
        for j in 0..4 {
            if outside[j] > limit {
                continue;
            }
            for i in 0..4 {
                if self.edge_sq(local[j], i) <= limit {
                    near |= 1 << (4 * j + i);
                }
            }
        }
        let mut d2 = f64::INFINITY;
        while near != 0 {
            let k = near.trailing_zeros() as usize;
            near &= near - 1;
            let (j, i) = (k / 4, k % 4);
            // No NaN about, and no -0 (a sum of squares): `min` itself.
            let e = point_segment_distance_sq(pts[j], corners[i], corners[(i + 1) % 4]);
            d2 = if e < d2 { e } else { d2 };
        }
        d2
    }

    /// The closest distance from the base to a point; 0 inside it.
    pub fn distance_to_point(&self, p: Pt) -> f64 {
        let (u, v) = self.local(p);
        let du = (u.abs() - self.depth * 0.5).max(0.0);
        let dv = (v.abs() - self.width * 0.5).max(0.0);
        (du * du + dv * dv).sqrt()
    }

    /// Whether the bases are in contact: no more than [`CONTACT`] apart.
    pub fn in_contact(&self, o: &Base) -> bool {
        !self.surely_apart(o, CONTACT) && self.distance(o) <= CONTACT
    }

    /// Whether the point lies on or within the base (within [`EPS`]).
    pub fn contains_point(&self, p: Pt) -> bool {
        let (u, v) = self.local(p);
        u.abs() <= self.depth * 0.5 + EPS && v.abs() <= self.width * 0.5 + EPS
    }

    /// Whether the segment from `a` to `b` passes through the interior of
    /// the base (deeper than [`EPS`]); grazing a corner or running along an
    /// edge is not hitting.
    pub fn segment_hits(&self, a: Pt, b: Pt) -> bool {
        let (au, av) = self.local(a);
        let (bu, bv) = self.local(b);
        let hd = self.depth * 0.5 - EPS;
        let hw = self.width * 0.5 - EPS;
        if hd <= 0.0 || hw <= 0.0 {
            return false;
        }
        // Both ends on or beyond one line of the box: that line's check in
        // `clip_segment_box` has `q <= 0` and either `p = 0` (no hit), or
        // `p > 0` and `t1 <= 0`, or `p < 0` and `|q| >= |p|` (rounding is
        // monotonic), so `t0 >= 1`; either way `t0 < t1` fails.
        let beyond = |x: f64, y: f64, h: f64| (x >= h && y >= h) || (x <= -h && y <= -h);
        if beyond(au, bu, hd) || beyond(av, bv, hw) {
            return false;
        }
        clip_segment_box((au, av), (bu - au, bv - av), hd, hw)
    }
}

/// The corners of the rectangle about `c` with half-axes `f` (ahead) and
/// `r` (to the right), in the order of [`Base::corners`].
fn rect(c: Pt, f: Pt, r: Pt) -> [Pt; 4] {
    [c + f - r, c + f + r, c - f + r, c - f - r]
}

/// Where two bases `a` and `b` lie as seen from each other, from their
/// centres and axes alone: within a rounding (a few units in the last
/// place of [`Base::scale`]) of what their corners give, which is all the
/// fast paths ask of it.
#[derive(Clone, Copy, Debug)]
struct Relative {
    /// `b`'s centre in `a`'s frame, as (ahead, right).
    b_in_a: Pt,
    /// `a`'s centre in `b`'s frame.
    a_in_b: Pt,
    /// `a`'s forward dotted with `b`'s forward (the cosine between them).
    cos: f64,
    /// `a`'s forward dotted with `b`'s right.
    sin: f64,
}

impl Relative {
    fn new(a: &Base, b: &Base) -> Relative {
        let (fa, fb) = (a.forward(), b.forward());
        let d = b.centre - a.centre;
        Relative {
            b_in_a: Pt::new(d.dot(fa), d.dot(a.right())),
            a_in_b: Pt::new(-d.dot(fb), -d.dot(b.right())),
            cos: fa.dot(fb),
            sin: fa.dot(b.right()),
        }
    }

    /// What [`sat_gap`] returns for the two bases' corners and
    /// [`Base::axes`]: along each axis, the centres' separation less each
    /// base's extent (its half-depth and half-width times the cosines),
    /// the same separation in exact arithmetic.
    fn gap(&self, a: &Base, b: &Base) -> f64 {
        let (c, s) = (self.cos.abs(), self.sin.abs());
        let (ha, wa) = a.half_sizes();
        let (hb, wb) = b.half_sizes();
        let along_fa = self.b_in_a.x.abs() - ha - (hb * c + wb * s);
        let along_ra = self.b_in_a.y.abs() - wa - (hb * s + wb * c);
        let along_fb = self.a_in_b.x.abs() - hb - (ha * c + wa * s);
        let along_rb = self.a_in_b.y.abs() - wb - (ha * s + wa * c);
        // `max` for numbers that are never NaN, as one comparison.
        let larger = |x: f64, y: f64| if x > y { x } else { y };
        larger(larger(along_fa, along_ra), larger(along_fb, along_rb))
    }

    /// `b`'s corners in `a`'s frame (there `b`'s forward is
    /// `(cos, -sin)` and its right `(sin, cos)`).
    fn b_in_a(&self, b: &Base) -> [Pt; 4] {
        let f = Pt::new(self.cos, -self.sin) * (b.depth * 0.5);
        let r = Pt::new(self.sin, self.cos) * (b.width * 0.5);
        rect(self.b_in_a, f, r)
    }

    /// `a`'s corners in `b`'s frame (there `a`'s forward is `(cos, sin)`
    /// and its right `(-sin, cos)`).
    fn a_in_b(&self, a: &Base) -> [Pt; 4] {
        let f = Pt::new(self.cos, self.sin) * (a.depth * 0.5);
        let r = Pt::new(-self.sin, self.cos) * (a.width * 0.5);
        rect(self.a_in_b, f, r)
    }
}

/// Liang-Barsky: whether the segment `p + t*d`, t in [0, 1], passes through
/// the open box |u| < hu, |v| < hv with a part of positive length.
fn clip_segment_box(p: (f64, f64), d: (f64, f64), hu: f64, hv: f64) -> bool {
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    let checks = [
        (-d.0, p.0 + hu),
        (d.0, hu - p.0),
        (-d.1, p.1 + hv),
        (d.1, hv - p.1),
    ];
    for (pk, qk) in checks {
        if pk == 0.0 {
            if qk <= 0.0 {
                return false;
            }
        } else {
            let r = qk / pk;
            if pk < 0.0 {
                t0 = t0.max(r);
            } else {
                t1 = t1.min(r);
            }
        }
    }
    t0 < t1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::battlefield::tests::{
        cases, close, each_pair, nudge, random_pair, random_size, unit, Rng,
    };
    use crate::run::battlefield::Zone;

    // -- Distances -----------------------------------------------------------

    /// Distances are between the closest parts of the bases.
    #[test]
    fn distance_between_bases() {
        let a = unit(0.0, 0.0, 0.0);
        assert!(close(a.distance(&unit(0.0, 4.0, 0.0)), 3.0, 1e-12));
        assert!(close(a.distance(&unit(0.7, 4.0, 180.0)), 3.0, 1e-12));
        // Corner to corner: front-right (1, 0.5) to rear-left (4, 4.5).
        assert!(close(a.distance(&unit(5.0, 5.0, 0.0)), 5.0, 1e-12));
        assert!(close(
            a.distance(&unit(4.0, 3.0, 0.0)),
            (8.0f64).sqrt(),
            1e-12
        ));
        assert_eq!(a.distance(&unit(0.5, 0.5, 10.0)), 0.0);
        assert!(close(a.distance_to_point(Pt::new(4.0, 4.5)), 5.0, 1e-12));
        assert_eq!(a.distance_to_point(Pt::new(0.3, 0.2)), 0.0);
    }

    /// "Shooting range": range is measured from any part of the unit, so a
    /// target near a corner is in range though the centres are further apart.
    #[test]
    fn range_from_any_part() {
        let shooter = unit(0.0, 0.0, 0.0);
        let target = Base::new(Pt::new(3.0, 3.5), 45.0, 2.0, 1.0);
        let d = shooter.distance(&target);
        assert!(d < 4.0 && shooter.centre.dist(target.centre) > 4.0, "{d}");
        assert_eq!(shooter.zone_of(&target), Zone::Flank);
    }

    /// Touching is contact, not overlap.
    #[test]
    fn overlaps_versus_touching() {
        let a = unit(0.0, 0.0, 0.0);
        assert!(!a.overlaps(&unit(2.0, 0.0, 0.0)));
        assert!(!a.overlaps(&unit(0.0, 1.0, 0.0)));
        assert!(!a.overlaps(&unit(2.0, 1.0, 0.0))); // corner to corner
        assert!(a.overlaps(&unit(1.9, 0.0, 0.0)));
        assert!(a.overlaps(&unit(0.0, 0.0, 45.0)));
        assert!(!a.overlaps(&unit(2.5, 0.0, 0.0)));
        assert!(a.contains_point(Pt::new(1.0, 0.5)));
        assert!(!a.contains_point(Pt::new(1.1, 0.5)));
    }

    /// Line of sight through a base ("Shooting criteria": friends or enemy in
    /// between); grazing a corner or an edge is not passing through.
    #[test]
    fn segments_through_bases() {
        let a = unit(0.0, 0.0, 0.0);
        assert!(a.segment_hits(Pt::new(-5.0, 0.0), Pt::new(5.0, 0.0)));
        assert!(a.segment_hits(Pt::new(0.0, 0.0), Pt::new(0.0, 9.0)));
        assert!(!a.segment_hits(Pt::new(-5.0, 0.5), Pt::new(5.0, 0.5))); // along an edge
        assert!(!a.segment_hits(Pt::new(0.0, 1.5), Pt::new(2.0, -0.5))); // a corner
        assert!(!a.segment_hits(Pt::new(-5.0, 3.0), Pt::new(5.0, 3.0)));
        assert!(!a.segment_hits(Pt::new(-5.0, 0.0), Pt::new(-1.5, 0.0)));
    }

    /// `Bounds::within` says a run of bases is inside the table only when
    /// every corner of every base is (`Field::holds` would agree), and it
    /// says so for most runs clear of the edges.
    #[test]
    fn a_run_within_the_table_holds_every_corner() {
        let mut r = Rng(11);
        let (w, d) = (48.0, 32.0);
        let (mut said, mut clear) = (0, 0);
        let runs = cases() / 10;
        for _ in 0..runs {
            let (bw, bd) = random_size(&mut r);
            let run: Vec<Base> = (0..1 + r.below(6))
                .map(|_| {
                    let c = Pt::new(r.range(-3.0, w + 3.0), r.range(-3.0, d + 3.0));
                    Base::new(c, r.range(-360.0, 360.0), bw, bd)
                })
                .collect();
            let inside = run.iter().all(|b| {
                b.corners()
                    .iter()
                    .all(|p| p.x >= 0.0 && p.y >= 0.0 && p.x <= w && p.y <= d)
            });
            let within = Bounds::of(&run).within(w, d);
            assert!(!within || inside, "{run:?}");
            let margin = run.iter().all(|b| {
                let c = b.centre;
                let m = b.radius() + 1e-9;
                c.x - m >= 0.0 && c.y - m >= 0.0 && c.x + m <= w && c.y + m <= d
            });
            if margin {
                clear += 1;
                said += within as usize;
            }
        }
        assert!(clear * 5 > runs && said == clear, "{said} of {clear}");
    }

    /// `Base::distance` before its shortcuts, verbatim.
    fn distance_reference(s: &Base, o: &Base) -> f64 {
        let (a, b) = (s.corners(), o.corners());
        if sat_gap(&a, &b, &s.axes(o)) <= 0.0 {
            return 0.0;
        }
        let mut d2 = f64::INFINITY;
        for i in 0..4 {
            let (a0, a1) = (a[i], a[(i + 1) % 4]);
            let (b0, b1) = (b[i], b[(i + 1) % 4]);
            for j in 0..4 {
                d2 = d2.min(point_segment_distance_sq(b[j], a0, a1));
                d2 = d2.min(point_segment_distance_sq(a[j], b0, b1));
            }
        }
        d2.sqrt()
    }

    #[test]
    fn distance_is_the_original_bit_for_bit() {
        let (mut zero, mut small) = (0, 0);
        each_pair(1, |a, b| {
            let d = a.distance(b);
            assert_eq!(
                d.to_bits(),
                distance_reference(a, b).to_bits(),
                "{a:?} {b:?}"
            );
            zero += (d == 0.0) as usize;
            small += (d > 0.0 && d <= CONTACT) as usize;
        });
        // The cases cover overlaps and touching, near misses and gaps.
        assert!(
            zero > cases() / 10 && small > cases() / 50,
            "{zero} {small}"
        );
    }

    /// `surely_apart(o, d)` never says so of bases `d` or less apart (by
    /// the exact distance, bit for bit as measured), for limits about the
    /// distance itself (at it, a hair either side, a rounding's width) and
    /// the rules' usual ones; and it says so of most pairs plainly further.
    #[test]
    fn surely_apart_only_when_the_distance_says_so() {
        let (mut said, mut plainly) = (0usize, 0usize);
        each_pair(9, |a, b| {
            let x = a.distance(b);
            for d in [
                x,
                x - 1e-12,
                x + 1e-12,
                x - 1e-9,
                x - 2e-6,
                x - 0.01,
                0.0,
                CONTACT,
                1.0,
                3.0,
            ] {
                let sure = a.surely_apart(b, d);
                assert!(!sure || x > d, "{a:?} {b:?} {d} {x}");
                said += sure as usize;
            }
            // Squared to each other, the larger of the two axes' gaps is at
            // least the distance over the square root of 2: a limit 0.01
            // under that is plainly passed.
            let square = (a.facing - b.facing).rem_euclid(90.0) == 0.0;
            if square && x > 0.1 {
                plainly += 1;
                assert!(
                    a.surely_apart(b, x / std::f64::consts::SQRT_2 - 0.01),
                    "{a:?} {b:?} {x}"
                );
            }
        });
        assert!(
            said > cases() && plainly > cases() / 100,
            "{said} {plainly}"
        );
    }

    /// `surely_within(o, d)` never says so of bases `d` or more apart (by
    /// the exact distance, bit for bit as measured), for limits about the
    /// distance itself and the rules' usual ones; and it says so of most
    /// pairs plainly nearer, overlapping or not.
    #[test]
    fn surely_within_only_when_the_distance_says_so() {
        let (mut said, mut plainly, mut apart) = (0usize, 0usize, 0usize);
        each_pair(10, |a, b| {
            let x = a.distance(b);
            for d in [
                x,
                x - 1e-12,
                x + 1e-12,
                x + 1e-9,
                x + 2e-6,
                x + 0.01,
                0.0,
                CONTACT,
                1.0,
                3.0,
            ] {
                let sure = a.surely_within(b, d);
                assert!(!sure || x < d, "{a:?} {b:?} {d} {x}");
                said += sure as usize;
            }
            // Squared to each other, with a corner nearest (the least of
            // the pairs is a corner's to an edge, this one's or the
            // other's): half as far again is plainly nearer.
            let square = (a.facing - b.facing).rem_euclid(90.0) == 0.0;
            if square && x > 0.1 && x < 3.0 && a.surely_within(b, 2.0 * x) {
                plainly += 1;
            }
            apart += (square && x > 0.1 && x < 3.0) as usize;
        });
        assert!(
            said > cases() && plainly * 2 > apart,
            "{said} {plainly} {apart}"
        );
    }

    /// `Base::overlaps` before the shortcuts, verbatim.
    fn overlaps_reference(s: &Base, o: &Base) -> bool {
        let reach = s.radius() + o.radius();
        if s.centre.dist(o.centre) >= reach {
            return false;
        }
        sat_gap(&s.corners(), &o.corners(), &s.axes(o)) < -EPS
    }

    /// `Base::segment_hits` before the shortcuts, verbatim.
    fn segment_hits_reference(s: &Base, a: Pt, b: Pt) -> bool {
        let (au, av) = s.local(a);
        let (bu, bv) = s.local(b);
        let hd = s.depth * 0.5 - EPS;
        let hw = s.width * 0.5 - EPS;
        if hd <= 0.0 || hw <= 0.0 {
            return false;
        }
        clip_segment_box((au, av), (bu - au, bv - av), hd, hw)
    }

    #[test]
    fn overlaps_is_the_original() {
        let mut yes = 0;
        each_pair(4, |a, b| {
            let got = a.overlaps(b);
            assert_eq!(got, overlaps_reference(a, b), "{a:?} {b:?}");
            yes += got as usize;
        });
        assert!(yes > cases() / 10, "{yes}");
    }

    /// A point near `b`: its centre, a corner, a corner nudged, a point on
    /// the quarter grid nearby, or one on the line of an edge.
    fn point_near(r: &mut Rng, b: &Base) -> Pt {
        let cs = b.corners();
        let (f, rt) = (b.forward(), b.right());
        match r.below(5) {
            0 => b.centre,
            1 => cs[r.below(4)],
            2 => cs[r.below(4)] + Pt::new(nudge(r), nudge(r)),
            3 => b.centre + Pt::new(r.quarter(-5.0, 5.0), r.quarter(-5.0, 5.0)),
            _ => {
                let along = r.quarter(-5.0, 5.0);
                let side = r.pick(&[1.0, -1.0]) * (b.width * 0.5 - r.pick(&[0.0, EPS]));
                b.centre + f * along + rt * side
            }
        }
    }

    #[test]
    fn segment_hits_is_the_original() {
        let mut r = Rng(5);
        let mut hits = 0;
        for _ in 0..cases() {
            let (a, b) = random_pair(&mut r);
            // Lines of sight between the pair, and segments about `a`.
            let p = point_near(&mut r, &b);
            let q = if r.below(2) == 0 {
                point_near(&mut r, &a)
            } else {
                point_near(&mut r, &b)
            };
            for (s, t) in [(p, q), (q, p), (p, p)] {
                let got = a.segment_hits(s, t);
                assert_eq!(got, segment_hits_reference(&a, s, t), "{a:?} {s:?} {t:?}");
                hits += got as usize;
            }
        }
        assert!(hits > cases() / 10, "{hits}");
    }
}
