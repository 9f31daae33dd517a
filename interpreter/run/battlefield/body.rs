//! Groups: several bases moving as one rigid body ([`Body`]), and which
//! bases make up a group ([`group_roots`]).

use super::{norm_angle, norm_bearing, Base, Pt};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::battlefield::tests::{close, pt_close, unit};

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
}
