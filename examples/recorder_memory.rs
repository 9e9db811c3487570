//! How the client's memory grows as a long run is recorded (issue 36), without waiting a day:
//! drives the recorder a run uses (its result, HDR interval log, per-interval CSV and ledger,
//! written as a run writes them) through simulated one-second intervals as fast as it can, each
//! with `--rate` operations' latencies (half writes, half reads) and their write cycles, beside
//! a series of one node's and one host's samples kept as the sampler keeps them (one per
//! sampling period, thinned after the first hour, spilled to a file as they come). Prints the
//! process's resident memory at the simulated minutes asked for, and the files' sizes at the
//! end.
//!
//! Leaves out what a real run adds at a constant size (the driver and its connections, the
//! executor's workers, the sampler's thread); `bench/long_run.py` measures a real run.
//!
//! `cargo run --release --example recorder_memory -- DIR [--hours 24] [--rate 2000]
//! [--marks 5,30,60,75,120,720,1440]`

use std::path::PathBuf;

use cqlbench::load::executor::IntervalReport;
use cqlbench::load::recorder::Recorder;
use cqlbench::result::{IntervalRecord, PhaseResult, kept_width_s};
use cqlbench::spec::OpKind;
use cqlbench::stats::Snapshot;
use cqlbench::stats::writes::Outcome;

// The allocator the binary uses (src/main.rs): what it keeps is what the client's RSS shows.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Args {
    dir: PathBuf,
    hours: f64,
    rate: u64,
    marks_min: Vec<f64>,
}

fn parse() -> Result<Args, String> {
    let mut a = std::env::args().skip(1);
    let dir = a
        .next()
        .ok_or("usage: recorder_memory DIR [--hours H] [--rate R] [--marks M,…]")?;
    let mut args = Args {
        dir: dir.into(),
        hours: 24.0,
        rate: 2_000,
        marks_min: vec![5.0, 30.0, 60.0, 75.0, 120.0, 720.0, 1_440.0],
    };
    while let Some(flag) = a.next() {
        let value = a.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {value}: {e}");
        match flag.as_str() {
            "--hours" => args.hours = value.parse().map_err(|e| bad(&e))?,
            "--rate" => args.rate = value.parse().map_err(|e| bad(&e))?,
            "--marks" => {
                args.marks_min = value
                    .split(',')
                    .map(|m| m.trim().parse::<f64>().map_err(|e| bad(&e)))
                    .collect::<Result<_, _>>()?
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    if !(args.hours > 0.0 && args.hours <= 168.0) {
        return Err(format!("--hours {}: between 0 and 168", args.hours));
    }
    Ok(args)
}

/// This process's resident memory, MiB (`VmRSS` of /proc/self/status).
fn rss_mib() -> f64 {
    procfs::process::Process::myself()
        .and_then(|p| p.status())
        .ok()
        .and_then(|s| s.vmrss)
        .map_or(f64::NAN, |kib| kib as f64 / 1024.0)
}

fn size_mib(p: &std::path::Path) -> f64 {
    std::fs::metadata(p).map_or(0.0, |m| m.len() as f64 / 1_048_576.0)
}

/// A fixed sequence of latencies from 0.3 ms with a long tail (Pareto, shape 1/0.7), cut at
/// 189 ms (the tail's 99.99th percentile).
const SCALE_NS: f64 = 300_000.0;

struct Latencies {
    rng: rand_xoshiro::SplitMix64,
    tail: rand_distr::Pareto<f64>,
}

impl Latencies {
    fn new() -> Latencies {
        Latencies {
            rng: rand_xoshiro::rand_core::SeedableRng::seed_from_u64(7),
            tail: rand_distr::Pareto::new(SCALE_NS, 1.0 / 0.7).expect("a valid shape"),
        }
    }

    fn next_ns(&mut self) -> u64 {
        let cut = SCALE_NS / 1e-4f64.powf(0.7);
        rand_distr::Distribution::sample(&self.tail, &mut self.rng).min(cut) as u64
    }
}

fn main() {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("recorder_memory: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = std::fs::create_dir_all(&args.dir) {
        eprintln!("recorder_memory: {}: {e}", args.dir.display());
        std::process::exit(1);
    }
    let out = args.dir.join("memory.json");
    let secs = (args.hours * 3600.0).round() as u64;
    let shape = cqlbench::result::fixture::RunShape {
        intervals: 2,
        warmup: 0,
        ..Default::default()
    };
    let mut result = cqlbench::result::fixture::run("recorder-memory", &shape);
    let load = result.phases[0].load.clone();
    result.phases.clear();
    result.metrics = None;
    // One node's and one host's sample, as a local run samples them each second.
    let template = cqlbench::result::fixture::metrics(1, &["loop0"], 3.0, 1)
        .samples
        .pop()
        .expect("a sample");
    let mut series: cqlbench::spill::Spill<cqlbench::result::series::Sample> =
        match cqlbench::spill::Spill::create_in(&args.dir) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("recorder_memory: {}: {e}", args.dir.display());
                std::process::exit(1);
            }
        };
    let mut rec = match Recorder::start(&out, result, None) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("recorder_memory: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = rec.open_hlog(cqlbench::host::unix_now()) {
        eprintln!("recorder_memory: {e}");
        std::process::exit(1);
    }
    rec.start_phase(PhaseResult {
        name: "main".into(),
        offset_s: 0.0,
        load,
        intervals: Vec::new(),
        summary: None,
    });
    let rss_start = rss_mib();
    println!(
        "recorder_memory: {} simulated hours at {} ops/s; RSS at the start {rss_start:.1} MiB",
        args.hours, args.rate
    );
    println!("| simulated minute | RSS MiB | records kept | samples kept | wall s |");
    println!("|---|---|---|---|---|");
    let wall = std::time::Instant::now();
    let mut lat = Latencies::new();
    let mut marks = args.marks_min.clone();
    marks.sort_by(f64::total_cmp);
    let mut marks = marks.into_iter().peekable();
    // Every operation takes the next cycle, so a second's writes are every other cycle, as a
    // 1:1 mix's are (the ledger's bitmaps then weigh what a real run's weigh).
    let mut cycle = 0u64;
    let mut next_sample = 0.0;
    let mut snapshot = Snapshot::default();
    for i in 0..secs {
        let start_s = i as f64;
        snapshot.reset();
        for j in 0..args.rate {
            let response = lat.next_ns();
            let service = response - response / 8;
            snapshot.record_send_lag(response / 8 + 1);
            cycle += 1;
            if j % 2 == 0 {
                snapshot.record_ok(OpKind::Write, response, service);
                snapshot.writes.record(OpKind::Write, cycle, Outcome::Acked);
            } else {
                snapshot.record_ok(OpKind::Read, response, service);
            }
        }
        let report = IntervalReport {
            index: i,
            start_s,
            end_s: start_s + 1.0,
            warmup: false,
            drain: false,
            snapshot: std::mem::take(&mut snapshot),
            backlog: 0,
        };
        let record =
            IntervalRecord::from_snapshot(start_s, start_s + 1.0, false, &report.snapshot, 0, 0.1);
        rec.interval("main", 0.0, false, &report, record);
        rec.save_if_due();
        snapshot = report.snapshot;
        if start_s >= next_sample {
            let mut s = template.clone();
            s.t_s = start_s;
            if let Err(e) = series.push(&s) {
                eprintln!("recorder_memory: a sample's spill: {e}");
                std::process::exit(1);
            }
            next_sample = start_s + kept_width_s(start_s).max(1.0);
        }
        while marks.peek().is_some_and(|m| (i + 1) as f64 >= m * 60.0) {
            let m = marks.next().expect("peeked");
            let kept = rec.kept_intervals();
            println!(
                "| {m} | {:.1} | {kept} | {} | {:.0} |",
                rss_mib(),
                series.len(),
                wall.elapsed().as_secs_f64()
            );
        }
    }
    let rss_end = rss_mib();
    if let Err(e) = rec.check_writes().and_then(|()| rec.finish().map(drop)) {
        eprintln!("recorder_memory: {e}");
        std::process::exit(1);
    }
    println!("RSS at the end, before the last write of the result: {rss_end:.1} MiB");
    println!(
        "files after {} simulated hours: result {:.2} MiB (the series not in it), HDR log {:.1} MiB, \
         per-interval CSV {:.1} MiB, ledger {:.1} MiB",
        args.hours,
        size_mib(&out),
        size_mib(&out.with_extension("hlog")),
        size_mib(&cqlbench::result::intervals_csv::path_for(&out)),
        size_mib(&out.with_extension("ledger")),
    );
}
