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

mod angles;
mod base;
mod body;
mod charge;
pub mod files;
mod motion;
mod terrain;
mod zones;

pub use angles::{atan2_deg, bearing, cos_deg, norm_angle, norm_bearing, sin_deg};
pub use base::{Base, Bounds};
pub use body::{group_roots, Body};
pub use charge::{
    charge_path, charge_path_body, charge_path_body_onto, charge_path_onto, ChargePath,
};
pub use terrain::{path_touches, Shape};
pub use zones::{Side, Zone};

use angles::sin_cos_deg;

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
// Points
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

#[cfg(test)]
pub(crate) mod tests {
    //! The helpers the tests of every part of the battlefield share (and
    //! the other modules' tests of geometry: [`Rng`]).

    use super::*;

    pub(super) fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    pub(super) fn pt_close(a: Pt, b: Pt) -> bool {
        close(a.x, b.x, 1e-9) && close(a.y, b.y, 1e-9)
    }

    /// A TVBD-like base: 2 TUM wide, 1 deep.
    pub(super) fn unit(x: f64, y: f64, facing: f64) -> Base {
        Base::new(Pt::new(x, y), facing, 2.0, 1.0)
    }

    // -- The fast paths give the original's bits ----------------------------
    //
    // Each shortcut in the submodules must return exactly what the code
    // before it did, bit for bit, or seeded battles would no longer replay.
    // The originals are kept verbatim (as free functions) in the tests of
    // the module that holds the shortcut, and compared over many random
    // cases, made here: bases of the sizes the rulesets use and others, on
    // the quarter grid units stand on and off it, square, diagonal and a
    // hair off square, touching, in line, overlapping, far apart.

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
        pub(super) fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        pub(super) fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
            xs[self.below(xs.len())]
        }

        /// One of `xs` or, as often as each, any number in [lo, hi).
        pub(super) fn pick_or(&mut self, xs: &[f64], lo: f64, hi: f64) -> f64 {
            if self.below(xs.len() + 1) == 0 {
                self.range(lo, hi)
            } else {
                self.pick(xs)
            }
        }

        /// A multiple of 0.25 in [lo, hi] (moves are in quarters).
        pub(super) fn quarter(&mut self, lo: f64, hi: f64) -> f64 {
            lo + self.below(((hi - lo) * 4.0) as usize + 1) as f64 * 0.25
        }
    }

    /// How many random cases each comparison tries: a million in release
    /// builds, fewer in debug ones so that `cargo test` stays quick.
    pub(super) fn cases() -> usize {
        if cfg!(debug_assertions) {
            20_000
        } else {
            1_000_000
        }
    }

    /// A base's size: the rulesets' (2x1, 1x1, 3x1.5, ...), any up to 6
    /// wide, or a degenerate one (none, a hair, or negative).
    pub(super) fn random_size(r: &mut Rng) -> (f64, f64) {
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
    pub(super) fn random_facing(r: &mut Rng) -> f64 {
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

    pub(super) fn random_base(r: &mut Rng) -> Base {
        let (w, d) = random_size(r);
        Base::new(random_point(r), random_facing(r), w, d)
    }

    /// A small offset: none, a rounding, a hair, contact's tolerance, a
    /// quarter.
    pub(super) fn nudge(r: &mut Rng) -> f64 {
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
    pub(super) fn random_pair(r: &mut Rng) -> (Base, Base) {
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

    /// Every random pair, both ways round.
    pub(super) fn each_pair(seed: u64, mut check: impl FnMut(&Base, &Base)) {
        let mut r = Rng(seed);
        for _ in 0..cases() {
            let (a, b) = random_pair(&mut r);
            check(&a, &b);
            check(&b, &a);
        }
    }

    /// Every number a base holds.
    pub(super) fn base_numbers(b: &Base) -> [f64; 8] {
        [
            b.centre.x, b.centre.y, b.facing, b.width, b.depth, b.fwd.x, b.fwd.y, b.rad,
        ]
    }

    /// An angle: whole, half and tenth degrees, the octants and a hair
    /// either side of them, any in a turn or several, tiny and huge.
    pub(super) fn random_angle(r: &mut Rng) -> f64 {
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
}
