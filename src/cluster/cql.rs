//! The CQL side of readiness: every node answers on its own address and knows all others.

use std::net::SocketAddr;
use std::time::Duration;

use scylla::client::session_builder::SessionBuilder;

use crate::spec::client::TlsSpec;
use scylla::policies::load_balancing::{NodeIdentifier, SingleTargetLoadBalancingPolicy};
use scylla::statement::unprepared::Statement;

/// A row of `system.local` or `system.peers`: address, data centre, rack (None until gossip
/// has told the node).
pub type NodeRow = (String, Option<String>, Option<String>);

/// What one node says about itself and its peers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeView {
    pub address: String,
    pub local: NodeRow,
    pub peers: Vec<NodeRow>,
}

/// Asks every node in `addrs` (CQL on port 9042) for `system.local` and `system.peers`, each
/// query sent to that node alone. Runs on its own thread and runtime so it can be called
/// from sync code and from inside another runtime alike.
pub fn views_by_node(
    addrs: &[String],
    timeout: Duration,
    tls: Option<&TlsSpec>,
) -> Result<Vec<NodeView>, CqlError> {
    on_own_runtime(async { tokio::time::timeout(timeout, peers_async(addrs, tls)).await })
        .map_err(|e| CqlError(format!("starting a client runtime: {e}")))?
        .map_err(|_| {
            CqlError(format!(
                "CQL check did not finish within {}s",
                timeout.as_secs()
            ))
        })?
}

/// A CQL check that could not be done, and why.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct CqlError(pub String);

/// Runs `fut` to completion on a new current-thread runtime on a thread of its own, so sync
/// code and code already inside a runtime can both wait for it.
pub(crate) fn on_own_runtime<F>(fut: F) -> std::io::Result<F::Output>
where
    F: std::future::Future + Send,
    F::Output: Send,
{
    std::thread::scope(|s| {
        s.spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            Ok(rt.block_on(fut))
        })
        .join()
        .map_err(|_| std::io::Error::other("the CQL client thread panicked"))?
    })
}

/// A session builder for the cluster's own checks: its TLS when it has it.
pub(crate) fn builder(known: &[String], tls: Option<&TlsSpec>) -> Result<SessionBuilder, CqlError> {
    let b = SessionBuilder::new()
        .known_nodes(known)
        .connection_timeout(Duration::from_secs(5));
    Ok(match tls {
        Some(t) => {
            crate::tls::with_tls(b, crate::tls::client_config(t).map_err(|e| CqlError(e.0))?)
        }
        None => b,
    })
}

async fn peers_async(addrs: &[String], tls: Option<&TlsSpec>) -> Result<Vec<NodeView>, CqlError> {
    let known: Vec<String> = addrs.iter().map(|a| format!("{a}:9042")).collect();
    let session = builder(&known, tls)?
        .fetch_schema_metadata(false)
        .build()
        .await
        .map_err(|e| CqlError(format!("CQL connect to {}: {e}", known.join(","))))?;
    let mut out = Vec::new();
    for a in addrs {
        let sock: SocketAddr = format!("{a}:9042")
            .parse()
            .map_err(|e| CqlError(format!("{a}: {e}")))?;
        let target = SingleTargetLoadBalancingPolicy::new(NodeIdentifier::NodeAddress(sock), None);
        let mut rows_of = Vec::new();
        for q in [
            "SELECT listen_address, data_center, rack FROM system.local",
            "SELECT peer, data_center, rack FROM system.peers",
        ] {
            let mut st = Statement::new(q);
            st.set_load_balancing_policy(Some(target.clone()));
            let res = session
                .query_unpaged(st, &[])
                .await
                .map_err(|e| CqlError(format!("CQL query on {a}: {e}")))?;
            let rows = res
                .into_rows_result()
                .map_err(|e| CqlError(format!("CQL result from {a}: {e}")))?;
            let mut v: Vec<NodeRow> = Vec::new();
            for r in rows
                .rows::<(Option<std::net::IpAddr>, Option<String>, Option<String>)>()
                .map_err(|e| CqlError(format!("CQL rows from {a}: {e}")))?
            {
                let (ip, dc, rack) = r.map_err(|e| CqlError(format!("CQL row from {a}: {e}")))?;
                v.push((ip.map(|i| i.to_string()).unwrap_or_default(), dc, rack));
            }
            v.sort();
            rows_of.push(v);
        }
        let peers = rows_of.pop().unwrap_or_default();
        let local =
            rows_of
                .pop()
                .and_then(|l| l.into_iter().next())
                .unwrap_or((a.clone(), None, None));
        out.push(NodeView {
            address: a.clone(),
            local,
            peers,
        });
    }
    Ok(out)
}
