//! The nodes' server figures through CQL ([`crate::metrics::cql`]): a reader with a session of
//! its own, on a thread and runtime of its own, so the samplers' threads, the capacity
//! search's settles and the fill's watcher — plain threads, inside a run's runtime or not —
//! ask it a node's reading and wait for the answer. Dropping the reader ends its thread.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use scylla::client::session::Session;
use scylla::value::{CqlValue, Row};
use tokio::sync::mpsc;

use super::session::{ConnectError, ConnectSpec, connect, on_node_within};
use crate::metrics::cql::{self, ThreadPool, Views};
use crate::metrics::reading::NodeReading;
use crate::metrics::sampler::{Endpoint, MetricsPlan};
use crate::metrics::scrape::{NodeReader, NodeSource, ScrapeError};

type Reply = std::sync::mpsc::SyncSender<Result<NodeReading, ScrapeError>>;

/// A node's reading asked of the reader's thread.
struct Ask {
    host: String,
    timeout: Duration,
    reply: Reply,
}

/// Reads nodes' virtual tables over a session of its own.
pub struct Reader {
    asks: mpsc::UnboundedSender<Ask>,
}

impl NodeReader for Reader {
    fn read(&self, host: &str, timeout: Duration) -> Result<NodeReading, ScrapeError> {
        let gone = || ScrapeError {
            message: format!("{host}: the CQL metrics reader has stopped"),
            refused: false,
        };
        let (reply, answer) = std::sync::mpsc::sync_channel(1);
        let ask = Ask {
            host: host.to_string(),
            timeout,
            reply,
        };
        self.asks.send(ask).map_err(|_| gone())?;
        // The query is bounded by `timeout` on the reader's side; a second more for the reply.
        answer
            .recv_timeout(timeout + Duration::from_secs(1))
            .map_err(|_| ScrapeError {
                message: format!(
                    "{host}: system_views: no answer within {:.1}s",
                    timeout.as_secs_f64()
                ),
                refused: false,
            })?
    }
}

/// Connects a reader to the cluster `spec` reaches; the nodes it reaches (see
/// [`reachable_nodes`]), in address order, with their CQL port.
pub fn connect_reader(spec: &ConnectSpec) -> Result<(Reader, Nodes), ConnectError> {
    let (asks, mut inbox) = mpsc::unbounded_channel::<Ask>();
    let (ready, connected) = std::sync::mpsc::sync_channel(1);
    let spec = spec.clone();
    let hosts = spec.hosts.join(",");
    let started = std::thread::Builder::new()
        .name("cqlbench-cql-metrics".into())
        .spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = ready.send(Err(ConnectError {
                        hosts: spec.hosts.join(","),
                        message: format!("starting the CQL metrics reader: {e}"),
                    }));
                    return;
                }
            };
            rt.block_on(async move {
                let session = match connect(&spec).await {
                    Ok(s) => s,
                    Err(e) => {
                        let _ = ready.send(Err(e));
                        return;
                    }
                };
                let nodes = reachable_nodes(&session).await;
                if ready.send(Ok(nodes)).is_err() {
                    return;
                }
                while let Some(ask) = inbox.recv().await {
                    let s = session.clone();
                    tokio::spawn(async move {
                        let r = read(&s, &ask.host, ask.timeout).await;
                        let _ = ask.reply.send(r);
                    });
                }
            });
        });
    if let Err(e) = started {
        return Err(ConnectError {
            hosts,
            message: format!("starting the CQL metrics reader: {e}"),
        });
    }
    let nodes = connected.recv().map_err(|_| ConnectError {
        hosts: hosts.clone(),
        message: "the CQL metrics reader stopped while connecting".into(),
    })??;
    Ok((Reader { asks }, nodes))
}

/// How long a new session is given to open its connections before the nodes it reached are
/// listed.
const REACH_WAIT: Duration = Duration::from_secs(3);

/// The nodes the session holds a connection to once it opened them (at most [`REACH_WAIT`]),
/// in address order: a node out of the client's reach (another data centre behind a firewall,
/// a partitioned lab node) would otherwise hold every settle of a capacity search to its
/// timeout. Every node the driver knows when it reached none.
async fn reachable_nodes(session: &Session) -> Nodes {
    let t0 = std::time::Instant::now();
    loop {
        let state = session.get_cluster_state();
        let all = state.get_nodes_info();
        let connected = all.iter().filter(|n| n.is_connected()).count();
        if connected == all.len() || t0.elapsed() >= REACH_WAIT {
            let address = |n: &Arc<scylla::cluster::Node>| {
                std::net::SocketAddr::new(n.address.ip(), n.address.port())
            };
            let (mut reached, mut unreached): (Vec<_>, Vec<_>) =
                all.iter().partition(|n| connected == 0 || n.is_connected());
            reached.sort_by_key(|n| address(n));
            unreached.sort_by_key(|n| address(n));
            return Nodes {
                reached: reached.iter().map(|n| address(n)).collect(),
                unreached: unreached.iter().map(|n| address(n)).collect(),
            };
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The cluster's nodes a reader reads, and those it left out (not reached in time).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Nodes {
    pub reached: Vec<std::net::SocketAddr>,
    pub unreached: Vec<std::net::SocketAddr>,
}

/// The nodes of the cluster `spec` reaches (see [`reachable_nodes`]), in address order, with
/// their CQL port.
pub fn cluster_nodes(spec: &ConnectSpec) -> Result<Vec<std::net::SocketAddr>, ConnectError> {
    connect_reader(spec).map(|(_, nodes)| nodes.reached)
}

/// `plan` with its nodes read through CQL, when it asks for that and has no reader yet: the
/// reader connected and every node it reaches listed as an endpoint (its address, its CQL port).
/// The plan unchanged otherwise.
pub fn attach(plan: &MetricsPlan, spec: &ConnectSpec) -> Result<MetricsPlan, ConnectError> {
    attach_listing(plan, spec).map(|(p, _)| p)
}

/// [`attach`], and the nodes it left out (not reached within a few seconds).
pub fn attach_listing(
    plan: &MetricsPlan,
    spec: &ConnectSpec,
) -> Result<(MetricsPlan, Vec<std::net::SocketAddr>), ConnectError> {
    if !plan.through_cql || plan.reader.is_some() {
        return Ok((plan.clone(), Vec::new()));
    }
    let (
        reader,
        Nodes {
            reached: nodes,
            unreached,
        },
    ) = connect_reader(spec)?;
    let n = nodes.len();
    let plan = MetricsPlan {
        endpoints: nodes
            .iter()
            .map(|a| Endpoint {
                node: a.ip().to_string(),
                host: a.ip().to_string(),
                port: a.port(),
            })
            .collect(),
        pids: vec![None; n],
        node_cpus: vec![0.0; n],
        reader: Some(NodeSource(Arc::new(reader))),
        ..plan.clone()
    };
    Ok((plan, unreached))
}

/// One node's reading from its virtual tables, within `timeout`.
async fn read(
    session: &Session,
    host: &str,
    timeout: Duration,
) -> Result<NodeReading, ScrapeError> {
    let fail = |what: String| ScrapeError {
        message: format!("{host}: system_views: {what}"),
        refused: false,
    };
    let ip: IpAddr = host
        .parse()
        .map_err(|_| fail(format!("'{host}' is not an address")))?;
    let node = session
        .get_cluster_state()
        .get_nodes_info()
        .iter()
        .find(|n| n.address.ip() == ip)
        .cloned()
        .ok_or_else(|| fail("the node is no longer in the cluster's topology".into()))?;
    let rows = |cql: &'static str| node_rows(session, &node, cql, timeout);
    let asked = async {
        Ok::<Views, RowsError>(Views {
            thread_pools: rows(cql::THREAD_POOLS)
                .await?
                .iter()
                .map(|r| ThreadPool {
                    name: text(r, 0),
                    active: int(r, 1),
                    pending: int(r, 2),
                })
                .collect(),
            disk_usage: rows(cql::DISK_USAGE)
                .await?
                .iter()
                .map(|r| (text(r, 0), int(r, 1)))
                .collect(),
            local_reads: rows(cql::LOCAL_READS)
                .await?
                .iter()
                .map(|r| int(r, 0))
                .collect(),
        })
    };
    match tokio::time::timeout(timeout, asked).await {
        Ok(Ok(views)) => Ok(cql::reading(&views)),
        Ok(Err(e)) => Err(fail(e.to_string())),
        Err(_) => Err(fail(format!(
            "no answer within {:.1}s",
            timeout.as_secs_f64()
        ))),
    }
}

/// Why a node's virtual table gave no rows.
#[derive(Debug, thiserror::Error)]
enum RowsError {
    #[error("the node has no such virtual table (Cassandra before 4.0?)")]
    NoTable,
    /// The driver's own words.
    #[error("{0}")]
    Driver(String),
}

/// The rows `cql` gives on `node` alone, within `timeout`; a table the node lacks is said so.
async fn node_rows(
    session: &Session,
    node: &Arc<scylla::cluster::Node>,
    cql: &str,
    timeout: Duration,
) -> Result<Vec<Row>, RowsError> {
    let driver = |e: &dyn std::fmt::Display| RowsError::Driver(e.to_string());
    let st = on_node_within(cql, node, timeout);
    let r = session.query_unpaged(st, &[]).await.map_err(|e| {
        let text = e.to_string();
        if text.contains("unconfigured table") || text.contains("does not exist") {
            RowsError::NoTable
        } else {
            RowsError::Driver(text)
        }
    })?;
    let r = r.into_rows_result().map_err(|e| driver(&e))?;
    Ok(r.rows::<Row>()
        .map_err(|e| driver(&e))?
        .filter_map(Result::ok)
        .collect())
}

/// Every node's coordinator latency rows for `keyspace` ([`cql::COORDINATOR_LATENCY`]), each
/// node asked directly for its version and its tables, all at once, so the whole reading takes
/// at most `timeout`; a node or table that does not answer (Cassandra before 4.0, a node down)
/// gives no rows.
pub async fn coordinator_latency(
    session: &Session,
    keyspace: &str,
    timeout: Duration,
) -> Vec<cql::Coordinated> {
    let mut nodes: Vec<_> = session.get_cluster_state().get_nodes_info().to_vec();
    nodes.sort_by_key(|n| n.address.to_string());
    let ask = |node, query: String| async move {
        let asked = tokio::time::timeout(timeout, node_rows(session, node, &query, timeout));
        asked.await.ok().and_then(Result::ok).unwrap_or_default()
    };
    let per_node = nodes.iter().map(|node| async move {
        let tables = cql::COORDINATOR_LATENCY
            .into_iter()
            .map(|(op, table)| async move {
                (op, ask(node, cql::coordinator_latency_query(table)).await)
            });
        let (version, tables) = futures::join!(
            ask(node, cql::RELEASE_VERSION.into()),
            futures::future::join_all(tables)
        );
        // What the columns' unit is depends on the version (cql::column_unit_ms).
        let unit_ms = cql::column_unit_ms(version.first().map(|r| text(r, 0)).as_deref());
        tables
            .into_iter()
            .flat_map(|(op, rows)| rows.into_iter().map(move |r| (op, r)))
            .filter(|(_, r)| text(r, 0) == keyspace)
            .map(|(op, r)| cql::Coordinated {
                node: node.address.ip().to_string(),
                op,
                table: text(&r, 1),
                count: int(&r, 2),
                p50: float(&r, 3),
                p99: float(&r, 4),
                max: float(&r, 5),
                unit_ms,
            })
            .collect::<Vec<_>>()
    });
    futures::future::join_all(per_node).await.concat()
}

/// A floating-point column (double or float); 0 when null.
fn float(r: &Row, i: usize) -> f64 {
    match r.columns.get(i) {
        Some(Some(CqlValue::Double(v))) => *v,
        Some(Some(CqlValue::Float(v))) => f64::from(*v),
        _ => 0.0,
    }
}

fn text(r: &Row, i: usize) -> String {
    match r.columns.get(i) {
        Some(Some(CqlValue::Text(s) | CqlValue::Ascii(s))) => s.clone(),
        _ => String::new(),
    }
}

/// An integer column of any width (the tables' types differ between versions); 0 when null.
fn int(r: &Row, i: usize) -> i64 {
    match r.columns.get(i) {
        Some(Some(CqlValue::Int(v))) => i64::from(*v),
        Some(Some(CqlValue::BigInt(v))) => *v,
        Some(Some(CqlValue::SmallInt(v))) => i64::from(*v),
        Some(Some(CqlValue::TinyInt(v))) => i64::from(*v),
        Some(Some(CqlValue::Counter(v))) => v.0,
        _ => 0,
    }
}
