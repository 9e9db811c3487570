//! cqlbench binary: parse the command line, run one command, map an error to one line.

use std::process::ExitCode;

use clap::Parser;

// The driver allocates several small buffers and futures per request; mimalloc serves them with
// less CPU than glibc's malloc: +25% operations per client CPU-second on the 50/50 mix of
// scripts/bench-load.py (A/B of 4 alternating runs each). Built without transparent huge pages
// (feature no_thp), which would otherwise raise peak RSS from about 15 to 28 MiB.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = cqlbench::cli::Cli::parse();
    match cqlbench::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // One line: the chain of contexts joined by ": ".
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
