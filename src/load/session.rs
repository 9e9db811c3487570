//! Connecting to a cluster: token-, DC- and rack-aware routing, the client timeout,
//! credentials, TLS, and the driver settings (retries, speculative execution, compression,
//! connections per node), with counters of what the driver did beyond one request each.

use std::sync::Arc;
use std::time::Duration;

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};

use scylla::client::PoolSize;
use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::errors::{RequestAttemptError, RequestError};
use scylla::observability::history::{AttemptId, HistoryListener, RequestId, SpeculativeId};
use scylla::policies::load_balancing::DefaultPolicy;
use scylla::policies::retry::{
    DefaultRetryPolicy, FallthroughRetryPolicy, RequestInfo, RetryDecision, RetryPolicy,
    RetrySession,
};
use scylla::policies::speculative_execution::{
    Context as SpeculativeContext, SimpleSpeculativeExecutionPolicy, SpeculativeExecutionPolicy,
};
use scylla::statement::unprepared::Statement;

use crate::result::DriverCounts;
use crate::spec::client::{ClientSpec, Compression, Retry, Speculative};
use crate::stats::ErrorKind;

/// User name and password, read from the environment or a file, never printed.
#[derive(Clone)]
pub struct Credentials {
    pub username: String,
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Credentials {{ username: {:?}, password: <hidden> }}",
            self.username
        )
    }
}

impl Credentials {
    /// A user name and password, as `CQLBENCH_USERNAME` / `CQLBENCH_PASSWORD` give them: both
    /// set, the name not empty.
    pub fn from_env_values(
        username: Option<String>,
        password: Option<String>,
    ) -> Option<Credentials> {
        let username = username.filter(|s| !s.is_empty())?;
        Some(Credentials {
            username,
            password: password?,
        })
    }

    /// A file of two lines: user name, then password.
    pub fn from_file(path: &std::path::Path) -> Result<Credentials, crate::error::Invalid> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| crate::invalid!("credentials file {}: {e}", path.display()))?;
        let mut lines = text.lines();
        match (lines.next(), lines.next()) {
            (Some(u), Some(p)) if !u.trim().is_empty() => Ok(Credentials {
                username: u.trim().into(),
                password: p.into(),
            }),
            _ => Err(crate::invalid!(
                "credentials file {}: expected two lines: user name, then password",
                path.display()
            )),
        }
    }
}

/// How to connect.
#[derive(Debug, Clone)]
pub struct ConnectSpec {
    /// `host` or `host:port`; port 9042 when absent.
    pub hosts: Vec<String>,
    pub local_dc: Option<String>,
    pub timeout: Duration,
    pub credentials: Option<Credentials>,
    /// TLS and the driver settings (the driver's defaults, plain text, when left default).
    pub client: ClientSpec,
}

/// The contact points could not be reached (or refused the credentials, or the TLS
/// handshake): the cause in words where it is known, then the driver's message.
#[derive(Debug, thiserror::Error)]
#[error("cannot connect to {hosts}: {message}")]
pub struct ConnectError {
    pub hosts: String,
    pub message: String,
}

/// What the driver did beyond sending each request once: retries (and the errors they
/// absorbed, by kind) and speculative executions, counted for every statement prepared with
/// these counters as its history listener (`workload::Preparer`). A retried operation is one
/// operation; its response time includes its retries.
#[derive(Debug)]
pub struct DriverCounters {
    retries: AtomicU64,
    speculative: AtomicU64,
    retried: [AtomicU64; ErrorKind::ALL.len()],
    /// `--speculative pNN`: the delay before a speculative request, in microseconds, set
    /// from the run's recent service times ([`DriverCounters::set_speculative_delay`]).
    speculative_delay_us: AtomicU64,
}

/// The delay of a percentile speculative execution before the run has measured any service
/// time.
const FIRST_SPECULATIVE_DELAY_US: u64 = 100_000;

impl Default for DriverCounters {
    fn default() -> Self {
        DriverCounters {
            retries: AtomicU64::new(0),
            speculative: AtomicU64::new(0),
            retried: std::array::from_fn(|_| AtomicU64::new(0)),
            speculative_delay_us: AtomicU64::new(FIRST_SPECULATIVE_DELAY_US),
        }
    }
}

impl DriverCounters {
    /// The counts so far.
    pub fn snapshot(&self) -> DriverCounts {
        DriverCounts {
            retries: self.retries.load(Ordering::Relaxed),
            speculative_executions: self.speculative.load(Ordering::Relaxed),
            retried_errors: ErrorKind::ALL
                .iter()
                .zip(&self.retried)
                .map(|(k, n)| (*k, n.load(Ordering::Relaxed)))
                .filter(|(_, n)| *n > 0)
                .collect(),
        }
    }

    /// The delay a percentile speculative execution waits from now on.
    pub fn set_speculative_delay(&self, d: Duration) {
        let us = (d.as_micros() as u64).max(1_000);
        self.speculative_delay_us.store(us, Ordering::Relaxed);
    }
}

impl HistoryListener for DriverCounters {
    fn log_request_start(&self) -> RequestId {
        RequestId(0)
    }
    fn log_request_success(&self, _: RequestId) {}
    fn log_request_error(&self, _: RequestId, _: &RequestError) {}
    fn log_new_speculative_fiber(&self, _: RequestId) -> SpeculativeId {
        self.speculative.fetch_add(1, Ordering::Relaxed);
        SpeculativeId(0)
    }
    fn log_attempt_start(
        &self,
        _: RequestId,
        _: Option<SpeculativeId>,
        _: std::net::SocketAddr,
    ) -> AttemptId {
        AttemptId(0)
    }
    fn log_attempt_success(&self, _: AttemptId) {}
    fn log_attempt_error(&self, _: AttemptId, error: &RequestAttemptError, retry: &RetryDecision) {
        if matches!(
            retry,
            RetryDecision::RetrySameTarget(_) | RetryDecision::RetryNextTarget(_)
        ) {
            self.retries.fetch_add(1, Ordering::Relaxed);
            let kind = crate::load::driven::classify_attempt(error);
            if let Some(i) = ErrorKind::ALL.iter().position(|k| *k == kind) {
                self.retried[i].fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// `--retry N`: up to N retries on the next node for an idempotent request whose failure
/// another node may not repeat.
#[derive(Debug)]
struct RetryUpTo(u32);

struct RetryUpToSession {
    max: u32,
    done: u32,
}

impl RetryPolicy for RetryUpTo {
    fn new_session(&self) -> Box<dyn RetrySession> {
        Box::new(RetryUpToSession {
            max: self.0,
            done: 0,
        })
    }
}

impl RetrySession for RetryUpToSession {
    fn decide_should_retry(&mut self, info: RequestInfo) -> RetryDecision {
        use scylla::errors::DbError;
        let retriable = match info.error {
            RequestAttemptError::DbError(db, _) => matches!(
                db,
                DbError::ReadTimeout { .. }
                    | DbError::WriteTimeout { .. }
                    | DbError::Unavailable { .. }
                    | DbError::Overloaded
                    | DbError::IsBootstrapping
                    | DbError::ServerError
                    | DbError::TruncateError
            ),
            RequestAttemptError::BrokenConnectionError(_)
            | RequestAttemptError::UnableToAllocStreamId => true,
            _ => false,
        };
        if info.is_idempotent && retriable && self.done < self.max {
            self.done += 1;
            RetryDecision::RetryNextTarget(None)
        } else {
            RetryDecision::DontRetry
        }
    }
    fn reset(&mut self) {
        self.done = 0;
    }
}

/// `--speculative pNN`: waits the delay the run last measured for that percentile.
#[derive(Debug)]
struct PercentileDelay {
    max: usize,
    counters: Arc<DriverCounters>,
}

impl SpeculativeExecutionPolicy for PercentileDelay {
    fn max_retry_count(&self, _: &SpeculativeContext) -> usize {
        self.max
    }
    fn retry_interval(&self, _: &SpeculativeContext) -> Duration {
        Duration::from_micros(self.counters.speculative_delay_us.load(Ordering::Relaxed))
    }
}

/// Connects with a token-aware policy preferring `local_dc` (no failover to other DCs), and
/// the TLS and driver settings of `spec.client`.
pub async fn connect(spec: &ConnectSpec) -> Result<Arc<Session>, ConnectError> {
    connect_counted(spec, Arc::default()).await
}

/// [`connect`], a percentile speculative execution reading its delay from `counters`.
pub async fn connect_counted(
    spec: &ConnectSpec,
    counters: Arc<DriverCounters>,
) -> Result<Arc<Session>, ConnectError> {
    let hosts: Vec<String> = spec
        .hosts
        .iter()
        .map(|h| {
            if h.contains(':') {
                h.clone()
            } else {
                format!("{h}:9042")
            }
        })
        .collect();
    let refused = |message: String| ConnectError {
        hosts: hosts.join(","),
        message,
    };
    let driver = &spec.client.driver;
    driver.check().map_err(|e| refused(e.0))?;
    let mut policy = DefaultPolicy::builder().token_aware(true);
    match (&spec.local_dc, &driver.rack) {
        (Some(dc), Some(rack)) => {
            policy = policy
                .prefer_datacenter_and_rack(dc.clone(), rack.clone())
                .permit_dc_failover(false)
        }
        (Some(dc), None) => {
            policy = policy
                .prefer_datacenter(dc.clone())
                .permit_dc_failover(false)
        }
        (None, Some(_)) => {
            return Err(refused("--rack needs the local data centre (--dc)".into()));
        }
        (None, None) => {}
    }
    let retry: Arc<dyn RetryPolicy> = match driver.retry {
        Retry::Default => Arc::new(DefaultRetryPolicy::new()),
        Retry::None => Arc::new(FallthroughRetryPolicy::new()),
        Retry::Count(n) => Arc::new(RetryUpTo(n)),
    };
    let speculative: Option<Arc<dyn SpeculativeExecutionPolicy>> = match driver.speculative {
        Speculative::Off => None,
        Speculative::Delay { delay_ms, max } => Some(Arc::new(SimpleSpeculativeExecutionPolicy {
            max_retry_count: max as usize,
            retry_interval: Duration::from_secs_f64(delay_ms / 1000.0),
        })),
        Speculative::Percentile { max, .. } => Some(Arc::new(PercentileDelay {
            max: max as usize,
            counters,
        })),
    };
    let profile = ExecutionProfile::builder()
        .load_balancing_policy(policy.build())
        .request_timeout(Some(spec.timeout))
        .retry_policy(retry)
        .speculative_execution_policy(speculative)
        .build();
    let mut b = SessionBuilder::new()
        .known_nodes(&hosts)
        .default_execution_profile_handle(profile.into_handle())
        .connection_timeout(Duration::from_secs(5))
        .compression(match driver.compression {
            Compression::None => None,
            Compression::Lz4 => Some(scylla::client::Compression::Lz4),
            Compression::Snappy => Some(scylla::client::Compression::Snappy),
        });
    if let Some(n) = driver.connections_per_host.and_then(NonZeroUsize::new) {
        b = b.pool_size(PoolSize::PerHost(n));
    }
    let tls = spec.client.tls.as_ref().map(crate::tls::client_config);
    let tls_config = tls.transpose().map_err(|e| refused(e.0))?;
    if let Some(config) = &tls_config {
        b = crate::tls::with_tls(b, config.clone());
    }
    if let Some(c) = &spec.credentials {
        b = b.user(&c.username, &c.password);
    }
    b = with_address_map(b, driver);
    // The driver's own connection timeout bounds each attempt, but not the whole: a node that
    // refuses a client certificate after a TLS 1.3 handshake once left `build` waiting with no
    // connection and no timer (a CI run, 30 minutes). The bound makes that an error, which the
    // handshake of our own below explains.
    let bound = connect_bound(hosts.len());
    let built = match tokio::time::timeout(bound, b.build()).await {
        Ok(built) => built.map_err(|e| e.to_string()),
        Err(_) => Err(format!(
            "the driver neither connected nor gave up within {} s",
            bound.as_secs()
        )),
    };
    let session = match built {
        Ok(s) => s,
        Err(e) => {
            // One line: the driver's message may span several.
            let text = e.split_whitespace().collect::<Vec<_>>().join(" ");
            let tls = spec.client.tls.as_ref();
            let mut cause = crate::tls::explain(&text, tls);
            // The driver saw a broken connection without its TLS cause: ask the first node
            // with a handshake of our own.
            if let (None, Some(config), Some(first)) = (&cause, tls_config, hosts.first()) {
                let first = first.clone();
                // A closing node can lose its alert to a reset: up to three handshakes.
                let probed = tokio::task::spawn_blocking(move || {
                    (0..3)
                        .filter_map(|_| crate::tls::probe(&first, config.clone()))
                        .find(|p| p.contains("alert") || p.contains("certificate"))
                })
                .await
                .ok()
                .flatten();
                cause = probed.and_then(|p| crate::tls::explain(&p, tls));
            }
            return Err(refused(match cause {
                Some(cause) => format!("{cause} ({text})"),
                None => text,
            }));
        }
    };
    Ok(Arc::new(session))
}

/// The session builder with `driver`'s `--address-map`, if it has one.
fn with_address_map(b: SessionBuilder, driver: &crate::spec::client::DriverSpec) -> SessionBuilder {
    if driver.address_map.is_empty() {
        return b;
    }
    b.address_translator(Arc::new(MappedAddresses(
        driver
            .address_map
            .iter()
            .map(|m| (m.internal, m.external))
            .collect(),
    )))
}

/// `--address-map`: a node reporting an address named is reached at its mapped one; any other
/// at the address it reports (the driver's own map refuses every node it does not name).
#[derive(Debug)]
struct MappedAddresses(std::collections::HashMap<std::net::SocketAddr, std::net::SocketAddr>);

#[async_trait::async_trait]
impl scylla::policies::address_translator::AddressTranslator for MappedAddresses {
    async fn translate_address(
        &self,
        peer: &scylla::policies::address_translator::UntranslatedPeer,
    ) -> Result<std::net::SocketAddr, scylla::errors::TranslationError> {
        let reported = peer.untranslated_address();
        Ok(self.0.get(&reported).copied().unwrap_or(reported))
    }
}

/// Which nodes of `dc` (every node when None) the cluster reports and which of them the
/// driver holds a connection to, waiting up to `wait` for its pools to reach them all (a
/// node behind a firewall that drops packets takes the driver's connection timeout, 5 s, to
/// fail).
pub async fn reach(session: &Session, dc: Option<&str>, wait: Duration) -> crate::result::Reach {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let state = session.get_cluster_state();
        let shown = |a: scylla::cluster::NodeAddr| match a.port() {
            9042 => a.ip().to_string(),
            _ => format!("{}:{}", a.ip(), a.port()),
        };
        let in_dc =
            |n: &&Arc<scylla::cluster::Node>| dc.is_none_or(|d| n.datacenter.as_deref() == Some(d));
        let all = state.get_nodes_info();
        let nodes: Vec<&Arc<scylla::cluster::Node>> = all.iter().filter(in_dc).collect();
        let connected: Vec<String> = nodes
            .iter()
            .filter(|n| n.is_connected())
            .map(|n| shown(n.address))
            .collect();
        if connected.len() == nodes.len() || tokio::time::Instant::now() >= deadline {
            let other_dcs = all.len() - nodes.len();
            let mut nodes: Vec<String> = nodes.iter().map(|n| shown(n.address)).collect();
            nodes.sort();
            let mut connected = connected;
            connected.sort();
            return crate::result::Reach {
                dc: dc.map(str::to_string),
                nodes,
                connected,
                other_dcs,
            };
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// How long a session may take to connect: beyond the 60 s in which the driver gives up on a
/// node that accepts and never answers (its keepalive; measured with a silent listener), and 5
/// s (the connection timeout) more for each node named, which it may try one after another.
fn connect_bound(hosts: usize) -> Duration {
    Duration::from_secs(90 + 5 * hosts as u64)
}

/// `release_version` of the node answering.
pub async fn cassandra_version(session: &Session) -> Option<String> {
    system_local_text(session, "release_version").await
}

/// The Java version of the node answering, from `system_views.system_properties` (Cassandra
/// 4.0 and later); `None` before 4.0 or when the table cannot be read.
pub async fn java_version(session: &Session) -> Option<String> {
    let r = session
        .query_unpaged(
            "SELECT value FROM system_views.system_properties WHERE name = 'java.version'",
            &[],
        )
        .await
        .ok()?;
    r.into_rows_result()
        .ok()?
        .maybe_first_row::<(Option<String>,)>()
        .ok()?
        .and_then(|r| r.0)
}

/// The settings of the node answering, from `system_views.settings` (Cassandra 4.0 and
/// later): empty before 4.0 or when the table cannot be read. A setting whose name says
/// password is left out, whatever the server shows of it; a setting without a value is kept
/// as an empty string.
pub async fn server_settings(
    session: &Session,
    node: Option<&Arc<scylla::cluster::Node>>,
) -> std::collections::BTreeMap<String, String> {
    read_settings(session, node).await.unwrap_or_default()
}

/// [`server_settings`] of `node`, `None` when its table cannot be read.
async fn read_settings(
    session: &Session,
    node: Option<&Arc<scylla::cluster::Node>>,
) -> Option<std::collections::BTreeMap<String, String>> {
    let r = session
        .query_unpaged(
            on_node("SELECT name, value FROM system_views.settings", node),
            &[],
        )
        .await
        .ok()?;
    let rows = r.into_rows_result().ok()?;
    let out: std::collections::BTreeMap<String, String> = rows
        .rows::<(String, Option<String>)>()
        .ok()?
        .filter_map(Result::ok)
        .filter(|(name, _)| !name.contains("password"))
        .map(|(name, value)| (name, value.unwrap_or_default()))
        .collect();
    Some(out)
}

/// Every other node's settings (the driver's nodes but `asked`), each asked directly: by its
/// address, `None` where its table could not be read (a node down, or before 4.0).
pub async fn other_nodes_settings(
    session: &Session,
    asked: Option<&Arc<scylla::cluster::Node>>,
) -> Vec<(
    std::net::IpAddr,
    Option<std::collections::BTreeMap<String, String>>,
)> {
    let Some(asked) = asked else {
        return Vec::new();
    };
    let state = session.get_cluster_state();
    let mut nodes: Vec<Arc<scylla::cluster::Node>> = state
        .get_nodes_info()
        .iter()
        .filter(|n| n.host_id != asked.host_id)
        .cloned()
        .collect();
    nodes.sort_by_key(|n| n.address.to_string());
    let mut out = Vec::new();
    for node in nodes {
        let settings = read_settings(session, Some(&node)).await;
        out.push((node.address.ip(), settings));
    }
    out
}

/// The node whose system tables a run records ([`server_settings`], [`cluster_nodes`]): the
/// first, in address order, that answers. Node-local tables read through the load balancer
/// came from any node, one table from one and the next from another: `system.local` of one
/// node with `system.peers_v2` of another listed a node twice and missed one, and each run
/// recorded another node's directories.
pub async fn asked_node(session: &Session) -> Option<Arc<scylla::cluster::Node>> {
    for node in connected_first(session) {
        let answered = session
            .query_unpaged(on_node("SELECT key FROM system.local", Some(&node)), &[])
            .await
            .is_ok();
        if answered {
            return Some(node);
        }
    }
    None
}

/// The cluster's nodes, those the driver holds a connection to first (behind a NAT or a
/// port-forward the others may be out of reach), each group by address.
fn connected_first(session: &Session) -> Vec<Arc<scylla::cluster::Node>> {
    let mut nodes = session.get_cluster_state().get_nodes_info().to_vec();
    nodes.sort_by_key(|n| (!n.is_connected(), n.address.to_string()));
    nodes
}

/// `cql` sent to `node` only, its request bounded by `timeout`.
pub fn on_node_within(
    cql: &str,
    node: &Arc<scylla::cluster::Node>,
    timeout: Duration,
) -> Statement {
    use scylla::policies::load_balancing::{NodeIdentifier, SingleTargetLoadBalancingPolicy};
    let mut statement = Statement::new(cql);
    let profile = ExecutionProfile::builder()
        .load_balancing_policy(SingleTargetLoadBalancingPolicy::new(
            NodeIdentifier::Node(node.clone()),
            None,
        ))
        .request_timeout(Some(timeout))
        .build();
    statement.set_execution_profile_handle(Some(profile.into_handle()));
    statement
}

/// `cql` sent to `node` only (any node when `None`).
fn on_node(cql: &str, node: Option<&Arc<scylla::cluster::Node>>) -> Statement {
    match node {
        Some(node) => on_node_within(cql, node, Duration::from_secs(30)),
        None => Statement::new(cql),
    }
}

/// The cluster's nodes as `node` sees them: itself (`system.local`) and its peers
/// (`system.peers_v2` on Cassandra 4.0 and later, `system.peers` before); empty when
/// `system.local` cannot be read.
pub async fn cluster_nodes(
    session: &Session,
    node: Option<&Arc<scylla::cluster::Node>>,
) -> Vec<crate::result::NodeFacts> {
    type Row = (
        Option<std::net::IpAddr>,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<Vec<String>>,
    );
    async fn rows(
        session: &Session,
        cql: &str,
        node: Option<&Arc<scylla::cluster::Node>>,
    ) -> Option<Vec<Row>> {
        let r = session.query_unpaged(on_node(cql, node), &[]).await.ok()?;
        let rows = r.into_rows_result().ok()?;
        let out = rows.rows::<Row>().ok()?.filter_map(Result::ok).collect();
        Some(out)
    }
    let Some(local) = rows(
        session,
        "SELECT broadcast_address, data_center, rack, release_version, tokens FROM system.local",
        node,
    )
    .await
    else {
        return Vec::new();
    };
    // Cassandra 3.x has no `system.peers_v2`: its peers are in `system.peers` (same columns
    // here; ports are what v2 adds).
    let peers = match rows(
        session,
        "SELECT peer, data_center, rack, release_version, tokens FROM system.peers_v2",
        node,
    )
    .await
    {
        Some(p) => p,
        None => rows(
            session,
            "SELECT peer, data_center, rack, release_version, tokens FROM system.peers",
            node,
        )
        .await
        .unwrap_or_default(),
    };
    let mut out: Vec<crate::result::NodeFacts> = local
        .into_iter()
        .chain(peers)
        .map(
            |(address, dc, rack, version, tokens)| crate::result::NodeFacts {
                address: address.map_or_else(String::new, |a| a.to_string()),
                dc,
                rack,
                release_version: version,
                tokens: tokens.map_or(0, |t| t.len()),
                settings_differ: Default::default(),
                settings_unread: false,
            },
        )
        .collect();
    out.sort_by(|a, b| (&a.dc, &a.address).cmp(&(&b.dc, &b.address)));
    out
}

/// The workload's keyspace and tables as the server has them (`system_schema`), flattened
/// to name → value: `keyspace.replication`, then `TABLE.compaction`, `TABLE.compression`,
/// `TABLE.caching`, `TABLE.gc_grace_seconds`, `TABLE.default_time_to_live` and
/// `TABLE.bloom_filter_fp_chance` per table (maps as `k=v` pairs in key order). Empty when
/// the schema tables cannot be read.
pub async fn schema_facts(
    session: &Session,
    keyspace: &str,
) -> std::collections::BTreeMap<String, String> {
    use std::collections::BTreeMap;
    fn pairs(m: &BTreeMap<String, String>) -> String {
        let v: Vec<String> = m.iter().map(|(k, v)| format!("{k}={v}")).collect();
        v.join(", ")
    }
    let mut out = BTreeMap::new();
    let replication = async {
        let r = session
            .query_unpaged(
                "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?",
                (keyspace,),
            )
            .await
            .ok()?;
        r.into_rows_result()
            .ok()?
            .maybe_first_row::<(BTreeMap<String, String>,)>()
            .ok()?
            .map(|r| r.0)
    };
    if let Some(r) = replication.await {
        out.insert("keyspace.replication".to_string(), pairs(&r));
    }
    type Table = (
        String,
        Option<BTreeMap<String, String>>,
        Option<BTreeMap<String, String>>,
        Option<BTreeMap<String, String>>,
        Option<i32>,
        Option<i32>,
        Option<f64>,
    );
    let tables = async {
        let r = session
            .query_unpaged(
                "SELECT table_name, compaction, compression, caching, gc_grace_seconds, \
                 default_time_to_live, bloom_filter_fp_chance FROM system_schema.tables \
                 WHERE keyspace_name = ?",
                (keyspace,),
            )
            .await
            .ok()?;
        let rows = r.into_rows_result().ok()?;
        let v: Vec<Table> = rows.rows::<Table>().ok()?.filter_map(Result::ok).collect();
        Some(v)
    };
    for (table, compaction, compression, caching, gc_grace, ttl, bloom) in
        tables.await.unwrap_or_default()
    {
        let mut put = |what: &str, v: Option<String>| {
            if let Some(v) = v {
                out.insert(format!("{table}.{what}"), v);
            }
        };
        put("compaction", compaction.as_ref().map(pairs));
        put("compression", compression.as_ref().map(pairs));
        put("caching", caching.as_ref().map(pairs));
        put("gc_grace_seconds", gc_grace.map(|v| v.to_string()));
        put("default_time_to_live", ttl.map(|v| v.to_string()));
        put("bloom_filter_fp_chance", bloom.map(|v| v.to_string()));
    }
    out
}

/// The data centre of the node answering.
pub async fn local_dc(session: &Session) -> Option<String> {
    system_local_text(session, "data_center").await
}

/// One text column of `system.local` (a fixed name, never user input), from the first node
/// that answers, those the driver holds a connection to first: behind a NAT or a
/// port-forward, the nodes the cluster reports may be out of reach.
async fn system_local_text(session: &Session, column: &'static str) -> Option<String> {
    let cql = format!("SELECT {column} FROM system.local");
    for node in connected_first(session) {
        let Ok(r) = session.query_unpaged(on_node(&cql, Some(&node)), &[]).await else {
            continue;
        };
        let value = r
            .into_rows_result()
            .ok()
            .and_then(|rows| rows.maybe_first_row::<(String,)>().ok().flatten())
            .map(|r| r.0);
        if value.is_some() {
            return value;
        }
    }
    None
}
