//! `--verify`: every read of the main phase compares the rows it got with what the generator
//! says they hold. Row content is a pure function of the row (any write of a row writes the
//! same values), so a returned row that can be identified from its key columns must equal its
//! image whether or not this run wrote it. A row that is absent is a mismatch only when the
//! run knows it was written: acknowledged by rampup or, an interval later, by the main phase
//! ([`ReadVerifier::learn`]).
//!
//! What a read returns is identified per workload: the built-ins here ([`check_builtin`]),
//! profiles in [`super::profile::check`]. A mismatch fails the operation with
//! [`crate::stats::ErrorKind::Mismatch`]; the first few are kept for the result.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

use roaring::RoaringTreemap;
use scylla::value::{CqlValue, Row};

use super::{image, iot_devices, partitions, shapes};
use crate::result::verify::{FIRST_KEPT as FIRST, MISSING_ROW, Mismatch, ReadsVerified};
use crate::spec::{WorkloadKind, WorkloadSpec};

/// What one read showed.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// This many rows compared, each as written.
    Matched(u64),
    /// Nothing returned could be compared, and nothing known written was absent.
    Unchecked,
    Mismatch(Mismatch),
}

/// The rows known written, and the counts of a run's checked reads.
#[derive(Debug, Default)]
pub struct ReadVerifier {
    known: RwLock<RoaringTreemap>,
    reads_checked: AtomicU64,
    rows_checked: AtomicU64,
    reads_unchecked: AtomicU64,
    mismatches: AtomicU64,
    first: Mutex<Vec<Mismatch>>,
}

impl ReadVerifier {
    /// Rows (by the workload's row ids) whose writes were acknowledged.
    pub fn learn(&self, ids: impl IntoIterator<Item = u64>) {
        // Collected first: checked reads wait for the lock only for the union.
        let new: RoaringTreemap = ids.into_iter().collect();
        *self.known.write().expect("known rows lock") |= new;
    }

    pub fn knows(&self, id: u64) -> bool {
        self.known.read().expect("known rows lock").contains(id)
    }

    /// Counts what a read of `op` showed; true when it was a mismatch.
    pub fn count(&self, v: Verdict) -> bool {
        match v {
            Verdict::Matched(n) => {
                self.reads_checked.fetch_add(1, Ordering::Relaxed);
                self.rows_checked.fetch_add(n, Ordering::Relaxed);
                false
            }
            Verdict::Unchecked => {
                self.reads_unchecked.fetch_add(1, Ordering::Relaxed);
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
        }
    }
}

/// A value as a difference line shows it: blobs as a hex prefix and their length, long text
/// cut.
pub fn show(v: Option<&CqlValue>) -> String {
    match v {
        None => "null".into(),
        Some(CqlValue::Blob(b)) => {
            let hex: String = b.iter().take(8).map(|x| format!("{x:02x}")).collect();
            format!(
                "0x{hex}{} ({} byte{})",
                if b.len() > 8 { "…" } else { "" },
                b.len(),
                if b.len() == 1 { "" } else { "s" }
            )
        }
        Some(CqlValue::Text(t) | CqlValue::Ascii(t)) if t.chars().count() > 40 => {
            let head: String = t.chars().take(40).collect();
            format!("{head:?}… ({} chars)", t.chars().count())
        }
        Some(other) => format!("{other:?}"),
    }
}

/// The column `name` of a returned row.
pub fn column<'a>(names: &[String], row: &'a Row, name: &str) -> Option<&'a CqlValue> {
    let i = names.iter().position(|n| n == name)?;
    row.columns.get(i).and_then(|c| c.as_ref())
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

/// The row absent although known written.
pub fn missing(op: &str, row: String) -> Verdict {
    mismatch(op, row, MISSING_ROW, "the row".into(), "no row".into())
}

/// What a built-in read asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadAt {
    /// Row `k` by its key (keyvalue, stress).
    Row(u64),
    /// Partition `part` from clustering row `start` on (tabular).
    Slice { part: u64, start: u64 },
    /// The first `limit` rows of partition `part`; `h` picks nb-iot's sensor.
    Partition { part: u64, limit: i32, h: u64 },
    /// Rows from a token on (stress range).
    Token(i64),
}

/// Compares a built-in read's rows with the generator: each row identified by its key,
/// its returned value columns compared with row `k`'s image.
pub fn check_builtin(
    spec: &WorkloadSpec,
    op: &str,
    at: ReadAt,
    names: &[String],
    rows: &[Row],
    knows: &dyn Fn(u64) -> bool,
) -> Verdict {
    let rows_n = spec.rows.max(1);
    let parts = partitions(spec);
    let cols = image::columns(spec);
    // The row number each returned row holds (None: not one the generator writes here).
    let identify = |row: &Row| -> Option<u64> {
        let get = |n: &str| column(names, row, n);
        match (spec.kind, at) {
            (_, ReadAt::Row(k)) => Some(k),
            (WorkloadKind::Stress, ReadAt::Token(_)) => match get("key")? {
                CqlValue::Blob(b) if b.len() == 10 => {
                    let k = u64::from_be_bytes(b[..8].try_into().ok()?);
                    (k < rows_n && image::key(spec, k) == [CqlValue::Blob(b.clone())]).then_some(k)
                }
                _ => None,
            },
            (WorkloadKind::Tabular, ReadAt::Slice { part, .. }) => match get("row")? {
                CqlValue::BigInt(r) if *r >= 0 => Some(part + *r as u64 * parts),
                _ => None,
            },
            (WorkloadKind::Iot, ReadAt::Partition { part, .. }) => match get("ts")? {
                CqlValue::BigInt(t) if *t >= 0 => Some(part + *t as u64 * iot_devices(rows_n)),
                _ => None,
            },
            (WorkloadKind::NbTabular2, ReadAt::Partition { part, .. }) => match get("clust")? {
                CqlValue::Text(c) => Some(part + c.parse::<u64>().ok()? * parts),
                _ => None,
            },
            (WorkloadKind::NbIot, ReadAt::Partition { part, .. }) => match get("time")? {
                CqlValue::Timestamp(t) if t.0 >= shapes::IOT_EPOCH_MS => {
                    let j = (t.0 - shapes::IOT_EPOCH_MS) / shapes::IOT_STEP_MS;
                    Some(part + j as u64 * parts)
                }
                _ => None,
            },
            _ => None,
        }
    };
    let mut compared = 0u64;
    let mut seen = Vec::with_capacity(rows.len());
    for row in rows {
        let Some(k) = identify(row) else {
            continue;
        };
        seen.push(k);
        // The key columns returned must be row k's (a row in another row's place).
        let key_names = key_columns(spec.kind);
        for (name, want) in key_names.iter().zip(image::key(spec, k)) {
            if let Some(got) = column(names, row, name)
                && *got != want
            {
                return mismatch(op, k.to_string(), name, show(Some(&want)), show(Some(got)));
            }
        }
        for (name, want) in cols.iter().zip(image::expected(spec, k)) {
            if !names.contains(name) {
                continue;
            }
            let got = column(names, row, name);
            if got != Some(&want) {
                return mismatch(op, k.to_string(), name, show(Some(&want)), show(got));
            }
        }
        compared += 1;
    }
    let must = must_row(spec, at).filter(|_| {
        // A partition's first row only when the read found none of its rows.
        !matches!(at, ReadAt::Partition { .. }) || rows.is_empty()
    });
    if let Some(k) = must
        && k < rows_n
        && !seen.contains(&k)
        && knows(k)
    {
        return missing(op, k.to_string());
    }
    if compared == 0 {
        Verdict::Unchecked
    } else {
        Verdict::Matched(compared)
    }
}

/// The row a read must return once it is known written: a key's row, a slice's first row,
/// a partition's first row (its row number is the partition's). Its `knows` answer is taken
/// before the read is sent: a write acknowledged while the read was in flight does not make
/// the read's miss a mismatch.
pub fn must_row(spec: &WorkloadSpec, at: ReadAt) -> Option<u64> {
    let parts = partitions(spec);
    match (spec.kind, at) {
        (_, ReadAt::Row(k)) => Some(k),
        (WorkloadKind::Tabular, ReadAt::Slice { part, start }) => Some(part + start * parts),
        (WorkloadKind::Iot | WorkloadKind::NbTabular2, ReadAt::Partition { part, .. }) => {
            Some(part)
        }
        _ => None,
    }
}

/// The key columns of a built-in table, in the order of [`image::key`].
fn key_columns(kind: WorkloadKind) -> &'static [&'static str] {
    match kind {
        WorkloadKind::Keyvalue | WorkloadKind::Stress => &["key"],
        WorkloadKind::Tabular => &["part", "row"],
        WorkloadKind::Iot => &["device", "ts"],
        WorkloadKind::NbTabular2 => &["part", "clust"],
        WorkloadKind::NbIot => &["machine_id", "sensor_name", "time"],
        WorkloadKind::Profile => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(v: Vec<CqlValue>) -> Row {
        Row {
            columns: v.into_iter().map(Some).collect(),
        }
    }

    fn copy(rows: &[Row]) -> Vec<Row> {
        rows.iter()
            .map(|r| Row {
                columns: r.columns.clone(),
            })
            .collect()
    }

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_point_read_matches_differs_or_misses() {
        let spec = WorkloadSpec::defaults(WorkloadKind::Keyvalue);
        let n = names(&["value"]);
        let good = row(image::expected(&spec, 5));
        let yes = |_: u64| true;
        let no = |_: u64| false;
        let at = ReadAt::Row(5);
        assert_eq!(
            check_builtin(&spec, "read", at, &n, &[good], &yes),
            Verdict::Matched(1)
        );
        let other = row(image::expected(&spec, 6));
        let Verdict::Mismatch(m) = check_builtin(&spec, "read", at, &n, &[other], &yes) else {
            panic!("another row's value is a mismatch");
        };
        assert_eq!((m.row.as_str(), m.column.as_str()), ("5", "value"));
        assert!(m.expected.ends_with("(100 bytes)"), "{}", m.expected);
        // Absent: a mismatch only when known written.
        assert!(matches!(
            check_builtin(&spec, "read", at, &n, &[], &yes),
            Verdict::Mismatch(Mismatch { ref column, .. }) if column == "(row)"
        ));
        assert_eq!(
            check_builtin(&spec, "read", at, &n, &[], &no),
            Verdict::Unchecked
        );
    }

    #[test]
    fn slices_identify_each_row_by_its_clustering_key() {
        let mut spec = WorkloadSpec::defaults(WorkloadKind::Tabular);
        spec.rows = 1000;
        spec.partsize = 100;
        let parts = partitions(&spec);
        let n = names(&["row", "value"]);
        let slice: Vec<Row> = (3..6)
            .map(|r| {
                let k = 2 + r * parts;
                let mut v = vec![CqlValue::BigInt(r as i64)];
                v.extend(image::expected(&spec, k));
                row(v)
            })
            .collect();
        let at = ReadAt::Slice { part: 2, start: 3 };
        let yes = |_: u64| true;
        assert_eq!(
            check_builtin(&spec, "range", at, &n, &slice, &yes),
            Verdict::Matched(3)
        );
        // The first row of the slice absent while known written.
        assert!(matches!(
            check_builtin(&spec, "range", at, &n, &slice[1..], &yes),
            Verdict::Mismatch(Mismatch { ref column, .. }) if column == "(row)"
        ));
        // A row holding another row's value.
        let mut swapped = copy(&slice);
        swapped[2].columns[1] = slice[1].columns[1].clone();
        let Verdict::Mismatch(m) = check_builtin(&spec, "range", at, &n, &swapped, &yes) else {
            panic!("a swapped value is a mismatch");
        };
        assert_eq!(m.row, (2 + 5 * parts).to_string());
    }

    #[test]
    fn nb_iot_rows_are_checked_with_their_keys() {
        let mut spec = WorkloadSpec::defaults(WorkloadKind::NbIot);
        spec.rows = 5000;
        let machines = partitions(&spec);
        let n = names(&[
            "machine_id",
            "sensor_name",
            "time",
            "data",
            "sensor_value",
            "station_id",
        ]);
        let full = |k: u64| {
            let (m, s, t) = shapes::iot_key(k, machines);
            let (v, st, d) = shapes::iot_values(k, machines);
            row(vec![
                CqlValue::Uuid(m),
                CqlValue::Text(s.into()),
                CqlValue::Timestamp(t),
                CqlValue::Text(d),
                CqlValue::Double(v),
                CqlValue::Uuid(st),
            ])
        };
        let at = ReadAt::Partition {
            part: 1,
            limit: 10,
            h: 0,
        };
        let rows = vec![full(1), full(1 + machines)];
        let yes = |_: u64| true;
        assert_eq!(
            check_builtin(&spec, "range", at, &n, &rows, &yes),
            Verdict::Matched(2)
        );
        let mut bad = copy(&rows);
        bad[1].columns[4] = Some(CqlValue::Double(-1.0));
        assert!(matches!(
            check_builtin(&spec, "range", at, &n, &bad, &yes),
            Verdict::Mismatch(Mismatch { ref column, .. }) if column == "sensor_value"
        ));
    }

    #[test]
    fn the_verifier_counts_and_keeps_the_first_mismatches() {
        let v = ReadVerifier::default();
        v.learn([3, 4]);
        assert!(v.knows(3) && !v.knows(5));
        assert!(!v.count(Verdict::Matched(4)));
        assert!(!v.count(Verdict::Unchecked));
        for i in 0..(FIRST + 2) {
            assert!(v.count(missing("read", i.to_string())));
        }
        let s = v.summary();
        assert_eq!(
            (s.reads_checked, s.rows_checked, s.reads_unchecked),
            (1, 4, 1)
        );
        assert_eq!((s.mismatches, s.first.len()), (FIRST as u64 + 2, FIRST));
        assert_eq!(s.first[0].row, "0");
    }
}
