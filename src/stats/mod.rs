//! Statistics, no I/O: HDR histograms of latencies in nanoseconds, per-operation snapshots
//! that workers own and merge once per interval, percentile summaries, error kinds.

use std::collections::BTreeMap;

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

use crate::spec::OpKind;

pub mod compare;
pub mod gate;
pub mod writes;

/// Latencies are recorded in nanoseconds from 1 µs to 1 hour with 3 significant digits.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1_000, 3_600_000_000_000, 3).expect("valid histogram bounds")
}

/// Records `ns`, clamped into the histogram's range (a latency beyond an hour is recorded as
/// an hour rather than lost).
pub fn record(h: &mut Histogram<u64>, ns: u64) {
    let v = ns.clamp(h.low(), h.high());
    h.record(v).expect("value clamped into range");
}

/// Encodes a histogram as base64 of the V2-deflate format (what HdrHistogram tools read).
pub fn encode(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut buf)
        .expect("histogram serializes");
    base64::engine::general_purpose::STANDARD.encode(buf)
}

/// Decodes [`encode`]'s output.
pub fn decode(s: &str) -> Result<Histogram<u64>, crate::error::Invalid> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(s)
        .map_err(|e| crate::invalid!("histogram base64: {e}"))?;
    Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| crate::invalid!("histogram: {e:?}"))
}

/// Percentiles of a latency distribution, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Percentiles {
    pub count: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p75_ms: f64,
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub p9999_ms: f64,
    pub max_ms: f64,
}

/// The median of a non-empty, ascending slice.
pub fn median_of_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The percentiles reported everywhere, with their labels.
pub const PERCENTILES: [(&str, f64); 7] = [
    ("p50", 50.0),
    ("p75", 75.0),
    ("p90", 90.0),
    ("p95", 95.0),
    ("p99", 99.0),
    ("p99.9", 99.9),
    ("p99.99", 99.99),
];

impl Percentiles {
    pub fn of(h: &Histogram<u64>) -> Percentiles {
        if h.is_empty() {
            return Percentiles::default();
        }
        let ms = |ns: u64| ns as f64 / 1e6;
        let q = |p: f64| ms(h.value_at_quantile(p / 100.0));
        Percentiles {
            count: h.len(),
            mean_ms: h.mean() / 1e6,
            p50_ms: q(50.0),
            p75_ms: q(75.0),
            p90_ms: q(90.0),
            p95_ms: q(95.0),
            p99_ms: q(99.0),
            p999_ms: q(99.9),
            p9999_ms: q(99.99),
            max_ms: ms(h.max()),
        }
    }

    /// Values in the order of [`PERCENTILES`], then max.
    pub fn values(&self) -> [f64; 8] {
        [
            self.p50_ms,
            self.p75_ms,
            self.p90_ms,
            self.p95_ms,
            self.p99_ms,
            self.p999_ms,
            self.p9999_ms,
            self.max_ms,
        ]
    }
}

/// Why a request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The client-side request timeout expired.
    ClientTimeout,
    /// The coordinator timed out waiting for replicas (read).
    ReadTimeout,
    /// The coordinator timed out waiting for replicas (write).
    WriteTimeout,
    /// A lightweight transaction's Paxos round timed out (write timeout of type CAS: often
    /// contention between transactions on the same partition).
    CasWriteTimeout,
    /// A lightweight transaction's read at SERIAL / LOCAL_SERIAL timed out.
    CasReadTimeout,
    /// Not enough replicas alive for the consistency level.
    Unavailable,
    /// The node shed load.
    Overloaded,
    /// The connection broke or no connection was available.
    ConnectionLost,
    /// `--verify`: a read returned a row that differs from what the generator wrote, or no
    /// row where one is known to be written.
    Mismatch,
    Other,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 10] = [
        ErrorKind::ClientTimeout,
        ErrorKind::ReadTimeout,
        ErrorKind::WriteTimeout,
        ErrorKind::CasWriteTimeout,
        ErrorKind::CasReadTimeout,
        ErrorKind::Unavailable,
        ErrorKind::Overloaded,
        ErrorKind::ConnectionLost,
        ErrorKind::Mismatch,
        ErrorKind::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::ClientTimeout => "client_timeout",
            ErrorKind::ReadTimeout => "read_timeout",
            ErrorKind::WriteTimeout => "write_timeout",
            ErrorKind::CasWriteTimeout => "cas_write_timeout",
            ErrorKind::CasReadTimeout => "cas_read_timeout",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Overloaded => "overloaded",
            ErrorKind::ConnectionLost => "connection_lost",
            ErrorKind::Mismatch => "mismatch",
            ErrorKind::Other => "other",
        }
    }
}

/// What one operation kind did in one interval (or a whole phase).
#[derive(Debug, Clone)]
pub struct OpStats {
    /// Completion − intended start (coordinated-omission corrected).
    pub response: Histogram<u64>,
    /// Completion − actual send.
    pub service: Histogram<u64>,
    pub ok: u64,
    pub errors: BTreeMap<ErrorKind, u64>,
}

impl Default for OpStats {
    fn default() -> Self {
        OpStats {
            response: new_histogram(),
            service: new_histogram(),
            ok: 0,
            errors: BTreeMap::new(),
        }
    }
}

/// Adds `from`'s error counts (by kind) to `into`'s.
pub fn add_errors(into: &mut BTreeMap<ErrorKind, u64>, from: &BTreeMap<ErrorKind, u64>) {
    for (k, n) in from {
        *into.entry(*k).or_default() += n;
    }
}

impl OpStats {
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    pub fn add(&mut self, other: &OpStats) {
        self.response
            .add(&other.response)
            .expect("same histogram bounds");
        self.service
            .add(&other.service)
            .expect("same histogram bounds");
        self.ok += other.ok;
        add_errors(&mut self.errors, &other.errors);
    }

    pub fn reset(&mut self) {
        self.response.reset();
        self.service.reset();
        self.ok = 0;
        self.errors.clear();
    }
}

/// Per-operation statistics of one worker or of all workers merged.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The built-in kinds: write, read, range.
    pub ops: [OpStats; 3],
    /// A user profile's operations, in the order first seen.
    pub named: Vec<(OpKind, OpStats)>,
    /// Largest delay between an operation's intended start and its actual send.
    pub max_send_lag_ns: u64,
    /// Open loop: every operation's send lag (actual send − intended start), all kinds
    /// together (a lag below the histogram's 1 µs floor is recorded as 1 µs).
    pub send_lag: Histogram<u64>,
    /// Write cycles by outcome (the acknowledged-write ledger's share of this snapshot).
    pub writes: crate::stats::writes::Writes,
}

impl Default for Snapshot {
    fn default() -> Self {
        Snapshot {
            ops: Default::default(),
            named: Vec::new(),
            max_send_lag_ns: 0,
            send_lag: new_histogram(),
            writes: Default::default(),
        }
    }
}

/// The statistics of a kind no operation of which was seen.
static NONE: std::sync::LazyLock<OpStats> = std::sync::LazyLock::new(OpStats::default);

impl Snapshot {
    pub fn op(&self, k: OpKind) -> &OpStats {
        match k {
            OpKind::Write => &self.ops[0],
            OpKind::Read => &self.ops[1],
            OpKind::Range => &self.ops[2],
            OpKind::Named(_) => self
                .named
                .iter()
                .find(|(n, _)| *n == k)
                .map_or(&NONE, |(_, s)| s),
        }
    }

    fn op_mut(&mut self, k: OpKind) -> &mut OpStats {
        match k {
            OpKind::Write => &mut self.ops[0],
            OpKind::Read => &mut self.ops[1],
            OpKind::Range => &mut self.ops[2],
            OpKind::Named(_) => {
                let i = match self.named.iter().position(|(n, _)| *n == k) {
                    Some(i) => i,
                    None => {
                        self.named.push((k, OpStats::default()));
                        self.named.len() - 1
                    }
                };
                &mut self.named[i].1
            }
        }
    }

    /// Every kind's statistics, built-ins first.
    fn all_ops(&self) -> impl Iterator<Item = &OpStats> {
        self.ops.iter().chain(self.named.iter().map(|(_, s)| s))
    }

    /// Records one successful operation.
    #[inline]
    pub fn record_ok(&mut self, k: OpKind, response_ns: u64, service_ns: u64) {
        let s = self.op_mut(k);
        record(&mut s.response, response_ns);
        record(&mut s.service, service_ns);
        s.ok += 1;
    }

    /// Records how late one operation was sent after its intended start (open loop).
    #[inline]
    pub fn record_send_lag(&mut self, lag_ns: u64) {
        record(&mut self.send_lag, lag_ns);
        self.max_send_lag_ns = self.max_send_lag_ns.max(lag_ns);
    }

    pub fn record_error(&mut self, k: OpKind, e: ErrorKind) {
        *self.op_mut(k).errors.entry(e).or_default() += 1;
    }

    /// Merges `other` in, its acknowledged writes included (one interval from its workers).
    pub fn add(&mut self, other: &Snapshot) {
        self.add_stats(other);
        self.writes.add(&other.writes);
    }

    /// Merges `other`'s counts and histograms in, not its writes: a whole phase's totals
    /// would otherwise hold every cycle it wrote (the ledger file has them, interval by
    /// interval).
    pub fn add_stats(&mut self, other: &Snapshot) {
        for (a, b) in self.ops.iter_mut().zip(&other.ops) {
            a.add(b);
        }
        for (k, b) in &other.named {
            self.op_mut(*k).add(b);
        }
        self.max_send_lag_ns = self.max_send_lag_ns.max(other.max_send_lag_ns);
        self.send_lag
            .add(&other.send_lag)
            .expect("same histogram bounds");
    }

    pub fn reset(&mut self) {
        self.ops.iter_mut().for_each(OpStats::reset);
        self.named.iter_mut().for_each(|(_, s)| s.reset());
        self.max_send_lag_ns = 0;
        self.send_lag.reset();
        self.writes.clear();
    }

    /// Successful operations of all kinds.
    pub fn ok(&self) -> u64 {
        self.all_ops().map(|o| o.ok).sum()
    }

    pub fn errors(&self) -> u64 {
        self.all_ops().map(OpStats::error_count).sum()
    }

    /// Errors of all kinds together, by error (without merging histograms as
    /// [`Snapshot::all`] does: each interval's record takes them).
    pub fn errors_by_kind(&self) -> BTreeMap<ErrorKind, u64> {
        let mut by = BTreeMap::new();
        self.all_ops().for_each(|o| add_errors(&mut by, &o.errors));
        by
    }

    /// All kinds merged into one.
    pub fn all(&self) -> OpStats {
        let mut all = OpStats::default();
        self.all_ops().for_each(|o| all.add(o));
        all
    }

    /// Kinds that saw any operation, in kind order.
    pub fn kinds(&self) -> Vec<OpKind> {
        let mut kinds: Vec<OpKind> = OpKind::ALL
            .into_iter()
            .chain(self.named.iter().map(|(k, _)| *k))
            .filter(|k| self.op(*k).ok + self.op(*k).error_count() > 0)
            .collect();
        kinds.sort();
        kinds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_operations_are_kinds_of_their_own() {
        let insert = OpKind::profile_op("st_insert", true);
        let latest = OpKind::profile_op("st_latest", false);
        let (mut a, mut b) = (Snapshot::default(), Snapshot::default());
        a.record_ok(insert, 1_000_000, 500_000);
        b.record_ok(insert, 2_000_000, 500_000);
        b.record_ok(latest, 3_000_000, 1_000_000);
        b.record_error(latest, ErrorKind::CasWriteTimeout);
        a.add(&b);
        assert_eq!(a.op(insert).ok, 2);
        assert_eq!(a.op(latest).ok, 1);
        assert_eq!(a.op(latest).errors[&ErrorKind::CasWriteTimeout], 1);
        assert_eq!((a.ok(), a.errors(), a.all().response.len()), (3, 1, 3));
        assert_eq!(a.errors_by_kind(), a.all().errors);
        assert_eq!(a.kinds(), vec![insert, latest]);
        assert_eq!(a.op(OpKind::profile_op("st_never", false)).ok, 0);
        assert!(insert.writes() && !latest.writes());
        a.reset();
        assert_eq!(a.ok(), 0);
    }

    #[test]
    fn percentiles_of_known_distribution() {
        let mut h = new_histogram();
        for ms in 1..=100u64 {
            record(&mut h, ms * 1_000_000);
        }
        let p = Percentiles::of(&h);
        assert_eq!(p.count, 100);
        assert!((p.p50_ms - 50.0).abs() < 0.1, "{p:?}");
        assert!((p.p99_ms - 99.0).abs() < 0.1, "{p:?}");
        assert!((p.max_ms - 100.0).abs() < 0.1, "{p:?}");
        assert_eq!(Percentiles::of(&new_histogram()), Percentiles::default());
    }

    #[test]
    fn out_of_range_values_are_clamped_not_lost() {
        let mut h = new_histogram();
        record(&mut h, 5);
        record(&mut h, u64::MAX);
        assert_eq!(h.len(), 2);
    }

    #[test]
    fn merging_snapshots_adds_histograms_and_counts() {
        let mut a = Snapshot::default();
        let mut b = Snapshot::default();
        a.record_ok(OpKind::Write, 1_000_000, 500_000);
        b.record_ok(OpKind::Write, 3_000_000, 600_000);
        b.record_ok(OpKind::Read, 2_000_000, 2_000_000);
        b.record_error(OpKind::Read, ErrorKind::Unavailable);
        b.max_send_lag_ns = 7;
        a.record_send_lag(40_000);
        b.record_send_lag(3_000_000);
        b.record_send_lag(500);
        a.add(&b);
        assert_eq!(a.op(OpKind::Write).ok, 2);
        assert_eq!(a.op(OpKind::Write).response.len(), 2);
        assert_eq!(a.errors(), 1);
        assert_eq!(a.ok(), 3);
        // The largest lag, and every lag in the histogram (the one under 1 µs clamped to it).
        assert_eq!(a.max_send_lag_ns, 3_000_000);
        assert_eq!(a.send_lag.len(), 3);
        assert!(a.send_lag.equivalent(a.send_lag.min(), 1_000));
        assert_eq!(a.kinds(), vec![OpKind::Write, OpKind::Read]);
        assert_eq!(a.all().response.len(), 3);
        a.reset();
        assert_eq!(a.ok(), 0);
        assert!(a.send_lag.is_empty());
        assert_eq!(a.max_send_lag_ns, 0);
    }

    #[test]
    fn histograms_round_trip_through_base64() {
        let mut h = new_histogram();
        for v in [1_000u64, 2_000_000, 3_000_000_000] {
            record(&mut h, v);
        }
        let back = decode(&encode(&h)).unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!(back.max(), h.max());
        assert!(decode("not base64!").is_err());
    }
}
