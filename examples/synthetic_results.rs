//! Writes synthetic results (clearly labelled `driver: synthetic`) into a directory, to try
//! `cqlbench report` (including `--html`) and `cqlbench compare` without a cluster:
//! `cargo run --example synthetic_results -- DIR`. Besides the runs below it writes the
//! report's showcase set: a run with server and host series and a capacity search.

use cqlbench::result::fixture::{RunShape, run};

fn main() {
    let dir = std::env::args()
        .nth(1)
        .expect("usage: synthetic_results DIR");
    std::fs::create_dir_all(&dir).expect("create the directory");
    let shape = |seed, ops_per_s, latency_ms| RunShape {
        ops_per_s,
        latency_ms,
        intervals: 32,
        seed,
        ..RunShape::default()
    };
    for path in cqlbench::result::fixture::write_showcase(std::path::Path::new(&dir))
        .expect("write the showcase results")
    {
        println!("{}", path.display());
    }
    for (name, env, s) in [
        ("base-1.json", "base", shape(1, 2_300.0, 2.0)),
        ("base-2.json", "base", shape(2, 2_250.0, 2.0)),
        ("base-3.json", "base", shape(3, 2_100.0, 2.1)),
        ("base-4.json", "base", shape(5, 2_300.0, 2.0)),
        ("half-cpu-1.json", "half-cpu", shape(4, 1_700.0, 2.6)),
    ] {
        let path = std::path::Path::new(&dir).join(name);
        run(env, &s).write(&path).expect("write the result");
        println!("{}", path.display());
    }
}
