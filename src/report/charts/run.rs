//! A run's charts: client, server and host series stacked on the run's time axis.

use super::{Charts, FAIL_COLOUR, GREY, SMALL, TIME_AXIS_TITLE, series_colour};
use crate::report::model::RunTimeline;
use crate::report::svg::{Axis, Chart, Fill, LegendItem, Stroke};
use crate::result::series::{MetricSeries, NodeHost, Sample};
use crate::spec::OpKind;

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

/// Per sample, `get` of it (a gap where `None`).
fn over_samples(m: &MetricSeries, get: impl Fn(&Sample) -> Option<f64>) -> Vec<(f64, Option<f64>)> {
    m.samples.iter().map(|s| (s.t_s, get(s))).collect()
}

impl Charts {
    /// The run's client series (response time, throughput) and, when it sampled them, server
    /// and host series, as small charts sharing the run's time axis.
    pub fn run_stack(&mut self, run: &RunTimeline) -> Vec<String> {
        let metrics = run.metrics.as_ref();
        let end = run
            .intervals
            .last()
            .map(|i| run.offset_s + i.end_s)
            .into_iter()
            .chain(metrics.and_then(|m| m.samples.last().map(|s| s.t_s)))
            .fold(0.0, f64::max);
        if end <= 0.0 {
            return Vec::new();
        }
        let mut panels = vec![response_panel(run), self.throughput_panel(run)];
        // Availability, when anything failed or a fault was applied.
        if !run.events.is_empty() || run.intervals.iter().any(|iv| iv.errors > 0) {
            panels.push(self.availability_panel(run));
        }
        if let Some(m) = metrics {
            panels.extend(server_panels(
                ("pending-compactions", "node-cpu"),
                None,
                &m.nodes,
                &m.samples,
            ));
            panels.extend(host_panels(m));
            panels.extend(node_host_panels(
                ("node-host-cpu", "node-host-disk"),
                "node exporters",
                &m.node_hosts,
                &m.samples,
            ));
            if let Some(f) = &m.fetched {
                let source = format!("fetched from Prometheus {}", f.server);
                let nodes: Vec<String> = f.nodes.iter().map(|n| n.node.clone()).collect();
                panels.extend(server_panels(
                    ("prometheus-pending-compactions", "prometheus-node-cpu"),
                    Some(&source),
                    &nodes,
                    &f.samples,
                ));
                panels.extend(node_host_panels(
                    ("prometheus-host-cpu", "prometheus-host-disk"),
                    &source,
                    &f.hosts,
                    &f.samples,
                ));
            }
        }
        let panels: Vec<Panel> = panels.into_iter().filter(|p| !p.lines.is_empty()).collect();
        self.stack(run, &panels, end)
    }

    fn throughput_panel(&self, run: &RunTimeline) -> Panel {
        let mut throughput = Panel::new("throughput", "Throughput (ops/s)");
        throughput.line(
            "ops/s".into(),
            run.intervals
                .iter()
                .map(|iv| (run.offset_s + iv.start_s, Some(iv.ops_per_s)))
                .collect(),
            Stroke::solid(self.env_colour(&run.env)),
        );
        throughput
    }

    fn availability_panel(&self, run: &RunTimeline) -> Panel {
        let mut availability = Panel::new(
            "availability",
            "Availability (% of attempted operations that succeeded)",
        );
        availability.line(
            "availability %".into(),
            run.intervals
                .iter()
                .map(|iv| {
                    (
                        run.offset_s + iv.start_s,
                        iv.availability().map(|a| a * 100.0),
                    )
                })
                .collect(),
            Stroke::solid(self.env_colour(&run.env)),
        );
        availability
    }

    /// The panels drawn one under the other on one time axis up to `end` (titled under the
    /// last), the time before the main phase and the warmup shaded and the faults marked on
    /// each; the first carries the legend of the shading and the faults' labels.
    fn stack(&mut self, run: &RunTimeline, panels: &[Panel], end: f64) -> Vec<String> {
        let at = |start_s: f64| run.offset_s + start_s;
        let main_start = run.intervals.first().map(|i| at(i.start_s));
        let measured_start = run
            .intervals
            .iter()
            .find(|i| i.after_warmup())
            .map(|i| at(i.start_s))
            .or(run.intervals.last().map(|i| at(i.end_s)));
        let before = Fill::light(GREY, 0.16);
        let warmup = Fill::light(GREY, 0.07);
        let x = Axis::linear(0.0, end, 12);
        let n = panels.len();
        let mut out = Vec::new();
        for (i, p) in panels.iter().enumerate() {
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
            mark_faults(&mut chart, run, first);
            for (label, points, stroke) in &p.lines {
                chart.line(label, points, stroke);
            }
            out.push(chart.render());
        }
        out
    }
}

/// Response time per operation kind: p99 solid, p50 dashed.
fn response_panel(run: &RunTimeline) -> Panel {
    let mut response = Panel::new(
        "response-time",
        "Response time (ms): p99 solid, p50 dashed, per operation",
    );
    let kinds = crate::result::kinds_in(&run.intervals);
    for kind in &kinds {
        // A built-in kind keeps its colour whatever else ran; profile operations follow.
        let k = OpKind::ALL
            .iter()
            .position(|b| b == kind)
            .unwrap_or_else(|| {
                OpKind::ALL.len() + kinds.iter().position(|x| x == kind).unwrap_or(0)
            });
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
                    (run.offset_s + iv.start_s, v)
                })
                .collect();
            response.line(format!("{kind} {name}"), points, stroke);
        }
    }
    response
}

/// Faults: a band while the action ran (a restart until the node was up), a line where it
/// began, labelled on the first chart.
fn mark_faults(chart: &mut Chart, run: &RunTimeline, first: bool) {
    let fault = Stroke::dashed(FAIL_COLOUR);
    for e in run.events.iter().filter(|e| e.applied()) {
        if let Some(f) = e.finished_s.filter(|f| *f - e.started_s >= 0.5) {
            chart.band(e.started_s, f, &Fill::light(FAIL_COLOUR, 0.08));
        }
        let tip = match &e.error {
            Some(err) => format!("{} at {:.1} s: {err}", e.fault.label(), e.started_s),
            None => format!("{} at {:.1} s", e.fault.label(), e.started_s),
        };
        let label = e.fault.label();
        chart.vline(e.started_s, &fault, &tip, first.then_some(label.as_str()));
    }
}

/// Pending compactions and node CPU.
/// The nodes' server figures of one source (`(ids, source)`: the nodes' endpoints scraped
/// during the run, or a Prometheus server's series fetched after it): the highest pending
/// compactions, and each node's CPU.
fn server_panels(
    (pending_id, cpu_id): (&'static str, &'static str),
    source: Option<&str>,
    nodes: &[String],
    samples: &[Sample],
) -> Vec<Panel> {
    let of = |title: &str| match source {
        Some(s) => format!("{title}, {s})"),
        None => format!("{title})"),
    };
    let over_samples = |get: &dyn Fn(&Sample) -> Option<f64>| -> Vec<(f64, Option<f64>)> {
        samples.iter().map(|s| (s.t_s, get(s))).collect()
    };
    let mut pending = Panel::new(pending_id, &of("Pending compactions (highest of any node"));
    pending.line(
        "pending compactions".into(),
        crate::result::series::node_max(samples, |n| n.pending_compactions),
        Stroke::solid(series_colour(0)),
    );
    let mut cpu = Panel::new(cpu_id, &of("Node CPU (cores, per node"));
    for (i, node) in nodes.iter().enumerate() {
        // The node's own figure, else the host's view of its process.
        let points = over_samples(&|s| {
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

/// The nodes' hosts of one source (`(id, name)`: the node exporters sampled during the run,
/// or a Prometheus server's series fetched after it), one line per node: CPU, and disk
/// throughput per device.
fn node_host_panels(
    (cpu_id, disk_id): (&'static str, &'static str),
    source: &str,
    hosts: &[NodeHost],
    samples: &[Sample],
) -> Vec<Panel> {
    let mut cpu = Panel::new(
        cpu_id,
        &format!("Nodes' hosts' CPU (% of all CPUs, {source}): busy solid, iowait dashed"),
    );
    let mut mb = Panel::new(
        disk_id,
        &format!(
            "Nodes' hosts' disk throughput (MB/s per device, {source}): write solid, read dashed"
        ),
    );
    let over_samples = |get: &dyn Fn(&Sample) -> Option<f64>| -> Vec<(f64, Option<f64>)> {
        samples.iter().map(|s| (s.t_s, get(s))).collect()
    };
    let mut colour = 0;
    for (j, host) in hosts.iter().enumerate() {
        let at = |s: &Sample| s.node_hosts.get(j).cloned().flatten();
        cpu.line(
            format!("{} busy", host.node),
            over_samples(&|s| at(s).map(|h| 100.0 * h.cpu_busy())),
            Stroke::solid(series_colour(j)),
        );
        cpu.line(
            format!("{} iowait", host.node),
            over_samples(&|s| at(s).map(|h| 100.0 * h.cpu_iowait)),
            Stroke::dashed(series_colour(j)),
        );
        for (d, device) in host.devices.iter().enumerate() {
            let dev = |get: fn(&crate::result::series::DeviceSample) -> f64| {
                over_samples(&|s| at(s).and_then(|h| h.devices.get(d).map(get)))
            };
            mb.line(
                format!("{} {device} write", host.node),
                dev(|x| x.write_mb_s),
                Stroke::solid(series_colour(colour)),
            );
            mb.line(
                format!("{} {device} read", host.node),
                dev(|x| x.read_mb_s),
                Stroke::dashed(series_colour(colour)),
            );
            colour += 1;
        }
    }
    vec![cpu, mb]
}

/// Host CPU, disk throughput and disk latency.
fn host_panels(m: &MetricSeries) -> Vec<Panel> {
    let mut cpu = Panel::new("host-cpu", "Host CPU (% of all CPUs)");
    type Get = fn(&crate::result::series::HostSample) -> f64;
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
    type DevGet = fn(&crate::result::series::DeviceSample) -> f64;
    for (d, device) in m.devices.iter().enumerate() {
        let colour = series_colour(d);
        // A node's own disk is named by its node.
        let device = match m.node_devices.iter().find(|n| &n.device == device) {
            Some(n) => format!("{} {} ({device})", n.node, n.dc),
            None => device.clone(),
        };
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
    use crate::report::{Input, Report};
    use crate::result::fixture::{RunShape, capacity, run, run_with_metrics};

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
    fn node_exporter_hosts_get_charts_of_their_own_one_line_per_node() {
        use crate::result::series::{DeviceSample, HostSample, NodeHost};
        let mut result = run_with_metrics("remote", &RunShape::default(), 2, &[]);
        let m = result.metrics.as_mut().unwrap();
        m.node_hosts = ["node1", "node2"]
            .iter()
            .map(|n| NodeHost {
                node: n.to_string(),
                exporter: "10.0.0.1:9100".into(),
                devices: vec!["nvme0n1".into()],
                job: None,
            })
            .collect();
        for s in &mut m.samples {
            s.host = None;
            let h = HostSample {
                cpu_user: 0.4,
                cpu_system: 0.1,
                devices: vec![DeviceSample {
                    write_mb_s: 30.0,
                    ..DeviceSample::default()
                }],
                ..HostSample::default()
            };
            s.node_hosts = vec![Some(h.clone()), Some(h)];
        }
        let r = report(vec![Input::Run {
            path: "remote.json".into(),
            result,
        }]);
        let mut charts = Charts::new(&r);
        let stack = charts.run_stack(&r.groups[0].runs[0]);
        let n = names(&stack);
        assert!(!n.contains(&"host-cpu"), "{n:?}");
        let cpu = n
            .iter()
            .position(|x| *x == "node-host-cpu")
            .expect("node host CPU");
        let disk = n
            .iter()
            .position(|x| *x == "node-host-disk")
            .expect("node host disk");
        assert!(stack[cpu].contains("node2 busy") && stack[cpu].contains("node1 iowait"));
        assert!(stack[disk].contains("node2 nvme0n1 write"));
    }

    #[test]
    fn hosts_fetched_from_prometheus_get_charts_beside_the_exporters() {
        use crate::result::series::{Fetched, FetchedNode, HostSample, NodeHost};
        let mut result = run_with_metrics("remote", &RunShape::default(), 2, &[]);
        let m = result.metrics.as_mut().unwrap();
        let host = |node: &str| NodeHost {
            node: node.into(),
            exporter: "10.0.0.1:9100".into(),
            devices: vec![],
            job: Some("node".into()),
        };
        m.node_hosts = vec![host("node1")];
        for s in &mut m.samples {
            s.node_hosts = vec![Some(HostSample {
                cpu_user: 0.4,
                ..HostSample::default()
            })];
        }
        // The server's copy of the same figures: the hosts' and the first node's.
        let mut samples = m.samples.clone();
        for s in &mut samples {
            s.nodes.truncate(1);
            s.host = None;
            s.t_s += 0.5;
        }
        m.fetched = Some(Box::new(Fetched {
            server: "http://10.0.0.9:9090".into(),
            step_s: 1.0,
            hosts: vec![host("node1")],
            nodes: vec![FetchedNode {
                node: "node1".into(),
                instance: "10.0.0.1:7070".into(),
                job: Some("cassandra".into()),
            }],
            samples,
            ..Fetched::default()
        }));
        let r = report(vec![Input::Run {
            path: "remote.json".into(),
            result,
        }]);
        let mut charts = Charts::new(&r);
        let stack = charts.run_stack(&r.groups[0].runs[0]);
        let n = names(&stack);
        let exporter = n
            .iter()
            .position(|x| *x == "node-host-cpu")
            .expect("exporter");
        let fetched = n
            .iter()
            .position(|x| *x == "prometheus-host-cpu")
            .expect("fetched");
        assert!(exporter < fetched, "{n:?}");
        assert!(
            stack[fetched].contains("fetched from Prometheus http://10.0.0.9:9090")
                && stack[fetched].contains("node1 busy"),
            "{}",
            stack[fetched]
        );
        // The nodes' own figures fetched: after those scraped during the run.
        let scraped = n.iter().position(|x| *x == "node-cpu").expect("node CPU");
        let cpu = n
            .iter()
            .position(|x| *x == "prometheus-node-cpu")
            .expect("fetched node CPU");
        assert!(scraped < cpu, "{n:?}");
        assert!(
            stack[cpu].contains(
                "Node CPU (cores, per node, fetched from Prometheus http://10.0.0.9:9090)"
            ),
            "{}",
            stack[cpu]
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
}
