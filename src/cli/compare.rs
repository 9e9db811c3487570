//! `cqlbench compare A B`: per metric, is run B better, worse or not distinguishable from A;
//! a warning first when the two runs' loads differ (open loop against closed loop, or other
//! targets), since their latencies do not compare.

use std::path::PathBuf;

use anyhow::anyhow;

use crate::report::series;
use crate::result::RunResult;
use crate::stats::compare::{ALPHA, MetricComparison, compare};

/// Arguments of `cqlbench compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The baseline run result.
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// The run result compared with the baseline.
    #[arg(value_name = "B")]
    pub b: PathBuf,
}

fn row(c: &MetricComparison) -> Vec<String> {
    vec![
        c.metric.clone(),
        crate::format::cell(Some(c.a.mean), 2),
        crate::format::cell(Some(c.b.mean), 2),
        format!("{:+.1}%", 100.0 * c.relative_diff),
        format!("{:+.2}", c.cohen_d),
        format!("{:.1}/{:.1}", c.a.n_eff, c.b.n_eff),
        if c.test.p < 1e-4 {
            "<0.0001".into()
        } else {
            format!("{:.4}", c.test.p)
        },
        c.verdict.to_string(),
    ]
}

pub fn run(args: CompareArgs) -> anyhow::Result<()> {
    let read = |p: &PathBuf| RunResult::read(p).map_err(|e| anyhow!(e));
    let (a, b) = (read(&args.a)?, read(&args.b)?);
    let series =
        |r: &RunResult, p: &PathBuf| series::of(r).map_err(|e| anyhow!("{}: {e}", p.display()));
    let (sa, sb) = (series(&a, &args.a)?, series(&b, &args.b)?);
    if let Some(why) = crate::report::model::summary::not_comparable(&a, &b) {
        eprintln!("warning: {why}");
    }
    println!(
        "B {} ({}) vs A {} ({}): main phase, measured one-second intervals",
        args.b.display(),
        b.env,
        args.a.display(),
        a.env
    );
    let mut table = crate::format::Table {
        title: String::new(),
        header: [
            "metric",
            "A mean",
            "B mean",
            "change",
            "Cohen's d",
            "n_eff A/B",
            "p",
            "verdict",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
        text_columns: vec![7],
    };
    let mut skipped = Vec::new();
    for x in &sa {
        let Some(y) = sb.iter().find(|y| y.metric == x.metric) else {
            skipped.push(format!("{}: only in A", x.metric));
            continue;
        };
        match compare(&x.metric, x.direction, &x.values, &y.values) {
            Ok(c) => table.rows.push(row(&c)),
            Err(e) => skipped.push(e.to_string()),
        }
    }
    for y in sb
        .iter()
        .filter(|y| !sa.iter().any(|x| x.metric == y.metric))
    {
        skipped.push(format!("{}: only in B", y.metric));
    }
    print!("{}", table.text());
    for s in &skipped {
        println!("  not compared: {s}");
    }
    println!(
        "Welch's t-test on per-interval values, sample sizes reduced for lag-1 autocorrelation; \
         p ≥ {ALPHA} is not distinguishable"
    );
    Ok(())
}
