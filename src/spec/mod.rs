//! Persisted, versioned specs: what the command line builds and the core takes.

pub mod cluster;
pub mod units;

pub use cluster::{CassandraSource, ClusterSpec, DcSpec, Gc, JvmSpec};
pub use units::{MiB, parse_duration};
