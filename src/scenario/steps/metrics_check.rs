//! `metrics check`: what a cluster's metric sources serve, read now, and so what a capacity
//! search and a fill could measure there.

use std::time::Duration;

use super::run::Reach;
use crate::metrics::check::{MetricsCheck, check};
use crate::scenario::{Context, ScenarioError};

/// The recent window a Prometheus server is asked about (a few of its scrape intervals).
const SERVER_WINDOW_S: f64 = 120.0;

/// Reads every source `reach` names (the metrics endpoints, the local nodes' processes, the
/// node exporters and a Prometheus server's recent window), each within `timeout`.
pub fn run(reach: &Reach, ctx: &Context, timeout: Duration) -> Result<MetricsCheck, ScenarioError> {
    let target = reach.target(ctx)?;
    let plan = target.metrics_plan(1.0);
    let mut found = check(&plan, timeout);
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
