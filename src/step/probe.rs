//! The `probe` step as typed input: what is measured, where, for how long, as flags, scenario
//! keys and what each probe Job of `k8s probe` is sent. The probe itself is
//! `scenario::steps::probe`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{argv, de};
use crate::spec::probe::Profile;

/// A probe step: what is measured, where, for how long.
#[derive(Debug, Clone, clap::Args, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ProbeStep {
    /// Directory whose filesystem is measured (test files go in a scratch directory inside it,
    /// removed afterwards). Default: the cqlbench home directory. With --ssh: a directory of
    /// the remote host (required).
    #[arg(long, value_name = "DIR", conflicts_with = "cluster")]
    #[serde(default)]
    pub dir: Option<PathBuf>,

    /// Probe another host over SSH, [USER@]HOST[:PORT]: fio and sysbench run there (the
    /// system's `ssh`, BatchMode, host keys accepted on first use; see docs/probe.md), --dir,
    /// --fio and --sysbench are paths there, and the environment label defaults to HOST.
    #[arg(long, value_name = "[USER@]HOST[:PORT]", conflicts_with = "cluster")]
    #[serde(
        default,
        deserialize_with = "de::opt_parsed",
        serialize_with = "argv::opt_display"
    )]
    pub ssh: Option<crate::spec::ssh::SshDest>,
    /// Run inside this network namespace (as `ip netns exec NAME` would), e.g. a lab's
    /// `cqb-LAB-c1` to reach its nodes' sshd over --ssh. Not in scenario files.
    #[arg(long, value_name = "NAME")]
    #[serde(skip)]
    pub netns: Option<String>,

    /// With --ssh: the private key to log in with (`ssh -i`). Default: ssh's own (agent,
    /// ~/.ssh/config, ~/.ssh/id_*).
    #[arg(long, value_name = "FILE", requires = "ssh")]
    #[serde(default)]
    pub ssh_identity: Option<PathBuf>,

    /// With --ssh: an `ssh -o` option, KEY=VALUE (e.g. UserKnownHostsFile=FILE,
    /// StrictHostKeyChecking=yes). Repeatable; given options win over cqlbench's defaults,
    /// except BatchMode, which is always yes.
    #[arg(long, value_name = "KEY=VALUE", requires = "ssh")]
    #[serde(
        default,
        deserialize_with = "de::list_parsed",
        serialize_with = "argv::list_display"
    )]
    pub ssh_option: Vec<crate::spec::ssh::SshOption>,

    /// Measure the filesystem holding this local cluster's data (its directory); the
    /// environment label defaults to the cluster name.
    #[arg(long, value_name = "NAME")]
    #[serde(default)]
    pub cluster: Option<String>,

    /// With --cluster: measure the data directory of this data centre's first node — its
    /// emulated disk when the DC has a storage class (`cluster create --storage`); the
    /// environment label defaults to CLUSTER-DC.
    #[arg(long, value_name = "DC", requires = "cluster")]
    #[serde(default)]
    pub dc: Option<String>,

    /// Label of this environment in the result and the table. Default: the hostname.
    #[arg(long, value_name = "NAME")]
    #[serde(default, deserialize_with = "de::opt_env")]
    pub env: Option<String>,

    /// Result file. Default: <cqlbench home>/probes/<env>-<UTC time>.json.
    #[arg(long, value_name = "FILE")]
    #[serde(default)]
    pub out: Option<PathBuf>,

    /// Tags recorded in the result, for `cqlbench runs --tag`: 1-64 of A-Z a-z 0-9 . _ -
    /// each. Repeatable.
    #[arg(long, value_delimiter = ',', value_parser = crate::spec::probe::parse_tag)]
    #[serde(
        default,
        deserialize_with = "de::texts",
        serialize_with = "argv::comma_list"
    )]
    pub tag: Vec<String>,

    /// Short probe (under a minute): 4 s per profile, 256 MiB files, 3 s CPU runs.
    #[arg(long)]
    #[serde(default)]
    pub quick: bool,

    /// Profiles to run, comma-separated: lcs, stcs, commitlog, seq_write_64k, rand_read_4k,
    /// mmap_rand_read. Default: all.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    #[serde(
        default,
        deserialize_with = "de::list_parsed",
        serialize_with = "argv::comma_list"
    )]
    pub profiles: Vec<Profile>,

    /// Skip the CPU measurement.
    #[arg(long)]
    #[serde(default)]
    pub skip_cpu: bool,

    /// Override the measured seconds of each profile and CPU run.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    #[serde(default)]
    pub runtime_s: Option<u64>,

    /// Override the size of the data files, in MiB.
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..))]
    #[serde(default)]
    pub size_mib: Option<u64>,

    /// Also write each profile's fio job file to DIR, to run it by hand:
    /// `cd <some dir on the same filesystem> && fio --output-format=json DIR/<profile>.fio`.
    #[arg(long, value_name = "DIR")]
    #[serde(default)]
    pub write_jobs: Option<PathBuf>,

    /// fio binary [default: $CQLBENCH_FIO, else fio; with --ssh: fio on the remote PATH].
    #[arg(long, value_name = "PATH")]
    #[serde(default)]
    pub fio: Option<PathBuf>,

    /// sysbench binary [default: $CQLBENCH_SYSBENCH, else sysbench]; when it cannot be run a
    /// built-in CPU loop is used instead (with --ssh: the remote host's, required unless
    /// --skip-cpu).
    #[arg(long, value_name = "PATH")]
    #[serde(default)]
    pub sysbench: Option<PathBuf>,

    /// Print nothing but the finished result, as one line of JSON on standard output (no
    /// progress, no tables): what a pod's log holds for `kubectl logs … > FILE` and
    /// `cqlbench report FILE`. The result file is written as usual. Command line only.
    #[arg(long)]
    #[serde(skip)]
    pub json: bool,
}
