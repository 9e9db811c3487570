//! Scraping nodes' metrics endpoints: one, or all at once; why a scrape gave no reading; the
//! highest pending compactions of the answers.

use std::time::Duration;

use super::names::NAMES;
use super::prometheus;
use super::reading::{NodeReading, reading};
use super::sampler::{Endpoint, MetricsPlan};

/// Why a scrape gave no reading.
#[derive(Debug, Clone, PartialEq)]
pub struct ScrapeError {
    /// e.g. "node2: 127.0.0.2:7302: no answer within 5.0s".
    pub message: String,
    /// The node refused the connection: nothing listens there (the node is down).
    pub refused: bool,
}

impl std::fmt::Display for ScrapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The metric families [`NAMES`] belong to, for the exporter's `name[]` filter: a scrape
/// then carries the dozen series the sampler reads instead of ~1,000 lines. A server that
/// ignores the filter still answers in full.
fn name_filter() -> String {
    let mut families: Vec<&str> = Vec::new();
    for n in NAMES {
        for f in [
            *n,
            n.strip_suffix("_total").unwrap_or(n),
            n.strip_suffix("_sum").unwrap_or(n),
        ] {
            if !families.contains(&f) {
                families.push(f);
            }
        }
    }
    families
        .iter()
        .map(|f| format!("name[]={f}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// Scrapes one endpoint.
pub fn scrape_node(e: &Endpoint, timeout: Duration) -> Result<NodeReading, ScrapeError> {
    let path = format!("/metrics?{}", name_filter());
    let text =
        prometheus::scrape_path(&e.host, e.port, &path, timeout).map_err(|err| ScrapeError {
            message: format!("{}: {}:{}: {err}", e.node, e.host, e.port),
            refused: matches!(err, prometheus::FetchError::Refused),
        })?;
    Ok(reading(&prometheus::parse_named(&text, NAMES)))
}

/// Reads a node's figures by some other means than scraping its endpoint: its virtual tables
/// through CQL (the load layer's reader, over the driver), or a Prometheus server's latest
/// samples of it.
pub trait NodeReader: Send + Sync {
    /// The reading of the node at `host` (its address, as the plan's endpoint names it).
    fn read(&self, host: &str, timeout: Duration) -> Result<NodeReading, ScrapeError>;
}

/// The reader a metrics plan's nodes are read through, when not by their endpoints.
#[derive(Clone)]
pub struct NodeSource(pub std::sync::Arc<dyn NodeReader>);

impl std::fmt::Debug for NodeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NodeSource")
    }
}

impl PartialEq for NodeSource {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Reads one node: through its plan's reader when it has one (CQL, a Prometheus server),
/// else by scraping its endpoint.
pub fn read_node(
    e: &Endpoint,
    reader: Option<&NodeSource>,
    timeout: Duration,
) -> Result<NodeReading, ScrapeError> {
    match reader {
        Some(r) => r.0.read(&e.host, timeout),
        None => scrape_node(e, timeout),
    }
}

/// Reads every node of the plan at once (one thread each).
pub fn scrape_all(plan: &MetricsPlan, timeout: Duration) -> Vec<Result<NodeReading, ScrapeError>> {
    let reader = plan.reader.as_ref();
    std::thread::scope(|s| {
        let handles: Vec<_> = plan
            .endpoints
            .iter()
            .map(|e| s.spawn(move || read_node(e, reader, timeout)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(ScrapeError {
                        message: "scrape panicked".into(),
                        refused: false,
                    })
                })
            })
            .collect()
    })
}

/// Highest pending compactions over the nodes that answered; `None` when none did.
pub fn max_pending(readings: &[Result<NodeReading, ScrapeError>]) -> Option<f64> {
    readings
        .iter()
        .filter_map(|r| r.as_ref().ok().and_then(|r| r.pending_compactions))
        .reduce(f64::max)
}

/// Why a figure could not be measured, e.g. "node1: 127.0.0.1:7301: no answer within 5.0s".
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct NotMeasured(pub String);

/// Highest pending compactions over every node, or why it could not be read: a node that did
/// not answer may be the one with the most, so any missing node makes the figure unknown.
pub fn max_pending_of_all(
    readings: &[Result<NodeReading, ScrapeError>],
) -> Result<f64, NotMeasured> {
    let mut max: Option<f64> = None;
    for r in readings {
        let r = r.as_ref().map_err(|e| NotMeasured(e.message.clone()))?;
        let p = r.pending_compactions.ok_or_else(|| {
            NotMeasured("a node's endpoint exports no pending compactions".into())
        })?;
        max = Some(max.map_or(p, |m: f64| m.max(p)));
    }
    max.ok_or_else(|| NotMeasured("no metrics endpoint to read pending compactions from".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_filter_asks_for_every_family_read() {
        let f = name_filter();
        for n in [
            "name[]=org_apache_cassandra_metrics_compaction_value",
            "name[]=process_cpu_seconds_total",
            "name[]=process_cpu_seconds&",
            "name[]=jvm_gc_collection_seconds&",
        ] {
            assert!(f.contains(n), "{n} in {f}");
        }
        // Each name, and the family of each `_total` and `_sum` one.
        let suffixed = NAMES
            .iter()
            .filter(|n| n.ends_with("_total") || n.ends_with("_sum"))
            .count();
        assert_eq!(f.matches("name[]=").count(), NAMES.len() + suffixed);
    }

    #[test]
    fn a_scrape_of_a_closed_port_says_refused() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let e = Endpoint {
            node: "node9".into(),
            host: "127.0.0.1".into(),
            port,
        };
        let err = scrape_node(&e, Duration::from_secs(1)).unwrap_err();
        assert!(err.refused, "{err}");
        assert!(err.message.starts_with("node9: 127.0.0.1:"), "{err}");
    }
}
