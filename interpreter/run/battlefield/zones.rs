//! Where one base lies as seen from another: its front, flank and rear
//! zones (read as the [`super`] module doc says), "directly in front", an
//! arc of fire, the room straight behind a base, and the alignments of
//! interpenetration and of a group.

use super::{bearing, norm_angle, Base, Pt, AREA_EPS, CONTACT, EPS, GROUP_FACING, SLACK};

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

impl Base {
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

    /// Whether the centre of `o` lies ahead of the line of this base's
    /// front edge (by more than [`EPS`]). Of a unit to flank, this tells
    /// TVBD v2.0a's to-front-flank (ahead) from its behind-flank (level
    /// with the front edge or behind it). Reading: the sheet's diagram of
    /// relative positions is lost; v1 says that where a stand's position
    /// matters it is its centre point, so the split is the line of the
    /// front edge carried out into the flank zones, and the centre of the
    /// other base decides.
    pub fn centre_ahead_of_front(&self, o: &Base) -> bool {
        self.local(o.centre).0 > self.depth * 0.5 + EPS
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

    /// How far this base could go straight back, facing kept, before it
    /// came within [`CONTACT`] of `o` (TVBD §Optional Rule: Evade asks
    /// whether an evade leaves the unit clear of every enemy): the
    /// distance from its rear edge to the nearest part of `o` that lies on
    /// or beyond the line of that edge and between the lines of its side
    /// edges (or within [`CONTACT`] of them: the side of the base going
    /// back would touch it), less [`CONTACT`], and never below 0. None
    /// when no part of `o` lies there: going straight back never brings
    /// it nearer.
    pub fn room_behind_to(&self, o: &Base) -> Option<f64> {
        let local = self.local_corners(o);
        let (hd, hw) = (self.depth * 0.5, self.width * 0.5 + CONTACT);
        // The clips keep a point when `u <= -hd`, `v >= -hw`, `v <= hw`:
        // with every corner outside one of them, nothing is kept.
        if local.iter().all(|q| q.x > -hd)
            || local.iter().all(|q| q.y < -hw)
            || local.iter().all(|q| q.y > hw)
        {
            return None;
        }
        let p = self.clipped(local, &[(-1.0, 0.0, hd), (0.0, 1.0, -hw), (0.0, -1.0, -hw)]);
        if p.n == 0 {
            return None;
        }
        let nearest = p.pts().iter().fold(f64::NEG_INFINITY, |m, q| m.max(q.x));
        Some((-hd - nearest - CONTACT).max(0.0))
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::battlefield::tests::{cases, each_pair, unit, Rng};

    // -- Unit facing and position ------------------------------------------

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

    /// "Unit facing and position": an enemy with any part in the front zone
    /// is to front, even if part of it is in a flank zone too.
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

    // -- Room behind ------------------------------------------------------------

    /// `room_behind_to`: how far a base goes straight back before it comes
    /// within contact of another that lies behind it (on or beyond the
    /// line of its rear edge), between the lines of its side edges (or
    /// within contact of them); None for one it never nears going back.
    #[test]
    fn room_behind_a_base() {
        let room = |me: &Base, o: &Base| me.room_behind_to(o);
        let near = |r: Option<f64>, x: f64| r.is_some_and(|r| (r - x).abs() < 1e-9);
        // Rear edge at y = -0.5, side edges on x = -1 and x = 1.
        let me = unit(0.0, 0.0, 0.0);
        // Directly behind, its near edge 3 from the rear edge.
        assert!(near(room(&me, &unit(0.0, -4.0, 0.0)), 3.0 - CONTACT));
        // Touching the rear edge, either way round: no room.
        assert_eq!(room(&me, &unit(0.0, -1.0, 180.0)), Some(0.0));
        assert_eq!(room(&me, &unit(0.0, -1.005, 0.0)), Some(0.0));
        // Half across the line of the right side edge, 2 back.
        assert!(near(room(&me, &unit(1.5, -3.0, 0.0)), 2.0 - CONTACT));
        // Wholly beyond that line, within contact of it: going back, the
        // side edge would touch it.
        assert!(near(room(&me, &unit(2.005, -3.0, 0.0)), 2.0 - CONTACT));
        // Further off the line than contact: never touched.
        assert_eq!(room(&me, &unit(2.02, -3.0, 0.0)), None);
        // Ahead, touching the front, or beside touching the flank a little
        // ahead of level: going back takes it away from them.
        assert_eq!(room(&me, &unit(0.0, 3.0, 180.0)), None);
        assert_eq!(room(&me, &unit(0.0, 1.0, 180.0)), None);
        assert_eq!(room(&me, &unit(2.0, 0.25, 0.0)), None);
        // Beside touching the flank, level with it or further back: its
        // rear edge is on the line of the rear edge or behind it, within
        // contact of the side line, so going back slides along it, still
        // touching: no room.
        assert_eq!(room(&me, &unit(2.0, 0.0, 0.0)), Some(0.0));
        assert_eq!(room(&me, &unit(2.0, -0.5, 0.0)), Some(0.0));
        // Facing east (rear edge on x = -0.5): a base 1.5 to the west.
        let east = unit(0.0, 0.0, 90.0);
        assert!(near(room(&east, &unit(-3.0, 0.0, 0.0)), 1.5 - CONTACT));
        assert_eq!(room(&east, &unit(0.0, -3.0, 0.0)), None);
        // Turned 45 degrees behind: its nearest corner (1.5 / sqrt 2 ahead of
        // its centre, a little to the left) is what the base would touch.
        let turned = unit(0.0, -4.0, 45.0);
        let corner = 3.5 - 1.5 * std::f64::consts::FRAC_1_SQRT_2;
        assert!(near(room(&me, &turned), corner - CONTACT));
    }

    /// Going straight back its room, a base is still no nearer the other
    /// than contact, and a contact further it touches it (when the room is
    /// more than nothing); with no room reported, going back never brings
    /// it nearer than it was, or within contact if it was not.
    #[test]
    fn room_behind_is_how_far_a_base_goes_before_touching() {
        let mut r = Rng(17);
        let (mut some, mut none) = (0, 0);
        for _ in 0..cases() / 20 {
            let size = |r: &mut Rng| {
                if r.below(3) == 0 {
                    (1.0, 1.0)
                } else {
                    (2.0, 1.0)
                }
            };
            let facing = |r: &mut Rng| {
                if r.below(2) == 0 {
                    45.0 * r.below(8) as f64
                } else {
                    r.range(0.0, 360.0)
                }
            };
            let ((w1, d1), (w2, d2)) = (size(&mut r), size(&mut r));
            let a = Base::new(Pt::new(10.0, 10.0), facing(&mut r), w1, d1);
            let at = Pt::new(r.quarter(6.0, 14.0), r.quarter(6.0, 14.0));
            let b = Base::new(at, facing(&mut r), w2, d2);
            if a.overlaps(&b) {
                continue;
            }
            match a.room_behind_to(&b) {
                Some(room) => {
                    some += 1;
                    if room > 0.0 {
                        let there = a.advanced(-room).distance(&b);
                        assert!(there >= CONTACT - 1e-9, "{a:?} {b:?} {room} {there}");
                        let on = a.advanced(-(room + CONTACT)).distance(&b);
                        assert!(on <= CONTACT + 1e-9, "{a:?} {b:?} {room} {on}");
                    }
                }
                None => {
                    none += 1;
                    let was = a.distance(&b).min(CONTACT);
                    for k in 1..=32 {
                        let d = a.advanced(-0.25 * k as f64).distance(&b);
                        assert!(d >= was - 1e-9, "{a:?} {b:?} back {k} quarters: {d}");
                    }
                }
            }
        }
        assert!(
            some > cases() / 400 && none > cases() / 400,
            "{some} {none}"
        );
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
}
