//! cqlbench binary: parse the command line, run one command, map an error to one line.

use std::process::ExitCode;

use clap::Parser;

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
