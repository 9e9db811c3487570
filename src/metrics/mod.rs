//! Server and host samplers. For now: reading Prometheus endpoints (the JMX exporter of
//! local nodes, or any endpoint a user names).

pub mod prometheus;
pub mod series;
