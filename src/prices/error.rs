//! The error type of the price catalogue.

/// Everything that can go wrong while loading a catalogue, parsing a price's input or asking
/// the catalogue for a disk or a price. Each variant names the input (file, entry, field,
/// disk) so the CLI can print it on one line.
#[derive(Debug, thiserror::Error)]
pub enum PriceError {
    /// A catalogue entry has a missing, unknown or malformed field.
    #[error("{file}: {entry}: field \"{field}\": {problem}")]
    CatalogField {
        file: String,
        entry: String,
        field: String,
        problem: String,
    },
    /// The catalogue file as a whole is unreadable (YAML syntax, missing section, duplicates).
    #[error("{file}: {problem}")]
    CatalogFile { file: String, problem: String },
    /// A name that the catalogue does not hold.
    #[error("no {kind} \"{name}\" in the catalogue (known: {known})")]
    Unknown {
        kind: &'static str,
        name: String,
        known: String,
    },
    /// A value given on the command line that does not parse.
    #[error("invalid {what} \"{input}\": expected {expected}")]
    Parse {
        what: &'static str,
        input: String,
        expected: &'static str,
    },
    /// A disk request outside what the disk type allows.
    #[error("disk {disk}: {problem}")]
    DiskLimit { disk: String, problem: String },
    /// The catalogue has no price for the requested pricing model.
    #[error("instance \"{instance}\": no {term} reserved price in the catalogue")]
    NoReservedPrice { instance: String, term: String },
}

impl PriceError {
    pub(crate) fn parse(what: &'static str, input: &str, expected: &'static str) -> Self {
        PriceError::Parse {
            what,
            input: input.to_string(),
            expected,
        }
    }

    pub(crate) fn disk(disk: &str, problem: impl Into<String>) -> Self {
        PriceError::DiskLimit {
            disk: disk.to_string(),
            problem: problem.into(),
        }
    }
}
