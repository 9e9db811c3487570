//! The history chart: one figure of one environment's and workload's runs over calendar
//! time, the report's own runs marked.

use super::{Charts, FAIL_COLOUR, WIDE};
use crate::report::history::{History, Series, when};
use crate::report::svg::{Axis, Chart, LegendItem, Stroke, Tick};

/// A calendar axis over `lo..hi` (Unix seconds): five ticks labelled date over time.
fn time_axis(lo: f64, hi: f64) -> Axis {
    // A lone run, or runs in the same second: an hour either side.
    let (lo, hi) = if hi - lo < 60.0 {
        (lo - 3600.0, hi + 3600.0)
    } else {
        let pad = (hi - lo) * 0.03;
        (lo - pad, hi + pad)
    };
    // Five ticks inside the ends, so that no date label runs off the chart.
    let ticks = (0..5)
        .map(|k| {
            let value = lo + (hi - lo) * (0.1 + 0.2 * k as f64);
            Tick {
                value,
                label: when(value as i64).replacen(' ', "\n", 1),
            }
        })
        .collect();
    Axis {
        lo,
        hi,
        log: false,
        ticks,
        title: Some("run start (UTC)".into()),
    }
}

impl Charts {
    /// `s`'s figure per run over time; None without points.
    pub fn history(&mut self, h: &History, s: &Series) -> Option<String> {
        let first = s.points.first()?;
        let last = s.points.last()?;
        let colour = self.env_colour(&s.env);
        let stroke = Stroke::solid(colour);
        let max = s.points.iter().map(|p| p.value).fold(0.0, f64::max);
        let mut chart = Chart::new(
            self.id(),
            "history",
            &format!(
                "{} · {} — {} per run",
                s.env,
                s.workload,
                h.figure.heading()
            ),
            WIDE,
            time_axis(first.started_unix_s as f64, last.started_unix_s as f64),
            Axis::zero_to(max * 1.05, 6),
            vec![
                LegendItem::line(format!("{} runs", s.points.len()), &stroke),
                LegendItem::line("in this report", &Stroke::solid(FAIL_COLOUR)),
            ],
        );
        let points: Vec<(f64, Option<f64>)> = s
            .points
            .iter()
            .map(|p| (p.started_unix_s as f64, Some(p.value)))
            .collect();
        chart.line(&s.env, &points, &stroke);
        for p in &s.points {
            let tip = format!(
                "id {} · {} · {:.2} · {}",
                p.id,
                when(p.started_unix_s),
                p.value,
                p.path.display()
            );
            let c = if p.in_report { FAIL_COLOUR } else { colour };
            chart.dot(p.started_unix_s as f64, p.value, c, &tip);
        }
        Some(chart.render())
    }
}
