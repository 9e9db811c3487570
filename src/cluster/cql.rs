//! The CQL side of readiness: every node answers on its own address and knows all others.

use std::net::SocketAddr;
use std::time::Duration;

use scylla::client::session_builder::SessionBuilder;
use scylla::policies::load_balancing::{NodeIdentifier, SingleTargetLoadBalancingPolicy};
use scylla::statement::unprepared::Statement;

/// Asks every node in `addrs` (CQL on port 9042) for its peers, each query sent to that node
/// alone. Returns, per node, the peers it lists. Runs on its own thread and runtime so it can
/// be called from sync code and from inside another runtime alike.
pub fn peers_by_node(
    addrs: &[String],
    timeout: Duration,
) -> Result<Vec<(String, Vec<String>)>, String> {
    let addrs = addrs.to_vec();
    std::thread::scope(|s| {
        s.spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            rt.block_on(async { tokio::time::timeout(timeout, peers_async(&addrs)).await })
                .map_err(|_| format!("CQL check did not finish within {}s", timeout.as_secs()))?
        })
        .join()
        .map_err(|_| "CQL check panicked".to_string())?
    })
}

async fn peers_async(addrs: &[String]) -> Result<Vec<(String, Vec<String>)>, String> {
    let known: Vec<String> = addrs.iter().map(|a| format!("{a}:9042")).collect();
    let session = SessionBuilder::new()
        .known_nodes(&known)
        .connection_timeout(Duration::from_secs(5))
        .fetch_schema_metadata(false)
        .build()
        .await
        .map_err(|e| format!("CQL connect to {}: {e}", known.join(",")))?;
    let mut out = Vec::new();
    for a in addrs {
        let sock: SocketAddr = format!("{a}:9042")
            .parse()
            .map_err(|e| format!("{a}: {e}"))?;
        let mut st = Statement::new("SELECT peer FROM system.peers");
        st.set_load_balancing_policy(Some(SingleTargetLoadBalancingPolicy::new(
            NodeIdentifier::NodeAddress(sock),
            None,
        )));
        let res = session
            .query_unpaged(st, &[])
            .await
            .map_err(|e| format!("CQL query on {a}: {e}"))?;
        let rows = res
            .into_rows_result()
            .map_err(|e| format!("CQL result from {a}: {e}"))?;
        let mut peers = Vec::new();
        for r in rows
            .rows::<(std::net::IpAddr,)>()
            .map_err(|e| format!("CQL rows from {a}: {e}"))?
        {
            let (ip,) = r.map_err(|e| format!("CQL row from {a}: {e}"))?;
            peers.push(ip.to_string());
        }
        peers.sort();
        out.push((a.clone(), peers));
    }
    Ok(out)
}
