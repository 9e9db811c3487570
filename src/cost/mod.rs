//! Pricing and planning over results: a cluster's monthly cost, $ per 1,000 ops/s, the
//! hardware a throughput was measured on, candidate clusters. The facts they are made of
//! (instances, disks, their formulas) are the price catalogue, `prices`, low in the order.
//!
//! - [`price`]: a cluster's monthly cost with its breakdown, and $ per 1,000 ops/s.
//! - [`measured`]: the hardware a priced throughput was measured on, against the instance.
//! - [`probe_check`]: measured disk figures flagged against a disk's limits.
//! - [`plan`]: candidate clusters for a target throughput and data size, ranked by cost.
//! - [`throughput`]: the throughput a cost is expressed against, given or measured.
//! - [`render`]: the text shown by `cqlbench cost` and `cqlbench plan`.

mod error;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixture;
pub mod measured;
pub mod plan;
pub mod price;
pub mod probe_check;
pub mod throughput;

pub use error::CostError;
pub use measured::Hardware;
pub use price::{CloudCluster, CostBreakdown, cost_per_1k_ops_usd, price_cluster};
