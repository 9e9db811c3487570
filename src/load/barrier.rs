//! Shards of one run meeting in the cluster under test, so no coordinator of our own is
//! needed: a small table in the run's keyspace where each shard registers (a lightweight
//! transaction, so two processes claiming the same shard of the same run are refused) and
//! polls until every shard of the run is there.
//!
//! Two meetings: shard 0 registers `schema` once it has created the keyspace and tables (the
//! others wait for it before preparing their statements, so no two clients race to create
//! the same table), and every shard registers `main` once its rampup is done. The main phase
//! starts at the latest `main` registration plus [`START_MARGIN_S`]: every shard computes the
//! same instant from the same rows, and the margin leaves the others time to see the last one.

use std::time::Duration;

use scylla::client::session::Session;
use scylla::statement::Consistency;
use scylla::statement::unprepared::Statement;
use scylla::value::{CqlValue, Row};

use crate::spec::load::Share;

pub const TABLE: &str = "cqlbench_shards";
/// From the last shard's arrival to the main phase's start.
pub const START_MARGIN_S: f64 = 1.5;
const POLL: Duration = Duration::from_millis(100);

/// Why shards could not meet.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BarrierError {
    /// A statement on the meeting table failed (the driver's message).
    #[error("{doing}: {error}")]
    Query { doing: String, error: String },
    #[error(
        "waited {} for shard 0 to create {keyspace}.{TABLE}; is shard 0 running? \
         (--barrier-timeout sets the wait)",
        humantime::format_duration(*waited)
    )]
    NoTable { keyspace: String, waited: Duration },
    #[error(
        "shard {share} of run {run} is registered already (another process with the same \
         --run-id, or an earlier attempt): give a new --run-id"
    )]
    Registered { share: Share, run: String },
    #[error(
        "run {run}: shard {}/{} registered, but this shard is {share}: every shard of a run \
         needs the same N",
        other.shard,
        other.shards
    )]
    CountsDiffer {
        run: String,
        other: Arrival,
        share: Share,
    },
    #[error(
        "run {run}: waited {} for {waiting_for} ({last}); were all shards started with the \
         same --run-id? (--barrier-timeout sets the wait)",
        humantime::format_duration(*waited)
    )]
    TimedOut {
        run: String,
        waited: Duration,
        waiting_for: String,
        /// What the last poll saw: how many had registered, or its error.
        last: String,
    },
}

fn query(doing: impl Into<String>) -> impl FnOnce(String) -> BarrierError {
    let doing = doing.into();
    move |error| BarrierError::Query { doing, error }
}

/// One shard's registration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arrival {
    pub shard: u64,
    pub shards: u64,
    /// Unix milliseconds.
    pub at_ms: i64,
}

/// Creates the meeting table in `keyspace` (which exists).
pub async fn create_table(session: &Session, keyspace: &str) -> Result<(), BarrierError> {
    let q = format!(
        "CREATE TABLE IF NOT EXISTS {keyspace}.{TABLE} (run text, step text, shard bigint, \
         shards bigint, at_ms bigint, owner text, PRIMARY KEY ((run, step), shard))"
    );
    session
        .query_unpaged(q, &[])
        .await
        .map_err(|e| query(format!("creating {keyspace}.{TABLE}"))(e.to_string()))?;
    session
        .await_schema_agreement()
        .await
        .map_err(|e| query("waiting for schema agreement")(e.to_string()))?;
    Ok(())
}

/// Waits until `keyspace` has the meeting table, reading only the schema tables: a shard
/// that queried the table while shard 0 was creating it could catch the node between the
/// table's schema row and its store being opened (an "Unknown CF" error on the server).
pub async fn wait_for_table(
    session: &Session,
    keyspace: &str,
    timeout: Duration,
) -> Result<(), BarrierError> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let found = session
            .query_unpaged(
                "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?",
                (keyspace, TABLE),
            )
            .await
            .ok()
            .and_then(|r| r.into_rows_result().ok())
            .is_some_and(|r| r.rows_num() > 0);
        if found {
            // The schema row comes first; give the node time to open the table's store.
            let _ = session.await_schema_agreement().await;
            tokio::time::sleep(Duration::from_secs(1)).await;
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(BarrierError::NoTable {
                keyspace: keyspace.to_string(),
                waited: timeout,
            });
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Registers this shard at `step`; refused when the shard of this run is registered already.
pub async fn register(
    session: &Session,
    keyspace: &str,
    run: &str,
    step: &str,
    share: Share,
) -> Result<Arrival, BarrierError> {
    let at_ms = (crate::host::unix_now() * 1000.0) as i64;
    let owner = format!("{}-{}", std::process::id(), at_ms);
    let mut st = Statement::new(format!(
        "INSERT INTO {keyspace}.{TABLE} (run, step, shard, shards, at_ms, owner) \
         VALUES (?, ?, ?, ?, ?, ?) IF NOT EXISTS"
    ));
    st.set_consistency(Consistency::Quorum);
    let values = (
        run,
        step,
        share.index as i64,
        share.count as i64,
        at_ms,
        owner.as_str(),
    );
    let row = session
        .query_unpaged(st, values)
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r.into_rows_result().map_err(|e| e.to_string()))
        .and_then(|r| r.maybe_first_row::<Row>().map_err(|e| e.to_string()))
        .map_err(query(format!(
            "registering shard {share} of run {run} ({step})"
        )))?;
    match row.as_ref().and_then(|r| r.columns.first()) {
        Some(Some(CqlValue::Boolean(true))) => Ok(Arrival {
            shard: share.index,
            shards: share.count,
            at_ms,
        }),
        _ => Err(BarrierError::Registered {
            share,
            run: run.to_string(),
        }),
    }
}

/// The shards registered at `step` so far.
pub async fn arrivals(
    session: &Session,
    keyspace: &str,
    run: &str,
    step: &str,
) -> Result<Vec<Arrival>, BarrierError> {
    let mut st = Statement::new(format!(
        "SELECT shard, shards, at_ms FROM {keyspace}.{TABLE} WHERE run = ? AND step = ?"
    ));
    st.set_consistency(Consistency::Serial);
    let rows = session
        .query_unpaged(st, (run, step))
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r.into_rows_result().map_err(|e| e.to_string()))
        .map_err(query(format!("reading the shards of run {run} ({step})")))?;
    rows.rows::<(i64, i64, i64)>()
        .map_err(|e| e.to_string())
        .and_then(|rows| {
            rows.map(|r| {
                r.map(|(shard, shards, at_ms)| Arrival {
                    shard: shard.max(0) as u64,
                    shards: shards.max(0) as u64,
                    at_ms,
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())
        })
        .map_err(query(format!("reading the shards of run {run} ({step})")))
}

/// What the arrivals so far say: all `share.count` shards are there, more are awaited, or
/// they disagree on how many shards the run has.
pub fn complete(arrivals: &[Arrival], share: Share, run: &str) -> Result<bool, BarrierError> {
    if let Some(a) = arrivals.iter().find(|a| a.shards != share.count) {
        return Err(BarrierError::CountsDiffer {
            run: run.to_string(),
            other: *a,
            share,
        });
    }
    Ok(arrivals.len() as u64 >= share.count)
}

/// The agreed start of the main phase (Unix seconds): the last arrival plus the margin.
pub fn start_of(arrivals: &[Arrival]) -> f64 {
    let last = arrivals.iter().map(|a| a.at_ms).max().unwrap_or(0);
    last as f64 / 1000.0 + START_MARGIN_S
}

/// Polls until `done` says the arrivals at `step` are complete; query errors (the table not
/// created yet, a keyspace being dropped and created again) are retried until `timeout`.
pub async fn wait(
    session: &Session,
    keyspace: &str,
    run: &str,
    step: &str,
    timeout: Duration,
    done: impl Fn(&[Arrival]) -> Result<bool, BarrierError>,
    waiting_for: &str,
) -> Result<Vec<Arrival>, BarrierError> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let last_error = match arrivals(session, keyspace, run, step).await {
            Ok(a) => {
                if done(&a)? {
                    return Ok(a);
                }
                format!("{} registered", a.len())
            }
            Err(e) => e.to_string(),
        };
        if tokio::time::Instant::now() >= deadline {
            return Err(BarrierError::TimedOut {
                run: run.to_string(),
                waited: timeout,
                waiting_for: waiting_for.to_string(),
                last: last_error,
            });
        }
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_is_the_last_arrival_plus_the_margin_and_counts_must_agree() {
        let share = Share { index: 1, count: 3 };
        let a = |shard, shards, at_ms| Arrival {
            shard,
            shards,
            at_ms,
        };
        let two = [a(0, 3, 1_000), a(2, 3, 4_500)];
        assert_eq!(complete(&two, share, "r"), Ok(false));
        let three = [a(0, 3, 1_000), a(2, 3, 4_500), a(1, 3, 2_000)];
        assert_eq!(complete(&three, share, "r"), Ok(true));
        assert_eq!(start_of(&three), 4.5 + START_MARGIN_S);
        let e = complete(&[a(0, 2, 1_000)], share, "r")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("shard 0/2 registered, but this shard is 1/3"),
            "{e}"
        );
    }
}
