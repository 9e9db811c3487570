//! `metrics check`: what a cluster's metric sources serve, read now, and so what a capacity
//! search and a fill could measure there.

use std::time::Duration;

use super::run::Reach;
use crate::load::session::ConnectSpec;
use crate::metrics::check::{MetricsCheck, NodeCheck, check};
use crate::scenario::{Context, ScenarioError};
use crate::spec::client::ClientSpec;

/// The recent window a Prometheus server is asked about (a few of its scrape intervals).
const SERVER_WINDOW_S: f64 = 120.0;

/// Reads every source `reach` names (the metrics endpoints, the local nodes' processes, the
/// node exporters and a Prometheus server's recent window), each within `timeout`.
pub fn run(reach: &Reach, ctx: &Context, timeout: Duration) -> Result<MetricsCheck, ScenarioError> {
    let target = reach.target(ctx)?;
    let plan = target.metrics_plan(1.0);
    // No endpoint given: the nodes' own virtual tables, over a session like a run's.
    let connect = ConnectSpec {
        hosts: target.contact_points(),
        local_dc: target.local_dc(),
        timeout: timeout.max(Duration::from_secs(1)),
        credentials: ctx.credentials.clone(),
        client: ClientSpec {
            tls: target.cluster_tls(),
            ..ClientSpec::default()
        },
    };
    let (plan, unreached, cql_error) =
        match crate::load::server_views::attach_listing(&plan, &connect) {
            Ok((p, unreached)) => (p, unreached, None),
            Err(e) => (plan, Vec::new(), Some(e.to_string())),
        };
    let mut found = check(&plan, timeout);
    found.cql_error = cql_error;
    // The nodes the session knows but did not reach: read by nothing, and said so.
    found.nodes.extend(unreached.iter().map(|a| NodeCheck {
        node: a.ip().to_string(),
        source: format!("{a} (CQL)"),
        error: Some(format!(
            "{a}: not reached over CQL within a few seconds (down, or out of this client's reach): left out of the nodes a capacity search and a fill read"
        )),
        figures: crate::metrics::check::Figure::ALL
            .iter()
            .map(|f| (*f, None))
            .collect(),
    }));
    if let Some(mut spec) = reach.prometheus_fetch(ctx, 15.0)? {
        let now = crate::host::unix_now();
        spec.start_unix_s = now - SERVER_WINDOW_S;
        spec.end_unix_s = now;
        spec.t0_unix_s = spec.start_unix_s;
        spec.timeout = timeout.max(Duration::from_secs(1));
        match crate::metrics::prometheus_server::fetch(&spec) {
            Ok(f) => found.nodes.extend(crate::metrics::check::from_server(&f)),
            Err(e) => found.server_error = Some(e.to_string()),
        }
    }
    Ok(found)
}
