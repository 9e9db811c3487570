//! The `run` step (`cqlbench run WORKLOAD`): its spec → workload, load and connection specs;
//! live interval lines; the final table; the result path.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use serde::Deserialize;

use super::de;

use crate::fault::{Fault, HookInjector, Inject, LocalInjector};
use crate::load::session::{ConnectSpec, Credentials};
use crate::load::{Event, RunPlan};
use crate::metrics::sampler::{Endpoint, MetricsPlan};
use crate::result::{PhaseSummary, RateShare, RunResult};
use crate::spec::load::{Cycles, RateArg, Share, parse_rate_arg};
use crate::spec::workload::{
    ProfileSource, WORKLOAD_SPEC_VERSION, parse_keyspace, parse_replication,
};
use crate::spec::{
    Cl, KeyDist, LoadMode, LoadSpec, Ratio, Stop, WorkloadKind, WorkloadSpec, parse_duration,
};
use crate::stats::PERCENTILES;
use crate::target::Target;

const DEFAULT_KEYSPACE: &str = "cqlbench";
/// Main-phase length when neither --duration nor --ops is given.
const DEFAULT_DURATION_S: f64 = 60.0;
const DEFAULT_TIMEOUT: &str = "5s";
const DEFAULT_METRICS_INTERVAL: &str = "1s";

/// A run id: 1-63 of a-z 0-9 . _ -, beginning and ending with a letter or digit (it names
/// files and table rows, and is a Kubernetes label value).
pub fn parse_run_id(s: &str) -> Result<String, crate::error::Invalid> {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let ok = (1..=63).contains(&s.len())
        && s.chars().all(|c| alnum(c) || matches!(c, '.' | '_' | '-'))
        && s.starts_with(alnum)
        && s.ends_with(alnum);
    if ok {
        Ok(s.to_string())
    } else {
        Err(crate::invalid!(
            "'{s}' is not a run id: 1-63 of a-z 0-9 . _ -, beginning and ending with a letter or digit (e.g. run-0412)"
        ))
    }
}

/// A wall-clock instant: RFC 3339 (`2026-11-24T13:00:00Z`) or Unix seconds.
pub fn parse_start_at(s: &str) -> Result<f64, crate::error::Invalid> {
    let t = s.trim();
    if let Ok(v) = t.parse::<f64>() {
        if v.is_finite() && v > 0.0 {
            return Ok(v);
        }
    } else if let Ok(at) = humantime::parse_rfc3339_weak(t)
        && let Ok(d) = at.duration_since(std::time::UNIX_EPOCH)
    {
        return Ok(d.as_secs_f64());
    }
    Err(crate::invalid!(
        "'{s}' is not a start time: give RFC 3339 (e.g. 2026-11-24T13:00:00Z) or Unix seconds"
    ))
}

const DEFAULT_BARRIER_TIMEOUT: &str = "10m";
fn default_barrier_timeout() -> Duration {
    parse_duration(DEFAULT_BARRIER_TIMEOUT).expect("a valid default")
}

fn default_keyspace() -> String {
    DEFAULT_KEYSPACE.into()
}
fn default_rows() -> u64 {
    100_000
}
fn default_max_in_flight() -> usize {
    1024
}
fn default_rampup_concurrency() -> usize {
    128
}
fn default_timeout() -> Duration {
    parse_duration(DEFAULT_TIMEOUT).expect("a valid default")
}
fn default_metrics_interval() -> Duration {
    parse_duration(DEFAULT_METRICS_INTERVAL).expect("a valid default")
}

/// A `run` step: the workload, where it goes, how it is driven and what is sampled. The same
/// type is the command line of `cqlbench run` (flags) and a step of a scenario file (keys are
/// the flags' names).
#[derive(Debug, Clone, Args, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RunStep {
    /// Built-in workload.
    #[arg(value_enum, ignore_case = true)]
    #[serde(deserialize_with = "de::value_enum")]
    pub workload: WorkloadKind,

    /// The workload `profile`: a cassandra-stress user profile (YAML, unmodified).
    #[arg(long, value_name = "FILE")]
    #[serde(default)]
    pub profile: Option<PathBuf>,
    /// The profile's operation mix as cassandra-stress writes it, e.g.
    /// "ops(insert=1,simple1=9)" [default: insert=1].
    #[arg(long, value_name = "MIX", requires = "profile")]
    #[serde(default)]
    pub profile_ops: Option<String>,

    /// Target a local cluster by name (see `cqlbench cluster`).
    #[arg(long, conflicts_with = "hosts")]
    #[serde(default)]
    pub cluster: Option<String>,
    /// Target any cluster: contact points `host[:port],…`.
    #[arg(long, value_delimiter = ',', value_parser = crate::spec::workload::parse_host)]
    #[serde(default, deserialize_with = "de::hosts")]
    pub hosts: Vec<String>,
    /// Local data centre for DC-aware routing [default: the local cluster's first DC].
    #[arg(long)]
    #[serde(default)]
    pub dc: Option<String>,
    /// Credentials file (two lines: user, password); else CQLBENCH_USERNAME/CQLBENCH_PASSWORD.
    #[arg(long)]
    #[serde(default)]
    pub credentials_file: Option<PathBuf>,

    /// Keyspace (a letter, then up to 47 letters, digits or '_').
    #[arg(long, default_value = DEFAULT_KEYSPACE, value_parser = crate::spec::workload::parse_keyspace)]
    #[serde(default = "default_keyspace", deserialize_with = "de::keyspace")]
    pub keyspace: String,
    /// Replication: RF for dc1, or DC:RF,… (NetworkTopologyStrategy) [default: min(3, nodes) per DC of a local cluster, else 1].
    #[arg(long)]
    #[serde(default, deserialize_with = "de::opt_text")]
    pub rf: Option<String>,
    /// Drop the keyspace first.
    #[arg(long)]
    #[serde(default)]
    pub drop: bool,
    /// Extra table options, e.g. "compaction = {'class': 'LeveledCompactionStrategy'}".
    #[arg(long)]
    #[serde(default)]
    pub table_options: Option<String>,
    /// Rows in the key space (written by rampup, read by reads).
    #[arg(long, default_value_t = default_rows())]
    #[serde(default = "default_rows")]
    pub rows: u64,
    /// Rows per partition (tabular) / readings per read window (iot) [default: per workload].
    #[arg(long)]
    #[serde(default)]
    pub partsize: Option<u64>,
    /// Bytes per value column [default: per workload].
    #[arg(long)]
    #[serde(default)]
    pub value_size: Option<usize>,
    /// Value columns (stress) [default: 5].
    #[arg(long)]
    #[serde(default)]
    pub columns: Option<usize>,
    /// Operation mix, e.g. write=5,read=5 or write=10,read=10,range=1 [default: per workload].
    #[arg(long)]
    #[serde(default, deserialize_with = "de::opt_parsed")]
    pub ratio: Option<Ratio>,
    /// How the main phase picks keys: uniform; zipf[:S] (key k drawn in proportion to
    /// 1/(k+1)^S, S 0.99 unless given); gaussian[:STDVS] (around the middle, STDVS standard
    /// deviations to either end, 3 unless given); seq (every key in turn); latest[:S] (writes
    /// in key order, reads a zipfian distance back from the newest) [default: uniform].
    #[arg(long, value_name = "DIST")]
    #[serde(default, deserialize_with = "de::opt_parsed")]
    pub key_dist: Option<KeyDist>,
    /// Every read of the main phase compares the rows it got with what the generator wrote
    /// (a row absent counts only once its write was acknowledged); a difference fails the
    /// read as a `mismatch` error and the first ones are printed and kept in the result.
    #[arg(long)]
    #[serde(default)]
    pub verify: bool,
    /// Consistency level of every operation (overridden by --write-cl / --read-cl).
    #[arg(long, value_enum, ignore_case = true)]
    #[serde(default, deserialize_with = "de::opt_value_enum")]
    pub consistency: Option<Cl>,
    /// Consistency level of writes [default: LOCAL_QUORUM].
    #[arg(long, value_enum, ignore_case = true)]
    #[serde(default, deserialize_with = "de::opt_value_enum")]
    pub write_cl: Option<Cl>,
    /// Consistency level of reads and range reads [default: LOCAL_QUORUM].
    #[arg(long, value_enum, ignore_case = true)]
    #[serde(default, deserialize_with = "de::opt_value_enum")]
    pub read_cl: Option<Cl>,

    /// Closed loop: requests in flight.
    #[arg(long, conflicts_with = "rate")]
    #[serde(default)]
    pub concurrency: Option<usize>,
    /// Open loop: operations per second (e.g. 2000 or 2k), or a share of a throughput result
    /// (e.g. 35% with --of RESULT.json); latency is measured from each operation's intended
    /// start.
    #[arg(long, value_parser = parse_rate_arg)]
    #[serde(default, deserialize_with = "de::opt_rate_arg")]
    pub rate: Option<RateArg>,
    /// The throughput result (`cqlbench throughput --out`) a `--rate N%` is a share of.
    #[arg(long, value_name = "RESULT", requires = "rate")]
    #[serde(default)]
    pub of: Option<PathBuf>,
    /// Open loop: at most this many requests in flight; later operations queue (and their
    /// wait is part of the response time).
    #[arg(long, default_value_t = default_max_in_flight())]
    #[serde(default = "default_max_in_flight")]
    pub max_in_flight: usize,
    /// Main-phase length (warmup included).
    #[arg(long, value_parser = parse_duration, conflicts_with = "ops")]
    #[serde(default, deserialize_with = "de::opt_duration")]
    pub duration: Option<Duration>,
    /// Main-phase operation count instead of a duration.
    #[arg(long)]
    #[serde(default)]
    pub ops: Option<u64>,
    /// Leading part of the main phase left out of the summary.
    #[arg(long, value_parser = parse_duration, default_value = "0s")]
    #[serde(default, deserialize_with = "de::duration")]
    pub warmup: Duration,
    /// Client worker threads [default: CPU cores].
    #[arg(long)]
    #[serde(default)]
    pub threads: Option<usize>,
    /// Client-side request timeout: an operation without a response after this long counts
    /// as a client_timeout error (checked a tenth of it apart, at most 100 ms late).
    #[arg(long, value_parser = parse_duration, default_value = DEFAULT_TIMEOUT)]
    #[serde(default = "default_timeout", deserialize_with = "de::duration")]
    pub timeout: Duration,
    /// Stop once more than this many errors occurred (0 = never).
    #[arg(long, default_value_t = 0)]
    #[serde(default)]
    pub max_errors: u64,
    /// Cycle range this process covers, A..B: several processes split a workload without overlap.
    #[arg(long)]
    #[serde(default, deserialize_with = "de::opt_parsed")]
    pub cycles: Option<Cycles>,
    /// Skip the rampup phase (the key space was written before).
    #[arg(long)]
    #[serde(default)]
    pub skip_rampup: bool,
    /// Requests in flight during rampup.
    #[arg(long, default_value_t = default_rampup_concurrency())]
    #[serde(default = "default_rampup_concurrency")]
    pub rampup_concurrency: usize,

    /// Prometheus endpoints to sample server metrics from, host:port,… (e.g. the nodes' JMX
    /// exporters or K8ssandra's metrics endpoints) [default with --cluster: the local nodes'
    /// exporters, plus host CPU and disks from /proc].
    #[arg(long, value_delimiter = ',')]
    #[serde(default, deserialize_with = "de::texts")]
    pub prometheus: Vec<String>,
    /// Sample no server or host metrics.
    #[arg(long, conflicts_with = "prometheus")]
    #[serde(default)]
    pub no_metrics: bool,
    /// Metrics sampling period.
    #[arg(long, value_parser = parse_duration, default_value = DEFAULT_METRICS_INTERVAL)]
    #[serde(
        default = "default_metrics_interval",
        deserialize_with = "de::duration"
    )]
    pub metrics_interval: Duration,

    /// A fault at an offset into the main phase (repeat for more): AT:ACTION:NODE with kill,
    /// stop (drain + clean stop), start, restart, pause[:FOR], resume, flush, compact, repair
    /// or drain on a local cluster's node, e.g. 30s:kill:node2, 20s:pause:node3:2s; or
    /// AT:hook:COMMAND (run with sh -c) for any cluster.
    #[arg(long, value_name = "AT:ACTION:NODE")]
    #[serde(default, deserialize_with = "de::list_parsed")]
    pub fault: Vec<Fault>,

    /// This process is shard I of N of one run (0 <= I < N): it takes every N-th operation
    /// (cycles, and in open loop its part of --rate, of --concurrency/--max-in-flight and of
    /// the rampup), and its main phase starts with the other shards'. Needs --run-id.
    #[arg(
        long,
        value_name = "I/N",
        requires = "run_id",
        conflicts_with = "loaders"
    )]
    #[serde(skip)]
    pub shard: Option<Share>,
    /// The run the shards belong to (the same on every shard): 1-63 of a-z 0-9 . _ -,
    /// beginning and ending with a letter or digit.
    #[arg(long, value_parser = parse_run_id)]
    #[serde(skip)]
    pub run_id: Option<String>,
    /// Shards start their main phase at this wall-clock time (RFC 3339, e.g.
    /// 2026-11-24T13:00:00Z, or Unix seconds) instead of meeting at a barrier in the
    /// cluster under test; clocks must agree (NTP).
    #[arg(long, value_parser = parse_start_at, requires = "shard")]
    #[serde(skip)]
    pub start_at: Option<f64>,
    /// How long a shard waits at the barrier for the others (their rampups included).
    #[arg(long, value_parser = parse_duration, default_value = DEFAULT_BARRIER_TIMEOUT)]
    #[serde(skip, default = "default_barrier_timeout")]
    pub barrier_timeout: Duration,
    /// Run N local processes of this run as shards 0..N, then merge their results into
    /// --out (each shard's result beside it as NAME.shard-I.json).
    #[arg(long, value_name = "N")]
    #[serde(skip)]
    pub loaders: Option<u64>,

    /// Environment label for reports and result file names [default: the cluster name, else
    /// "hosts"]: 1-64 of A-Z a-z 0-9 . _ -.
    #[arg(long, value_parser = crate::spec::probe::parse_env)]
    #[serde(default, deserialize_with = "de::opt_env")]
    pub env: Option<String>,
    /// Result file [default: <cqlbench home>/results/<time>-<env>-<workload>.json].
    #[arg(long)]
    #[serde(default)]
    pub out: Option<PathBuf>,
    /// Only the final table.
    #[arg(long, short = 'q')]
    #[serde(default)]
    pub quiet: bool,
}

impl RunStep {
    /// Checks every value and combination that can be checked without the cluster: what
    /// `to_plan` would refuse before it connects, so a scenario's dry run refuses it too.
    pub fn validate(&self) -> anyhow::Result<()> {
        if self.cluster.is_some() && !self.hosts.is_empty() {
            bail!("give --cluster or --hosts, not both");
        }
        if self.concurrency.is_some() && self.rate.is_some() {
            bail!("give --concurrency (closed loop) or --rate (open loop), not both");
        }
        if self.of.is_some() && !matches!(self.rate, Some(RateArg::Share(_))) {
            bail!("--of goes with a share rate such as --rate 35%");
        }
        if self.of.is_none() && matches!(self.rate, Some(RateArg::Share(_))) {
            bail!("--rate N% is a share of a throughput result: give --of RESULT.json");
        }
        if self.duration.is_some() && self.ops.is_some() {
            bail!("give --duration or --ops, not both");
        }
        if self.no_metrics && !self.prometheus.is_empty() {
            bail!("give --prometheus or --no-metrics, not both");
        }
        if let Some(dc) = &self.dc
            && (dc.trim().is_empty() || dc.contains([',', ':']) || dc.trim() != dc)
        {
            bail!("--dc '{dc}': give one data centre name (e.g. dc1), the one the client is in");
        }
        match self.rf.as_deref().map(|r| (r, r.trim().parse::<u32>())) {
            Some((_, Ok(0))) => bail!("--rf 0: the keyspace needs at least one replica"),
            Some((rf, Err(_))) => {
                parse_replication(rf).map_err(|e| anyhow::anyhow!("--rf {e}"))?;
            }
            _ => {}
        }
        if self.rows == 0 {
            bail!("--rows must be at least 1");
        }
        if self.partsize == Some(0) {
            bail!("--partsize must be at least 1");
        }
        if self.columns == Some(0) {
            bail!("--columns must be at least 1");
        }
        match (self.workload == WorkloadKind::Profile, &self.profile) {
            (true, None) => {
                bail!("workload profile needs --profile FILE (a cassandra-stress user profile)")
            }
            (false, Some(_)) => bail!(
                "--profile goes with the workload profile: cqlbench run profile --profile FILE"
            ),
            (true, Some(_)) => {
                self.load_profile()?;
                if self.ratio.is_some() || self.partsize.is_some() {
                    bail!(
                        "--ratio and --partsize: a profile's mix is --ops and its partitions come from its columnspec"
                    );
                }
            }
            (false, None) => {}
        }
        if self.profile_ops.is_some() && self.workload != WorkloadKind::Profile {
            bail!("--profile-ops is a profile's operation mix: use --ratio for built-in workloads");
        }
        if self.workload.fixed_row() && (self.value_size.is_some() || self.columns.is_some()) {
            bail!(
                "--value-size and --columns: workload {} writes its reference workload's row as it is; use tabular, iot or stress to size values",
                self.workload
            );
        }
        if let Some(r) = &self.ratio {
            for op in r.0.keys() {
                if !crate::workload::offers(self.workload).contains(op) {
                    let offers: Vec<&str> = crate::workload::offers(self.workload)
                        .iter()
                        .map(|o| o.name())
                        .collect();
                    bail!(
                        "--ratio: workload {} has no {op} operation (it offers {})",
                        self.workload,
                        offers.join(", ")
                    );
                }
            }
        }
        if self.verify && self.ratio.as_ref().is_some_and(|r| r.has("delete")) {
            bail!(
                "--verify with delete in the mix: a read finding no row could be a delete, not a lost write; leave delete out or run without --verify"
            );
        }
        if self.threads == Some(0) {
            bail!("--threads must be at least 1");
        }
        if self.timeout < Duration::from_millis(10) {
            bail!("--timeout must be at least 10ms");
        }
        if self.concurrency == Some(0) || self.max_in_flight == 0 {
            bail!("--concurrency and --max-in-flight must be at least 1");
        }
        if self.ops == Some(0) {
            bail!("--ops must be at least 1");
        }
        let secs = self
            .duration
            .map_or(DEFAULT_DURATION_S, |d| d.as_secs_f64());
        if self.ops.is_none() && self.warmup.as_secs_f64() >= secs {
            bail!(
                "--warmup ({:?}) must be shorter than --duration ({secs}s)",
                self.warmup
            );
        }
        if self.metrics_interval.as_secs_f64() < 0.1 {
            bail!("--metrics-interval must be at least 100ms");
        }
        for e in &self.prometheus {
            Endpoint::parse(e).map_err(|e| anyhow::anyhow!("--prometheus {e}"))?;
        }
        if let Some(n) = self.loaders
            && !(1..=64).contains(&n)
        {
            bail!("--loaders {n}: give 1 to 64 local processes");
        }
        if (self.shard.is_some() || self.loaders.is_some()) && self.drop {
            bail!(
                "--drop with --shard or --loaders: the other shards could read the keyspace while it is dropped; drop it before the run"
            );
        }
        if (self.shard.is_some() || self.loaders.is_some()) && !self.fault.is_empty() {
            bail!("--fault applies to one client: not with --shard or --loaders");
        }
        if self.barrier_timeout < Duration::from_secs(1) {
            bail!("--barrier-timeout must be at least 1s");
        }
        // The node count is checked against the cluster in `to_plan`.
        let phase_s = self.ops.is_none().then_some(secs);
        let nodes = self.cluster.as_ref().map(|_| usize::MAX);
        crate::spec::fault::check_schedule(&self.fault, phase_s, nodes)?;
        Ok(())
    }

    /// The profile and the ratio of its operations (`--profile-ops`, else insert only).
    fn load_profile(&self) -> anyhow::Result<(crate::workload::profile::Profile, Ratio)> {
        use crate::workload::profile::{Profile, parse_ops, run};
        let path = self.profile.as_ref().expect("checked by the caller");
        let profile = Profile::load(path)?;
        let ops = parse_ops(self.profile_ops.as_deref().unwrap_or("insert=1"))
            .map_err(|e| anyhow::anyhow!("--profile-ops {e}"))?;
        profile.check_ops(&ops)?;
        if self.verify {
            profile
                .check_verifiable(&ops)
                .map_err(|e| anyhow::anyhow!("--verify: {e}"))?;
        }
        let ratio = ops
            .iter()
            .filter(|(_, w)| **w > 0)
            .map(|(name, w)| (run::op_kind(&profile, name), *w))
            .collect();
        Ok((profile, Ratio(ratio)))
    }

    /// Builds the run plan (after [`Self::validate`]); local clusters are looked up in `clusters`.
    pub fn to_plan(&self, clusters: &Path) -> anyhow::Result<RunPlan> {
        self.validate()?;
        let target = self.target(clusters)?;
        let local_dc = target.local_dc();
        let nodes: Option<Arc<dyn Inject>> = match (self.fault.is_empty(), target.cluster()) {
            (true, None) => None,
            (_, Some(c)) => {
                let secs = self.ops.is_none().then(|| {
                    self.duration
                        .map_or(DEFAULT_DURATION_S, |d| d.as_secs_f64())
                });
                crate::spec::fault::check_schedule(&self.fault, secs, Some(c.nodes().len()))?;
                Some(Arc::new(LocalInjector {
                    cluster: c.clone(),
                    keyspace: self.keyspace.clone(),
                }))
            }
            (false, None) => Some(Arc::new(HookInjector)),
        };
        let mut w = WorkloadSpec::defaults(self.workload);
        w.schema_version = WORKLOAD_SPEC_VERSION;
        w.keyspace = self.keyspace.clone();
        // A bare RF, or none with --hosts, is for the local DC; when that is not known yet
        // (--hosts without --dc), the run reads it from the node it connects to.
        let bare_rf = self
            .rf
            .as_deref()
            .and_then(|r| r.trim().parse::<u32>().ok());
        let mut local_rf = None;
        w.replication = match (&self.rf, bare_rf, target.default_replication(), &local_dc) {
            (_, Some(n), _, Some(dc)) => std::collections::BTreeMap::from([(dc.clone(), n)]),
            (_, Some(n), _, None) => {
                local_rf = Some(n);
                Default::default()
            }
            (Some(rf), None, _, _) => parse_replication(rf).map_err(anyhow::Error::msg)?,
            (None, None, Some(per_dc), _) => per_dc,
            (None, None, None, Some(dc)) => std::collections::BTreeMap::from([(dc.clone(), 1)]),
            (None, None, None, None) => {
                local_rf = Some(1);
                Default::default()
            }
        };
        w.rows = self.rows;
        if let Some(p) = self.partsize {
            w.partsize = p;
        }
        if let Some(v) = self.value_size {
            w.value_size = v;
        }
        if let Some(c) = self.columns {
            w.columns = c;
        }
        if let Some(r) = &self.ratio {
            w.ratio = r.clone();
        }
        if let Some(d) = self.key_dist {
            w.key_dist = d;
        }
        w.verify_reads = self.verify;
        w.write_cl = self.write_cl.or(self.consistency).unwrap_or(w.write_cl);
        w.read_cl = self.read_cl.or(self.consistency).unwrap_or(w.read_cl);
        w.table_options = self.table_options.clone();
        if let Some(path) = &self.profile {
            let (profile, ratio) = self.load_profile()?;
            w.ratio = ratio;
            if self.keyspace == DEFAULT_KEYSPACE {
                w.keyspace = parse_keyspace(&profile.file.keyspace)
                    .map_err(|e| anyhow::anyhow!("{}: keyspace: {e}", path.display()))?;
            }
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            w.profile = Some(ProfileSource {
                path: path.clone(),
                text,
            });
        }
        let threads = self.threads.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        });
        let (rate, rate_share) = match self.rate {
            Some(r) => {
                let (rate, share) = self.resolve_rate(r)?;
                (Some(rate), share)
            }
            None => (None, None),
        };
        // A shard drives its part of the rate and of the requests in flight.
        let share = self.shard.unwrap_or(Share::WHOLE);
        let mode = match (rate, self.concurrency) {
            (Some(r), _) => LoadMode::Open {
                rate_per_s: r / share.count as f64,
                max_in_flight: share.split(self.max_in_flight),
            },
            (None, c) => LoadMode::Closed {
                concurrency: share.split(c.unwrap_or(128)),
            },
        };
        let stop = match (self.ops, self.duration) {
            (Some(n), _) => Stop::Ops { count: n },
            (None, d) => Stop::Duration {
                secs: d.map_or(DEFAULT_DURATION_S, |d| d.as_secs_f64()),
            },
        };
        let cycles = self.cycles.unwrap_or(Cycles {
            start: 0,
            end: u64::MAX,
        });
        let main = LoadSpec {
            mode,
            stop,
            warmup_s: self.warmup.as_secs_f64(),
            threads,
            timeout_s: self.timeout.as_secs_f64(),
            max_errors: self.max_errors,
            cycles,
            share,
        };
        // Rampup writes the key space once (this process's share of it with --cycles); a
        // profile's partitions take several operations each.
        let rampup_ops = match &self.profile {
            Some(_) => w
                .rows
                .saturating_mul(self.load_profile()?.0.rampup_chunks().1),
            None => w.rows,
        };
        let rampup_cycles = match self.cycles {
            Some(c) => Cycles {
                start: c.start.min(rampup_ops),
                end: c.end.min(rampup_ops),
            },
            None => Cycles {
                start: 0,
                end: rampup_ops,
            },
        };
        let rampup =
            (!self.skip_rampup && rampup_cycles.end > rampup_cycles.start).then(|| LoadSpec {
                mode: LoadMode::Closed {
                    concurrency: share.split(self.rampup_concurrency.max(1)),
                },
                stop: Stop::Ops {
                    count: rampup_cycles.end - rampup_cycles.start,
                },
                warmup_s: 0.0,
                cycles: rampup_cycles,
                ..main.clone()
            });
        let credentials = match &self.credentials_file {
            Some(f) => Some(Credentials::from_file(f).map_err(anyhow::Error::msg)?),
            None => Credentials::from_env(),
        };
        let env = self.env_label();
        let probe = crate::probe::store::latest_for_env(
            &crate::probe::store::probes_dir(&crate::fsutil::cqlbench_home()),
            &env,
        )
        .map(|(path, p)| crate::result::ProbeRef {
            path,
            summary: p.summary,
        });
        let out = match &self.out {
            Some(p) => p.clone(),
            None => self.default_out(&self.workload.to_string()),
        };
        Ok(RunPlan {
            env,
            workload: w,
            rampup,
            main,
            connect: ConnectSpec {
                hosts: target.contact_points(),
                local_dc: local_dc.clone(),
                timeout: self.timeout,
                credentials,
            },
            metrics: if self.no_metrics {
                MetricsPlan::default()
            } else {
                target.metrics_plan(self.metrics_interval.as_secs_f64())
            },
            cluster: target.cluster_spec(),
            target: target.record(),
            probe,
            drop_keyspace: self.drop,
            out,
            sequential_main: false,
            until: None,
            local_rf,
            rate_share,
            faults: self.fault.clone(),
            nodes,
            end_on_node_death: false,
            shard: match (self.shard, &self.run_id) {
                (Some(share), Some(run_id)) => Some(crate::load::ShardPlan {
                    run_id: run_id.clone(),
                    share,
                    start_at: self.start_at,
                    barrier_timeout: self.barrier_timeout,
                }),
                _ => None,
            },
        })
    }
}

impl RunStep {
    /// `--env`, else the cluster name, else "hosts".
    pub fn env_label(&self) -> String {
        self.env
            .clone()
            .unwrap_or_else(|| self.cluster.clone().unwrap_or_else(|| "hosts".into()))
    }

    /// The result path when `--out` is not given: `<cqlbench home>/results/<time>-<env>-<what>.json`.
    pub fn default_out(&self, what: &str) -> PathBuf {
        crate::fsutil::cqlbench_home().join("results").join(format!(
            "{}-{}-{what}.json",
            crate::host::unix_now_s(),
            self.env_label()
        ))
    }

    /// `--rate` in ops/s, reading the `--of` result for a share (which is returned too).
    fn resolve_rate(&self, r: RateArg) -> anyhow::Result<(f64, Option<RateShare>)> {
        let of = match (&self.of, r) {
            (Some(path), RateArg::Share(share)) => {
                let res = RunResult::read(path).map_err(anyhow::Error::msg)?;
                let s = res.main_summary().ok_or_else(|| {
                    anyhow::anyhow!("{}: the run has no main-phase result", path.display())
                })?;
                Some(RateShare {
                    share,
                    of: path.clone(),
                    of_ops_per_s: s.ops_per_s,
                })
            }
            _ => None,
        };
        let rate = r
            .resolve(of.as_ref().map(|o| o.of_ops_per_s))
            .map_err(anyhow::Error::msg)?;
        Ok((rate, of))
    }

    /// Where the run goes: the local cluster (looked up in `clusters`) or the hosts, with the
    /// client's DC and the Prometheus endpoints given.
    pub fn target(&self, clusters: &Path) -> anyhow::Result<Target> {
        let mut t = match &self.cluster {
            Some(name) => Target::local(clusters, name)?,
            None if self.hosts.is_empty() => {
                bail!("give --cluster NAME (a local cluster) or --hosts a,b,c")
            }
            None => Target::hosts(self.hosts.clone()),
        };
        t.dc = self.dc.clone();
        t.prometheus = self
            .prometheus
            .iter()
            .map(|e| Endpoint::parse(e))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| anyhow::anyhow!("--prometheus {e}"))?;
        Ok(t)
    }
}

/// Runs the plan of `a` with live output and the final table; an error for a run that did not
/// complete (an interrupted run keeps its result and is not an error).
pub fn execute(a: &RunStep, clusters: &Path) -> anyhow::Result<RunResult> {
    let plan = a.to_plan(clusters)?;
    if let Some(dir) = plan.out.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    if let Some(n) = a.loaders {
        return run_loaders(a, n, &plan.out);
    }
    println!("result: {}", plan.out.display());
    let quiet = a.quiet;
    let stop = crate::interrupt::flag();
    let (mut phase_load, mut done_ops) = (None, 0u64);
    let result = crate::load::run(&plan, stop, &mut |e| {
        print_event(&e, quiet, &mut phase_load, &mut done_ops)
    })?;
    print_final(&result);
    println!(
        "result: {} (HDR log: {})",
        plan.out.display(),
        plan.out.with_extension("hlog").display()
    );
    match &result.status {
        crate::result::RunStatus::Completed | crate::result::RunStatus::Interrupted => Ok(result),
        crate::result::RunStatus::TooManyErrors => {
            bail!("stopped: more than --max-errors {} errors", a.max_errors)
        }
        other => bail!("run ended as {other:?}"),
    }
}

/// Where shard `index`'s result goes when `--loaders` runs the shards: beside `out`.
pub fn shard_out(out: &Path, index: u64) -> PathBuf {
    let stem = out
        .file_stem()
        .map_or_else(|| "run".into(), |s| s.to_string_lossy().into_owned());
    out.with_file_name(format!("{stem}.shard-{index}.json"))
}

/// The command line of this process without the flags `--loaders` replaces.
fn shard_args(args: &[String]) -> Vec<String> {
    let owned = ["--loaders", "--out", "--run-id", "--shard", "--start-at"];
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if std::mem::take(&mut skip) {
            continue;
        }
        if owned.contains(&a.as_str()) {
            skip = true;
            continue;
        }
        if owned.iter().any(|o| a.starts_with(&format!("{o}="))) || a == "-q" || a == "--quiet" {
            continue;
        }
        out.push(a.clone());
    }
    out
}

/// `--loaders N`: this command line run as shards 0..N by N child processes, which meet at
/// the barrier in the cluster; their results are merged into `out`.
fn run_loaders(a: &RunStep, n: u64, out: &Path) -> anyhow::Result<RunResult> {
    let run_id = a
        .run_id
        .clone()
        .unwrap_or_else(|| format!("run-{}-{}", crate::host::unix_now_s(), std::process::id()));
    let exe = std::env::current_exe().context("finding this program to start the loaders")?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let base = shard_args(&args);
    println!("loaders: {n} processes of run {run_id}");
    let mut children = Vec::new();
    for i in 0..n {
        let shard_path = shard_out(out, i);
        let log = shard_path.with_extension("log");
        let file =
            std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
        let child = std::process::Command::new(&exe)
            .args(&base)
            .args(["--shard", &format!("{i}/{n}"), "--run-id", &run_id, "-q"])
            .arg("--out")
            .arg(&shard_path)
            .stdin(std::process::Stdio::null())
            .stdout(file.try_clone().context("the loader's log")?)
            .stderr(file)
            .spawn()
            .with_context(|| format!("starting loader {i}"))?;
        println!(
            "  shard {i}/{n}: {} (log {})",
            shard_path.display(),
            log.display()
        );
        children.push((i, child, shard_path, log));
    }
    // The first loader to fail stops the others: they would wait for it at the barrier.
    let mut failed: Option<String> = None;
    let mut running: Vec<bool> = vec![true; children.len()];
    while running.iter().any(|r| *r) {
        for (k, (i, child, _, log)) in children.iter_mut().enumerate() {
            if !running[k] {
                continue;
            }
            let Some(status) = child
                .try_wait()
                .with_context(|| format!("waiting for loader {i}"))?
            else {
                continue;
            };
            running[k] = false;
            if !status.success() && failed.is_none() {
                let last =
                    crate::fsutil::last_line(&std::fs::read_to_string(&*log).unwrap_or_default());
                failed = Some(format!(
                    "shard {i}/{n} {status}: {last} (log {})",
                    log.display()
                ));
            }
        }
        if failed.is_some() {
            for (k, (_, child, _, _)) in children.iter_mut().enumerate() {
                if running[k] {
                    let _ = child.kill();
                    let _ = child.wait();
                    running[k] = false;
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    if let Some(f) = failed {
        bail!("{f}; the other loaders were stopped");
    }
    let shards: Vec<PathBuf> = children.iter().map(|c| c.2.clone()).collect();
    let merged = crate::shards::merge_files(&shards, out)?;
    print_final(&merged);
    if let Some(m) = &merged.merged {
        println!(
            "merged {n} shards (main phases started within {:.1} ms): {}",
            m.start_spread_ms,
            out.display()
        );
    }
    Ok(merged)
}

/// Progress of a phase in percent, from its stop condition.
fn progress(load: &LoadSpec, done_ops: u64, elapsed_s: f64) -> f64 {
    let p = match load.stop {
        Stop::Duration { secs } => elapsed_s / secs,
        Stop::Ops { count } => done_ops as f64 / count as f64,
    };
    (p * 100.0).clamp(0.0, 100.0)
}

fn print_event(e: &Event, quiet: bool, phase_load: &mut Option<LoadSpec>, done_ops: &mut u64) {
    if let Event::PhaseStarted { load, .. } = e {
        *phase_load = Some((*load).clone());
        *done_ops = 0;
    }
    if let Event::Interval { record, .. } = e {
        *done_ops += record.ok + record.errors;
    }
    match e {
        Event::PhaseStarted { name, load } if !quiet => {
            let how = match load.mode {
                LoadMode::Closed { concurrency } => format!("{concurrency} in flight"),
                LoadMode::Open { rate_per_s, .. } => format!("{rate_per_s:.0} ops/s"),
            };
            let until = match load.stop {
                Stop::Duration { secs } => format!("{secs:.0}s"),
                Stop::Ops { count } => format!("{count} ops"),
            };
            println!("── {name}: {how}, {until}, {} threads", load.threads);
        }
        Event::Interval { phase, record: r } if !quiet => {
            let pct = phase_load
                .as_ref()
                .map(|l| progress(l, *done_ops, r.end_s))
                .unwrap_or(0.0);
            let bar_len = (pct / 10.0).round() as usize;
            let bar = format!(
                "[{}{}]",
                "#".repeat(bar_len),
                ".".repeat(10 - bar_len.min(10))
            );
            let mut line = format!(
                "{phase:<6} {bar} {pct:>3.0}% {:>6.0}s {:>9.0} ops/s",
                r.end_s, r.ops_per_s
            );
            for (k, o) in &r.by_op {
                line.push_str(&format!(
                    "  {k} p50 {:.2} p99 {:.2}",
                    o.response_p50_ms, o.response_p99_ms
                ));
            }
            line.push_str(" ms");
            if r.errors > 0 {
                line.push_str(&format!("  errors {}", r.errors));
            }
            if r.backlog > 0 {
                line.push_str(&format!("  backlog {}", r.backlog));
            }
            if r.warmup {
                line.push_str("  (warmup)");
            }
            println!("{line}");
        }
        Event::PhaseDone { name, summary } if !quiet => {
            println!(
                "── {name} done: {:.0} ops/s over {:.1}s",
                summary.ops_per_s, summary.measured_s
            );
        }
        _ => {}
    }
}

/// The final table of the main phase.
pub fn print_final(r: &RunResult) {
    let Some(s) = r.main_summary() else {
        println!("no main-phase result");
        return;
    };
    print_summary(s);
    if let Some(m) = &r.metrics {
        let missing: Vec<String> = m
            .missing_by_node()
            .into_iter()
            .filter(|(_, n, _)| *n > 0)
            .map(|(node, n, of)| format!("{node} {n}/{of}"))
            .collect();
        if !missing.is_empty() {
            println!("samples without server metrics: {}", missing.join(", "));
        }
    }
    if let Some(v) = &r.reads_verified {
        println!("{}", v.line());
        for m in &v.first {
            println!("  mismatch: {m}");
        }
    }
    for w in &r.warnings {
        println!("warning: {w}");
    }
}

pub fn print_summary(s: &PhaseSummary) {
    println!();
    let mut head = format!("{:<16} {:>10} {:>8}", "operation", "ops/s", "errors");
    for (label, _) in PERCENTILES {
        head.push_str(&format!(" {label:>8}"));
    }
    head.push_str(&format!(" {:>8}", "max"));
    println!("{head}   (ms)");
    let rows: Vec<(String, &crate::result::OpSummary)> = s
        .by_op
        .iter()
        .map(|(k, o)| (k.to_string(), o))
        .chain([("all".to_string(), &s.all)])
        .collect();
    for (name, o) in rows {
        for (what, p) in [("response", &o.response), ("service", &o.service)] {
            let mut line = format!(
                "{:<16} {:>10.0} {:>8}",
                format!("{name} {what}"),
                o.ops_per_s,
                o.errors
            );
            for v in p.values() {
                line.push_str(&format!(" {v:>8.2}"));
            }
            println!("{line}");
        }
    }
    if !s.errors_by_kind.is_empty() {
        let e: Vec<String> = s
            .errors_by_kind
            .iter()
            .map(|(k, n)| format!("{}={n}", k.name()))
            .collect();
        println!("errors: {}", e.join(", "));
    }
    let target = match (s.target_rate_per_s, s.achieved_ratio) {
        (Some(t), Some(a)) => format!(
            ", target {t:.0} ops/s, achieved {:.2}% ({} of {} scheduled sent in the window)",
            a * 100.0,
            s.sent_on_schedule.unwrap_or(0),
            s.scheduled_ops.unwrap_or(0)
        ),
        _ => String::new(),
    };
    println!(
        "throughput {:.0} ops/s over {:.1}s (+{:.0} ms drain){target}; client CPU {:.1}s ({:.0}%), {:.0} ops per client CPU-s, max RSS {:.0} MiB",
        s.ops_per_s,
        s.measured_s,
        s.drain_s * 1000.0,
        s.client_cpu_s,
        s.client_cpu_util * 100.0,
        s.ops_per_client_cpu_s,
        s.client_max_rss_bytes as f64 / 1048576.0
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_follows_the_stop_condition() {
        let mut l = LoadSpec {
            mode: LoadMode::Closed { concurrency: 1 },
            stop: Stop::Duration { secs: 20.0 },
            warmup_s: 0.0,
            threads: 1,
            timeout_s: 1.0,
            max_errors: 0,
            cycles: Cycles { start: 0, end: 10 },
            share: Share::WHOLE,
        };
        assert_eq!(progress(&l, 0, 5.0), 25.0);
        assert_eq!(progress(&l, 0, 25.0), 100.0);
        l.stop = Stop::Ops { count: 200 };
        assert_eq!(progress(&l, 50, 99.0), 25.0);
    }
}
