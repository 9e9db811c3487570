//! Persisted, versioned specs: what the command line builds and the core takes.

pub mod client;
pub mod cluster;
pub mod fault;
pub mod keys;
pub mod lab;
pub mod load;
pub mod probe;
pub mod ssh;
pub mod storage;
pub mod units;
pub mod workload;

pub use cluster::{CassandraSource, ClusterSpec, DcSpec, Gc, JvmSpec};
pub use keys::KeyDist;
pub use load::{Cycles, LoadMode, LoadSpec, Stop};
pub use units::{MiB, parse_duration};
pub use workload::{Cl, OpKind, Ratio, WorkloadKind, WorkloadSpec};
