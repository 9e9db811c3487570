//! HTML exporter: one self-contained page (inline CSS, SVG charts, a tiny script; no external
//! resources) with the tables of the text report and the charts of [`super::charts`]. On load
//! the script checks that every `svg.chart` drew something and records the outcome on
//! `<body>` (`data-charts`, `data-charts-drawn`, `data-charts-empty`, `data-errors`), so a
//! headless browser can verify the page.

use std::fmt::Write;

use super::capacity::SearchReport;
use super::charts::{Charts, FAIL_COLOUR, PASS_COLOUR};
use super::model::{Report, RunTimeline, ScenarioGroup, summary};
use super::svg::escape;
use crate::format::Table;

const STYLE: &str = r#"
:root { --fg: #1d232b; --muted: #5b6573; --line: #dde2e8; --panel: #f5f7f9; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: #fff;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", "DejaVu Sans", sans-serif; }
main { max-width: 1140px; margin: 0 auto; padding: 20px 28px 48px; }
header { border-bottom: 2px solid var(--fg); padding-bottom: 10px; margin-bottom: 8px; }
h1 { font-size: 22px; margin: 0 0 2px; }
h2 { font-size: 18px; margin: 34px 0 10px; padding-bottom: 5px; border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 22px 0 4px; }
.sub, .meta { color: var(--muted); }
.meta { font-size: 12.5px; margin: 0 0 6px; }
.envs { margin-top: 6px; }
.envs span { margin-right: 18px; white-space: nowrap; }
.chip { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 6px; vertical-align: -1px; }
nav { font-size: 13px; margin: 8px 0 0; }
nav a { color: #2f5f9e; margin-right: 14px; text-decoration: none; }
.tables { display: flex; flex-wrap: wrap; gap: 4px 36px; align-items: flex-start; }
table { border-collapse: collapse; margin: 6px 0 14px; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; padding: 0 0 6px; }
th, td { padding: 3px 10px; border-bottom: 1px solid var(--line); white-space: nowrap; }
th { background: var(--panel); font-weight: 600; text-align: right; }
td { text-align: right; }
td.text, th.text, td:first-child, th:first-child { text-align: left; }
td.wrap { white-space: normal; min-width: 180px; max-width: 250px; }
th { white-space: normal; }
td.fail { color: #c62828; font-weight: 600; }
td.pass { color: #2e7d32; }
svg.chart { display: block; width: 100%; height: auto; margin: 10px 0 16px; }
svg.chart text { font-size: 11px; fill: #4a5462; }
svg.chart text.title { font-size: 13px; font-weight: 600; fill: var(--fg); }
svg.chart text.axis-title { fill: var(--muted); }
svg.chart .grid line { stroke: #e8ebef; }
svg.chart .grid line.v { stroke: #f1f3f5; }
svg.chart .axis line { stroke: #8a94a3; }
.stack { border-left: 3px solid var(--line); padding-left: 10px; margin: 6px 0 20px; }
.stack svg.chart { margin: 2px 0 4px; }
.notes li { margin: 3px 0; }
p.legend { margin: -8px 0 12px; }
.summary th, .summary td { padding: 3px 6px; font-size: 13px; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
"#;

/// Records errors and checks, on load, that every chart drew something inside its box.
const SCRIPT: &str = r#"
(function () {
  var errors = [];
  function record(message) {
    errors.push(String(message));
    if (document.body) document.body.setAttribute('data-errors', errors.join(' | '));
  }
  window.onerror = function (message, source, line) { record(message + ' (line ' + line + ')'); };
  window.addEventListener('unhandledrejection', function (e) { record('unhandled rejection: ' + e.reason); });
  window.addEventListener('load', function () {
    var charts = document.querySelectorAll('svg.chart');
    var drawn = 0, empty = [];
    for (var i = 0; i < charts.length; i++) {
      var svg = charts[i], ok = false;
      var view = svg.viewBox.baseVal;
      var marks = svg.querySelectorAll('.marks line, .marks path, .marks rect, .marks circle');
      for (var j = 0; j < marks.length && !ok; j++) {
        var b = marks[j].getBBox();
        ok = (b.width > 0 || b.height > 0) &&
          b.x < view.width && b.x + b.width > 0 && b.y < view.height && b.y + b.height > 0;
      }
      if (ok) drawn++; else empty.push(svg.getAttribute('data-chart'));
    }
    document.body.setAttribute('data-charts', String(charts.length));
    document.body.setAttribute('data-charts-drawn', String(drawn));
    if (empty.length) document.body.setAttribute('data-charts-empty', empty.join(' '));
    if (errors.length) document.body.setAttribute('data-errors', errors.join(' | '));
  });
})();
"#;

/// A table under `caption` (none: the section's heading says it); `env_colour` puts a colour chip next to environment names in the header and the
/// first column.
fn table(t: &Table, caption: Option<&str>, env_colour: &EnvColour) -> String {
    let chip = |s: &str| -> String {
        match env_colour(s) {
            Some(c) => format!(r#"<span class="chip" style="background:{c}"></span>"#),
            None => String::new(),
        }
    };
    let mut out = String::from("<table>");
    if let Some(c) = caption {
        let _ = write!(out, "<caption>{}</caption>", escape(c));
    }
    out.push_str("<thead><tr>");
    for (c, h) in t.header.iter().enumerate() {
        let class = if t.text_columns.contains(&c) {
            r#" class="text""#
        } else {
            ""
        };
        let _ = write!(out, "<th{class}>{}{}</th>", chip(h), escape(h));
    }
    out.push_str("</tr></thead><tbody>");
    for row in &t.rows {
        out.push_str("<tr>");
        for (c, v) in row.iter().enumerate() {
            let mut classes = Vec::new();
            if t.text_columns.contains(&c) {
                classes.push("text");
                if v.len() > 40 {
                    classes.push("wrap");
                }
            }
            match v.as_str() {
                "fail" | "failing" => classes.push("fail"),
                "pass" | "highest passing" => classes.push("pass"),
                _ => {}
            }
            let class = if classes.is_empty() {
                String::new()
            } else {
                format!(r#" class="{}""#, classes.join(" "))
            };
            let first = if c == 0 { chip(v) } else { String::new() };
            let _ = write!(out, "<td{class}>{first}{}</td>", escape(v));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    out
}

type EnvColour<'a> = dyn Fn(&str) -> Option<&'static str> + 'a;

/// A scenario's tables (environments side by side) and its overview charts.
fn scenario_section(
    anchor: &str,
    g: &ScenarioGroup,
    charts: &mut Charts,
    env_colour: &EnvColour,
) -> String {
    let mut out = format!(
        r#"<section id="{anchor}"><h2>{}</h2><div class="tables">"#,
        escape(&g.scenario)
    );
    // The section's heading names the scenario.
    let suffix = format!(" — {}", g.scenario);
    for t in g.tables() {
        let caption = t.title.strip_suffix(&suffix).unwrap_or(&t.title);
        out.push_str(&table(&t, Some(caption), env_colour));
    }
    out.push_str("</div>");
    out.extend(charts.throughput_over_time(g));
    out.extend(charts.latency_spectrum(g));
    out.push_str("</section>");
    out
}

/// The summary on top: every run's load, throughput, response and service time with the
/// legend, the runs' settings, and the latency spectra of the runs of each workload overlaid.
/// Each run's number carries its colour in the spectra.
fn summary_section(anchor: &str, report: &Report, charts: &mut Charts) -> String {
    let run_colour = |s: &str| -> Option<&'static str> {
        let i: usize = s.strip_prefix('#')?.parse().ok()?;
        Some(super::charts::run_colour(i))
    };
    let mut out = format!(r#"<section id="{anchor}"><h2>Runs</h2><div class="summary">"#);
    for t in summary::tables(&report.runs) {
        out.push_str(&table(&t, Some(&t.title), &run_colour));
        if let Some(legend) = summary::legend_of(&t) {
            let _ = write!(out, r#"<p class="meta legend">{}</p>"#, escape(legend));
        }
    }
    out.push_str("</div>");
    for (workload, runs) in summary::comparable(&report.runs) {
        out.extend(charts.latency_spectra(&workload, &runs));
    }
    out.push_str("</section>");
    out
}

/// A capacity search's steps and charts.
fn capacity_section(
    anchor: &str,
    c: &SearchReport,
    charts: &mut Charts,
    env_colour: &EnvColour,
) -> String {
    let mut out = format!(
        r#"<section id="{anchor}"><h2><span class="chip" style="background:{}"></span>Capacity search · {}</h2><p class="meta">{}</p>"#,
        charts.env_colour(&c.env),
        escape(&c.title()),
        escape(&c.path.display().to_string())
    );
    out.push_str(&table(&super::capacity::step_table(c), None, env_colour));
    out.extend(charts.capacity_rate(c));
    out.extend(charts.capacity_latency(c));
    out.push_str("</section>");
    out
}

/// `--history`: per environment and workload, the figure's chart over time and its table.
fn history_section(
    anchor: &str,
    h: &super::history::History,
    charts: &mut Charts,
    env_colour: &EnvColour,
) -> String {
    let mut out = format!(
        r#"<section id="{anchor}"><h2>History · {}</h2><p class="meta">Every run in the catalogue of the same environment and workload as this report's runs; the report's own runs are marked.</p>"#,
        escape(&h.figure.heading())
    );
    for (s, t) in h.series.iter().zip(h.tables()) {
        out.extend(charts.history(h, s));
        out.push_str(&table(&t, None, env_colour));
    }
    out.push_str("</section>");
    out
}

/// One run: what it holds, then its charts on one time axis.
fn run_stack(r: &RunTimeline, charts: &mut Charts) -> String {
    let mut out = format!(
        r#"<h3><span class="chip" style="background:{}"></span>{} · {}</h3>"#,
        charts.env_colour(&r.env),
        escape(&r.env),
        escape(&r.path.display().to_string())
    );
    let metrics = match &r.metrics {
        None => "no server or host series in this result".to_string(),
        Some(m) => {
            let mut s = format!(
                "server series of {}, host series of {}",
                plural(m.nodes.len(), "node", "nodes"),
                plural(m.devices.len(), "device", "devices")
            );
            let missing: Vec<String> = m
                .missing_by_node()
                .into_iter()
                .filter(|(_, n, _)| *n > 0)
                .map(|(node, n, of)| format!("{node} {n} of {of}"))
                .collect();
            if !missing.is_empty() {
                let _ = write!(
                    s,
                    "; samples without server metrics: {}",
                    missing.join(", ")
                );
            }
            if !m.errors.is_empty() {
                let _ = write!(s, "; sampling errors: {}", m.errors.join("; "));
            }
            s
        }
    };
    let _ = write!(
        out,
        r#"<p class="meta">main phase from {:.0} s · {}</p><div class="stack">"#,
        r.offset_s,
        escape(&metrics)
    );
    if let Some(m) = &r.metrics {
        out.push_str(&node_disks_table(m, r.offset_s));
    }
    for svg in charts.run_stack(r) {
        out.push_str(&svg);
    }
    out.push_str("</div>");
    out
}

/// Each node's own disk over the main phase (a local cluster's emulated disks): its class and
/// price, and what the device did. iowait is the host's (all CPUs), not the device's.
fn node_disks_table(m: &crate::result::series::MetricSeries, from_s: f64) -> String {
    if m.node_devices.is_empty() {
        return String::new();
    }
    let mut t = String::from(
        r#"<table class="disks"><thead><tr><th>node</th><th>DC</th><th>disk</th><th>$/month</th><th>read IOPS</th><th>write IOPS</th><th>read MB/s</th><th>write MB/s</th><th>read ms</th><th>write ms</th><th>queue</th><th>node local read ms</th></tr></thead><tbody>"#,
    );
    for d in &m.node_devices {
        let Some(x) = m.device_mean(&d.device, from_s) else {
            continue;
        };
        let _ = write!(
            t,
            "<tr><td>{}</td><td>{}</td><td>{} ({})</td><td>{}</td><td>{:.0}</td><td>{:.0}</td><td>{:.1}</td><td>{:.1}</td><td>{:.2}</td><td>{:.2}</td><td>{:.2}</td><td>{}</td></tr>",
            escape(&d.node),
            escape(&d.dc),
            escape(&d.class),
            escape(&d.device),
            d.monthly_usd.map_or("–".to_string(), |u| format!("{u:.2}")),
            x.read_iops,
            x.write_iops,
            x.read_mb_s,
            x.write_mb_s,
            x.read_latency_ms,
            x.write_latency_ms,
            x.avg_queue,
            m.local_read_ms(&d.node, from_s)
                .map_or("–".to_string(), |v| format!("{v:.2}"))
        );
    }
    let iowait: Vec<f64> = m
        .samples
        .iter()
        .filter(|s| s.t_s >= from_s)
        .filter_map(|s| s.host.as_ref().map(|h| h.cpu_iowait))
        .collect();
    let iowait = if iowait.is_empty() {
        "–".to_string()
    } else {
        format!(
            "{:.1} %",
            100.0 * iowait.iter().sum::<f64>() / iowait.len() as f64
        )
    };
    let _ = write!(
        t,
        "</tbody></table><p class=\"meta\">Disks by node over the main phase (means of the samples); host iowait {iowait} (all CPUs, not per device). The device's read and write ms are /proc's, taken once an I/O reaches the device: an emulated disk's throttle holds I/O back before that, so its wait shows in the node's local read latency (Cassandra's, all tables, weighted by reads), not there.</p>"
    );
    t
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The whole page.
pub fn render(report: &Report) -> String {
    let mut charts = Charts::new(report);
    let envs: Vec<(String, &'static str)> = charts
        .envs()
        .iter()
        .map(|e| (e.clone(), charts.env_colour(e)))
        .collect();
    let env_colour = |s: &str| envs.iter().find(|(e, _)| e == s).map(|(_, c)| *c);

    let mut body = Body::default();
    if !report.runs.is_empty() {
        let html = summary_section("summary", report, &mut charts);
        body.push("summary".into(), "runs".into(), &html);
    }
    for (gi, g) in report.groups.iter().enumerate() {
        let anchor = format!("scenario-{}", gi + 1);
        let html = scenario_section(&anchor, g, &mut charts, &env_colour);
        body.push(anchor, g.scenario.clone(), &html);
    }
    for (ci, c) in report.capacity.iter().enumerate() {
        let anchor = format!("capacity-{}", ci + 1);
        let html = capacity_section(&anchor, c, &mut charts, &env_colour);
        body.push(anchor, format!("capacity search: {}", c.title()), &html);
    }
    for (anchor, label, heading, t) in table_sections(report) {
        let html = format!(
            r#"<section id="{anchor}"><h2>{heading}</h2>{}</section>"#,
            table(&t, None, &env_colour)
        );
        body.push(anchor, label, &html);
    }
    if let Some(h) = &report.history {
        let html = history_section("history", h, &mut charts, &env_colour);
        body.push("history".into(), format!("history: {}", h.figure), &html);
    }
    if !report.notes.is_empty() {
        body.push(
            "notes".into(),
            "notes".into(),
            &notes_section(&report.notes),
        );
    }
    // The details last: each run's series over time.
    for (gi, g) in report.groups.iter().enumerate() {
        let anchor = format!("runs-{}", gi + 1);
        let html = runs_section(&anchor, g, &mut charts);
        body.push(anchor, format!("runs over time: {}", g.scenario), &html);
    }
    if body.html.is_empty() {
        body.html.push_str(
            "<p>No results with a main-phase summary, capacity steps or probe figures.</p>",
        );
    }
    document(&header(report, &envs, &body.nav), &body.html)
}

/// The page's sections in order, and the navigation to them: (anchor, label).
#[derive(Default)]
struct Body {
    html: String,
    nav: Vec<(String, String)>,
}

impl Body {
    fn push(&mut self, anchor: String, label: String, html: &str) {
        self.nav.push((anchor, label));
        self.html.push_str(html);
    }
}

/// The tables that are sections of their own, present ones only: (anchor, navigation label,
/// heading, table).
fn table_sections(report: &Report) -> Vec<(String, String, String, Table)> {
    let by_rate = report
        .by_rate_tables()
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            (
                format!("by-rate-{i}"),
                "p99 by rate".to_string(),
                t.title.clone(),
                Some(t),
            )
        });
    let fixed = [
        (
            "verdicts",
            "capacity verdicts",
            "Capacity verdicts",
            super::capacity::verdict_table(&report.capacity),
        ),
        ("probes", "host probes", "Host probes", report.probe_table()),
        ("cost", "cost", "Cost", super::cost::table(&report.costs)),
        (
            "ranking",
            "ranking",
            "Ranking by cost per throughput",
            super::cost::ranking_table(&report.costs),
        ),
    ]
    .map(|(a, l, h, t)| (a.to_string(), l.to_string(), h.to_string(), t));
    let scaling = report.scaling.iter().enumerate().map(|(i, r)| {
        let t = super::capacity::scaling_table(r);
        (
            format!("scaling-{}", i + 1),
            format!("scaling: {}", r.env),
            t.title.clone(),
            Some(t),
        )
    });
    by_rate
        .chain(scaling)
        .chain(fixed)
        .filter_map(|(anchor, label, heading, t)| t.map(|t| (anchor, label, heading, t)))
        .collect()
}

fn notes_section(notes: &[String]) -> String {
    let mut out = String::from(r#"<section id="notes"><h2>Notes</h2><ul class="notes">"#);
    for n in notes {
        let _ = write!(out, "<li>{}</li>", escape(n));
    }
    out.push_str("</ul></section>");
    out
}

/// A scenario's runs, each its stack of charts over time.
fn runs_section(anchor: &str, g: &ScenarioGroup, charts: &mut Charts) -> String {
    let mut out = format!(
        r#"<section id="{anchor}"><h2>Runs over time · {}</h2>"#,
        escape(&g.scenario)
    );
    for r in &g.runs {
        out.push_str(&run_stack(r, charts));
    }
    out.push_str("</section>");
    out
}

/// The page's header: what it holds, the environments' colours, the navigation.
fn header(report: &Report, envs: &[(String, &str)], nav: &[(String, String)]) -> String {
    let runs: usize = report.groups.iter().map(|g| g.runs.len()).sum();
    let mut head = String::new();
    let _ = write!(
        head,
        r#"<header><h1>cqlbench report</h1><div class="sub">{} in {} · {} · {}</div><div class="envs">"#,
        plural(runs, "run", "runs"),
        plural(report.groups.len(), "scenario", "scenarios"),
        plural(
            report.capacity.len(),
            "capacity search",
            "capacity searches"
        ),
        plural(report.probes.len(), "host probe", "host probes"),
    );
    for (env, colour) in envs {
        let _ = write!(
            head,
            r#"<span><span class="chip" style="background:{colour}"></span>{}</span>"#,
            escape(env)
        );
    }
    head.push_str("</div><nav>");
    for (anchor, label) in nav {
        let _ = write!(head, r##"<a href="#{anchor}">{}</a>"##, escape(label));
    }
    head.push_str("</nav></header>");
    head
}

/// The HTML document around `head` and `body`, with the style, the script and the footer.
fn document(head: &str, body: &str) -> String {
    format!(
        concat!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
            "<title>cqlbench report</title><style>{style}</style><script>{script}</script></head>\n",
            "<body><main>{head}{body}<footer>cqlbench {version} · percentiles from merged HDR histograms; ",
            "response time from the intended start (coordinated-omission corrected) · ",
            "<span style=\"color:{fail}\">failed</span> / <span style=\"color:{pass}\">passed</span> capacity steps marked</footer>",
            "</main></body></html>\n"
        ),
        style = STYLE,
        script = SCRIPT,
        head = head,
        body = body,
        version = env!("CARGO_PKG_VERSION"),
        fail = FAIL_COLOUR,
        pass = PASS_COLOUR,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Input;
    use crate::result::fixture::{RunShape, capacity, run, run_with_metrics};

    fn page(inputs: Vec<Input>) -> String {
        render(&Report::build(&inputs).unwrap())
    }

    #[test]
    fn the_page_is_self_contained_and_counts_its_charts() {
        let html = page(vec![
            Input::Run {
                path: "a.json".into(),
                result: run_with_metrics("ec2", &RunShape::default(), 2, &["sda"]),
            },
            Input::Run {
                path: "b.json".into(),
                result: run("k8s", &RunShape::default()),
            },
            Input::Capacity {
                path: "c.json".into(),
                result: capacity("ec2", &[1_000.0, 2_000.0, 3_000.0], 3),
            },
        ]);
        // The two keyvalue runs' spectra overlaid, 2 per scenario, 7 + 2 per run, 2 per
        // capacity search.
        assert_eq!(
            html.matches(r#"<svg class="chart""#).count(),
            1 + 2 + 7 + 2 + 2
        );
        for external in [
            "http://", "https://", "src=", "<link", "@import", "url(http",
        ] {
            let outside_xmlns = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
            assert!(!outside_xmlns.contains(external), "{external}");
        }
        assert!(html.contains("<h2>keyvalue, closed loop, 64 in flight</h2>"));
        assert!(html.contains("<caption>Response time (ms, merged histograms)</caption>"));
        assert!(html.contains("Capacity verdicts"));
        assert!(html.contains(r#"<td class="text fail">failing</td>"#));
        assert!(html.ends_with("</html>\n"));
    }

    #[test]
    fn nodes_with_their_own_disk_get_a_row_each_with_the_devices_figures() {
        let mut r = run_with_metrics("mixed", &RunShape::default(), 2, &["loop3", "loop4"]);
        let m = r.metrics.as_mut().unwrap();
        m.node_devices = vec![
            crate::result::series::NodeDevice {
                node: "node1".into(),
                dc: "slow".into(),
                device: "loop3".into(),
                class: "gp2 100 GiB: 300 IOPS, 128 MB/s".into(),
                monthly_usd: Some(10.0),
            },
            crate::result::series::NodeDevice {
                node: "node2".into(),
                dc: "nvme".into(),
                device: "loop4".into(),
                class: "local 16 GiB: no limits".into(),
                monthly_usd: None,
            },
        ];
        let slow = m.device_mean("loop3", 4.0).unwrap();
        let html = page(vec![Input::Run {
            path: "a.json".into(),
            result: r,
        }]);
        assert!(html.contains("<td>node1</td><td>slow</td><td>gp2 100 GiB: 300 IOPS, 128 MB/s (loop3)</td><td>10.00</td>"), "{html}");
        assert!(html.contains(&format!("<td>{:.0}</td>", slow.read_iops)));
        assert!(html.contains(
            "<td>node2</td><td>nvme</td><td>local 16 GiB: no limits (loop4)</td><td>–</td>"
        ));
        assert!(html.contains("host iowait"));
        // The charts name a node's disk by its node.
        assert!(html.contains("node1 slow (loop3) write"));
    }

    #[test]
    fn strings_from_results_are_escaped() {
        let evil = r#"<script>alert("x")</script> & 'y'"#;
        let mut r = run(evil, &RunShape::default());
        r.warnings.push(crate::result::Warning::Interrupted);
        let html = page(vec![Input::Run {
            path: "<img src=x>.json".into(),
            result: r,
        }]);
        assert!(!html.contains(evil));
        assert!(!html.contains("<img"));
        assert!(
            html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;")
        );
        // The only script is the page's own.
        assert_eq!(html.matches("<script>").count(), 1);
    }

    #[test]
    fn an_empty_report_says_so() {
        let html = page(vec![]);
        assert!(html.contains("No results"));
        assert_eq!(html.matches(r#"<svg class="chart""#).count(), 0);
    }
}
