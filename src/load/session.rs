//! Connecting to a cluster: token- and DC-aware routing, the client timeout, credentials.

use std::sync::Arc;
use std::time::Duration;

use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::policies::load_balancing::DefaultPolicy;

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
}

/// The contact points could not be reached (or refused the credentials).
#[derive(Debug, thiserror::Error)]
#[error("cannot connect to {hosts}: {message}")]
pub struct ConnectError {
    pub hosts: String,
    pub message: String,
}

/// Connects with a token-aware policy preferring `local_dc` (no failover to other DCs).
pub async fn connect(spec: &ConnectSpec) -> Result<Arc<Session>, ConnectError> {
    let mut policy = DefaultPolicy::builder().token_aware(true);
    if let Some(dc) = &spec.local_dc {
        policy = policy
            .prefer_datacenter(dc.clone())
            .permit_dc_failover(false);
    }
    let profile = ExecutionProfile::builder()
        .load_balancing_policy(policy.build())
        .request_timeout(Some(spec.timeout))
        .build();
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
    let mut b = SessionBuilder::new()
        .known_nodes(&hosts)
        .default_execution_profile_handle(profile.into_handle())
        .connection_timeout(Duration::from_secs(5));
    if let Some(c) = &spec.credentials {
        b = b.user(&c.username, &c.password);
    }
    let session = b.build().await.map_err(|e| ConnectError {
        hosts: hosts.join(","),
        message: e.to_string(),
    })?;
    Ok(Arc::new(session))
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

/// The data centre of the node answering.
pub async fn local_dc(session: &Session) -> Option<String> {
    system_local_text(session, "data_center").await
}

/// One text column of `system.local` (a fixed name, never user input).
async fn system_local_text(session: &Session, column: &'static str) -> Option<String> {
    let r = session
        .query_unpaged(format!("SELECT {column} FROM system.local"), &[])
        .await
        .ok()?;
    r.into_rows_result()
        .ok()?
        .maybe_first_row::<(String,)>()
        .ok()?
        .map(|r| r.0)
}
