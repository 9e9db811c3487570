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
    let outcome = cqlbench::cli::run(cli);
    // Interrupted by a signal: what was measured is written (and said); the exit code says so.
    let interrupted = cqlbench::cli::signals::exit_code();
    match (outcome, interrupted) {
        (Ok(()), None) => ExitCode::SUCCESS,
        (Ok(()), Some(code)) => {
            eprintln!("interrupted: the results measured so far are written");
            ExitCode::from(code)
        }
        (Err(err), None) if err.is::<cqlbench::cli::compare::GateFailed>() => {
            eprintln!("failed: {err}");
            ExitCode::from(cqlbench::cli::compare::GATE_FAILED_EXIT)
        }
        (Err(err), code) => {
            eprintln!("error: {}", cqlbench::cli::one_line(&err));
            code.map_or(ExitCode::FAILURE, ExitCode::from)
        }
    }
}
