//! The scenario runner as a library: a two-step scenario run in this process against a fake
//! fio (a script that answers with a real fio report), its typed outcomes returned, its
//! events collected instead of printed, and a second run cancelled through its token in the
//! middle of its second step. Nothing here needs Cassandra or fio.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cqlbench::cancel::Cancel;
use cqlbench::scenario::event::{Event, ProbeEvent};
use cqlbench::scenario::{Context, Outcome, RunOptions, ScenarioError, file};

/// A "fio" that prints its version, or writes the testdata report where it was asked to
/// (`--output=NAME`, relative to its working directory); in a directory whose path holds
/// `slow` it first sleeps for a minute (until it is killed).
fn fake_fio(dir: &Path) -> PathBuf {
    let report = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/probe/testdata/fio-lcs.json");
    let fio = dir.join("fio");
    std::fs::write(
        &fio,
        format!(
            "#!/bin/sh\n\
             [ \"$1\" = --version ] && {{ echo fio-3.33; exit 0; }}\n\
             case \"$PWD\" in *slow*) sleep 60;; esac\n\
             for a in \"$@\"; do case \"$a\" in --output=*) cp '{}' \"${{a#--output=}}\";; esac; done\n",
            report.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fio, std::fs::Permissions::from_mode(0o755)).unwrap();
    fio
}

/// Two probe steps, each measuring a directory of its own.
fn two_step_scenario(first: &Path, second: &Path, out: &Path) -> file::Matrix {
    let text = format!(
        "name: lib\nenv: lab\nsteps:\n  \
         - probe: {{quick: true, profiles: lcs, skip-cpu: true, dir: '{}'}}\n  \
         - probe: {{quick: true, profiles: lcs, skip-cpu: true, dir: '{}', env: lab2}}\n",
        first.display(),
        second.display()
    );
    file::plan_all(&file::parse(&text).unwrap(), out).unwrap()
}

/// A context that collects what each event was, and prints nothing.
fn quiet_context(home: &Path, fio: PathBuf) -> (Context, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let mut ctx =
        Context::new(home, &home.join("clusters")).with_sink(Arc::new(move |e: &Event| {
            let what = match e {
                Event::StepStarted { index, name, .. } => format!("step {index} {name}"),
                Event::Probe(ProbeEvent::Done { result }) => format!("probed {}", result.env),
                Event::Report { .. } => "report".into(),
                Event::Finished { .. } => "finished".into(),
                _ => return,
            };
            s.lock().unwrap().push(what);
        }));
    ctx.fio = fio;
    (ctx, seen)
}

#[test]
fn a_scenario_runs_in_process_and_returns_typed_outcomes() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let (ctx, seen) = quiet_context(dir.path(), fake_fio(dir.path()));
    let out = dir.path().join("out");
    let m = two_step_scenario(&a, &b, &out);
    let done = cqlbench::scenario::run(&m, &ctx, RunOptions::default()).unwrap();
    assert_eq!(done.steps.len(), 2);
    for (step, env) in done.steps.iter().zip(["lab", "lab2"]) {
        let Outcome::Probe(p) = &step.outcome else {
            panic!("{}: not a probe outcome", step.name)
        };
        assert!(p.complete && p.env == env, "{p:?}");
        // The figures of the fio report the fake fio gave.
        let lcs = &p.profiles[0];
        assert!(lcs.read_iops > 0.0 && lcs.read_p99_us.is_some(), "{lcs:?}");
        assert!(step.out.as_ref().unwrap().is_file());
    }
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "step 1 probe",
            "probed lab",
            "step 2 probe-2",
            "probed lab2",
            "report",
            "finished"
        ]
    );
    assert_eq!(
        done.report.as_deref(),
        Some(out.join("report.txt").as_path())
    );
}

#[test]
fn a_scenario_is_cancelled_through_its_token() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("slow"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let (ctx, seen) = quiet_context(dir.path(), fake_fio(dir.path()));
    let cancel = Cancel::new();
    let ctx = ctx.with_cancel(cancel.clone());
    let m = two_step_scenario(&a, &b, &dir.path().join("out"));
    // Cancels once the second step has begun (its fio sleeps).
    let watcher = {
        let seen = seen.clone();
        std::thread::spawn(move || {
            let t0 = Instant::now();
            while !seen.lock().unwrap().iter().any(|s| s == "step 2 probe-2") {
                assert!(t0.elapsed() < Duration::from_secs(60), "step 2 never began");
                std::thread::sleep(Duration::from_millis(20));
            }
            std::thread::sleep(Duration::from_millis(300));
            cancel.cancel();
        })
    };
    let started = Instant::now();
    let err = cqlbench::scenario::run(&m, &ctx, RunOptions::default()).unwrap_err();
    watcher.join().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the sleeping fio was stopped"
    );
    assert!(
        matches!(&err, ScenarioError::Step { index: 2, .. }),
        "{}",
        err.one_line()
    );
    assert!(err.one_line().contains("interrupted"), "{}", err.one_line());
    // The first step's result is kept; no report was written after the cancel.
    assert!(dir.path().join("out/01-probe.json").is_file());
    assert!(!seen.lock().unwrap().iter().any(|s| s == "report"));
}

/// The library prints nothing: the first test again, in a child process of this test binary,
/// whose standard output holds only the test harness's own lines.
#[test]
fn running_a_scenario_prints_nothing() {
    if std::env::var_os("CQLBENCH_LIB_CHILD").is_some() {
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_scenario_runs_in_process_and_returns_typed_outcomes",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("CQLBENCH_LIB_CHILD", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let foreign: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            !l.trim().is_empty()
                && !l.starts_with("running ")
                && !l.starts_with("test ")
                && !l.starts_with("successes:")
                && !l.starts_with("    a_scenario_runs")
        })
        .collect();
    assert!(foreign.is_empty(), "printed: {foreign:?}\n{stdout}");
    assert!(stderr.trim().is_empty(), "printed on stderr: {stderr}");
}
