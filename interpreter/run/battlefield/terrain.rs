//! Terrain: the outline of a piece of terrain (a rectangle, an ellipse, or
//! a band such as a road or a river), what lies in it or crosses it, a
//! hill's height, and whether a move touches it.

use super::base::{point_segment_distance, positive, segment_distance, segments_cross};
use super::{norm_angle, Base, Bounds, Pt, EPS, MOVE_STEP, SLACK, WHEEL_STEP};

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
mod tests {
    use super::*;
    use crate::run::battlefield::tests::{cases, close, pt_close, random_base, unit, Rng};

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
}
