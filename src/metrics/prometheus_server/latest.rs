//! The nodes' latest figures from a Prometheus server, read while a capacity search or a fill
//! runs (its settles, its reads after each step, a fill's target, each step's sampler): one
//! instant query per reading of every dialect's names on the node's Cassandra instance, the
//! newest sample the server holds of each, turned into a [`NodeReading`] like a direct
//! scrape's. Gauges (pending compactions, load) are as fresh as the server's last scrape of the
//! node; a counter's rate between two readings moves only when the server scraped in between,
//! so rates (node CPU) need a scrape interval well below a step's length.

use std::time::Duration;

use super::{
    FetchError, FetchSpec, Mapped, Seen, any_of, api, cassandra_names, client, instances_with,
    map_nodes,
};
use crate::metrics::names::NAMES;
use crate::metrics::prometheus::Sample as Line;
use crate::metrics::reading::{NodeReading, reading};
use crate::metrics::scrape::{NodeReader, ScrapeError};

/// How far back the server is asked which instances it scrapes.
const SEEN_WINDOW_S: i64 = 300;

/// Reads nodes' latest figures from a server.
pub struct Latest {
    client: api::Client,
    url: String,
    /// Each node's address (as its endpoint names it) and its Cassandra instance.
    instances: Vec<(String, String)>,
}

impl Latest {
    /// Maps `spec.nodes` (name, address) to the Cassandra instances the server scraped in the
    /// last five minutes (or those `spec.instances` gives): the reader, and the nodes mapped.
    /// An error when the server does not answer or has no instance for any node.
    pub fn connect(spec: &FetchSpec) -> Result<(Latest, Vec<Mapped>), FetchError> {
        let client = client(spec);
        let now = crate::host::unix_now().ceil() as i64;
        let seen = Seen {
            hosts: Vec::new(),
            nodes: instances_with(&client, spec, &cassandra_names(), (SEEN_WINDOW_S, now))?,
        };
        let (_, nodes, _) = map_nodes(&spec.instances, &spec.nodes, &seen);
        if nodes.is_empty() {
            return Err(FetchError::NoneMapped {
                url: spec.server.url.clone(),
                nodes: spec
                    .nodes
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                seen: if seen.nodes.is_empty() {
                    "none".into()
                } else {
                    let all: Vec<String> = seen
                        .nodes
                        .iter()
                        .map(|(i, j)| format!("{i} (job {j}, Cassandra)"))
                        .collect();
                    all.join(", ")
                },
            });
        }
        let address = |name: &str| {
            spec.nodes
                .iter()
                .find(|(n, _)| n == name)
                .map_or(name.to_string(), |(_, a)| a.clone())
        };
        let instances = nodes
            .iter()
            .map(|m| (address(&m.node), m.instance.clone()))
            .collect();
        Ok((
            Latest {
                client,
                url: spec.server.url.clone(),
                instances,
            },
            nodes,
        ))
    }
}

impl NodeReader for Latest {
    fn read(&self, host: &str, _timeout: Duration) -> Result<NodeReading, ScrapeError> {
        let fail = |what: String| ScrapeError {
            message: format!("{host}: Prometheus server {}: {what}", self.url),
            refused: false,
        };
        let instance = self
            .instances
            .iter()
            .find(|(a, _)| a == host)
            .map(|(_, i)| i.as_str())
            .ok_or_else(|| fail("no instance for this node".into()))?;
        // One selector of every name: joined with `or`, series that differ only in their name
        // (process CPU seconds and the JVM's CPU share, both of the instance alone) would
        // match one another, and all but the first would be dropped.
        let query = format!(
            "{{__name__=~\"{}\",instance=\"{instance}\"}}",
            any_of(NAMES)
        );
        let now = crate::host::unix_now().floor() as i64;
        let found = self
            .client
            .query_values(&query, now)
            .map_err(|e| fail(e.to_string()))?;
        if found.is_empty() {
            return Err(fail(format!("no series of instance {instance} now")));
        }
        let lines: Vec<Line> = found
            .into_iter()
            .map(|(mut labels, value)| Line {
                name: labels.remove("__name__").unwrap_or_default(),
                labels: labels.into_iter().collect(),
                value,
            })
            .collect();
        Ok(reading(&lines))
    }
}
