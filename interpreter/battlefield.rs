//! The pure geometry of a wargames table: points, unit bases, terrain shapes,
//! the zones around a unit, distances, contact, and the movement primitives a
//! rulebook describes (advance, sideways, oblique, wheel, pivot, charge). It
//! knows nothing of any ruleset: a ruleset's facts ("the target is to the
//! flank", "within 3 TUM directly in front") are answered from it.
//!
//! # Frame
//!
//! Coordinates are `f64` in the ruleset's measure (TUM for Tilly's Very Bad
//! Day). The table runs from (0, 0) to (width, depth); y grows toward the far
//! edge. A facing is a compass bearing in degrees: 0 faces +y, 90 faces +x
//! (clockwise). In a unit's own frame a point is `(ahead, right)` of its
//! centre: see [`Base::local`].
//!
//! # Determinism
//!
//! The same inputs give bit-identical results on every machine. Nothing here
//! calls the platform's `sin`, `cos`, `atan2`, `hypot`, `exp`, `powf` or
//! `mul_add`: [`sin_deg`], [`cos_deg`] and [`atan2_deg`] are built from
//! `+ - * /` and `sqrt` (all correctly rounded by IEEE 754), with `round`
//! and `ceil` (exact) for range reduction and step counts.
//!
//! # Zones (Tilly's Very Bad Day, "Unit facing and position")
//!
//! Reading: Figure 3 is lost from the text; this is the reading. In the
//! unit's own frame (ahead `u`, right `v`, half-width `hw`, half-depth `hd`):
//!
//! - the FRONT zone is the open strip ahead of the front edge between the
//!   extended side edges: `u > hd`, `|v| < hw`;
//! - the REAR zone is the open strip behind the rear edge: `u < -hd`,
//!   `|v| < hw`;
//! - the two FLANK zones are everything beyond the extended side edges, at
//!   any `u`: `v < -hw` (left) and `v > hw` (right);
//! - the unit's own base belongs to no zone.
//!
//! Then, as the book says: another base is *to front* if any part of it (a
//! positive area, more than 1e-9) lies in the front zone, even if part of it
//! is also in a flank zone; *to flank* if it is not to front and any part is
//! in a flank zone, even if part is also in the rear zone; *to rear*
//! otherwise (entirely within the rear zone). The parts are found by clipping
//! the other base's rectangle, in this unit's frame, with the zone's
//! half-planes (Sutherland-Hodgman) and measuring the area left. Two units
//! in contact front edge to front edge are thus each to the other's front,
//! and two units side by side are each to the other's flank.
//!
//! "Directly in front" (zones of control) is the front zone cut off at a
//! distance from the front edge: see [`Base::in_front_within`].

use std::f64::consts::PI;
use std::ops::{Add, Mul, Neg, Sub};

/// Length tolerance: overlaps, alignment and "within" tests allow this much
/// rounding.
pub const EPS: f64 = 1e-6;

/// Two bases this close (or closer) are in contact.
pub const CONTACT: f64 = 0.01;

/// Two bases whose facings differ by no more than this many degrees face
/// the same way for a group (see [`Base::linked_with`]).
pub const GROUP_FACING: f64 = 1.0;

/// A part of a base smaller than this area is no part at all (zones).
pub const AREA_EPS: f64 = 1e-9;

/// How far, relative to a pair's coordinates (see `Base::scale`), a fast
/// path's cheap estimate must clear a boundary before it decides: about a
/// million times the rounding of any computation here (a few units in the
/// last place), so the exact computation could only decide the same way.
const SLACK: f64 = 1e-9;

/// Degrees to radians.
const DEG: f64 = PI / 180.0;
/// Radians to degrees.
const RAD: f64 = 180.0 / PI;

/// The largest step, in degrees, between the sampled bases of a wheel.
const WHEEL_STEP: f64 = 5.0;

/// The largest step, in the measure, between sampled bases of a move.
const MOVE_STEP: f64 = 0.1;

// ---------------------------------------------------------------------------
// Points and angles
// ---------------------------------------------------------------------------

/// A point (or a vector) on the table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pt {
    /// Across the table, from the left edge as the first army sees it.
    pub x: f64,
    /// Toward the far edge, from the first army's base edge.
    pub y: f64,
}

impl Pt {
    /// The point (x, y).
    pub const fn new(x: f64, y: f64) -> Pt {
        Pt { x, y }
    }

    /// The unit vector of a compass bearing (0 = +y, 90 = +x).
    pub fn from_bearing(bearing: f64) -> Pt {
        let (s, c) = sin_cos_deg(bearing);
        Pt::new(s, c)
    }

    /// Dot product.
    pub fn dot(self, o: Pt) -> f64 {
        self.x * o.x + self.y * o.y
    }

    /// The z component of the cross product (positive when `o` is
    /// counter-clockwise of `self`).
    pub fn cross(self, o: Pt) -> f64 {
        self.x * o.y - self.y * o.x
    }

    /// Length.
    pub fn len(self) -> f64 {
        self.dot(self).sqrt()
    }

    /// Distance to another point.
    pub fn dist(self, o: Pt) -> f64 {
        (self - o).len()
    }
}

impl Add for Pt {
    type Output = Pt;
    fn add(self, o: Pt) -> Pt {
        Pt::new(self.x + o.x, self.y + o.y)
    }
}

impl Sub for Pt {
    type Output = Pt;
    fn sub(self, o: Pt) -> Pt {
        Pt::new(self.x - o.x, self.y - o.y)
    }
}

impl Mul<f64> for Pt {
    type Output = Pt;
    fn mul(self, k: f64) -> Pt {
        Pt::new(self.x * k, self.y * k)
    }
}

impl Neg for Pt {
    type Output = Pt;
    fn neg(self) -> Pt {
        Pt::new(-self.x, -self.y)
    }
}

/// An angle in degrees brought into (-180, 180]. Angles already in range
/// come back unchanged, bit for bit.
pub fn norm_angle(a: f64) -> f64 {
    if a > -180.0 && a <= 180.0 {
        return a;
    }
    // k * 360 is exact and, k being the nearest whole turn, the subtraction
    // is exact too (Sterbenz) for every |a| below 2^53 / 360.
    let k = (a / 360.0).round();
    let mut r = a - k * 360.0;
    if r <= -180.0 {
        r += 360.0;
    }
    if r > 180.0 {
        r -= 360.0;
    }
    r
}

/// An angle in degrees brought into [0, 360) (a bearing).
pub fn norm_bearing(a: f64) -> f64 {
    let r = norm_angle(a);
    if r < 0.0 {
        let b = r + 360.0;
        // A tiny negative angle rounds up to 360: that is bearing 0.
        if b >= 360.0 {
            0.0
        } else {
            b
        }
    } else {
        r + 0.0 // turns -0.0 into 0.0
    }
}

/// sin x for x in [0, pi/4] radians: Taylor series to x^17 (the next term is
/// below 1e-16 there), in Horner form.
fn sin_poly(x: f64) -> f64 {
    let x2 = x * x;
    let p = 1.0
        + x2 * (-1.0 / 6.0
            + x2 * (1.0 / 120.0
                + x2 * (-1.0 / 5040.0
                    + x2 * (1.0 / 362880.0
                        + x2 * (-1.0 / 39916800.0
                            + x2 * (1.0 / 6227020800.0
                                + x2 * (-1.0 / 1307674368000.0
                                    + x2 * (1.0 / 355687428096000.0))))))));
    x * p
}

/// cos x for x in [0, pi/4] radians: Taylor series to x^18.
fn cos_poly(x: f64) -> f64 {
    let x2 = x * x;
    1.0 + x2
        * (-1.0 / 2.0
            + x2 * (1.0 / 24.0
                + x2 * (-1.0 / 720.0
                    + x2 * (1.0 / 40320.0
                        + x2 * (-1.0 / 3628800.0
                            + x2 * (1.0 / 479001600.0
                                + x2 * (-1.0 / 87178291200.0
                                    + x2 * (1.0 / 20922789888000.0
                                        + x2 * (-1.0 / 6402373705728000.0)))))))))
}

/// Sine of an angle in degrees, deterministic (see the module doc), exact
/// at multiples of 90 degrees, within a few units in the last place elsewhere.
pub fn sin_deg(a: f64) -> f64 {
    sin_cos_deg(a).0
}

/// Cosine of an angle in degrees, deterministic (see the module doc), exact
/// at multiples of 90 degrees, within a few units in the last place elsewhere.
pub fn cos_deg(a: f64) -> f64 {
    sin_cos_deg(a).1
}

/// [`sin_deg`] and [`cos_deg`] together, the angle brought into range once
/// (inlined, a caller that wants one of them computes only that one).
#[inline]
fn sin_cos_deg(a: f64) -> (f64, f64) {
    let r = norm_angle(a);
    let neg = r < 0.0;
    let r = r.abs(); // [0, 180]; each subtraction below is exact (Sterbenz).
    let s = if r == 0.0 || r == 180.0 {
        0.0
    } else if r == 90.0 {
        1.0
    } else if r < 45.0 {
        sin_poly(r * DEG)
    } else if r < 90.0 {
        cos_poly((90.0 - r) * DEG)
    } else if r <= 135.0 {
        cos_poly((r - 90.0) * DEG)
    } else {
        sin_poly((180.0 - r) * DEG)
    };
    let s = if neg { -s } else { s };
    let c = if r == 0.0 {
        1.0
    } else if r == 90.0 {
        0.0
    } else if r == 180.0 {
        -1.0
    } else if r <= 45.0 {
        cos_poly(r * DEG)
    } else if r < 90.0 {
        sin_poly((90.0 - r) * DEG)
    } else if r < 135.0 {
        -sin_poly((r - 90.0) * DEG)
    } else {
        -cos_poly((180.0 - r) * DEG)
    };
    (s, c)
}

/// atan t in radians for t in [0, 1]: two argument halvings
/// (atan t = 2 atan(t / (1 + sqrt(1 + t^2)))) bring t below tan(pi/16),
/// then the Taylor series to t^25.
fn atan_unit(t: f64) -> f64 {
    if t == 1.0 {
        return PI / 4.0;
    }
    let t1 = t / (1.0 + (1.0 + t * t).sqrt());
    let t2 = t1 / (1.0 + (1.0 + t1 * t1).sqrt());
    let x2 = t2 * t2;
    // t2 * (1 - x2 * (1/3 - x2 * (1/5 - ...))) down from 1/25.
    let mut p = 1.0 / 25.0;
    for k in (0..12).rev() {
        p = 1.0 / (2 * k + 1) as f64 - x2 * p;
    }
    4.0 * t2 * p
}

/// The angle in degrees of the vector (x, y) from the +x axis,
/// counter-clockwise, in (-180, 180], as `f64::atan2` (y first) but
/// deterministic. Exact at multiples of 45 degrees; 0 for (0, 0).
pub fn atan2_deg(y: f64, x: f64) -> f64 {
    if y.is_nan() || x.is_nan() {
        return f64::NAN;
    }
    let (ay, ax) = (y.abs(), x.abs());
    if ay == 0.0 && ax == 0.0 {
        return 0.0;
    }
    // First octant angle, then unfold.
    let a = if ay == ax {
        45.0
    } else if ay < ax {
        atan_unit(ay / ax) * RAD
    } else {
        90.0 - atan_unit(ax / ay) * RAD
    };
    let a = if x < 0.0 { 180.0 - a } else { a };
    if y < 0.0 {
        -a
    } else {
        a
    }
}

/// The compass bearing in degrees, in [0, 360), from one point to another
/// (0 = toward +y, 90 = toward +x); 0 when they coincide.
pub fn bearing(from: Pt, to: Pt) -> f64 {
    let d = to - from;
    norm_bearing(atan2_deg(d.x, d.y))
}

// ---------------------------------------------------------------------------
// Convex polygons (private helpers)
// ---------------------------------------------------------------------------

/// A small convex polygon: a rectangle clipped by up to four half-planes.
#[derive(Clone, Copy, Debug)]
struct Poly {
    n: usize,
    p: [Pt; 8],
}

impl Poly {
    fn from4(c: [Pt; 4]) -> Poly {
        let mut p = [Pt::new(0.0, 0.0); 8];
        p[..4].copy_from_slice(&c);
        Poly { n: 4, p }
    }

    fn pts(&self) -> &[Pt] {
        &self.p[..self.n]
    }

    /// Keep the part where `a*x + b*y >= c` (Sutherland-Hodgman, one edge).
    fn clip(&self, a: f64, b: f64, c: f64) -> Poly {
        let mut out = Poly {
            n: 0,
            p: [Pt::new(0.0, 0.0); 8],
        };
        let n = self.n;
        for i in 0..n {
            let s = self.p[i];
            let e = self.p[(i + 1) % n];
            let ds = a * s.x + b * s.y - c;
            let de = a * e.x + b * e.y - c;
            if de >= 0.0 {
                if ds < 0.0 {
                    out.push(s + (e - s) * (ds / (ds - de)));
                }
                out.push(e);
            } else if ds >= 0.0 {
                out.push(s + (e - s) * (ds / (ds - de)));
            }
        }
        out
    }

    fn push(&mut self, q: Pt) {
        if self.n < self.p.len() {
            self.p[self.n] = q;
            self.n += 1;
        }
    }

    /// Area (shoelace), non-negative.
    fn area(&self) -> f64 {
        let pts = self.pts();
        let mut s = 0.0;
        for i in 0..pts.len() {
            s += pts[i].cross(pts[(i + 1) % pts.len()]);
        }
        (s * 0.5).abs()
    }
}

/// `x` if positive, else 0: `x.max(0.0)` for the bounds of the fast paths,
/// where a plain comparison (one instruction) does, no NaN being about.
fn positive(x: f64) -> f64 {
    if x > 0.0 {
        x
    } else {
        0.0
    }
}

/// Distance from a point to a segment.
fn point_segment_distance(p: Pt, a: Pt, b: Pt) -> f64 {
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
fn segments_cross(a: Pt, b: Pt, c: Pt, d: Pt) -> bool {
    let o1 = (b - a).cross(c - a);
    let o2 = (b - a).cross(d - a);
    let o3 = (d - c).cross(a - c);
    let o4 = (d - c).cross(b - c);
    o1 * o2 < 0.0 && o3 * o4 < 0.0
}

/// Distance between two segments (0 when they cross or touch).
fn segment_distance(a: Pt, b: Pt, c: Pt, d: Pt) -> f64 {
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

// ---------------------------------------------------------------------------
// Bases
// ---------------------------------------------------------------------------

/// Where one base lies as seen from another (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zone {
    /// Some part in the front zone.
    Front,
    /// Not to front; some part in a flank zone.
    Flank,
    /// Entirely in the rear zone.
    Rear,
}

/// A side of a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The unit's own left.
    Left,
    /// The unit's own right.
    Right,
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
    fwd: Pt,
    /// Half the diagonal, computed once too (bounds on distances ask for it
    /// constantly); width and depth never change after [`Base::new`].
    rad: f64,
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
    fn local_corners(&self, o: &Base) -> [Pt; 4] {
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

    /// A bound on the size of the coordinates of the two bases (centres,
    /// corners, and corners in either frame): the rounding of any
    /// computation on them is a few units in the last place of it.
    fn scale(&self, o: &Base) -> f64 {
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
        self.distance(o) <= CONTACT
    }

    /// The area of `o` left after clipping it, in this unit's frame
    /// (`local` its [`Base::local_corners`]), with half-planes
    /// `a*u + b*v >= c`.
    fn clipped(&self, local: [Pt; 4], planes: &[(f64, f64, f64)]) -> Poly {
        let mut p = Poly::from4(local);
        for &(a, b, c) in planes {
            p = p.clip(a, b, c);
        }
        p
    }

    /// The half-planes of the front zone.
    fn front_planes(&self) -> [(f64, f64, f64); 3] {
        let (hw, hd) = (self.width * 0.5, self.depth * 0.5);
        [(1.0, 0.0, hd), (0.0, 1.0, -hw), (0.0, -1.0, -hw)]
    }

    /// Where `o` lies as seen from this unit: to front, to flank or to rear
    /// (the book's "Unit facing and position"; see the module doc).
    pub fn zone_of(&self, o: &Base) -> Zone {
        if self.in_front_zone(o) {
            Zone::Front
        } else if self.flank_side(o).is_some() {
            Zone::Flank
        } else {
            Zone::Rear
        }
    }

    /// How deep a corner (or the centre) of `o` must lie in a zone for
    /// the part of `o` there to be surely more than [`AREA_EPS`], `o` being
    /// at least twice as wide and deep: a quarter disc of this radius about
    /// the corner (a whole one about the centre) lies in the zone and in
    /// `o`, at least 7.8e-7 and 7.8e-11 times the squared [`Base::scale`],
    /// while clipping and the shoelace round by some hundred units in the
    /// last place of the squared local coordinates (none beyond the
    /// scale): about 1e-13 times its square.
    fn deep(&self, o: &Base) -> f64 {
        1e-3 + 1e-5 * self.scale(o)
    }

    /// Whether `o` is large enough for [`Base::deep`] to tell.
    fn fits_deep(o: &Base, m: f64) -> bool {
        o.width > 2.0 * m && o.depth > 2.0 * m
    }

    /// Whether the part of `o` in the front zone is more than
    /// [`AREA_EPS`] when the corners (`local`, as [`Base::local_corners`]
    /// gives them) settle it without clipping; None when they do not.
    fn front_part(&self, o: &Base, local: &[Pt; 4]) -> Option<bool> {
        let (hd, hw) = (self.depth * 0.5, self.width * 0.5);
        // The first clip keeps a point when `u - hd >= 0`, exactly when
        // `u >= hd`: with no such corner it keeps nothing, area 0.
        if local.iter().all(|q| q.x < hd) {
            return Some(false);
        }
        // Every corner well beyond a side line, so is every point the
        // first clip makes (rounded onto segments between corners), and
        // that side's clip keeps nothing.
        let slack = SLACK * self.scale(o);
        if local.iter().all(|q| q.y > hw + slack) || local.iter().all(|q| q.y < -hw - slack) {
            return Some(false);
        }
        let m = self.deep(o);
        let deep = |q: &Pt| q.x - hd > m && q.y.abs() < hw - m;
        let (u, v) = self.local(o.centre);
        if Base::fits_deep(o, m) && (local.iter().any(deep) || deep(&Pt::new(u, v))) {
            return Some(true);
        }
        None
    }

    /// Whether some part of `o` lies in the front zone.
    pub fn in_front_zone(&self, o: &Base) -> bool {
        let local = self.local_corners(o);
        self.front_part(o, &local)
            .unwrap_or_else(|| self.clipped(local, &self.front_planes()).area() > AREA_EPS)
    }

    /// Which flank zone `o` has a part in (the left one first if both);
    /// None when it has no part in either. Says nothing of the front zone.
    pub fn flank_side(&self, o: &Base) -> Option<Side> {
        let local = self.local_corners(o);
        if self.flank_part(o, &local, -1.0) {
            Some(Side::Left)
        } else if self.flank_part(o, &local, 1.0) {
            Some(Side::Right)
        } else {
            None
        }
    }

    /// Whether the part of `o` (`local` its [`Base::local_corners`]) in the
    /// flank zone `side * v > hw` (`side` -1 for the left, 1 for the right)
    /// is more than [`AREA_EPS`]: the clip by `(0, side, hw)`, unless the
    /// corners settle it.
    fn flank_part(&self, o: &Base, local: &[Pt; 4], side: f64) -> bool {
        let hw = self.width * 0.5;
        // The clip keeps a point when `side * v - hw >= 0`, exactly when
        // `side * v >= hw`: with no such corner it keeps nothing.
        if local.iter().all(|q| side * q.y < hw) {
            return false;
        }
        let m = self.deep(o);
        if Base::fits_deep(o, m) && local.iter().any(|q| side * q.y > hw + m) {
            return true;
        }
        self.clipped(*local, &[(0.0, side, hw)]).area() > AREA_EPS
    }

    /// Whether some part of `o` lies in the front zone no further than `d`
    /// (plus [`EPS`]) from the front edge: "directly in front", as zones of
    /// control are.
    pub fn in_front_within(&self, o: &Base, d: f64) -> bool {
        let local = self.local_corners(o);
        let (hd, hw) = (self.depth * 0.5, self.width * 0.5);
        match self.front_part(o, &local) {
            Some(false) => return false,
            // Every corner in the closed zone: each clip keeps the four
            // corners as they are (its tests are exactly `u >= hd`,
            // `v >= -hw`, `v <= hw`), so the nearest point is a corner.
            Some(true) if local.iter().all(|q| q.x >= hd && q.y.abs() <= hw) => {
                let nearest = local.iter().fold(f64::INFINITY, |m, q| m.min(q.x));
                return nearest - self.depth * 0.5 <= d + EPS;
            }
            _ => {}
        }
        let p = self.clipped(local, &self.front_planes());
        if p.area() <= AREA_EPS {
            return false;
        }
        let nearest = p.pts().iter().fold(f64::INFINITY, |m, q| m.min(q.x));
        nearest - self.depth * 0.5 <= d + EPS
    }

    /// Whether some part of `o` lies within the arc of `degrees` centred
    /// straight ahead of the middle of this base's front edge (Thistle's
    /// 90 degree arc of fire). Touching the arc's edge at one point is not
    /// enough; a base across the apex is in the arc.
    pub fn arc_holds(&self, o: &Base, degrees: f64) -> bool {
        let half = (degrees * 0.5).clamp(0.0, 180.0);
        let apex = self.centre + self.forward() * (self.depth * 0.5);
        let inside = |p: Pt| {
            let d = p - apex;
            if d.len() < EPS {
                return true;
            }
            let off = norm_angle(bearing(apex, p) - self.facing).abs();
            off <= half - 1e-9
        };
        let cs = o.corners();
        if cs.iter().any(|c| inside(*c)) || o.contains_point(apex) {
            return true;
        }
        // The arc's two edges, carried far out, may cross the base between
        // its corners.
        let reach = apex.dist(o.centre) + o.radius() + 1.0;
        [-half, half].iter().any(|a| {
            let end = apex + Pt::from_bearing(self.facing + a) * reach;
            o.segment_hits(apex, end)
        })
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

    /// Whether the two bases line up for an interpenetration (TVBD,
    /// "Interpenetration", Table 4 restrictions): facings the same or
    /// opposite (within 1e-6 degrees), equal widths, and the side edges of
    /// one on the lines of the other's (within [`EPS`]).
    pub fn aligned_with(&self, o: &Base) -> bool {
        let d = norm_angle(self.facing - o.facing).abs();
        let parallel = d < 1e-6 || (180.0 - d).abs() < 1e-6;
        if !parallel || (self.width - o.width).abs() > EPS {
            return false;
        }
        let (_, v) = self.local(o.centre);
        v.abs() <= EPS
    }

    /// Whether the two bases are touching and aligned as the members of a
    /// group are: facings within [`GROUP_FACING`] degrees, and part of an
    /// edge of positive length shared, either side by side (a side edge
    /// against a side edge, no more than [`CONTACT`] apart, the front edges
    /// level within [`CONTACT`]) or one directly behind the other (a front
    /// edge against a rear edge, no more than [`CONTACT`] apart, the side
    /// edges level within [`CONTACT`] when the widths are equal, else the
    /// narrower base's edge within the wider's). Measured in this base's
    /// frame; a corner touching a corner links nothing.
    pub fn linked_with(&self, o: &Base) -> bool {
        if norm_angle(self.facing - o.facing).abs() > GROUP_FACING {
            return false;
        }
        if self.centre.dist(o.centre) > self.radius() + o.radius() + CONTACT {
            return false;
        }
        let (u, v) = self.local(o.centre);
        let (ha, wa) = (self.depth * 0.5, self.width * 0.5);
        let (hb, wb) = (o.depth * 0.5, o.width * 0.5);
        // Side by side: the side edges meet along a length (the overlap of
        // the two bases' extents along the facing).
        let along = (u + hb).min(ha) - (u - hb).max(-ha);
        let side_by_side =
            (v.abs() - (wa + wb)).abs() <= CONTACT && (u + hb - ha).abs() <= CONTACT && along > EPS;
        // One behind the other: a front edge on a rear edge, the narrower
        // within the wider (side edges level when the widths are equal).
        let behind = (u.abs() - (ha + hb)).abs() <= CONTACT
            && if (wa - wb).abs() <= EPS {
                v.abs() <= CONTACT
            } else {
                v.abs() + wa.min(wb) <= wa.max(wb) + CONTACT
            };
        side_by_side || behind
    }

    /// The path of a move `d` straight along the facing (backwards when `d`
    /// is negative): the start, then a base every half measure or less, the
    /// end last. Moves are checked along such paths.
    pub fn straight_path(&self, d: f64) -> Vec<Base> {
        self.straight_bases(d).collect()
    }

    /// The bases of [`Base::straight_path`] one at a time (for laying a
    /// path into a buffer that is used again).
    pub fn straight_bases(&self, d: f64) -> impl Iterator<Item = Base> + '_ {
        let steps = half_measure_steps(d);
        (0..=steps).map(move |k| self.advanced(d * k as f64 / steps as f64))
    }

    /// The last base of [`Base::straight_path`], worked out alone (the same
    /// expression, bit for bit).
    pub fn straight_end(&self, d: f64) -> Base {
        let steps = half_measure_steps(d);
        self.advanced(d * steps as f64 / steps as f64)
    }

    /// An oblique move of `d` along the bearing `angle` off the facing
    /// ([`Base::oblique`]), a base every half measure, start first.
    pub fn oblique_path(&self, angle: f64, d: f64) -> Vec<Base> {
        self.oblique_bases(angle, d).collect()
    }

    /// The bases of [`Base::oblique_path`] one at a time.
    pub fn oblique_bases(&self, angle: f64, d: f64) -> impl Iterator<Item = Base> + '_ {
        let steps = half_measure_steps(d);
        (0..=steps).map(move |k| self.oblique(angle, d * k as f64 / steps as f64))
    }

    /// The last base of [`Base::oblique_path`], worked out alone (the same
    /// expression, bit for bit).
    pub fn oblique_end(&self, angle: f64, d: f64) -> Base {
        let steps = half_measure_steps(d);
        self.oblique(angle, d * steps as f64 / steps as f64)
    }

    /// The base moved `d` straight along its facing (negative `d` moves it
    /// backwards).
    pub fn advanced(&self, d: f64) -> Base {
        Base {
            centre: self.centre + self.forward() * d,
            ..*self
        }
    }

    /// The base moved `d` sideways (positive to its right), facing kept.
    pub fn shifted(&self, d: f64) -> Base {
        Base {
            centre: self.centre + self.right() * d,
            ..*self
        }
    }

    /// The base moved `d` along the bearing `facing + angle`, facing kept
    /// (an oblique move).
    pub fn oblique(&self, angle: f64, d: f64) -> Base {
        Base {
            centre: self.centre + Pt::from_bearing(self.facing + angle) * d,
            ..*self
        }
    }

    /// The base wheeled by `angle` degrees: positive wheels right
    /// (clockwise), pivoting on the front-right corner; negative wheels left,
    /// pivoting on the front-left corner. The new facing is in [0, 360).
    pub fn wheeled(&self, angle: f64) -> Base {
        if angle == 0.0 {
            return *self;
        }
        let [fl, fr, _, _] = self.corners();
        let facing = norm_bearing(self.facing + angle);
        let moved = self.facing_to(facing);
        let f = moved.forward() * (self.depth * 0.5);
        let r = moved.right() * (self.width * 0.5);
        let centre = if angle > 0.0 { fr - f - r } else { fl - f + r };
        Base { centre, ..moved }
    }

    /// The bases a wheel of `angle` passes through, from this base to the
    /// wheeled one, no more than 5 degrees apart.
    pub fn wheel_path(&self, angle: f64) -> Vec<Base> {
        self.wheel_bases(angle).collect()
    }

    /// The bases of [`Base::wheel_path`] one at a time.
    pub fn wheel_bases(&self, angle: f64) -> impl Iterator<Item = Base> + '_ {
        let n = wheel_steps(angle);
        (0..=n).map(move |k| self.wheeled(angle * k as f64 / n as f64))
    }

    /// The last base of [`Base::wheel_path`], worked out alone (the same
    /// expression, bit for bit).
    pub fn wheel_end(&self, angle: f64) -> Base {
        let n = wheel_steps(angle);
        self.wheeled(angle * n as f64 / n as f64)
    }

    /// The cost of a wheel: the straight-line distance covered by the
    /// outside front corner, the chord `2 * width * sin(|angle| / 2)`, which
    /// the book deducts from the move ("Change of direction").
    pub fn wheel_cost(&self, angle: f64) -> f64 {
        2.0 * self.width * sin_deg(angle.abs() * 0.5)
    }

    /// The base rotated about its centre by `angle` degrees (clockwise
    /// positive): a cannon's pivot, a turn (+-90), an about face (180). The
    /// new facing is in [0, 360).
    pub fn pivoted(&self, angle: f64) -> Base {
        self.facing_to(norm_bearing(self.facing + angle))
    }

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

/// How many steps a move of `d` (either way) takes, a base every half
/// measure ([`Base::straight_path`], [`Base::oblique_path`]).
fn half_measure_steps(d: f64) -> usize {
    (d.abs() / 0.5).ceil().max(1.0) as usize
}

/// How many steps [`Base::wheel_path`] takes for a wheel of `angle`.
fn wheel_steps(angle: f64) -> usize {
    (angle.abs() / WHEEL_STEP).ceil().max(1.0) as usize
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

// ---------------------------------------------------------------------------
// Charges
// ---------------------------------------------------------------------------

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
/// [`WHEEL_STEP`] degrees out to `max_wheel` either way.
fn charge_wheels(unit: &Base, target: &Base, max_wheel: f64) -> Vec<f64> {
    let max_wheel = max_wheel.abs();
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

// ---------------------------------------------------------------------------
// Groups: bases that move as one body
// ---------------------------------------------------------------------------

/// Several bases moving as one rigid body (a group): their outline, the
/// smallest rectangle in the leading base's facing that holds every base,
/// and where each base stands in it. A move of the body is a move of the
/// outline; each base goes with it, rotated by the outline's change of
/// facing about the outline's centre and carried by the move of the centre.
#[derive(Clone, Debug)]
pub struct Body {
    /// The outline where the body stands now.
    pub outline: Base,
    /// The bases where they stand now, in the order given.
    pub bases: Vec<Base>,
    /// Per base: its centre ahead of and to the right of the outline's
    /// centre, in the outline's frame, and its facing less the outline's.
    parts: Vec<(f64, f64, f64)>,
}

impl Body {
    /// The body of `bases` (at least one), its outline facing `facing`.
    pub fn new(facing: f64, bases: &[Base]) -> Body {
        let probe = Base::new(Pt::new(0.0, 0.0), facing, 0.0, 0.0);
        let (f, r) = (probe.forward(), probe.right());
        let (mut a0, mut a1, mut r0, mut r1) = (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        );
        for b in bases {
            for c in b.corners() {
                let (a, s) = (c.dot(f), c.dot(r));
                a0 = a0.min(a);
                a1 = a1.max(a);
                r0 = r0.min(s);
                r1 = r1.max(s);
            }
        }
        let centre = f * ((a0 + a1) * 0.5) + r * ((r0 + r1) * 0.5);
        let outline = Base::new(centre, facing, r1 - r0, a1 - a0);
        let parts = bases
            .iter()
            .map(|b| {
                let (a, s) = outline.local(b.centre);
                (a, s, norm_angle(b.facing - facing))
            })
            .collect();
        Body {
            outline,
            bases: bases.to_vec(),
            parts,
        }
    }

    /// How many bases.
    pub fn len(&self) -> usize {
        self.bases.len()
    }

    /// Whether the body has no base (never, as built by [`Body::new`]).
    pub fn is_empty(&self) -> bool {
        self.bases.is_empty()
    }

    /// Base `i` when the outline stands at `at`. Where the outline stands
    /// now, base `i` is exactly where it stands now.
    pub fn part_at(&self, i: usize, at: &Base) -> Base {
        if *at == self.outline {
            return self.bases[i];
        }
        let (a, s, turn) = self.parts[i];
        let b = &self.bases[i];
        let facing = if turn == 0.0 {
            at.facing
        } else {
            norm_bearing(at.facing + turn)
        };
        Base::new(
            at.centre + at.forward() * a + at.right() * s,
            facing,
            b.width,
            b.depth,
        )
    }

    /// Each base's path along the outline's path.
    pub fn paths(&self, outline_path: &[Base]) -> Vec<Vec<Base>> {
        (0..self.len())
            .map(|i| outline_path.iter().map(|o| self.part_at(i, o)).collect())
            .collect()
    }
}

/// The groups among `bases`: per base, the lowest index of the bases
/// linked to it by a chain of pairs that `may_join` allows and that are
/// touching and aligned ([`Base::linked_with`]). A base alone is its own
/// group.
pub fn group_roots(bases: &[Base], may_join: impl Fn(usize, usize) -> bool) -> Vec<usize> {
    fn find(root: &mut [usize], mut x: usize) -> usize {
        while root[x] != x {
            root[x] = root[root[x]];
            x = root[x];
        }
        x
    }
    let n = bases.len();
    let mut root: Vec<usize> = (0..n).collect();
    for a in 0..n {
        for b in a + 1..n {
            if may_join(a, b) && bases[a].linked_with(&bases[b]) {
                let (ra, rb) = (find(&mut root, a), find(&mut root, b));
                // The lower index stays the root: a group is named by its
                // first base.
                root[ra.max(rb)] = ra.min(rb);
            }
        }
    }
    (0..n).map(|x| find(&mut root, x)).collect()
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

// ---------------------------------------------------------------------------
// Terrain
// ---------------------------------------------------------------------------

/// The outline of a piece of terrain.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// A rectangle `width` across and `depth` deep; `angle` is the bearing
    /// of its depth axis, like a facing.
    Rect {
        centre: Pt,
        width: f64,
        depth: f64,
        angle: f64,
    },
    /// An ellipse with semi-axes `rx` across (along the bearing
    /// `angle + 90`) and `ry` along the bearing `angle`, as a `Rect`'s width
    /// and depth.
    Ellipse {
        centre: Pt,
        rx: f64,
        ry: f64,
        angle: f64,
    },
    /// A polyline with a width: a road, a river, a line of field works.
    Band { path: Vec<Pt>, width: f64 },
}

impl Shape {
    /// A rectangle as a base (its frame).
    fn rect_base(centre: Pt, width: f64, depth: f64, angle: f64) -> Base {
        Base::new(centre, angle, width, depth)
    }

    /// Point `p` in an ellipse's normalised frame, where it is the unit
    /// circle; None for a degenerate ellipse.
    fn ellipse_frame(centre: Pt, rx: f64, ry: f64, angle: f64, p: Pt) -> Option<Pt> {
        if rx <= 0.0 || ry <= 0.0 {
            return None;
        }
        let (u, v) = Base::new(centre, angle, 0.0, 0.0).local(p);
        Some(Pt::new(v / rx, u / ry))
    }

    /// The band's segments (a lone point is a segment of no length).
    fn segments(path: &[Pt]) -> impl Iterator<Item = (Pt, Pt)> + '_ {
        let lone = (path.len() == 1).then(|| (path[0], path[0]));
        path.windows(2).map(|w| (w[0], w[1])).chain(lone)
    }

    /// Whether the point lies in the shape (its boundary included).
    pub fn contains(&self, p: Pt) -> bool {
        match self {
            Shape::Rect {
                centre,
                width,
                depth,
                angle,
            } => Shape::rect_base(*centre, *width, *depth, *angle).contains_point(p),
            Shape::Ellipse {
                centre,
                rx,
                ry,
                angle,
            } => Shape::ellipse_frame(*centre, *rx, *ry, *angle, p)
                .is_some_and(|q| q.dot(q) <= 1.0 + 1e-12),
            Shape::Band { path, width } => Shape::segments(path)
                .any(|(a, b)| point_segment_distance(p, a, b) <= width * 0.5 + EPS),
        }
    }

    /// Whether the segment from `a` to `b` enters the shape's interior
    /// (grazing its boundary is not entering; a band of no width is entered
    /// by crossing it).
    pub fn hits_segment(&self, a: Pt, b: Pt) -> bool {
        match self {
            Shape::Rect {
                centre,
                width,
                depth,
                angle,
            } => Shape::rect_base(*centre, *width, *depth, *angle).segment_hits(a, b),
            Shape::Ellipse {
                centre,
                rx,
                ry,
                angle,
            } => {
                let f = |p| Shape::ellipse_frame(*centre, *rx, *ry, *angle, p);
                match (f(a), f(b)) {
                    (Some(p), Some(q)) => {
                        point_segment_distance(Pt::new(0.0, 0.0), p, q) < 1.0 - 1e-9
                    }
                    _ => false,
                }
            }
            Shape::Band { path, width } => Shape::segments(path).any(|(c, d)| {
                segments_cross(a, b, c, d) || segment_distance(a, b, c, d) < width * 0.5 - EPS
            }),
        }
    }

    /// Whether any part of the base lies inside the shape (deeper than
    /// [`EPS`]; touching the boundary is not overlapping).
    pub fn overlaps_base(&self, b: &Base) -> bool {
        match self {
            Shape::Rect {
                centre,
                width,
                depth,
                angle,
            } => Shape::rect_base(*centre, *width, *depth, *angle).overlaps(b),
            Shape::Ellipse {
                centre,
                rx,
                ry,
                angle,
            } => {
                let f = |p| Shape::ellipse_frame(*centre, *rx, *ry, *angle, p);
                let c = b.corners();
                let Some(q) = c.iter().map(|p| f(*p)).collect::<Option<Vec<Pt>>>() else {
                    return false;
                };
                let o = Pt::new(0.0, 0.0);
                // The centre of the ellipse inside the (transformed) base?
                let turn = (q[1] - q[0]).cross(q[2] - q[1]);
                let inside = (0..4).all(|i| {
                    let e = q[(i + 1) % 4] - q[i];
                    e.cross(o - q[i]) * turn > 0.0
                });
                inside
                    || (0..4).any(|i| point_segment_distance(o, q[i], q[(i + 1) % 4]) < 1.0 - 1e-9)
            }
            Shape::Band { path, width } => {
                let c = b.corners();
                Shape::segments(path).any(|(p, q)| {
                    b.segment_hits(p, q)
                        || (0..4).any(|i| {
                            segment_distance(p, q, c[i], c[(i + 1) % 4]) < width * 0.5 - EPS
                        })
                })
            }
        }
    }

    /// The height of a hill at a point: 1 at the centre falling linearly to
    /// 0 at the edge, 0 outside. A rectangle's height is
    /// `1 - max(|u|/hh, |v|/hw)`, an ellipse's `1 - sqrt((u/rx)^2 +
    /// (v/ry)^2)` (u, v in its frame); a band is flat (0).
    pub fn height_at(&self, p: Pt) -> f64 {
        match self {
            Shape::Rect {
                centre,
                width,
                depth,
                angle,
            } => {
                if *width <= 0.0 || *depth <= 0.0 {
                    return 0.0;
                }
                let (u, v) = Shape::rect_base(*centre, *width, *depth, *angle).local(p);
                let m = (u.abs() / (depth * 0.5)).max(v.abs() / (width * 0.5));
                (1.0 - m).max(0.0)
            }
            Shape::Ellipse {
                centre,
                rx,
                ry,
                angle,
            } => Shape::ellipse_frame(*centre, *rx, *ry, *angle, p)
                .map_or(0.0, |q| (1.0 - q.len()).max(0.0)),
            Shape::Band { .. } => 0.0,
        }
    }

    /// The axis-aligned bounding box: (least x and y, greatest x and y).
    pub fn bounds(&self) -> (Pt, Pt) {
        let boxed = |pts: &mut dyn Iterator<Item = Pt>, pad: f64| {
            let (mut lo, mut hi) = (
                Pt::new(f64::INFINITY, f64::INFINITY),
                Pt::new(f64::NEG_INFINITY, f64::NEG_INFINITY),
            );
            for p in pts {
                lo = Pt::new(lo.x.min(p.x), lo.y.min(p.y));
                hi = Pt::new(hi.x.max(p.x), hi.y.max(p.y));
            }
            (lo - Pt::new(pad, pad), hi + Pt::new(pad, pad))
        };
        match self {
            Shape::Rect {
                centre,
                width,
                depth,
                angle,
            } => boxed(
                &mut Shape::rect_base(*centre, *width, *depth, *angle)
                    .corners()
                    .into_iter(),
                0.0,
            ),
            Shape::Ellipse {
                centre,
                rx,
                ry,
                angle,
            } => {
                let f = Pt::from_bearing(*angle);
                let r = Pt::new(f.y, -f.x);
                let ex = ((rx * r.x) * (rx * r.x) + (ry * f.x) * (ry * f.x)).sqrt();
                let ey = ((rx * r.y) * (rx * r.y) + (ry * f.y) * (ry * f.y)).sqrt();
                (*centre - Pt::new(ex, ey), *centre + Pt::new(ex, ey))
            }
            Shape::Band { path, width } => boxed(&mut path.iter().copied(), width * 0.5),
        }
    }
}

/// Whether a move touches the shape anywhere: `path` is the bases the unit
/// passes through (start, any intermediate ones, end; a wheel's from
/// [`Base::wheel_path`]). Consecutive bases are joined by interpolating the
/// centre and the facing (the shorter way round), sampled so that no step
/// moves the centre more than 0.1 or turns it more than 5 degrees, and each
/// sample is tested with [`Shape::overlaps_base`].
pub fn path_touches(shape: &Shape, path: &[Base]) -> bool {
    // Every sample's centre lies between the path's centres: a path clear
    // of the shape's bounding box touches nothing of it.
    let bounds = shape.bounds();
    if Bounds::of(path).clear_of_box(bounds) {
        return false;
    }
    if let [only] = path {
        return shape.overlaps_base(only);
    }
    path.windows(2).any(|w| {
        let (a, b) = (w[0], w[1]);
        let turn = norm_angle(b.facing - a.facing);
        let moved = a.centre.dist(b.centre);
        let n = (moved / MOVE_STEP)
            .max(turn.abs() / WHEEL_STEP)
            .ceil()
            .clamp(1.0, 100_000.0) as usize;
        (0..=n).any(|k| {
            let t = k as f64 / n as f64;
            let centre = a.centre + (b.centre - a.centre) * t;
            // A base that overlaps a shape has a part inside it, so inside
            // its bounding box: a sample plainly clear of the box is clear.
            if circle_clear_of_box(centre, a.radius(), bounds) {
                return false;
            }
            let facing = a.facing + turn * t;
            let s = if turn == 0.0 {
                // No turn: the facing is `a`'s (but perhaps for the sign of
                // a zero), and so is its unit vector, bit for bit.
                Base {
                    centre,
                    facing,
                    ..a
                }
            } else {
                Base::new(centre, facing, a.width, a.depth)
            };
            shape.overlaps_base(&s)
        })
    })
}

/// Whether a disc (a base's `centre` and [`Base::radius`]) lies plainly
/// outside the box `(lo, hi)`: further from it than the radius by a slack
/// far above the rounding of the box and of the base's corners.
fn circle_clear_of_box(centre: Pt, radius: f64, (lo, hi): (Pt, Pt)) -> bool {
    let dx = positive((lo.x - centre.x).max(centre.x - hi.x));
    let dy = positive((lo.y - centre.y).max(centre.y - hi.y));
    let size = centre.x.abs() + centre.y.abs() + radius;
    let scale = 1.0 + size + lo.x.abs() + lo.y.abs() + hi.x.abs() + hi.y.abs();
    let reach = radius + SLACK * scale;
    dx * dx + dy * dy > reach * reach
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    fn pt_close(a: Pt, b: Pt) -> bool {
        close(a.x, b.x, 1e-9) && close(a.y, b.y, 1e-9)
    }

    /// A TVBD-like base: 2 TUM wide, 1 deep.
    fn unit(x: f64, y: f64, facing: f64) -> Base {
        Base::new(Pt::new(x, y), facing, 2.0, 1.0)
    }

    // -- Trigonometry ------------------------------------------------------

    /// Our trigonometry agrees with the platform's to 1e-12 over many angles.
    #[test]
    fn trig_matches_std() {
        let mut a = -720.0;
        while a <= 720.0 {
            let r = a * DEG;
            assert!(close(sin_deg(a), r.sin(), 1e-12), "sin {a}");
            assert!(close(cos_deg(a), r.cos(), 1e-12), "cos {a}");
            a += 0.37;
        }
        for i in 0..2000 {
            let t = i as f64 * 0.0123;
            for (y, x) in [
                (t.sin() * 3.0, t.cos() * 3.0),
                (t, 1.0),
                (1.0, -t),
                (-t * 7.0, -1.5),
                (-0.001, t),
            ] {
                let ours = atan2_deg(y, x);
                let std = y.atan2(x) * RAD;
                // Ours is in (-180, 180]: std's -180 for (-0, x < 0) is our 180.
                let diff = norm_angle(ours - std);
                assert!(diff.abs() <= 1e-12, "atan2({y}, {x}) {ours} vs {std}");
                assert!(ours > -180.0 && ours <= 180.0);
            }
        }
    }

    /// Multiples of 90 degrees come out exact, and the quarter values too.
    #[test]
    fn trig_exact_at_right_angles() {
        assert_eq!(sin_deg(90.0), 1.0);
        assert_eq!(cos_deg(90.0), 0.0);
        assert_eq!(cos_deg(180.0), -1.0);
        assert_eq!(sin_deg(180.0), 0.0);
        assert_eq!(sin_deg(-90.0), -1.0);
        assert_eq!(sin_deg(270.0), -1.0);
        assert_eq!(cos_deg(270.0), 0.0);
        assert_eq!(cos_deg(-360.0), 1.0);
        assert_eq!(sin_deg(450.0), 1.0);
        assert_eq!(cos_deg(0.0), 1.0);
        assert_eq!(sin_deg(0.0), 0.0);
        assert_eq!(atan2_deg(1.0, 0.0), 90.0);
        assert_eq!(atan2_deg(0.0, -1.0), 180.0);
        assert_eq!(atan2_deg(-1.0, 0.0), -90.0);
        assert_eq!(atan2_deg(2.0, 2.0), 45.0);
        assert_eq!(atan2_deg(-2.0, -2.0), -135.0);
        assert_eq!(bearing(Pt::new(0.0, 0.0), Pt::new(0.0, 5.0)), 0.0);
        assert_eq!(bearing(Pt::new(0.0, 0.0), Pt::new(5.0, 0.0)), 90.0);
        assert_eq!(bearing(Pt::new(0.0, 0.0), Pt::new(0.0, -5.0)), 180.0);
        assert_eq!(bearing(Pt::new(0.0, 0.0), Pt::new(-5.0, 0.0)), 270.0);
        let f = unit(0.0, 0.0, 90.0).forward();
        assert_eq!((f.x, f.y), (1.0, 0.0));
    }

    /// Determinism: the results are pinned bit for bit (they use only
    /// correctly rounded IEEE operations, so every machine gives these).
    #[test]
    fn trig_bits_are_pinned() {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for i in 0..1000 {
            let a = i as f64 * 0.731 - 300.0;
            for v in [
                sin_deg(a),
                cos_deg(a),
                atan2_deg(a, 17.0),
                bearing(Pt::new(1.0, 2.0), Pt::new(a, 3.0)),
            ] {
                h = (h ^ v.to_bits()).wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        assert_eq!(h, PINNED_TRIG_HASH, "got {h:#x}");
    }

    const PINNED_TRIG_HASH: u64 = 0xdeb9_c041_2bc3_852c;

    /// Angles are normalised into (-180, 180] and bearings into [0, 360).
    #[test]
    fn angles_normalise() {
        assert_eq!(norm_angle(180.0), 180.0);
        assert_eq!(norm_angle(-180.0), 180.0);
        assert_eq!(norm_angle(270.0), -90.0);
        assert_eq!(norm_angle(-450.0), -90.0);
        assert_eq!(norm_angle(725.5), 5.5);
        assert_eq!(norm_bearing(-90.0), 270.0);
        assert_eq!(norm_bearing(-1e-20), 0.0);
        assert_eq!(norm_bearing(360.0), 0.0);
    }

    // -- Unit facing and position ------------------------------------------

    /// "Unit facing and position": an enemy with any part in the front zone
    /// is to front, even if part of it is in a flank zone too.
    /// Thistle's arc of fire: 90 degrees centred straight ahead of the
    /// middle of the front edge (front edge at y = 0.5, facing +y).
    #[test]
    fn ninety_degree_arc() {
        let me = unit(0.0, 0.0, 0.0);
        // Straight ahead, and 45 degrees out less a little: in.
        assert!(me.arc_holds(&unit(0.0, 10.0, 180.0), 90.0));
        assert!(me.arc_holds(&unit(9.0, 10.5, 180.0), 90.0));
        // Wholly beyond 45 degrees (nearest corner at x 9, y 5.5: 58 degrees).
        assert!(!me.arc_holds(&unit(10.0, 6.0, 180.0), 90.0));
        // Its nearest corner just inside the 45 degree line: in.
        assert!(me.arc_holds(&unit(6.9, 8.0, 180.0), 90.0));
        // Behind: never.
        assert!(!me.arc_holds(&unit(0.0, -5.0, 0.0), 90.0));
        // A wide base straddling the arc with no corner in it (its edge crosses the arc).
        let wide = Base::new(Pt::new(0.0, 20.0), 0.0, 60.0, 1.0);
        assert!(me.arc_holds(&wide, 90.0));
        // Close in, the arc is narrow: a base 2.5 to 3.5 out to the side and
        // 0.5 to 1.5 ahead of the front edge is 59 degrees out or more.
        assert!(!me.arc_holds(&Base::new(Pt::new(3.0, 1.5), 0.0, 1.0, 1.0), 90.0));
    }

    #[test]
    fn straddling_front_and_flank_is_to_front() {
        let me = unit(0.0, 0.0, 0.0);
        let enemy = unit(2.5, 3.0, 0.0); // x from 1.5 to 3.5: mostly flank
        let half_in = unit(1.9, 3.0, 180.0); // x from 0.9: a sliver in front
        assert_eq!(me.zone_of(&enemy), Zone::Flank);
        assert_eq!(me.zone_of(&half_in), Zone::Front);
        assert_eq!(me.flank_side(&half_in), Some(Side::Right));
    }

    /// "Unit facing and position": not to front but partly in a flank zone is
    /// to flank, even if part of it is in the rear zone too.
    #[test]
    fn straddling_flank_and_rear_is_to_flank() {
        let me = unit(0.0, 0.0, 0.0);
        let enemy = unit(-1.5, -3.0, 45.0);
        assert_eq!(me.zone_of(&enemy), Zone::Flank);
        assert_eq!(me.flank_side(&enemy), Some(Side::Left));
    }

    /// "Unit facing and position": to rear only when entirely within the rear
    /// zone.
    #[test]
    fn wholly_behind_is_to_rear() {
        let me = unit(0.0, 0.0, 0.0);
        assert_eq!(me.zone_of(&unit(0.0, -3.0, 0.0)), Zone::Rear);
        assert_eq!(me.flank_side(&unit(0.0, -3.0, 0.0)), None);
        // Rotated, it pokes out past the side edges: to flank.
        assert_eq!(me.zone_of(&unit(0.0, -3.0, 30.0)), Zone::Flank);
    }

    /// Two units in base-to-base contact front edge to front edge are each to
    /// the other's front.
    #[test]
    fn face_to_face_in_contact_are_to_front() {
        let a = unit(0.0, 0.0, 0.0);
        let b = unit(0.5, 1.0, 180.0);
        assert!(a.in_contact(&b));
        assert!(!a.overlaps(&b));
        assert_eq!(a.zone_of(&b), Zone::Front);
        assert_eq!(b.zone_of(&a), Zone::Front);
    }

    /// A unit side by side with another, in contact, is to its flank.
    #[test]
    fn side_to_side_contact_is_to_flank() {
        let a = unit(0.0, 0.0, 0.0);
        let b = unit(2.0, 0.0, 0.0);
        assert!(a.in_contact(&b));
        assert_eq!(a.zone_of(&b), Zone::Flank);
        assert_eq!(a.flank_side(&b), Some(Side::Right));
        assert_eq!(b.zone_of(&a), Zone::Flank);
        assert_eq!(b.flank_side(&a), Some(Side::Left));
    }

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

    // -- Movement ----------------------------------------------------------

    /// "Change of direction", wheel: the outside corner's straight-line
    /// distance is deducted; the pivot corner stays put.
    #[test]
    fn wheel_cost_and_pivot() {
        let a = unit(3.0, 2.0, 0.0);
        assert!(close(a.wheel_cost(45.0), 4.0 * (22.5 * DEG).sin(), 1e-12));
        assert!(close(a.wheel_cost(-45.0), 1.530733729460359, 1e-12));
        let right = a.wheeled(45.0);
        assert!(pt_close(right.corners()[1], a.corners()[1]));
        assert_eq!(right.facing, 45.0);
        // The outside (front-left) corner moved exactly the chord.
        assert!(close(
            right.corners()[0].dist(a.corners()[0]),
            a.wheel_cost(45.0),
            1e-12
        ));
        let left = a.wheeled(-30.0);
        assert!(pt_close(left.corners()[0], a.corners()[0]));
        assert_eq!(left.facing, 330.0);
        let path = a.wheel_path(45.0);
        assert_eq!(path.len(), 10);
        assert_eq!(path[0], a);
        assert_eq!(path[9], right);
    }

    /// "Change of direction", about face: 180 degrees with no movement, so the
    /// centre stays; a turn is 90 degrees.
    #[test]
    fn about_face_keeps_centre() {
        let a = unit(3.0, 2.0, 30.0);
        let b = a.pivoted(180.0);
        assert_eq!(b.centre, a.centre);
        assert_eq!(b.facing, 210.0);
        assert_eq!(a.pivoted(-90.0).facing, 300.0);
    }

    /// "Change of direction", sideways: shift directly sideways by 1 TUM.
    #[test]
    fn sideways_one_tum() {
        let a = unit(3.0, 2.0, 0.0);
        assert!(pt_close(a.shifted(1.0).centre, Pt::new(4.0, 2.0)));
        assert!(pt_close(a.shifted(-1.0).centre, Pt::new(2.0, 2.0)));
        let b = unit(3.0, 2.0, 90.0).shifted(1.0);
        assert!(pt_close(b.centre, Pt::new(3.0, 1.0)));
        assert_eq!(b.facing, 90.0);
    }

    /// "Change of direction", backwards: directly backwards, facing unchanged.
    #[test]
    fn backwards_three_tum() {
        let a = unit(3.0, 5.0, 180.0);
        let b = a.advanced(-3.0);
        assert!(pt_close(b.centre, Pt::new(3.0, 8.0)));
        assert_eq!(b.facing, 180.0);
        assert!(pt_close(a.advanced(2.0).centre, Pt::new(3.0, 3.0)));
    }

    /// "Change of direction", oblique: advance on a diagonal, still facing the
    /// original direction.
    #[test]
    fn oblique_keeps_facing() {
        let a = unit(0.0, 0.0, 0.0);
        let b = a.oblique(45.0, 2.0);
        assert_eq!(b.facing, 0.0);
        assert!(pt_close(b.centre, Pt::new(2.0f64.sqrt(), 2.0f64.sqrt())));
    }

    // -- Zones of control ---------------------------------------------------

    /// "Zones of Control": the ZOC is 3 TUM directly in front.
    #[test]
    fn zoc_three_tum_directly_in_front() {
        let me = unit(0.0, 0.0, 0.0);
        // Near edges 2.5 and 3.5 ahead of the front edge (at y = 0.5).
        assert!(me.in_front_within(&unit(0.0, 3.5, 180.0), 3.0));
        assert!(!me.in_front_within(&unit(0.0, 4.5, 180.0), 3.0));
        // Just as near but off to the side: not directly in front.
        assert!(!me.in_front_within(&unit(3.0, 2.5, 180.0), 3.0));
        // Exactly 3 away counts as within.
        assert!(me.in_front_within(&unit(0.0, 4.0, 180.0), 3.0));
    }

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

    // -- Interpenetration ------------------------------------------------------

    /// "Interpenetration": facing the same way or opposite, sides in line.
    #[test]
    fn horse_bases_one_behind_the_other_are_aligned() {
        let front = unit(5.0, 5.0, 30.0);
        let behind = front.advanced(-2.0);
        assert!(front.aligned_with(&behind));
        assert!(front.aligned_with(&behind.pivoted(180.0)));
        assert!(!front.aligned_with(&behind.shifted(0.5)));
        assert!(!front.aligned_with(&behind.pivoted(10.0)));
        assert!(!front.aligned_with(&behind.sized(1.5, behind.depth)));
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

    // -- Terrain ----------------------------------------------------------------

    #[test]
    fn rect_terrain() {
        let wood = Shape::Rect {
            centre: Pt::new(10.0, 10.0),
            width: 4.0,
            depth: 2.0,
            angle: 90.0, // depth runs along x
        };
        assert!(wood.contains(Pt::new(10.9, 11.9)));
        assert!(!wood.contains(Pt::new(11.1, 10.0)));
        assert!(wood.hits_segment(Pt::new(0.0, 10.0), Pt::new(20.0, 10.0)));
        assert!(!wood.hits_segment(Pt::new(0.0, 13.0), Pt::new(20.0, 13.0)));
        assert!(wood.overlaps_base(&unit(10.0, 12.4, 0.0)));
        assert!(!wood.overlaps_base(&unit(10.0, 12.5, 0.0)));
        let (lo, hi) = wood.bounds();
        assert!(pt_close(lo, Pt::new(9.0, 8.0)) && pt_close(hi, Pt::new(11.0, 12.0)));
        assert_eq!(wood.height_at(Pt::new(10.0, 10.0)), 1.0);
        assert!(close(wood.height_at(Pt::new(10.5, 10.0)), 0.5, 1e-12));
    }

    /// "Shooting criteria": a hill's crest; its centre stands higher than its
    /// edge, and nothing outside it stands at all.
    #[test]
    fn hill_height_and_extent() {
        let hill = Shape::Ellipse {
            centre: Pt::new(10.0, 10.0),
            rx: 4.0,
            ry: 2.0,
            angle: 0.0,
        };
        assert!(hill.contains(Pt::new(13.9, 10.0)));
        assert!(!hill.contains(Pt::new(10.0, 12.1)));
        assert_eq!(hill.height_at(Pt::new(10.0, 10.0)), 1.0);
        let edge = hill.height_at(Pt::new(13.0, 10.0));
        assert!(close(edge, 0.25, 1e-12));
        assert_eq!(hill.height_at(Pt::new(20.0, 10.0)), 0.0);
        assert!(hill.hits_segment(Pt::new(0.0, 11.0), Pt::new(20.0, 11.0)));
        assert!(!hill.hits_segment(Pt::new(0.0, 12.0), Pt::new(20.0, 12.0)));
        assert!(hill.overlaps_base(&unit(10.0, 12.4, 0.0)));
        assert!(!hill.overlaps_base(&unit(10.0, 12.6, 0.0)));
        assert!(hill.overlaps_base(&Base::new(Pt::new(10.0, 10.0), 0.0, 20.0, 20.0)));
        let turned = Shape::Ellipse {
            centre: Pt::new(10.0, 10.0),
            rx: 4.0,
            ry: 2.0,
            angle: 90.0,
        };
        assert!(turned.contains(Pt::new(10.0, 13.9)));
        let (lo, hi) = turned.bounds();
        assert!(pt_close(lo, Pt::new(8.0, 6.0)) && pt_close(hi, Pt::new(12.0, 14.0)));
    }

    #[test]
    fn band_terrain() {
        let river = Shape::Band {
            path: vec![Pt::new(0.0, 10.0), Pt::new(10.0, 10.0), Pt::new(20.0, 15.0)],
            width: 1.0,
        };
        assert!(river.contains(Pt::new(5.0, 10.4)));
        assert!(!river.contains(Pt::new(5.0, 10.6)));
        assert!(river.hits_segment(Pt::new(5.0, 0.0), Pt::new(5.0, 20.0)));
        assert!(!river.hits_segment(Pt::new(5.0, 0.0), Pt::new(5.0, 9.0)));
        assert!(river.overlaps_base(&unit(5.0, 9.1, 0.0)));
        assert!(!river.overlaps_base(&unit(5.0, 9.0, 0.0))); // touching
        assert!(!river.overlaps_base(&unit(5.0, 8.9, 0.0)));
        assert_eq!(river.height_at(Pt::new(5.0, 10.0)), 0.0);
        let wall = Shape::Band {
            path: vec![Pt::new(0.0, 5.0), Pt::new(10.0, 5.0)],
            width: 0.0,
        };
        assert!(wall.hits_segment(Pt::new(5.0, 0.0), Pt::new(5.0, 9.0)));
        assert!(wall.overlaps_base(&unit(5.0, 5.0, 0.0)));
        let (lo, hi) = river.bounds();
        assert!(pt_close(lo, Pt::new(-0.5, 9.5)) && pt_close(hi, Pt::new(20.5, 15.5)));
    }

    /// "Movement allowance": if any part of a move is in difficult terrain.
    #[test]
    fn moves_through_terrain() {
        let wood = Shape::Rect {
            centre: Pt::new(0.0, 5.0),
            width: 4.0,
            depth: 1.0,
            angle: 0.0,
        };
        let a = unit(0.0, 0.0, 0.0);
        assert!(path_touches(&wood, &[a, a.advanced(8.0)]));
        assert!(!path_touches(&wood, &[a, a.advanced(3.0)]));
        assert!(!path_touches(&wood, &[a]));
        let b = unit(4.0, 0.0, 0.0);
        assert!(!path_touches(&wood, &[b, b.advanced(8.0)]));
        assert!(path_touches(
            &wood,
            &b.wheel_path(-45.0)
                .into_iter()
                .chain([b.wheeled(-45.0).advanced(6.0)])
                .collect::<Vec<_>>()
        ));
    }

    // -- Groups ------------------------------------------------------------

    /// The groups of `bases` when the bases' commands are `cmd`.
    fn groups_of(bases: &[Base], cmd: &[u8]) -> Vec<usize> {
        group_roots(bases, |a, b| cmd[a] == cmd[b])
    }

    /// A line of three touching, aligned bases is one group, in any facing.
    #[test]
    fn a_line_is_one_group() {
        let line = [
            unit(1.0, 0.5, 0.0),
            unit(3.0, 0.5, 0.0),
            unit(5.0, 0.5, 0.0),
        ];
        assert!(line[0].linked_with(&line[1]) && line[1].linked_with(&line[2]));
        assert!(!line[0].linked_with(&line[2]), "not touching");
        assert_eq!(groups_of(&line, &[0, 0, 0]), [0, 0, 0]);
        // The same line turned 30 degrees about a point: still one group.
        let turned: Vec<Base> = line
            .iter()
            .map(|b| {
                let (u, v) = (b.centre.y, b.centre.x);
                let f = Pt::from_bearing(30.0);
                let r = Pt::new(f.y, -f.x);
                Base::new(Pt::new(10.0, 10.0) + f * u + r * v, 30.0, 2.0, 1.0)
            })
            .collect();
        assert_eq!(groups_of(&turned, &[0, 0, 0]), [0, 0, 0]);
        // A gap of 0.01 still touches; of 0.05 does not.
        assert!(line[0].linked_with(&unit(3.01, 0.5, 0.0)));
        assert!(!line[0].linked_with(&unit(3.05, 0.5, 0.0)));
        // Front edges not level: not a line.
        assert!(!line[0].linked_with(&unit(3.0, 0.8, 0.0)));
    }

    /// Bases touching only at a corner are not linked.
    #[test]
    fn a_corner_does_not_link() {
        let a = unit(1.0, 0.5, 0.0);
        let diagonal = unit(3.0, 1.5, 0.0);
        assert!(a.in_contact(&diagonal));
        assert!(!a.linked_with(&diagonal) && !diagonal.linked_with(&a));
        assert_eq!(groups_of(&[a, diagonal], &[0, 0]), [0, 1]);
    }

    /// A base turned 10 degrees is not aligned; one turned half a degree is.
    #[test]
    fn a_turned_base_does_not_link() {
        let a = unit(1.0, 0.5, 0.0);
        let b = unit(3.0, 0.5, 0.0);
        assert!(!a.linked_with(&b.pivoted(10.0)));
        assert!(!a.linked_with(&b.pivoted(-10.0)));
        assert_eq!(groups_of(&[a, b.pivoted(10.0)], &[0, 0]), [0, 1]);
        assert!(a.linked_with(&b.pivoted(0.5)));
        // Facing the other way is not the same facing.
        assert!(!a.linked_with(&b.pivoted(180.0)));
    }

    /// Touching aligned bases of two commands are two groups.
    #[test]
    fn commands_split_groups() {
        let line = [
            unit(1.0, 0.5, 0.0),
            unit(3.0, 0.5, 0.0),
            unit(5.0, 0.5, 0.0),
        ];
        assert_eq!(groups_of(&line, &[0, 1, 1]), [0, 1, 1]);
        assert_eq!(groups_of(&line, &[0, 1, 0]), [0, 1, 2]);
    }

    /// A column (one base directly behind another) is linked; offset
    /// sideways it is not, unless a narrower base lies within the wider's
    /// edge.
    #[test]
    fn a_column_links() {
        let front = unit(5.0, 5.5, 0.0);
        let behind = unit(5.0, 4.5, 0.0);
        assert!(front.linked_with(&behind) && behind.linked_with(&front));
        assert_eq!(groups_of(&[front, behind], &[0, 0]), [0, 0]);
        assert!(
            !front.linked_with(&unit(5.5, 4.5, 0.0)),
            "side edges not level"
        );
        // A commander-sized base (1 wide) behind a 2-wide base: within its
        // rear edge anywhere, not beyond it.
        let small = |x: f64| Base::new(Pt::new(x, 4.5), 0.0, 1.0, 1.0);
        assert!(front.linked_with(&small(5.0)) && small(5.0).linked_with(&front));
        assert!(front.linked_with(&small(4.5)));
        assert!(!front.linked_with(&small(3.9)));
        // A column facing 180 (toward -y) links the same way.
        assert!(unit(5.0, 5.5, 180.0).linked_with(&unit(5.0, 4.5, 180.0)));
    }

    /// A body's outline holds every base; moving the outline carries each
    /// base with it, rigidly.
    #[test]
    fn a_body_moves_rigidly() {
        // Two side by side, and one behind the left one.
        let line = [
            unit(1.0, 0.5, 0.0),
            unit(3.0, 0.5, 0.0),
            unit(1.0, -0.5, 0.0),
        ];
        assert_eq!(groups_of(&line, &[0, 0, 0]), [0, 0, 0]);
        let body = Body::new(0.0, &line);
        let o = body.outline;
        assert!(pt_close(o.centre, Pt::new(2.0, 0.0)));
        assert!(close(o.width, 4.0, 1e-12) && close(o.depth, 2.0, 1e-12));
        // Where the outline stands, every base is where it is.
        for (i, b) in line.iter().enumerate() {
            assert_eq!(body.part_at(i, &o), *b);
        }
        // Ahead 3: every base ahead 3.
        let ahead = o.advanced(3.0);
        for (i, b) in line.iter().enumerate() {
            assert!(pt_close(
                body.part_at(i, &ahead).centre,
                b.advanced(3.0).centre
            ));
        }
        // A wheel of 90 to the right pivots on the outline's front-right
        // corner (4, 1): every base turns a quarter clockwise about it.
        let w = o.wheeled(90.0);
        let parts: Vec<Base> = (0..3).map(|i| body.part_at(i, &w)).collect();
        for p in &parts {
            assert!(close(p.facing, 90.0, 1e-9));
        }
        for i in 0..3 {
            for j in 0..3 {
                let before = line[i].centre.dist(line[j].centre);
                let after = parts[i].centre.dist(parts[j].centre);
                assert!(close(before, after, 1e-9));
            }
        }
        // (x, y) about (4, 1) a quarter clockwise: (4 + (y - 1), 1 - (x - 4)).
        assert!(
            pt_close(parts[0].centre, Pt::new(3.5, 4.0)),
            "{:?}",
            parts[0].centre
        );
        assert!(
            pt_close(parts[1].centre, Pt::new(3.5, 2.0)),
            "{:?}",
            parts[1].centre
        );
        assert!(
            pt_close(parts[2].centre, Pt::new(2.5, 4.0)),
            "{:?}",
            parts[2].centre
        );
        assert!(groups_of(&parts, &[0, 0, 0]).iter().all(|g| *g == 0));
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

    // -- The fast paths give the original's bits ----------------------------
    //
    // Each shortcut above must return exactly what the code before it did,
    // bit for bit, or seeded battles would no longer replay. The originals
    // are kept here verbatim (as free functions) and compared over many
    // random cases: bases of the sizes the rulesets use and others, on the
    // quarter grid units stand on and off it, square, diagonal and a hair
    // off square, touching, in line, overlapping, far apart.

    /// splitmix64: a tiny deterministic generator for the comparisons (and
    /// the other modules' tests of geometry).
    pub(crate) struct Rng(pub(crate) u64);

    impl Rng {
        pub(crate) fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        /// Uniform in [0, 1).
        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }

        /// Uniform in [lo, hi).
        pub(crate) fn range(&mut self, lo: f64, hi: f64) -> f64 {
            lo + (hi - lo) * self.unit()
        }

        /// Uniform in 0..n.
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
            xs[self.below(xs.len())]
        }

        /// One of `xs` or, as often as each, any number in [lo, hi).
        fn pick_or(&mut self, xs: &[f64], lo: f64, hi: f64) -> f64 {
            if self.below(xs.len() + 1) == 0 {
                self.range(lo, hi)
            } else {
                self.pick(xs)
            }
        }

        /// A multiple of 0.25 in [lo, hi] (moves are in quarters).
        fn quarter(&mut self, lo: f64, hi: f64) -> f64 {
            lo + self.below(((hi - lo) * 4.0) as usize + 1) as f64 * 0.25
        }
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

    /// How many random cases each comparison tries: a million in release
    /// builds, fewer in debug ones so that `cargo test` stays quick.
    fn cases() -> usize {
        if cfg!(debug_assertions) {
            20_000
        } else {
            1_000_000
        }
    }

    /// A base's size: the rulesets' (2x1, 1x1, 3x1.5, ...), any up to 6
    /// wide, or a degenerate one (none, a hair, or negative).
    fn random_size(r: &mut Rng) -> (f64, f64) {
        match r.below(8) {
            0..=3 => r.pick(&[
                (2.0, 1.0),
                (1.0, 1.0),
                (3.0, 1.5),
                (4.0, 1.0),
                (6.0, 2.0),
                (2.0, 2.0),
                (1.0, 0.5),
                (0.5, 0.5),
            ]),
            4..=6 => (r.range(0.05, 6.0), r.range(0.05, 3.0)),
            _ => r.pick(&[
                (0.0, 1.0),
                (2.0, 0.0),
                (0.0, 0.0),
                (1e-6, 1.0),
                (6.0, 1e-7),
                (-2.0, 1.0),
                (2.0, -1.0),
                (-3.0, -1.5),
            ]),
        }
    }

    /// A facing: square, diagonal, a wheel's step, a hair off square, any
    /// bearing, or an angle outside [0, 360).
    fn random_facing(r: &mut Rng) -> f64 {
        let square = r.pick(&[0.0, 90.0, 180.0, 270.0]);
        match r.below(6) {
            0 => square,
            1 => r.pick(&[45.0, 135.0, 225.0, 315.0, 30.0, 60.0, -90.0, 360.0, 450.0]),
            2 => 5.0 * r.below(72) as f64,
            3 => square + r.pick(&[1e-12, -1e-12, 1e-9, -1e-9, 1e-6, -1e-6, 0.5, -0.5]),
            4 => r.range(0.0, 360.0),
            _ => r.range(-720.0, 720.0),
        }
    }

    /// A point on the table, mostly on the quarter grid.
    fn random_point(r: &mut Rng) -> Pt {
        if r.below(4) == 0 {
            Pt::new(r.range(-10.0, 80.0), r.range(-10.0, 60.0))
        } else {
            Pt::new(r.quarter(0.0, 72.0), r.quarter(0.0, 48.0))
        }
    }

    fn random_base(r: &mut Rng) -> Base {
        let (w, d) = random_size(r);
        Base::new(random_point(r), random_facing(r), w, d)
    }

    /// A small offset: none, a rounding, a hair, contact's tolerance, a
    /// quarter.
    fn nudge(r: &mut Rng) -> f64 {
        r.pick(&[
            0.0, 0.0, 0.0, 1e-15, -1e-15, 1e-12, -1e-12, 1e-9, -1e-9, 1e-6, -1e-6, CONTACT,
            -CONTACT, 0.25, -0.25,
        ])
    }

    /// A base placed against `a`: beyond its front, right, rear or left
    /// edge by `b`'s extent along that axis (so touching, up to a
    /// [`nudge`]), slid along the edge by a quarter step, or so that edges
    /// or corners line up.
    fn against(r: &mut Rng, a: &Base, facing: f64, w: f64, d: f64) -> Base {
        let k = r.below(4);
        let axes = [a.forward(), a.right(), -a.forward(), -a.right()];
        let (dir, perp) = (axes[k], axes[(k + 1) % 4]);
        let b = Base::new(Pt::new(0.0, 0.0), facing, w, d);
        let extent = |n: Pt| d * 0.5 * b.forward().dot(n).abs() + w * 0.5 * b.right().dot(n).abs();
        let (ha, hp) = if k.is_multiple_of(2) {
            (a.depth * 0.5, a.width * 0.5)
        } else {
            (a.width * 0.5, a.depth * 0.5)
        };
        let (eb, ep) = (extent(dir), extent(perp));
        let slide = match r.below(4) {
            0 => r.quarter(-4.0, 4.0),
            1 => r.pick(&[1.0, -1.0]) * (hp - ep),
            2 => r.pick(&[1.0, -1.0]) * (hp + ep),
            _ => 0.0,
        };
        let centre = a.centre + dir * (ha + eb + nudge(r)) + perp * (slide + nudge(r));
        Base::new(centre, facing, w, d)
    }

    /// Two bases in one of many relations: anywhere, nearby on the grid,
    /// square and touching, at an angle and touching, moved from one to
    /// the other, overlapping, the same, or far from the origin.
    fn random_pair(r: &mut Rng) -> (Base, Base) {
        let a = random_base(r);
        let (w, d) = random_size(r);
        let b = match r.below(8) {
            0 => random_base(r),
            1 => {
                let off = Pt::new(r.quarter(-6.0, 6.0), r.quarter(-6.0, 6.0));
                Base::new(a.centre + off, random_facing(r), w, d)
            }
            2 => {
                let turn = 90.0 * r.below(4) as f64;
                let facing = if r.below(2) == 0 {
                    a.facing + turn
                } else {
                    norm_bearing(a.facing + turn)
                };
                against(r, &a, facing, w, d)
            }
            3 => {
                let facing = random_facing(r);
                against(r, &a, facing, w, d)
            }
            4 => {
                let q = r.quarter(-6.0, 6.0);
                let turn = r.pick(&[5.0, -5.0, 45.0, -45.0, 90.0, 180.0]) * r.below(3) as f64;
                let moved = match r.below(5) {
                    0 => a.advanced(q),
                    1 => a.shifted(q),
                    2 => a.wheeled(turn).advanced(q),
                    3 => a.pivoted(turn).shifted(q),
                    _ => a.oblique(turn, q),
                };
                if r.below(2) == 0 {
                    moved.sized(w, d)
                } else {
                    moved
                }
            }
            5 => {
                let off = Pt::new(r.range(-1.5, 1.5), r.range(-1.5, 1.5));
                Base::new(a.centre + off, random_facing(r), w, d)
            }
            6 => r.pick(&[a, a.pivoted(90.0), a.pivoted(180.0), a.sized(w, d)]),
            _ => {
                let far = Base::new(a.centre * 1000.0, a.facing, a.width, a.depth);
                let facing = random_facing(r);
                return (far, against(r, &far, facing, w, d));
            }
        };
        (a, b)
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

    /// Every random pair, both ways round.
    fn each_pair(seed: u64, mut check: impl FnMut(&Base, &Base)) {
        let mut r = Rng(seed);
        for _ in 0..cases() {
            let (a, b) = random_pair(&mut r);
            check(&a, &b);
            check(&b, &a);
        }
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

    /// `Base::clipped` before the shortcuts, verbatim.
    fn clipped_reference(s: &Base, o: &Base, planes: &[(f64, f64, f64)]) -> Poly {
        let mut p = Poly::from4(s.local_corners(o));
        for &(a, b, c) in planes {
            p = p.clip(a, b, c);
        }
        p
    }

    /// `Base::in_front_zone` before the shortcuts, verbatim.
    fn in_front_zone_reference(s: &Base, o: &Base) -> bool {
        clipped_reference(s, o, &s.front_planes()).area() > AREA_EPS
    }

    /// `Base::flank_side` before the shortcuts, verbatim.
    fn flank_side_reference(s: &Base, o: &Base) -> Option<Side> {
        let hw = s.width * 0.5;
        if clipped_reference(s, o, &[(0.0, -1.0, hw)]).area() > AREA_EPS {
            Some(Side::Left)
        } else if clipped_reference(s, o, &[(0.0, 1.0, hw)]).area() > AREA_EPS {
            Some(Side::Right)
        } else {
            None
        }
    }

    /// `Base::in_front_within` before the shortcuts, verbatim.
    fn in_front_within_reference(s: &Base, o: &Base, d: f64) -> bool {
        let p = clipped_reference(s, o, &s.front_planes());
        if p.area() <= AREA_EPS {
            return false;
        }
        let nearest = p.pts().iter().fold(f64::INFINITY, |m, q| m.min(q.x));
        nearest - s.depth * 0.5 <= d + EPS
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
    fn zones_are_the_original() {
        let mut seen = [0usize; 3];
        each_pair(2, |a, b| {
            let front = a.in_front_zone(b);
            assert_eq!(front, in_front_zone_reference(a, b), "{a:?} {b:?}");
            assert_eq!(a.flank_side(b), flank_side_reference(a, b), "{a:?} {b:?}");
            seen[a.zone_of(b) as usize] += 1;
        });
        // Every zone is met often.
        assert!(seen.iter().all(|n| *n > cases() / 20), "{seen:?}");
    }

    #[test]
    fn directly_in_front_is_the_original() {
        let mut r = Rng(3);
        let (mut yes, mut no) = (0, 0);
        each_pair(3, |a, b| {
            // Reaches the rulesets ask for, any, and one that is exactly
            // the distance of `b`'s nearest corner (the boundary).
            let nearest = a
                .local_corners(b)
                .iter()
                .fold(f64::INFINITY, |m, q| m.min(q.x));
            let edge = nearest - a.depth * 0.5 - EPS;
            let d = match r.below(4) {
                0 => r.pick(&[0.0, 1.0, 2.0, 3.0, 6.0]),
                1 => r.range(-1.0, 8.0),
                2 => edge,
                _ => edge + r.pick(&[1e-12, -1e-12, 1e-9, -1e-9]),
            };
            let got = a.in_front_within(b, d);
            assert_eq!(got, in_front_within_reference(a, b, d), "{a:?} {b:?} {d}");
            yes += got as usize;
            no += !got as usize;
        });
        assert!(yes > cases() / 20 && no > cases() / 20, "{yes} {no}");
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

    /// Every number a base holds.
    fn base_numbers(b: &Base) -> [f64; 8] {
        [
            b.centre.x, b.centre.y, b.facing, b.width, b.depth, b.fwd.x, b.fwd.y, b.rad,
        ]
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

    /// `sin_deg` before the shortcuts, verbatim.
    fn sin_deg_reference(a: f64) -> f64 {
        let r = norm_angle(a);
        let neg = r < 0.0;
        let r = r.abs(); // [0, 180]; each subtraction below is exact (Sterbenz).
        let s = if r == 0.0 || r == 180.0 {
            0.0
        } else if r == 90.0 {
            1.0
        } else if r < 45.0 {
            sin_poly(r * DEG)
        } else if r < 90.0 {
            cos_poly((90.0 - r) * DEG)
        } else if r <= 135.0 {
            cos_poly((r - 90.0) * DEG)
        } else {
            sin_poly((180.0 - r) * DEG)
        };
        if neg {
            -s
        } else {
            s
        }
    }

    /// `cos_deg` before the shortcuts, verbatim.
    fn cos_deg_reference(a: f64) -> f64 {
        let r = norm_angle(a).abs(); // [0, 180]
        if r == 0.0 {
            1.0
        } else if r == 90.0 {
            0.0
        } else if r == 180.0 {
            -1.0
        } else if r <= 45.0 {
            cos_poly(r * DEG)
        } else if r < 90.0 {
            sin_poly((90.0 - r) * DEG)
        } else if r < 135.0 {
            -sin_poly((r - 90.0) * DEG)
        } else {
            -cos_poly((180.0 - r) * DEG)
        }
    }

    /// `Base::corners` before it handed its sums to `rect`, verbatim.
    fn corners_reference(s: &Base) -> [Pt; 4] {
        let f = s.forward() * (s.depth * 0.5);
        let r = s.right() * (s.width * 0.5);
        let c = s.centre;
        [c + f - r, c + f + r, c - f + r, c - f - r]
    }

    /// `Base::wheeled` before the shortcuts, verbatim but for `facing_to`,
    /// which was `Base::new` with the new facing.
    fn wheeled_reference(s: &Base, angle: f64) -> Base {
        if angle == 0.0 {
            return *s;
        }
        let [fl, fr, _, _] = s.corners();
        let facing = norm_bearing(s.facing + angle);
        let moved = Base::new(s.centre, facing, s.width, s.depth);
        let f = moved.forward() * (s.depth * 0.5);
        let r = moved.right() * (s.width * 0.5);
        let centre = if angle > 0.0 { fr - f - r } else { fl - f + r };
        Base { centre, ..moved }
    }

    /// An angle: whole, half and tenth degrees, the octants and a hair
    /// either side of them, any in a turn or several, tiny and huge.
    fn random_angle(r: &mut Rng) -> f64 {
        let octant = 45.0 * (r.below(33) as f64 - 16.0);
        match r.below(7) {
            0 => octant,
            1 => octant + r.pick(&[1e-13, -1e-13, 1e-9, -1e-9, 1e-6, -1e-6]),
            2 => r.below(7201) as f64 * 0.1 - 360.0,
            3 => r.range(-360.0, 360.0),
            4 => r.range(-5000.0, 5000.0),
            5 => r.pick(&[1e-300, -1e-300, 5e-324, 1e15, -1e15, 0.0, -0.0]),
            _ => random_facing(r),
        }
    }

    #[test]
    fn trig_is_the_original() {
        let mut r = Rng(9);
        for _ in 0..cases() {
            let a = random_angle(&mut r);
            let (s, c) = (sin_deg_reference(a), cos_deg_reference(a));
            assert_eq!(sin_deg(a).to_bits(), s.to_bits(), "sin {a}");
            assert_eq!(cos_deg(a).to_bits(), c.to_bits(), "cos {a}");
            let f = Pt::from_bearing(a);
            assert_eq!(
                (f.x.to_bits(), f.y.to_bits()),
                (s.to_bits(), c.to_bits()),
                "{a}"
            );
        }
    }

    #[test]
    fn turns_are_the_original() {
        let mut r = Rng(10);
        for _ in 0..cases() {
            let b = random_base(&mut r);
            let angle = random_angle(&mut r);
            let bits = |c: [Pt; 4]| c.map(|p| (p.x.to_bits(), p.y.to_bits()));
            assert_eq!(bits(b.corners()), bits(corners_reference(&b)));
            let turned = Base::new(b.centre, angle, b.width, b.depth);
            assert_eq!(
                base_numbers(&b.facing_to(angle)).map(f64::to_bits),
                base_numbers(&turned).map(f64::to_bits)
            );
            assert_eq!(
                base_numbers(&b.wheeled(angle)).map(f64::to_bits),
                base_numbers(&wheeled_reference(&b, angle)).map(f64::to_bits),
                "{b:?} {angle}"
            );
        }
    }

    /// `path_touches` before the shortcuts, verbatim.
    fn path_touches_reference(shape: &Shape, path: &[Base]) -> bool {
        // Every sample's centre lies between the path's centres: a path clear
        // of the shape's bounding box touches nothing of it.
        if Bounds::of(path).clear_of_box(shape.bounds()) {
            return false;
        }
        if let [only] = path {
            return shape.overlaps_base(only);
        }
        path.windows(2).any(|w| {
            let (a, b) = (w[0], w[1]);
            let turn = norm_angle(b.facing - a.facing);
            let moved = a.centre.dist(b.centre);
            let n = (moved / MOVE_STEP)
                .max(turn.abs() / WHEEL_STEP)
                .ceil()
                .clamp(1.0, 100_000.0) as usize;
            (0..=n).any(|k| {
                let t = k as f64 / n as f64;
                let s = Base::new(
                    a.centre + (b.centre - a.centre) * t,
                    a.facing + turn * t,
                    a.width,
                    a.depth,
                );
                shape.overlaps_base(&s)
            })
        })
    }

    /// A piece of terrain near `near`: a rectangle, an ellipse or a band
    /// (straight or bent, of a width or none), square or turned.
    fn random_shape(r: &mut Rng, near: Pt) -> Shape {
        let centre = near + Pt::new(r.quarter(-8.0, 8.0), r.quarter(-8.0, 8.0));
        let angle = r.pick_or(&[0.0, 0.0, 90.0, 30.0], 0.0, 360.0);
        match r.below(3) {
            0 => Shape::Rect {
                centre,
                width: r.pick_or(&[6.0, 2.0], 0.0, 8.0),
                depth: r.pick_or(&[4.0, 1.0], 0.0, 8.0),
                angle,
            },
            1 => Shape::Ellipse {
                centre,
                rx: r.pick_or(&[4.0, 1.0], 0.0, 6.0),
                ry: r.pick_or(&[2.5, 1.0], 0.0, 6.0),
                angle,
            },
            _ => {
                let mut path = vec![centre];
                for _ in 0..r.below(3) + 1 {
                    let last = path[path.len() - 1];
                    path.push(last + Pt::new(r.quarter(-10.0, 10.0), r.quarter(-10.0, 10.0)));
                }
                let width = r.pick_or(&[1.0, 0.0, 2.0], 0.0, 3.0);
                Shape::Band { path, width }
            }
        }
    }

    /// A move's path: straight ahead or back, a wheel, a wheel then
    /// straight, sideways, a turn on the spot, or a base standing.
    fn random_path(r: &mut Rng, a: &Base) -> Vec<Base> {
        let d = r.pick_or(&[3.0, 6.0, -1.5], -6.0, 9.0);
        let w = r.pick_or(&[45.0, -45.0, 90.0], -90.0, 90.0);
        match r.below(6) {
            0 => a.straight_path(d),
            1 => a.wheel_path(w),
            2 => a
                .wheel_path(w)
                .into_iter()
                .chain([a.wheeled(w).advanced(d)])
                .collect(),
            3 => vec![*a, a.shifted(d)],
            4 => vec![*a, a.pivoted(w), a.pivoted(w).advanced(d)],
            _ => vec![*a],
        }
    }

    #[test]
    fn path_touches_is_the_original() {
        let mut r = Rng(11);
        let mut touched = 0;
        for _ in 0..cases() {
            let a = random_base(&mut r);
            let shape = random_shape(&mut r, a.centre);
            let path = random_path(&mut r, &a);
            let got = path_touches(&shape, &path);
            assert_eq!(
                got,
                path_touches_reference(&shape, &path),
                "{shape:?} {path:?}"
            );
            touched += got as usize;
        }
        assert!(
            touched > cases() / 10 && touched < cases() - cases() / 10,
            "{touched}"
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
