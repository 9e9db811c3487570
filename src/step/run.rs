//! The `run` step as typed input: what `cqlbench run WORKLOAD` was given (flags), a scenario's
//! `run` step (keys named as the flags) and what a loader process or pod is sent (the same
//! fields, in a [`super::order::Order`]). Its checks, plan and execution are the scenario's
//! (`scenario::steps::run`).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde::{Deserialize, Serialize};

use super::{argv, de};
use crate::spec::client::{AddressMap, Compression, Retry, Speculative, TlsVersion};
use crate::spec::fault::Fault;
use crate::spec::load::{Cycles, RateArg, Share, parse_rate_arg};
use crate::spec::{Cl, KeyDist, Ratio, WorkloadKind, parse_duration};

pub const DEFAULT_KEYSPACE: &str = "cqlbench";
/// Main-phase length when neither --duration nor --ops is given.
pub const DEFAULT_DURATION_S: f64 = 60.0;
const DEFAULT_TIMEOUT: &str = "5s";
const DEFAULT_METRICS_INTERVAL: &str = "1s";

const DEFAULT_BARRIER_TIMEOUT: &str = "10m";
/// `IP:PORT` to listen on, each part named when it is wrong.
fn parse_listen(s: &str) -> Result<std::net::SocketAddr, crate::error::Invalid> {
    if let Ok(a) = s.trim().parse() {
        return Ok(a);
    }
    let bad = |why: String| crate::invalid!("'{s}': {why}; expected IP:PORT, e.g. 127.0.0.1:9500");
    let (ip, port) = s
        .trim()
        .rsplit_once(':')
        .ok_or_else(|| bad("no port".into()))?;
    ip.trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>()
        .map_err(|_| bad(format!("'{ip}' is not an IP address")))?;
    match port.parse::<u64>() {
        Ok(p) if p > u16::MAX as u64 => Err(bad(format!("port {p} is above 65535"))),
        _ => Err(bad(format!("'{port}' is not a port (0 to 65535)"))),
    }
}

fn parse_address_map(s: &str) -> Result<AddressMap, crate::error::Invalid> {
    s.parse()
}

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
#[derive(Debug, Clone, Args, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RunStep {
    /// Built-in workload.
    #[arg(value_enum, ignore_case = true)]
    #[serde(deserialize_with = "de::value_enum", serialize_with = "argv::display")]
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
    #[serde(
        default,
        deserialize_with = "de::hosts",
        serialize_with = "argv::comma_list"
    )]
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
    #[arg(long, value_parser = crate::spec::workload::parse_rf)]
    #[serde(
        default,
        deserialize_with = "de::opt_parsed",
        serialize_with = "argv::opt_display"
    )]
    pub rf: Option<crate::spec::workload::Rf>,
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
    #[serde(
        default,
        deserialize_with = "de::opt_parsed",
        serialize_with = "argv::opt_display"
    )]
    pub ratio: Option<Ratio>,
    /// How the main phase picks keys: uniform; zipf[:S] (key k drawn in proportion to
    /// 1/(k+1)^S, S 0.99 unless given); gaussian[:STDVS] (around the middle, STDVS standard
    /// deviations to either end, 3 unless given); seq (every key in turn); latest[:S] (writes
    /// in key order, reads a zipfian distance back from the newest) [default: uniform].
    #[arg(long, value_name = "DIST")]
    #[serde(
        default,
        deserialize_with = "de::opt_parsed",
        serialize_with = "argv::opt_display"
    )]
    pub key_dist: Option<KeyDist>,
    /// Every read of the main phase compares the rows it got with what the generator wrote
    /// (a row absent counts only once its write was acknowledged); a difference fails the
    /// read as a `mismatch` error and the first ones are printed and kept in the result.
    #[arg(long)]
    #[serde(default)]
    pub verify: bool,
    /// Consistency level of every operation (overridden by --write-cl / --read-cl).
    #[arg(long, value_enum, ignore_case = true)]
    #[serde(
        default,
        deserialize_with = "de::opt_value_enum",
        serialize_with = "argv::opt_display"
    )]
    pub consistency: Option<Cl>,
    /// Consistency level of writes [default: LOCAL_QUORUM].
    #[arg(long, value_enum, ignore_case = true)]
    #[serde(
        default,
        deserialize_with = "de::opt_value_enum",
        serialize_with = "argv::opt_display"
    )]
    pub write_cl: Option<Cl>,
    /// Consistency level of reads and range reads [default: LOCAL_QUORUM].
    #[arg(long, value_enum, ignore_case = true)]
    #[serde(
        default,
        deserialize_with = "de::opt_value_enum",
        serialize_with = "argv::opt_display"
    )]
    pub read_cl: Option<Cl>,

    /// Closed loop: requests in flight.
    #[arg(long, conflicts_with = "rate")]
    #[serde(default)]
    pub concurrency: Option<usize>,
    /// Open loop: operations per second (e.g. 2000 or 2k), or a share of a throughput result
    /// (e.g. 35% with --of RESULT.json); latency is measured from each operation's intended
    /// start.
    #[arg(long, value_parser = parse_rate_arg)]
    #[serde(
        default,
        deserialize_with = "de::opt_rate_arg",
        serialize_with = "argv::opt_display"
    )]
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
    /// Open loop: let sends wait up to this long after the earliest due one, so that all
    /// those due by then leave in one wake-up of the client (e.g. 1ms; at most 100ms). Each
    /// wake-up of a sleeping client costs CPU; the wait is send lag, counted in the response
    /// time. Default: each send on time.
    #[arg(long, value_parser = parse_duration, default_value = "0s")]
    // Left out when zero: an order without it is read by loaders older than the key.
    #[serde(
        default,
        skip_serializing_if = "Duration::is_zero",
        deserialize_with = "de::duration",
        serialize_with = "argv::duration"
    )]
    pub send_window: Duration,
    /// Main-phase length (warmup included).
    #[arg(long, value_parser = parse_duration, conflicts_with = "ops")]
    #[serde(
        default,
        deserialize_with = "de::opt_duration",
        serialize_with = "argv::opt_duration"
    )]
    pub duration: Option<Duration>,
    /// Main-phase operation count instead of a duration.
    #[arg(long)]
    #[serde(default)]
    pub ops: Option<u64>,
    /// Leading part of the main phase left out of the summary.
    #[arg(long, value_parser = parse_duration, default_value = "0s")]
    #[serde(
        default,
        deserialize_with = "de::duration",
        serialize_with = "argv::duration"
    )]
    pub warmup: Duration,
    /// Client worker threads [default: CPU cores; at a fixed rate without a rampup, one per
    /// 5,000 ops/s up to that].
    #[arg(long)]
    #[serde(default)]
    pub threads: Option<usize>,
    /// Client-side request timeout: an operation without a response after this long counts
    /// as a client_timeout error (checked a tenth of it apart, at most 100 ms late).
    #[arg(long, value_parser = parse_duration, default_value = DEFAULT_TIMEOUT)]
    #[serde(
        default = "default_timeout",
        deserialize_with = "de::duration",
        serialize_with = "argv::duration"
    )]
    pub timeout: Duration,

    /// Client TLS: PEM file of the CA that signed the nodes' certificates (turns TLS on)
    /// [default: a local cluster's own CA when it was created with --tls].
    #[arg(long, value_name = "FILE", help_heading = "TLS")]
    #[serde(default)]
    pub tls_ca: Option<PathBuf>,
    /// Client certificate (PEM) for nodes that require client authentication.
    #[arg(long, value_name = "FILE", help_heading = "TLS")]
    #[serde(default)]
    pub tls_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM: PKCS#8, PKCS#1 or SEC1; encrypted PKCS#8 or
    /// OpenSSL's older encrypted PEM with a password from one of the two flags below).
    #[arg(long, value_name = "FILE", help_heading = "TLS")]
    #[serde(default)]
    pub tls_key: Option<PathBuf>,
    /// The password of an encrypted --tls-key: the first line of this file (never a password
    /// on the command line).
    #[arg(long, value_name = "FILE", help_heading = "TLS")]
    #[serde(default)]
    pub tls_key_password_file: Option<PathBuf>,
    /// The password of an encrypted --tls-key: this environment variable's value.
    #[arg(
        long,
        value_name = "VAR",
        help_heading = "TLS",
        conflicts_with = "tls_key_password_file"
    )]
    #[serde(default)]
    pub tls_key_password_env: Option<String>,
    /// Check the nodes' certificates for this DNS name instead of the address connected to
    /// (a certificate issued for a service name).
    #[arg(long, value_name = "NAME", help_heading = "TLS")]
    #[serde(default)]
    pub tls_server_name: Option<String>,
    /// Verify the certificate chain but not the node's name.
    #[arg(long, help_heading = "TLS", conflicts_with = "tls_server_name")]
    #[serde(default)]
    pub tls_no_hostname_check: bool,
    /// The lowest TLS version offered: 1.2 or 1.3 [default: 1.2]. Needs TLS: --tls-ca, or a
    /// local cluster created with --tls.
    #[arg(long, help_heading = "TLS")]
    #[serde(
        default,
        deserialize_with = "de::opt_parsed",
        serialize_with = "argv::opt_display"
    )]
    pub tls_min_version: Option<TlsVersion>,
    /// Plain text to a local cluster created with --tls (its client encryption must be
    /// optional: cluster create --tls-optional).
    #[arg(long, help_heading = "TLS", conflicts_with = "tls_ca")]
    #[serde(default)]
    pub no_tls: bool,

    /// Driver retry policy: default (the driver's), none, or N retries on the next node for
    /// timeouts, unavailable, overloaded and broken connections.
    #[arg(long, default_value = "default", help_heading = "Driver")]
    #[serde(
        default,
        deserialize_with = "de::parsed",
        serialize_with = "argv::display"
    )]
    pub retry: Retry,
    /// Speculative execution: off; DELAY[:MAX] (e.g. 20ms:2: up to 2 extra requests, 20 ms
    /// apart); pNN[:MAX] (after the run's recent NN-th percentile service time).
    #[arg(long, default_value = "off", help_heading = "Driver")]
    #[serde(
        default,
        deserialize_with = "de::parsed",
        serialize_with = "argv::display"
    )]
    pub speculative: Speculative,
    /// Frame compression between client and nodes: none, lz4 or snappy.
    #[arg(long, default_value = "none", help_heading = "Driver")]
    #[serde(
        default,
        deserialize_with = "de::parsed",
        serialize_with = "argv::display"
    )]
    pub compression: Compression,
    /// Connections to each node [default: the driver's, 1].
    #[arg(long, help_heading = "Driver")]
    #[serde(default)]
    pub connections_per_host: Option<usize>,
    /// Rack-aware routing: replicas in this rack of the local DC first.
    #[arg(long, help_heading = "Driver")]
    #[serde(default, deserialize_with = "de::opt_text")]
    pub rack: Option<String>,
    /// Rows per page of a read [default: the driver's, 5000].
    #[arg(long, help_heading = "Driver")]
    #[serde(default)]
    pub page_size: Option<u32>,
    /// The addresses the nodes report translated to those this client reaches them at,
    /// INTERNAL=EXTERNAL[:PORT],… (or @FILE, one per line): behind NAT, a load balancer or
    /// port-forwards, e.g. 10.0.0.5=203.0.113.7:30042. Nodes not named are reached at the
    /// address they report.
    #[arg(
        long,
        value_name = "INTERNAL=EXTERNAL[:PORT],…|@FILE",
        help_heading = "Driver",
        value_parser = parse_address_map
    )]
    #[serde(
        default,
        deserialize_with = "de::list_parsed",
        serialize_with = "argv::list_display"
    )]
    pub address_map: Vec<AddressMap>,
    /// Refuse to run (before any load) when the client reaches fewer nodes of its data
    /// centre than the cluster reports; without it, such a run is warned about.
    #[arg(long, help_heading = "Driver")]
    #[serde(default)]
    pub require_all_nodes: bool,
    /// Run inside this network namespace (as `ip netns exec NAME` would), e.g. a lab's loader
    /// namespace `cqb-LAB-c2` or `cqb-LAB-x1` outside its NAT [default: on a lab cluster
    /// (`--cluster`), the lab's `cqb-LAB-c1`; else this host's network]. Not in scenario
    /// files.
    #[arg(long, value_name = "NAME")]
    #[serde(skip)]
    pub netns: Option<String>,

    /// Stop once more than this many errors occurred (0 = never).
    #[arg(long, default_value_t = 0)]
    #[serde(default)]
    pub max_errors: u64,
    /// Cycle range this process covers, A..B: several processes split a workload without overlap.
    #[arg(long)]
    #[serde(
        default,
        deserialize_with = "de::opt_parsed",
        serialize_with = "argv::opt_display"
    )]
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
    #[serde(
        default,
        deserialize_with = "de::texts",
        serialize_with = "argv::comma_list"
    )]
    pub prometheus: Vec<String>,
    /// A node's host's Prometheus node exporter, NODE=URL (repeat for more), e.g.
    /// node1=http://10.0.0.5:9100: its CPU (user, system, iowait, steal), load, memory, page
    /// cache, per-device IOPS, MB/s, await, queue and utilisation, and network bytes, sampled
    /// beside the server metrics and attributed to NODE (the node's name or address).
    #[arg(long, value_name = "NODE=URL", conflicts_with = "no_metrics")]
    #[serde(
        default,
        deserialize_with = "de::texts",
        serialize_with = "argv::list_display"
    )]
    pub node_exporter: Vec<String>,
    /// A Prometheus server that scrapes the nodes' hosts' node exporters and the nodes' metrics
    /// endpoints, http[s]://HOST:PORT (for endpoints the client cannot reach): after the run,
    /// the figures --node-exporter and --prometheus sample are fetched from it for the run's
    /// window by range queries and stored per node. A server that does not answer is a
    /// warning; the run's result is kept.
    #[arg(long, value_name = "URL", conflicts_with = "no_metrics")]
    #[serde(default)]
    pub prometheus_server: Option<String>,
    /// A node's host's exporter's or the node's own endpoint's `instance` label on
    /// --prometheus-server, NODE=INSTANCE (repeat for more), e.g. node1=10.0.0.5:9100
    /// [default: the instances whose host is the node's address].
    #[arg(long, value_name = "NODE=INSTANCE")]
    #[serde(
        default,
        deserialize_with = "de::texts",
        serialize_with = "argv::list_display"
    )]
    pub prometheus_instance: Vec<String>,
    /// Basic-auth credentials for --prometheus-server (two lines: user, password), for a server
    /// behind Prometheus's own web config or a reverse proxy.
    #[arg(long, value_name = "FILE")]
    #[serde(default)]
    pub prometheus_credentials: Option<PathBuf>,
    /// A bearer token for --prometheus-server, read from FILE (its first line).
    #[arg(long, value_name = "FILE", conflicts_with = "prometheus_credentials")]
    #[serde(default)]
    pub prometheus_token: Option<PathBuf>,
    /// The CA certificate (PEM) an https --prometheus-server's certificate is signed by [default:
    /// the platform's roots].
    #[arg(long, value_name = "FILE")]
    #[serde(default)]
    pub prometheus_ca: Option<PathBuf>,
    /// Sample no server or host metrics.
    #[arg(long, conflicts_with = "prometheus")]
    #[serde(default)]
    pub no_metrics: bool,
    /// Metrics sampling period.
    #[arg(long, value_parser = parse_duration, default_value = DEFAULT_METRICS_INTERVAL)]
    #[serde(
        default = "default_metrics_interval",
        deserialize_with = "de::duration",
        serialize_with = "argv::duration"
    )]
    pub metrics_interval: Duration,

    /// A fault at an offset into the main phase (repeat for more): AT:ACTION:NODE with kill,
    /// stop (drain + clean stop), start, restart, pause[:FOR], resume, flush, compact, repair
    /// or drain on a local cluster's node, e.g. 30s:kill:node2, 20s:pause:node3:2s; or
    /// AT:hook:COMMAND (run with sh -c) for any cluster.
    #[arg(long, value_name = "AT:ACTION:NODE")]
    #[serde(
        default,
        deserialize_with = "de::list_parsed",
        serialize_with = "argv::list_display"
    )]
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
    #[arg(long, value_parser = crate::spec::load::parse_run_id)]
    #[serde(skip)]
    pub run_id: Option<String>,
    /// Shards start their main phase at this wall-clock time (RFC 3339, e.g.
    /// 2026-11-24T13:00:00Z, or Unix seconds) instead of meeting at a barrier in the
    /// cluster under test; clocks must agree (NTP).
    #[arg(long, value_parser = crate::spec::load::parse_start_at, requires = "shard")]
    #[serde(skip)]
    pub start_at: Option<f64>,
    /// How long a shard waits at the barrier for the others (their rampups included).
    #[arg(long, value_parser = parse_duration, default_value = DEFAULT_BARRIER_TIMEOUT)]
    #[serde(
        default = "default_barrier_timeout",
        deserialize_with = "de::duration",
        serialize_with = "argv::duration"
    )]
    pub barrier_timeout: Duration,
    /// Run N local processes of this run as shards 0..N, then merge their results into
    /// --out (each shard's result beside it as NAME.shard-I.json).
    #[arg(long, value_name = "N")]
    #[serde(default)]
    pub loaders: Option<u64>,

    /// Environment label for reports and result file names [default: the cluster name, else
    /// "hosts"]: 1-64 of A-Z a-z 0-9 . _ -.
    #[arg(long, value_parser = crate::spec::probe::parse_env)]
    #[serde(default, deserialize_with = "de::opt_env")]
    pub env: Option<String>,
    /// Tags recorded in the result, for `cqlbench runs --tag` and `compare tag:NAME`
    /// (e.g. baseline,v4.1.3): 1-64 of A-Z a-z 0-9 . _ - each. Repeatable.
    #[arg(long, value_delimiter = ',', value_parser = crate::spec::probe::parse_tag)]
    #[serde(
        default,
        deserialize_with = "de::texts",
        serialize_with = "argv::comma_list"
    )]
    pub tag: Vec<String>,
    /// Result file [default: <cqlbench home>/results/<time>-<env>-<workload>.json, <time> the
    /// UTC start as 20261122T023005Z].
    #[arg(long)]
    #[serde(default)]
    pub out: Option<PathBuf>,
    /// Only the final table.
    #[arg(long, short = 'q')]
    #[serde(default)]
    pub quiet: bool,
    /// Serve live metrics while the command runs, for Prometheus to scrape: OpenMetrics text
    /// at http://ADDR/metrics (e.g. 127.0.0.1:9500, or 0.0.0.0:9500 for another host; port 0
    /// picks a free one and says which). Off by default; see docs/live.md.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen)]
    #[serde(skip)]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// With --metrics-listen: keep serving this long after the command ends, so that a
    /// scraper reads the final figures (e.g. 10s for a 5 s scrape interval).
    #[arg(long, value_parser = parse_duration, requires = "metrics_listen", value_name = "DURATION")]
    #[serde(skip)]
    pub metrics_linger: Option<Duration>,
}

impl RunStep {
    /// `--env`, else the cluster name, else "hosts".
    pub fn env_label(&self) -> String {
        self.env
            .clone()
            .unwrap_or_else(|| self.cluster.clone().unwrap_or_else(|| "hosts".into()))
    }

    /// The step as the arguments of `command` (`run`, `throughput`, …) that make it again,
    /// every option set (the shard options each process gets of its own are left out).
    pub fn args(&self, command: &str) -> Vec<String> {
        argv::args(command, &["workload"], self, None)
    }

    /// [`Self::args`] without the options left at their defaults: what a person reads.
    pub fn args_shown(&self, command: &str) -> Vec<String> {
        let defaults: RunStep = de::from_value(crate::yaml::Value::Object(
            [("workload".into(), self.workload.to_string().into())]
                .into_iter()
                .collect(),
        ))
        .expect("a workload alone is a valid step");
        argv::args(command, &["workload"], self, Some(&defaults))
    }
}
