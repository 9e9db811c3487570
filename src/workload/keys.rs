//! Drawing a key from a [`KeyDist`] as a pure function of the cycle: any worker, shard or
//! later verification gets the same key for the same cycle.

use rand_distr::{Distribution, Normal, Zipf};
use rand_xoshiro::SplitMix64;
use rand_xoshiro::rand_core::SeedableRng;

use super::data::{below, mix};
use crate::spec::keys::KeyDist;

/// Draws stop after this many rejected gaussian values and take the nearest key.
const GAUSSIAN_TRIES: u32 = 16;

/// The random stream of one cycle: the same for the same cycle, wherever it runs.
fn generator(cycle: u64) -> SplitMix64 {
    SplitMix64::seed_from_u64(mix(cycle))
}

/// Keys `0..n` drawn by one distribution.
#[derive(Debug, Clone)]
pub struct Keys {
    dist: KeyDist,
    n: u64,
    zipf: Option<Zipf<f64>>,
    normal: Option<Normal<f64>>,
}

impl Keys {
    /// A sampler of `0..n` (n >= 1; 0 is taken as 1).
    pub fn new(dist: KeyDist, n: u64) -> Keys {
        let n = n.max(1);
        let zipf = match dist {
            KeyDist::Zipf { s } | KeyDist::Latest { s } => {
                Some(Zipf::new(n as f64, s).expect("a parsed exponent is positive and n >= 1"))
            }
            _ => None,
        };
        let normal = match dist {
            KeyDist::Gaussian { stdvs } => {
                let mean = (n - 1) as f64 / 2.0;
                let sd = (n as f64 / 2.0 / stdvs).max(f64::MIN_POSITIVE);
                Some(Normal::new(mean, sd).expect("a finite positive standard deviation"))
            }
            _ => None,
        };
        Keys {
            dist,
            n,
            zipf,
            normal,
        }
    }

    pub fn n(&self) -> u64 {
        self.n
    }

    /// The key cycle `cycle` touches; `write` tells a write from a read (only `latest`
    /// treats them differently).
    #[inline]
    pub fn pick(&self, cycle: u64, write: bool) -> u64 {
        let n = self.n;
        match self.dist {
            KeyDist::Uniform => below(mix(cycle), n),
            KeyDist::Sequential => cycle % n,
            KeyDist::Zipf { .. } => self.zipf_rank(cycle),
            KeyDist::Latest { .. } if write => cycle % n,
            KeyDist::Latest { .. } => (cycle % n + n - self.zipf_rank(cycle)) % n,
            KeyDist::Gaussian { .. } => {
                let normal = self.normal.as_ref().expect("built with the distribution");
                let mut rng = generator(cycle);
                let mut x = normal.sample(&mut rng);
                for _ in 1..GAUSSIAN_TRIES {
                    if (0.0..n as f64).contains(&x.round()) {
                        break;
                    }
                    x = normal.sample(&mut rng);
                }
                (x.round().max(0.0) as u64).min(n - 1)
            }
        }
    }

    /// The row a write of `cycle` writes: in order in rampup and fills (`sequential`), else
    /// drawn like the main phase's writes.
    #[inline]
    pub fn write_row(&self, cycle: u64, sequential: bool) -> u64 {
        if sequential {
            cycle % self.n
        } else {
            self.pick(cycle, true)
        }
    }

    /// A zipfian rank in `0..n`, 0 the most frequent.
    fn zipf_rank(&self, cycle: u64) -> u64 {
        let zipf = self.zipf.as_ref().expect("built with the distribution");
        let mut rng = generator(cycle);
        // Zipf draws 1..=n as a float.
        ((zipf.sample(&mut rng) as u64).max(1) - 1).min(self.n - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(keys: &Keys, draws: u64, write: bool) -> Vec<u64> {
        let mut c = vec![0u64; keys.n() as usize];
        for cycle in 0..draws {
            let k = keys.pick(cycle, write);
            assert!(k < keys.n(), "{k} out of 0..{}", keys.n());
            c[k as usize] += 1;
        }
        c
    }

    #[test]
    fn every_distribution_is_a_function_of_the_cycle_and_stays_in_range() {
        for d in [
            "uniform", "zipf:1.2", "gaussian", "seq", "latest", "zipf:0.5",
        ] {
            let dist: KeyDist = d.parse().unwrap();
            for n in [1, 2, 7, 1000] {
                let a = Keys::new(dist, n);
                let b = Keys::new(dist, n);
                for cycle in [0, 1, 2, 99, 12_345, u64::MAX] {
                    for write in [true, false] {
                        let k = a.pick(cycle, write);
                        assert!(k < n, "{d} n={n}: {k}");
                        assert_eq!(
                            k,
                            b.pick(cycle, write),
                            "{d} is not a function of the cycle"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn uniform_is_the_hash_the_workloads_always_used() {
        let keys = Keys::new(KeyDist::Uniform, 1000);
        for c in 0..100 {
            assert_eq!(keys.pick(c, false), below(mix(c), 1000));
            assert_eq!(keys.write_row(c, true), c % 1000);
        }
    }

    #[test]
    fn zipf_frequencies_follow_the_exponent() {
        for s in [0.8, 1.2] {
            let keys = Keys::new(KeyDist::Zipf { s }, 10_000);
            let c = counts(&keys, 400_000, false);
            // Key k is drawn (k+1)^s times less often than key 0.
            for k in [1usize, 2, 4, 9] {
                let want = ((k + 1) as f64).powf(s);
                let got = c[0] as f64 / c[k] as f64;
                assert!(
                    (got / want - 1.0).abs() < 0.1,
                    "s={s}: key 0 / key {k} = {got:.3}, want {want:.3}"
                );
            }
            // And the hottest keys are the first ones.
            let mut order: Vec<usize> = (0..c.len()).collect();
            order.sort_by_key(|&k| std::cmp::Reverse(c[k]));
            assert_eq!(&order[..3], &[0, 1, 2], "s={s}");
        }
    }

    #[test]
    fn gaussian_is_centred_with_the_asked_spread() {
        let keys = Keys::new(KeyDist::Gaussian { stdvs: 3.0 }, 6000);
        let c = counts(&keys, 200_000, false);
        let total: u64 = c.iter().sum();
        let mean: f64 = c
            .iter()
            .enumerate()
            .map(|(k, &n)| k as f64 * n as f64)
            .sum::<f64>()
            / total as f64;
        assert!((mean - 2999.5).abs() < 30.0, "mean {mean}");
        // One standard deviation (1,000 keys) either side holds about 68% of the draws.
        let within: u64 = c[2000..4000].iter().sum();
        let share = within as f64 / total as f64;
        assert!((0.66..0.70).contains(&share), "{share}");
    }

    #[test]
    fn sequential_goes_in_order_and_latest_reads_recent_writes() {
        let seq = Keys::new(KeyDist::Sequential, 10);
        assert_eq!(
            (0..12).map(|c| seq.pick(c, false)).collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1]
        );
        let latest = Keys::new(KeyDist::Latest { s: 1.0 }, 100_000);
        assert_eq!(latest.pick(5_000, true), 5_000);
        // Reads at cycle c mostly touch what cycles just before c wrote.
        let mut recent = 0;
        for c in 50_000..60_000u64 {
            let back = (c + 100_000 - latest.pick(c, false)) % 100_000;
            if back < 100 {
                recent += 1;
            }
        }
        assert!(
            recent > 3_500,
            "{recent} of 10,000 reads within 100 of the newest write"
        );
    }
}
