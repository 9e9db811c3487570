//! Server and host metrics during a run: Prometheus endpoints (the JMX exporter of local
//! nodes, or any endpoint a user names), /proc for the host, node exporters for remote nodes'
//! hosts, one sampler thread, and the series stored in the run result.
//!
//! - [`names`]: the metric names each figure is read from, in every exporter's dialect.
//! - [`cql`]: the figures Cassandra 4.0+ serves as `system_views` tables, read through CQL.
//! - [`reading`]: a node's figures from one scrape, and its sample from two.
//! - [`scrape`]: scraping nodes' endpoints, and why a scrape gave no reading.
//! - [`node_exporter`]: a remote node's host from its node exporter, as /proc's counters.
//! - [`prometheus_server`]: the nodes' hosts' figures fetched after a run from a Prometheus
//!   server that scraped their node exporters (range queries of the same counters).
//! - [`sampler`]: the thread that samples a run: /proc, scrapes, the series.
//! - [`assemble`]: scrape answers, however late, into the samples of their ticks.

pub mod assemble;
pub mod check;
pub mod cql;
pub mod names;
pub mod node_exporter;
pub mod procfs;
pub mod prometheus;
pub mod prometheus_server;
pub mod reading;
pub mod sampler;
pub mod scrape;
