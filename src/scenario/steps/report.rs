//! The report (`cqlbench report`, and the end of a scenario): environments side by side from
//! run, capacity-search and probe result files; tables on standard output (or `--out`),
//! optionally an HTML page with charts.

use std::path::PathBuf;

use crate::report::{self, Report};
use crate::scenario::ScenarioError;

/// What to report, and how.
#[derive(Debug, Clone, clap::Args)]
pub struct ReportStep {
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

    /// Price an environment as deployed: ENV=INSTANCE,NODES[,DISK][,k8s:SERVICE][,TERM], e.g.
    /// ec2=r5.2xlarge,3,gp3:4TB,1y or eks=r5.2xlarge,3,gp2:4TB,k8s:eks (TERM: on-demand, 1y
    /// or 3y; SERVICE: eks, gke or aks, whose cluster fee is added); repeatable. ENV must be an
    /// environment of the results. The report adds $/month and $ per 1,000 ops/s of the best
    /// throughput the environment measured (its highest capacity verdict, else its best
    /// closed-loop run: the best of repeated runs, as {NAME.ops} references take), with the
    /// hardware it was measured on beside the instance priced.
    #[arg(long, value_name = "DEPLOYMENT")]
    pub deployment: Vec<crate::report::cost::Deployment>,

    /// Price catalogue (YAML) instead of the built-in one, for --deployment.
    #[arg(long, value_name = "FILE")]
    pub catalog: Option<PathBuf>,

    /// Add the history of one figure: every run in the runs index (`cqlbench runs`)
    /// of the same environment and workload as the report's runs, over time, this report's
    /// runs marked — a table, and a chart in --html. FIGURE: throughput, p50, p90, p99, p999,
    /// max, or KIND.pNN (read.p99).
    #[arg(long, value_name = "FIGURE")]
    pub history: Option<crate::report::history::Figure>,
}

/// Writes what `args` asks for; the tables as text when they go to no file (`--out`), for
/// the caller to show. `index` (up to date) gives `--history` its runs.
pub fn run(
    args: &ReportStep,
    index: Option<&crate::runs_index::RunsIndex>,
) -> Result<Option<String>, ScenarioError> {
    for path in args.html.iter().chain(&args.out) {
        crate::fsutil::check_out_path(path)?;
    }
    let inputs = report::load_all(&args.results)?;
    let mut model = Report::build(&inputs)?;
    if let Some(figure) = &args.history {
        let index = index.ok_or_else(|| {
            ScenarioError::Invalid(crate::invalid!("--history needs the runs index"))
        })?;
        let runs: Vec<(&std::path::Path, &crate::result::RunResult)> = inputs
            .iter()
            .filter_map(|i| match i {
                report::Input::Run { path, result } if result.shard.is_none() => {
                    Some((path.as_path(), result))
                }
                _ => None,
            })
            .collect();
        if runs.is_empty() {
            return Err(ScenarioError::Invalid(crate::invalid!(
                "--history follows the environments and workloads of run results: give at least one run"
            )));
        }
        model.history = Some(report::history::build(figure, index, &runs)?);
    }
    if !args.deployment.is_empty() {
        let cat = match &args.catalog {
            Some(p) => crate::prices::load_catalog(p)?,
            None => crate::prices::default_catalog()?,
        };
        crate::report::cost::price(&mut model, &args.deployment, &cat)?;
    }
    if let Some(path) = &args.html {
        crate::fsutil::write_atomic(path, report::html::render(&model).as_bytes())
            .map_err(|e| ScenarioError::io("writing", path, e))?;
    }
    let rendered = if args.markdown {
        report::markdown::render(&model)
    } else if args.csv {
        report::csv::render(&model)
    } else {
        report::text::render(&model)
    };
    match &args.out {
        Some(path) => {
            crate::fsutil::write_atomic(path, rendered.as_bytes())
                .map_err(|e| ScenarioError::io("writing", path, e))?;
            Ok(None)
        }
        None => Ok(Some(rendered)),
    }
}
