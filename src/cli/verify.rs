//! `cqlbench verify RUN.json`: are the writes the cluster acknowledged still there?

use std::path::PathBuf;
use std::time::Duration;

use anyhow::bail;
use clap::Args;

use crate::load::session::Credentials;
use crate::spec::{Cl, parse_duration};
use crate::verify::{VerifySpec, verify, write};

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The run result (its write ledger, RUN.ledger, is next to it).
    pub result: PathBuf,
    /// Consistency level of the reads (QUORUM after QUORUM writes; ALL after writes at ONE).
    #[arg(long, value_enum, ignore_case = true, default_value = "QUORUM")]
    pub consistency: Cl,
    /// Reads in flight.
    #[arg(long, default_value_t = 128)]
    pub concurrency: usize,
    /// Contact points `host[:port],…` [default: the run's].
    #[arg(long, value_delimiter = ',', value_parser = crate::spec::workload::parse_host)]
    pub hosts: Vec<String>,
    /// Credentials file (two lines: user, password); else CQLBENCH_USERNAME/CQLBENCH_PASSWORD.
    #[arg(long)]
    pub credentials_file: Option<PathBuf>,
    /// Per-read timeout.
    #[arg(long, value_parser = parse_duration, default_value = "10s")]
    pub timeout: Duration,
    /// Attempts per read before the row counts as unreadable.
    #[arg(long, default_value_t = 4)]
    pub attempts: u32,
    /// Read from inside this network namespace [default: the one the run ran in, if any].
    #[arg(long, value_name = "NAME")]
    pub netns: Option<String>,
}

pub fn run(a: VerifyArgs) -> anyhow::Result<()> {
    if a.concurrency == 0 {
        bail!("--concurrency must be at least 1");
    }
    if a.attempts == 0 {
        bail!("--attempts must be at least 1");
    }
    if a.timeout < Duration::from_millis(10) {
        bail!("--timeout must be at least 10ms");
    }
    let credentials = match &a.credentials_file {
        Some(f) => Some(Credentials::from_file(f)?),
        None => Credentials::from_env_values(
            std::env::var("CQLBENCH_USERNAME").ok(),
            std::env::var("CQLBENCH_PASSWORD").ok(),
        ),
    };
    // Where the run's client was (a lab's namespace), unless told otherwise.
    let netns = match (&a.netns, crate::netns::current()) {
        (Some(ns), _) => Some(ns.clone()),
        // Started inside a namespace already: stay there.
        (None, Some(_)) => None,
        (None, None) => crate::result::file::read_run(&a.result)
            .ok()
            .and_then(|r| r.target.netns),
    };
    if let Some(ns) = &netns {
        super::enter_netns(ns)?;
    }
    let spec = VerifySpec {
        // Stored absolute, so a report run from another directory still finds the run.
        run: std::fs::canonicalize(&a.result).unwrap_or_else(|_| a.result.clone()),
        consistency: a.consistency,
        concurrency: a.concurrency,
        hosts: a.hosts,
        credentials,
        timeout: a.timeout,
        attempts: a.attempts,
    };
    let r = verify(&spec, &mut |done, total| {
        eprintln!("verify: {done} of {total} rows read");
    })?;
    println!("{}", crate::console::verify_text(&r));
    let path = write(&r, &a.result)?;
    println!("verify result: {} ({:.1}s)", path.display(), r.elapsed_s);
    if !r.passed() {
        bail!(
            "{} of {} acknowledged rows missing, {} different, {} unreadable",
            r.missing,
            r.acked_rows,
            r.different,
            r.unreadable
        );
    }
    Ok(())
}
