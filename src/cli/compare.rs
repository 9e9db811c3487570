//! `cqlbench compare A B`: per metric, is B better, worse or not distinguishable from A. A and
//! B are each one run (compared interval by interval) or a set of repeated runs (compared run
//! by run: one figure per run). A warning comes first when the loads differ (open loop
//! against closed loop, or other targets), since their latencies do not compare. `--fail-if`
//! rules turn a significant change beyond a threshold into exit status
//! [`GATE_FAILED_EXIT`] and a `failed:` line, for a benchmark in CI.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};

use crate::report::series::{self, Series};
use crate::result::{ResultFile, RunResult};
use crate::stats::compare::{
    ALPHA, CONFIDENCE, Direction, MetricComparison, Sampling, Scale, compare_scaled,
};
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

/// A run result and its path.
type Run = (PathBuf, RunResult);

/// A capacity search's result and its path.
type Search = (PathBuf, crate::result::capacity::CapacityResult);

/// What one side names: run results, capacity searches, and files that are neither (left
/// out, and said so).
struct Side {
    runs: Vec<Run>,
    searches: Vec<Search>,
    others: Vec<PathBuf>,
}

/// The results one side names: the file itself, the runs index's `id:N[,M…]` or `tag:NAME`,
/// or the results of a directory or a glob (sorted by path).
fn side(arg: &str, name: &str) -> anyhow::Result<Side> {
    let path = Path::new(arg);
    let mut found = Side {
        runs: Vec::new(),
        searches: Vec::new(),
        others: Vec::new(),
    };
    let mut take = |f: PathBuf, read: Result<ResultFile, crate::result::ResultError>, named| {
        match read {
            Ok(ResultFile::Run(r)) => found.runs.push((f, r)),
            Ok(ResultFile::Capacity(c)) => found.searches.push((f, c)),
            Ok(_) => found.others.push(f),
            // A file named on its own (or by the runs index) must read; in a directory or a
            // glob, other files may sit beside the results.
            Err(e) if named => return Err(anyhow!("{name}: {}: {e}", f.display())),
            Err(_) => found.others.push(f),
        }
        Ok(())
    };
    if path.is_file() {
        take(path.to_path_buf(), crate::result::read(path), true)?;
    } else if let Some(entries) = super::runs::named_by(arg)? {
        for e in entries {
            let read = crate::result::read(&e.path);
            let read = read.map_err(|err| anyhow!("{name}: id {}: {err}", e.id))?;
            take(e.path, Ok(read), true)?;
        }
    } else {
        let files: Vec<PathBuf> = if path.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| anyhow!("{arg}: {e}"))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
                .collect();
            files.sort();
            files
        } else if arg.contains(['*', '?', '[']) {
            let mut files: Vec<PathBuf> = glob::glob(arg)
                .map_err(|e| anyhow!("{name}: {arg} is not a usable pattern: {e}"))?
                .filter_map(Result::ok)
                .filter(|p| p.is_file())
                .collect();
            files.sort();
            files
        } else {
            // Neither a file, a directory nor a pattern: the system's own word for why.
            let why = std::fs::metadata(path)
                .err()
                .map_or_else(|| "not a file or directory".to_string(), |e| e.to_string());
            bail!("{arg}: {why}");
        };
        for f in files {
            let read = crate::result::read(&f);
            take(f, read, false)?;
        }
    }
    if found.runs.is_empty() && found.searches.is_empty() {
        bail!("{name}: no run or capacity results in {arg}");
    }
    refuse_shards(name, &found.runs)?;
    Ok(found)
}

/// A shard is a part of a run, not a run: compared as one (or several shards of one run as
/// repeats), its figures read as a run of a fraction of the rate, and a gate on them judges
/// nothing. Refused, naming the command that merges them.
fn refuse_shards(name: &str, runs: &[Run]) -> anyhow::Result<()> {
    let Some((path, shard)) = runs.iter().find_map(|(p, r)| {
        r.shard
            .as_ref()
            .filter(|_| r.merged.is_none())
            .map(|s| (p, s))
    }) else {
        return Ok(());
    };
    let of_run: Vec<String> = runs
        .iter()
        .filter(|(_, r)| r.shard.as_ref().is_some_and(|s| s.run_id == shard.run_id))
        .map(|(p, _)| p.display().to_string())
        .collect();
    // Shards given here may not be all of the run's: the merge needs every one.
    let files = if of_run.len() as u64 == shard.count {
        of_run.join(" ")
    } else {
        format!(
            "SHARD-FILES… (all {} shards of run {}; {} given here)",
            shard.count,
            shard.run_id,
            of_run.len()
        )
    };
    bail!(
        "{name}: {} is shard {}/{} of run {} (a part of a run, not a run): merge the shards first and compare the merged run: cqlbench merge {files} --out {}.json",
        path.display(),
        shard.index,
        shard.count,
        shard.run_id,
        shard.run_id
    )
}

fn row(c: &MetricComparison) -> Vec<String> {
    let (a, b) = c.means();
    vec![
        c.metric.clone(),
        crate::format::cell(Some(a), 2),
        crate::format::cell(Some(b), 2),
        format!("{:+.1}%", 100.0 * c.relative_diff),
        format!(
            "{:+.1}%..{:+.1}%",
            100.0 * c.relative_low,
            100.0 * c.relative_high
        ),
        format!("{:+.2}", c.cohen_d),
        format!("{:.1}/{:.1}", c.a.n_eff, c.b.n_eff),
        p_text(c.test.p),
        c.verdict.to_string(),
    ]
}

fn p_text(p: f64) -> String {
    if p < 1e-4 {
        "<0.0001".into()
    } else {
        format!("{p:.4}")
    }
}

/// The comparisons of the series both sides have, and what could not be compared.
fn compare_all(
    sa: &[Series],
    sb: &[Series],
    sampling: Sampling,
) -> (Vec<MetricComparison>, Vec<String>) {
    let mut done = Vec::new();
    let mut skipped = Vec::new();
    for x in sa {
        let Some(y) = sb.iter().find(|y| y.metric == x.metric) else {
            skipped.push(format!("{}: only in A", x.metric));
            continue;
        };
        // Latencies (lower is better) change by factors and scatter with a long tail:
        // compared on their logarithms, when every value has one.
        let positive = x.values.iter().chain(&y.values).all(|v| *v > 0.0);
        let scale = match x.direction {
            Direction::LowerIsBetter if positive => Scale::Log,
            _ => Scale::Linear,
        };
        match compare_scaled(
            &x.metric,
            x.direction,
            &x.values,
            &y.values,
            sampling,
            scale,
        ) {
            Ok(c) => done.push(c),
            Err(e) => skipped.push(e.to_string()),
        }
    }
    for y in sb
        .iter()
        .filter(|y| !sa.iter().any(|x| x.metric == y.metric))
    {
        skipped.push(format!("{}: only in B", y.metric));
    }
    (done, skipped)
}

/// How many compared metrics any of `gates` looks at.
fn family_size(gates: &[Gate], done: &[MetricComparison]) -> usize {
    done.iter()
        .filter(|c| gates.iter().any(|g| g.looks_at(&c.metric)))
        .count()
}

/// Each rule's verdict line, and the broken rules; `Err` for a rule no comparison matches.
/// Significance is decided over every comparison any rule looks at together (Holm), so that
/// the gate's chance of failing an unchanged system stays at 5% however many metrics it
/// watches.
fn judge(gates: &[Gate], done: &[MetricComparison]) -> anyhow::Result<(Vec<String>, Vec<String>)> {
    let mut lines = Vec::new();
    let mut broken = Vec::new();
    let family: Vec<&MetricComparison> = done
        .iter()
        .filter(|c| gates.iter().any(|g| g.looks_at(&c.metric)))
        .collect();
    let ps: Vec<f64> = family.iter().map(|c| c.test.p).collect();
    let significant: Vec<&str> = crate::stats::gate::holm(&ps, crate::stats::compare::ALPHA)
        .into_iter()
        .zip(&family)
        .filter(|(s, _)| *s)
        .map(|(_, c)| c.metric.as_str())
        .collect();
    for g in gates {
        let looked: Vec<&MetricComparison> =
            done.iter().filter(|c| g.looks_at(&c.metric)).collect();
        if looked.is_empty() {
            let compared: Vec<&str> = done.iter().map(|c| c.metric.as_str()).collect();
            bail!(
                "--fail-if '{g}': no compared metric matches it (compared: {})",
                compared.join(", ")
            );
        }
        let tripped: Vec<String> = looked
            .iter()
            .filter(|c| g.beyond(c) && significant.contains(&c.metric.as_str()))
            .map(|c| {
                format!(
                    "{} {:+.1}% (p {})",
                    c.metric,
                    100.0 * c.relative_diff,
                    p_text(c.test.p)
                )
            })
            .collect();
        if tripped.is_empty() {
            lines.push(format!("fail-if '{g}': held"));
        } else {
            lines.push(format!("fail-if '{g}': BROKEN by {}", tripped.join(", ")));
            broken.push(format!("'{g}' ({})", tripped.join(", ")));
        }
    }
    Ok((lines, broken))
}

pub fn run(args: CompareArgs) -> anyhow::Result<()> {
    let sa = side(&args.a, "A")?;
    let sb = side(&args.b, "B")?;
    // Capacity searches where both sides hold them (a search's directory holds its steps'
    // run results too: the searches are what is compared there).
    match (sa.searches.is_empty(), sb.searches.is_empty()) {
        (false, false) => return capacity(&args, sa, sb),
        (true, true) => {}
        (a_has, _) => bail!(
            "{} holds capacity searches and {} none: compare searches with searches, runs with runs",
            if a_has { "B" } else { "A" },
            if a_has { "A" } else { "B" }
        ),
    }
    if let Some(g) = args
        .fail_if
        .iter()
        .find(|g| g.metric == crate::stats::gate::GateMetric::Capacity)
    {
        bail!("--fail-if '{g}': a capacity rule needs capacity search results on both sides");
    }
    runs(&args, sa, sb)
}

/// `compare` of run results (one a side, or sets of repeated runs).
fn runs(args: &CompareArgs, sa: Side, sb: Side) -> anyhow::Result<()> {
    let (a, a_others, b, b_others) = (sa.runs, sa.others, sb.runs, sb.others);
    let (sampling, sa, sb) = match (a.len(), b.len()) {
        (1, 1) => {
            let series = |(p, r): &Run| series::of(r).map_err(|e| anyhow!("{}: {e}", p.display()));
            (Sampling::Intervals, series(&a[0])?, series(&b[0])?)
        }
        (x, y) if x >= 2 && y >= 2 => {
            let series = |set: &[Run]| {
                let runs: Vec<&RunResult> = set.iter().map(|(_, r)| r).collect();
                series::per_run(&runs).map_err(|(i, e)| anyhow!("{}: {e}", set[i].0.display()))
            };
            (Sampling::Runs, series(&a)?, series(&b)?)
        }
        (x, y) => bail!(
            "A holds {x} run(s) and B {y}: compare one run with one, or a set of at least 2 \
             runs with a set"
        ),
    };
    let (done, skipped) = compare_all(&sa, &sb, sampling);
    let (verdicts, broken) = judge(&args.fail_if, &done)?;
    // Runs whose loads differ: within a set, and between the sets' first runs.
    let mut warned = std::collections::BTreeSet::new();
    for (x, y) in a
        .iter()
        .skip(1)
        .map(|r| (&a[0], r))
        .chain(b.iter().skip(1).map(|r| (&b[0], r)))
        .chain(std::iter::once((&a[0], &b[0])))
    {
        if let Some(why) = crate::report::model::summary::not_comparable(&x.1, &y.1)
            && warned.insert(why.clone())
        {
            eprintln!("warning: {why}");
        }
    }
    println!(
        "B {} vs A {}: main phase, {}",
        describe(&b, |r| &r.env, &args.b, "runs"),
        describe(&a, |r| &r.env, &args.a, "runs"),
        match sampling {
            Sampling::Intervals => "measured one-second intervals",
            Sampling::Runs => "one figure per run",
        }
    );
    for (name, others) in [("A", &a_others), ("B", &b_others)] {
        if !others.is_empty() {
            let names: Vec<String> = others.iter().map(|p| p.display().to_string()).collect();
            println!("  {name}: not run results, left out: {}", names.join(", "));
        }
    }
    let ci = format!("{:.0}% CI", 100.0 * CONFIDENCE);
    let n = match sampling {
        Sampling::Intervals => "n_eff A/B",
        Sampling::Runs => "runs A/B",
    };
    let table = crate::format::Table {
        title: String::new(),
        header: [
            "metric",
            "A mean",
            "B mean",
            "change",
            ci.as_str(),
            "Cohen's d",
            n,
            "p",
            "verdict",
        ]
        .map(String::from)
        .to_vec(),
        rows: done.iter().map(row).collect(),
        text_columns: vec![4, 8],
    };
    print!("{}", table.text());
    for s in &skipped {
        println!("  not compared: {s}");
    }
    match sampling {
        Sampling::Intervals => println!(
            "Welch's t-test on per-interval values, sample sizes reduced for lag-1 \
             autocorrelation; p ≥ {ALPHA} is not distinguishable"
        ),
        Sampling::Runs => println!(
            "Welch's t-test on one figure per run (throughput, and each run's p50 and p99 of \
             its main phase); p ≥ {ALPHA} is not distinguishable"
        ),
    }
    if done.iter().any(|c| c.scale == Scale::Log) {
        println!(
            "response times are compared on their logarithms: their means are geometric, the \
             change is the ratio of the means and d is on the log scale"
        );
    }
    if !verdicts.is_empty() {
        println!(
            "gate: the {} compared metric(s) the rules look at are tested together \
             (Holm's correction, {ALPHA} family-wise)",
            family_size(&args.fail_if, &done)
        );
    }
    for v in &verdicts {
        println!("{v}");
    }
    gate_outcome(&broken, args.fail_if.len())
}

/// One side in a line: the file and its environment, or how many `noun` of which
/// environments.
fn describe<T>(set: &[(PathBuf, T)], env: impl Fn(&T) -> &String, arg: &str, noun: &str) -> String {
    match set {
        [(p, r)] => format!("{} ({})", p.display(), env(r)),
        items => {
            let envs: std::collections::BTreeSet<&str> =
                items.iter().map(|(_, r)| env(r).as_str()).collect();
            format!(
                "{arg}: {} {noun} ({})",
                items.len(),
                envs.into_iter().collect::<Vec<_>>().join(", ")
            )
        }
    }
}

/// The gate's outcome: [`GateFailed`] naming the `broken` rules of `rules`, else Ok.
fn gate_outcome(broken: &[String], rules: usize) -> anyhow::Result<()> {
    if broken.is_empty() {
        return Ok(());
    }
    Err(GateFailed(format!(
        "{} of {rules} --fail-if rule(s) broken: {}",
        broken.len(),
        broken.join("; ")
    ))
    .into())
}

/// `compare` of capacity searches: the change of capacity with its interval (the searches'
/// brackets and, with repeats, their spread), each search's bracket, and the `--fail-if`
/// capacity rules.
fn capacity(args: &CompareArgs, a: Side, b: Side) -> anyhow::Result<()> {
    use crate::report::capacity_change;
    if let Some(g) = args
        .fail_if
        .iter()
        .find(|g| g.metric != crate::stats::gate::GateMetric::Capacity)
    {
        bail!(
            "--fail-if '{g}': capacity searches are compared by their capacity only: write 'capacity < -N%' or 'capacity > +N%'"
        );
    }
    let sa: Vec<&crate::result::capacity::CapacityResult> =
        a.searches.iter().map(|(_, c)| c).collect();
    let sb: Vec<&crate::result::capacity::CapacityResult> =
        b.searches.iter().map(|(_, c)| c).collect();
    let change = capacity_change::compare(&sa, &sb)?;
    println!(
        "B {} vs A {}: capacity (the highest passing step's throughput)",
        describe(&b.searches, |c| &c.env, &args.b, "searches"),
        describe(&a.searches, |c| &c.env, &args.a, "searches")
    );
    let pct = |x: f64| format!("{:+.1}%", 100.0 * x);
    let upper = |x: Option<f64>| x.map_or("unbounded".to_string(), pct);
    let (n, p) = match &change.repeats {
        Some(t) => (
            format!("{}/{}", change.a.len(), change.b.len()),
            p_text(t.test.p),
        ),
        None => ("1/1".to_string(), "-".to_string()),
    };
    let table = crate::format::Table {
        title: String::new(),
        header: [
            "metric",
            "A mean",
            "B mean",
            "change",
            "interval",
            "searches A/B",
            "p",
            "verdict",
        ]
        .map(String::from)
        .to_vec(),
        rows: vec![vec![
            capacity_change::METRIC.to_string(),
            crate::format::cell(Some(change.a_mean), 1),
            crate::format::cell(Some(change.b_mean), 1),
            pct(change.relative_diff),
            format!("{}..{}", pct(change.low), upper(change.high)),
            n,
            p,
            change.verdict.to_string(),
        ]],
        text_columns: vec![4, 7],
    };
    print!("{}", table.text());
    list_searches(&a, &b, &change);
    println!(
        "the interval is the brackets' (the capacity lies between a search's highest passing step \
         and its lowest failing step's rate: {}..{}){}",
        pct(change.bracket_low),
        upper(change.bracket_high),
        match &change.repeats {
            Some(t) => format!(
                " together with the {:.0}% interval over the repeated searches ({}..{}, Welch's t-test)",
                100.0 * CONFIDENCE,
                pct(t.relative_low),
                pct(t.relative_high)
            ),
            None => "; one search a side has no spread to measure: repeat the searches for one"
                .to_string(),
        }
    );
    if change.repeats.is_none() {
        println!(
            "one search a side: the brackets hold each search's step resolution, not how far apart repeated searches land; repeat the searches (3 a side) for a verdict that does"
        );
        if let Some(g) = args.fail_if.first() {
            bail!(
                "--fail-if '{g}': a capacity gate needs repeated searches (at least 2 a side), so that the spread between searches is measured; one a side cannot tell a change from it"
            );
        }
    }
    capacity_gate(args, &change)
}

/// Each search's bracket, and what the sides hold besides searches.
fn list_searches(a: &Side, b: &Side, change: &crate::report::capacity_change::CapacityChange) {
    use crate::report::capacity_change::Bracket;
    let bracket = |x: &Bracket| match x.high {
        Some(h) => format!("{:.0}..{h:.0}", x.low),
        None => format!("{:.0}..(no failing step)", x.low),
    };
    for (name, set, brackets) in [("A", &a.searches, &change.a), ("B", &b.searches, &change.b)] {
        for ((path, _), x) in set.iter().zip(brackets) {
            println!(
                "  {name} {}: capacity in {} ops/s",
                path.display(),
                bracket(x)
            );
        }
    }
    for (name, side) in [("A", a), ("B", b)] {
        if !side.runs.is_empty() || !side.others.is_empty() {
            println!(
                "  {name}: {} step run result(s) and {} other file(s) beside the searches, left out",
                side.runs.len(),
                side.others.len()
            );
        }
    }
}

/// The `--fail-if` capacity rules on `change`: each rule's line, and the outcome.
fn capacity_gate(
    args: &CompareArgs,
    change: &crate::report::capacity_change::CapacityChange,
) -> anyhow::Result<()> {
    let pct = |x: f64| format!("{:+.1}%", 100.0 * x);
    let significant = change.repeats.as_ref().is_some_and(|t| t.test.p < ALPHA);
    let mut broken = Vec::new();
    for g in &args.fail_if {
        let tripped = g.beyond_change(change.relative_diff) && change.established(significant);
        if tripped {
            println!(
                "fail-if '{g}': BROKEN by {} {}",
                crate::report::capacity_change::METRIC,
                pct(change.relative_diff)
            );
            broken.push(format!("'{g}' (capacity {})", pct(change.relative_diff)));
        } else {
            println!("fail-if '{g}': held");
        }
    }
    gate_outcome(&broken, args.fail_if.len())
}
