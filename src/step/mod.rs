//! Steps as typed input. One type per step is at once the command line (`clap::Args`, flags),
//! the scenario-file step (`serde`, keys named as the flags, unknown keys refused, values read
//! by the flags' own parsers: [`de`]) and what a loader process or pod is sent ([`order`]).
//! They sit below the layers that ship them (shards, k8s), so a child is given a typed,
//! versioned document, not a command line; [`argv`] still turns a step into the command a
//! person can paste.

pub mod argv;
pub mod capacity;
pub mod de;
pub mod fill;
pub mod order;
pub mod run;

pub use capacity::{CapacitySearch, CapacityStep};
pub use fill::{FillOptions, FillStep};
pub use run::RunStep;
