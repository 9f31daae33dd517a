//! Dice: exact probabilities, the distribution of one die after rerolls, and
//! pools of dice (sums, successes, counted faces) by convolution; and rolling
//! the same pools with the seeded generator.

use crate::base::rng::Rng;
use crate::base::value::Value;
use crate::compile::ir::{DieDef, ModOp};
use crate::front::syntax::Reroll;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};
use std::fmt;
use std::sync::Arc;

/// A probability. Exact fractions stay exact: two 128-bit integers while
/// they fit (the fast path of almost every question), an arbitrary-precision
/// fraction after. Only sampled estimates are floats.
#[derive(Clone, Debug)]
pub enum Prob {
    Exact(u128, u128),
    /// An exact fraction past 128 bits, not always in lowest terms (see
    /// [`Prob::settle`]; [`Prob::big`] gives it reduced).
    Big(Arc<BigRational>),
    /// A sampled estimate.
    Float(f64),
}

/// How long a big fraction's denominator grows, in bits, before it is
/// reduced to lowest terms.
const REDUCE_BITS: u64 = 1024;

pub(crate) fn gcd128(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a.max(1)
}

impl Prob {
    pub const ZERO: Prob = Prob::Exact(0, 1);
    pub const ONE: Prob = Prob::Exact(1, 1);

    pub fn ratio(n: u128, d: u128) -> Prob {
        let g = gcd128(n, d);
        Prob::Exact(n / g, d / g)
    }
    /// The exact value as an arbitrary-precision fraction in lowest terms
    /// (none for a sampled estimate).
    pub fn big(&self) -> Option<BigRational> {
        match self {
            Prob::Exact(n, d) => Some(BigRational::new_raw((*n).into(), (*d).into())),
            Prob::Big(r) => Some(BigRational::new(r.numer().clone(), r.denom().clone())),
            Prob::Float(_) => None,
        }
    }
    /// The exact value's numerator and denominator as they are held (a
    /// big fraction is reduced only now and then: see [`Prob::settle`]).
    fn raw(&self) -> Option<(BigInt, BigInt)> {
        match self {
            Prob::Exact(n, d) => Some(((*n).into(), (*d).into())),
            Prob::Big(r) => Some((r.numer().clone(), r.denom().clone())),
            Prob::Float(_) => None,
        }
    }
    /// An exact fraction from its parts: back in 128 bits (in lowest terms)
    /// when it fits, else held as it is until its denominator passes
    /// [`REDUCE_BITS`]. Reducing every sum and product is what made big
    /// fractions slow (a gcd each, three quarters of the time of a
    /// Matchlocks melee); the fractions of dice share most of their
    /// denominators, so sums seldom grow them.
    fn settle(n: BigInt, d: BigInt) -> Prob {
        if let (Some(n), Some(d)) = (n.to_u128(), d.to_u128()) {
            return Prob::ratio(n, d);
        }
        if d.bits() > REDUCE_BITS {
            return Prob::from_big(BigRational::new(n, d));
        }
        Prob::Big(Arc::new(BigRational::new_raw(n, d)))
    }
    /// An exact fraction, back in 128 bits when it fits.
    fn from_big(r: BigRational) -> Prob {
        match (r.numer().to_u128(), r.denom().to_u128()) {
            (Some(n), Some(d)) => Prob::Exact(n, d),
            _ => Prob::Big(Arc::new(r)),
        }
    }
    /// Exact arithmetic past 128 bits on the parts (a/b, c/d); a float when
    /// either is sampled.
    fn slow(
        &self,
        o: &Prob,
        f: impl Fn(BigInt, BigInt, BigInt, BigInt) -> (BigInt, BigInt),
        g: impl Fn(f64, f64) -> f64,
    ) -> Prob {
        match (self.raw(), o.raw()) {
            (Some((a, b)), Some((c, d))) => {
                let (n, d) = f(a, b, c, d);
                Prob::settle(n, d)
            }
            _ => Prob::Float(g(self.to_f64(), o.to_f64())),
        }
    }
    pub fn to_f64(&self) -> f64 {
        match self {
            Prob::Exact(n, d) => *n as f64 / *d as f64,
            Prob::Big(r) => big_to_f64(r),
            Prob::Float(f) => *f,
        }
    }
    pub fn is_zero(&self) -> bool {
        match self {
            Prob::Exact(n, _) => *n == 0,
            Prob::Big(r) => r.is_zero(),
            Prob::Float(f) => *f == 0.0,
        }
    }
    pub fn times(&self, o: impl AsRef<Prob>) -> Prob {
        let o = o.as_ref();
        if let (Prob::Exact(a, b), Prob::Exact(c, d)) = (self, o) {
            let g1 = gcd128(*a, *d);
            let g2 = gcd128(*c, *b);
            let (a, d) = (a / g1, d / g1);
            let (c, b) = (c / g2, b / g2);
            if let (Some(n), Some(m)) = (a.checked_mul(c), b.checked_mul(d)) {
                return Prob::Exact(n, m);
            }
        }
        self.slow(o, |a, b, c, d| (a * c, b * d), |a, b| a * b)
    }
    pub fn plus(&self, o: impl AsRef<Prob>) -> Prob {
        let o = o.as_ref();
        if self.is_zero() {
            return o.clone();
        }
        if o.is_zero() {
            return self.clone();
        }
        if let (Prob::Exact(a, b), Prob::Exact(c, d)) = (self, o) {
            let g = gcd128(*b, *d);
            let l = (b / g).checked_mul(*d);
            if let Some(l) = l {
                let n = a
                    .checked_mul(l / b)
                    .and_then(|x| c.checked_mul(l / d).and_then(|y| x.checked_add(y)));
                if let Some(n) = n {
                    return Prob::ratio(n, l);
                }
            }
        }
        self.slow(
            o,
            |a, b, c, d| {
                // The denominators of dice mostly divide one another (1/36
                // and 5/216): their sum needs no larger one, nor a gcd.
                if b == d {
                    (a + c, b)
                } else if (&d % &b).is_zero() {
                    (a * (&d / &b) + c, d)
                } else if (&b % &d).is_zero() {
                    (c * (&b / &d) + a, b)
                } else {
                    (a * &d + c * &b, b * d)
                }
            },
            |a, b| a + b,
        )
    }
    /// self / o (o not zero).
    pub fn divide(&self, o: impl AsRef<Prob>) -> Prob {
        let o = o.as_ref();
        if o.is_zero() {
            return Prob::Float(self.to_f64() / o.to_f64());
        }
        if let (Prob::Exact(a, b), Prob::Exact(c, d)) = (self, o) {
            let g1 = gcd128(*a, *c);
            let g2 = gcd128(*b, *d);
            let (a, c, b, d) = (a / g1, c / g1, b / g2, d / g2);
            if let (Some(n), Some(m)) = (a.checked_mul(d), b.checked_mul(c)) {
                return Prob::ratio(n, m);
            }
        }
        self.slow(o, |a, b, c, d| (a * d, b * c), |a, b| a / b)
    }
    pub fn complement(&self) -> Prob {
        match self {
            Prob::Exact(n, d) => Prob::Exact(d - (*n).min(*d), *d),
            Prob::Big(r) => Prob::settle(r.denom() - r.numer(), r.denom().clone()),
            Prob::Float(f) => Prob::Float(1.0 - f),
        }
    }
    /// The exact fraction in 128 bits, when it is exact and fits.
    pub fn fraction(&self) -> Option<(u128, u128)> {
        match self {
            Prob::Exact(n, d) => Some((*n, *d)),
            Prob::Big(_) => {
                let r = self.big()?;
                Some((r.numer().to_u128()?, r.denom().to_u128()?))
            }
            Prob::Float(_) => None,
        }
    }
    /// The exact fraction as `n/d`, of any size, when it is exact: as
    /// `muster odds --json` writes it.
    pub fn exact_text(&self) -> Option<String> {
        match self {
            Prob::Exact(n, d) => Some(format!("{n}/{d}")),
            Prob::Big(_) => self.big().map(|r| format!("{}/{}", r.numer(), r.denom())),
            Prob::Float(_) => None,
        }
    }
    /// Whether this is an exact fraction (not a sampled estimate).
    pub fn is_exact(&self) -> bool {
        !matches!(self, Prob::Float(_))
    }
}

/// A big fraction as the nearest float (numerator and denominator scaled
/// down together, so neither overflows f64 on its own).
fn big_to_f64(r: &BigRational) -> f64 {
    if let Some(x) = r.to_f64() {
        if x.is_finite() {
            return x;
        }
    }
    let (n, d) = (r.numer(), r.denom());
    let shift = n.bits().max(d.bits()).saturating_sub(1000);
    let n = (n >> shift).to_f64().unwrap_or(0.0);
    let d = (d >> shift).to_f64().unwrap_or(f64::INFINITY);
    n / d
}

impl AsRef<Prob> for Prob {
    fn as_ref(&self) -> &Prob {
        self
    }
}

impl fmt::Display for Prob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Prob::Exact(n, d) if *d == 1 => write!(f, "{n}"),
            Prob::Exact(n, d) => write!(f, "{n}/{d}"),
            Prob::Big(_) => {
                let r = self.big().unwrap_or_default();
                write!(f, "{}/{}", r.numer(), r.denom())
            }
            Prob::Float(x) => write!(f, "{x:.6}"),
        }
    }
}

/// A distribution over values: each distinct value once.
pub type Dist = Vec<(Value, Prob)>;

/// Add probability mass to a value of a distribution.
pub fn add_mass(d: &mut Dist, v: Value, p: Prob) {
    if p.is_zero() {
        return;
    }
    match d.iter_mut().find(|(x, _)| *x == v) {
        Some((_, q)) => *q = q.plus(p),
        None => d.push((v, p)),
    }
}

/// How a pool reads its dice.
#[derive(Clone, Debug)]
pub enum Reading {
    Sum,
    Scoring(i64),
    Counting(Vec<bool>),
    /// Each face's number, by face index: an `effects` block's tallies
    /// (see [`crate::compile::ir::EffectsDef::read_die`]).
    Faces(Vec<i64>),
}

impl Reading {
    /// What one face contributes to the pool's result.
    fn contribution(&self, die: &DieDef, face: usize) -> i64 {
        match self {
            Reading::Sum => die.faces[face].1,
            Reading::Scoring(t) => i64::from(die.faces[face].1 >= *t),
            Reading::Counting(marks) => i64::from(marks[face]),
            Reading::Faces(v) => v[face],
        }
    }
    fn is_hit(&self, die: &DieDef, face: usize) -> bool {
        match self {
            Reading::Sum => false,
            _ => self.contribution(die, face) > 0,
        }
    }
}

/// Is this face rolled again?
fn rerolled(kind: Option<Reroll>, reading: &Reading, die: &DieDef, face: usize) -> bool {
    match kind {
        None => false,
        Some(Reroll::Misses) => !reading.is_hit(die, face),
        Some(Reroll::Hits) => reading.is_hit(die, face),
        Some(Reroll::Ones) => die.faces[face].1 == 1,
        Some(Reroll::Sixes) => die.faces[face].1 == 6,
    }
}

/// The distribution of one die's contribution (after at most one reroll),
/// as (contribution, probability) pairs with distinct contributions.
pub fn one_die(die: &DieDef, reading: &Reading, reroll: Option<Reroll>) -> Vec<(i64, Prob)> {
    let n = die.faces.len() as u128;
    let mut out: Vec<(i64, Prob)> = Vec::new();
    let mut push = |v: i64, p: Prob| match out.iter_mut().find(|(x, _)| *x == v) {
        Some((_, q)) => *q = q.plus(p),
        None => out.push((v, p)),
    };
    let redo: u128 = (0..die.faces.len())
        .filter(|f| rerolled(reroll, reading, die, *f))
        .count() as u128;
    for f in 0..die.faces.len() {
        let c = reading.contribution(die, f);
        let mut p = Prob::ZERO;
        if !rerolled(reroll, reading, die, f) {
            p = Prob::ratio(1, n);
        }
        // Reached through a reroll: P(first face rerolled) * P(this face).
        if redo > 0 {
            p = p.plus(Prob::ratio(redo, n * n));
        }
        push(c, p);
    }
    out.retain(|(_, p)| !p.is_zero());
    out.sort_by_key(|(v, _)| *v);
    out
}

/// Convolve two distributions over integers.
pub fn convolve(a: &[(i64, Prob)], b: &[(i64, Prob)]) -> Vec<(i64, Prob)> {
    let mut out: Vec<(i64, Prob)> = Vec::new();
    for (x, p) in a {
        for (y, q) in b {
            let v = x + y;
            let m = p.times(q);
            match out.binary_search_by_key(&v, |(k, _)| *k) {
                Ok(i) => out[i].1 = out[i].1.plus(m),
                Err(i) => out.insert(i, (v, m)),
            }
        }
    }
    out
}

/// The exact distribution of a pool of `n` dice: the n-fold convolution of
/// one die, by repeated squaring (never an enumeration of every die).
pub fn pool_dist(
    die: &DieDef,
    reading: &Reading,
    reroll: Option<Reroll>,
    n: i64,
) -> Vec<(i64, Prob)> {
    let mut result = vec![(0i64, Prob::ONE)];
    if n <= 0 {
        return result;
    }
    let mut base = one_die(die, reading, reroll);
    let mut k = n as u64;
    while k > 0 {
        if k & 1 == 1 {
            result = convolve(&result, &base);
        }
        k >>= 1;
        if k > 0 {
            base = convolve(&base, &base);
        }
    }
    result
}

use crate::compile::ir::MAX_POOL;

/// What is wrong with a pool of `n` dice, if it has fewer than none or
/// more than [`MAX_POOL`].
pub fn pool_too_big(n: i64) -> Option<String> {
    if n < 0 {
        return Some(format!(
            "a pool of {n} dice: a roll has from 0 to {MAX_POOL} dice"
        ));
    }
    (n > MAX_POOL)
        .then(|| format!("a pool of {n} dice: more than the {MAX_POOL} one roll may have"))
}

/// Roll a pool of `n` dice with the generator (or a scripted source).
pub fn roll_pool(
    die: &DieDef,
    reading: &Reading,
    reroll: Option<Reroll>,
    n: i64,
    src: &mut dyn DiceSource,
) -> Result<i64, String> {
    if let Some(m) = pool_too_big(n) {
        return Err(m);
    }
    let mut total = 0i64;
    for _ in 0..n.max(0) {
        let mut f = src.face(die)?;
        if rerolled(reroll, reading, die, f) {
            f = src.face(die)?;
        }
        total += reading.contribution(die, f);
    }
    Ok(total)
}

/// The exact distribution of a roll of several dice, each part `n` dice of
/// a die read face by face (`reading[face]`): the convolution of the parts'
/// pools. Every tally a reading packs is summed at once, so the result is
/// their joint distribution.
pub fn parts_dist(parts: &[(&DieDef, &[i64], i64)]) -> Vec<(i64, Prob)> {
    let mut out = vec![(0i64, Prob::ONE)];
    for (die, reading, n) in parts {
        let pool = pool_dist(die, &Reading::Faces(reading.to_vec()), None, *n);
        out = convolve(&out, &pool);
    }
    out
}

/// Roll several dice, each part `n` dice of a die read face by face, and
/// add up what their faces read.
pub fn roll_parts(
    parts: &[(&DieDef, &[i64], i64)],
    src: &mut dyn DiceSource,
) -> Result<i64, String> {
    let mut total = 0i64;
    for (die, reading, n) in parts {
        for _ in 0..(*n).max(0) {
            total += reading[src.face(die)?];
        }
    }
    Ok(total)
}

/// Where dice come from: the seeded generator, or a script of faces for a
/// book's worked example.
pub trait DiceSource {
    /// The index of the face that comes up.
    fn face(&mut self, die: &DieDef) -> Result<usize, String>;
}

impl DiceSource for Rng {
    #[inline]
    fn face(&mut self, die: &DieDef) -> Result<usize, String> {
        Ok(self.below(die.faces.len() as u64) as usize)
    }
}

/// Dice that come up as a script says (face values, in order).
#[derive(Clone, Debug, Default)]
pub struct Scripted {
    pub rolls: Vec<i64>,
    pub next: usize,
}

impl DiceSource for Scripted {
    fn face(&mut self, die: &DieDef) -> Result<usize, String> {
        let Some(v) = self.rolls.get(self.next) else {
            return Err(format!(
                "the script of rolls ran out after {} dice",
                self.rolls.len()
            ));
        };
        self.next += 1;
        die.faces.iter().position(|f| f.1 == *v).ok_or_else(|| {
            format!(
                "scripted roll {v} is not a face of die `{}` (faces: {})",
                die.name,
                die.faces
                    .iter()
                    .map(|f| f.1.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }
}

/// Apply a modifier-style change to a number.
pub fn apply_op(op: ModOp, cur: i64, amount: i64) -> i64 {
    match op {
        ModOp::Set => amount,
        ModOp::Add => cur.saturating_add(amount),
        ModOp::Sub => cur.saturating_sub(amount),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d6() -> DieDef {
        DieDef {
            name: "d6".into(),
            faces: (1..=6).map(|v| (v.to_string(), v)).collect(),
        }
    }

    #[test]
    fn binomial_pool_matches_closed_form() {
        // 4 dice hitting on 5+: P(k) = C(4,k) (1/3)^k (2/3)^(4-k).
        let d = pool_dist(&d6(), &Reading::Scoring(5), None, 4);
        let expect = [(0, 16u128), (1, 32), (2, 24), (3, 8), (4, 1)];
        for ((v, p), (ev, en)) in d.iter().zip(expect) {
            assert_eq!(*v, ev);
            assert_eq!(p.fraction(), Some(Prob::ratio(en, 81).fraction().unwrap()));
        }
    }

    #[test]
    fn reroll_misses_once() {
        // Hitting on 6 with one reroll of a miss: 1/6 + 5/6 * 1/6 = 11/36.
        let d = one_die(&d6(), &Reading::Scoring(6), Some(Reroll::Misses));
        assert_eq!(d[1].1.fraction(), Some((11, 36)));
    }

    #[test]
    fn two_d6_sum() {
        let d = pool_dist(&d6(), &Reading::Sum, None, 2);
        let seven = &d.iter().find(|(v, _)| *v == 7).unwrap().1;
        assert_eq!(seven.fraction(), Some((1, 6)));
        assert_eq!(d.len(), 11);
    }

    #[test]
    fn a_pool_of_more_than_max_pool_dice_is_refused() {
        let mut rng = crate::base::rng::Rng::new(1);
        let r = roll_pool(&d6(), &Reading::Sum, None, MAX_POOL, &mut rng);
        let total = r.unwrap();
        assert!((MAX_POOL..=6 * MAX_POOL).contains(&total), "{total}");
        let r = roll_pool(&d6(), &Reading::Sum, None, MAX_POOL + 1, &mut rng);
        assert_eq!(
            r,
            Err("a pool of 10001 dice: more than the 10000 one roll may have".to_string())
        );
    }

    #[test]
    fn prob_overflow_stays_exact() {
        let mut p = Prob::ratio(1, 6);
        for _ in 0..60 {
            p = p.times(Prob::ratio(1, 6));
        }
        // (1/6)^61: a denominator of 158 bits.
        let six = num_bigint::BigInt::from(6);
        let want = format!("1/{}", num_traits::pow(six, 61));
        assert_eq!(p.exact_text(), Some(want));
        assert!(matches!(p, Prob::Big(_)));
        let rel = (p.to_f64() / 6f64.powi(-61) - 1.0).abs();
        assert!(rel < 1e-12, "{rel}");
        // In 128 bits again once it fits in lowest terms: 6^-61 / 6^-1 * 6^59.
        let back = (0..59).fold(p.divide(Prob::ratio(1, 6)), |q, _| {
            q.times(Prob::ratio(6, 1))
        });
        assert_eq!(back.fraction(), Some((1, 6)), "{back:?}");
        assert_eq!(p.complement().plus(&p).exact_text().as_deref(), Some("1/1"));
    }
}
