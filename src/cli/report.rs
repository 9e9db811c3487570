//! `cqlbench report`: environments side by side from run and probe result files.

use std::path::PathBuf;

use anyhow::Context;

use crate::report::{self, Report};

/// Arguments of `cqlbench report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Run results (`cqlbench run --out`) and probe results (`cqlbench probe`), in any order;
    /// grouped by their environment label.
    #[arg(required = true, value_name = "RESULTS")]
    pub results: Vec<PathBuf>,

    /// Markdown tables instead of terminal text.
    #[arg(long, conflicts_with = "csv")]
    pub markdown: bool,

    /// CSV: one row per scenario and environment.
    #[arg(long)]
    pub csv: bool,

    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

pub fn run(args: ReportArgs) -> anyhow::Result<()> {
    let inputs = report::load_all(&args.results)?;
    let model = Report::build(&inputs)?;
    let rendered = if args.markdown {
        report::markdown::render(&model)
    } else if args.csv {
        report::csv::render(&model)
    } else {
        report::text::render(&model)
    };
    match &args.out {
        Some(path) => crate::fsutil::write_atomic(path, rendered.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?,
        None => print!("{rendered}"),
    }
    Ok(())
}
