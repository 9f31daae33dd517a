//! Deterministic trigonometry in degrees: angles brought into range, sine
//! and cosine from polynomials, atan2 and compass bearings, all from
//! `+ - * /` and `sqrt` (see "Determinism" in the [`super`] module doc).

use super::{Pt, DEG, RAD};
use std::f64::consts::PI;

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
pub(super) fn sin_cos_deg(a: f64) -> (f64, f64) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::battlefield::tests::{cases, close, random_angle, unit, Rng};

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
}
