//! Runtime values. Small and `Copy`: the hot path never allocates for them.

use std::cmp::Ordering;

/// A value an expression evaluates to.
///
/// Laid out as two whole words, the tag and then the payload: with the
/// default layout small payloads share the tag's word at odd offsets, and
/// the evaluator's copies of values (into frames, out of calls) read them
/// back in pieces that straddle the pieces just written, stalling the
/// CPU's store-to-load forwarding (about 15% of a battle's time).
#[repr(C, u64)]
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Value {
    /// A stat the unit type does not have (`none` in Table 1).
    None,
    Bool(bool),
    Int(i64),
    /// An exact fraction (only division makes one), in lowest terms, den > 1.
    /// 32-bit parts keep every value at 16 bytes; larger fractions overflow
    /// into a reported error, never a wrong answer.
    Frac(i32, i32),
    /// An enum variant or outcome symbol (global symbol id).
    Sym(u32),
    /// A unit present in the situation or battle (its index).
    Unit(u16),
    /// A side (its index in the ruleset's `sides`).
    Side(u16),
    /// A pool of dice not yet rolled (its index in the ruleset's `pools`).
    Pool(u32),
}

/// `unlimited` in a stat table: larger than any distance on any table.
pub const UNLIMITED: i64 = 1 << 40;

impl Value {
    pub fn as_bool(self) -> bool {
        matches!(self, Value::Bool(true))
    }
    pub fn as_int(self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(i),
            _ => None,
        }
    }
    /// The value as a fraction n/d (ints have d = 1).
    pub fn as_frac(self) -> Option<(i64, i64)> {
        match self {
            Value::Int(i) => Some((i, 1)),
            Value::Frac(n, d) => Some((n as i64, d as i64)),
            _ => None,
        }
    }
    pub fn frac(n: i64, d: i64) -> Value {
        if d == 0 {
            return Value::None;
        }
        let (mut n, mut d) = if d < 0 { (-n, -d) } else { (n, d) };
        let g = gcd(n.unsigned_abs(), d as u64) as i64;
        if g > 1 {
            n /= g;
            d /= g;
        }
        if d == 1 {
            Value::Int(n)
        } else {
            match (i32::try_from(n), i32::try_from(d)) {
                (Ok(n), Ok(d)) => Value::Frac(n, d),
                _ => Value::None,
            }
        }
    }
    /// Compare two numbers exactly; `None` when either is not a number.
    pub fn num_cmp(self, other: Value) -> Option<Ordering> {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => Some(a.cmp(&b)),
            _ => {
                let (a, b) = self.as_frac()?;
                let (c, d) = other.as_frac()?;
                Some(((a as i128) * (d as i128)).cmp(&((c as i128) * (b as i128))))
            }
        }
    }
    pub fn arith(self, op: char, other: Value) -> Option<Value> {
        if let (Value::Int(a), Value::Int(b)) = (self, other) {
            return match op {
                '+' => a.checked_add(b).map(Value::Int),
                '-' => a.checked_sub(b).map(Value::Int),
                '*' => a.checked_mul(b).map(Value::Int),
                _ if b == 0 => None,
                _ => fitted(a, b),
            };
        }
        let (a, b) = self.as_frac()?;
        let (c, d) = other.as_frac()?;
        let (n, m) = match op {
            '+' => (
                a.checked_mul(d)?.checked_add(c.checked_mul(b)?)?,
                b.checked_mul(d)?,
            ),
            '-' => (
                a.checked_mul(d)?.checked_sub(c.checked_mul(b)?)?,
                b.checked_mul(d)?,
            ),
            '*' => (a.checked_mul(c)?, b.checked_mul(d)?),
            _ if c == 0 => return None,
            _ => (a.checked_mul(d)?, b.checked_mul(c)?),
        };
        fitted(n, m)
    }

    /// Order values for sorting: numbers by value, before anything that is
    /// not a number (`none`), which sort as equal among themselves. A
    /// total order, as a sort needs (`num_cmp` has none between a number
    /// and `none`).
    pub fn sort_cmp(self, other: Value) -> Ordering {
        match (self.as_frac().is_some(), other.as_frac().is_some()) {
            (true, true) => self.num_cmp(other).unwrap_or(Ordering::Equal),
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => Ordering::Equal,
        }
    }
}

/// `n / d` as a value, or None when it does not fit one (a fraction's
/// terms are 32-bit): arithmetic overflow, not `none`.
fn fitted(n: i64, d: i64) -> Option<Value> {
    match Value::frac(n, d) {
        Value::None => None,
        v => Some(v),
    }
}

pub fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a.max(1)
}

/// Numbers and truth values as a reader writes them (symbols, units and
/// sides by index: show them through `World::show` where names are known).
impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::None => f.write_str("none"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Frac(n, d) => write!(f, "{n}/{d}"),
            Value::Sym(s) => write!(f, "symbol #{s}"),
            Value::Unit(u) => write!(f, "unit #{u}"),
            Value::Side(s) => write!(f, "side #{s}"),
            Value::Pool(p) => write!(f, "pool #{p}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fraction whose terms do not fit 32 bits is an overflow (None,
    /// which the evaluator reports), not the value `none`.
    #[test]
    fn arithmetic_that_does_not_fit_overflows() {
        let big = Value::Int(1_999_999_999_993);
        assert_eq!(
            big.arith('+', Value::Int(1)),
            Some(Value::Int(1_999_999_999_994))
        );
        assert_eq!(big.arith('+', Value::frac(1, 2)), None);
        assert_eq!(big.arith('/', Value::Int(2)), None);
        assert_eq!(
            Value::Int(7).arith('/', Value::Int(2)),
            Some(Value::Frac(7, 2))
        );
        assert_eq!(Value::Int(3).arith('/', Value::Int(0)), None);
        assert_eq!(
            Value::frac(1, 3).arith('+', Value::frac(1, 6)),
            Some(Value::Frac(1, 2))
        );
    }

    /// `sort_cmp` orders numbers by value and puts `none` after them all:
    /// a total order (a sort of orders with `none` among them used to
    /// panic).
    #[test]
    fn sort_order_is_total_with_none_last() {
        let mut v = vec![
            Value::Int(3),
            Value::None,
            Value::frac(1, 2),
            Value::Int(-2),
            Value::None,
            Value::Int(3),
        ];
        v.sort_by(|a, b| a.sort_cmp(*b));
        assert_eq!(
            v,
            [
                Value::Int(-2),
                Value::Frac(1, 2),
                Value::Int(3),
                Value::Int(3),
                Value::None,
                Value::None
            ]
        );
        for a in &v {
            for b in &v {
                assert_eq!(a.sort_cmp(*b), b.sort_cmp(*a).reverse());
            }
        }
    }
}
