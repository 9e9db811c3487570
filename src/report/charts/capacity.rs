//! A capacity search's charts: one slot per step, the failing and highest passing steps
//! marked.

use super::{Charts, FAIL_COLOUR, PASS_COLOUR, WIDE};
use crate::report::capacity::{Role, SearchReport};
use crate::report::svg::{Axis, Chart, Fill, LegendItem, Stroke, Tick};

impl Charts {
    /// Target and achieved rate per step of a capacity search.
    pub fn capacity_rate(&mut self, c: &SearchReport) -> Option<String> {
        let colour = self.env_colour(&c.env);
        let max = c
            .steps
            .iter()
            .map(|s| s.target_rate_per_s.max(s.ops_per_s))
            .fold(0.0, f64::max);
        let target = Fill::light(colour, 0.2);
        let achieved = Fill::solid(colour);
        let mut chart = self.step_chart(
            c,
            "capacity-rate",
            "Target and achieved rate per step (ops/s)",
            max,
            vec![
                LegendItem::area("target", &target),
                LegendItem::area("achieved", &achieved),
            ],
        )?;
        for s in &c.steps {
            let x = s.index as f64;
            if let Some(n) = s.concurrency {
                // A closed-loop step has no target: its achieved rate alone, with its
                // requests in flight.
                chart.bar(
                    x - 0.17,
                    x + 0.17,
                    s.ops_per_s,
                    &achieved,
                    &format!(
                        "step {}: {n} in flight, achieved {} ops/s",
                        s.index,
                        crate::format::cell(Some(s.ops_per_s), 0)
                    ),
                );
                continue;
            }
            chart.bar(
                x - 0.34,
                x - 0.02,
                s.target_rate_per_s,
                &target,
                &format!(
                    "step {}: target {} ops/s",
                    s.index,
                    crate::format::cell(Some(s.target_rate_per_s), 0)
                ),
            );
            chart.bar(
                x + 0.02,
                x + 0.34,
                s.ops_per_s,
                &achieved,
                &format!(
                    "step {}: achieved {} ops/s",
                    s.index,
                    crate::format::cell(Some(s.ops_per_s), 0)
                ),
            );
        }
        Some(chart.render())
    }

    /// Response time p50 and p99 per step, with the search's latency bounds.
    pub fn capacity_latency(&mut self, c: &SearchReport) -> Option<String> {
        let colour = self.env_colour(&c.env);
        let max = c
            .steps
            .iter()
            .map(|s| s.p99_ms)
            .chain(c.latency_limits.iter().map(|(_, ms)| *ms))
            .fold(0.0, f64::max);
        let p50 = Fill::light(colour, 0.2);
        let p99 = Fill::solid(colour);
        let limit = Stroke {
            width: 1.4,
            ..Stroke::dashed(FAIL_COLOUR)
        };
        let mut legend = vec![LegendItem::area("p50", &p50), LegendItem::area("p99", &p99)];
        if !c.latency_limits.is_empty() {
            legend.push(LegendItem::line("limit", &limit));
        }
        let mut chart = self.step_chart(
            c,
            "capacity-latency",
            "Response time per step (ms, all operations)",
            max,
            legend,
        )?;
        for s in &c.steps {
            let x = s.index as f64;
            for (x0, x1, v, fill, name) in [
                (x - 0.34, x - 0.02, s.p50_ms, &p50, "p50"),
                (x + 0.02, x + 0.34, s.p99_ms, &p99, "p99"),
            ] {
                let tip = format!(
                    "step {}: {name} {} ms",
                    s.index,
                    crate::format::cell(Some(v), 2)
                );
                chart.bar(x0, x1, v, fill, &tip);
            }
        }
        for (label, ms) in &c.latency_limits {
            chart.hline(*ms, &limit, &format!("limit {label}"));
        }
        Some(chart.render())
    }

    /// A chart with one slot per step, the failing and highest passing steps marked.
    fn step_chart(
        &mut self,
        c: &SearchReport,
        name: &str,
        title: &str,
        max: f64,
        mut legend: Vec<LegendItem>,
    ) -> Option<Chart> {
        if c.steps.is_empty() {
            return None;
        }
        let failed = Fill::light(FAIL_COLOUR, 0.1);
        let passed = Fill::light(PASS_COLOUR, 0.1);
        if c.steps.iter().any(|s| s.role == Some(Role::HighestPassing)) {
            legend.push(LegendItem::area("highest passing step", &passed));
        }
        if c.steps.iter().any(|s| s.role == Some(Role::Failing)) {
            legend.push(LegendItem::area("failing step", &failed));
        }
        let n = c.steps.iter().map(|s| s.index).max().unwrap_or(1);
        let x = Axis {
            lo: 0.5,
            hi: n as f64 + 0.5,
            log: false,
            ticks: c
                .steps
                .iter()
                .map(|s| Tick {
                    value: s.index as f64,
                    label: format!(
                        "step {}\n{} ops/s",
                        s.index,
                        crate::format::cell(Some(s.target_rate_per_s), 0)
                    ),
                })
                .collect(),
            title: Some("step (target rate)".into()),
        };
        let mut chart = Chart::new(
            self.id(),
            name,
            title,
            WIDE,
            x,
            Axis::zero_to(max * 1.15, 6),
            legend,
        );
        for s in &c.steps {
            let x = s.index as f64;
            match s.role {
                Some(Role::Failing) => {
                    chart.band(x - 0.5, x + 0.5, &failed);
                    chart.label_at(x, "failed", FAIL_COLOUR);
                }
                Some(Role::HighestPassing) => {
                    chart.band(x - 0.5, x + 0.5, &passed);
                    chart.label_at(x, "highest passing", PASS_COLOUR);
                }
                None => {}
            }
        }
        Some(chart)
    }
}
