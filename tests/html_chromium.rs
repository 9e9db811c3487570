//! The HTML report in a real browser: `cqlbench report --html` on synthetic results
//! (`result::fixture::write_showcase` and the probe test data; and the three runs of a latency
//! methodology: a throughput run, a fixed-rate run and a run at 35% of the throughput run's),
//! opened in headless Chromium. Every chart must have drawn something inside its box, no
//! script may fail, the console must stay silent, the summary table must be on top, and a
//! screenshot must come out. Chromium is required — `scripts/setup.sh` installs it — and the
//! test fails without it. `REPORT_SCREENSHOT=PATH` keeps a copy of the methodology report's
//! screenshot (`docs/report-screenshot.png` is one).
//!
//! With `--enable-logging=stderr --v=0`, Chromium 156 prints every console message, whatever
//! its level, and every uncaught exception as a line like
//! `[pid:tid:date:INFO:CONSOLE:7] "Uncaught ReferenceError: f is not defined", source: …`
//! (older versions: `INFO:CONSOLE(7)`). The page logs nothing, so any such line is a failure;
//! `a_broken_page_fails_every_check` shows the checks catch one.

mod common;

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use cqlbench::result::RateShare;
use cqlbench::result::fixture::{RunShape, run_with_metrics, write_showcase};
use cqlbench::spec::{CassandraSource, ClusterSpec, MiB};

const BIN: &str = env!("CARGO_BIN_EXE_cqlbench");
const TIMEOUT: Duration = Duration::from_secs(60);

/// The showcase's charts: the overlaid spectra of its three runs; for its one scenario,
/// throughput over time and the latency spectrum; per run response time and throughput (three runs), and pending compactions,
/// node CPU, host CPU, disk throughput and disk latency for the run with server and host
/// series; target/achieved rate and response time per step of the capacity search; and
/// `--history p99` of its two environments (ec2's two runs, k8s's one) from the catalogue.
const EXPECTED_CHARTS: usize = 1 + 2 + 3 * 2 + 5 + 2 + 2;

const FLAGS: [&str; 11] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
    "--virtual-time-budget=5000",
];

/// Chromium on PATH (or `$CHROMIUM`); a missing browser fails the test.
fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return p.into();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser"] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "chromium is not installed (not on PATH, CHROMIUM not set): run scripts/setup.sh, \
         which installs Debian's chromium package"
    );
}

struct Browser {
    stdout: String,
    stderr: String,
}

/// Runs Chromium with `args` and a fresh profile, killing its whole process group if it has
/// not finished within [`TIMEOUT`].
fn run_chromium(args: &[String]) -> Browser {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(chromium())
        .args(FLAGS)
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("start chromium");
    let group = child.id() as i32;
    let (tx, rx) = mpsc::channel();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let tx2 = tx.clone();
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        let _ = tx.send((0, s));
    });
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        let _ = tx2.send((1, s));
    });
    let deadline = Instant::now() + TIMEOUT;
    let kill = || {
        // SAFETY: signals the process group this test started (its leader is `child`).
        unsafe { libc::kill(-group, libc::SIGKILL) };
    };
    let mut streams = [None, None];
    while streams.iter().any(Option::is_none) {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok((i, s)) => streams[i] = Some(s),
            Err(_) => {
                kill();
                let _ = child.wait();
                panic!(
                    "chromium did not finish within {} s (killed)",
                    TIMEOUT.as_secs()
                );
            }
        }
    }
    let status = child.wait().unwrap();
    let [stdout, stderr] = streams.map(Option::unwrap);
    assert!(status.success(), "chromium failed: {status}\n{stderr}");
    Browser { stdout, stderr }
}

/// What the page's own check wrote on `<body>`, and the console lines Chromium logged.
struct PageCheck {
    charts: Option<usize>,
    drawn: Option<usize>,
    empty: Option<String>,
    errors: Option<String>,
    console: Vec<String>,
    /// The page as the browser parsed it (`--dump-dom`).
    dom: String,
}

/// The checks, without the page itself.
impl std::fmt::Debug for PageCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageCheck")
            .field("charts", &self.charts)
            .field("drawn", &self.drawn)
            .field("empty", &self.empty)
            .field("errors", &self.errors)
            .field("console", &self.console)
            .finish_non_exhaustive()
    }
}

/// The value of attribute `name` of the `<body>` tag in `dom`.
fn body_attr(dom: &str, name: &str) -> Option<String> {
    let start = dom.find("<body")?;
    let tag = &dom[start..start + dom[start..].find('>')?];
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    let value = &tag[at..at + tag[at..].find('"')?];
    Some(value.replace("&quot;", "\"").replace("&amp;", "&"))
}

fn check_page(html: &Path) -> PageCheck {
    let url = format!("file://{}", html.display());
    let b = run_chromium(&["--dump-dom".into(), url]);
    let number = |name| body_attr(&b.stdout, name).and_then(|v| v.parse().ok());
    PageCheck {
        charts: number("data-charts"),
        drawn: number("data-charts-drawn"),
        empty: body_attr(&b.stdout, "data-charts-empty"),
        errors: body_attr(&b.stdout, "data-errors"),
        console: b
            .stderr
            .lines()
            .filter(|l| l.contains(":CONSOLE:") || l.contains(":CONSOLE("))
            .map(str::to_string)
            .collect(),
        dom: b.stdout,
    }
}

/// Writes the showcase results and a probe, and renders them with `cqlbench report --html`.
fn showcase_report(dir: &Path) -> PathBuf {
    let mut inputs = write_showcase(dir).unwrap();
    let probe = dir.join("probe.json");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("src/probe/testdata/probe-result.json"),
        &probe,
    )
    .unwrap();
    inputs.push(probe);
    // The results in a catalogue, for --history.
    let home = dir.join("home");
    let imported = Command::new(BIN)
        .env("CQLBENCH_HOME", &home)
        .args(["runs", "--import"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(imported.status.success(), "{imported:?}");
    render(dir, &inputs, &["--history", "p99"], &home)
}

/// Renders `inputs` (files in `dir`) with `cqlbench report --html` into `dir/report.html`,
/// with `extra` arguments and `home` as the cqlbench home.
fn render(dir: &Path, inputs: &[PathBuf], extra: &[&str], home: &Path) -> PathBuf {
    // Named relative to the directory, as a user in it would: the page shows the names given.
    let names: Vec<&std::ffi::OsStr> = inputs.iter().map(|p| p.file_name().unwrap()).collect();
    let html = dir.join("report.html");
    let out = Command::new(BIN)
        .current_dir(dir)
        .env("CQLBENCH_HOME", home)
        .arg("report")
        .args(&names)
        .args(extra)
        .arg("--html")
        .arg("report.html")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The tables are still printed.
    assert!(stdout.starts_with("Runs (latency in ms)"), "{stdout}");
    html
}

/// The latency methodology of reference 000 on one laptop: the throughput at 64 in flight,
/// a latency test at a fixed 1,000 ops/s, and one at 35% of the measured throughput.
fn methodology_report(dir: &Path) -> PathBuf {
    let shape = |ops_per_s, latency_ms, rate_per_s: Option<f64>, seed| RunShape {
        ops_per_s,
        ops_per_s_sd: if rate_per_s.is_some() { 8.0 } else { 120.0 },
        latency_ms,
        intervals: 40,
        warmup: 5,
        rate_per_s,
        seed,
    };
    let mut tput = run_with_metrics("laptop", &shape(7_000.0, 9.0, None, 1), 1, &["nvme0n1"]);
    // In closed loop an operation is sent when it is claimed: its service time is its
    // response time (the fixture's are 80% of it).
    let summary = tput.phases[0].summary.as_mut().unwrap();
    summary.all.service = summary.all.response;
    summary.all.service_histogram_ns = summary.all.response_histogram_ns.clone();
    let measured = summary.ops_per_s;
    let fixed = run_with_metrics(
        "laptop",
        &shape(1_000.0, 1.2, Some(1_000.0), 2),
        1,
        &["nvme0n1"],
    );
    let rate = (0.35 * measured).round();
    let mut share = run_with_metrics("laptop", &shape(rate, 2.0, Some(rate), 3), 1, &["nvme0n1"]);
    share.rate_share = Some(RateShare {
        share: 0.35,
        of: "throughput.json".into(),
        of_ops_per_s: measured,
    });
    let mut inputs = Vec::new();
    for (name, mut result) in [
        ("throughput.json", tput),
        ("fixed-1000.json", fixed),
        ("latency-35.json", share),
    ] {
        // A one-node local cluster.
        result.fingerprint.cluster = Some(one_node());
        result.fingerprint.cassandra_version = Some("5.0.4".into());
        let path = dir.join(name);
        result.write(&path).unwrap();
        inputs.push(path);
    }
    render(dir, &inputs, &[], &dir.join("home"))
}

/// A local cluster of one node with a 1 GiB heap.
fn one_node() -> ClusterSpec {
    let mut spec = common::spec("laptop", "dc1:1");
    spec.cassandra = CassandraSource::Maven {
        version: "5.0.4".into(),
    };
    spec.jvm.heap = Some(MiB(1024));
    spec
}

/// The element of `dom` that starts at the first `open` (e.g. `<section id="summary">`), up
/// to its `close`.
fn element<'a>(dom: &'a str, open: &str, close: &str) -> &'a str {
    let start = dom
        .find(open)
        .unwrap_or_else(|| panic!("no {open} in the page"));
    let end = dom[start..].find(close).expect("closed") + start;
    &dom[start..end]
}

/// Takes a 1280×`height` screenshot of `html` and checks it is a PNG of that size holding
/// more than a blank page; `REPORT_SCREENSHOT=PATH` keeps it.
fn screenshot(html: &Path, height: u32, keep: bool) {
    let png = html.with_extension("png");
    run_chromium(&[
        format!("--screenshot={}", png.display()),
        format!("--window-size=1280,{height}"),
        "--hide-scrollbars".into(),
        format!("file://{}", html.display()),
    ]);
    let bytes = std::fs::read(&png).expect("the screenshot was written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let dim = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!((dim(16), dim(20)), (1280, height), "IHDR width and height");
    // A blank page of that size compresses to under 20 kB; the charts make it far larger.
    assert!(bytes.len() > 100_000, "{} bytes", bytes.len());
    if let Some(path) = std::env::var_os("REPORT_SCREENSHOT").filter(|_| keep) {
        std::fs::copy(&png, path).unwrap();
    }
}

#[test]
fn the_html_report_draws_every_chart_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let html = showcase_report(dir.path());
    let text = std::fs::read_to_string(&html).unwrap();
    assert_eq!(
        text.matches(r#"<svg class="chart""#).count(),
        EXPECTED_CHARTS
    );

    let page = check_page(&html);
    assert_eq!(page.charts, Some(EXPECTED_CHARTS), "{page:?}");
    assert_eq!(page.drawn, Some(EXPECTED_CHARTS), "{page:?}");
    assert_eq!(page.empty, None, "{page:?}");
    assert_eq!(page.errors, None, "{page:?}");
    assert!(page.console.is_empty(), "{page:?}");

    screenshot(&html, 3000, false);
}

#[test]
fn the_summary_and_the_overlaid_spectra_render_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let html = methodology_report(dir.path());
    let page = check_page(&html);
    // The overlaid spectra; per scenario (three) throughput over time and the spectrum; per
    // run (three) response time, throughput and the five server and host series.
    let expected = 1 + 3 * 2 + 3 * 7;
    assert_eq!(page.charts, Some(expected), "{page:?}");
    assert_eq!(page.drawn, Some(expected), "{page:?}");
    assert_eq!(page.errors, None, "{page:?}");
    assert!(page.console.is_empty(), "{page:?}");

    // What the browser parsed: the summary is the first section, one row per run, the share
    // run naming its rate and the run it came from, then the legend and the settings.
    let dom = &page.dom;
    let first = dom.find("<section").unwrap();
    assert_eq!(dom[first..].find(r#"<section id="summary">"#), Some(0));
    let summary = element(dom, r#"<section id="summary">"#, "</section>");
    let runs = element(
        summary,
        "<caption>Runs (latency in ms)</caption>",
        "</table>",
    );
    assert_eq!(runs.matches("<tr>").count(), 1 + 3, "{runs}");
    for (row, load) in [
        ("#1", "closed loop"),
        ("#2", "fixed rate"),
        ("#3", "share of a run"),
    ] {
        let tr = element(runs, &format!("</span>{row}</td>"), "</tr>");
        assert!(tr.contains(&format!(">{load}</td>")), "{tr}");
    }
    let share = element(runs, "</span>#3</td>", "</tr>");
    assert!(share.contains("ops/s = 35% of "), "{share}");
    assert!(share.contains("(#1 throughput.json)"), "{share}");
    assert!(
        summary
            .contains(r#"<p class="meta legend">response time (resp) = from the intended start"#)
    );
    let settings = element(
        summary,
        "<caption>Run settings and host CPU</caption>",
        "</table>",
    );
    assert_eq!(settings.matches("<tr>").count(), 1 + 3, "{settings}");
    // One chart holds every run's spectrum: a response and a service line each.
    let spectra = element(summary, r#"data-chart="latency-spectra""#, "</svg>");
    for i in 1..=3 {
        assert!(spectra.contains(&format!(">#{i} laptop · ")), "{spectra}");
    }
    let lines = element(spectra, r#"<g class="marks""#, "</g>");
    assert_eq!(lines.matches("<path").count(), 3 * 2, "{lines}");

    screenshot(&html, 1500, true);
}

#[test]
fn a_broken_page_fails_every_check() {
    let dir = tempfile::tempdir().unwrap();
    let html = showcase_report(dir.path());
    let broken = std::fs::read_to_string(&html).unwrap().replace(
        "</main>",
        concat!(
            r#"<svg class="chart" data-chart="nothing" viewBox="0 0 100 50"><g class="marks"></g></svg>"#,
            r#"<svg class="chart" data-chart="nan" viewBox="0 0 100 50"><g class="marks"><path d="M0,0LNaN,3"/></g></svg>"#,
            r#"<svg class="chart" data-chart="outside" viewBox="0 0 100 50"><g class="marks"><path d="M200,10L300,20"/></g></svg>"#,
            r#"<script>console.error("deliberate console error"); undefinedFunction();</script>"#,
            "</main>"
        ),
    );
    std::fs::write(&html, broken).unwrap();
    let page = check_page(&html);
    assert_eq!(page.charts, Some(EXPECTED_CHARTS + 3), "{page:?}");
    assert_eq!(page.drawn, Some(EXPECTED_CHARTS), "{page:?}");
    assert_eq!(
        page.empty.as_deref(),
        Some("nothing nan outside"),
        "{page:?}"
    );
    assert!(
        page.errors
            .as_deref()
            .is_some_and(|e| e.contains("undefinedFunction is not defined")),
        "{page:?}"
    );
    let console = page.console.join("\n");
    for expected in [
        "deliberate console error",
        "Uncaught ReferenceError: undefinedFunction is not defined",
        "attribute d: Expected number",
    ] {
        assert!(console.contains(expected), "{expected} not in {console}");
    }
}
