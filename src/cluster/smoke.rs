//! The quickstart's smoke check: a keyspace at RF = min(3, nodes), rows written and read
//! back at QUORUM, every value compared.

use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use scylla::statement::Consistency;

use super::{Cluster, ClusterError};

/// What the smoke check saw.
#[derive(Debug, Clone)]
pub struct SmokeReport {
    pub rows: u32,
    pub replication_factor: usize,
    pub write_time: Duration,
    pub read_time: Duration,
    pub mismatches: u32,
    /// Statements in flight at once.
    pub in_flight: usize,
}

/// Statements the check keeps in flight: a check of correctness, not of latency, that need
/// not wait for each row in turn (one at a time, 100 rows took 4.4 s on a loaded 3-node
/// cluster on 2 cores).
const IN_FLIGHT: usize = 16;

/// Writes `rows` rows at QUORUM into `cqlbench_smoke.kv` and reads each back at QUORUM.
pub fn write_read_check(c: &Cluster, rows: u32) -> Result<SmokeReport, ClusterError> {
    let rf = c.nodes().len().min(3);
    let dcs: Vec<String> = c
        .state
        .spec
        .dcs
        .iter()
        .map(|d| format!("'{}': {}", d.name, d.nodes.min(3)))
        .collect();
    let contact = c.contact_points();
    let tls = c.client_tls();
    c.reach_nodes(|| smoke(&contact, tls.as_ref(), rows, rf, &dcs))?
}

fn smoke(
    contact: &[String],
    tls: Option<&crate::spec::client::TlsSpec>,
    rows: u32,
    rf: usize,
    dcs: &[String],
) -> Result<SmokeReport, ClusterError> {
    super::cql::on_own_runtime(async {
        let e = |what: &str, err: &dyn std::fmt::Display| ClusterError::Cql(format!("smoke check, {what}: {err}"));
        let session = super::cql::builder(contact, tls)
            .map_err(|x| e("connect", &x))?
            .build()
            .await
            .map_err(|x| e("connect", &x))?;
        let ks = format!(
            "CREATE KEYSPACE IF NOT EXISTS cqlbench_smoke WITH replication = {{'class': 'NetworkTopologyStrategy', {}}}",
            dcs.join(", ")
        );
        session.query_unpaged(ks, &[]).await.map_err(|x| e("create keyspace", &x))?;
        session
            .query_unpaged("CREATE TABLE IF NOT EXISTS cqlbench_smoke.kv (k int PRIMARY KEY, v text)", &[])
            .await
            .map_err(|x| e("create table", &x))?;
        let mut ins = session.prepare("INSERT INTO cqlbench_smoke.kv (k, v) VALUES (?, ?)").await.map_err(|x| e("prepare", &x))?;
        ins.set_consistency(Consistency::Quorum);
        let mut sel = session.prepare("SELECT v FROM cqlbench_smoke.kv WHERE k = ?").await.map_err(|x| e("prepare", &x))?;
        sel.set_consistency(Consistency::Quorum);
        let t = Instant::now();
        futures::stream::iter(0..rows as i32)
            .map(|k| {
                let (session, ins) = (&session, &ins);
                async move { session.execute_unpaged(ins, (k, format!("value-{k}"))).await }
            })
            .buffer_unordered(IN_FLIGHT)
            .try_for_each(|_| async { Ok(()) })
            .await
            .map_err(|x| e("write", &x))?;
        let write_time = t.elapsed();
        let t = Instant::now();
        let read: Vec<(i32, Option<String>)> = futures::stream::iter(0..rows as i32)
            .map(|k| {
                let (session, sel) = (&session, &sel);
                async move {
                    let r = session.execute_unpaged(sel, (k,)).await.map_err(|x| e("read", &x))?;
                    let v = r
                        .into_rows_result()
                        .map_err(|x| e("read", &x))?
                        .maybe_first_row::<(String,)>()
                        .map_err(|x| e("read", &x))?;
                    Ok::<_, ClusterError>((k, v.map(|v| v.0)))
                }
            })
            .buffer_unordered(IN_FLIGHT)
            .try_collect()
            .await?;
        let read_time = t.elapsed();
        let mismatches = read.iter().filter(|(k, v)| v.as_deref() != Some(format!("value-{k}").as_str())).count() as u32;
        Ok(SmokeReport { rows, replication_factor: rf, write_time, read_time, mismatches, in_flight: IN_FLIGHT })
    })
    .map_err(|e| ClusterError::Cql(format!("starting a client runtime: {e}")))?
}
