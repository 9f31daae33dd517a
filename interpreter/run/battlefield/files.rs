//! Units made of files of bases: a *formation* is a row of files side by
//! side, each file a column of bases one behind the other (its depth is the
//! number of ranks it fills). The rules keep a unit's formation in an `int`
//! state (by convention `state formation: int`), and change it with the
//! builtins [`new`], [`remove`], [`expand`] and [`contract`]; the battle
//! engine reads it to size the unit's base on the table (one file width a
//! file) and to tell which files touch an enemy ([`opposite_file`]).
//!
//! # The number
//!
//! A formation is one non-negative `i64`, so that it is a value like any
//! other: exact odds carry it per branch, a battle's book of openings
//! compares it, a situation file can state it. File `i` (1 is the unit's
//! leftmost, seen from behind it) takes the four bits at `4 * (i - 1)`:
//! the low three its bases (0 to 7), the fourth set when its front base is
//! a *front-rank* base (a kind the rules single out, such as the sheet's
//! "Front-Rank" characteristic). Files are contiguous from file 1: the
//! first empty file ends the formation. Bits 56 to 59 count, modulo 16,
//! the files gained on the left (expanding there) less those lost there
//! (contracting, or file 1 emptied): the engine moves the unit's left edge
//! by the change, so a unit expands or contracts on the side the rules say.
//!
//! Limits: at most [`MAX_FILES`] files and [`MAX_RANKS`] bases a file.
//!
//! # The file-by-file loop
//!
//! `for file f, l, r of FORMATION where COND { ... }` (see the compiler) keeps
//! its bookkeeping in three more numbers: the *set* (bit `i - 1`: file `i`
//! fights; bit `16 + i - 1`: it has fought), the *queue* of files that must
//! fight next (four bits an entry, the front lowest, 0 ends it) and the
//! *marks* (three bits a file, what its fight left: a shove, a shatter).
//! The `loop_*` functions work them.

// The most files a formation holds is a language limit: the compiler
// unrolls a file-by-file fight to it.
use super::{Base, Pt, CONTACT, EPS};
use crate::compile::ir::MAX_FILES;
/// The most bases one file holds.
pub const MAX_RANKS: i64 = 7;
/// The most a `mark` may be (three bits).
pub const MAX_MARK: i64 = 7;

const ORIGIN_SHIFT: u32 = 56;

fn depth_of(f: i64, i: usize) -> i64 {
    (f >> (4 * i)) & 7
}

fn front_of(f: i64, i: usize) -> bool {
    (f >> (4 * i)) & 8 != 0
}

/// The formation's files as (bases, front-rank base) pairs, file 1 first.
fn unpack(f: i64) -> (Vec<(i64, bool)>, i64) {
    let mut files = Vec::new();
    for i in 0..MAX_FILES {
        let d = depth_of(f, i);
        if d == 0 {
            break;
        }
        files.push((d, front_of(f, i)));
    }
    (files, (f >> ORIGIN_SHIFT) & 15)
}

fn pack(files: &[(i64, bool)], origin: i64) -> i64 {
    if files.is_empty() {
        return 0;
    }
    let mut f = 0i64;
    for (i, (d, front)) in files.iter().take(MAX_FILES).enumerate() {
        if *d <= 0 {
            break;
        }
        f |= (d.min(&MAX_RANKS) | if *front { 8 } else { 0 }) << (4 * i);
    }
    f | (origin.rem_euclid(16) << ORIGIN_SHIFT)
}

/// `formation(files, bases, front)`: `bases` bases in `files` files, as
/// even as they go (the leftmost files take the odd bases), each file's
/// front base a front-rank base when `front`. Fewer bases than files make
/// one rank of that many; the files and bases are kept within the limits.
pub fn new(files: i64, bases: i64, front: bool) -> i64 {
    let n = files.clamp(1, MAX_FILES as i64).min(bases.max(0));
    if n <= 0 {
        return 0;
    }
    let bases = bases.min(n * MAX_RANKS);
    let (each, odd) = (bases / n, bases % n);
    let v: Vec<(i64, bool)> = (0..n).map(|i| (each + i64::from(i < odd), front)).collect();
    pack(&v, 0)
}

/// How many files.
pub fn files(f: i64) -> i64 {
    unpack(f).0.len() as i64
}

/// How many bases file `i` has (0 for a file the formation does not have).
pub fn file_bases(f: i64, i: i64) -> i64 {
    if i < 1 || i > files(f) {
        return 0;
    }
    depth_of(f, (i - 1) as usize)
}

/// How many bases in all.
pub fn bases(f: i64) -> i64 {
    unpack(f).0.iter().map(|(d, _)| d).sum()
}

/// The deepest file's bases: the formation's ranks.
pub fn ranks(f: i64) -> i64 {
    unpack(f).0.iter().map(|(d, _)| *d).max().unwrap_or(0)
}

/// How many files have a front-rank base at their head.
pub fn front_bases(f: i64) -> i64 {
    unpack(f).0.iter().filter(|(_, fr)| *fr).count() as i64
}

/// The index (0-based) of the deepest file among those `ok` allows,
/// the rightmost of equals (the left of a line holds its bases longest).
fn deepest(v: &[(i64, bool)], ok: impl Fn(&(i64, bool)) -> bool) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, x) in v.iter().enumerate() {
        if ok(x) && best.is_none_or(|b| x.0 >= v[b].0) {
            best = Some(i);
        }
    }
    best
}

/// `remove_bases(f, n)` (`front` false) and `remove_front_bases(f, n)`:
/// `n` bases taken off as casualties, one at a time, keeping the width:
/// each from the rear of the deepest file (the rightmost of equals), so a
/// file loses its last base only when every file is down to one, and the
/// line then narrows from the right. With `front`, while any file has a
/// front-rank base at its head, the base taken is one of those (from the
/// deepest such file; the next base steps up into its place), and a file
/// it empties goes as above. Past the last base the formation is empty (0).
pub fn remove(f: i64, n: i64, front: bool) -> i64 {
    let (mut v, mut origin) = unpack(f);
    for _ in 0..n.max(0) {
        if v.is_empty() {
            break;
        }
        let pick = if front { deepest(&v, |x| x.1) } else { None };
        let i = match pick {
            Some(i) => {
                v[i].1 = false;
                i
            }
            None => deepest(&v, |_| true).expect("a formation with files has a deepest"),
        };
        v[i].0 -= 1;
        if v[i].0 == 0 {
            v.remove(i);
            if i == 0 {
                origin -= 1;
            }
        }
    }
    pack(&v, origin)
}

/// `expand(f, left, right)`: up to `left` new files on the left and `right`
/// on the right (left first, one at a time), each of one base taken from
/// the rear of the deepest file (the rightmost of equals); it stops when
/// no file has a base to spare or the formation has [`MAX_FILES`] files.
/// New files have no front-rank base (the base came from the rear).
pub fn expand(f: i64, left: i64, right: i64) -> i64 {
    let (mut v, mut origin) = unpack(f);
    let grow = |v: &mut Vec<(i64, bool)>, on_left: bool| -> bool {
        if v.len() >= MAX_FILES {
            return false;
        }
        let Some(i) = deepest(v, |x| x.0 >= 2) else {
            return false;
        };
        v[i].0 -= 1;
        if on_left {
            v.insert(0, (1, false));
        } else {
            v.push((1, false));
        }
        true
    };
    for _ in 0..left.max(0) {
        if !grow(&mut v, true) {
            break;
        }
        origin += 1;
    }
    for _ in 0..right.max(0) {
        if !grow(&mut v, false) {
            break;
        }
    }
    pack(&v, origin)
}

/// `contract(f, left, right)`: up to `left` files taken in from the left
/// and `right` from the right (left first), never below one file; each
/// file's bases go to the rear of the shallowest remaining files (the
/// leftmost of equals), one at a time. A file whose bases cannot all find
/// room (every file left at [`MAX_RANKS`]) stays.
pub fn contract(f: i64, left: i64, right: i64) -> i64 {
    let (mut v, mut origin) = unpack(f);
    let shrink = |v: &mut Vec<(i64, bool)>, on_left: bool| -> bool {
        if v.len() <= 1 {
            return false;
        }
        let (gone, rest) = if on_left {
            (v[0].0, &v[1..])
        } else {
            (v[v.len() - 1].0, &v[..v.len() - 1])
        };
        let room: i64 = rest.iter().map(|x| MAX_RANKS - x.0).sum();
        if room < gone {
            return false;
        }
        let mut rest = rest.to_vec();
        for _ in 0..gone {
            let i = (0..rest.len())
                .min_by_key(|&i| rest[i].0)
                .expect("a formation of two files or more keeps one");
            rest[i].0 += 1;
        }
        *v = rest;
        true
    };
    for _ in 0..left.max(0) {
        if !shrink(&mut v, true) {
            break;
        }
        origin -= 1;
    }
    for _ in 0..right.max(0) {
        if !shrink(&mut v, false) {
            break;
        }
    }
    pack(&v, origin)
}

/// Files gained on the left, modulo 16 (see the module's doc).
pub fn origin(f: i64) -> i64 {
    (f >> ORIGIN_SHIFT) & 15
}

/// How the formation reads in a narrative: its files' bases, left to
/// right, a front-rank base marked `*` (`3*|3*|2*|2*`), or `no bases`.
pub fn show(f: i64) -> String {
    let (v, _) = unpack(f);
    if v.is_empty() {
        return "no bases".into();
    }
    v.iter()
        .map(|(d, fr)| format!("{d}{}", if *fr { "*" } else { "" }))
        .collect::<Vec<_>>()
        .join("|")
}

// ---------------------------------------------------------------- the loop

/// The loop's set with file `i` in it when `cond`.
pub fn loop_add(set: i64, i: i64, cond: bool) -> i64 {
    if cond && (1..=MAX_FILES as i64).contains(&i) {
        set | 1 << (i - 1)
    } else {
        set
    }
}

fn in_set(set: i64, i: i64) -> bool {
    (1..=MAX_FILES as i64).contains(&i) && set >> (i - 1) & 1 == 1
}

fn fought(set: i64, i: i64) -> bool {
    (1..=MAX_FILES as i64).contains(&i) && set >> (16 + i - 1) & 1 == 1
}

fn queue(q: i64) -> Vec<i64> {
    (0..MAX_FILES)
        .map(|k| q >> (4 * k) & 15)
        .take_while(|x| *x != 0)
        .collect()
}

fn unqueue(v: &[i64]) -> i64 {
    v.iter()
        .take(MAX_FILES)
        .enumerate()
        .fold(0, |q, (k, x)| q | x << (4 * k))
}

/// The queue with file `start` at its front (when it is in the set): the
/// loop's `from START`.
pub fn loop_start(q: i64, set: i64, start: i64) -> i64 {
    if !in_set(set, start) {
        return q;
    }
    let mut v = queue(q);
    v.retain(|x| *x != start);
    v.insert(0, start);
    unqueue(&v)
}

/// The file to fight next: the queue's first not yet fought, else the
/// lowest of the set not yet fought; 0 when every file has fought.
pub fn loop_next(set: i64, q: i64) -> i64 {
    if let Some(x) = queue(q).into_iter().find(|x| !fought(set, *x)) {
        return x;
    }
    (1..=MAX_FILES as i64)
        .find(|i| in_set(set, *i) && !fought(set, *i))
        .unwrap_or(0)
}

/// The set with file `i` fought, and the queue without it.
pub fn loop_took(set: i64, i: i64) -> i64 {
    if (1..=MAX_FILES as i64).contains(&i) {
        set | 1 << (16 + i - 1)
    } else {
        set
    }
}

/// The queue without file `i`.
pub fn loop_unqueue(q: i64, i: i64) -> i64 {
    let mut v = queue(q);
    v.retain(|x| *x != i);
    unqueue(&v)
}

/// After file `i` fought and left `mark`: when the mark is not 0, its
/// neighbours in the set that have not fought go to the front of the
/// queue (the one to its left first), so they fight next.
pub fn loop_after(q: i64, set: i64, i: i64, mark: i64) -> i64 {
    if mark == 0 {
        return q;
    }
    let mut v = queue(q);
    let next: Vec<i64> = [i - 1, i + 1]
        .into_iter()
        .filter(|n| in_set(set, *n) && !fought(set, *n))
        .collect();
    v.retain(|x| !next.contains(x));
    for (k, n) in next.into_iter().enumerate() {
        v.insert(k, n);
    }
    unqueue(&v)
}

/// The marks with file `i`'s set to `mark` (kept within 0 and [`MAX_MARK`]).
pub fn loop_mark(marks: i64, i: i64, mark: i64) -> i64 {
    if !(1..=MAX_FILES as i64).contains(&i) {
        return marks;
    }
    let sh = 3 * (i - 1);
    (marks & !(7 << sh)) | mark.clamp(0, MAX_MARK) << sh
}

/// File `j`'s mark, if it has fought (0 if not, or if there is no file `j`):
/// the loop's `l` and `r`, with `j` the file to the left and to the right.
pub fn loop_mark_of(marks: i64, set: i64, j: i64) -> i64 {
    if fought(set, j) {
        marks >> (3 * (j - 1)) & 7
    } else {
        0
    }
}

// ---------------------------------------------------------------- the table

/// The stretch of the edge from `p` to `q` between fractions `s` and `t`.
fn part(p: Pt, q: Pt, s: f64, t: f64) -> (Pt, Pt) {
    (p + (q - p) * s, p + (q - p) * t)
}

/// How much of segment `(a0, a1)` lies along the edge `(p, q)`: the length
/// they share, when both of the segment's ends are within contact of the
/// edge's line (0 otherwise).
fn shared(a0: Pt, a1: Pt, p: Pt, q: Pt) -> (f64, f64, f64) {
    let len = p.dist(q);
    if len < EPS {
        return (0.0, 0.0, 0.0);
    }
    let dir = (q - p) * (1.0 / len);
    let off = |x: Pt| (x - p).cross(dir).abs();
    if off(a0) > CONTACT || off(a1) > CONTACT {
        return (0.0, 0.0, 0.0);
    }
    let (s0, s1) = ((a0 - p).dot(dir), (a1 - p).dot(dir));
    let (lo, hi) = (s0.min(s1).max(0.0), s0.max(s1).min(len));
    ((hi - lo).max(0.0), lo / len, hi / len)
}

/// The file of unit `d` (of `d_files` files) that file `i` of unit `a` (of
/// `a_files`) touches with its front edge, or 0. File `i`'s front is its
/// share of `a`'s front edge; it touches the edge of `d` it lies along
/// (within contact) for the longest stretch. Against `d`'s front or rear
/// edge it fights the file of `d` whose share of that edge overlaps it
/// most (the leftmost of equals); against `d`'s left side edge, file 1;
/// against its right, the last file.
pub fn opposite_file(a: &Base, a_files: i64, i: i64, d: &Base, d_files: i64) -> i64 {
    if i < 1 || i > a_files || d_files < 1 {
        return 0;
    }
    let [fl, fr, _, _] = a.corners();
    let n = a_files as f64;
    let (a0, a1) = part(fl, fr, (i - 1) as f64 / n, i as f64 / n);
    let [dfl, dfr, drr, drl] = d.corners();
    // Each edge of d, and which file it is: 0 the files side by side along
    // it (front and rear, left to right), 1 file 1, 2 the last file.
    let edges = [(dfl, dfr, 0), (drl, drr, 0), (dfl, drl, 1), (dfr, drr, 2)];
    let mut best = (EPS, 0i64);
    for (p, q, kind) in edges {
        let (len, lo, hi) = shared(a0, a1, p, q);
        if len <= best.0 {
            continue;
        }
        let file = match kind {
            1 => 1,
            2 => d_files,
            _ => {
                let m = d_files as f64;
                let mut pick = (0.0, 1);
                for j in 1..=d_files {
                    let (s, t) = ((j - 1) as f64 / m, j as f64 / m);
                    let o = hi.min(t) - lo.max(s);
                    if o > pick.0 + EPS {
                        pick = (o, j);
                    }
                }
                pick.1
            }
        };
        best = (len, file);
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depths(f: i64) -> Vec<i64> {
        (1..=files(f)).map(|i| file_bases(f, i)).collect()
    }

    #[test]
    fn a_new_formation_spreads_its_bases() {
        let f = new(3, 8, false);
        assert_eq!(depths(f), vec![3, 3, 2]);
        assert_eq!((files(f), bases(f), ranks(f)), (3, 8, 3));
        assert_eq!(depths(new(4, 2, false)), vec![1, 1]);
        assert_eq!(new(4, 0, false), 0);
        assert_eq!(show(new(2, 4, true)), "2*|2*");
    }

    #[test]
    fn casualties_keep_the_width() {
        let f = new(4, 8, false);
        let f = remove(f, 3, false);
        assert_eq!(depths(f), vec![2, 1, 1, 1]);
        let f = remove(f, 2, false);
        assert_eq!(depths(f), vec![1, 1, 1]);
        assert_eq!(origin(f), 0);
        assert_eq!(remove(f, 9, false), 0);
    }

    #[test]
    fn front_rank_bases_go_first() {
        let f = new(2, 6, true);
        let f = remove(f, 1, true);
        assert_eq!(show(f), "3*|2");
        let f = remove(f, 2, true);
        assert_eq!(show(f), "2|1");
        // Without `front`, the rear bases go and the front ranks stay.
        assert_eq!(show(remove(new(2, 6, true), 2, false)), "2*|2*");
    }

    #[test]
    fn expanding_and_contracting() {
        let f = new(2, 8, false);
        let g = expand(f, 1, 1);
        assert_eq!(depths(g), vec![1, 3, 3, 1]);
        assert_eq!(origin(g), 1);
        let h = contract(g, 1, 0);
        assert_eq!(depths(h), vec![3, 3, 2]);
        assert_eq!(origin(h), 0);
        // No base to spare: one rank stays one rank.
        assert_eq!(expand(new(3, 3, false), 0, 2), new(3, 3, false));
        // Never below one file.
        assert_eq!(files(contract(new(2, 2, false), 5, 5)), 1);
    }

    #[test]
    fn the_loop_fights_neighbours_of_a_mark_next() {
        let mut set = 0;
        for i in 1..=4 {
            set = loop_add(set, i, true);
        }
        let q = loop_start(0, set, 3);
        assert_eq!(loop_next(set, q), 3);
        let set = loop_took(set, 3);
        let q = loop_unqueue(q, 3);
        // Unmarked: the lowest not yet fought.
        assert_eq!(loop_next(set, q), 1);
        // Marked: its neighbours, the left one first.
        let q = loop_after(q, set, 3, 2);
        assert_eq!(loop_next(set, q), 2);
        let marks = loop_mark(0, 3, 2);
        // File 2's right neighbour fought and left 2; its left has not fought.
        assert_eq!(loop_mark_of(marks, set, 3), 2);
        assert_eq!(loop_mark_of(marks, set, 1), 0);
        assert_eq!(loop_mark_of(marks, set, 0), 0);
    }

    #[test]
    fn files_face_files_front_to_front() {
        // Four files 4 wide facing north, and three files 3 wide facing
        // south, their front edges touching, the second's left end (east)
        // level with the first's right end.
        let a = Base::new(Pt::new(0.0, 0.0), 0.0, 4.0, 1.0);
        let d = Base::new(Pt::new(0.5, 1.0), 180.0, 3.0, 1.0);
        // a's file 1 spans x -2..-1: beyond d's right end (x -1): none.
        assert_eq!(opposite_file(&a, 4, 1, &d, 3), 0);
        // a's file 2 (x -1..0) faces d's file 3 (x -1..0), and so on.
        assert_eq!(opposite_file(&a, 4, 2, &d, 3), 3);
        assert_eq!(opposite_file(&a, 4, 4, &d, 3), 1);
        // Against a side edge: d's right side is at its west (x = -1).
        // d facing east, its right side edge (south) along a's file 1.
        let side = Base::new(Pt::new(-1.5, 1.0), 90.0, 1.0, 1.0);
        assert_eq!(opposite_file(&a, 4, 1, &side, 2), 2);
        assert_eq!(opposite_file(&a, 4, 2, &side, 2), 0);
    }
}
