//! The capacity search as a pure policy over its persisted records: the next step's level
//! ([`policy`]) and each step's overload checks ([`criteria`]). The loop that settles the
//! nodes, runs the steps and writes the result is `scenario::capacity`; the records are
//! `result::capacity`'s.

pub mod criteria;
pub mod policy;

pub use policy::Level;
