//! Scenarios: the methodologies of the reference articles as single commands — throughput,
//! latency, capacity search with overload criteria, fill — and scenario files chaining them.

pub mod capacity;
pub mod capacity_result;
pub mod file;
pub mod fill;
