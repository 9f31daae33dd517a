//! The one random generator every draw goes through: PCG-64 (MCG variant),
//! a value-stable algorithm, with our own unbiased range reduction so that a
//! seed gives the same dice on every machine, compiler and thread count.

use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// A seeded stream of dice.
#[derive(Clone, Debug)]
pub struct Rng(Pcg64Mcg);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(Pcg64Mcg::seed_from_u64(seed))
    }

    /// The stream for one chunk of a parallel run: chunk `i` of seed `s`
    /// gets the same numbers whichever thread runs it.
    pub fn for_chunk(seed: u64, chunk: u64) -> Self {
        Rng::new(splitmix64(
            seed ^ splitmix64(chunk.wrapping_add(0x9E37_79B9_7F4A_7C15)),
        ))
    }

    /// A uniform integer in `0..n` (n > 0), without modulo bias
    /// (Lemire's multiply-and-reject).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let mut m = (self.0.next_u64() as u128) * (n as u128);
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = (self.0.next_u64() as u128) * (n as u128);
            }
        }
        (m >> 64) as u64
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
}

/// SplitMix64: a strong 64-bit mixer, used to derive independent seeds.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_stable_stream() {
        // Pinned: if these change, every seeded battle and snapshot changes.
        let mut r = Rng::new(42);
        let v: Vec<u64> = (0..8).map(|_| r.below(6) + 1).collect();
        assert_eq!(v, PINNED_42);
    }

    #[test]
    fn below_is_uniform_enough() {
        let mut r = Rng::new(7);
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            counts[r.below(6) as usize] += 1;
        }
        // Each face expects 10,000; 5 standard deviations is about 456.
        for c in counts {
            assert!((c as i64 - 10_000).abs() < 456, "{counts:?}");
        }
    }

    const PINNED_42: [u64; 8] = [4, 1, 3, 2, 1, 3, 2, 6];
}
