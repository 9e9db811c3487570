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
pub mod probe;
pub mod run;

pub use capacity::{CapacitySearch, CapacityStep};
pub use fill::{FillOptions, FillStep};
pub use probe::ProbeStep;
pub use run::RunStep;

/// `args` read by the parser of the command `name` whose options are `T` (what follows
/// `cqlbench NAME`); a refusal is clap's first line, e.g. `unexpected argument '--rat' found`.
pub fn parse_args<T: clap::Args + clap::FromArgMatches>(
    name: &'static str,
    args: &[String],
) -> Result<T, crate::error::Invalid> {
    let cmd = T::augment_args(clap::Command::new(name).no_binary_name(true));
    let matches = cmd.try_get_matches_from(args).map_err(|e| {
        let text = e.to_string();
        let first = text
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("error: ");
        crate::invalid!("{first}")
    })?;
    T::from_arg_matches(&matches).map_err(|e| crate::invalid!("{e}"))
}
