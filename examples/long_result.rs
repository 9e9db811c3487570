//! Writes a synthetic long run (clearly labelled `driver: synthetic`): one-second intervals
//! of write/read at 100 ops/s with server and host series of three nodes and one device, kept
//! as the recorder keeps a long run (merged after the first hour), or with `--every-second`
//! as it kept them before. `bench/long_report.py` times `report` and `compare` on it:
//! `cargo run --release --example long_result -- OUT.json HOURS [--every-second]`.

use cqlbench::result::fixture::{RunShape, long_run};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(out), Some(hours)) = (args.first(), args.get(1)) else {
        eprintln!("usage: long_result OUT.json HOURS [--every-second]");
        std::process::exit(2);
    };
    let hours: f64 = match hours.parse() {
        Ok(h) if h > 0.0 => h,
        _ => {
            eprintln!("long_result: HOURS must be a positive number, not {hours}");
            std::process::exit(2);
        }
    };
    let every_second = args.iter().any(|a| a == "--every-second");
    let shape = RunShape {
        ops_per_s: 100.0,
        ops_per_s_sd: 5.0,
        intervals: (hours * 3600.0).round() as usize,
        warmup: 60,
        rate_per_s: Some(100.0),
        seed: 7,
        ..RunShape::default()
    };
    let r = long_run("day", &shape, 3, &["loop0"], every_second);
    if let Err(e) = r.write(std::path::Path::new(out)) {
        eprintln!("long_result: {out}: {e}");
        std::process::exit(1);
    }
}
