//! A comparison's text: what `cqlbench compare` shows (its warnings go to standard error,
//! before it).

use crate::format::{Table, cell};
use crate::report::capacity_change::{Bracket, METRIC};
use crate::report::compare::{Body, Capacity, Comparison, Runs, p_text, pct};
use crate::stats::compare::{ALPHA, CONFIDENCE, MetricComparison, Sampling, Scale};

/// The comparison: which sides, the table, what was left out or not compared, how it was
/// tested, and each `--fail-if` rule's verdict.
pub fn compare_text(c: &Comparison) -> String {
    let mut out = match &c.body {
        Body::Runs(r) => runs_text(c, r),
        Body::Capacity(k) => capacity_text(c, k),
    };
    for v in &c.verdicts {
        if v.broken_by.is_empty() {
            out.push_str(&format!("fail-if '{}': held\n", v.rule));
        } else {
            out.push_str(&format!(
                "fail-if '{}': BROKEN by {}\n",
                v.rule,
                v.broken_by.join(", ")
            ));
        }
    }
    out
}

fn runs_text(c: &Comparison, r: &Runs) -> String {
    let mut out = format!(
        "B {} vs A {}: main phase, {}\n",
        c.b,
        c.a,
        match r.sampling {
            Sampling::Intervals => "measured one-second intervals",
            Sampling::Runs => "one figure per run",
        }
    );
    for (name, others) in &r.left_out {
        let names: Vec<String> = others.iter().map(|p| p.display().to_string()).collect();
        out.push_str(&format!(
            "  {name}: not run results, left out: {}\n",
            names.join(", ")
        ));
    }
    let ci = format!("{:.0}% CI", 100.0 * CONFIDENCE);
    let n = match r.sampling {
        Sampling::Intervals => "n_eff A/B",
        Sampling::Runs => "runs A/B",
    };
    let table = Table {
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
        rows: r.compared.iter().map(row).collect(),
        text_columns: vec![4, 8],
    };
    out.push_str(&table.text());
    for s in &r.skipped {
        out.push_str(&format!("  not compared: {s}\n"));
    }
    out.push_str(&match r.sampling {
        Sampling::Intervals => format!(
            "Welch's t-test on per-interval values, sample sizes reduced for lag-1 \
             autocorrelation; p ≥ {ALPHA} is not distinguishable\n"
        ),
        Sampling::Runs => format!(
            "Welch's t-test on one figure per run (throughput, and each run's p50 and p99 of \
             its main phase); p ≥ {ALPHA} is not distinguishable\n"
        ),
    });
    if r.compared.iter().any(|c| c.scale == Scale::Log) {
        out.push_str(
            "response times are compared on their logarithms: their means are geometric, the \
             change is the ratio of the means and d is on the log scale\n",
        );
    }
    if !c.verdicts.is_empty() {
        out.push_str(&format!(
            "gate: the {} compared metric(s) the rules look at are tested together \
             (Holm's correction, {ALPHA} family-wise)\n",
            r.family
        ));
    }
    out
}

fn row(c: &MetricComparison) -> Vec<String> {
    let (a, b) = c.means();
    vec![
        c.metric.clone(),
        cell(Some(a), 2),
        cell(Some(b), 2),
        pct(c.relative_diff),
        format!("{}..{}", pct(c.relative_low), pct(c.relative_high)),
        format!("{:+.2}", c.cohen_d),
        format!("{:.1}/{:.1}", c.a.n_eff, c.b.n_eff),
        p_text(c.test.p),
        c.verdict.to_string(),
    ]
}

fn capacity_text(c: &Comparison, k: &Capacity) -> String {
    let change = &k.change;
    let mut out = format!(
        "B {} vs A {}: capacity (the highest passing step's throughput)\n",
        c.b, c.a
    );
    let upper = |x: Option<f64>| x.map_or("unbounded".to_string(), pct);
    let (n, p) = match &change.repeats {
        Some(t) => (
            format!("{}/{}", change.a.len(), change.b.len()),
            p_text(t.test.p),
        ),
        None => ("1/1".to_string(), "-".to_string()),
    };
    let table = Table {
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
            METRIC.to_string(),
            cell(Some(change.a_mean), 1),
            cell(Some(change.b_mean), 1),
            pct(change.relative_diff),
            format!("{}..{}", pct(change.low), upper(change.high)),
            n,
            p,
            change.verdict.to_string(),
        ]],
        text_columns: vec![4, 7],
    };
    out.push_str(&table.text());
    let bracket = |x: &Bracket| match x.high {
        Some(h) => format!("{:.0}..{h:.0}", x.low),
        None => format!("{:.0}..(no failing step)", x.low),
    };
    for (name, path, x) in &k.searches {
        out.push_str(&format!(
            "  {name} {}: capacity in {} ops/s\n",
            path.display(),
            bracket(x)
        ));
    }
    for (name, runs, others) in &k.left_out {
        out.push_str(&format!(
            "  {name}: {runs} step run result(s) and {others} other file(s) beside the searches, left out\n"
        ));
    }
    out.push_str(&format!(
        "the interval is the brackets' (the capacity lies between a search's highest passing step \
         and its lowest failing step's rate: {}..{}){}\n",
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
    ));
    if change.repeats.is_none() {
        out.push_str(
            "one search a side: the brackets hold each search's step resolution, not how far apart repeated searches land; repeat the searches (3 a side) for a verdict that does\n",
        );
    }
    out
}
