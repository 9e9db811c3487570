//! A verification's text: what `cqlbench verify` shows once the rows are read back.

use crate::result::verify::VerifyResult;

/// What a verification found: the ledger's state, the acknowledged writes, the headline, the
/// first differences and missing rows (shown before the result is written, so that a result
/// that cannot be written loses none of it).
pub fn verify_text(r: &VerifyResult) -> String {
    let mut lines = Vec::new();
    if r.ledger_truncated {
        lines.push(
            "note: the ledger's last frame was cut short (the client died writing it); its writes are not counted"
                .to_string(),
        );
    }
    lines.push(format!(
        "{} acknowledged write cycles at {} ({} rows)",
        r.acked_writes, r.write_consistency, r.acked_rows
    ));
    lines.push(r.headline());
    for d in &r.first_differences {
        lines.push(format!(
            "  row {}: {} expected {}, found {}",
            d.row, d.column, d.expected, d.found
        ));
    }
    if !r.first_missing.is_empty() {
        let rows: Vec<String> = r.first_missing.iter().map(|&k| r.row_label(k)).collect();
        lines.push(format!("  first missing rows: {}", rows.join(", ")));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verification_that_found_differences_and_missing_rows() {
        let r: VerifyResult = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "kind": "verify", "run": "/r/run.json",
            "consistency": "QUORUM", "write_consistency": "ONE", "ledger_truncated": true,
            "acked_writes": 120, "acked_rows": 100, "present": 97, "missing": 2, "different": 1,
            "unreadable": 0, "unknown_writes": 3, "unknown_rows": 3, "unknown_landed": 1,
            "first_differences": [{"row": "7", "column": "value", "expected": "0xab", "found": "0xac"}],
            "first_missing": [5, 9], "elapsed_s": 1.25
        }))
        .unwrap();
        let text = verify_text(&r);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("note: the ledger's last frame was cut short"));
        assert_eq!(lines[1], "120 acknowledged write cycles at ONE (100 rows)");
        assert_eq!(lines[2], r.headline());
        assert_eq!(lines[3], "  row 7: value expected 0xab, found 0xac");
        assert_eq!(lines[4], "  first missing rows: 5, 9");
        assert_eq!(lines.len(), 5);
    }
}
