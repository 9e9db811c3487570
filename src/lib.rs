//! cqlbench: benchmarking and capacity planning for Apache Cassandra deployments.
//!
//! The library holds every capability; the binary in `main.rs` is a thin shell over [`cli`].
//! Data flows one way, as described in DESIGN.md: specs → cluster → load → stats/metrics →
//! results → report/cost.

pub mod cli;
pub mod cluster;
pub mod cost;
pub mod error;
pub mod fault;
pub mod format;
pub mod fsutil;
pub mod host;
pub mod interrupt;
pub mod k8s;
pub mod load;
pub mod metrics;
pub mod probe;
pub mod report;
pub mod result;
pub mod scenario;
pub mod shards;
pub mod spec;
pub mod stats;
pub mod target;
pub mod verify;
pub mod workload;

#[cfg(test)]
pub(crate) mod testutil;
