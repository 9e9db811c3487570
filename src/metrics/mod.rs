//! Server and host metrics during a run: Prometheus endpoints (the JMX exporter of local
//! nodes, or any endpoint a user names), /proc for the host, one sampler thread, and the
//! series stored in the run result.

pub mod assemble;
pub mod procfs;
pub mod prometheus;
pub mod sampler;
