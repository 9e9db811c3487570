//! The exchange's statements in the cluster under test, on a session connected as the load
//! engine connects ([`crate::load::session::connect`]: the run's contact points, TLS and
//! credentials). Writes and reads are at QUORUM, so what one machine wrote the next reads.

use std::sync::Arc;
use std::time::Duration;

use futures::TryStreamExt;
use scylla::client::session::Session;
use scylla::statement::Consistency;
use scylla::statement::unprepared::Statement;

use super::{Chunk, Exchange, ExchangeError, FILES_TABLE, POLL, STEPS_TABLE, StepRow, StepState};
use crate::load::session::ConnectSpec;

/// Rows of [`FILES_TABLE`] per page: a few chunks of at most 1 MiB.
const FILES_PAGE: i32 = 4;

/// A row of [`FILES_TABLE`]: shard, name, chunk, chunks, data.
type FileRow = (i64, String, i32, i32, Vec<u8>);

pub struct CqlExchange {
    rt: tokio::runtime::Runtime,
    session: Arc<Session>,
    keyspace: String,
    /// How long [`Exchange::prepare`] waits for the keyspace (made by the first step's shard 0).
    keyspace_wait: Duration,
    /// The steps table was seen in the schema and given time to open (see [`Self::settled`]).
    settled: std::sync::atomic::AtomicBool,
}

fn query(doing: impl Into<String>) -> impl FnOnce(String) -> ExchangeError {
    let doing = doing.into();
    move |error| ExchangeError::Query { doing, error }
}

/// A row of the steps table as read: step, level, step_run, state.
type StepsRow = (i32, Option<String>, Option<String>, Option<String>);

fn statement(cql: String) -> Statement {
    let mut st = Statement::new(cql);
    st.set_consistency(Consistency::Quorum);
    st
}

impl CqlExchange {
    /// Connects to the run's cluster; the exchange's tables are in `keyspace`.
    pub fn connect(
        spec: &ConnectSpec,
        keyspace: &str,
        keyspace_wait: Duration,
    ) -> Result<CqlExchange, ExchangeError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| query("starting the client runtime")(e.to_string()))?;
        let session = rt.block_on(crate::load::session::connect(spec))?;
        Ok(CqlExchange {
            rt,
            session,
            keyspace: keyspace.to_string(),
            keyspace_wait,
            settled: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// The rows of one unpaged `SELECT`; an error says what was being done (`doing`).
    fn select<R>(
        &self,
        st: Statement,
        values: impl scylla::serialize::row::SerializeRow,
        doing: impl Fn() -> String,
    ) -> Result<Vec<R>, ExchangeError>
    where
        R: for<'f> scylla::deserialize::row::DeserializeRow<'f, 'f>,
    {
        self.rt
            .block_on(self.session.query_unpaged(st, values))
            .map_err(|e| e.to_string())
            .and_then(|r| r.into_rows_result().map_err(|e| e.to_string()))
            .and_then(|r| {
                r.rows::<R>()
                    .map_err(|e| e.to_string())?
                    .collect::<Result<Vec<R>, _>>()
                    .map_err(|e| e.to_string())
            })
            .map_err(|e| query(doing())(e))
    }

    /// Whether the steps table may be read: once it shows in `system_schema.tables`, after
    /// schema agreement and a second. A follower that read it while the coordinator was creating
    /// it caught the node between the table's schema row and its store being opened ("Unknown
    /// CF", an ERROR in the server's log), as the shards' barrier table did
    /// ([`crate::load::barrier::wait_for_table`]).
    async fn settled(&self) -> bool {
        use std::sync::atomic::Ordering;
        if self.settled.load(Ordering::Relaxed) {
            return true;
        }
        let found = self
            .session
            .query_unpaged(
                "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?",
                (self.keyspace.as_str(), STEPS_TABLE),
            )
            .await
            .ok()
            .and_then(|r| r.into_rows_result().ok())
            .is_some_and(|r| r.rows_num() > 0);
        if found {
            let _ = self.session.await_schema_agreement().await;
            tokio::time::sleep(Duration::from_secs(1)).await;
            self.settled.store(true, Ordering::Relaxed);
        }
        found
    }

    async fn keyspace_exists(&self) -> bool {
        self.session
            .query_unpaged(
                "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?",
                (self.keyspace.as_str(),),
            )
            .await
            .ok()
            .and_then(|r| r.into_rows_result().ok())
            .is_some_and(|r| r.rows_num() > 0)
    }

    async fn prepare_async(&self, stop: &dyn Fn() -> bool) -> Result<(), ExchangeError> {
        let ks = &self.keyspace;
        let deadline = tokio::time::Instant::now() + self.keyspace_wait;
        while !self.keyspace_exists().await {
            if stop() {
                return Err(ExchangeError::Interrupted);
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(ExchangeError::Query {
                    doing: format!(
                        "waiting for keyspace {ks} (created by the first step's shard 0)"
                    ),
                    error: format!(
                        "not there after {}",
                        humantime::format_duration(self.keyspace_wait)
                    ),
                });
            }
            tokio::time::sleep(POLL).await;
        }
        for cql in [
            format!(
                "CREATE TABLE IF NOT EXISTS {ks}.{STEPS_TABLE} (run text, step int, level text, \
                 step_run text, state text, PRIMARY KEY (run, step))"
            ),
            format!(
                "CREATE TABLE IF NOT EXISTS {ks}.{FILES_TABLE} (step_run text, shard bigint, \
                 name text, chunk int, chunks int, data blob, \
                 PRIMARY KEY ((step_run), shard, name, chunk))"
            ),
        ] {
            self.session.query_unpaged(cql, &[]).await.map_err(|e| {
                query(format!("creating the exchange tables in {ks}"))(e.to_string())
            })?;
        }
        self.session
            .await_schema_agreement()
            .await
            .map_err(|e| query("waiting for schema agreement")(e.to_string()))?;
        Ok(())
    }
}

impl Exchange for CqlExchange {
    fn prepare(&self, stop: &dyn Fn() -> bool) -> Result<(), ExchangeError> {
        self.rt.block_on(self.prepare_async(stop))
    }

    fn publish(&self, run: &str, row: &StepRow) -> Result<(), ExchangeError> {
        let st = statement(format!(
            "INSERT INTO {}.{STEPS_TABLE} (run, step, level, step_run, state) VALUES (?, ?, ?, ?, ?)",
            self.keyspace
        ));
        let values = (
            run,
            row.step as i32,
            row.level.as_str(),
            row.step_run.as_str(),
            row.state.as_str(),
        );
        self.rt
            .block_on(self.session.query_unpaged(st, values))
            .map(drop)
            .map_err(|e| {
                query(format!(
                    "publishing step {} of run {run} ({})",
                    row.step,
                    row.state.as_str()
                ))(e.to_string())
            })
    }

    fn steps(&self, run: &str) -> Result<Vec<StepRow>, ExchangeError> {
        // Not created yet (or not yet open): nothing is published.
        if !self.rt.block_on(self.settled()) {
            return Ok(Vec::new());
        }
        let st = statement(format!(
            "SELECT step, level, step_run, state FROM {}.{STEPS_TABLE} WHERE run = ?",
            self.keyspace
        ));
        let rows: Vec<StepsRow> =
            self.select(st, (run,), || format!("reading the steps of run {run}"))?;
        Ok(rows
            .into_iter()
            .filter_map(|(step, level, step_run, state)| {
                Some(StepRow {
                    step: usize::try_from(step).ok()?,
                    level: level.unwrap_or_default(),
                    step_run: step_run.unwrap_or_default(),
                    state: StepState::parse(state.as_deref()?)?,
                })
            })
            .collect())
    }

    fn upload(&self, step_run: &str, c: &Chunk) -> Result<(), ExchangeError> {
        let st = statement(format!(
            "INSERT INTO {}.{FILES_TABLE} (step_run, shard, name, chunk, chunks, data) \
             VALUES (?, ?, ?, ?, ?, ?)",
            self.keyspace
        ));
        let values = (
            step_run,
            c.shard as i64,
            c.name.as_str(),
            c.chunk as i32,
            c.chunks as i32,
            c.data.as_slice(),
        );
        self.rt
            .block_on(self.session.query_unpaged(st, values))
            .map(drop)
            .map_err(|e| {
                query(format!(
                    "uploading shard {}'s {} of {step_run} (chunk {} of {})",
                    c.shard,
                    c.name,
                    c.chunk + 1,
                    c.chunks
                ))(e.to_string())
            })
    }

    fn chunks(&self, step_run: &str) -> Result<Vec<Chunk>, ExchangeError> {
        let mut st = statement(format!(
            "SELECT shard, name, chunk, chunks, data FROM {}.{FILES_TABLE} WHERE step_run = ?",
            self.keyspace
        ));
        st.set_page_size(FILES_PAGE);
        let failed = |e: &dyn std::fmt::Display| {
            query(format!("reading the shards' files of {step_run}"))(e.to_string())
        };
        let rows: Vec<FileRow> = self.rt.block_on(async {
            let pager = self
                .session
                .query_iter(st, (step_run,))
                .await
                .map_err(|e| failed(&e))?;
            pager
                .rows_stream::<FileRow>()
                .map_err(|e| failed(&e))?
                .try_collect()
                .await
                .map_err(|e| failed(&e))
        })?;
        Ok(rows
            .into_iter()
            .map(|(shard, name, chunk, chunks, data)| Chunk {
                shard: shard.max(0) as u64,
                name,
                chunk: chunk.max(0) as u32,
                chunks: chunks.max(0) as u32,
                data,
            })
            .collect())
    }

    fn listed(&self, step_run: &str) -> Result<Vec<Chunk>, ExchangeError> {
        let st = statement(format!(
            "SELECT shard, name, chunk, chunks FROM {}.{FILES_TABLE} WHERE step_run = ?",
            self.keyspace
        ));
        let rows: Vec<(i64, String, i32, i32)> = self.select(st, (step_run,), || {
            format!("listing the shards' files of {step_run}")
        })?;
        Ok(rows
            .into_iter()
            .map(|(shard, name, chunk, chunks)| Chunk {
                shard: shard.max(0) as u64,
                name,
                chunk: chunk.max(0) as u32,
                chunks: chunks.max(0) as u32,
                data: Vec::new(),
            })
            .collect())
    }
}
