//! cqlbench binary: parse the command line, run one command, map an error to one line.

use std::process::ExitCode;

use clap::Parser;

// The driver allocates several small buffers and futures per request; mimalloc serves them with
// less CPU than glibc's malloc (bench/README.md has the measurement). Built without transparent
// huge pages (feature no_thp), which would otherwise about double the client's peak RSS.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = cqlbench::cli::Cli::parse();
    match cqlbench::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {}", cqlbench::cli::one_line(&err));
            ExitCode::FAILURE
        }
    }
}
