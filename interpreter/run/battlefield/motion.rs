//! The movement primitives a rulebook describes, on a base: straight ahead
//! or back, sideways, oblique, wheel and pivot, each as the base it ends at
//! and as the path of bases it passes through.

use super::{norm_bearing, sin_deg, Base, Pt, WHEEL_STEP};

impl Base {
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

    /// The base turned to face `o`, which it touches, and closed up
    /// against it: a unit fighting an enemy at its flank or rear turns to
    /// face it ("change facing"), and as a base is wider than it is deep,
    /// steps up to it again. The edge of `o` it faces is the one its centre
    /// lies beyond (relative to `o`'s half width and half depth); its front
    /// edge ends flush with that edge, its centre level with where it was
    /// along it (kept within the edge's length). Its new facing is `o`'s
    /// plus a multiple of 90 degrees: a unit squarely in contact ends
    /// squarely face to face.
    pub fn faced_against(&self, o: &Base) -> Base {
        let (ahead, right) = o.local(self.centre);
        let (hd, hw, d) = (o.depth * 0.5, o.width * 0.5, self.depth * 0.5);
        let (f, r) = (o.forward(), o.right());
        let (facing, centre) = if ahead.abs() * hw >= right.abs() * hd {
            // Beyond o's front (or rear) edge: face o's facing reversed (or o's).
            let along = r * right.clamp(-hw, hw);
            if ahead >= 0.0 {
                (o.facing + 180.0, o.centre + f * (hd + d) + along)
            } else {
                (o.facing, o.centre - f * (hd + d) + along)
            }
        } else {
            // Beyond o's right (or left) side edge.
            let along = f * ahead.clamp(-hd, hd);
            if right >= 0.0 {
                (o.facing + 270.0, o.centre + r * (hw + d) + along)
            } else {
                (o.facing + 90.0, o.centre - r * (hw + d) + along)
            }
        };
        Base::new(centre, norm_bearing(facing), self.width, self.depth)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::battlefield::tests::{
        base_numbers, cases, close, pt_close, random_angle, random_base, unit, Rng,
    };
    use crate::run::battlefield::DEG;

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

    /// "Change facing" in melee (TVBD §Fighting to flank or rear): a unit
    /// with an enemy's front against its right flank turns to face it and
    /// steps up to it (a 2 x 1 base turned in place leaves a gap of 0.5);
    /// one with an enemy against its rear about faces in place; an enemy's
    /// side against its left flank, offset along it, is faced squarely,
    /// the unit level with where it stood. Every result touches the enemy
    /// without overlapping it.
    #[test]
    fn faced_against_an_enemy_at_flank_or_rear() {
        let a = Base::new(Pt::new(0.0, 0.0), 0.0, 2.0, 1.0);
        // Enemy facing west (270), its front edge on a's right side x = 1.
        let e = Base::new(Pt::new(1.5, 0.0), 270.0, 2.0, 1.0);
        let t = a.faced_against(&e);
        assert_eq!(t.facing, 90.0);
        assert!(pt_close(t.centre, Pt::new(0.5, 0.0)), "{t:?}");
        assert!(t.in_contact(&e) && !t.overlaps(&e));
        // Enemy facing north (0), its front edge on a's rear y = -0.5.
        let e = Base::new(Pt::new(0.3, -1.0), 0.0, 2.0, 1.0);
        let t = a.faced_against(&e);
        assert_eq!(t.facing, 180.0);
        assert!(pt_close(t.centre, Pt::new(0.0, 0.0)), "{t:?}");
        assert!(t.in_contact(&e) && !t.overlaps(&e));
        // Enemy facing north (0), its right side (x = -1) on a's left flank,
        // its centre 0.3 further forward than a's.
        let e = Base::new(Pt::new(-2.0, 0.3), 0.0, 2.0, 1.0);
        let t = a.faced_against(&e);
        assert_eq!(t.facing, 270.0);
        assert!(pt_close(t.centre, Pt::new(-0.5, 0.0)), "{t:?}");
        assert!(t.in_contact(&e) && !t.overlaps(&e));
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
}
