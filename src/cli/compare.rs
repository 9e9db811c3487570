//! `cqlbench compare A B`: per metric, is B better, worse or not distinguishable from A. A and
//! B are each one run (compared interval by interval) or a set of repeated runs (compared run
//! by run: one figure per run). A warning comes first when the loads differ (open loop
//! against closed loop, or other targets), since their latencies do not compare. `--fail-if`
//! rules turn a significant change beyond a threshold into exit status
//! [`GATE_FAILED_EXIT`] and a `failed:` line, for a benchmark in CI.

use crate::stats::gate::Gate;

/// The exit status of a comparison that breaks a `--fail-if` rule: 1, as for any failure
/// (standard error then starts with `failed:`, bad input with `error:`).
pub const GATE_FAILED_EXIT: u8 = 1;

/// A `--fail-if` rule was broken: the comparison ran and said no.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct GateFailed(pub String);

/// Arguments of `cqlbench compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The baseline: a run result, or a set of repeated runs, given as a directory (its run
    /// results), a quoted glob ('out/03-base-r*.json'), runs index ids (`id:4,5,6`, as
    /// `cqlbench runs` lists them) or a tag's runs (`tag:baseline`).
    #[arg(value_name = "A")]
    pub a: String,
    /// What is compared with the baseline, given the same way: one run against one run, or a
    /// set of at least 2 runs against a set.
    #[arg(value_name = "B")]
    pub b: String,
    /// Fail (exit 1, `failed:` on stderr) when a change is beyond the threshold and
    /// significant (p < 0.05 over all the metrics the rules look at, Holm-corrected):
    /// 'p99 > +10%', 'throughput < -5%', 'read.p99 > +10%' (p50 and p99 are response times;
    /// without a kind, every operation kind's). Repeatable. A rule no compared metric matches
    /// is an error.
    #[arg(long = "fail-if", value_name = "RULE")]
    pub fail_if: Vec<Gate>,
}

pub fn run(args: CompareArgs) -> anyhow::Result<()> {
    let c = crate::report::compare::compare(&args.a, &args.b, &args.fail_if, &super::home())?;
    for why in &c.warnings {
        eprintln!("warning: {why}");
    }
    print!("{}", crate::console::compare_text(&c));
    if let Some(refused) = c.refused {
        return Err(refused.into());
    }
    match c.gate_failure() {
        Some(f) => Err(GateFailed(f).into()),
        None => Ok(()),
    }
}
