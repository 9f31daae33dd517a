//! The field of a battle: the table, its terrain, and where each unit
//! stands. Rules read it through the battlefield's measures (the builtins
//! `distance`, `zone`, `in_terrain`, ...), evaluated here from the geometry
//! of [`crate::run::battlefield`]. A fact derived `in battle:` is written over
//! these measures, so one ruleset serves both odds situations (which state
//! the facts) and battles (which measure them).

use crate::base::value::{Value, UNLIMITED};
use crate::compile::ir::{Builtin, Ruleset};
use crate::front::diagnostic::Diag;
use crate::run::battlefield::{Base, Pt, Shape, Zone};
use crate::run::eval::{EvalError, R};
use crate::run::world::World;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Arc;

pub mod files;

/// A terrain feature on the table.
#[derive(Clone, Debug)]
pub struct Feature {
    pub name: String,
    /// The `terrain` enum value (its symbol).
    pub kind: u32,
    pub kind_name: String,
    pub shape: Shape,
}

/// A terrain feature near a move ([`Field::terrain_within`]).
pub struct NearFeature {
    bounds: (Pt, Pt),
    /// Does the base the move starts from touch it?
    standing: bool,
}

/// Per unit, a number that changes whenever its base does, and comes back
/// when the base is put back where it stood ([`Field::put_back`]): what is
/// remembered of a pair of units ([`DistanceCache`], [`ZoneCache`]) is
/// good while both numbers are those it was worked out at, so that moving
/// a unit forgets its pairs at once. Atomics only so that a prepared field
/// can be shared between threads; each game has its own.
///
/// The numbers are 32 bits: when they run out (some four billion moves
/// into one game), the field forgets everything and numbers afresh
/// ([`Field::moved`]); `round` counts how often, so that a unit put back
/// after that is not given a number of the round before.
#[derive(Debug, Default)]
struct Epochs {
    of: Vec<AtomicU32>,
    /// The next number not yet given to any unit's base.
    next: AtomicU32,
    /// How many times the numbers have begun again.
    round: u32,
}

impl Epochs {
    fn new(n: usize) -> Self {
        Self::numbered(n, 0)
    }
    /// Every unit at its first number, in the given round.
    fn numbered(n: usize, round: u32) -> Self {
        Epochs {
            of: (0..n).map(|_| AtomicU32::new(1)).collect(),
            next: AtomicU32::new(2),
            round,
        }
    }
    /// The pair's tag: what a remembered value of it is good for.
    #[inline]
    fn tag(&self, a: usize, b: usize) -> u64 {
        (u64::from(self.of[a].load(Relaxed)) << 32) | u64::from(self.of[b].load(Relaxed))
    }
    /// Unit `u` stands somewhere new: false, with nothing given, when the
    /// numbers have run out.
    #[must_use]
    fn moved(&self, u: usize) -> bool {
        let e = self.next.load(Relaxed);
        if e == u32::MAX {
            return false;
        }
        self.next.store(e + 1, Relaxed);
        self.of[u].store(e, Relaxed);
        true
    }
}

impl Clone for Epochs {
    fn clone(&self) -> Self {
        Epochs {
            of: self
                .of
                .iter()
                .map(|e| AtomicU32::new(e.load(Relaxed)))
                .collect(),
            next: AtomicU32::new(self.next.load(Relaxed)),
            round: self.round,
        }
    }
}

/// Per unit, its nearest friend and enemy when last asked, plus 1 (0:
/// none): where [`Field::nearest`] looks first. What they say changes how
/// many bases are measured, never an answer.
#[derive(Debug, Default)]
struct Hints(Vec<AtomicU16>);

impl Clone for Hints {
    fn clone(&self) -> Self {
        Hints(
            self.0
                .iter()
                .map(|h| AtomicU16::new(h.load(Relaxed)))
                .collect(),
        )
    }
}

/// No pair's tag: [`Epochs`] start at 1.
const NEVER: u64 = 0;

/// Distances between bases, remembered until either base moves: rules ask
/// for the same distances many times over (every `any e:` over the units).
/// A cell is good while its tag is the pair's ([`Epochs::tag`]).
#[derive(Debug, Default)]
pub struct DistanceCache {
    n: usize,
    /// f64 bits.
    cells: Vec<AtomicU64>,
    tags: Vec<AtomicU64>,
}

/// `n` cells made by `cell`, or none when the memory cannot be had: a
/// per-pair cache that cannot be allocated remembers nothing (the same
/// game, played slower) instead of aborting the program. (A scenario has
/// at most [`crate::run::world::MAX_UNITS`] units: a cache of 1,000 takes
/// 16 MB, or 9 MB for zones.)
fn cells<T>(n: Option<usize>, cell: impl FnMut(usize) -> T) -> Vec<T> {
    let mut v = Vec::new();
    if let Some(n) = n {
        if v.try_reserve_exact(n).is_ok() {
            v.extend((0..n).map(cell));
        }
    }
    v
}

impl DistanceCache {
    fn new(n: usize) -> Self {
        let pairs = n.checked_mul(n);
        let cells = cells(pairs, |_| AtomicU64::new(0));
        let tags = cells_like(&cells, |_| AtomicU64::new(NEVER));
        DistanceCache { n, cells, tags }
    }
    #[inline]
    fn get(&self, e: &Epochs, a: usize, b: usize) -> Option<f64> {
        let i = a * self.n + b;
        let tag = self.tags.get(i)?.load(Relaxed);
        (tag == e.tag(a, b)).then(|| f64::from_bits(self.cells[i].load(Relaxed)))
    }
    /// Nothing is known.
    fn forget_all(&self) {
        forget_tags(&self.tags);
    }
    fn put(&self, e: &Epochs, a: usize, b: usize, d: f64) {
        for (i, tag) in [(a * self.n + b, e.tag(a, b)), (b * self.n + a, e.tag(b, a))] {
            if let (Some(c), Some(t)) = (self.cells.get(i), self.tags.get(i)) {
                c.store(d.to_bits(), Relaxed);
                t.store(tag, Relaxed);
            }
        }
    }
}

/// Every cell's tag is no pair's: nothing in the cache is good.
fn forget_tags(tags: &[AtomicU64]) {
    for t in tags {
        t.store(NEVER, Relaxed);
    }
}

/// As many cells as `like` has, made by `cell` (none if the memory cannot
/// be had, see [`cells`]).
fn cells_like<T, U>(like: &[U], cell: impl FnMut(usize) -> T) -> Vec<T> {
    cells(Some(like.len()), cell)
}

/// A copy of cells of 64 bits (a cache's values or tags); none if the
/// memory cannot be had (see [`cells`]).
fn copied(v: &[AtomicU64]) -> Vec<AtomicU64> {
    cells_like(v, |i| AtomicU64::new(v[i].load(Relaxed)))
}

impl Clone for DistanceCache {
    fn clone(&self) -> Self {
        let (cells, tags) = (copied(&self.cells), copied(&self.tags));
        // Both or neither: a cell without its tag is never good.
        if cells.len() != tags.len() {
            return DistanceCache {
                n: self.n,
                ..Default::default()
            };
        }
        DistanceCache {
            n: self.n,
            cells,
            tags,
        }
    }
}

/// Where each unit lies as seen from each other (its zone, and which flank
/// zone it has a part in), remembered until either base moves: the rules
/// ask "to front? to flank? which flank?" of the same pairs again and
/// again. Tagged like [`DistanceCache`]'s cells. A cell: 0 unknown; bits
/// 0-1 the zone (1 front, 2 flank, 3 rear, 0 unknown); bit 2 set when the
/// flank is known, bits 3-4 which (0 none, 1 left, 2 right).
#[derive(Debug, Default)]
pub struct ZoneCache {
    n: usize,
    cells: Vec<AtomicU8>,
    tags: Vec<AtomicU64>,
}

impl ZoneCache {
    fn new(n: usize) -> Self {
        let cells = cells(n.checked_mul(n), |_| AtomicU8::new(0));
        let tags = cells_like(&cells, |_| AtomicU64::new(NEVER));
        ZoneCache { n, cells, tags }
    }
    fn get(&self, e: &Epochs, a: usize, b: usize) -> u8 {
        let i = a * self.n + b;
        match (self.tags.get(i), self.cells.get(i)) {
            (Some(t), Some(c)) if t.load(Relaxed) == e.tag(a, b) => c.load(Relaxed),
            _ => 0,
        }
    }
    /// Nothing is known.
    fn forget_all(&self) {
        forget_tags(&self.tags);
    }
    fn set(&self, e: &Epochs, a: usize, b: usize, bits: u8) {
        let (i, tag) = (a * self.n + b, e.tag(a, b));
        let (Some(t), Some(c)) = (self.tags.get(i), self.cells.get(i)) else {
            return;
        };
        if t.load(Relaxed) == tag {
            c.fetch_or(bits, Relaxed);
        } else {
            c.store(bits, Relaxed);
            t.store(tag, Relaxed);
        }
    }
}

impl Clone for ZoneCache {
    fn clone(&self) -> Self {
        let cells = cells_like(&self.cells, |i| AtomicU8::new(self.cells[i].load(Relaxed)));
        let tags = copied(&self.tags);
        // Both or neither: a cell without its tag is never good.
        if cells.len() != tags.len() {
            return ZoneCache {
                n: self.n,
                ..Default::default()
            };
        }
        ZoneCache {
            n: self.n,
            cells,
            tags,
        }
    }
}

/// Which group each unit on the table belongs to (see
/// [`Base::linked_with`]), worked out once after the table changes and kept
/// until a base moves or a unit comes onto or leaves the table. Atomics,
/// like [`DistanceCache`]'s, so that a prepared field can be shared.
#[derive(Debug, Default)]
pub struct GroupCache {
    known: std::sync::atomic::AtomicBool,
    /// Per unit: the lowest-numbered unit of its group; [`NO_GROUP`] off
    /// the table.
    of: Vec<std::sync::atomic::AtomicU32>,
}

const NO_GROUP: u32 = u32::MAX;

impl GroupCache {
    fn new(n: usize) -> Self {
        GroupCache {
            known: std::sync::atomic::AtomicBool::new(false),
            of: (0..n)
                .map(|_| std::sync::atomic::AtomicU32::new(NO_GROUP))
                .collect(),
        }
    }
    fn forget(&self) {
        self.known
            .store(false, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Clone for GroupCache {
    fn clone(&self) -> Self {
        use std::sync::atomic::AtomicBool;
        GroupCache {
            known: AtomicBool::new(self.known.load(Relaxed)),
            of: self
                .of
                .iter()
                .map(|c| AtomicU32::new(c.load(Relaxed)))
                .collect(),
        }
    }
}

/// Where a unit stands, its [`Epochs`] number there and what is known of
/// the groups, taken before moves are weighed ([`Field::stand`]) and put
/// back after ([`Field::put_back`]): what was known of its pairs there is
/// good again, but for the cells the spots weighed wrote over.
pub struct Stand {
    u: usize,
    base: Base,
    /// Its [`Epochs`] number there, and the round of that number.
    epoch: u32,
    round: u32,
    groups: Option<Vec<u32>>,
    /// Where its centre stood before its last move ([`Field::last_from`]).
    from: Pt,
}

/// Where everything is.
#[derive(Clone, Debug)]
pub struct Field {
    pub width: f64,
    pub depth: f64,
    terrain: Arc<Vec<Feature>>,
    /// Per feature of `terrain`, its bounding box (the terrain never
    /// changes after [`Field::new`]).
    terrain_bounds: Vec<(Pt, Pt)>,
    /// Per unit: its base.
    pub bases: Vec<Base>,
    /// Per unit: still on the table (not routed, destroyed or fled).
    /// Change it with [`Field::set_on_table`], which keeps the groups known.
    pub on_table: Vec<bool>,
    /// Per unit: held back off the table by the scenario (`reserve = true`)
    /// and not yet arrived; cleared when a `place` puts it down.
    pub reserve: Vec<bool>,
    /// Per unit: the y of its army's base edge.
    pub edge: Vec<f64>,
    /// Per unit: its command (numbered across both armies).
    pub command: Vec<u16>,
    /// While a move is being weighed: the moving unit and the bases along
    /// its path (`touches_terrain` then looks along the whole path).
    pub path: Option<(u16, Vec<Base>)>,
    /// The symbols of core's `zone` values: front, flank, rear.
    pub zone_syms: [u32; 3],
    /// While a group's move is being weighed: the other members and their
    /// paths (`touches_terrain` looks along each; see `path`).
    pub member_paths: Vec<(u16, Vec<Base>)>,
    /// Per unit, the number of where its base is, for the caches.
    epochs: Epochs,
    /// Where [`Field::nearest`] looks first.
    hints: Hints,
    /// Distances between bases, as far as known.
    pub cache: DistanceCache,
    /// Zones and flanks between bases, as far as known.
    pub zones: ZoneCache,
    /// The groups, as far as known.
    pub groups: GroupCache,
    /// Per unit: where its centre stood when the turn began.
    pub turn_start: Vec<Pt>,
    /// Per unit: where its centre stood before it was last moved this turn
    /// (where it stands, if it has not moved since the turn began):
    /// `crossed_terrain` looks along the line from there.
    pub last_from: Vec<Pt>,
    /// (a, b): a's last `retire` this turn went through b's base
    /// (`retired_through`); forgotten when a retires again and when a turn
    /// begins.
    pub retired_through: Vec<(u16, u16)>,
    /// Per side: its units, in order (worked out from the world the first
    /// time they are needed, and again after [`Field::forget_sides`]).
    sides: std::sync::OnceLock<Vec<Vec<u16>>>,
    /// The units' formations, when the ruleset keeps them (see [`files`]).
    pub formations: Option<Box<files::Formations>>,
}

/// How finely the rules see a distance ([`to_value`]): a limit `n` is
/// plainly passed only beyond `n + KEPT_TO`.
pub const KEPT_TO: f64 = 1.0 / 64.0;

/// A whole-number limit `n` on a distance, as the rules read it: bases
/// further apart than this plainly pass it.
pub fn plainly_beyond(n: i64) -> f64 {
    n as f64 + KEPT_TO
}

/// A distance as the rules see it: in 1/64ths of the measure, so that
/// comparisons such as `distance(a, b) <= 3` are exact and float noise
/// (2.9999999) does not decide a rule.
/// Whether the segment from `p` to `q` passes within `d` (plus
/// [`crate::run::battlefield::EPS`]) of `base`: through it, or with an end
/// within `d` of it, or within `d` of one of its corners (the nearest two
/// convex shapes come is at a vertex of one of them).
fn segment_within(base: &Base, p: Pt, q: Pt, d: f64) -> bool {
    if base.segment_hits(p, q) {
        return true;
    }
    let slack = d + crate::run::battlefield::EPS;
    if base.distance_to_point(p) <= slack || base.distance_to_point(q) <= slack {
        return true;
    }
    let (dx, dy) = (q.x - p.x, q.y - p.y);
    let len2 = dx * dx + dy * dy;
    base.corners().iter().any(|c| {
        let t = if len2 > 0.0 {
            (((c.x - p.x) * dx + (c.y - p.y) * dy) / len2).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let (nx, ny) = (p.x + t * dx - c.x, p.y + t * dy - c.y);
        (nx * nx + ny * ny).sqrt() <= slack
    })
}

pub fn to_value(x: f64) -> Value {
    if x >= UNLIMITED as f64 {
        return Value::Int(UNLIMITED);
    }
    Value::frac((x * 64.0).round() as i64, 64)
}

/// A number of the rules as a length.
pub fn to_len(v: Value) -> Option<f64> {
    v.as_frac().map(|(n, d)| n as f64 / d as f64)
}

fn fault(msg: String, help: &str) -> EvalError {
    EvalError::Fault(Box::new(Diag::new("muster::runtime", msg).help(help)))
}

impl Field {
    /// A field with the units' bases.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        width: f64,
        depth: f64,
        terrain: Arc<Vec<Feature>>,
        bases: Vec<Base>,
        edge: Vec<f64>,
        command: Vec<u16>,
        zone_syms: [u32; 3],
    ) -> Field {
        let n = bases.len();
        let turn_start: Vec<Pt> = bases.iter().map(|b| b.centre).collect();
        let last_from = turn_start.clone();
        let terrain_bounds = terrain.iter().map(|f| f.shape.bounds()).collect();
        Field {
            turn_start,
            last_from,
            retired_through: Vec::new(),
            width,
            depth,
            terrain,
            terrain_bounds,
            on_table: vec![true; n],
            reserve: vec![false; n],
            bases,
            edge,
            command,
            path: None,
            member_paths: Vec::new(),
            zone_syms,
            epochs: Epochs::new(n),
            hints: Hints((0..2 * n).map(|_| AtomicU16::new(0)).collect()),
            cache: DistanceCache::new(n),
            zones: ZoneCache::new(n),
            groups: GroupCache::new(n),
            sides: std::sync::OnceLock::new(),
            formations: None,
        }
    }

    /// Put unit `u` on a new base (its remembered distances are forgotten).
    pub fn set_base(&mut self, u: usize, b: Base) {
        if self.bases[u] != b {
            self.last_from[u] = self.bases[u].centre;
            self.bases[u] = b;
            self.moved(u);
            self.groups.forget();
        }
    }

    /// Unit `u` stands somewhere new: it gets a new [`Epochs`] number,
    /// which forgets its pairs. When the numbers run out, every unit is
    /// numbered afresh and nothing remembered of any pair is good.
    #[inline]
    fn moved(&mut self, u: usize) {
        if !self.epochs.moved(u) {
            self.renumber(u);
        }
    }

    /// The numbers have run out ([`Field::moved`]): number afresh, forget
    /// everything, and give unit `u` its new number.
    #[cold]
    #[inline(never)]
    fn renumber(&mut self, u: usize) {
        self.epochs = Epochs::numbered(self.bases.len(), self.epochs.round.wrapping_add(1));
        self.cache.forget_all();
        self.zones.forget_all();
        let fresh = self.epochs.moved(u);
        debug_assert!(fresh, "a new round has numbers to give");
    }

    /// The units' sides have changed (a game's set-up settled them, or a
    /// position was taken from the book): the lists by side are worked out
    /// again when next needed.
    pub fn forget_sides(&mut self) {
        self.sides = std::sync::OnceLock::new();
    }

    /// Put every unit where `bases` says, on the table or not, held in
    /// reserve or not, with the turn begun at `turn_start`, each unit's
    /// last move made from `last_from`, and the units retired through; everything known of distances, zones and groups
    /// is forgotten.
    pub fn restore(
        &mut self,
        bases: &[Base],
        on_table: &[bool],
        reserve: &[bool],
        (turn_start, last_from): (&[Pt], &[Pt]),
        retired_through: &[(u16, u16)],
    ) {
        self.bases.copy_from_slice(bases);
        self.on_table.copy_from_slice(on_table);
        self.reserve.copy_from_slice(reserve);
        self.turn_start.copy_from_slice(turn_start);
        self.last_from.copy_from_slice(last_from);
        self.retired_through.clear();
        self.retired_through.extend_from_slice(retired_through);
        for u in 0..self.bases.len() {
            self.moved(u);
        }
        self.groups.forget();
    }

    /// Where unit `u` stands now, with what is known of its distances.
    pub fn stand(&self, u: usize) -> Stand {
        Stand {
            u,
            base: self.bases[u],
            from: self.last_from[u],
            epoch: self.epochs.of[u].load(Relaxed),
            round: self.epochs.round,
            groups: self
                .groups
                .known
                .load(Relaxed)
                .then(|| self.groups.of.iter().map(|g| g.load(Relaxed)).collect()),
        }
    }

    /// Put the unit back where it stood (nothing else may have moved
    /// since), with what was known then (nothing, if the [`Epochs`]
    /// numbers ran out and began again meanwhile).
    pub fn put_back(&mut self, s: &Stand) {
        self.bases[s.u] = s.base;
        self.last_from[s.u] = s.from;
        if s.round == self.epochs.round {
            self.epochs.of[s.u].store(s.epoch, Relaxed);
        } else {
            // Numbered afresh since: its old number may be given again.
            self.moved(s.u);
        }
        match &s.groups {
            Some(of) => {
                for (g, v) in self.groups.of.iter().zip(of) {
                    g.store(*v, Relaxed);
                }
                self.groups.known.store(true, Relaxed);
            }
            None => self.groups.forget(),
        }
    }

    /// A new turn: every unit's travel this turn starts from where it
    /// stands, and no unit has retired through another yet.
    pub fn start_turn(&mut self) {
        for ((s, f), b) in self
            .turn_start
            .iter_mut()
            .zip(&mut self.last_from)
            .zip(&self.bases)
        {
            *s = b.centre;
            *f = b.centre;
        }
        self.retired_through.clear();
    }

    /// Unit `u` has just retired, through the units `passed` (none: it
    /// went through nobody): what it went through before is forgotten.
    pub fn retired(&mut self, u: u16, passed: &[u16]) {
        self.retired_through.retain(|(a, _)| *a != u);
        self.retired_through.extend(passed.iter().map(|b| (u, *b)));
    }

    /// Put unit `u` on the table, or take it off.
    pub fn set_on_table(&mut self, u: usize, on: bool) {
        if self.on_table[u] != on {
            self.on_table[u] = on;
            self.groups.forget();
        }
    }

    /// Per unit: the lowest-numbered unit of its group (units on the table
    /// of one side and one command, linked by a chain of touching, aligned
    /// bases: [`Base::linked_with`]), or None off the table. Worked out for
    /// every unit at once, and again only after the table changes.
    pub fn group_of(&self, w: &World, u: usize) -> Option<usize> {
        if !self.groups.known.load(Relaxed) {
            let roots = crate::run::battlefield::group_roots(&self.bases, |a, b| {
                self.on_table[a]
                    && self.on_table[b]
                    && self.command[a] == self.command[b]
                    && w.units[a].side == w.units[b].side
            });
            for (x, r) in roots.into_iter().enumerate() {
                let g = if self.on_table[x] { r as u32 } else { NO_GROUP };
                self.groups.of[x].store(g, Relaxed);
            }
            self.groups.known.store(true, Relaxed);
        }
        match self.groups.of[u].load(Relaxed) {
            NO_GROUP => None,
            g => Some(g as usize),
        }
    }

    /// The longest straight move whose end can be on the table, from
    /// anywhere on it: the table's diagonal.
    pub fn longest_move(&self) -> f64 {
        self.width.hypot(self.depth)
    }

    /// Does the table hold the whole base?
    pub fn holds(&self, b: &Base) -> bool {
        b.corners().iter().all(|p| {
            p.x >= -1e-6 && p.y >= -1e-6 && p.x <= self.width + 1e-6 && p.y <= self.depth + 1e-6
        })
    }

    /// Move unit `u` straight back (away from its facing) by up to `d`, in
    /// quarters, stopping short of the table edge and of any other unit on
    /// the table; how far it went. (A hook's `fall_back`.)
    pub fn fall_back(&mut self, u: usize, d: f64) -> f64 {
        let start = self.bases[u];
        let clear = |b: &Base| {
            self.holds(b)
                && (0..self.bases.len())
                    .all(|o| o == u || !self.on_table[o] || !self.bases[o].overlaps(b))
        };
        let mut went = 0.0;
        let mut k = 1;
        while k as f64 * 0.25 <= d + 1e-9 {
            let b = start.advanced(-(k as f64) * 0.25);
            if !clear(&b) {
                break;
            }
            went = k as f64 * 0.25;
            k += 1;
        }
        if went > 0.0 {
            self.set_base(u, start.advanced(-went));
        }
        went
    }

    /// `room_behind(a)`: how far unit `a` could go straight back, facing
    /// kept, before its base left the table or came within contact of an
    /// enemy's base behind it ([`Base::room_behind_to`]); 0 off the table.
    /// Friends do not count: whether one is passed is the rules' to say.
    pub fn room_behind(&self, w: &World, a: usize) -> f64 {
        if !self.on_table[a] {
            return 0.0;
        }
        let base = &self.bases[a];
        let back = -base.forward();
        // The table's edge: the first corner to reach it.
        let mut room = f64::INFINITY;
        for c in base.corners() {
            for (p, d, edge) in [(c.x, back.x, self.width), (c.y, back.y, self.depth)] {
                if d < 0.0 {
                    room = room.min(p / -d);
                } else if d > 0.0 {
                    room = room.min((edge - p) / d);
                }
            }
        }
        let side = w.units[a].side;
        for (o, ob) in self.others(&[a]) {
            if w.units[o].side == side {
                continue;
            }
            if let Some(r) = base.room_behind_to(ob) {
                room = room.min(r);
            }
        }
        room.max(0.0)
    }

    /// The closest distance between two units' bases.
    pub fn dist(&self, a: usize, b: usize) -> f64 {
        if let Some(d) = self.cache.get(&self.epochs, a, b) {
            return d;
        }
        let d = self.bases[a].distance(&self.bases[b]);
        self.cache.put(&self.epochs, a, b, d);
        d
    }

    /// [`Field::dist`], or None when the bases are certainly further apart
    /// than `d` (by a remembered distance, or by the separating axes:
    /// [`Base::surely_apart`]), measured only when they may not be.
    #[inline]
    pub fn dist_within(&self, a: usize, b: usize, d: f64) -> Option<f64> {
        let x = match self.cache.get(&self.epochs, a, b) {
            Some(x) => x,
            None if self.bases[a].surely_apart(&self.bases[b], d) => return None,
            None => self.dist(a, b),
        };
        (x <= d).then_some(x)
    }

    /// The units on the table, other than `u`, that could matter to a move
    /// of `u` from `start` whose bases' centres stay within `reach` of the
    /// start: within `buffer` of one of its bases, or overlapping one. (A
    /// path's box of centres lies within `reach` of the start on each axis,
    /// so within `reach` times the square root of 2 of it; the margin is
    /// far above rounding.) In the units' order, written into `out`.
    pub fn near(&self, u: usize, start: &Base, reach: f64, buffer: f64, out: &mut Vec<usize>) {
        out.clear();
        out.extend((0..self.bases.len()).filter(|&o| {
            let b = &self.bases[o];
            o != u
                && self.on_table[o]
                && start.centre.dist(b.centre)
                    <= reach * 1.5 + start.radius() + b.radius() + buffer + 1e-3
        }));
    }

    /// Are the two units' bases certainly no more than `d` apart? Decided
    /// by a remembered distance, or by the centres (the bases are no
    /// further apart than their centres) with a margin far above rounding;
    /// `false` means "measure to know".
    #[inline]
    pub fn close(&self, a: usize, b: usize, d: f64) -> bool {
        if let Some(x) = self.cache.get(&self.epochs, a, b) {
            return x <= d;
        }
        self.bases[a].centre.dist(self.bases[b].centre) <= d - 1e-9
    }

    /// Where unit `b` lies as seen from unit `a` (remembered).
    pub fn zone(&self, a: usize, b: usize) -> Zone {
        let bits = self.zones.get(&self.epochs, a, b);
        let zone = match bits & 3 {
            1 => return Zone::Front,
            2 => return Zone::Flank,
            3 => return Zone::Rear,
            _ => {
                if self.bases[a].in_front_zone(&self.bases[b]) {
                    Zone::Front
                } else if self.flank(a, b).is_some() {
                    Zone::Flank
                } else {
                    Zone::Rear
                }
            }
        };
        self.zones.set(
            &self.epochs,
            a,
            b,
            match zone {
                Zone::Front => 1,
                Zone::Flank => 2,
                Zone::Rear => 3,
            },
        );
        zone
    }

    /// Which flank zone of unit `a` unit `b` has a part in (remembered).
    pub fn flank(&self, a: usize, b: usize) -> Option<crate::run::battlefield::Side> {
        use crate::run::battlefield::Side;
        let bits = self.zones.get(&self.epochs, a, b);
        if bits & 4 != 0 {
            return match (bits >> 3) & 3 {
                1 => Some(Side::Left),
                2 => Some(Side::Right),
                _ => None,
            };
        }
        let side = self.bases[a].flank_side(&self.bases[b]);
        let code = match side {
            None => 0,
            Some(Side::Left) => 1,
            Some(Side::Right) => 2,
        };
        self.zones.set(&self.epochs, a, b, 4 | (code << 3));
        side
    }

    /// Are the two units' bases certainly more than `d` apart? Decided by
    /// a remembered distance, or by the centres (no point of a base is
    /// further than its radius from its centre) with a margin far above
    /// rounding; `false` means "measure to know".
    #[inline]
    pub fn apart(&self, a: usize, b: usize, d: f64) -> bool {
        if let Some(x) = self.cache.get(&self.epochs, a, b) {
            return x > d;
        }
        self.apart_by_centres(a, b, d)
    }

    /// [`Field::apart`] by the centres alone. Its answer does not depend on
    /// which distances happen to be remembered, so what is decided by it
    /// is decided alike when a game is replayed from the tape of its rules'
    /// answers (with nothing remembered).
    pub fn apart_by_centres(&self, a: usize, b: usize, d: f64) -> bool {
        let (p, q) = (&self.bases[a], &self.bases[b]);
        p.centre.dist(q.centre) - p.radius() - q.radius() > d + 1e-9
    }

    /// Are units `a` and `b` certainly further apart than `d`, by what does
    /// not depend on remembered distances: either is off the table (their
    /// distance is `unlimited`) and `d` is less, or their centres put them
    /// plainly further apart ([`Field::apart_by_centres`]).
    pub fn beyond(&self, a: usize, b: usize, d: f64) -> bool {
        if !self.on_table[a] || !self.on_table[b] {
            return d < UNLIMITED as f64;
        }
        self.apart_by_centres(a, b, d)
    }

    /// The symbols of `zone`'s values in a ruleset (core declares them).
    pub fn zone_symbols(rs: &Ruleset) -> Option<[u32; 3]> {
        let z = rs.enums.iter().find(|e| e.name == "zone")?;
        let sym = |n: &str| {
            z.variants
                .iter()
                .copied()
                .find(|s| rs.symbols[*s as usize] == n)
        };
        Some([sym("to_front")?, sym("to_flank")?, sym("to_rear")?])
    }

    /// How far unit `a`'s centre is from the left-hand side edge of the
    /// table as `b`'s army sees it from its base edge: an army at y = 0
    /// looks toward greater y, its left at x = 0; one at the far edge looks
    /// the other way, its left at x = width.
    fn left_edge_gap(&self, a: usize, b: usize) -> f64 {
        let x = self.bases[a].centre.x;
        if self.edge[b] < self.depth / 2.0 {
            x
        } else {
            self.width - x
        }
    }

    fn unit(&self, v: Value) -> R<usize> {
        match v {
            Value::Unit(u) if (u as usize) < self.bases.len() => Ok(u as usize),
            Value::None => Err(fault(
                "a measure of the table was asked about `none` instead of a unit".into(),
                "guard the rule: e.g. `nearest_enemy(u) != none and ...`",
            )),
            other => Err(fault(
                format!("expected a unit, found {other:?}"),
                "this is a bug in the compiler's type checks",
            )),
        }
    }

    fn len(&self, v: Value) -> R<f64> {
        to_len(v).ok_or_else(|| {
            fault(
                "a measure of the table needs a number".into(),
                "a unit without this stat cannot take part; guard the rule with `!= none`",
            )
        })
    }

    /// The bases of the units on the table other than those listed.
    fn others<'a>(&'a self, skip: &'a [usize]) -> impl Iterator<Item = (usize, &'a Base)> + 'a {
        self.bases
            .iter()
            .enumerate()
            .filter(move |(i, _)| self.on_table[*i] && !skip.contains(i))
    }

    fn features_of(&self, kind: Value) -> impl Iterator<Item = &Feature> + '_ {
        let k = match kind {
            Value::Sym(s) => s,
            _ => u32::MAX,
        };
        self.terrain.iter().filter(move |f| f.kind == k)
    }

    /// `crossed_terrain(a, kind)`: the straight line from where a's centre
    /// stood before its last move this turn to where it stands now enters
    /// a feature of that kind (a `line`, having no width, by crossing it).
    /// False for a unit that has not moved this turn or is off the table.
    fn crossed_terrain(&self, a: usize, kind: Value) -> bool {
        let (p, q) = (self.last_from[a], self.bases[a].centre);
        self.on_table[a] && p != q && self.features_of(kind).any(|f| f.shape.hits_segment(p, q))
    }

    /// The terrain features that a base like `base` whose centre stays
    /// within `reach` of its centre may touch: each one's bounding box,
    /// and whether `base` itself touches it. The others are plainly
    /// further: `touches_terrain` finds none of them along such a path.
    pub fn terrain_within(&self, base: &Base, reach: f64) -> Vec<NearFeature> {
        let moves = crate::run::battlefield::Bounds::of(std::slice::from_ref(base)).widened(reach);
        let mut out = Vec::new();
        for (f, &(lo, hi)) in self.terrain.iter().zip(&self.terrain_bounds) {
            if !moves.clear_of_box((lo, hi)) {
                out.push(NearFeature {
                    bounds: (lo, hi),
                    standing: f.shape.overlaps_base(base),
                });
            }
        }
        out
    }

    /// Is `path` (a move from the base `near` was found for, within its
    /// reach) plainly clear of every feature, as the base standing is? Then
    /// `touches_terrain` of the moving unit reads the path as it reads the
    /// base. (`false` means "ask to know".)
    pub fn path_clear_of_terrain(path: &[Base], near: &[NearFeature]) -> bool {
        if near.is_empty() {
            return true;
        }
        let b = crate::run::battlefield::Bounds::of(path);
        near.iter().all(|f| !f.standing && b.clear_of_box(f.bounds))
    }

    /// The nearest unit on the table of the other side (`enemy`) or the
    /// same side (the first, in the units' order, of those equally near).
    pub fn nearest(&self, w: &World, u: usize, enemy: bool) -> Value {
        let sides = self.sides.get_or_init(|| {
            let mut sides = vec![Vec::new(); w.side_names.len()];
            for (i, unit) in w.units.iter().enumerate() {
                if let Some(s) = sides.get_mut(unit.side as usize) {
                    s.push(i as u16);
                }
            }
            sides
        });
        let side = w.units[u].side as usize;
        // Each candidate (on the table, of the other sides or of the
        // unit's own, not the unit itself) with a lower bound on its
        // distance from the centres (no point of a base is further than
        // its radius from its centre).
        let each = |f: &mut dyn FnMut(usize, f64)| {
            let (centre, radius) = (self.bases[u].centre, self.bases[u].radius());
            for (s, units) in sides.iter().enumerate() {
                if (s != side) != enemy {
                    continue;
                }
                for &i in units {
                    let i = i as usize;
                    if self.on_table[i] && i != u {
                        let b = &self.bases[i];
                        f(i, centre.dist(b.centre) - radius - b.radius());
                    }
                }
            }
        };
        // First the unit found nearest the last time this was asked, if
        // it may be the answer still; else the unit with the least bound
        // (the first of those equally low): most often the nearest, and
        // its distance rules out nearly every other unit without
        // measuring. (Which unit comes first changes only how many are
        // measured, never the answer.)
        let hint = &self.hints.0[2 * u + usize::from(enemy)];
        let first = match hint.load(Relaxed) as usize {
            0 => None,
            h => Some(h - 1),
        };
        let first = match first {
            Some(h)
                if h < self.bases.len()
                    && h != u
                    && self.on_table[h]
                    && (w.units[h].side as usize != side) == enemy =>
            {
                h
            }
            _ => {
                let mut first: Option<(usize, f64)> = None;
                each(&mut |i, b| {
                    if first.is_none_or(|(f, least)| b < least || (b == least && i < f)) {
                        first = Some((i, b));
                    }
                });
                match first {
                    Some((first, _)) => first,
                    None => return Value::None,
                }
            }
        };
        // Then every unit whose bound (worked out again, alike) does not
        // rule it out: the nearest, the first in the units' order of those
        // equally near.
        let mut best = (self.dist(u, first), first);
        each(&mut |i, b| {
            if i != first && b <= best.0 + 1e-9 {
                let Some(d) = self.dist_within(u, i, best.0) else {
                    return;
                };
                if d < best.0 || (d == best.0 && i < best.1) {
                    best = (d, i);
                }
            }
        });
        hint.store(best.1 as u16 + 1, Relaxed);
        Value::Unit(best.1 as u16)
    }

    /// `group_reachable` (and with `front`, `group_reachable_front`): can
    /// a's group, charging as one body, reach `o` within `reach` after a
    /// wheel of at most `wheel` degrees, through no unit outside the group,
    /// its path ending with a member touching `o` (with `front`, touching
    /// `o`'s front, as a `charge` with the `frontal` clause requires)?
    fn group_reaches(
        &self,
        w: &World,
        a: usize,
        o: usize,
        reach: f64,
        wheel: f64,
        front: bool,
    ) -> bool {
        if a == o || !self.on_table[a] || !self.on_table[o] {
            return false;
        }
        let g = self.group_of(w, a);
        let members: Vec<usize> =
            std::iter::once(a)
                .chain((0..self.bases.len()).filter(|&u| {
                    u != a && self.on_table[u] && g.is_some() && self.group_of(w, u) == g
                }))
                .collect();
        if members.contains(&o) {
            return false;
        }
        // No base of the group moves further than the charge's cost.
        if members.iter().all(|&m| self.dist(m, o) > reach + 1e-9) {
            return false;
        }
        let bases: Vec<Base> = members.iter().map(|&m| self.bases[m]).collect();
        let body = crate::run::battlefield::Body::new(self.bases[a].facing, &bases);
        let obstacles: Vec<Base> = (0..self.bases.len())
            .filter(|u| self.on_table[*u] && *u != o && !members.contains(u))
            .map(|u| self.bases[u])
            .collect();
        crate::run::battlefield::charge_path_body_onto(
            &body,
            &self.bases[o],
            reach,
            wheel,
            &obstacles,
            front,
        )
        .is_some()
    }

    /// Does the line from `a` to `b` pass through a gap narrower than `w`
    /// between two of `a`'s friends (TVBD §Shooting criteria: a narrow gap
    /// between friendly units)?
    fn gap_narrower(&self, world: &World, a: usize, b: usize, w: f64) -> bool {
        let (p, q) = (self.bases[a].centre, self.bases[b].centre);
        let (dx, dy) = (q.x - p.x, q.y - p.y);
        let len = (dx * dx + dy * dy).sqrt();
        if len < 1e-9 {
            return false;
        }
        // Obstacles near the line, by side of the line and where along it.
        let mut near: Vec<(f64, usize)> = Vec::new();
        let skip = [a, b];
        for (i, o) in self.others(&skip) {
            if world.units[i].side != world.units[a].side {
                continue;
            }
            let c = o.centre;
            let t = ((c.x - p.x) * dx + (c.y - p.y) * dy) / (len * len);
            if !(0.0..=1.0).contains(&t) {
                continue;
            }
            let side = (dx * (c.y - p.y) - dy * (c.x - p.x)) / len;
            // Only bases near the line can make a gap across it.
            if side.abs() - o.width.max(o.depth) < w {
                near.push((side, i));
            }
        }
        for (k, (s1, o1)) in near.iter().enumerate() {
            for (s2, o2) in near.iter().skip(k + 1) {
                if (*s1 > 0.0) != (*s2 > 0.0) && self.dist(*o1, *o2) < w {
                    return true;
                }
            }
        }
        false
    }

    /// A measure of two units and nothing else (`distance`, `zone`,
    /// `in_contact`, `aligned`, `uphill`, `units_between`,
    /// `same_command`), for units `a` and `o` of the table; None for
    /// another measure.
    pub fn of_two(&self, b: Builtin, a: usize, o: usize) -> Option<Value> {
        use Builtin as B;
        Some(match b {
            B::Distance => {
                if !self.on_table[a] || !self.on_table[o] {
                    return Some(Value::Int(UNLIMITED));
                }
                to_value(self.dist(a, o))
            }
            B::Zone => Value::Sym(match self.zone(a, o) {
                Zone::Front => self.zone_syms[0],
                Zone::Flank => self.zone_syms[1],
                Zone::Rear => self.zone_syms[2],
            }),
            B::InContact => (a != o
                && self.on_table[a]
                && self.on_table[o]
                && !self.apart(a, o, crate::run::battlefield::CONTACT)
                && self
                    .dist_within(a, o, crate::run::battlefield::CONTACT)
                    .is_some())
            .into(),
            B::Aligned => self.bases[a].aligned_with(&self.bases[o]).into(),
            B::Uphill => {
                // Hills are the features whose kind is a hill (`gentle_hill`,
                // `difficult_hill` in stdlib battle).
                let h = |p: Pt| {
                    self.terrain
                        .iter()
                        .filter(|f| f.kind_name.ends_with("hill"))
                        .map(|f| f.shape.height_at(p))
                        .fold(0.0f64, f64::max)
                };
                (h(self.bases[a].centre) > h(self.bases[o].centre) + 1e-9).into()
            }
            B::UnitsBetween => {
                let (p, q) = (self.bases[a].centre, self.bases[o].centre);
                let line = crate::run::battlefield::Bounds::of_segment(p, q);
                let skip = [a, o];
                // A base plainly clear of the line's bounding box is not
                // crossed by it: it is not asked.
                let hit = self
                    .others(&skip)
                    .any(|(_, x)| !line.clear_of(x, 0.0) && x.segment_hits(p, q));
                hit.into()
            }
            B::SameCommand => (self.command[a] == self.command[o]).into(),
            _ => return None,
        })
    }

    /// The index of a unit of the table, if `v` is one.
    #[inline]
    pub fn index(&self, v: Value) -> Option<usize> {
        match v {
            Value::Unit(u) if (u as usize) < self.bases.len() => Some(u as usize),
            _ => None,
        }
    }

    /// Evaluate a measure of the table.
    pub fn measure(&self, w: &World, b: Builtin, v: &[Value]) -> R<Value> {
        use Builtin as B;
        Ok(match b {
            B::Distance
            | B::Zone
            | B::InContact
            | B::Aligned
            | B::Uphill
            | B::UnitsBetween
            | B::SameCommand => {
                let (a, o) = (self.unit(v[0])?, self.unit(v[1])?);
                self.of_two(b, a, o).expect("a measure of two units")
            }
            B::SameFlank => {
                let (a, x, y) = (self.unit(v[0])?, self.unit(v[1])?, self.unit(v[2])?);
                let fx = self.flank(a, x);
                fx.is_some() && fx == self.flank(a, y)
            }
            .into(),
            B::InFrontWithin => {
                let (a, o) = (self.unit(v[0])?, self.unit(v[1])?);
                let d = self.len(v[2])?;
                (self.on_table[a]
                    && self.on_table[o]
                    && self.bases[a].in_front_within(&self.bases[o], d))
                .into()
            }
            B::Grouped => {
                let (a, o) = (self.unit(v[0])?, self.unit(v[1])?);
                let g = self.group_of(w, a);
                (g.is_some() && g == self.group_of(w, o)).into()
            }
            B::NearestEnemy | B::NearestFriend => {
                let a = self.unit(v[0])?;
                self.nearest(w, a, b == B::NearestEnemy)
            }
            B::InTerrain => {
                let a = self.unit(v[0])?;
                let c = self.bases[a].centre;
                self.features_of(v[1]).any(|f| f.shape.contains(c)).into()
            }
            B::WithinTerrain => {
                let a = self.unit(v[0])?;
                let corners = self.bases[a].corners();
                (self.on_table[a]
                    && self
                        .features_of(v[1])
                        .any(|f| corners.iter().all(|c| f.shape.contains(*c))))
                .into()
            }
            B::TouchesTerrain => {
                let a = self.unit(v[0])?;
                match &self.path {
                    Some((m, path)) if *m as usize == a => self
                        .features_of(v[1])
                        .any(|f| crate::run::battlefield::path_touches(&f.shape, path)),
                    Some(_) if self.member_paths.iter().any(|(m, _)| *m as usize == a) => {
                        let path = &self
                            .member_paths
                            .iter()
                            .find(|(m, _)| *m as usize == a)
                            .expect("just found")
                            .1;
                        self.features_of(v[1])
                            .any(|f| crate::run::battlefield::path_touches(&f.shape, path))
                    }
                    _ => self
                        .features_of(v[1])
                        .any(|f| f.shape.overlaps_base(&self.bases[a])),
                }
                .into()
            }
            B::CrossedTerrain => {
                let a = self.unit(v[0])?;
                self.crossed_terrain(a, v[1]).into()
            }
            B::SightCrosses => {
                let (a, o) = (self.unit(v[0])?, self.unit(v[1])?);
                let (p, q) = (self.bases[a].centre, self.bases[o].centre);
                self.features_of(v[2])
                    .any(|f| {
                        !f.shape.contains(p) && !f.shape.contains(q) && f.shape.hits_segment(p, q)
                    })
                    .into()
            }
            B::GapNarrower => {
                let (a, o) = (self.unit(v[0])?, self.unit(v[1])?);
                let wdt = self.len(v[2])?;
                self.gap_narrower(w, a, o, wdt).into()
            }
            B::Reachable => {
                let (a, o) = (self.unit(v[0])?, self.unit(v[1])?);
                if a == o || !self.on_table[a] || !self.on_table[o] {
                    return Ok(false.into());
                }
                let reach = self.len(v[2])?;
                let wheel = self.len(v[3])?;
                // No point of a base moves further than the charge's cost
                // (a wheel's inner corner stands, its outer one travels the
                // cost): a target further than `reach` is out of reach.
                if self.apart(a, o, reach + 1e-9) || self.dist_within(a, o, reach + 1e-9).is_none()
                {
                    return Ok(false.into());
                }
                let skip = [a, o];
                let obstacles: Vec<Base> = self.others(&skip).map(|(_, b)| *b).collect();
                crate::run::battlefield::charge_path(
                    &self.bases[a],
                    &self.bases[o],
                    reach,
                    wheel,
                    &obstacles,
                )
                .is_some()
                .into()
            }
            B::GroupReachable | B::GroupReachableFront => {
                let (a, o) = (self.unit(v[0])?, self.unit(v[1])?);
                let (reach, wheel) = (self.len(v[2])?, self.len(v[3])?);
                let front = matches!(b, B::GroupReachableFront);
                self.group_reaches(w, a, o, reach, wheel, front).into()
            }
            B::FromOwnEdge => {
                let a = self.unit(v[0])?;
                to_value((self.bases[a].centre.y - self.edge[a]).abs())
            }
            B::FromCentreLine => {
                let a = self.unit(v[0])?;
                to_value((self.bases[a].centre.x - self.width / 2.0).abs())
            }
            B::LineWithin => {
                let (a, o, c) = (self.unit(v[0])?, self.unit(v[1])?, self.unit(v[2])?);
                let d = self.len(v[3])?;
                (self.on_table[a]
                    && self.on_table[o]
                    && self.on_table[c]
                    && segment_within(
                        &self.bases[c],
                        self.bases[a].centre,
                        self.bases[o].centre,
                        d,
                    ))
                .into()
            }
            B::FromLeftEdge => {
                let (a, b) = (self.unit(v[0])?, self.unit(v[1])?);
                to_value(self.left_edge_gap(a, b))
            }
            B::MovedThisTurn => {
                let a = self.unit(v[0])?;
                to_value(self.bases[a].centre.dist(self.turn_start[a]))
            }
            B::InArc => {
                let (a, o) = (self.unit(v[0])?, self.unit(v[1])?);
                let deg = self.len(v[2])?;
                (a != o
                    && self.on_table[a]
                    && self.on_table[o]
                    && self.bases[a].arc_holds(&self.bases[o], deg))
                .into()
            }
            B::OnLineThrough => {
                let (a, o, x) = (self.unit(v[0])?, self.unit(v[1])?, self.unit(v[2])?);
                if a == x || !self.on_table[a] || !self.on_table[o] || !self.on_table[x] {
                    return Ok(false.into());
                }
                let (p, q) = (self.bases[a].centre, self.bases[o].centre);
                let d = q - p;
                if d.len() < 1e-9 {
                    return Ok(false.into());
                }
                // Carried on across the whole table.
                let far = p + d * ((self.width + self.depth) * 2.0 / d.len());
                let hit = x == o || self.bases[x].segment_hits(p, far);
                hit.into()
            }
            B::RoomBehind => {
                let a = self.unit(v[0])?;
                to_value(self.room_behind(w, a))
            }
            B::FrontFlank => {
                let (a, o) = (self.unit(v[0])?, self.unit(v[1])?);
                (a != o
                    && self.on_table[a]
                    && self.on_table[o]
                    && self.zone(a, o) == Zone::Flank
                    && self.bases[a].centre_ahead_of_front(&self.bases[o]))
                .into()
            }
            B::RetiredThrough => {
                let (a, b) = (self.unit(v[0])?, self.unit(v[1])?);
                self.retired_through.contains(&(a as u16, b as u16)).into()
            }
            B::CommandNumber => {
                let a = self.unit(v[0])?;
                Value::Int((self.command[a] % 1000) as i64)
            }
            B::InReserve => {
                let a = self.unit(v[0])?;
                self.reserve[a].into()
            }
            B::TableWidth => to_value(self.width),
            B::TableDepth => to_value(self.depth),
            B::OppositeFile | B::FilesInContact | B::RoomToExpand => {
                return self.file_measure(w, b, v)
            }
            _ => unreachable!("arithmetic builtins are evaluated by eval::builtin"),
        })
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

#[cfg(test)]
mod tests {
    use super::{DistanceCache, Epochs, Field, ZoneCache};
    use crate::base::value::Value;
    use crate::compile::ir::Builtin;
    use crate::run::battlefield::{Base, Pt};
    use crate::run::world::{UnitInst, World};

    /// A base 2 wide and 1 deep at (x, y), facing `facing`.
    fn at(x: f64, y: f64, facing: f64) -> Base {
        Base::new(Pt::new(x, y), facing, 2.0, 1.0)
    }

    /// A nameless unit of type 0 on side `side`, with no stats.
    fn unit(side: u16) -> UnitInst {
        UnitInst {
            name: String::new(),
            ty: 0,
            quality: None,
            side,
            stats: Vec::new(),
        }
    }

    /// A big table (45 x 30) with these bases, no terrain, every unit of
    /// one command.
    fn table(bases: Vec<Base>) -> Field {
        let n = bases.len();
        Field::new(
            45.0,
            30.0,
            Default::default(),
            bases,
            vec![0.0; n],
            vec![0; n],
            [0, 1, 2],
        )
    }

    /// `units_between(a, b)`: a base crosses the line between the centres.
    /// Bases plainly outside the line's bounding box are not asked; across
    /// a grid of places and facings around the line (and beyond its ends)
    /// the answer is each base's own `segment_hits`.
    #[test]
    fn units_between_is_asked_of_the_bases_near_the_line() {
        let mut f = table(vec![
            at(10.0, 10.0, 0.0),
            at(10.0, 20.0, 0.0),
            at(30.0, 5.0, 0.0),
        ]);
        let (p, q) = (Pt::new(10.0, 10.0), Pt::new(10.0, 20.0));
        let (mut hits, mut misses) = (0, 0);
        for i in 0..=80 {
            for j in 0..=32 {
                for facing in [0.0, 45.0, 90.0] {
                    let b = at(8.0 + 0.05 * i as f64, 7.0 + 0.5 * j as f64, facing);
                    f.set_base(2, b);
                    let between = f.of_two(Builtin::UnitsBetween, 0, 1);
                    assert_eq!(between, Some(b.segment_hits(p, q).into()), "{b:?}");
                    if b.segment_hits(p, q) {
                        hits += 1;
                    } else {
                        misses += 1;
                    }
                }
            }
        }
        assert!(hits > 1000 && misses > 1000, "{hits} {misses}");
        // Just clear of the line: its left edge 0.2 to the right.
        f.set_base(2, at(11.2, 15.0, 0.0));
        assert_eq!(f.of_two(Builtin::UnitsBetween, 0, 1), Some(false.into()));
        f.set_base(2, at(10.9, 15.0, 0.0));
        assert_eq!(f.of_two(Builtin::UnitsBetween, 0, 1), Some(true.into()));
    }

    /// What is remembered of a pair is good only while neither base has
    /// moved: a unit weighed at another spot and put back is measured
    /// where it stands again (never by what was found at the other spot),
    /// what was known of it before is known again unless the other spot
    /// overwrote it, and pairs without it are not forgotten.
    #[test]
    fn a_unit_put_back_is_measured_where_it_stands() {
        let mut f = table(vec![
            at(10.0, 10.0, 0.0),
            at(10.0, 14.0, 0.0),
            at(20.0, 10.0, 0.0),
        ]);
        let zone = |f: &Field, a, b| f.of_two(Builtin::Zone, a, b).expect("a zone");
        let (d01, d02, d12) = (f.dist(0, 1), f.dist(0, 2), f.dist(1, 2));
        let (z01, z10) = (zone(&f, 0, 1), zone(&f, 1, 0));
        assert!((d01 - 3.0).abs() < 1e-9, "{d01}");
        let stand = f.stand(0);
        // Weighed 10 further on: unit 1 is behind it.
        f.set_base(0, at(10.0, 20.0, 0.0));
        assert_eq!(f.cache.get(&f.epochs, 0, 1), None, "forgotten on moving");
        assert_eq!(f.cache.get(&f.epochs, 1, 2), Some(d12), "not its pair");
        let (d01x, z01x) = (f.dist(0, 1), zone(&f, 0, 1));
        assert!((d01x - 5.0).abs() < 1e-9, "{d01x}");
        assert_ne!(z01x, z01);
        f.put_back(&stand);
        assert_eq!(f.dist(0, 1), d01);
        assert_eq!(zone(&f, 0, 1), z01);
        assert_eq!(zone(&f, 1, 0), z10);
        // Not overwritten at the other spot: still known.
        assert_eq!(f.cache.get(&f.epochs, 0, 2), Some(d02));
        assert_eq!(f.cache.get(&f.epochs, 1, 2), Some(d12));
        // Moved again, to a spot of its own: nothing of it is known.
        f.set_base(0, at(10.0, 20.0, 0.0));
        assert_eq!(f.cache.get(&f.epochs, 0, 1), None);
        assert_eq!(f.cache.get(&f.epochs, 0, 2), None);
        assert_eq!(f.dist(0, 1), d01x);
    }

    /// A per-pair cache whose cells cannot be had (2^31 units: 2^62
    /// pairs) is made empty and remembers nothing, where it used to abort
    /// the program asking for them; one that can be had remembers.
    #[test]
    fn a_cache_too_big_to_have_remembers_nothing() {
        let e = Epochs::new(2);
        let huge = 1usize << 31;
        let c = DistanceCache::new(huge);
        assert_eq!((c.cells.len(), c.tags.len()), (0, 0));
        c.put(&e, 0, 1, 2.5);
        assert_eq!(c.get(&e, 0, 1), None);
        assert_eq!(c.clone().get(&e, 0, 1), None);
        let z = ZoneCache::new(huge);
        assert_eq!((z.cells.len(), z.tags.len()), (0, 0));
        z.set(&e, 0, 1, 1);
        assert_eq!(z.get(&e, 0, 1), 0);
        assert_eq!(z.clone().get(&e, 0, 1), 0);
        let c = DistanceCache::new(2);
        c.put(&e, 0, 1, 2.5);
        assert_eq!(c.clone().get(&e, 1, 0), Some(2.5));
        let z = ZoneCache::new(2);
        z.set(&e, 0, 1, 1);
        assert_eq!(z.clone().get(&e, 0, 1), 1);
    }

    /// When the [`Epochs`] numbers run out, the field numbers afresh and
    /// forgets everything: across the wrap (and a unit weighed before it
    /// and put back after it), every distance and zone asked is what the
    /// bases say, never one remembered from another spot.
    #[test]
    fn the_numbers_running_out_forgets_everything() {
        use std::sync::atomic::Ordering::Relaxed;
        let spots = [
            at(10.0, 20.0, 0.0),
            at(12.0, 11.0, 90.0),
            at(10.0, 10.0, 0.0),
        ];
        let zone = |f: &Field, a, b| f.of_two(Builtin::Zone, a, b).expect("a zone");
        let exact = |f: &Field, a: usize, b: usize| f.bases[a].distance(&f.bases[b]);
        // The numbers run out at each point of a step in turn.
        for left in 1..=9 {
            let mut f = table(vec![spots[2], at(10.0, 14.0, 0.0), at(20.0, 10.0, 0.0)]);
            for (a, b) in [(0, 1), (0, 2), (1, 2)] {
                assert_eq!(f.dist(a, b), exact(&f, a, b));
            }
            f.epochs.next.store(u32::MAX - left, Relaxed);
            for i in 0..8 {
                let stand = f.stand(0);
                for (a, b) in [(0, 1), (1, 0), (0, 2), (1, 2)] {
                    assert_eq!(
                        f.dist(a, b),
                        exact(&f, a, b),
                        "{left} left, step {i}: {a}-{b}"
                    );
                }
                let z = zone(&f, 0, 1);
                f.set_base(0, spots[i % 3]);
                f.set_base(1, spots[(i + 1) % 3].advanced(5.0));
                for (a, b) in [(0, 1), (0, 2), (1, 2)] {
                    let d = f.dist(a, b);
                    assert_eq!(d, exact(&f, a, b), "{left} left, step {i}: {a}-{b} moved");
                }
                // Unit 1 back first, then unit 0: nothing else moved since.
                f.set_base(1, at(10.0, 14.0, 0.0));
                let _ = zone(&f, 0, 1);
                f.put_back(&stand);
                assert_eq!(f.dist(0, 1), exact(&f, 0, 1), "{left} left, step {i}");
                assert_eq!(zone(&f, 0, 1), z, "{left} left, step {i}");
            }
            assert_eq!(
                f.epochs.round, 1,
                "{left} left: the numbers began again once"
            );
            assert!(f.epochs.next.load(Relaxed) < 100);
        }
    }

    /// `room_behind(a)`: how far a unit can go straight back before its
    /// base leaves the table or comes within contact of an enemy's base
    /// behind it; friends are not counted, nor enemies beside or ahead;
    /// rounded to 1/64 as every distance; 0 off the table.
    #[test]
    fn room_behind_counts_the_table_edge_and_the_enemy() {
        // Unit 0 (side a) faces the far edge, its rear edge at y = 9.5;
        // unit 1, an enemy, 2 behind it (its near edge at y = 7.5); unit 2,
        // a friend, touching its rear; unit 3, an enemy, touching its flank
        // a little ahead of level.
        let w = World {
            side_names: ["a", "b"].map(String::from).to_vec(),
            units: vec![unit(0), unit(1), unit(0), unit(1)],
            ..Default::default()
        };
        let mut f = table(vec![
            at(10.0, 10.0, 0.0),
            at(10.0, 7.0, 180.0),
            at(10.0, 9.0, 0.0),
            at(12.0, 10.25, 270.0),
        ]);
        let room = |f: &Field, u: u16| {
            f.measure(&w, Builtin::RoomBehind, &[Value::Unit(u)])
                .expect("measured")
        };
        // 2 to the enemy, less contact: 127.36/64, kept to 127/64.
        assert_eq!(room(&f, 0), Value::frac(127, 64));
        // The enemy gone: 9.5 to the table's edge.
        f.set_on_table(1, false);
        assert_eq!(room(&f, 0), Value::frac(19, 2));
        // Turned to face the left edge (its rear edge 10.5 from the right
        // edge, x = 45).
        f.set_base(0, at(34.0, 10.0, 270.0));
        assert_eq!(room(&f, 0), Value::frac(21, 2));
        // Facing the near corner (unit 3 gone from the way back): the
        // corners' ways back to the edges.
        f.set_on_table(3, false);
        f.set_base(0, at(10.0, 10.0, 225.0));
        let r = f.room_behind(&w, 0);
        let corner = Base::new(Pt::new(10.0, 10.0), 225.0, 2.0, 1.0).corners();
        let expect = corner
            .iter()
            .map(|c| ((45.0 - c.x).min(30.0 - c.y)) * std::f64::consts::SQRT_2)
            .fold(f64::INFINITY, f64::min);
        assert!((r - expect).abs() < 1e-9, "{r} {expect}");
        // Off the table: no room.
        f.set_on_table(0, false);
        assert_eq!(room(&f, 0), Value::Int(0));
    }

    /// `nearest_enemy` and `nearest_friend`: of the units on the table of
    /// the other sides (any of them) or of the unit's own, the nearest by
    /// the bases' distance; of those equally near, the first in the units'
    /// order, whichever side it is on, whatever the last answer was;
    /// `none` when there is none; and by the sides as they are after they
    /// change.
    #[test]
    fn the_nearest_is_the_first_of_those_equally_near() {
        // Unit 0 (side a) between unit 1 (side c) 3 ahead and unit 2 (side
        // b) 3 behind; unit 3 (side b) 2 to its right; unit 4 its friend,
        // further off to its left.
        let w = World {
            side_names: ["a", "b", "c"].map(String::from).to_vec(),
            units: vec![unit(0), unit(2), unit(1), unit(1), unit(0)],
            ..Default::default()
        };
        let bases = vec![
            at(10.0, 10.0, 0.0),
            at(10.0, 14.0, 0.0),
            at(10.0, 6.0, 0.0),
            at(14.0, 10.0, 0.0),
            at(4.0, 10.0, 0.0),
        ];
        let mut f = table(bases);
        let nearest = |f: &Field, b, u| f.measure(&w, b, &[Value::Unit(u)]).expect("measured");
        let (enemy, friend) = (Builtin::NearestEnemy, Builtin::NearestFriend);
        assert_eq!(f.dist(0, 3), 2.0);
        assert_eq!(nearest(&f, enemy, 0), Value::Unit(3));
        // Unit 3 gone: units 1 and 2 are equally near, 1 comes first
        // (though its side comes after 2's).
        f.set_on_table(3, false);
        assert_eq!((f.dist(0, 1), f.dist(0, 2)), (3.0, 3.0));
        assert_eq!(nearest(&f, enemy, 0), Value::Unit(1));
        assert_eq!(nearest(&f, friend, 0), Value::Unit(4));
        assert_eq!(nearest(&f, friend, 4), Value::Unit(0));
        assert_eq!(
            nearest(&f, enemy, 2),
            Value::Unit(0),
            "side c is an enemy of side b too"
        );
        f.set_on_table(4, false);
        assert_eq!(nearest(&f, friend, 0), Value::None);
        // Where the last answer was the later of two now equally near, the
        // answer is still the first.
        f.set_base(1, at(10.0, 20.0, 0.0));
        assert_eq!(nearest(&f, enemy, 0), Value::Unit(2));
        f.set_base(1, at(10.0, 14.0, 0.0));
        assert_eq!(nearest(&f, enemy, 0), Value::Unit(1));
        f.set_base(1, at(10.0, 20.0, 0.0));
        assert_eq!(nearest(&f, enemy, 0), Value::Unit(2));

        // Sides settled afresh (unit 2 now on unit 0's side): once the
        // field is told, its lists by side follow, and the last answer (2,
        // now a friend) is not taken for an enemy.
        let mut w = w;
        w.units[2].side = 0;
        f.forget_sides();
        let nearest = |f: &Field, b, u| f.measure(&w, b, &[Value::Unit(u)]).expect("measured");
        assert_eq!(nearest(&f, enemy, 0), Value::Unit(1));
        assert_eq!(nearest(&f, friend, 0), Value::Unit(2));
        assert_eq!(nearest(&f, enemy, 2), Value::Unit(1));
    }
}
