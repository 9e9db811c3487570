//! The report's charts, from the model: per scenario, throughput over time of every run and
//! the latency spectrum of every environment; per run, client, server and host series stacked
//! on the run's time axis; per capacity search, its steps. Each environment keeps one colour
//! in every chart. A chart whose data is absent is left out (`None`, or not in the list).

use super::capacity::{CapacitySearch, Role};
use super::model::{Report, RunTimeline, ScenarioGroup, format_value};
use super::svg::{Axis, Chart, Fill, LegendItem, Size, Stroke, Tick};
use crate::metrics::series::{MetricSeries, Sample};
use crate::spec::OpKind;

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

/// (x, y) points of a line; `None` leaves a gap.
type Points = Vec<(f64, Option<f64>)>;

/// One chart of a run's stack, before it is drawn on the shared time axis.
struct Panel {
    name: &'static str,
    title: String,
    lines: Vec<(String, Points, Stroke)>,
}

impl Panel {
    fn new(name: &'static str, title: &str) -> Panel {
        Panel {
            name,
            title: title.into(),
            lines: Vec::new(),
        }
    }

    fn line(&mut self, label: String, points: Points, stroke: Stroke) {
        if points.iter().any(|(_, y)| y.is_some_and(f64::is_finite)) {
            self.lines.push((label, points, stroke));
        }
    }

    fn max(&self) -> f64 {
        self.lines
            .iter()
            .flat_map(|(_, p, _)| p.iter().filter_map(|(_, y)| *y))
            .filter(|y| y.is_finite())
            .fold(0.0, f64::max)
    }
}

fn series_colour(i: usize) -> &'static str {
    SERIES_COLOURS[i % SERIES_COLOURS.len()]
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

/// Per sample, `get` of it (a gap where `None`).
fn over_samples(m: &MetricSeries, get: impl Fn(&Sample) -> Option<f64>) -> Vec<(f64, Option<f64>)> {
    m.samples.iter().map(|s| (s.t_s, get(s))).collect()
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
            .flat_map(|r| r.intervals.iter().map(|i| i.ops_per_s))
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

    /// Response time against percentile per environment, both on log scales, from the merged
    /// histograms.
    pub fn latency_spectrum(&mut self, g: &ScenarioGroup) -> Option<String> {
        let envs: Vec<_> = g.envs.iter().filter(|e| !e.spectrum.is_empty()).collect();
        if envs.is_empty() {
            return None;
        }
        let x_max = envs
            .iter()
            .filter_map(|e| e.spectrum.last().map(|(p, _)| spectrum_x(*p)))
            .fold(100.0, f64::max);
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
        let x = Axis {
            lo: 2.0,
            hi: 10f64.powi(decades),
            log: true,
            ticks,
            title: Some("percentile (log scale of 1/(1−p))".into()),
        };
        let values = envs
            .iter()
            .flat_map(|e| e.spectrum.iter().map(|(_, ms)| *ms));
        let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        let legend = envs
            .iter()
            .map(|e| {
                LegendItem::line(
                    format!(
                        "{} ({} run{}, {} ops)",
                        e.env,
                        e.runs(),
                        if e.runs() == 1 { "" } else { "s" },
                        format_value(Some(e.response.count as f64), 0)
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
            Axis::log(lo, hi),
            legend,
        );
        for e in &envs {
            let points: Vec<(f64, Option<f64>)> = e
                .spectrum
                .iter()
                .map(|(p, ms)| (spectrum_x(*p), Some(*ms)))
                .collect();
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
                    let tip = format!("{} {label}: {} ms", e.env, format_value(Some(ms), 2));
                    chart.dot(spectrum_x(p), ms, &stroke.colour, &tip);
                }
            }
        }
        Some(chart.render())
    }

    /// The run's client series (response time, throughput) and, when it sampled them, server
    /// and host series, as small charts sharing the run's time axis.
    pub fn run_stack(&mut self, run: &RunTimeline) -> Vec<String> {
        let at = |start_s: f64| run.offset_s + start_s;
        let metrics = run.metrics.as_ref();
        let end = run
            .intervals
            .last()
            .map(|i| at(i.end_s))
            .into_iter()
            .chain(metrics.and_then(|m| m.samples.last().map(|s| s.t_s)))
            .fold(0.0, f64::max);
        if end <= 0.0 {
            return Vec::new();
        }
        let mut panels = Vec::new();

        let mut response = Panel::new(
            "response-time",
            "Response time (ms): p99 solid, p50 dashed, per operation",
        );
        for (k, kind) in OpKind::ALL.iter().enumerate() {
            let colour = series_colour(k);
            for (name, get, stroke) in [
                (
                    "p99",
                    (|o: &crate::result::IntervalOp| o.response_p99_ms) as fn(&_) -> f64,
                    Stroke::solid(colour),
                ),
                ("p50", |o| o.response_p50_ms, Stroke::dashed(colour)),
            ] {
                let points = run
                    .intervals
                    .iter()
                    .map(|iv| {
                        let v = iv.by_op.get(kind).filter(|o| o.ok > 0).map(get);
                        (at(iv.start_s), v)
                    })
                    .collect();
                response.line(format!("{kind} {name}"), points, stroke);
            }
        }
        panels.push(response);

        let mut throughput = Panel::new("throughput", "Throughput (ops/s)");
        throughput.line(
            "ops/s".into(),
            run.intervals
                .iter()
                .map(|iv| (at(iv.start_s), Some(iv.ops_per_s)))
                .collect(),
            Stroke::solid(self.env_colour(&run.env)),
        );
        panels.push(throughput);

        if let Some(m) = metrics {
            panels.extend(server_panels(m));
            panels.extend(host_panels(m));
        }

        // The warmup, and the time before the main phase, shaded on every chart.
        let main_start = run.intervals.first().map(|i| at(i.start_s));
        let measured_start = run
            .intervals
            .iter()
            .find(|i| !i.warmup)
            .map(|i| at(i.start_s))
            .or(run.intervals.last().map(|i| at(i.end_s)));
        let before = Fill::light(GREY, 0.16);
        let warmup = Fill::light(GREY, 0.07);
        let x = Axis::linear(0.0, end, 12);
        let n = panels.iter().filter(|p| !p.lines.is_empty()).count();
        let mut out = Vec::new();
        for (i, p) in panels
            .into_iter()
            .filter(|p| !p.lines.is_empty())
            .enumerate()
        {
            let first = i == 0;
            let mut legend: Vec<LegendItem> = p
                .lines
                .iter()
                .filter(|_| p.lines.len() > 1)
                .map(|(label, _, stroke)| LegendItem::line(label.clone(), stroke))
                .collect();
            if first && main_start.is_some_and(|s| s > 0.0) {
                legend.push(LegendItem::area("before the main phase", &before));
            }
            if first && main_start.is_some() {
                legend.push(LegendItem::area("warmup", &warmup));
            }
            let x = if i + 1 == n {
                x.clone().titled(TIME_AXIS_TITLE)
            } else {
                x.clone()
            };
            let mut chart = Chart::new(
                self.id(),
                p.name,
                &p.title,
                SMALL,
                x,
                Axis::zero_to(p.max() * 1.08, 3),
                legend,
            );
            if let Some(start) = main_start.filter(|s| *s > 0.0) {
                chart.band(0.0, start, &before);
            }
            if let (Some(a), Some(b)) = (main_start, measured_start) {
                chart.band(a, b, &warmup);
            }
            for (label, points, stroke) in &p.lines {
                chart.line(label, points, stroke);
            }
            out.push(chart.render());
        }
        out
    }

    /// Target and achieved rate per step of a capacity search.
    pub fn capacity_rate(&mut self, c: &CapacitySearch) -> Option<String> {
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
            chart.bar(
                x - 0.34,
                x - 0.02,
                s.target_rate_per_s,
                &target,
                &format!(
                    "step {}: target {} ops/s",
                    s.index,
                    format_value(Some(s.target_rate_per_s), 0)
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
                    format_value(Some(s.ops_per_s), 0)
                ),
            );
        }
        Some(chart.render())
    }

    /// Response time p50 and p99 per step, with the search's latency bounds.
    pub fn capacity_latency(&mut self, c: &CapacitySearch) -> Option<String> {
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
                let tip = format!("step {}: {name} {} ms", s.index, format_value(Some(v), 2));
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
        c: &CapacitySearch,
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
                        format_value(Some(s.target_rate_per_s), 0)
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

/// Pending compactions and node CPU.
fn server_panels(m: &MetricSeries) -> Vec<Panel> {
    let mut pending = Panel::new(
        "pending-compactions",
        "Pending compactions (highest of any node)",
    );
    pending.line(
        "pending compactions".into(),
        m.node_max(|n| n.pending_compactions),
        Stroke::solid(series_colour(0)),
    );
    let mut cpu = Panel::new("node-cpu", "Node CPU (cores, per node)");
    for (i, node) in m.nodes.iter().enumerate() {
        // The node's own figure, else the host's view of its process.
        let points = over_samples(m, |s| {
            s.nodes.get(i).and_then(|n| n.cpu_cores).or_else(|| {
                s.host
                    .as_ref()
                    .and_then(|h| h.node_cpu_cores.get(i).copied().flatten())
            })
        });
        cpu.line(node.clone(), points, Stroke::solid(series_colour(i)));
    }
    vec![pending, cpu]
}

/// Host CPU, disk throughput and disk latency.
fn host_panels(m: &MetricSeries) -> Vec<Panel> {
    let mut cpu = Panel::new("host-cpu", "Host CPU (% of all CPUs)");
    type Get = fn(&crate::metrics::series::HostSample) -> f64;
    for (i, (name, get)) in [
        ("user", (|h| h.cpu_user) as Get),
        ("system", |h| h.cpu_system),
        ("iowait", |h| h.cpu_iowait),
    ]
    .into_iter()
    .enumerate()
    {
        let points = over_samples(m, |s| s.host.as_ref().map(|h| 100.0 * get(h)));
        cpu.line(name.into(), points, Stroke::solid(series_colour(i)));
    }
    let mut mb = Panel::new(
        "disk-throughput",
        "Disk throughput (MB/s per device): write solid, read dashed",
    );
    let mut latency = Panel::new(
        "disk-latency",
        "Disk latency (ms per request, per device): write solid, read dashed",
    );
    type DevGet = fn(&crate::metrics::series::DeviceSample) -> f64;
    for (d, device) in m.devices.iter().enumerate() {
        let colour = series_colour(d);
        let dev = |get: DevGet| {
            over_samples(m, move |s| {
                s.host.as_ref().and_then(|h| h.devices.get(d)).map(get)
            })
        };
        mb.line(
            format!("{device} write"),
            dev(|x| x.write_mb_s),
            Stroke::solid(colour),
        );
        mb.line(
            format!("{device} read"),
            dev(|x| x.read_mb_s),
            Stroke::dashed(colour),
        );
        latency.line(
            format!("{device} write"),
            dev(|x| x.write_latency_ms),
            Stroke::solid(colour),
        );
        latency.line(
            format!("{device} read"),
            dev(|x| x.read_latency_ms),
            Stroke::dashed(colour),
        );
    }
    vec![cpu, mb, latency]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Input;
    use crate::report::fixture::{RunShape, capacity, run, run_with_metrics};

    fn report(inputs: Vec<Input>) -> Report {
        Report::build(&inputs).unwrap()
    }

    fn names(svgs: &[String]) -> Vec<&str> {
        svgs.iter()
            .map(|s| {
                let rest = &s[s.find("data-chart=\"").unwrap() + 12..];
                &rest[..rest.find('"').unwrap()]
            })
            .collect()
    }

    #[test]
    fn a_run_with_metrics_stacks_server_and_host_charts_on_its_time_axis() {
        let r = report(vec![Input::Run {
            path: "m.json".into(),
            result: run_with_metrics("ec2", &RunShape::default(), 3, &["sda", "sdb"]),
        }]);
        let mut charts = Charts::new(&r);
        let stack = charts.run_stack(&r.groups[0].runs[0]);
        assert_eq!(
            names(&stack),
            [
                "response-time",
                "throughput",
                "pending-compactions",
                "node-cpu",
                "host-cpu",
                "disk-throughput",
                "disk-latency"
            ]
        );
        // One time axis: the run lasts 4 s before the main phase + 12 s + 2 s after.
        let ticks = |svg: &str| -> Vec<String> {
            svg.split("<tspan")
                .skip(1)
                .map(|t| t[t.find('>').unwrap() + 1..t.find('<').unwrap()].to_string())
                .collect()
        };
        for svg in &stack {
            assert_eq!(ticks(svg), ticks(&stack[0]));
        }
        assert_eq!(ticks(&stack[0]).last().unwrap(), "18");
        assert!(stack[0].contains("before the main phase") && stack[0].contains("warmup"));
        assert!(stack[3].contains("node3") && stack[6].contains("sdb read"));
        // The x title only under the last chart.
        assert_eq!(
            stack.iter().filter(|s| s.contains(TIME_AXIS_TITLE)).count(),
            1
        );
    }

    #[test]
    fn charts_without_data_are_left_out() {
        let r = report(vec![Input::Run {
            path: "old.json".into(),
            result: run("ec2", &RunShape::default()),
        }]);
        let mut charts = Charts::new(&r);
        assert_eq!(
            names(&charts.run_stack(&r.groups[0].runs[0])),
            ["response-time", "throughput"]
        );
        let mut empty = capacity("ec2", &[1_000.0], 0);
        empty.steps.clear();
        let r = report(vec![Input::Capacity {
            path: "c.json".into(),
            result: empty,
        }]);
        assert!(Charts::new(&r).capacity_rate(&r.capacity[0]).is_none());
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
