//! The quickstart's smoke check: a keyspace at RF = min(3, nodes), rows written and read
//! back at QUORUM, every value compared.

use std::time::{Duration, Instant};

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
}

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
    super::cql::on_own_runtime(async {
        let e = |what: &str, err: &dyn std::fmt::Display| ClusterError::Cql(format!("smoke check, {what}: {err}"));
        let session = super::cql::builder(&contact, tls.as_ref())
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
        for k in 0..rows as i32 {
            session.execute_unpaged(&ins, (k, format!("value-{k}"))).await.map_err(|x| e("write", &x))?;
        }
        let write_time = t.elapsed();
        let t = Instant::now();
        let mut mismatches = 0;
        for k in 0..rows as i32 {
            let r = session.execute_unpaged(&sel, (k,)).await.map_err(|x| e("read", &x))?;
            let v = r
                .into_rows_result()
                .map_err(|x| e("read", &x))?
                .maybe_first_row::<(String,)>()
                .map_err(|x| e("read", &x))?;
            if v.map(|v| v.0) != Some(format!("value-{k}")) {
                mismatches += 1;
            }
        }
        Ok(SmokeReport { rows, replication_factor: rf, write_time, read_time: t.elapsed(), mismatches })
    })
    .map_err(|e| ClusterError::Cql(format!("starting a client runtime: {e}")))?
}
