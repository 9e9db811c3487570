//! Price catalogue, pricing formulas and the cluster planner.
//!
//! - [`catalog`]: the data model of a price catalogue; [`load`] reads and validates one.
//! - [`disk`]: the providers' disk formulas (size-indexed IOPS and MB/s, provisioned IOPS).
//! - [`price`]: a cluster's monthly cost with its breakdown, and $ per 1,000 ops/s.
//! - [`measured`]: the hardware a priced throughput was measured on, against the instance.
//! - [`probe_check`]: measured disk figures flagged against a disk's limits.
//! - [`plan`]: candidate clusters for a target throughput and data size, ranked by cost.
//! - [`throughput`]: the throughput a cost is expressed against, given or measured.
//! - [`render`]: the text shown by `cqlbench cost` and `cqlbench plan`.

pub mod catalog;
pub mod disk;
mod error;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixture;
pub mod load;
pub mod measured;
pub mod plan;
pub mod price;
pub mod probe_check;
pub mod render;
pub mod throughput;
pub mod units;

pub use catalog::Catalog;
pub use error::CostError;
pub use load::{default_catalog, load_catalog, parse_catalog};
pub use measured::Hardware;
pub use price::{CloudCluster, CostBreakdown, cost_per_1k_ops_usd, price_cluster};
pub use units::{DataSize, DiskSpec, Headroom, Pricing};
