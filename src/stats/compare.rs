//! Is B better, worse or not distinguishable from A? Welch's t-test, on either of two kinds of
//! series: the per-interval values of one run each, with each series' sample size shrunk to
//! its effective size under lag-1 autocorrelation (one-second intervals of a benchmark are not
//! independent draws); or one figure per run of two sets of repeated runs, independent draws
//! by construction. With the effect size: the relative difference of means and its 95%
//! confidence interval, and Cohen's d. Pure: series in, verdicts out.

use std::fmt;

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Below this p-value a difference is called significant.
pub const ALPHA: f64 = 0.05;
/// The lag-1 autocorrelation is clamped into `[0, RHO_MAX]`.
pub const RHO_MAX: f64 = 0.99;
/// Effective sample sizes are floored here so the degrees of freedom stay defined (with
/// n_eff = 2 the test has one or two degrees of freedom and is very conservative).
pub const MIN_N_EFF: f64 = 2.0;
/// The confidence of the intervals given for a difference.
pub const CONFIDENCE: f64 = 0.95;

/// How a series' values were drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// The intervals of one run: autocorrelated, their sample size shrunk.
    Intervals,
    /// One figure per run of a set of repeated runs: independent.
    Runs,
}

impl Sampling {
    /// Fewer values than this and a series cannot be compared.
    pub fn min_values(self) -> usize {
        match self {
            Sampling::Intervals => 3,
            Sampling::Runs => 2,
        }
    }
}

/// The Student's t distribution with `df` degrees of freedom; None when `df` is not positive.
fn students_t(df: f64) -> Option<StudentsT> {
    StudentsT::new(0.0, 1.0, df).ok()
}

/// Two-sided p-value of `t` under Student's t with `df` degrees of freedom (NaN when `df` is
/// not positive).
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    match students_t(df) {
        Some(d) => (2.0 * d.sf(t.abs())).min(1.0),
        None => f64::NAN,
    }
}

/// The t value a two-sided interval of confidence `confidence` spans at `df` degrees of
/// freedom (NaN when `df` is not positive).
pub fn t_quantile(confidence: f64, df: f64) -> f64 {
    match students_t(df) {
        Some(d) => d.inverse_cdf(0.5 + confidence / 2.0),
        None => f64::NAN,
    }
}

/// Which way is good.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Throughput.
    HigherIsBetter,
    /// Latency.
    LowerIsBetter,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Better,
    Worse,
    NotDistinguishable,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::NotDistinguishable => "not distinguishable",
        })
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    #[error("{metric}: {side} has {n} values, at least {min} are needed")]
    TooFewValues {
        metric: String,
        side: &'static str,
        n: usize,
        min: usize,
    },
    #[error("{metric}: {side} holds a value that is not finite")]
    NotFinite { metric: String, side: &'static str },
    #[error("{metric}: {side} holds a value of 0 or less, which has no logarithm")]
    NotPositive { metric: String, side: &'static str },
}

/// How a metric's values are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// The values themselves: the change is the difference of the means (throughput).
    Linear,
    /// Their logarithms: the change is the ratio of the geometric means. For values that
    /// change by factors and scatter with a long tail — latencies, where one run in five
    /// with a p99 20× the others' would otherwise swamp a consistent 2× shift. Every value
    /// must be above 0.
    Log,
}

/// Mean, variance and effective size of one series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeriesStats {
    pub n: usize,
    pub mean: f64,
    /// Sample variance (n − 1 denominator).
    pub variance: f64,
    /// Lag-1 autocorrelation, clamped into [0, RHO_MAX].
    pub rho1: f64,
    /// n (1 − ρ1) / (1 + ρ1), floored at [`MIN_N_EFF`].
    pub n_eff: f64,
}

impl SeriesStats {
    /// The figures of a run's per-interval values.
    pub fn of(xs: &[f64]) -> SeriesStats {
        Self::sampled(xs, Sampling::Intervals)
    }

    /// The figures of `xs`, drawn as `sampling` says: independent runs keep their size.
    pub fn sampled(xs: &[f64], sampling: Sampling) -> SeriesStats {
        let n = xs.len();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let ss: f64 = xs.iter().map(|x| (x - mean).powi(2)).sum();
        let variance = if n > 1 { ss / (n - 1) as f64 } else { 0.0 };
        let (rho1, n_eff) = match sampling {
            Sampling::Intervals => {
                let rho1 = lag1_autocorrelation(xs).clamp(0.0, RHO_MAX);
                (
                    rho1,
                    (n as f64 * (1.0 - rho1) / (1.0 + rho1)).max(MIN_N_EFF),
                )
            }
            Sampling::Runs => (0.0, n as f64),
        };
        SeriesStats {
            n,
            mean,
            variance,
            rho1,
            n_eff,
        }
    }
}

/// Lag-1 sample autocorrelation Σ(xᵢ − x̄)(xᵢ₊₁ − x̄) / Σ(xᵢ − x̄)²; 0 for a constant series.
pub fn lag1_autocorrelation(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let den: f64 = xs.iter().map(|x| (x - mean).powi(2)).sum();
    if den == 0.0 {
        return 0.0;
    }
    let num: f64 = xs.windows(2).map(|w| (w[0] - mean) * (w[1] - mean)).sum();
    num / den
}

/// Welch's t statistic of B − A, its Welch–Satterthwaite degrees of freedom, two-sided p, and
/// the [`CONFIDENCE`] interval of B − A.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TTest {
    pub t: f64,
    pub df: f64,
    pub p: f64,
    pub diff_low: f64,
    pub diff_high: f64,
}

/// Welch's test from summary figures, with `n` the (effective) sample sizes.
pub fn welch(mean_a: f64, var_a: f64, n_a: f64, mean_b: f64, var_b: f64, n_b: f64) -> TTest {
    let (ea, eb) = (var_a / n_a, var_b / n_b);
    let se2 = ea + eb;
    let diff = mean_b - mean_a;
    if se2 == 0.0 {
        // Two constant series: identical, or different beyond any doubt.
        let (t, p) = if diff == 0.0 {
            (0.0, 1.0)
        } else {
            (diff.signum() * f64::INFINITY, 0.0)
        };
        return TTest {
            t,
            df: n_a + n_b - 2.0,
            p,
            diff_low: diff,
            diff_high: diff,
        };
    }
    let t = diff / se2.sqrt();
    let df = se2 * se2 / (ea * ea / (n_a - 1.0) + eb * eb / (n_b - 1.0));
    let half = t_quantile(CONFIDENCE, df) * se2.sqrt();
    TTest {
        t,
        df,
        p: t_two_sided_p(t, df),
        diff_low: diff - half,
        diff_high: diff + half,
    }
}

/// The comparison of one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricComparison {
    pub metric: String,
    pub direction: Direction,
    pub a: SeriesStats,
    pub b: SeriesStats,
    pub test: TTest,
    /// (mean B − mean A) / mean A; NaN when mean A is 0.
    pub relative_diff: f64,
    /// The [`CONFIDENCE`] interval of the relative difference (the interval of B − A over
    /// mean A); NaN when mean A is 0.
    pub relative_low: f64,
    pub relative_high: f64,
    /// (mean B − mean A) / pooled standard deviation (raw sizes); 0 when both are constant
    /// and equal, ±∞ when constant and different.
    pub cohen_d: f64,
    pub verdict: Verdict,
    /// On [`Scale::Log`], `a`, `b`, `test` and `cohen_d` are of the values' logarithms.
    pub scale: Scale,
}

impl MetricComparison {
    /// The means shown for A and B: arithmetic on [`Scale::Linear`], geometric on
    /// [`Scale::Log`].
    pub fn means(&self) -> (f64, f64) {
        match self.scale {
            Scale::Linear => (self.a.mean, self.b.mean),
            Scale::Log => (self.a.mean.exp(), self.b.mean.exp()),
        }
    }
}

/// Compares the per-interval series `b` with series `a` of one metric.
pub fn compare(
    metric: &str,
    direction: Direction,
    a: &[f64],
    b: &[f64],
) -> Result<MetricComparison, CompareError> {
    compare_sampled(metric, direction, a, b, Sampling::Intervals)
}

/// Compares series `b` with series `a` of one metric, drawn as `sampling` says.
pub fn compare_sampled(
    metric: &str,
    direction: Direction,
    a: &[f64],
    b: &[f64],
    sampling: Sampling,
) -> Result<MetricComparison, CompareError> {
    compare_scaled(metric, direction, a, b, sampling, Scale::Linear)
}

/// [`compare_sampled`] on `scale`.
pub fn compare_scaled(
    metric: &str,
    direction: Direction,
    a: &[f64],
    b: &[f64],
    sampling: Sampling,
    scale: Scale,
) -> Result<MetricComparison, CompareError> {
    for (side, xs) in [("A", a), ("B", b)] {
        if xs.len() < sampling.min_values() {
            return Err(CompareError::TooFewValues {
                metric: metric.into(),
                side,
                n: xs.len(),
                min: sampling.min_values(),
            });
        }
        if xs.iter().any(|x| !x.is_finite()) {
            return Err(CompareError::NotFinite {
                metric: metric.into(),
                side,
            });
        }
        if scale == Scale::Log && xs.iter().any(|x| *x <= 0.0) {
            return Err(CompareError::NotPositive {
                metric: metric.into(),
                side,
            });
        }
    }
    let logs = |xs: &[f64]| xs.iter().map(|x| x.ln()).collect::<Vec<f64>>();
    let (sa, sb) = match scale {
        Scale::Linear => (
            SeriesStats::sampled(a, sampling),
            SeriesStats::sampled(b, sampling),
        ),
        Scale::Log => (
            SeriesStats::sampled(&logs(a), sampling),
            SeriesStats::sampled(&logs(b), sampling),
        ),
    };
    let test = welch(
        sa.mean,
        sa.variance,
        sa.n_eff,
        sb.mean,
        sb.variance,
        sb.n_eff,
    );
    let diff = sb.mean - sa.mean;
    let pooled = (((sa.n - 1) as f64 * sa.variance + (sb.n - 1) as f64 * sb.variance)
        / (sa.n + sb.n - 2) as f64)
        .sqrt();
    let cohen_d = if pooled > 0.0 {
        diff / pooled
    } else if diff == 0.0 {
        0.0
    } else {
        diff.signum() * f64::INFINITY
    };
    let relative = |d: f64| match scale {
        // exp(mean log B − mean log A) = geometric mean B / geometric mean A.
        Scale::Log => d.exp() - 1.0,
        Scale::Linear if sa.mean != 0.0 => d / sa.mean.abs(),
        Scale::Linear => f64::NAN,
    };
    let verdict = if test.p.is_nan() || test.p >= ALPHA || diff == 0.0 {
        Verdict::NotDistinguishable
    } else if (diff > 0.0) == (direction == Direction::HigherIsBetter) {
        Verdict::Better
    } else {
        Verdict::Worse
    };
    Ok(MetricComparison {
        metric: metric.into(),
        direction,
        a: sa,
        b: sb,
        test,
        relative_diff: relative(diff),
        relative_low: relative(test.diff_low),
        relative_high: relative(test.diff_high),
        cohen_d,
        verdict,
        scale,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol, "{a} vs {b}");
    }

    /// Deterministic AR(1) noise around `mean`: xᵢ = mean + φ·(xᵢ₋₁ − mean) + σ·zᵢ, with zᵢ
    /// standard normal from a xorshift generator and Box–Muller.
    fn ar1(seed: u64, n: usize, mean: f64, phi: f64, sigma: f64) -> Vec<f64> {
        let mut s = seed.max(1);
        let mut uniform = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let mut dev = 0.0;
        (0..n)
            .map(|_| {
                let z =
                    (-2.0 * uniform().ln()).sqrt() * (2.0 * std::f64::consts::PI * uniform()).cos();
                dev = phi * dev + sigma * z;
                mean + dev
            })
            .collect()
    }

    #[test]
    fn t_p_values_and_quantiles_match_closed_forms_and_tables() {
        for t in [0.0, 0.5, 1.0, 2.0, 6.3] {
            // df = 1 (Cauchy): p = 1 − (2/π) atan|t|; df = 2: p = 1 − |t| / √(2 + t²)
            close(
                t_two_sided_p(t, 1.0),
                1.0 - 2.0 / std::f64::consts::PI * f64::atan(t),
                1e-10,
            );
            close(t_two_sided_p(t, 2.0), 1.0 - t / (2.0 + t * t).sqrt(), 1e-10);
        }
        // Tables: t(0.975, 10) = 2.228139, t(0.975, 30) = 2.042272, t(0.995, 5) = 4.032143.
        close(t_two_sided_p(2.228_139, 10.0), 0.05, 1e-6);
        close(t_two_sided_p(-2.042_272, 30.0), 0.05, 1e-6);
        close(t_two_sided_p(4.032_143, 5.0), 0.01, 1e-6);
        close(t_quantile(0.95, 10.0), 2.228_139, 1e-5);
        close(t_quantile(0.95, 2.0), 4.302_653, 1e-5);
        close(t_quantile(0.99, 5.0), 4.032_143, 1e-5);
        assert_eq!(t_two_sided_p(f64::INFINITY, 3.0), 0.0);
        assert!(t_two_sided_p(1.0, 0.0).is_nan());
    }

    #[test]
    fn sets_of_runs_keep_their_size_and_give_an_interval() {
        // Per-run throughput of three runs each: A 100, 102, 98 (mean 100, variance 4);
        // B 110, 112, 108 (mean 110, variance 4). se² = 4/3 + 4/3 = 8/3; t = 10/√(8/3) =
        // 6.123724; df = (8/3)² / (2 · (4/3)² / 2) = 4.
        let a = [100.0, 102.0, 98.0];
        let b = [110.0, 112.0, 108.0];
        let c = compare_sampled("t", Direction::HigherIsBetter, &a, &b, Sampling::Runs).unwrap();
        assert_eq!((c.a.n_eff, c.b.n_eff), (3.0, 3.0));
        close(c.test.t, 10.0 / (8.0f64 / 3.0).sqrt(), 1e-12);
        close(c.test.df, 4.0, 1e-9);
        // t(0.975, 4) = 2.776445: the difference's interval is 10 ± 2.776445 · √(8/3).
        let half = 2.776_445 * (8.0f64 / 3.0).sqrt();
        close(c.test.diff_low, 10.0 - half, 1e-4);
        close(c.test.diff_high, 10.0 + half, 1e-4);
        close(c.relative_low, (10.0 - half) / 100.0, 1e-6);
        close(c.relative_high, (10.0 + half) / 100.0, 1e-6);
        // Tables at df 4: two-sided 0.01 needs t ≥ 4.604, 0.001 needs t ≥ 8.610.
        assert!(c.test.p < 0.01 && c.test.p > 0.001, "{:?}", c.test);
        assert_eq!(c.verdict, Verdict::Better);
        // Two runs a side are enough for a set; one is not.
        assert!(
            compare_sampled(
                "t",
                Direction::HigherIsBetter,
                &a[..2],
                &b[..2],
                Sampling::Runs
            )
            .is_ok()
        );
        let e = compare_sampled("t", Direction::HigherIsBetter, &a[..1], &b, Sampling::Runs)
            .unwrap_err();
        assert_eq!(e.to_string(), "t: A has 1 values, at least 2 are needed");
    }

    #[test]
    fn welch_matches_hand_arithmetic() {
        // A: mean 10, variance 4, n 10; B: mean 12, variance 9, n 10.
        // se² = 4/10 + 9/10 = 1.3; t = 2 / √1.3 = 1.754116
        // df = 1.3² / ((0.4²)/9 + (0.9²)/9) = 1.69 / (0.97/9) = 15.680412
        let r = welch(10.0, 4.0, 10.0, 12.0, 9.0, 10.0);
        close(r.t, 2.0 / 1.3f64.sqrt(), 1e-12);
        close(r.df, 1.69 / (0.97 / 9.0), 1e-9);
        // Tables: t(0.95, 15) = 1.7531 < t, so p < 0.10 at df ≥ 15; t(0.975, 15) = 2.1314 > t,
        // so p > 0.05.
        assert!(r.p > 0.05 && r.p < 0.10, "{r:?}");
        assert_eq!(r.p, t_two_sided_p(r.t, r.df));
    }

    #[test]
    fn welch_on_raw_series_matches_summary_arithmetic() {
        // Alternating series have negative ρ1, clamped to 0, so n_eff = n.
        let a = [1.0, 3.0, 1.0, 3.0, 1.0, 3.0];
        let b = [4.0, 6.0, 4.0, 6.0, 4.0, 6.0];
        let c = compare("x", Direction::HigherIsBetter, &a, &b).unwrap();
        assert_eq!(c.a.rho1, 0.0);
        assert_eq!(c.a.n_eff, 6.0);
        // Each: mean 2 (5), variance 6·1/5 = 1.2; se² = 0.4; t = 3/√0.4 = 4.743416; df = 10.
        close(c.a.variance, 1.2, 1e-12);
        close(c.test.t, 3.0 / 0.4f64.sqrt(), 1e-12);
        close(c.test.df, 10.0, 1e-9);
        // Tables at df 10: two-sided 0.001 needs t ≥ 4.587, 0.0001 needs t ≥ 6.211.
        assert!(c.test.p < 0.001 && c.test.p > 0.0001, "{:?}", c.test);
        close(c.relative_diff, 1.5, 1e-12);
        // Pooled sd = √1.2; d = 3 / √1.2
        close(c.cohen_d, 3.0 / 1.2f64.sqrt(), 1e-12);
        assert_eq!(c.verdict, Verdict::Better);
        let c = compare("lat", Direction::LowerIsBetter, &a, &b).unwrap();
        assert_eq!(c.verdict, Verdict::Worse);
    }

    #[test]
    fn autocorrelation_shrinks_the_effective_size() {
        close(lag1_autocorrelation(&[1.0, -1.0, 1.0, -1.0]), -0.75, 1e-12);
        assert_eq!(lag1_autocorrelation(&[5.0; 4]), 0.0);
        let trend: Vec<f64> = (0..100).map(f64::from).collect();
        let s = SeriesStats::of(&trend);
        assert!(s.rho1 > 0.95, "{s:?}");
        // 100 · (1 − ρ1) / (1 + ρ1) is below 2 here: floored.
        assert!(100.0 * (1.0 - s.rho1) / (1.0 + s.rho1) < MIN_N_EFF);
        assert_eq!(s.n_eff, MIN_N_EFF);
        let smooth = ar1(7, 400, 0.0, 0.9, 1.0);
        let s = SeriesStats::of(&smooth);
        assert!((s.rho1 - 0.9).abs() < 0.08, "{s:?}");
        close(s.n_eff, 400.0 * (1.0 - s.rho1) / (1.0 + s.rho1), 1e-9);
        assert!(s.n_eff < 40.0, "{s:?}");
    }

    #[test]
    fn same_distribution_is_not_distinguishable_and_a_shift_is() {
        for seed in [1u64, 2, 3, 4, 5] {
            let a = ar1(seed, 120, 20_000.0, 0.6, 500.0);
            let b = ar1(seed + 100, 120, 20_000.0, 0.6, 500.0);
            let c = compare("ops_per_s", Direction::HigherIsBetter, &a, &b).unwrap();
            assert_eq!(c.verdict, Verdict::NotDistinguishable, "seed {seed}: {c:?}");
            // 10% less throughput is worse; the same shift on a latency is better.
            let shifted: Vec<f64> = b.iter().map(|x| x - 2_000.0).collect();
            let c = compare("ops_per_s", Direction::HigherIsBetter, &a, &shifted).unwrap();
            assert_eq!(c.verdict, Verdict::Worse, "seed {seed}: {c:?}");
            assert!(c.relative_diff < -0.08 && c.cohen_d < -1.0, "{c:?}");
            let c = compare("p99_ms", Direction::LowerIsBetter, &a, &shifted).unwrap();
            assert_eq!(c.verdict, Verdict::Better);
        }
    }

    #[test]
    fn autocorrelation_makes_a_small_shift_indistinguishable() {
        // A shift that iid-based Welch would call significant, on strongly autocorrelated
        // series, is not significant once n is corrected.
        let a = ar1(11, 60, 100.0, 0.95, 1.0);
        let b: Vec<f64> = ar1(12, 60, 100.0, 0.95, 1.0)
            .iter()
            .map(|x| x + 1.5)
            .collect();
        let c = compare("x", Direction::HigherIsBetter, &a, &b).unwrap();
        let sa = SeriesStats::of(&a);
        let sb = SeriesStats::of(&b);
        let naive = welch(
            sa.mean,
            sa.variance,
            sa.n as f64,
            sb.mean,
            sb.variance,
            sb.n as f64,
        );
        assert!(naive.p < c.test.p, "naive {naive:?} corrected {:?}", c.test);
        assert!(c.a.n_eff < 10.0 && c.b.n_eff < 10.0, "{c:?}");
    }

    #[test]
    fn the_log_scale_sees_a_consistent_factor_through_a_long_tail() {
        // Per-run p50s: B is 2-3x A in every run. Per-run p99s: one run of B has a spike.
        let a = [1.69, 1.68, 1.04, 1.66, 1.03];
        let b = [8.48, 5.38, 3.50, 2.19, 3.15];
        let dir = Direction::LowerIsBetter;
        let lin = compare_sampled("p50", dir, &a, &b, Sampling::Runs).unwrap();
        let log = compare_scaled("p50", dir, &a, &b, Sampling::Runs, Scale::Log).unwrap();
        assert!(lin.test.p > 0.01, "{lin:?}");
        assert!(log.test.p < 0.01, "{log:?}");
        assert_eq!(log.verdict, Verdict::Worse);
        // The change is the ratio of the geometric means, and its interval holds it.
        let (ga, gb) = log.means();
        let geo = |xs: &[f64]| (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp();
        close(ga, geo(&a), 1e-9);
        close(gb, geo(&b), 1e-9);
        close(log.relative_diff, gb / ga - 1.0, 1e-9);
        assert!(log.relative_low < log.relative_diff && log.relative_diff < log.relative_high);
        assert!(log.relative_low > 0.0, "{log:?}");
        // Equal series: no change; a value of 0 has no logarithm.
        let same = compare_scaled("p99", dir, &a, &a, Sampling::Runs, Scale::Log).unwrap();
        assert_eq!(same.relative_diff, 0.0);
        assert!(matches!(
            compare_scaled("p99", dir, &[1.0, 0.0], &a, Sampling::Runs, Scale::Log),
            Err(CompareError::NotPositive { side: "A", .. })
        ));
    }

    #[test]
    fn constant_series_and_bad_input() {
        let c = compare("x", Direction::HigherIsBetter, &[5.0; 4], &[5.0; 4]).unwrap();
        assert_eq!(c.verdict, Verdict::NotDistinguishable);
        assert_eq!(c.test.p, 1.0);
        let c = compare("x", Direction::HigherIsBetter, &[5.0; 4], &[6.0; 4]).unwrap();
        assert_eq!(c.verdict, Verdict::Better);
        let e = compare("x", Direction::HigherIsBetter, &[1.0, 2.0], &[5.0; 4]).unwrap_err();
        assert_eq!(e.to_string(), "x: A has 2 values, at least 3 are needed");
        let e = compare("x", Direction::HigherIsBetter, &[1.0; 3], &[f64::NAN; 3]).unwrap_err();
        assert!(matches!(e, CompareError::NotFinite { side: "B", .. }));
    }
}
