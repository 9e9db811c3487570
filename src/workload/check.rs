//! Rows checked against the generator, by both verifiers: `--verify` (every read of a run's
//! main phase compares the rows it got) and `cqlbench verify` (every acknowledged row read back
//! after the run, `crate::verify`). Row content is a pure function of the row, so a returned row
//! that can be identified from its key columns must equal its image whether or not the run
//! wrote it. A row that is absent is a mismatch only when it is known written: for `--verify`,
//! acknowledged by rampup or, an interval later, by the main phase ([`ReadVerifier::learn`]).
//!
//! Both verifiers know a row by its [`RowId`] and compare it with [`first_difference`]; a
//! workload says which rows a read returned ([`super::Workload::check_row`], the built-ins'
//! [`super::builtin::check_read`], profiles' [`super::profile::check`]). A mismatch fails the
//! operation with [`crate::stats::ErrorKind::Mismatch`]; the first few are kept for the result.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

use roaring::RoaringTreemap;
use scylla::response::query_result::QueryResult;
use scylla::value::{CqlValue, Row};

pub use crate::result::verify::Unchecked;
use crate::result::verify::{FIRST_KEPT as FIRST, MISSING_ROW, Mismatch, ReadsVerified};

/// A row as the generator numbers it: a built-in's row `k`, a profile's
/// `partition << 32 | row` ([`super::profile::check::row_id`]). The acknowledged-write ledger's
/// cycles map to these, `--verify` learns them, `verify` reads them back.
pub type RowId = u64;

/// What one read showed.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// This many rows compared, each as written.
    Matched(u64),
    /// Nothing returned could be compared, and nothing known written was absent: why.
    Unchecked(Unchecked),
    Mismatch(Mismatch),
}

/// The rows known written, and the counts of a run's checked reads.
#[derive(Debug, Default)]
pub struct ReadVerifier {
    known: RwLock<RoaringTreemap>,
    reads_checked: AtomicU64,
    rows_checked: AtomicU64,
    reads_unchecked: AtomicU64,
    /// Per operation, the unchecked reads by reason (in [`Unchecked::ALL`]'s order).
    unchecked: RwLock<HashMap<String, [AtomicU64; Unchecked::ALL.len()]>>,
    mismatches: AtomicU64,
    first: Mutex<Vec<Mismatch>>,
}

impl ReadVerifier {
    /// Rows whose writes were acknowledged.
    pub fn learn(&self, ids: impl IntoIterator<Item = RowId>) {
        // Collected first: checked reads wait for the lock only for the union.
        let new: RoaringTreemap = ids.into_iter().collect();
        *self.known.write().expect("known rows lock") |= new;
    }

    pub fn knows(&self, id: RowId) -> bool {
        self.known.read().expect("known rows lock").contains(id)
    }

    /// Counts what a read of `op` showed; true when it was a mismatch.
    pub fn count(&self, op: &str, v: Verdict) -> bool {
        match v {
            Verdict::Matched(n) => {
                self.reads_checked.fetch_add(1, Ordering::Relaxed);
                self.rows_checked.fetch_add(n, Ordering::Relaxed);
                false
            }
            Verdict::Unchecked(why) => {
                self.reads_unchecked.fetch_add(1, Ordering::Relaxed);
                let i = why as usize;
                let counted = self
                    .unchecked
                    .read()
                    .expect("unchecked lock")
                    .get(op)
                    .map(|c| c[i].fetch_add(1, Ordering::Relaxed))
                    .is_some();
                if !counted {
                    self.unchecked
                        .write()
                        .expect("unchecked lock")
                        .entry(op.to_string())
                        .or_default()[i]
                        .fetch_add(1, Ordering::Relaxed);
                }
                false
            }
            Verdict::Mismatch(m) => {
                self.mismatches.fetch_add(1, Ordering::Relaxed);
                let mut first = self.first.lock().expect("mismatch lock");
                if first.len() < FIRST {
                    first.push(m);
                }
                true
            }
        }
    }

    pub fn summary(&self) -> ReadsVerified {
        ReadsVerified {
            reads_checked: self.reads_checked.load(Ordering::Relaxed),
            rows_checked: self.rows_checked.load(Ordering::Relaxed),
            reads_unchecked: self.reads_unchecked.load(Ordering::Relaxed),
            mismatches: self.mismatches.load(Ordering::Relaxed),
            first: self.first.lock().expect("mismatch lock").clone(),
            unchecked: self
                .unchecked
                .read()
                .expect("unchecked lock")
                .iter()
                .map(|(op, counts)| {
                    let by: BTreeMap<Unchecked, u64> = Unchecked::ALL
                        .iter()
                        .zip(counts)
                        .map(|(r, n)| (*r, n.load(Ordering::Relaxed)))
                        .filter(|(_, n)| *n > 0)
                        .collect();
                    (op.clone(), by)
                })
                .collect(),
        }
    }
}

/// A read's answer that is not rows of the types asked for.
#[derive(Debug, thiserror::Error)]
pub enum ReturnedError {
    #[error(transparent)]
    NotRows(Box<scylla::errors::IntoRowsResultError>),
    #[error(transparent)]
    Types(#[from] scylla::errors::RowsError),
    #[error(transparent)]
    Row(#[from] scylla::errors::DeserializationError),
}

/// A read's rows and the names of their columns.
pub fn returned(r: QueryResult) -> Result<(Vec<String>, Vec<Row>), ReturnedError> {
    let rows = r
        .into_rows_result()
        .map_err(|e| ReturnedError::NotRows(Box::new(e)))?;
    let names = rows
        .column_specs()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    let rows = rows.rows::<Row>()?.collect::<Result<Vec<Row>, _>>()?;
    Ok((names, rows))
}

/// A value as a difference line shows it: its CQL literal, long ones cut to their start and
/// size.
pub fn show(v: Option<&CqlValue>) -> String {
    match v {
        None => "null".into(),
        Some(v) => super::literal::cql_literal_short(v, 48),
    }
}

/// The column `name` of a returned row.
pub fn column<'a>(names: &[String], row: &'a Row, name: &str) -> Option<&'a CqlValue> {
    let i = names.iter().position(|n| n == name)?;
    row.columns.get(i).and_then(|c| c.as_ref())
}

/// Equal as stored: sets and maps whatever their order, empty collections as null.
pub fn same(want: &CqlValue, got: Option<&CqlValue>) -> bool {
    let Some(got) = got else {
        return matches!(want, CqlValue::List(v) | CqlValue::Set(v) if v.is_empty())
            || matches!(want, CqlValue::Map(m) if m.is_empty());
    };
    match (want, got) {
        (CqlValue::Set(a), CqlValue::Set(b)) => {
            a.len() == b.len() && a.iter().all(|x| b.contains(x))
        }
        (CqlValue::Map(a), CqlValue::Map(b)) => {
            a.len() == b.len() && a.iter().all(|x| b.contains(x))
        }
        _ => want == got,
    }
}

/// One column that differs: its name, and the expected and found values as shown.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub column: String,
    pub expected: String,
    pub found: String,
}

/// The comparison both verifiers make: the first column of a row's image (name, value) that
/// the returned `row` holds otherwise. Columns the read did not return are not compared;
/// `fits(name, expected, found)` tells a value as written (a counter's, say, which is a
/// multiple of its increment).
pub fn first_difference<'a>(
    names: &[String],
    row: &Row,
    image: impl IntoIterator<Item = (&'a str, &'a CqlValue)>,
    fits: impl Fn(&str, &CqlValue, Option<&CqlValue>) -> bool,
) -> Option<Difference> {
    image.into_iter().find_map(|(name, want)| {
        if !names.iter().any(|n| n == name) {
            return None;
        }
        let got = column(names, row, name);
        (!fits(name, want, got)).then(|| Difference {
            column: name.to_string(),
            expected: show(Some(want)),
            found: show(got),
        })
    })
}

/// A mismatch of `op` on `row`.
pub fn mismatch(op: &str, row: String, column: &str, expected: String, found: String) -> Verdict {
    Verdict::Mismatch(Mismatch {
        op: op.to_string(),
        row,
        column: column.to_string(),
        expected,
        found,
    })
}

/// A mismatch of `op` on `row` in the column `d` names.
pub fn differs(op: &str, row: String, d: Difference) -> Verdict {
    mismatch(op, row, &d.column, d.expected, d.found)
}

/// The row absent although known written.
pub fn missing(op: &str, row: String) -> Verdict {
    mismatch(op, row, MISSING_ROW, "the row".into(), "no row".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verifier_counts_and_keeps_the_first_mismatches() {
        let v = ReadVerifier::default();
        v.learn([3, 4]);
        assert!(v.knows(3) && !v.knows(5));
        assert!(!v.count("read", Verdict::Matched(4)));
        assert!(!v.count("read", Verdict::Unchecked(Unchecked::NotYetWritten)));
        assert!(!v.count("read", Verdict::Unchecked(Unchecked::NotYetWritten)));
        assert!(!v.count("range", Verdict::Unchecked(Unchecked::NoRowRequired)));
        for i in 0..(FIRST + 2) {
            assert!(v.count("read", missing("read", i.to_string())));
        }
        let s = v.summary();
        assert_eq!(
            (s.reads_checked, s.rows_checked, s.reads_unchecked),
            (1, 4, 3)
        );
        assert_eq!(
            s.unchecked,
            BTreeMap::from([
                (
                    "range".to_string(),
                    BTreeMap::from([(Unchecked::NoRowRequired, 1)])
                ),
                (
                    "read".to_string(),
                    BTreeMap::from([(Unchecked::NotYetWritten, 2)])
                ),
            ])
        );
        assert_eq!((s.mismatches, s.first.len()), (FIRST as u64 + 2, FIRST));
        assert_eq!(s.first[0].row, "0");
    }

    #[test]
    fn the_first_returned_column_that_differs_is_named() {
        let names: Vec<String> = ["a", "b"].map(String::from).to_vec();
        let row = Row {
            columns: vec![Some(CqlValue::Int(1)), None],
        };
        let (one, two) = (CqlValue::Int(1), CqlValue::Int(2));
        let exact = |_: &str, w: &CqlValue, g: Option<&CqlValue>| same(w, g);
        assert_eq!(
            first_difference(&names, &row, [("a", &one), ("c", &two)], exact),
            None,
            "a column not returned is not compared"
        );
        let d = first_difference(&names, &row, [("a", &one), ("b", &two)], exact).unwrap();
        assert_eq!((d.column.as_str(), d.found.as_str()), ("b", "null"));
        assert_eq!(d.expected, "2");
    }
}
