//! The verifications of a scenario's runs: acknowledged writes read back (`cqlbench verify`),
//! and reads compared with the generator during the run (`--verify`).

use super::RunTimeline;
use crate::format::Table;
use crate::result::VerifyResult;
use crate::result::verify::{ReadsVerified, Unchecked};

/// The column header of a run: `ec2 (run-1.json)`.
fn run_header(r: &RunTimeline) -> String {
    format!(
        "{} ({})",
        r.env,
        r.path.file_name().unwrap_or_default().to_string_lossy()
    )
}

/// `--verify` runs of a group, runs as columns: reads compared, mismatches, and the reads not
/// compared by operation and reason.
pub(super) fn reads_table(scenario: &str, runs: &[&RunTimeline]) -> Option<Table> {
    let verified: Vec<(&RunTimeline, &ReadsVerified)> = runs
        .iter()
        .filter_map(|r| r.reads_verified.as_ref().map(|v| (*r, v)))
        .collect();
    if verified.is_empty() {
        return None;
    }
    let count = |v: u64| crate::format::cell(Some(v as f64), 0);
    // A row: its label, then each run's figure.
    let row = |label: String, get: &dyn Fn(&ReadsVerified) -> u64| -> Vec<String> {
        std::iter::once(label)
            .chain(verified.iter().map(|(_, v)| count(get(v))))
            .collect()
    };
    let mut rows: Vec<Vec<String>> = vec![
        row("reads compared".into(), &|v| v.reads_checked),
        row("rows compared".into(), &|v| v.rows_checked),
        row("mismatches".into(), &|v| v.mismatches),
        row("reads not compared".into(), &|v| v.reads_unchecked),
    ];
    // One row per operation and reason any run has, so the runs line up.
    let mut keys: Vec<(&str, Unchecked)> = verified
        .iter()
        .flat_map(|(_, v)| {
            v.unchecked
                .iter()
                .flat_map(|(op, by)| by.keys().map(move |reason| (op.as_str(), *reason)))
        })
        .collect();
    keys.sort();
    keys.dedup();
    for (op, reason) in keys {
        rows.push(row(format!("  {op}: {}", reason.describe()), &|v| {
            v.unchecked
                .get(op)
                .and_then(|by| by.get(&reason))
                .copied()
                .unwrap_or(0)
        }));
    }
    Some(Table {
        title: format!("Reads compared with the generator (--verify) — {scenario}"),
        header: std::iter::once(String::new())
            .chain(verified.iter().map(|(r, _)| run_header(r)))
            .collect(),
        rows,
        text_columns: (1..=verified.len()).collect(),
    })
}

/// Verifications of a group's runs, runs as columns.
pub(super) fn verify_table(scenario: &str, runs: &[&RunTimeline]) -> Option<Table> {
    let verified: Vec<(&RunTimeline, &VerifyResult)> = runs
        .iter()
        .filter_map(|r| r.verify.as_ref().map(|v| (*r, v)))
        .collect();
    if verified.is_empty() {
        return None;
    }
    type Get = fn(&VerifyResult) -> String;
    let fields: [(&str, Get); 9] = [
        ("writes acknowledged at", |v| {
            v.write_consistency.to_string()
        }),
        ("acknowledged write cycles", |v| {
            crate::format::cell(Some(v.acked_writes as f64), 0)
        }),
        ("rows read back at", |v| v.consistency.to_string()),
        ("acknowledged rows", |v| {
            crate::format::cell(Some(v.acked_rows as f64), 0)
        }),
        ("present", |v| {
            crate::format::cell(Some(v.present as f64), 0)
        }),
        ("missing", |v| {
            crate::format::cell(Some(v.missing as f64), 0)
        }),
        ("different", |v| {
            crate::format::cell(Some(v.different as f64), 0)
        }),
        ("unreadable", |v| {
            crate::format::cell(Some(v.unreadable as f64), 0)
        }),
        ("unknown-outcome writes: rows landed", |v| {
            format!("{} of {}", v.unknown_landed, v.unknown_rows)
        }),
    ];
    Some(Table {
        title: format!("Acknowledged writes read back — {scenario}"),
        header: std::iter::once(String::new())
            .chain(verified.iter().map(|(r, _)| run_header(r)))
            .collect(),
        rows: fields
            .iter()
            .map(|(label, get)| {
                std::iter::once(label.to_string())
                    .chain(verified.iter().map(|(_, v)| get(v)))
                    .collect()
            })
            .collect(),
        text_columns: (1..=verified.len()).collect(),
    })
}
