//! The verifications of a scenario's runs (`cqlbench verify`): acknowledged writes read back.

use super::RunTimeline;
use crate::format::Table;
use crate::result::VerifyResult;

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
            .chain(verified.iter().map(|(r, _)| {
                format!(
                    "{} ({})",
                    r.env,
                    r.path.file_name().unwrap_or_default().to_string_lossy()
                )
            }))
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
