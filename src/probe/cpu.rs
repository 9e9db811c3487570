//! CPU score: sysbench `cpu` events/s at one thread and at all cores, or a built-in loop when
//! sysbench cannot be run. The two scores are not comparable and are labelled by
//! [`CpuSource`].

use std::fs::File;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use super::ProbeError;
use super::process::{self, Stopped};
use super::scratch::Scratch;
use crate::cancel::Cancel;
use crate::result::probe::{CpuFigures, CpuSource};

/// Measures the CPU. Falls back to the built-in loop, with a note, when sysbench is missing
/// or fails; only an interruption is an error.
pub fn measure(
    sysbench: &Path,
    threads: usize,
    time: Duration,
    scratch: &Scratch,
    notes: &mut Vec<String>,
    cancel: &Cancel,
) -> Result<CpuFigures, ProbeError> {
    match sysbench_figures(sysbench, threads, time, scratch, cancel) {
        Ok(figures) => return Ok(figures),
        Err(SysbenchError::Interrupted) => return Err(ProbeError::Interrupted),
        Err(SysbenchError::Unavailable(why)) => notes.push(format!(
            "sysbench unavailable ({why}); CPU measured with the built-in prime loop, not comparable with sysbench scores"
        )),
    }
    let one = builtin_events_per_s(1, time, cancel);
    let all = builtin_events_per_s(threads, time, cancel);
    if cancel.is_cancelled() {
        return Err(ProbeError::Interrupted);
    }
    Ok(CpuFigures {
        source: CpuSource::Builtin,
        tool_version: format!("cqlbench {}", env!("CARGO_PKG_VERSION")),
        threads,
        duration_s: time.as_secs_f64(),
        events_s_1_thread: one,
        events_s_all_threads: all,
    })
}

enum SysbenchError {
    Unavailable(String),
    Interrupted,
}

fn sysbench_figures(
    sysbench: &Path,
    threads: usize,
    time: Duration,
    scratch: &Scratch,
    cancel: &Cancel,
) -> Result<CpuFigures, SysbenchError> {
    let unavailable = |e: &dyn std::fmt::Display| {
        SysbenchError::Unavailable(format!("'{}': {e}", sysbench.display()))
    };
    let version = Command::new(sysbench)
        .arg("--version")
        .output()
        .map_err(|e| unavailable(&e))?;
    let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
    let one = sysbench_run(sysbench, 1, time, scratch, cancel)?;
    let all = sysbench_run(sysbench, threads, time, scratch, cancel)?;
    Ok(CpuFigures {
        source: CpuSource::Sysbench,
        tool_version: version,
        threads,
        duration_s: time.as_secs_f64(),
        events_s_1_thread: one,
        events_s_all_threads: all,
    })
}

fn sysbench_run(
    sysbench: &Path,
    threads: usize,
    time: Duration,
    scratch: &Scratch,
    cancel: &Cancel,
) -> Result<f64, SysbenchError> {
    let unavailable = |e: &dyn std::fmt::Display| {
        SysbenchError::Unavailable(format!("'{}': {e}", sysbench.display()))
    };
    let out_path = scratch.path().join("sysbench.out");
    let out = File::create(&out_path).map_err(|e| unavailable(&e))?;
    let err = out.try_clone().map_err(|e| unavailable(&e))?;
    let mut cmd = Command::new(sysbench);
    cmd.arg("cpu")
        .arg(format!("--threads={threads}"))
        .arg(format!("--time={}", time.as_secs().max(1)))
        .arg("run")
        .stdin(std::process::Stdio::null())
        .stdout(out)
        .stderr(err);
    let limit = time + Duration::from_secs(30);
    let status = match process::run(&mut cmd, limit, cancel) {
        Ok(status) => status,
        Err(Stopped::Interrupted) => return Err(SysbenchError::Interrupted),
        Err(Stopped::TimedOut) => return Err(unavailable(&"timed out")),
        Err(Stopped::Spawn(e)) => return Err(unavailable(&e)),
    };
    let text = std::fs::read_to_string(&out_path).unwrap_or_default();
    let _ = std::fs::remove_file(&out_path);
    if !status.success() {
        return Err(unavailable(&format!("exited with {status}")));
    }
    parse_events_per_s(&text).ok_or_else(|| unavailable(&"no 'events per second' in its output"))
}

/// A note when the all-cores score is not clearly above the one-thread score: other load on
/// the machine was competing for the CPUs, so the figures understate this host.
pub fn contention_note(cpu: &CpuFigures) -> Option<String> {
    let expected_gain = 1.2;
    (cpu.threads > 1 && cpu.events_s_all_threads < cpu.events_s_1_thread * expected_gain).then(
        || {
            format!(
                "CPU score at {} threads ({:.0}/s) is barely above 1 thread ({:.0}/s): other processes were likely using the CPUs",
                cpu.threads, cpu.events_s_all_threads, cpu.events_s_1_thread
            )
        },
    )
}

/// The `events per second:` figure of `sysbench cpu run` output.
pub fn parse_events_per_s(output: &str) -> Option<f64> {
    output.lines().find_map(|l| {
        l.trim()
            .strip_prefix("events per second:")
            .and_then(|v| v.trim().parse().ok())
    })
}

/// Primes below this bound are counted in one event (sysbench's default `--cpu-max-prime`).
const MAX_PRIME: u64 = 10_000;

/// One event of the built-in loop: counts primes below [`MAX_PRIME`] by trial division.
fn prime_event() -> u64 {
    let mut primes = 0;
    for n in 2..std::hint::black_box(MAX_PRIME) {
        let mut d = 2;
        let mut prime = true;
        while d * d <= n {
            if n % d == 0 {
                prime = false;
                break;
            }
            d += 1;
        }
        primes += u64::from(prime);
    }
    std::hint::black_box(primes)
}

/// Runs the prime event on `threads` threads for `time`; total events per second. Stops early
/// (returning what was measured) when the probe is interrupted.
pub fn builtin_events_per_s(threads: usize, time: Duration, cancel: &Cancel) -> f64 {
    let start = Instant::now();
    let deadline = start + time;
    let total: u64 = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                s.spawn(move || {
                    let mut events = 0u64;
                    while Instant::now() < deadline && !cancel.is_cancelled() {
                        prime_event();
                        events += 1;
                    }
                    events
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or(0)).sum()
    });
    total as f64 / start.elapsed().as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_captured_sysbench_output() {
        let text = include_str!("testdata/sysbench-cpu-2threads.txt");
        assert_eq!(parse_events_per_s(text), Some(7244.09));
        assert_eq!(parse_events_per_s("Threads started!\n"), None);
    }

    #[test]
    fn notes_contention_when_all_cores_do_not_scale() {
        let mut cpu = CpuFigures {
            source: CpuSource::Sysbench,
            tool_version: String::new(),
            threads: 2,
            duration_s: 3.0,
            events_s_1_thread: 3450.0,
            events_s_all_threads: 3156.0,
        };
        let note = contention_note(&cpu).unwrap();
        assert!(note.contains("2 threads (3156/s)"), "{note}");
        cpu.events_s_all_threads = 6349.0;
        assert_eq!(contention_note(&cpu), None);
        cpu.threads = 1;
        cpu.events_s_all_threads = 3450.0;
        assert_eq!(contention_note(&cpu), None);
    }

    #[test]
    fn prime_event_counts_primes_below_the_bound() {
        assert_eq!(prime_event(), 1229);
    }

    #[test]
    fn builtin_loop_measures_events() {
        let rate = builtin_events_per_s(1, Duration::from_millis(300), &Cancel::new());
        assert!(rate > 0.0, "{rate}");
    }
}
