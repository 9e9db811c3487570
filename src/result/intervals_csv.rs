//! A run's intervals as CSV (`NAME.intervals.csv` beside `NAME.json`): one row per interval
//! and operation kind, plus one `all` row per interval with the interval's totals, for
//! spreadsheets and scripts that do not read the JSON. Appended as the run goes (so an
//! interrupted run keeps its rows, and a long run's file is never rewritten), and written whole
//! for a merged run. Times are seconds on the run's axis (`t_s`, the interval's end) and
//! within the phase; latencies in milliseconds; an empty cell is a figure the row has not.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use super::{IntervalRecord, RunResult};

/// The file beside a result at `out`.
pub fn path_for(out: &Path) -> PathBuf {
    out.with_extension("intervals.csv")
}

/// The columns, in order.
pub const COLUMNS: [&str; 19] = [
    "phase",
    "t_s",
    "start_s",
    "end_s",
    "warmup",
    "drain",
    "op",
    "ok",
    "errors",
    "ops_per_s",
    "response_p50_ms",
    "response_p99_ms",
    "response_max_ms",
    "service_p50_ms",
    "service_p99_ms",
    "backlog",
    "send_lag_p99_ms",
    "client_cpu_s",
    "errors_by_kind",
];

/// A CSV file of intervals, appended to.
pub struct IntervalCsv {
    w: csv::Writer<BufWriter<File>>,
}

fn io(e: csv::Error) -> std::io::Error {
    std::io::Error::other(e)
}

fn num(x: f64) -> String {
    // Three decimals: microseconds for milliseconds, milliseconds for seconds.
    let r = (x * 1000.0).round() / 1000.0;
    r.to_string()
}

impl IntervalCsv {
    /// Creates (truncates) the file and writes its header.
    pub fn create(path: &Path) -> std::io::Result<IntervalCsv> {
        let mut w = csv::Writer::from_writer(BufWriter::new(File::create(path)?));
        w.write_record(COLUMNS).map_err(io)?;
        w.flush()?;
        Ok(IntervalCsv { w })
    }

    /// The rows of one interval of phase `phase`, which began `offset_s` into the run.
    pub fn append(
        &mut self,
        phase: &str,
        offset_s: f64,
        i: &IntervalRecord,
    ) -> std::io::Result<()> {
        let secs = (i.end_s - i.start_s).max(1e-9);
        let common = |op: &str, ok: u64, errors: u64, ops_per_s: f64| -> Vec<String> {
            vec![
                phase.to_string(),
                num(offset_s + i.end_s),
                num(i.start_s),
                num(i.end_s),
                i.warmup.to_string(),
                i.drain.to_string(),
                op.to_string(),
                ok.to_string(),
                errors.to_string(),
                num(ops_per_s),
            ]
        };
        let tail = [
            i.backlog.to_string(),
            num(i.send_lag_p99_ms),
            num(i.client_cpu_s),
        ];
        let errors_by_kind: Vec<String> = i
            .errors_by_kind
            .iter()
            .map(|(k, n)| format!("{}={n}", k.name()))
            .collect();
        let mut all = common("all", i.ok, i.errors, i.ops_per_s);
        all.extend(std::iter::repeat_n(String::new(), 5));
        all.extend(tail.iter().cloned());
        all.push(errors_by_kind.join(" "));
        self.w.write_record(&all).map_err(io)?;
        for (kind, o) in &i.by_op {
            let mut row = common(&kind.to_string(), o.ok, o.errors, o.ok as f64 / secs);
            let has = o.ok > 0;
            for v in [
                o.response_p50_ms,
                o.response_p99_ms,
                o.response_max_ms,
                o.service_p50_ms,
                o.service_p99_ms,
            ] {
                row.push(if has { num(v) } else { String::new() });
            }
            row.extend(std::iter::repeat_n(String::new(), 4));
            self.w.write_record(&row).map_err(io)?;
        }
        self.w.flush()
    }
}

/// Writes every interval of `run` to `path` (a merged run's file, made at once).
pub fn write(path: &Path, run: &RunResult) -> std::io::Result<()> {
    let mut f = IntervalCsv::create(path)?;
    for p in &run.phases {
        for i in &p.intervals {
            f.append(&p.name, p.offset_s, i)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::fixture::{RunShape, run as synthetic_run};

    #[test]
    fn one_row_per_interval_and_kind_with_the_interval_totals() {
        let dir = tempfile::tempdir().unwrap();
        let run = synthetic_run(
            "ec2",
            &RunShape {
                intervals: 4,
                warmup: 1,
                ..RunShape::default()
            },
        );
        let path = path_for(&dir.path().join("run.json"));
        assert!(path.ends_with("run.intervals.csv"));
        write(&path, &run).unwrap();
        let mut r = csv::Reader::from_path(&path).unwrap();
        assert_eq!(r.headers().unwrap().iter().collect::<Vec<_>>(), COLUMNS);
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        let intervals: usize = run.phases.iter().map(|p| p.intervals.len()).sum();
        let kinds: usize = run
            .phases
            .iter()
            .flat_map(|p| &p.intervals)
            .map(|i| i.by_op.len())
            .sum();
        assert_eq!(rows.len(), intervals + kinds);
        let phase = &run.phases[0];
        let first = &phase.intervals[0];
        let all = &rows[0];
        assert_eq!(&all[0], phase.name.as_str());
        assert_eq!(&all[4], "true", "the first interval is warmup");
        assert_eq!(&all[6], "all");
        assert_eq!(all[7].parse::<u64>().unwrap(), first.ok);
        assert_eq!(&all[10], "", "no percentile for all kinds");
        // The kinds' rows follow their interval's, their ok adding up to its total.
        let ok: u64 = rows[1..=first.by_op.len()]
            .iter()
            .map(|r| r[7].parse::<u64>().unwrap())
            .sum();
        assert_eq!(ok, first.ok);
        let (kind, op) = first.by_op.iter().next().unwrap();
        let row = &rows[1];
        assert_eq!(&row[6], kind.to_string().as_str());
        let p99: f64 = row[11].parse().unwrap();
        assert!((p99 - op.response_p99_ms).abs() < 0.001, "{p99} vs {op:?}");
        let t: f64 = all[1].parse().unwrap();
        assert!((t - (phase.offset_s + first.end_s)).abs() < 0.001);
    }
}
