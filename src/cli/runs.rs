//! `cqlbench runs`: the runs index, listed and filtered. Each listing first brings the
//! index up to date with the files under its directories (the cqlbench home's `results/`,
//! `scenarios/` and `probes/`, and every directory added with `--import`).

use std::path::{Path, PathBuf};

use crate::runs_index::{Entry, Filter, RunsIndex};

/// Arguments of `cqlbench runs`.
#[derive(Debug, clap::Args)]
pub struct RunsArgs {
    /// Add a directory of results made elsewhere (a scenario's output, `--out` paths, another
    /// machine's results): searched from now on, 6 levels deep. Repeatable.
    #[arg(long, value_name = "DIR")]
    pub import: Vec<PathBuf>,
    /// Only this kind: run, shard, capacity, probe, verify, scaling.
    #[arg(long, value_parser = ["run", "shard", "capacity", "probe", "verify", "scaling"])]
    pub kind: Option<String>,
    /// Only this environment.
    #[arg(long)]
    pub env: Option<String>,
    /// Only workloads whose label contains this (keyvalue, "profile users.yaml", zipf).
    #[arg(long)]
    pub workload: Option<String>,
    /// Only results carrying this tag (`run --tag`).
    #[arg(long, value_parser = crate::spec::probe::parse_tag)]
    pub tag: Option<String>,
    /// Only this status: completed, running, interrupted, too_many_errors, failed (probes:
    /// complete, incomplete; verifications: ok, failed).
    #[arg(long, value_parser = crate::runs_index::parse_status)]
    pub status: Option<String>,
    /// Only results started on or after this day (YYYY-MM-DD, UTC).
    #[arg(long, value_name = "DATE", value_parser = parse_day)]
    pub since: Option<i64>,
    /// Only the latest N.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub last: Option<u32>,
}

/// A `--since` that is not a day.
#[derive(Debug, thiserror::Error)]
#[error("'{text}' is not a day as YYYY-MM-DD: {source}")]
struct NotADay {
    text: String,
    source: chrono::ParseError,
}

fn parse_day(s: &str) -> Result<i64, NotADay> {
    let d = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").map_err(|source| NotADay {
        text: s.to_string(),
        source,
    })?;
    Ok(d.and_hms_opt(0, 0, 0)
        .map(|t| t.and_utc().timestamp())
        .unwrap_or_default())
}

/// The runs index under `home`, its default directories known.
pub fn open(home: &Path) -> anyhow::Result<RunsIndex> {
    Ok(RunsIndex::at_home(home)?)
}

/// The entries `arg` names in the runs index ([`crate::runs_index::named_by`]).
pub fn named_by(arg: &str) -> anyhow::Result<Option<Vec<Entry>>> {
    Ok(crate::runs_index::named_by(&super::home(), arg)?)
}

/// `paths` with each `id:N[,M…]` among them replaced by those results' paths.
pub fn resolve_paths(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        match p.to_str().map(named_by).transpose()?.flatten() {
            Some(entries) => out.extend(entries.into_iter().map(|e| e.path)),
            None => out.push(p.clone()),
        }
    }
    Ok(out)
}

fn day_time(unix_s: i64) -> String {
    chrono::DateTime::from_timestamp(unix_s, 0)
        .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default()
}

pub fn run(args: RunsArgs) -> anyhow::Result<()> {
    let home = super::home();
    let mut c = open(&home)?;
    for dir in &args.import {
        if c.add_root(dir)? {
            println!("added {}", dir.display());
        }
    }
    let synced = c.sync()?;
    let entries = c.list(&Filter {
        kind: args.kind,
        env: args.env,
        workload: args.workload,
        status: args.status,
        since_unix_s: args.since,
        tag: args.tag,
        last: args.last.map(|n| n as usize),
    })?;
    let table = crate::format::Table {
        title: String::new(),
        header: [
            "id",
            "started",
            "kind",
            "env",
            "workload",
            "tags",
            "status",
            "ops/s",
            "p99 ms",
            "cassandra",
            "path",
        ]
        .map(String::from)
        .to_vec(),
        rows: entries
            .iter()
            .map(|e| {
                vec![
                    e.id.to_string(),
                    day_time(e.started_unix_s),
                    e.kind.clone(),
                    e.env.clone(),
                    e.workload.clone(),
                    if e.tags.is_empty() {
                        "-".into()
                    } else {
                        e.tags.join(",")
                    },
                    e.status.clone(),
                    crate::format::cell(e.ops_per_s, 0),
                    crate::format::cell(e.p99_ms, 2),
                    e.cassandra.clone().unwrap_or_else(|| "-".into()),
                    e.path.display().to_string(),
                ]
            })
            .collect(),
        text_columns: vec![1, 2, 3, 4, 5, 6, 9, 10],
    };
    print!("{}", table.text());
    let roots: Vec<String> = c.roots()?.iter().map(|r| r.display().to_string()).collect();
    let searched = match roots.is_empty() {
        true => "no directory yet".to_string(),
        false => roots.join(", "),
    };
    let lone = match c.files()?.len() {
        0 => String::new(),
        n => format!("; and {n} result file(s) added as they were written"),
    };
    println!(
        "{} of {} results (index updated: {} added, {} changed, {} gone; searched: {searched}{lone})",
        entries.len(),
        c.len()?,
        synced.added,
        synced.updated,
        synced.removed,
    );
    Ok(())
}
