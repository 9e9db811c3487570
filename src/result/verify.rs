//! The verification result (`cqlbench verify RUN.json`): every row the cluster acknowledged a
//! write of, read back and compared with what the generator says it holds. Written next to the
//! run result as `RUN.verify.json`; the report shows it with the run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::spec::Cl;

pub const VERIFY_VERSION: u32 = 1;

/// How many mismatches, differences and missing rows a result lists (the first ones found).
pub const FIRST_KEPT: usize = 10;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifyResult {
    pub schema_version: u32,
    /// Always "verify": tells this file from the other results.
    pub kind: String,
    /// The run result verified.
    pub run: PathBuf,
    /// Consistency level of the reads.
    pub consistency: Cl,
    /// Consistency level the writes were acknowledged at.
    pub write_consistency: Cl,
    /// The ledger's last frame was cut short (the client died writing it) and was left out.
    pub ledger_truncated: bool,
    /// Write cycles the cluster acknowledged, distinct per phase and operation kind: a cycle
    /// written again when a long run wraps its cycle range counts once; several cycles may
    /// write the same row.
    pub acked_writes: u64,
    /// Distinct rows among them: each is read back.
    pub acked_rows: u64,
    /// Acknowledged rows found with the content written.
    pub present: u64,
    /// Acknowledged rows not found.
    pub missing: u64,
    /// Acknowledged rows found with other content.
    pub different: u64,
    /// Rows whose read failed even after retries: neither confirmed nor missing.
    pub unreadable: u64,
    /// Writes that failed or timed out: their outcome is unknown.
    pub unknown_writes: u64,
    /// Rows written only by such writes (rows also acknowledged are counted above).
    pub unknown_rows: u64,
    /// How many of those rows are there with the content written (the write landed).
    pub unknown_landed: u64,
    /// The first few differences (rows by their label, as in [`ReadsVerified`]).
    pub first_differences: Vec<Mismatch>,
    /// The first few missing rows.
    pub first_missing: Vec<u64>,
    pub elapsed_s: f64,
    /// A profile run: row numbers are `partition << 32 | row` (shown as `partition/row`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub profile_rows: bool,
}

impl VerifyResult {
    /// A row number as the generator knows it: `k`, or a profile's `partition/row`.
    pub fn row_label(&self, id: u64) -> String {
        if self.profile_rows {
            format!("{}/{}", id >> 32, id & 0xFFFF_FFFF)
        } else {
            id.to_string()
        }
    }

    /// Every acknowledged row was read back with its content.
    pub fn passed(&self) -> bool {
        self.missing == 0 && self.different == 0 && self.unreadable == 0
    }

    /// Where the verification of `run` is written.
    pub fn path_for(run: &Path) -> PathBuf {
        run.with_extension("verify.json")
    }

    /// The verification next to `run`, if there is one (unreadable files are skipped: the
    /// report of a run does not fail on them).
    pub fn beside(run: &Path) -> Option<VerifyResult> {
        super::file::read_verify(&Self::path_for(run)).ok()
    }

    /// One line: "QUORUM: 50,112 of 50,112 acknowledged rows present, 0 missing, 0 different".
    pub fn headline(&self) -> String {
        format!(
            "read at {}: {} of {} acknowledged rows present, {} missing, {} different{}; {} writes of unknown outcome, {} of their {} rows landed",
            self.consistency,
            self.present,
            self.acked_rows,
            self.missing,
            self.different,
            if self.unreadable > 0 {
                format!(", {} unreadable", self.unreadable)
            } else {
                String::new()
            },
            self.unknown_writes,
            self.unknown_landed,
            self.unknown_rows,
        )
    }
}

/// `--verify`: what the main phase's reads showed when compared with the generator.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadsVerified {
    /// Reads at least one of whose rows was compared.
    pub reads_checked: u64,
    /// Rows compared.
    pub rows_checked: u64,
    /// Reads none of whose rows could be compared (not identifiable from what the query
    /// returns, or a row not yet known to be written).
    pub reads_unchecked: u64,
    /// Reads that returned a row other than written, or no row where one is known written.
    pub mismatches: u64,
    /// The first few mismatches.
    pub first: Vec<Mismatch>,
    /// The unchecked reads by operation and why none of their rows was compared (results
    /// from before this was kept have none).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unchecked: BTreeMap<String, BTreeMap<Unchecked, u64>>,
}

/// Why a read under `--verify` compared none of its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unchecked {
    /// It returned no row, and the row it asks for was not yet known written when it was
    /// sent (its write not yet acknowledged, or not yet learnt: the main phase's writes are
    /// learnt an interval later).
    NotYetWritten,
    /// It returned no row and need not have: a range or slice that may be empty, a query
    /// that does not fix one row, a LIMIT, or a row whose key another row shares.
    NoRowRequired,
    /// It returned rows, none of which the generator can tell from the columns returned
    /// (key columns not selected, or a partition too large to index).
    Unidentified,
    /// The workload does not check this query's rows.
    NotChecked,
}

impl Unchecked {
    pub const ALL: [Unchecked; 4] = [
        Unchecked::NotYetWritten,
        Unchecked::NoRowRequired,
        Unchecked::Unidentified,
        Unchecked::NotChecked,
    ];

    /// The reason for people, after a count: "15,000 row not yet written when read".
    pub fn describe(self) -> &'static str {
        match self {
            Unchecked::NotYetWritten => "found no row not yet known written when the read was sent",
            Unchecked::NoRowRequired => "found no row and need not have (range, slice or LIMIT)",
            Unchecked::Unidentified => "returned rows not identifiable from the columns returned",
            Unchecked::NotChecked => "query whose rows the workload does not check",
        }
    }
}

impl ReadsVerified {
    /// Adds another shard's figures (the first mismatches up to `keep` in all).
    pub fn add(&mut self, other: &ReadsVerified, keep: usize) {
        self.reads_checked += other.reads_checked;
        self.rows_checked += other.rows_checked;
        self.reads_unchecked += other.reads_unchecked;
        self.mismatches += other.mismatches;
        for (op, reasons) in &other.unchecked {
            let mine = self.unchecked.entry(op.clone()).or_default();
            for (reason, n) in reasons {
                *mine.entry(*reason).or_default() += n;
            }
        }
        for m in &other.first {
            if self.first.len() < keep {
                self.first.push(m.clone());
            }
        }
    }

    /// One line: "reads verified: 12,034 of 12,040 reads compared (120,340 rows), 0 mismatches";
    /// with unchecked reads, why: "; 6 not compared: 6 found no row not yet known written …".
    pub fn line(&self) -> String {
        let n = |v: u64| crate::format::thousands(v as f64);
        let mut line = format!(
            "reads verified: {} of {} reads compared ({} rows), {} mismatch{}",
            n(self.reads_checked),
            n(self.reads_checked + self.reads_unchecked),
            n(self.rows_checked),
            n(self.mismatches),
            if self.mismatches == 1 { "" } else { "es" }
        );
        if self.reads_unchecked > 0 {
            line += &format!("; {} not compared", n(self.reads_unchecked));
            let by = self.unchecked_by_reason();
            if !by.is_empty() {
                line += ": ";
                line += &reasons(&by);
            }
        }
        line
    }

    /// The unchecked reads of all operations by reason.
    pub fn unchecked_by_reason(&self) -> BTreeMap<Unchecked, u64> {
        let mut all = BTreeMap::new();
        for reasons in self.unchecked.values() {
            for (r, n) in reasons {
                *all.entry(*r).or_default() += n;
            }
        }
        all
    }

    /// Per operation, when more than one had unchecked reads: "read: 15,000 found no row …".
    pub fn unchecked_lines(&self) -> Vec<String> {
        if self.unchecked.len() < 2 {
            return Vec::new();
        }
        self.unchecked
            .iter()
            .map(|(op, by)| format!("{op}: {}", reasons(by)))
            .collect()
    }
}

/// "15,000 found no row …, 48 returned rows not identifiable …", most first.
fn reasons(by: &BTreeMap<Unchecked, u64>) -> String {
    let mut v: Vec<(&Unchecked, &u64)> = by.iter().filter(|(_, n)| **n > 0).collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.iter()
        .map(|(r, n)| format!("{} {}", crate::format::thousands(**n as f64), r.describe()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `column` of a [`Mismatch`] whose row is absent.
pub const MISSING_ROW: &str = "(row)";

/// One row whose content differs from what the generator wrote: found by a read of a run
/// under `--verify` ([`ReadsVerified`]) or by `cqlbench verify` reading the row back
/// ([`VerifyResult`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mismatch {
    /// The operation whose read found it; empty (and left out) in a verification, whose reads
    /// are all its own read-back.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub op: String,
    /// The row, as the generator numbers it (`k`, or `partition/row` for a profile).
    /// Verification files from before the two records were one held the row id as a number
    /// (a profile's `partition << 32 | row`): it is read as its digits.
    #[serde(deserialize_with = "number_or_text")]
    pub row: String,
    /// The column that differs ([`MISSING_ROW`] when the row is absent).
    pub column: String,
    pub expected: String,
    pub found: String,
}

impl Mismatch {
    /// The row was absent, not different.
    pub fn row_missing(&self) -> bool {
        self.column == MISSING_ROW
    }
}

/// A row named by a number (older verification files) or by its label.
fn number_or_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Row {
        Number(u64),
        Text(String),
    }
    Ok(match Row::deserialize(d)? {
        Row::Number(n) => n.to_string(),
        Row::Text(t) => t,
    })
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.op.is_empty() {
            write!(f, "{} ", self.op)?;
        }
        write!(
            f,
            "row {} column {}: expected {}, found {}",
            self.row, self.column, self.expected, self.found
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unchecked_reads_are_told_by_reason_and_operation() {
        let by = |v: &[(Unchecked, u64)]| v.iter().copied().collect::<BTreeMap<_, _>>();
        let mut a = ReadsVerified {
            reads_checked: 5_033,
            rows_checked: 5_033,
            reads_unchecked: 15_000,
            unchecked: BTreeMap::from([(
                "read".to_string(),
                by(&[(Unchecked::NotYetWritten, 15_000)]),
            )]),
            ..Default::default()
        };
        let b = ReadsVerified {
            reads_checked: 0,
            reads_unchecked: 48,
            unchecked: BTreeMap::from([(
                "range".to_string(),
                by(&[(Unchecked::NoRowRequired, 40), (Unchecked::Unidentified, 8)]),
            )]),
            ..Default::default()
        };
        assert!(
            a.unchecked_lines().is_empty(),
            "one operation: the line says it all"
        );
        a.add(&b, FIRST_KEPT);
        assert_eq!(
            a.line(),
            "reads verified: 5,033 of 20,081 reads compared (5,033 rows), 0 mismatches; \
             15,048 not compared: 15,000 found no row not yet known written when the read was sent, \
             40 found no row and need not have (range, slice or LIMIT), \
             8 returned rows not identifiable from the columns returned"
        );
        assert_eq!(
            a.unchecked_lines(),
            vec![
                "range: 40 found no row and need not have (range, slice or LIMIT), 8 returned rows not identifiable from the columns returned",
                "read: 15,000 found no row not yet known written when the read was sent",
            ]
        );
        // Persisted by name, and a result without the field still loads.
        let json = serde_json::to_string(&a).unwrap();
        assert!(json.contains(r#""unchecked":{"range":{"no_row_required":40,"unidentified":8},"read":{"not_yet_written":15000}}"#), "{json}");
        assert_eq!(serde_json::from_str::<ReadsVerified>(&json).unwrap(), a);
        let old =
            r#"{"reads_checked":1,"rows_checked":1,"reads_unchecked":2,"mismatches":0,"first":[]}"#;
        let o: ReadsVerified = serde_json::from_str(old).unwrap();
        assert!(o.unchecked.is_empty());
        assert_eq!(
            o.line(),
            "reads verified: 1 of 3 reads compared (1 rows), 0 mismatches; 2 not compared"
        );
    }

    #[test]
    fn mismatches_of_both_older_records_still_load() {
        // A run's `--verify` mismatch (the former `ReadMismatch`) reads and writes as it was.
        let read = r#"{"op":"read","row":"3/0","column":"name","expected":"a","found":"b"}"#;
        let m: Mismatch = serde_json::from_str(read).unwrap();
        assert_eq!((m.op.as_str(), m.row.as_str()), ("read", "3/0"));
        assert_eq!(serde_json::to_string(&m).unwrap(), read);
        assert_eq!(
            m.to_string(),
            "read row 3/0 column name: expected a, found b"
        );
        // A verification's difference (the former `Difference`): the row as a number, no op.
        let old = r#"{"row":7,"column":"value","expected":"x","found":"y"}"#;
        let d: Mismatch = serde_json::from_str(old).unwrap();
        assert_eq!((d.op.as_str(), d.row.as_str()), ("", "7"));
        assert!(!d.row_missing());
        assert_eq!(
            serde_json::to_string(&d).unwrap(),
            r#"{"row":"7","column":"value","expected":"x","found":"y"}"#
        );
    }
}
