//! One reader for every result cqlbench writes — run, capacity-search and probe results —
//! with one typed error that names the file and what is wrong with it. Each kind is told apart
//! by its top-level keys and checked against the layout version this cqlbench reads.

use std::path::{Path, PathBuf};

use super::capacity::{CAPACITY_VERSION, CapacityResult};
use super::scaling::{SCALING_VERSION, ScalingResult};
use super::verify::VerifyResult;
use super::{RESULT_VERSION, RunResult};
use crate::result::probe::ProbeResult;

/// What a result file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Run,
    Capacity,
    Probe,
    Verify,
    Scaling,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Capacity => "capacity-search",
            Kind::Probe => "probe",
            Kind::Verify => "verify",
            Kind::Scaling => "scaling",
        }
    }

    /// The layout version of this kind that this cqlbench reads and writes.
    pub fn version(self) -> u32 {
        match self {
            Kind::Run => RESULT_VERSION,
            Kind::Capacity => CAPACITY_VERSION,
            Kind::Probe => crate::result::probe::SCHEMA_VERSION,
            Kind::Verify => super::verify::VERIFY_VERSION,
            Kind::Scaling => SCALING_VERSION,
        }
    }

    /// The kind a document's top-level keys say it is.
    fn of(v: &serde_json::Value) -> Option<Kind> {
        if v.get("kind").and_then(|k| k.as_str()) == Some("capacity") {
            Some(Kind::Capacity)
        } else if v.get("kind").and_then(|k| k.as_str()) == Some("verify") {
            Some(Kind::Verify)
        } else if v.get("kind").and_then(|k| k.as_str()) == Some("scaling") {
            Some(Kind::Scaling)
        } else if v.get("phases").is_some() {
            Some(Kind::Run)
        } else if v.get("profiles").is_some() {
            Some(Kind::Probe)
        } else {
            None
        }
    }
}

/// Why a result file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ResultError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{}: a directory, not a result file (name the result files in it, e.g. {}/*.json)",
        path.display(),
        path.display()
    )]
    Directory { path: PathBuf },
    #[error("{}: not JSON: {message}", path.display())]
    NotJson { path: PathBuf, message: String },
    #[error(
        "{}: neither a run result (no \"phases\"), a capacity, scaling or verify result (no \"kind\": \"capacity\", \"scaling\" or \"verify\") nor a probe result (no \"profiles\")",
        path.display()
    )]
    Unrecognised { path: PathBuf },
    #[error("{}: a {} result, not a {} result", path.display(), found.name(), wanted.name())]
    WrongKind {
        path: PathBuf,
        found: Kind,
        wanted: Kind,
    },
    #[error("{}: not a cqlbench result (it has no schema_version)", path.display())]
    NoVersion { path: PathBuf },
    #[error(
        "{}: written by another cqlbench (layout version {found}; this one reads {reads})",
        path.display()
    )]
    Version {
        path: PathBuf,
        found: u64,
        reads: u32,
    },
    #[error("{}: not a valid {} result: {message}", path.display(), kind.name())]
    Invalid {
        path: PathBuf,
        kind: Kind,
        message: String,
    },
}

/// One result file, read.
#[derive(Debug, Clone)]
#[allow(
    clippy::large_enum_variant,
    reason = "one per file a user names; boxing would only add noise"
)]
pub enum ResultFile {
    Run(RunResult),
    Capacity(CapacityResult),
    Probe(ProbeResult),
    Verify(VerifyResult),
    Scaling(ScalingResult),
}

impl ResultFile {
    pub fn kind(&self) -> Kind {
        match self {
            ResultFile::Run(_) => Kind::Run,
            ResultFile::Capacity(_) => Kind::Capacity,
            ResultFile::Probe(_) => Kind::Probe,
            ResultFile::Verify(_) => Kind::Verify,
            ResultFile::Scaling(_) => Kind::Scaling,
        }
    }
}

/// Reads the JSON document and tells its kind (checking the version).
fn document(path: &Path) -> Result<(Kind, serde_json::Value), ResultError> {
    if path.is_dir() {
        return Err(ResultError::Directory {
            path: path.to_path_buf(),
        });
    }
    let text = std::fs::read_to_string(path).map_err(|source| ResultError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| ResultError::NotJson {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let kind = Kind::of(&v).ok_or_else(|| ResultError::Unrecognised {
        path: path.to_path_buf(),
    })?;
    match v.get("schema_version").and_then(|s| s.as_u64()) {
        Some(n) if n == u64::from(kind.version()) => Ok((kind, v)),
        Some(n) => Err(ResultError::Version {
            path: path.to_path_buf(),
            found: n,
            reads: kind.version(),
        }),
        None => Err(ResultError::NoVersion {
            path: path.to_path_buf(),
        }),
    }
}

fn decode<T: serde::de::DeserializeOwned>(
    path: &Path,
    kind: Kind,
    v: serde_json::Value,
) -> Result<T, ResultError> {
    serde_json::from_value(v).map_err(|e| ResultError::Invalid {
        path: path.to_path_buf(),
        kind,
        message: e.to_string(),
    })
}

/// Reads any result file.
pub fn read(path: &Path) -> Result<ResultFile, ResultError> {
    let (kind, v) = document(path)?;
    Ok(match kind {
        Kind::Run => ResultFile::Run(decode(path, kind, v)?),
        Kind::Capacity => ResultFile::Capacity(decode(path, kind, v)?),
        Kind::Probe => ResultFile::Probe(decode(path, kind, v)?),
        Kind::Verify => ResultFile::Verify(decode(path, kind, v)?),
        Kind::Scaling => ResultFile::Scaling(decode(path, kind, v)?),
    })
}

/// Reads a result file that must be of kind `wanted`.
fn read_kind<T: serde::de::DeserializeOwned>(path: &Path, wanted: Kind) -> Result<T, ResultError> {
    let (kind, v) = document(path)?;
    if kind != wanted {
        return Err(ResultError::WrongKind {
            path: path.to_path_buf(),
            found: kind,
            wanted,
        });
    }
    decode(path, kind, v)
}

pub fn read_run(path: &Path) -> Result<RunResult, ResultError> {
    read_kind(path, Kind::Run)
}

pub fn read_capacity(path: &Path) -> Result<CapacityResult, ResultError> {
    read_kind(path, Kind::Capacity)
}

pub fn read_probe(path: &Path) -> Result<ProbeResult, ResultError> {
    read_kind(path, Kind::Probe)
}

pub fn read_verify(path: &Path) -> Result<VerifyResult, ResultError> {
    read_kind(path, Kind::Verify)
}

pub fn read_scaling(path: &Path) -> Result<ScalingResult, ResultError> {
    read_kind(path, Kind::Scaling)
}

/// Writes any result atomically, as pretty JSON.
pub fn write<T: serde::Serialize>(path: &Path, result: &T) -> Result<(), ResultError> {
    crate::fsutil::write_json(path, result).map_err(|source| ResultError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Sets a top-level field of a run result file as it was written (records and samples a long
/// run spilled to disk included), atomically: what a step learns after the load engine wrote
/// the result (a fill's rows and whether it reached its target).
pub fn set_run_field<T: serde::Serialize>(
    path: &Path,
    key: &str,
    value: &T,
) -> Result<(), ResultError> {
    let io = |source| ResultError::Io {
        path: path.to_path_buf(),
        source,
    };
    let bytes = std::fs::read(path).map_err(io)?;
    let mut doc: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| ResultError::NotJson {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    let Some(fields) = doc.as_object_mut().filter(|o| o.contains_key("phases")) else {
        return Err(ResultError::Unrecognised {
            path: path.to_path_buf(),
        });
    };
    fields.insert(
        key.to_string(),
        serde_json::to_value(value).map_err(|e| io(std::io::Error::other(e)))?,
    );
    write(path, &doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::fixture;

    #[test]
    fn a_field_set_later_keeps_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run.json");
        let r = fixture::run("laptop", &fixture::RunShape::default());
        write(&run, &r).unwrap();
        let fill = crate::result::FillRecord {
            rows_written: 1_234,
            target_mib: 100.0,
            reached: true,
            node_load_mib: Some(101.5),
        };
        set_run_field(&run, "fill", &fill).unwrap();
        let back = read_run(&run).unwrap();
        assert_eq!(back.fill, Some(fill));
        assert_eq!(back.phases, r.phases);
        let cap = dir.path().join("cap.json");
        write(&cap, &fixture::capacity("laptop", &[1_000.0], 2)).unwrap();
        assert!(matches!(
            set_run_field(&cap, "fill", &1),
            Err(ResultError::Unrecognised { .. })
        ));
    }

    #[test]
    fn reads_each_kind_and_names_the_file_and_the_fault() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run.json");
        write(&run, &fixture::run("laptop", &fixture::RunShape::default())).unwrap();
        let cap = dir.path().join("cap.json");
        write(&cap, &fixture::capacity("laptop", &[1_000.0, 2_000.0], 2)).unwrap();
        let probe = dir.path().join("probe.json");
        std::fs::write(&probe, include_str!("../probe/testdata/probe-result.json")).unwrap();

        assert_eq!(read(&run).unwrap().kind(), Kind::Run);
        assert_eq!(read(&cap).unwrap().kind(), Kind::Capacity);
        assert_eq!(read(&probe).unwrap().kind(), Kind::Probe);
        read_run(&run).unwrap();
        read_capacity(&cap).unwrap();
        read_probe(&probe).unwrap();

        let e = read_capacity(&run).unwrap_err();
        assert!(matches!(
            e,
            ResultError::WrongKind {
                found: Kind::Run,
                ..
            }
        ));
        assert_eq!(
            e.to_string(),
            format!(
                "{}: a run result, not a capacity-search result",
                run.display()
            )
        );
        assert!(matches!(
            read_probe(&cap).unwrap_err(),
            ResultError::WrongKind { .. }
        ));

        let bad = dir.path().join("bad.json");
        assert!(matches!(read(&bad).unwrap_err(), ResultError::Io { .. }));
        std::fs::write(&bad, "{ not json").unwrap();
        assert!(matches!(
            read(&bad).unwrap_err(),
            ResultError::NotJson { .. }
        ));
        std::fs::write(&bad, r#"{"name": "x"}"#).unwrap();
        assert!(matches!(
            read(&bad).unwrap_err(),
            ResultError::Unrecognised { .. }
        ));
        std::fs::write(&bad, r#"{"phases": []}"#).unwrap();
        assert!(matches!(
            read(&bad).unwrap_err(),
            ResultError::NoVersion { .. }
        ));
        std::fs::write(&bad, r#"{"schema_version": 9, "phases": []}"#).unwrap();
        let e = read(&bad).unwrap_err();
        assert!(matches!(e, ResultError::Version { found: 9, .. }), "{e}");
        std::fs::write(&bad, r#"{"schema_version": 1, "phases": 5}"#).unwrap();
        let e = read(&bad).unwrap_err();
        assert!(
            matches!(
                e,
                ResultError::Invalid {
                    kind: Kind::Run,
                    ..
                }
            ),
            "{e}"
        );
        assert!(
            e.to_string()
                .starts_with(&format!("{}: not a valid run result", bad.display()))
        );
    }
}
