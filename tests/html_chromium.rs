//! The HTML report in a real browser: `cqlbench report --html` on synthetic results
//! (`result::fixture::write_showcase` and the probe test data), opened in headless Chromium.
//! Every chart must have drawn something inside its box, no script may fail, the console must
//! stay silent, and a screenshot must come out. Chromium is required — `scripts/setup.sh`
//! installs it — and the test fails without it. `REPORT_SCREENSHOT=PATH` keeps a copy of the
//! screenshot.
//!
//! With `--enable-logging=stderr --v=0`, Chromium 156 prints every console message, whatever
//! its level, and every uncaught exception as a line like
//! `[pid:tid:date:INFO:CONSOLE:7] "Uncaught ReferenceError: f is not defined", source: …`
//! (older versions: `INFO:CONSOLE(7)`). The page logs nothing, so any such line is a failure;
//! `a_broken_page_fails_every_check` shows the checks catch one.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use cqlbench::result::fixture::write_showcase;

const BIN: &str = env!("CARGO_BIN_EXE_cqlbench");
const TIMEOUT: Duration = Duration::from_secs(60);

/// The showcase's charts: for its one scenario, throughput over time and the latency
/// spectrum; per run response time and throughput (three runs), and pending compactions,
/// node CPU, host CPU, disk throughput and disk latency for the run with server and host
/// series; target/achieved rate and response time per step of the capacity search.
const EXPECTED_CHARTS: usize = 2 + 3 * 2 + 5 + 2;

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
#[derive(Debug)]
struct PageCheck {
    charts: Option<usize>,
    drawn: Option<usize>,
    empty: Option<String>,
    errors: Option<String>,
    console: Vec<String>,
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
    // Named relative to the directory, as a user in it would: the page shows the names given.
    let names: Vec<&std::ffi::OsStr> = inputs.iter().map(|p| p.file_name().unwrap()).collect();
    let html = dir.join("report.html");
    let out = Command::new(BIN)
        .current_dir(dir)
        .arg("report")
        .args(&names)
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
    assert!(stdout.contains("Capacity verdict"), "{stdout}");
    html
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

    let png = dir.path().join("report.png");
    run_chromium(&[
        format!("--screenshot={}", png.display()),
        "--window-size=1280,3000".into(),
        "--hide-scrollbars".into(),
        format!("file://{}", html.display()),
    ]);
    let bytes = std::fs::read(&png).expect("the screenshot was written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let dim = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!((dim(16), dim(20)), (1280, 3000), "IHDR width and height");
    // A blank page of that size compresses to under 20 kB; the charts make it far larger.
    assert!(bytes.len() > 100_000, "{} bytes", bytes.len());
    if let Some(keep) = std::env::var_os("REPORT_SCREENSHOT") {
        std::fs::copy(&png, keep).unwrap();
    }
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
