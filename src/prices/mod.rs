//! The price catalogue: the facts pricing is made of, low enough for the layers that need them
//! (local clusters price their emulated disks, Kubernetes manifests name the clouds' disk
//! types). Pricing and planning over results are `cost`, high in the order.
//!
//! - [`catalog`]: the data model of a price catalogue; [`load`] reads and validates one.
//! - [`disk`]: the providers' disk formulas (size-indexed IOPS and MB/s, provisioned IOPS).
//! - [`units`]: the values a price is asked for in (data size, disk, headroom, pricing model).

pub mod catalog;
pub mod disk;
mod error;
pub mod load;
pub mod units;

pub use catalog::Catalog;
pub use error::PriceError;
pub use load::{default_catalog, load_catalog, parse_catalog};
pub use units::{DataSize, DiskSpec, Headroom, Pricing};
