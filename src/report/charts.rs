//! The report's charts, from the model: per scenario, throughput over time of every run and
//! the latency spectrum of every environment; per run, client, server and host series stacked
//! on the run's time axis; per capacity search, its steps. Each environment keeps one colour
//! in every chart. A chart whose data is absent is left out (`None`, or not in the list).

use super::model::summary::RunRow;
use super::model::{Report, RunTimeline, ScenarioGroup};
use super::svg::{Axis, Chart, LegendItem, Size, Stroke, Tick};

mod capacity;
mod history;
mod run;

/// Environment colours, in order of first appearance.
const ENV_COLOURS: [&str; 8] = [
    "#2f6fb0", "#e0821e", "#2f9e62", "#8c5ab8", "#1f9fb0", "#b8741f", "#c2477f", "#6b7d1f",
];
/// Colours of the series within one chart (operations, nodes, devices).
const SERIES_COLOURS: [&str; 6] = [
    "#1b7f79", "#c8553d", "#5b5fc7", "#b08a00", "#a3478f", "#4d6b2f",
];
pub const FAIL_COLOUR: &str = "#c62828";
pub const PASS_COLOUR: &str = "#2e7d32";
const GREY: &str = "#6b7685";

const WIDE: Size = Size {
    width: 1080.0,
    plot_height: 250.0,
    left: 62.0,
};
const SMALL: Size = Size {
    width: 1080.0,
    plot_height: 105.0,
    left: 62.0,
};
const TIME_AXIS_TITLE: &str = "seconds since the run started";

/// Draws charts for one page: hands out chart ids and environment colours.
pub struct Charts {
    envs: Vec<String>,
    next_id: usize,
}

fn series_colour(i: usize) -> &'static str {
    SERIES_COLOURS[i % SERIES_COLOURS.len()]
}

/// The colour of run `#index` of the summary (in its table and the overlaid spectra).
pub fn run_colour(index: usize) -> &'static str {
    series_colour(index.saturating_sub(1))
}

fn file_name(path: &std::path::Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// The x values of the latency spectrum: 1/(1−p).
fn spectrum_x(percentile: f64) -> f64 {
    1.0 / (1.0 - percentile / 100.0)
}

/// A spectrum's (percentile, ms) pairs as chart points on the spectrum's x axis.
fn spectrum_points(s: &[(f64, f64)]) -> Vec<(f64, Option<f64>)> {
    s.iter()
        .map(|(p, ms)| (spectrum_x(*p), Some(*ms)))
        .collect()
}

/// The axes of a chart of spectra: the spectrum x axis up to the deepest percentile any of
/// `deepest` reaches, and a log y axis over the values of all of `spectra`.
fn spectrum_axes<'a>(
    deepest: impl Iterator<Item = &'a [(f64, f64)]>,
    spectra: impl Iterator<Item = &'a [(f64, f64)]>,
) -> (Axis, Axis) {
    let x_max = deepest
        .filter_map(|s| s.last().map(|(p, _)| spectrum_x(*p)))
        .fold(100.0, f64::max);
    let (lo, hi) = spectra
        .flat_map(|s| s.iter().map(|(_, ms)| *ms))
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    (spectrum_axis(x_max), Axis::log(lo, hi))
}

/// The latency spectrum's x axis: percentiles on the log scale of 1/(1−p), from p50 to the
/// decade that holds `x_max` (at least p99).
fn spectrum_axis(x_max: f64) -> Axis {
    let decades = (x_max.log10() - 1e-9).ceil().max(2.0) as i32;
    let ticks = [
        "50%",
        "90%",
        "99%",
        "99.9%",
        "99.99%",
        "99.999%",
        "99.9999%",
        "99.99999%",
    ]
    .iter()
    .enumerate()
    .map(|(i, label)| Tick {
        value: if i == 0 { 2.0 } else { 10f64.powi(i as i32) },
        label: label.to_string(),
    })
    .take(decades as usize + 1)
    .collect();
    Axis {
        lo: 2.0,
        hi: 10f64.powi(decades),
        log: true,
        ticks,
        title: Some("percentile (log scale of 1/(1−p))".into()),
    }
}

impl Charts {
    /// Colours go to environments in the order they first appear in the report.
    pub fn new(report: &Report) -> Charts {
        let mut envs: Vec<String> = Vec::new();
        let names = report
            .groups
            .iter()
            .flat_map(|g| g.envs.iter().map(|e| &e.env))
            .chain(report.capacity.iter().map(|c| &c.env))
            .chain(report.probes.iter().map(|p| &p.env));
        for env in names {
            if !envs.contains(env) {
                envs.push(env.clone());
            }
        }
        Charts { envs, next_id: 0 }
    }

    pub fn env_colour(&self, env: &str) -> &'static str {
        let i = self.envs.iter().position(|e| e == env).unwrap_or(0);
        ENV_COLOURS[i % ENV_COLOURS.len()]
    }

    pub fn envs(&self) -> &[String] {
        &self.envs
    }

    fn id(&mut self) -> usize {
        self.next_id += 1;
        self.next_id
    }

    /// Throughput of every run of the scenario over its own time axis.
    pub fn throughput_over_time(&mut self, g: &ScenarioGroup) -> Option<String> {
        let runs: Vec<&RunTimeline> = g.runs.iter().filter(|r| !r.intervals.is_empty()).collect();
        if runs.is_empty() {
            return None;
        }
        let end = runs
            .iter()
            .filter_map(|r| r.intervals.last().map(|i| r.offset_s + i.end_s))
            .fold(0.0, f64::max);
        let max = runs
            .iter()
            .flat_map(|r| r.intervals.iter().filter(|i| !i.drain).map(|i| i.ops_per_s))
            .fold(0.0, f64::max);
        let mut legend = Vec::new();
        let mut lines = Vec::new();
        for (i, r) in runs.iter().enumerate() {
            let nth = runs[..i].iter().filter(|o| o.env == r.env).count();
            let colour = self.env_colour(&r.env);
            let stroke = match nth % 3 {
                0 => Stroke::solid(colour),
                1 => Stroke::dashed(colour),
                _ => Stroke::dotted(colour),
            };
            let label = format!("{} · {}", r.env, file_name(&r.path));
            legend.push(LegendItem::line(label.clone(), &stroke));
            let points = r
                .intervals
                .iter()
                // The drain's few operations over a fraction of a second are no throughput.
                .filter(|iv| !iv.drain)
                .map(|iv| (r.offset_s + iv.start_s, Some(iv.ops_per_s)))
                .collect::<Vec<_>>();
            lines.push((label, points, stroke));
        }
        let mut chart = Chart::new(
            self.id(),
            "throughput-over-time",
            "Throughput over time, every run (ops/s per interval)",
            WIDE,
            Axis::linear(0.0, end, 10).titled(TIME_AXIS_TITLE),
            Axis::zero_to(max * 1.05, 6),
            legend,
        );
        for (label, points, stroke) in &lines {
            chart.line(label, points, stroke);
        }
        Some(chart.render())
    }

    /// The latency spectra of runs of one workload overlaid, whatever their load: one colour
    /// per run, its response time solid and its service time dashed, from each run's own
    /// histograms.
    pub fn latency_spectra(&mut self, workload: &str, runs: &[&RunRow]) -> Option<String> {
        let runs: Vec<&&RunRow> = runs
            .iter()
            .filter(|r| !r.response_spectrum.is_empty())
            .collect();
        if runs.is_empty() {
            return None;
        }
        let (x, y) = spectrum_axes(
            runs.iter().map(|r| r.response_spectrum.as_slice()),
            runs.iter().flat_map(|r| {
                [
                    r.response_spectrum.as_slice(),
                    r.service_spectrum.as_slice(),
                ]
            }),
        );
        let solid = |r: &RunRow| Stroke {
            width: 2.2,
            ..Stroke::solid(run_colour(r.index))
        };
        let mut legend: Vec<LegendItem> = runs
            .iter()
            .map(|r| {
                LegendItem::line(
                    format!(
                        "#{} {} · {} {} · {}",
                        r.index,
                        r.env,
                        r.load.mode(),
                        r.load.target(),
                        r.name()
                    ),
                    &solid(r),
                )
            })
            .collect();
        legend.push(LegendItem::line(
            "dashed: service time",
            &Stroke::dashed(GREY),
        ));
        let mut chart = Chart::new(
            self.id(),
            "latency-spectra",
            &format!(
                "Latency spectra of the {workload} runs: response time (solid) and service time (dashed), ms by percentile"
            ),
            WIDE,
            x,
            y,
            legend,
        );
        for r in &runs {
            let label = format!("#{}", r.index);
            chart.line(
                &format!("{label} service"),
                &spectrum_points(&r.service_spectrum),
                &Stroke::dashed(run_colour(r.index)),
            );
            chart.line(
                &format!("{label} response"),
                &spectrum_points(&r.response_spectrum),
                &solid(r),
            );
        }
        Some(chart.render())
    }

    /// Response time against percentile per environment, both on log scales, from the merged
    /// histograms.
    pub fn latency_spectrum(&mut self, g: &ScenarioGroup) -> Option<String> {
        let envs: Vec<_> = g.envs.iter().filter(|e| !e.spectrum.is_empty()).collect();
        if envs.is_empty() {
            return None;
        }
        let spectra = || envs.iter().map(|e| e.spectrum.as_slice());
        let (x, y) = spectrum_axes(spectra(), spectra());
        let legend = envs
            .iter()
            .map(|e| {
                LegendItem::line(
                    format!(
                        "{} ({} run{}, {} ops)",
                        e.env,
                        e.runs(),
                        if e.runs() == 1 { "" } else { "s" },
                        crate::format::cell(Some(e.response.count as f64), 0)
                    ),
                    &Stroke {
                        width: 2.2,
                        ..Stroke::solid(self.env_colour(&e.env))
                    },
                )
            })
            .collect();
        let mut chart = Chart::new(
            self.id(),
            "latency-spectrum",
            "Latency spectrum: response time (ms, log scale) by percentile, merged histograms",
            WIDE,
            x,
            y,
            legend,
        );
        for e in &envs {
            let points = spectrum_points(&e.spectrum);
            let stroke = Stroke {
                width: 2.2,
                ..Stroke::solid(self.env_colour(&e.env))
            };
            chart.line(&e.env, &points, &stroke);
            // The table's percentiles, as dots.
            let r = &e.response;
            for (label, p, ms) in [
                ("p50", 50.0, r.p50_ms),
                ("p90", 90.0, r.p90_ms),
                ("p99", 99.0, r.p99_ms),
                ("p99.9", 99.9, r.p999_ms),
                ("p99.99", 99.99, r.p9999_ms),
            ] {
                if spectrum_x(p) <= r.count as f64 {
                    let tip = format!("{} {label}: {} ms", e.env, crate::format::cell(Some(ms), 2));
                    chart.dot(spectrum_x(p), ms, &stroke.colour, &tip);
                }
            }
        }
        Some(chart.render())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Input;
    use crate::result::fixture::{RunShape, capacity, run};

    fn report(inputs: Vec<Input>) -> Report {
        Report::build(&inputs).unwrap()
    }

    #[test]
    fn environments_keep_their_colour_everywhere() {
        let r = report(vec![
            Input::Run {
                path: "a.json".into(),
                result: run("k8s", &RunShape::default()),
            },
            Input::Run {
                path: "b.json".into(),
                result: run("ec2", &RunShape::default()),
            },
            Input::Capacity {
                path: "c.json".into(),
                result: capacity("ec2", &[1_000.0, 2_000.0], 2),
            },
        ]);
        let mut charts = Charts::new(&r);
        let ec2 = charts.env_colour("ec2");
        assert_ne!(ec2, charts.env_colour("k8s"));
        let spectrum = charts.latency_spectrum(&r.groups[0]).unwrap();
        assert!(spectrum.contains(ec2));
        let rate = charts.capacity_rate(&r.capacity[0]).unwrap();
        assert!(rate.contains(ec2) && rate.contains("failed") && rate.contains("highest passing"));
        let latency = charts.capacity_latency(&r.capacity[0]).unwrap();
        assert!(latency.contains("limit p99 ≤ 20 ms"));
    }

    #[test]
    fn the_spectrum_axis_is_labelled_in_percentiles() {
        let r = report(vec![Input::Run {
            path: "a.json".into(),
            result: run("ec2", &RunShape::default()),
        }]);
        let svg = Charts::new(&r).latency_spectrum(&r.groups[0]).unwrap();
        for label in ["50%", "90%", "99%", "99.9%", "99.99%"] {
            assert!(svg.contains(&format!(">{label}<")), "{label}");
        }
    }
}
