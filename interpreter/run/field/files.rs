//! The table's side of units made of files (see
//! [`crate::run::battlefield::files`]): which state holds each unit's formation,
//! how wide a file is, the measures that look at files (`opposite_file`,
//! `files_in_contact`, `room_to_expand`), and the bases kept as wide as
//! their formations.

use super::{fault, Field, R};
use crate::base::value::Value;
use crate::compile::ir::{Builtin, Ruleset, Ty};
use crate::run::battlefield::files as fl;
use crate::run::battlefield::{Base, Pt};
use crate::run::world::World;

/// Where the units' formations are: the ruleset's `state formation: int`.
#[derive(Clone, Debug)]
pub struct Formations {
    /// The state's id, and how many states a unit has.
    state: usize,
    states: usize,
    /// Per unit: one file's width (the ruleset's `base_width`).
    pub file_width: Vec<f64>,
    /// Per unit: the formation's [`fl::origin`] its base was last sized by.
    origin: Vec<i64>,
}

/// The id of the ruleset's `state formation: int`, if it has one.
pub fn formation_state(rs: &Ruleset) -> Option<usize> {
    rs.state("formation")
        .filter(|s| rs.states[*s as usize].ty == Ty::Int)
        .map(|s| s as usize)
}

/// How many files a unit's formation has, for its base: at least one (a
/// unit without files, such as a general, is one file wide).
fn files_for_width(f: i64) -> f64 {
    fl::files(f).max(1) as f64
}

/// A unit's formation in a world (0 when the ruleset keeps none).
fn formation_in(w: &World, state: usize, states: usize, u: usize) -> i64 {
    match w.state.get(u * states + state) {
        Some(Value::Int(f)) => *f,
        _ => 0,
    }
}

/// With a `formation` state, `base_width` is one file's width: each
/// unit's base is as wide as its files. Returns the file widths, and
/// widens `sizes` (width, depth) to the formations'.
pub fn widen(rs: &Ruleset, w: &World, sizes: &mut [(f64, f64)]) -> Option<Vec<f64>> {
    let s = formation_state(rs)?;
    let ns = rs.states.len();
    Some(
        sizes
            .iter_mut()
            .enumerate()
            .map(|(u, (width, _))| {
                let file = *width;
                *width = file * files_for_width(formation_in(w, s, ns, u));
                file
            })
            .collect(),
    )
}

impl Field {
    /// Keep the formations in `rs`'s `formation` state, each file
    /// `file_width[u]` wide (from [`widen`]).
    pub fn keep_formations(&mut self, rs: &Ruleset, w: &World, file_width: Vec<f64>) {
        let Some(state) = formation_state(rs) else {
            return;
        };
        let states = rs.states.len();
        let origin = (0..file_width.len())
            .map(|u| fl::origin(formation_in(w, state, states, u)))
            .collect();
        self.formations = Some(Box::new(Formations {
            state,
            states,
            file_width,
            origin,
        }));
    }

    /// Unit `u`'s formation, if the ruleset keeps formations.
    pub fn formation(&self, w: &World, u: usize) -> Option<i64> {
        let f = self.formations.as_ref()?;
        Some(formation_in(w, f.state, f.states, u))
    }

    /// Size every base on the table to its formation: as many file widths
    /// as it has files, the left edge moved out by the files gained on the
    /// left (and in by those lost there), the front edge kept. The rules
    /// changed the formations; the table follows. Says whether any base
    /// changed (what the battle remembers of the table is then stale).
    pub fn sync_formations(&mut self, w: &World) -> bool {
        let Some(f) = self.formations.as_ref() else {
            return false;
        };
        let mut changes = Vec::new();
        for u in 0..self.bases.len() {
            let form = formation_in(w, f.state, f.states, u);
            let fw = f.file_width[u];
            let width = fw * files_for_width(form);
            let shift = (fl::origin(form) - f.origin[u] + 8).rem_euclid(16) - 8;
            let b = self.bases[u];
            if (width - b.width).abs() > 1e-9 || shift != 0 {
                let old_left = -b.width / 2.0;
                let new_left = old_left - shift as f64 * fw;
                let centre = b.centre + b.right() * (new_left + width / 2.0);
                changes.push((
                    u,
                    Base::new(centre, b.facing, width, b.depth),
                    fl::origin(form),
                ));
            }
        }
        let changed = !changes.is_empty();
        for (u, b, origin) in changes {
            if let Some(f) = self.formations.as_mut() {
                f.origin[u] = origin;
            }
            self.set_base(u, b);
        }
        changed
    }

    /// A base of `u` with `left` more files on its left and `right` on its
    /// right (fewer, if negative).
    fn widened(&self, u: usize, left: f64, right: f64) -> Base {
        let b = self.bases[u];
        let fw = self
            .formations
            .as_ref()
            .map_or(b.width, |f| f.file_width[u]);
        let width = (b.width + (left + right) * fw).max(fw);
        let shift = (right - left) * fw / 2.0;
        Base::new(b.centre + b.right() * shift, b.facing, width, b.depth)
    }

    /// The measures of files.
    pub(super) fn file_measure(&self, w: &World, b: Builtin, v: &[Value]) -> R<Value> {
        let files = |u: usize| self.formation(w, u).map_or(1, |f| fl::files(f).max(1));
        let whole = |x: Value| match x {
            Value::Int(n) => Ok(n),
            other => Err(fault(
                format!("a file is a whole number, not {other}"),
                "count files from 1, the unit's leftmost",
            )),
        };
        Ok(match b {
            Builtin::OppositeFile => {
                let (a, d) = (self.unit(v[0])?, self.unit(v[2])?);
                let i = whole(v[1])?;
                Value::Int(self.opposite(a, files(a), i, d, files(d)))
            }
            Builtin::FilesInContact => {
                let (a, d) = (self.unit(v[0])?, self.unit(v[1])?);
                let (n, m) = (files(a), files(d));
                Value::Int(
                    (1..=n)
                        .filter(|i| self.opposite(a, n, *i, d, m) > 0)
                        .count() as i64,
                )
            }
            Builtin::RoomToExpand => {
                let a = self.unit(v[0])?;
                let (l, r) = (self.len(v[1])?, self.len(v[2])?);
                if !self.on_table[a] {
                    return Ok(false.into());
                }
                let nb = self.widened(a, l, r);
                (self.holds(&nb) && self.others(&[a]).all(|(_, o)| !nb.overlaps(o))).into()
            }
            _ => unreachable!("not a measure of files"),
        })
    }

    /// [`fl::opposite_file`] for two units on the table (0 if either is off
    /// it, or they are one unit).
    fn opposite(&self, a: usize, n: i64, i: i64, d: usize, m: i64) -> i64 {
        if a == d
            || !self.on_table[a]
            || !self.on_table[d]
            || self.dist(a, d) > crate::run::battlefield::CONTACT
        {
            return 0;
        }
        fl::opposite_file(&self.bases[a], n, i, &self.bases[d], m)
    }
}

/// Where file `i` (from 1) of a unit of `files` files lies on its base:
/// its front-left and front-right corners, and its rear-left (for a
/// picture).
pub fn file_corners(b: &Base, files: i64, i: i64) -> [Pt; 3] {
    let [fl_, fr, _, rl] = b.corners();
    let n = files.max(1) as f64;
    let s = (i - 1) as f64 / n;
    let t = i as f64 / n;
    let along = fr - fl_;
    [fl_ + along * s, fl_ + along * t, rl + along * s]
}
