//! `cqlbench report`: environments side by side from run, capacity-search and probe result
//! files; tables on standard output (or `--out`), optionally an HTML page with charts.

use std::path::PathBuf;

use anyhow::Context;

use crate::report::{self, Report};

/// Arguments of `cqlbench report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Run results (`cqlbench run --out`), capacity-search results and probe results
    /// (`cqlbench probe`), in any order; grouped by their environment label.
    #[arg(required = true, value_name = "RESULTS")]
    pub results: Vec<PathBuf>,

    /// Markdown tables instead of terminal text.
    #[arg(long, conflicts_with = "csv")]
    pub markdown: bool,

    /// CSV: one row per scenario and environment, and per capacity-search step.
    #[arg(long)]
    pub csv: bool,

    /// Write the tables (text, Markdown or CSV) to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Also write one self-contained HTML page (tables and SVG charts, no external resources)
    /// to FILE. The tables are still printed, or written to --out when it is given.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

pub fn run(args: ReportArgs) -> anyhow::Result<()> {
    let inputs = report::load_all(&args.results)?;
    let model = Report::build(&inputs)?;
    if let Some(path) = &args.html {
        crate::fsutil::write_atomic(path, report::html::render(&model).as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
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
