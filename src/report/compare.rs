//! `cqlbench compare A B`, its logic: per metric, is B better, worse or not distinguishable
//! from A. A and B are each one run (compared interval by interval) or a set of repeated runs
//! (compared run by run: one figure per run), or capacity searches (compared by their
//! capacity). Runs whose loads differ (open loop against closed loop, other targets) are
//! named, since their latencies do not compare. `--fail-if` rules are judged here: a rule is
//! broken by a significant change beyond its threshold. The console renders the
//! [`Comparison`]; the command turns broken rules into its exit status.

use std::path::{Path, PathBuf};

use crate::error::Invalid;

use crate::report::capacity_change::{self, Bracket, CapacityChange};
use crate::report::series::{self, Series};
use crate::result::capacity::CapacityResult;
use crate::result::{ResultFile, RunResult};
use crate::stats::compare::{ALPHA, Direction, MetricComparison, Sampling, Scale, compare_scaled};
use crate::stats::gate::{Gate, GateMetric};

/// A run result and its path.
type Run = (PathBuf, RunResult);

/// A capacity search's result and its path.
type Search = (PathBuf, CapacityResult);

/// What one side names: run results, capacity searches, and files that are neither (left
/// out, and said so).
struct Side {
    runs: Vec<Run>,
    searches: Vec<Search>,
    others: Vec<PathBuf>,
}

/// A comparison of A and B, and its rules' verdicts.
#[derive(Debug)]
pub struct Comparison {
    /// Each side in a line: its file and environment, or how many of which environments.
    pub a: String,
    pub b: String,
    /// Why some of the runs' latencies do not compare (their loads differ), once each.
    pub warnings: Vec<String>,
    pub body: Body,
    /// Each `--fail-if` rule and what broke it (nothing: it held).
    pub verdicts: Vec<RuleVerdict>,
    /// A gate that cannot judge what was compared (capacity rules on one search a side):
    /// the comparison is shown, then refused.
    pub refused: Option<Invalid>,
}

/// What was compared.
#[derive(Debug)]
pub enum Body {
    Runs(Runs),
    Capacity(Box<Capacity>),
}

/// Run results compared metric by metric.
#[derive(Debug)]
pub struct Runs {
    pub sampling: Sampling,
    /// Files of a side that are not run results (side, files).
    pub left_out: Vec<(&'static str, Vec<PathBuf>)>,
    pub compared: Vec<MetricComparison>,
    /// What could not be compared, and why.
    pub skipped: Vec<String>,
    /// How many compared metrics the rules look at (tested together).
    pub family: usize,
}

/// Capacity searches compared by their capacity.
#[derive(Debug)]
pub struct Capacity {
    pub change: CapacityChange,
    /// Each search's bracket (side, its path, its bracket).
    pub searches: Vec<(&'static str, PathBuf, Bracket)>,
    /// Step run results and other files beside a side's searches (side, runs, others).
    pub left_out: Vec<(&'static str, usize, usize)>,
}

/// A `--fail-if` rule's verdict: what broke it (empty: it held).
#[derive(Debug)]
pub struct RuleVerdict {
    pub rule: Gate,
    pub broken_by: Vec<String>,
}

impl Comparison {
    /// The broken rules in one line, when any is (the command's failure).
    pub fn gate_failure(&self) -> Option<String> {
        let broken: Vec<String> = self
            .verdicts
            .iter()
            .filter(|v| !v.broken_by.is_empty())
            .map(|v| format!("'{}' ({})", v.rule, v.broken_by.join(", ")))
            .collect();
        (!broken.is_empty()).then(|| {
            format!(
                "{} of {} --fail-if rule(s) broken: {}",
                broken.len(),
                self.verdicts.len(),
                broken.join("; ")
            )
        })
    }
}

/// Compares what `a` and `b` name (a file, a directory, a quoted glob, or the runs index's
/// `id:N[,M…]` or `tag:NAME` under `home`) under the `rules`.
pub fn compare(a: &str, b: &str, rules: &[Gate], home: &Path) -> Result<Comparison, Invalid> {
    let sa = side(a, "A", home)?;
    let sb = side(b, "B", home)?;
    // Capacity searches where both sides hold them (a search's directory holds its steps'
    // run results too: the searches are what is compared there).
    match (sa.searches.is_empty(), sb.searches.is_empty()) {
        (false, false) => return capacity((a, b), rules, sa, sb),
        (true, true) => {}
        (a_has, _) => {
            return Err(crate::invalid!(
                "{} holds capacity searches and {} none: compare searches with searches, runs with runs",
                if a_has { "B" } else { "A" },
                if a_has { "A" } else { "B" }
            ));
        }
    }
    if let Some(g) = rules.iter().find(|g| g.metric == GateMetric::Capacity) {
        return Err(crate::invalid!(
            "--fail-if '{g}': a capacity rule needs capacity search results on both sides"
        ));
    }
    runs((a, b), rules, sa, sb)
}

/// The results one side names: the file itself, the runs index's `id:N[,M…]` or `tag:NAME`,
/// or the results of a directory or a glob (sorted by path).
fn side(arg: &str, name: &str, home: &Path) -> Result<Side, Invalid> {
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
            Err(e) if named => return Err(crate::invalid!("{name}: {}: {e}", f.display())),
            Err(_) => found.others.push(f),
        }
        Ok(())
    };
    if path.is_file() {
        take(path.to_path_buf(), crate::result::read(path), true)?;
    } else if let Some(entries) = crate::runs_index::named_by(home, arg)? {
        for e in entries {
            let read = crate::result::read(&e.path);
            let read = read.map_err(|err| crate::invalid!("{name}: id {}: {err}", e.id))?;
            take(e.path, Ok(read), true)?;
        }
    } else {
        for f in files_of(arg, name)? {
            let read = crate::result::read(&f);
            take(f, read, false)?;
        }
    }
    if found.runs.is_empty() && found.searches.is_empty() {
        return Err(crate::invalid!(
            "{name}: no run or capacity results in {arg}"
        ));
    }
    refuse_shards(name, &found.runs)?;
    Ok(found)
}

/// The files of a directory (its `.json` files) or a glob, sorted by path.
fn files_of(arg: &str, name: &str) -> Result<Vec<PathBuf>, Invalid> {
    let path = Path::new(arg);
    let mut files: Vec<PathBuf> = if path.is_dir() {
        std::fs::read_dir(path)
            .map_err(|e| crate::invalid!("{arg}: {e}"))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
            .collect()
    } else if arg.contains(['*', '?', '[']) {
        glob::glob(arg)
            .map_err(|e| crate::invalid!("{name}: {arg} is not a usable pattern: {e}"))?
            .filter_map(Result::ok)
            .filter(|p| p.is_file())
            .collect()
    } else {
        // Neither a file, a directory nor a pattern: the system's own word for why.
        let why = std::fs::metadata(path)
            .err()
            .map_or_else(|| "not a file or directory".to_string(), |e| e.to_string());
        return Err(crate::invalid!("{arg}: {why}"));
    };
    files.sort();
    Ok(files)
}

/// A shard is a part of a run, not a run: compared as one (or several shards of one run as
/// repeats), its figures read as a run of a fraction of the rate, and a gate on them judges
/// nothing. Refused, naming the command that merges them.
fn refuse_shards(name: &str, runs: &[Run]) -> Result<(), Invalid> {
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
    Err(crate::invalid!(
        "{name}: {} is shard {}/{} of run {} (a part of a run, not a run): merge the shards first and compare the merged run: cqlbench merge {files} --out {}.json",
        path.display(),
        shard.index,
        shard.count,
        shard.run_id,
        shard.run_id
    ))
}

/// `compare` of run results (one a side, or sets of repeated runs).
fn runs(args: (&str, &str), rules: &[Gate], sa: Side, sb: Side) -> Result<Comparison, Invalid> {
    let (a, a_others, b, b_others) = (sa.runs, sa.others, sb.runs, sb.others);
    let (sampling, sa, sb) = match (a.len(), b.len()) {
        (1, 1) => {
            let series =
                |(p, r): &Run| series::of(r).map_err(|e| crate::invalid!("{}: {e}", p.display()));
            (Sampling::Intervals, series(&a[0])?, series(&b[0])?)
        }
        (x, y) if x >= 2 && y >= 2 => {
            let series = |set: &[Run]| {
                let runs: Vec<&RunResult> = set.iter().map(|(_, r)| r).collect();
                series::per_run(&runs)
                    .map_err(|(i, e)| crate::invalid!("{}: {e}", set[i].0.display()))
            };
            (Sampling::Runs, series(&a)?, series(&b)?)
        }
        (x, y) => {
            return Err(crate::invalid!(
                "A holds {x} run(s) and B {y}: compare one run with one, or a set of at least 2 \
                 runs with a set"
            ));
        }
    };
    let (compared, skipped) = compare_all(&sa, &sb, sampling);
    let verdicts = judge(rules, &compared)?;
    // Runs whose loads differ: within a set, and between the sets' first runs.
    let mut warnings = Vec::new();
    for (x, y) in a
        .iter()
        .skip(1)
        .map(|r| (&a[0], r))
        .chain(b.iter().skip(1).map(|r| (&b[0], r)))
        .chain(std::iter::once((&a[0], &b[0])))
    {
        if let Some(why) = crate::report::model::summary::not_comparable(&x.1, &y.1)
            && !warnings.contains(&why)
        {
            warnings.push(why);
        }
    }
    let left_out = [("A", a_others), ("B", b_others)]
        .into_iter()
        .filter(|(_, o)| !o.is_empty())
        .collect();
    Ok(Comparison {
        a: describe(&a, |r| &r.env, args.0, "runs"),
        b: describe(&b, |r| &r.env, args.1, "runs"),
        warnings,
        body: Body::Runs(Runs {
            sampling,
            left_out,
            family: family_size(rules, &compared),
            compared,
            skipped,
        }),
        verdicts,
        refused: None,
    })
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

/// Each rule's verdict; `Err` for a rule no comparison matches. Significance is decided over
/// every comparison any rule looks at together (Holm), so that the gate's chance of failing an
/// unchanged system stays at 5% however many metrics it watches.
fn judge(gates: &[Gate], done: &[MetricComparison]) -> Result<Vec<RuleVerdict>, Invalid> {
    let family: Vec<&MetricComparison> = done
        .iter()
        .filter(|c| gates.iter().any(|g| g.looks_at(&c.metric)))
        .collect();
    let ps: Vec<f64> = family.iter().map(|c| c.test.p).collect();
    let significant: Vec<&str> = crate::stats::gate::holm(&ps, ALPHA)
        .into_iter()
        .zip(&family)
        .filter(|(s, _)| *s)
        .map(|(_, c)| c.metric.as_str())
        .collect();
    let mut verdicts = Vec::new();
    for g in gates {
        let looked: Vec<&MetricComparison> =
            done.iter().filter(|c| g.looks_at(&c.metric)).collect();
        if looked.is_empty() {
            let compared: Vec<&str> = done.iter().map(|c| c.metric.as_str()).collect();
            return Err(crate::invalid!(
                "--fail-if '{g}': no compared metric matches it (compared: {})",
                compared.join(", ")
            ));
        }
        let broken_by = looked
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
        verdicts.push(RuleVerdict {
            rule: g.clone(),
            broken_by,
        });
    }
    Ok(verdicts)
}

/// A p-value as the tables show it.
pub fn p_text(p: f64) -> String {
    if p < 1e-4 {
        "<0.0001".into()
    } else {
        format!("{p:.4}")
    }
}

/// A change as the tables show it: `+12.3%`.
pub fn pct(x: f64) -> String {
    format!("{:+.1}%", 100.0 * x)
}

/// `compare` of capacity searches: the change of capacity with its interval (the searches'
/// brackets and, with repeats, their spread), each search's bracket, and the `--fail-if`
/// capacity rules.
fn capacity(args: (&str, &str), rules: &[Gate], a: Side, b: Side) -> Result<Comparison, Invalid> {
    if let Some(g) = rules.iter().find(|g| g.metric != GateMetric::Capacity) {
        return Err(crate::invalid!(
            "--fail-if '{g}': capacity searches are compared by their capacity only: write 'capacity < -N%' or 'capacity > +N%'"
        ));
    }
    let sa: Vec<&CapacityResult> = a.searches.iter().map(|(_, c)| c).collect();
    let sb: Vec<&CapacityResult> = b.searches.iter().map(|(_, c)| c).collect();
    let change = capacity_change::compare(&sa, &sb)?;
    let mut searches = Vec::new();
    for (name, set, brackets) in [("A", &a.searches, &change.a), ("B", &b.searches, &change.b)] {
        for ((path, _), x) in set.iter().zip(brackets) {
            searches.push((name, path.clone(), *x));
        }
    }
    let left_out = [("A", &a), ("B", &b)]
        .into_iter()
        .filter(|(_, s)| !s.runs.is_empty() || !s.others.is_empty())
        .map(|(name, s)| (name, s.runs.len(), s.others.len()))
        .collect();
    // One search a side measures no spread between searches: a gate cannot tell a change
    // from it.
    let refused = rules.first().filter(|_| change.repeats.is_none()).map(|g| {
        crate::invalid!(
            "--fail-if '{g}': a capacity gate needs repeated searches (at least 2 a side), so that the spread between searches is measured; one a side cannot tell a change from it"
        )
    });
    let verdicts = if refused.is_some() {
        Vec::new()
    } else {
        capacity_verdicts(rules, &change)
    };
    Ok(Comparison {
        a: describe(&a.searches, |c| &c.env, args.0, "searches"),
        b: describe(&b.searches, |c| &c.env, args.1, "searches"),
        warnings: Vec::new(),
        body: Body::Capacity(Box::new(Capacity {
            change,
            searches,
            left_out,
        })),
        verdicts,
        refused,
    })
}

/// The `--fail-if` capacity rules' verdicts on `change`.
fn capacity_verdicts(rules: &[Gate], change: &CapacityChange) -> Vec<RuleVerdict> {
    let significant = change.repeats.as_ref().is_some_and(|t| t.test.p < ALPHA);
    rules
        .iter()
        .map(|g| {
            let tripped = g.beyond_change(change.relative_diff) && change.established(significant);
            RuleVerdict {
                rule: g.clone(),
                broken_by: if tripped {
                    vec![format!(
                        "{} {}",
                        capacity_change::METRIC,
                        pct(change.relative_diff)
                    )]
                } else {
                    Vec::new()
                },
            }
        })
        .collect()
}
