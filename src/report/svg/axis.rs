//! Chart axes: linear and log domains with "nice" ticks and their labels.

/// One tick: where, and its label (`\n` separates lines).
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    pub value: f64,
    pub label: String,
}

/// An axis: its domain, linear or log, its ticks and an optional title.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub lo: f64,
    pub hi: f64,
    pub log: bool,
    pub ticks: Vec<Tick>,
    pub title: Option<String>,
}

/// 1, 2, 2.5 or 5 × a power of ten, near `span / n`.
pub fn nice_step(span: f64, n: usize) -> f64 {
    let raw = (span / n.max(1) as f64).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// Decimals needed to print multiples of `step` exactly (up to 6).
fn decimals_of(step: f64) -> usize {
    (0..6)
        .find(|&d| {
            let scaled = step * 10f64.powi(d as i32);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.abs().max(1.0)
        })
        .unwrap_or(6)
}

/// A tick label for `v` on an axis stepping by `step`: thousands as `k`, millions as `M`.
pub fn tick_label(v: f64, step: f64) -> String {
    let (scale, suffix) = if step >= 1e6 {
        (1e6, "M")
    } else if step >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let d = decimals_of(step / scale);
    let s = format!("{:.d$}", v / scale);
    // Zero is plain "0" (not "0.0", "-0" or "0k").
    if s.parse::<f64>() == Ok(0.0) {
        return "0".into();
    }
    format!("{s}{suffix}")
}

/// A value on a log axis: as few digits as it needs (0.05, 2, 1k).
fn log_label(v: f64) -> String {
    if v >= 1e6 {
        tick_label(v, 1e6)
    } else if v >= 1e3 {
        tick_label(v, 1e3)
    } else {
        tick_label(v, v)
    }
}

impl Axis {
    /// Linear from `lo` to `hi`, widened to whole ticks, about `n` of them.
    pub fn linear(lo: f64, hi: f64, n: usize) -> Axis {
        let (lo, hi) = if hi > lo { (lo, hi) } else { (lo, lo + 1.0) };
        let step = nice_step(hi - lo, n);
        let first = (lo / step + 1e-9).floor();
        let last = (hi / step - 1e-9).ceil();
        let ticks = (first as i64..=last as i64)
            .map(|k| {
                let value = k as f64 * step;
                Tick {
                    value,
                    label: tick_label(value, step),
                }
            })
            .collect();
        Axis {
            lo: first * step,
            hi: last * step,
            log: false,
            ticks,
            title: None,
        }
    }

    /// Linear from 0 to at least `max` (1 when there is nothing above 0).
    pub fn zero_to(max: f64, n: usize) -> Axis {
        let max = if max.is_finite() && max > 0.0 {
            max
        } else {
            1.0
        };
        Axis::linear(0.0, max, n)
    }

    /// Log from the decade at or below `lo` to the decade at or above `hi`; ticks at each
    /// decade, and at 2 and 5 of each when the axis spans three decades or fewer.
    pub fn log(lo: f64, hi: f64) -> Axis {
        let lo = if lo.is_finite() && lo > 0.0 { lo } else { 1.0 };
        let hi = if hi.is_finite() && hi > lo {
            hi
        } else {
            lo * 10.0
        };
        let d0 = lo.log10().floor() as i32;
        let d1 = (hi.log10().ceil() as i32).max(d0 + 1);
        let minor = d1 - d0 <= 3;
        let mut ticks = Vec::new();
        for d in d0..=d1 {
            let base = 10f64.powi(d);
            for m in [1.0, 2.0, 5.0] {
                let value = base * m;
                if (m == 1.0 || minor) && value <= 10f64.powi(d1) * 1.000_001 {
                    ticks.push(Tick {
                        value,
                        label: log_label(value),
                    });
                }
            }
        }
        Axis {
            lo: 10f64.powi(d0),
            hi: 10f64.powi(d1),
            log: true,
            ticks,
            title: None,
        }
    }

    pub fn titled(mut self, title: &str) -> Axis {
        self.title = Some(title.to_string());
        self
    }

    /// Maps `v` to 0 (at `lo`) … 1 (at `hi`); `None` for values a log axis cannot show.
    pub(super) fn fraction(&self, v: f64) -> Option<f64> {
        if !v.is_finite() {
            return None;
        }
        if self.log {
            (v > 0.0).then(|| (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10()))
        } else {
            Some((v - self.lo) / (self.hi - self.lo))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_axes_get_nice_ticks_covering_the_data() {
        let a = Axis::zero_to(2_340.0, 5);
        assert_eq!((a.lo, a.hi), (0.0, 2_500.0));
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["0", "500", "1000", "1500", "2000", "2500"]);
        assert_eq!(Axis::zero_to(23_000.0, 5).ticks[1].label, "5k");
        let a = Axis::zero_to(0.37, 4);
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["0", "0.1", "0.2", "0.3", "0.4"]);
        let a = Axis::linear(0.0, 47.0, 6);
        assert_eq!(a.hi, 50.0);
        assert_eq!(a.ticks[1].label, "10");
        // Nothing above zero still gives a usable axis.
        assert_eq!(Axis::zero_to(0.0, 4).hi, 1.0);
        assert_eq!(nice_step(7.0, 3), 2.5);
    }

    #[test]
    fn log_axes_span_whole_decades() {
        let a = Axis::log(0.8, 31.0);
        assert_eq!((a.lo, a.hi), (0.1, 100.0));
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(
            labels,
            ["0.1", "0.2", "0.5", "1", "2", "5", "10", "20", "50", "100"]
        );
        let wide = Axis::log(0.01, 5_000.0);
        let labels: Vec<&str> = wide.ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["0.01", "0.1", "1", "10", "100", "1k", "10k"]);
    }
}
