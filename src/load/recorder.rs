//! What a run leaves on disk as it goes: its result (JSON, rewritten after intervals so an
//! interrupted run keeps what it measured), its HDR interval log (`.hlog`), its per-interval
//! CSV (`.intervals.csv`) and its acknowledged-write ledger (`.ledger`), all next to the
//! result's path. The records and samples the result keeps are spilled to anonymous files
//! beside it as they come ([`crate::spill`]) and streamed into its rewrites, so the client's
//! memory does not grow with the run; they are read back when the run ends.
//!
//! A failed append to the HDR log, the CSV or the ledger is a typed warning in the result
//! ([`Warning::HlogFailed`], [`Warning::IntervalCsvFailed`], [`Warning::LedgerFailed`]) and
//! that file stops growing; the run goes on. A failed write of the result itself ends the run, at the end of its phase.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::LoadError;
use super::executor::IntervalReport;
use crate::metrics::sampler::Sampler;
use crate::result::hlog::IntervalLog;
use crate::result::intervals_csv::IntervalCsv;
use crate::result::ledger::{LedgerWriter, Mapping};
use crate::result::verify::ReadsVerified;
use crate::result::{
    IntervalRecord, PhaseResult, PhaseSummary, RunResult, RunStatus, Spilled, Warning,
    phase_warnings,
};
use crate::spill::Spill;

/// Every interval for the first minute of a phase, then every 10 s: a long run's result grows,
/// and rewriting it each second would cost the client more and more. A write that took long
/// waits longer for the next ([`WRITE_COST_SHARE`]).
const WRITE_EVERY_INTERVAL: usize = 60;
const WRITE_EVERY: Duration = Duration::from_secs(10);
/// The result's rewrites take at most 1/50 of the client's time: the next write waits 50 times
/// as long as the last took.
const WRITE_COST_SHARE: u32 = 50;
/// … and write at most this many bytes per second on average: a long run's result grows (8 MiB
/// after an hour at 2,000 ops/s), and rewriting it every 10 s would put a growing write load
/// on the disk of the host being measured. The next write waits until the last one's bytes
/// are paid for (an hour's result: about a minute). The HDR log and the CSV, appended every
/// interval, hold the seconds the result has not caught up with yet.
const WRITE_BYTES_PER_S: f64 = 128.0 * 1024.0;

/// A run's result, HDR log and ledger, and their writes.
pub struct Recorder {
    out: PathBuf,
    /// The result so far: its phases' intervals are the records not spilled.
    result: RunResult,
    /// By phase: the records kept so far, before the phase's `intervals` (None where no
    /// spill file could be made: the phase keeps them in memory).
    spills: Vec<Option<Spill<IntervalRecord>>>,
    /// Server and host metrics sampled beside the run.
    sampler: Option<Sampler>,
    /// None once an append failed.
    ledger: Option<LedgerWriter>,
    ledger_path: PathBuf,
    /// None until the phases start, and once an append failed.
    hlog: Option<IntervalLog>,
    hlog_path: PathBuf,
    /// None once an append failed.
    csv: Option<IntervalCsv>,
    csv_path: PathBuf,
    last_write: Instant,
    /// How long the last write of the result took …
    last_write_cost: Duration,
    /// … and how many bytes it wrote.
    last_write_bytes: u64,
    /// Intervals merged into coarser records as the run grows old.
    coarse: crate::result::Coarsening,
    /// The last interval recorded, as measured (the phase may hold it merged).
    latest: Option<IntervalRecord>,
    /// The first failed write of the result during a phase.
    write_error: Option<std::io::Error>,
}

impl Recorder {
    /// Creates the ledger and writes the result as it starts. The ledger is created
    /// (truncated) first: a ledger an earlier run left at the same path never stands beside
    /// this run's result.
    pub fn start(
        out: &Path,
        result: RunResult,
        sampler: Option<Sampler>,
    ) -> Result<Recorder, LoadError> {
        let ledger_path = out.with_extension("ledger");
        let mut result = result;
        let id = crate::result::ledger::new_id(&result.env);
        result.ledger_id = Some(id.clone());
        let ledger = LedgerWriter::create(&ledger_path, &id).map_err(|source| LoadError::Io {
            path: ledger_path.clone(),
            source,
        })?;
        let csv_path = crate::result::intervals_csv::path_for(out);
        let csv = IntervalCsv::create(&csv_path).map_err(|source| LoadError::Io {
            path: csv_path.clone(),
            source,
        })?;
        if let Some(s) = &sampler {
            s.spill_in(spill_dir(out));
        }
        let r = Recorder {
            out: out.to_path_buf(),
            spills: result.phases.iter().map(|_| None).collect(),
            result,
            sampler,
            ledger: Some(ledger),
            ledger_path,
            hlog: None,
            hlog_path: out.with_extension("hlog"),
            csv: Some(csv),
            csv_path,
            last_write: Instant::now(),
            last_write_cost: Duration::ZERO,
            last_write_bytes: 0,
            coarse: Default::default(),
            latest: None,
            write_error: None,
        };
        r.result.write(&r.out).map_err(|source| r.io(source))?;
        Ok(r)
    }

    /// Creates the HDR log, its base time the run's start.
    pub fn open_hlog(&mut self, started_unix_s: f64) -> Result<(), LoadError> {
        let log = IntervalLog::create(&self.hlog_path, started_unix_s).map_err(|source| {
            LoadError::Io {
                path: self.hlog_path.clone(),
                source,
            }
        })?;
        self.hlog = Some(log);
        Ok(())
    }

    /// The result so far, without its spilled records ([`Recorder::phase_intervals`]).
    pub fn result(&self) -> &RunResult {
        &self.result
    }

    /// How many records the current phase keeps so far.
    pub fn kept_intervals(&self) -> usize {
        let spilled = self
            .spills
            .last()
            .and_then(Option::as_ref)
            .map_or(0, Spill::len);
        spilled + self.result.phases.last().map_or(0, |p| p.intervals.len())
    }

    /// The current phase's records, read back (a failed read is the run's error, kept for
    /// [`Recorder::check_writes`]: the phase's records in memory are returned).
    pub fn phase_intervals(&mut self) -> Vec<IntervalRecord> {
        let Some(p) = self.result.phases.last() else {
            return Vec::new();
        };
        let spilled = match self.spills.last().and_then(Option::as_ref) {
            Some(s) => s.read_all(),
            None => Ok(Vec::new()),
        };
        match spilled {
            Ok(mut all) => {
                all.extend(p.intervals.iter().cloned());
                all
            }
            Err(e) => {
                let kept = p.intervals.clone();
                self.write_error.get_or_insert(e);
                kept
            }
        }
    }

    /// Notes the time this shard's main phase started.
    pub fn main_started(&mut self, at_unix_s: f64) {
        if let Some(s) = &mut self.result.shard {
            s.main_started_unix_s = Some(at_unix_s);
        }
    }

    pub fn start_phase(&mut self, phase: PhaseResult) {
        self.flush_intervals();
        self.result.phases.push(phase);
        self.spills
            .push(Spill::create_in(spill_dir(&self.out)).ok());
        self.last_write = Instant::now();
    }

    /// Records an interval of phase `phase` (which began `offset_s` into the run): its
    /// histograms into the HDR log, its writes into the ledger, `rec` into the result (merged
    /// into a coarser record once the phase is an hour old: [`crate::result::kept_width_s`]).
    pub fn interval(
        &mut self,
        phase: &str,
        offset_s: f64,
        rampup: bool,
        rep: &IntervalReport,
        rec: IntervalRecord,
    ) {
        if let Some(log) = &mut self.hlog
            && let Err(e) = append_histograms(log, phase, offset_s, rep)
        {
            self.result.warnings.push(Warning::HlogFailed {
                phase: phase.to_string(),
                error: format!("{}: {e}", self.hlog_path.display()),
            });
            self.hlog = None;
        }
        if let Some(csv) = &mut self.csv
            && let Err(e) = csv.append(phase, offset_s, &rec)
        {
            self.result.warnings.push(Warning::IntervalCsvFailed {
                phase: phase.to_string(),
                error: format!("{}: {e}", self.csv_path.display()),
            });
            self.csv = None;
        }
        let mapping = if rampup {
            Mapping::Sequential
        } else {
            Mapping::Hashed
        };
        if let Some(l) = &mut self.ledger
            && let Err(e) = l.append(phase, mapping, &rep.snapshot.writes)
        {
            self.result.warnings.push(Warning::LedgerFailed {
                phase: phase.to_string(),
                error: format!("{}: {e}", self.ledger_path.display()),
            });
            self.ledger = None;
        }
        for kept in self.coarse.take(&rep.snapshot, rec.clone()) {
            self.keep(kept);
        }
        self.latest = Some(rec);
    }

    /// Keeps the intervals merged so far as one record: the phase's intervals are complete.
    pub fn flush_intervals(&mut self) {
        if let Some(r) = self.coarse.flush() {
            self.keep(r);
        }
    }

    /// Keeps a record of the current phase: spilled while its spill takes them, else (and
    /// then on) in memory.
    fn keep(&mut self, r: IntervalRecord) {
        let Some(p) = self.result.phases.last_mut() else {
            return;
        };
        if p.intervals.is_empty()
            && let Some(Some(spill)) = self.spills.last_mut()
            && spill.push(&r).is_ok()
        {
            return;
        }
        p.intervals.push(r);
    }

    /// The last interval recorded, as measured.
    pub fn last_interval(&self) -> &IntervalRecord {
        self.latest.as_ref().expect("an interval recorded")
    }

    /// The server and host metrics' latest sample, if any is sampled yet.
    pub fn latest_sample(&self) -> Option<crate::result::series::MetricSeries> {
        self.sampler.as_ref().and_then(|s| s.latest())
    }

    pub fn warn(&mut self, w: Warning) {
        self.result.warnings.push(w);
    }

    /// The workload's schema as the server has it (see [`crate::result::Fingerprint::schema`]).
    pub fn set_schema(&mut self, schema: std::collections::BTreeMap<String, String>) {
        self.result.fingerprint.schema = schema;
    }

    pub fn set_events(&mut self, events: Vec<crate::result::fault::FaultEvent>) {
        self.result.events = events;
    }

    pub fn set_server_latency(&mut self, rows: Vec<crate::result::server_latency::ServerLatency>) {
        self.result.server_latency = rows;
    }

    pub fn set_reads_verified(&mut self, r: ReadsVerified) {
        self.result.reads_verified = Some(r);
    }

    /// Writes the result when it is due (with the metrics sampled so far); a failure is kept
    /// for [`Recorder::end_phase`].
    pub fn save_if_due(&mut self) {
        let n = self.kept_intervals();
        if n > WRITE_EVERY_INTERVAL && self.last_write.elapsed() < self.write_wait() {
            return;
        }
        let t = Instant::now();
        // The sampler's series is lent to the result for the write (moved in and back, not
        // copied), and the records and samples spilled are streamed into it.
        let (result, out) = (&mut self.result, &self.out);
        let spilled = Spilled {
            intervals: &self.spills,
            samples: None,
        };
        let written = match &self.sampler {
            Some(s) => s
                .with_series(|series, samples| {
                    result.metrics = Some(Box::new(std::mem::take(series)));
                    let w = result.write_with(out, Spilled { samples, ..spilled });
                    if let Some(m) = result.metrics.take() {
                        *series = *m;
                    }
                    w
                })
                .unwrap_or_else(|| result.write_with(out, spilled)),
            None => result.write_with(out, spilled),
        };
        match written {
            Ok(()) => {
                self.last_write_bytes = std::fs::metadata(&self.out).map_or(0, |m| m.len());
            }
            Err(e) => {
                self.write_error.get_or_insert(e);
            }
        }
        self.last_write = Instant::now();
        self.last_write_cost = self.last_write - t;
    }

    /// How long after the last write of the result the next one is due (once a phase's
    /// first minute is written): 10 s, or longer when the last write took long or was large.
    fn write_wait(&self) -> Duration {
        let by_bytes = Duration::from_secs_f64(self.last_write_bytes as f64 / WRITE_BYTES_PER_S);
        WRITE_EVERY
            .max(self.last_write_cost * WRITE_COST_SHARE)
            .max(by_bytes)
    }

    /// A failed write of the result during the phase, as the run's error.
    pub fn check_writes(&mut self) -> Result<(), LoadError> {
        match self.write_error.take() {
            Some(e) => Err(self.io(e)),
            None => Ok(()),
        }
    }

    /// Ends phase `name` with its summary and the warnings it calls for.
    pub fn end_phase(&mut self, name: &str, summary: PhaseSummary) {
        self.result.warnings.extend(phase_warnings(name, &summary));
        self.phase_mut().summary = Some(summary);
    }

    /// The summary of the current phase.
    pub fn phase_summary(&self) -> Option<&PhaseSummary> {
        self.result.phases.last()?.summary.as_ref()
    }

    pub fn set_status(&mut self, status: RunStatus) {
        self.result.status = status;
    }

    /// Ends the run: its records read back, its status (completed unless a phase said
    /// otherwise), its end time, the metrics' final series and what they warn of, and the
    /// result's last write.
    pub fn finish(mut self) -> Result<RunResult, LoadError> {
        self.flush_intervals();
        for (p, spill) in self.result.phases.iter_mut().zip(&mut self.spills) {
            if let Some(s) = spill.take() {
                let mut all = s.read_all().map_err(|source| LoadError::Io {
                    path: self.out.clone(),
                    source,
                })?;
                all.append(&mut p.intervals);
                p.intervals = all;
            }
        }
        let r = &mut self.result;
        if r.status == RunStatus::Running {
            r.status = RunStatus::Completed;
        }
        r.finished_unix_s = Some(crate::host::unix_now() as u64);
        if let Some(s) = self.sampler.take() {
            let series = s.finish();
            let warnings: Vec<_> = r
                .main_phase()
                .into_iter()
                .flat_map(|main| {
                    crate::result::compaction_warning(main, &series)
                        .into_iter()
                        .chain(crate::result::host_warning(main, &series))
                })
                .collect();
            r.warnings.extend(warnings);
            r.metrics = Some(Box::new(series));
        }
        self.result
            .write(&self.out)
            .map_err(|source| self.io(source))?;
        Ok(self.result)
    }

    fn phase_mut(&mut self) -> &mut PhaseResult {
        self.result.phases.last_mut().expect("a phase started")
    }

    fn io(&self, source: std::io::Error) -> LoadError {
        LoadError::Io {
            path: self.out.clone(),
            source,
        }
    }
}

/// Where a result's spills are made: its own directory.
fn spill_dir(out: &Path) -> &Path {
    out.parent().unwrap_or(Path::new("."))
}

/// An interval's histograms, response and service time of each operation kind, tagged
/// `phase/kind/response`.
fn append_histograms(
    log: &mut IntervalLog,
    phase: &str,
    offset_s: f64,
    rep: &IntervalReport,
) -> std::io::Result<()> {
    let len = rep.end_s - rep.start_s;
    for k in rep.snapshot.kinds() {
        let o = rep.snapshot.op(k);
        let start = offset_s + rep.start_s;
        log.append(&format!("{phase}/{k}/response"), start, len, &o.response)?;
        log.append(&format!("{phase}/{k}/service"), start, len, &o.service)?;
    }
    log.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> IntervalReport {
        let mut snapshot = crate::stats::Snapshot::default();
        snapshot.record_ok(crate::spec::OpKind::Write, 1_000_000, 900_000);
        IntervalReport {
            index: 0,
            start_s: 0.0,
            end_s: 1.0,
            warmup: false,
            drain: false,
            snapshot,
            backlog: 0,
        }
    }

    fn record(rep: &IntervalReport) -> IntervalRecord {
        IntervalRecord::from_snapshot(rep.start_s, rep.end_s, false, &rep.snapshot, 0, 0.0)
    }

    /// Starts a `main` phase with the fixture's load.
    fn start_main(rec: &mut Recorder) {
        let load = rec.result.phases[0].load.clone();
        rec.start_phase(PhaseResult {
            name: "main".into(),
            offset_s: 0.0,
            load,
            intervals: Vec::new(),
            summary: None,
        });
    }

    #[test]
    fn a_failed_hdr_log_append_is_a_warning_and_the_run_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.json");
        let result =
            crate::result::fixture::run("lab", &crate::result::fixture::RunShape::default());
        let mut rec = Recorder::start(&out, result, None).unwrap();
        // An HDR log on a disk that takes no more writes.
        rec.hlog = Some(IntervalLog::full());
        start_main(&mut rec);
        let warnings_before = rec.result().warnings.len();
        for _ in 0..3 {
            let rep = report();
            rec.interval("main", 0.0, false, &rep, record(&rep));
        }
        let hlog_warnings: Vec<&Warning> = rec.result().warnings[warnings_before..]
            .iter()
            .filter(|w| matches!(w, Warning::HlogFailed { .. }))
            .collect();
        assert_eq!(hlog_warnings.len(), 1, "warned once: {hlog_warnings:?}");
        assert!(
            hlog_warnings[0]
                .to_string()
                .starts_with("main: the HDR interval log")
        );
        // The intervals and the ledger went on.
        assert_eq!(rec.kept_intervals(), 3);
        assert!(rec.ledger.is_some());
        rec.save_if_due();
        rec.check_writes().unwrap();
        let back = RunResult::read(&out).unwrap();
        assert!(
            back.warnings
                .iter()
                .any(|w| matches!(w, Warning::HlogFailed { .. }))
        );
    }

    #[test]
    fn kept_records_are_spilled_streamed_into_each_write_and_read_back_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.json");
        let result =
            crate::result::fixture::run("lab", &crate::result::fixture::RunShape::default());
        let mut rec = Recorder::start(&out, result, None).unwrap();
        start_main(&mut rec);
        let mut taken = Vec::new();
        for i in 0..5 {
            let mut rep = report();
            rep.start_s = i as f64;
            rep.end_s = i as f64 + 1.0;
            let r = record(&rep);
            taken.push(r.clone());
            rec.interval("main", 0.0, false, &rep, r);
        }
        // None in memory: all in the phase's spill, and in the file written.
        assert!(rec.result().phases.last().unwrap().intervals.is_empty());
        assert_eq!(rec.kept_intervals(), 5);
        rec.save_if_due();
        rec.check_writes().unwrap();
        let written = RunResult::read(&out).unwrap();
        assert_eq!(written.phases.last().unwrap().intervals, taken);
        assert_eq!(rec.phase_intervals(), taken);
        // The spill files are anonymous: the directory holds the run's own files only.
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["r.intervals.csv", "r.json", "r.ledger"]);
        let done = rec.finish().unwrap();
        assert_eq!(done.phases.last().unwrap().intervals, taken);
        assert_eq!(RunResult::read(&out).unwrap(), done);
    }

    #[test]
    fn a_large_result_is_rewritten_less_often_so_its_bytes_per_second_stay_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.json");
        let result =
            crate::result::fixture::run("lab", &crate::result::fixture::RunShape::default());
        let mut rec = Recorder::start(&out, result, None).unwrap();
        // A small, quick write: every 10 s.
        rec.save_if_due();
        let small = std::fs::metadata(&out).unwrap().len();
        assert_eq!(rec.last_write_bytes, small);
        assert!(small < 128 * 1024, "{small} bytes");
        rec.last_write_cost = Duration::from_millis(1);
        assert_eq!(rec.write_wait(), WRITE_EVERY);
        // An hour's result (8 MiB at 2,000 ops/s): a minute between writes, 128 KiB/s.
        rec.last_write_bytes = 8 << 20;
        assert_eq!(rec.write_wait(), Duration::from_secs(64));
        // A slow write waits 50 times its cost, if that is longer.
        rec.last_write_cost = Duration::from_secs(2);
        assert_eq!(rec.write_wait(), Duration::from_secs(100));
        // Not due right after a write once the phase's first minute is written.
        start_main(&mut rec);
        for _ in 0..=WRITE_EVERY_INTERVAL {
            let rep = report();
            rec.interval("main", 0.0, false, &rep, record(&rep));
        }
        let before = rec.last_write;
        rec.save_if_due();
        assert_eq!(rec.last_write, before, "written again before it was due");
    }

    #[test]
    fn a_write_during_the_run_lends_the_series_and_the_sampler_keeps_it() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.json");
        let result =
            crate::result::fixture::run("lab", &crate::result::fixture::RunShape::default());
        let plan = crate::metrics::sampler::MetricsPlan {
            endpoints: vec![],
            pids: vec![],
            node_cpus: vec![],
            host: true,
            interval_s: 0.05,
            node_devices: vec![],
            node_exporters: vec![],
            through_cql: false,
            reader: None,
        };
        let sampler = Sampler::start(plan, crate::host::unix_now());
        let mut rec = Recorder::start(&out, result, Some(sampler)).unwrap();
        let samples = |rec: &Recorder| {
            let s = rec.sampler.as_ref().unwrap();
            s.with_series(|m, spilled| m.samples.len() + spilled.map_or(0, Spill::len))
                .unwrap()
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while samples(&rec) < 3 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let before = samples(&rec);
        assert!(before >= 3, "{before} samples");
        // Spilled, none in memory; the latest still at hand for a live view.
        let (in_memory, spilled) = rec
            .sampler
            .as_ref()
            .unwrap()
            .with_series(|m, spilled| (m.samples.len(), spilled.map_or(0, Spill::len)))
            .unwrap();
        assert_eq!(in_memory, 0);
        assert!(spilled >= 3, "{spilled} spilled");
        assert_eq!(rec.latest_sample().unwrap().samples.len(), 1);
        rec.save_if_due();
        rec.check_writes().unwrap();
        // The file has the series as it was; the recorder holds no copy, the sampler its own.
        let written = RunResult::read(&out).unwrap();
        assert!(written.metrics.unwrap().samples.len() >= before);
        assert!(rec.result.metrics.is_none());
        assert!(samples(&rec) >= before, "the sampler lost its series");
        std::thread::sleep(Duration::from_millis(200));
        assert!(
            samples(&rec) > before,
            "the sampler goes on after the write"
        );
        let r = rec.finish().unwrap();
        assert!(r.metrics.unwrap().samples.len() > before);
    }
}
