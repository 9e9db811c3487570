//! Values as a pure function of numbers: any worker, process or later verification computes
//! the same key and bytes for the same cycle.

/// SplitMix64: a fast, well-mixed 64-bit hash (used as a counter-based generator).
#[inline]
pub fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A second, independent stream for the same input.
#[inline]
pub fn mix2(x: u64) -> u64 {
    mix(x ^ 0x5851_F42D_4C95_7F2D)
}

/// A third stream, for an operation's own choices (a read's start row, a query's row, an
/// insert's share of a partition). [`mix2`] chooses which operation a cycle runs: a choice
/// drawn from it again would be confined to the part of its range that chose the operation
/// (a range read drawn that way with `write=5,range=5` only ever started in the upper half of
/// a partition).
#[inline]
pub fn mix3(x: u64) -> u64 {
    mix(x ^ 0x2545_F491_4F6C_DD1D)
}

/// Uniform in `0..n` (n > 0).
#[inline]
pub fn below(h: u64, n: u64) -> u64 {
    ((h as u128 * n as u128) >> 64) as u64
}

/// Fills `buf` with bytes determined by `seed`.
pub fn fill(seed: u64, buf: &mut [u8]) {
    let mut s = mix(seed);
    for chunk in buf.chunks_mut(8) {
        let b = s.to_le_bytes();
        chunk.copy_from_slice(&b[..chunk.len()]);
        s = mix(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_spread() {
        assert_eq!(mix(42), mix(42));
        assert_ne!(mix(42), mix(43));
        assert_ne!(mix(42), mix2(42));
        assert_ne!(mix2(42), mix3(42));
        let mut a = [0u8; 20];
        let mut b = [0u8; 20];
        fill(7, &mut a);
        fill(7, &mut b);
        assert_eq!(a, b);
        fill(8, &mut b);
        assert_ne!(a, b);
        // below() covers the range evenly enough.
        let mut counts = [0u32; 10];
        for i in 0..100_000 {
            counts[below(mix(i), 10) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn an_operations_own_choice_is_independent_of_the_operation_chosen() {
        // Cycles whose mix2 chose the upper half of a 50/50 mix (as `op_for` does) still
        // spread their mix3 choices over the whole range.
        let mut counts = [0u32; 10];
        for c in (0..200_000u64).filter(|&c| below(mix2(c), 2) == 1) {
            counts[below(mix3(c), 10) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&n| (9_000..11_000).contains(&n)),
            "{counts:?}"
        );
    }
}
