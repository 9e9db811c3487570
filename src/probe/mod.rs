//! Host characterisation (`cqlbench probe`).
//!
//! What it measures, as in reference 000 (sysbench CPU score; fio profiles emulating
//! Cassandra's compaction I/O) and reference 004 (file-level tests):
//!
//! - CPU: sysbench `cpu` events/s at one thread and at all cores, or a built-in prime loop
//!   when sysbench is absent (marked `builtin` so the two are never compared).
//! - Disk: fio jobs on the filesystem of a directory — leveled and size-tiered compaction,
//!   commit log, 64 KiB sequential writes, 4 KiB random reads, memory-mapped random reads —
//!   parsed from fio's JSON output.
//!
//! Where: this host, or another one over SSH (`--ssh`, [`remote`]): a [`runner::Runner`] runs
//! the tools locally or there, and the output is parsed here either way.
//!
//! Layout: [`crate::spec::probe`] (what to run) → [`jobs`] (pure fio job rendering) → [`fio`] (running fio in
//! a [`scratch`] directory) → [`fio_json`] (pure parsing) → [`crate::result::probe`] (the persisted model) →
//! [`table`] (terminal rendering). [`run::run`] drives the steps and writes the result after
//! each one.

pub mod cpu;
pub mod fio;
pub mod fio_json;
pub mod jobs;
pub mod process;
pub mod remote;
pub mod run;
pub mod runner;
pub mod scratch;
pub mod store;
pub mod table;

use std::path::PathBuf;

use crate::spec::probe::Profile;
pub use run::run;

/// Everything that can stop a probe. Each variant names the path, profile or tool involved so
/// the one-line message is actionable.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error(
        "fio not found at '{path}': install it (apt-get install -y fio) or set CQLBENCH_FIO / --fio"
    )]
    FioMissing { path: PathBuf },
    #[error("could not run fio at '{path}': {source}")]
    FioSpawn {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("fio failed on profile {profile}: {message}")]
    FioFailed { profile: Profile, message: String },
    #[error("could not read fio's JSON output for profile {profile}: {message}")]
    FioOutput { profile: Profile, message: String },
    #[error("directory '{dir}' does not exist (give an existing directory with --dir)")]
    DirMissing { dir: PathBuf },
    #[error("'{dir}' is a file, not a directory (give a directory with --dir)")]
    NotADir { dir: PathBuf },
    #[error("directory '{dir}' is not writable: {source}")]
    NotWritable {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "not enough free space in '{dir}': the probe needs {need_mib} MiB, {free_mib} MiB free (use --quick or --size-mib)"
    )]
    NoSpace {
        dir: PathBuf,
        need_mib: u64,
        free_mib: u64,
    },
    #[error("{what} on '{path}': {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("could not write the probe result '{path}': {source}")]
    WriteResult {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{tool} took longer than {limit_s} s on {what}; stopped it")]
    Timeout {
        tool: &'static str,
        what: String,
        limit_s: u64,
    },
    #[error("interrupted; scratch files removed")]
    Interrupted,
    /// Something about the remote host of `--ssh`: `problem` is a phrase about it (`has no
    /// fio (…)`, `could not be reached over ssh: …`).
    #[error("remote host {host} {problem}")]
    Remote { host: String, problem: String },
    #[error(
        "ssh not found on this machine: install the OpenSSH client (apt-get install -y openssh-client)"
    )]
    SshMissing,
}
