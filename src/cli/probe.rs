//! `cqlbench probe`: characterise this host (CPU score, Cassandra-like disk I/O with fio).

use std::path::PathBuf;

use anyhow::Context;

use crate::fsutil::cqlbench_home;
use crate::host::HostFacts;
use crate::probe::spec::{Timing, validate_env};
use crate::probe::{self, ProbeSpec, Profile};

/// Arguments of `cqlbench probe` (boxed: they are much larger than the other commands').
#[derive(Debug, clap::Args)]
pub struct ProbeArgs {
    #[command(flatten)]
    pub options: Box<ProbeOptions>,
}

/// The options of `cqlbench probe`.
#[derive(Debug, clap::Args)]
pub struct ProbeOptions {
    /// Directory whose filesystem is measured (test files go in a scratch directory inside it,
    /// removed afterwards). Default: the cqlbench home directory.
    #[arg(long, value_name = "DIR", conflicts_with = "cluster")]
    pub dir: Option<PathBuf>,

    /// Measure the filesystem holding this local cluster's data (its directory); the
    /// environment label defaults to the cluster name.
    #[arg(long, value_name = "NAME")]
    pub cluster: Option<String>,

    /// Label of this environment in the result and the table. Default: the hostname.
    #[arg(long, value_name = "NAME")]
    pub env: Option<String>,

    /// Result file. Default: <cqlbench home>/probes/<env>-<UTC time>.json.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Short probe (under a minute): 4 s per profile, 256 MiB files, 3 s CPU runs.
    #[arg(long)]
    pub quick: bool,

    /// Profiles to run, comma-separated: lcs, stcs, commitlog, seq_write_64k, rand_read_4k,
    /// mmap_rand_read. Default: all.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub profiles: Vec<Profile>,

    /// Skip the CPU measurement.
    #[arg(long)]
    pub skip_cpu: bool,

    /// Override the measured seconds of each profile and CPU run.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub runtime_s: Option<u64>,

    /// Override the size of the data files, in MiB.
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..))]
    pub size_mib: Option<u64>,

    /// Also write each profile's fio job file to DIR, to run it by hand:
    /// `cd <some dir on the same filesystem> && fio --output-format=json DIR/<profile>.fio`.
    #[arg(long, value_name = "DIR")]
    pub write_jobs: Option<PathBuf>,

    /// fio binary.
    #[arg(long, env = "CQLBENCH_FIO", default_value = "fio", value_name = "PATH")]
    pub fio: PathBuf,

    /// sysbench binary; when it cannot be run a built-in CPU loop is used instead.
    #[arg(
        long,
        env = "CQLBENCH_SYSBENCH",
        default_value = "sysbench",
        value_name = "PATH"
    )]
    pub sysbench: PathBuf,
}

pub fn run(args: ProbeArgs) -> anyhow::Result<()> {
    let spec = spec_from_args(*args.options)?;
    let mut progress = |line: &str| eprintln!("probe: {line}");
    let result = probe::run(&spec, &mut progress).context("probe")?;
    print!("{}", probe::table::render(&result));
    eprintln!("probe: result written to {}", spec.out.display());
    Ok(())
}

/// Converts the command line into a [`ProbeSpec`].
fn spec_from_args(args: ProbeOptions) -> anyhow::Result<ProbeSpec> {
    let home = cqlbench_home();
    let cluster_dir = match &args.cluster {
        Some(name) => {
            Some(crate::cluster::Cluster::open(&crate::cluster::clusters_root(None), name)?.dir)
        }
        None => None,
    };
    let env = match (args.env, &args.cluster) {
        (Some(env), _) => env,
        (None, Some(name)) => name.clone(),
        (None, None) => default_env(),
    };
    validate_env(&env).map_err(anyhow::Error::msg)?;
    let dir = match args.dir.or(cluster_dir) {
        // Absolute in the result; a missing directory is reported by the probe itself.
        Some(dir) => std::fs::canonicalize(&dir).unwrap_or(dir),
        None => {
            std::fs::create_dir_all(&home)
                .with_context(|| format!("creating the cqlbench home '{}'", home.display()))?;
            home.clone()
        }
    };
    let mut timing = if args.quick {
        Timing::QUICK
    } else {
        Timing::FULL
    };
    if let Some(s) = args.runtime_s {
        timing.runtime_s = s;
        timing.cpu_time_s = s;
        timing.ramp_s = timing.ramp_s.min(s);
    }
    if let Some(m) = args.size_mib {
        timing.file_size_mib = m;
    }
    let mut profiles = if args.profiles.is_empty() {
        Profile::ALL.to_vec()
    } else {
        args.profiles
    };
    let mut seen = std::collections::HashSet::new();
    profiles.retain(|p| seen.insert(*p));
    let out = args
        .out
        .unwrap_or_else(|| probe::store::default_path(&home, &env, crate::host::unix_now_s()));
    Ok(ProbeSpec {
        dir,
        env,
        quick: args.quick,
        timing,
        profiles,
        cpu: !args.skip_cpu,
        fio_path: args.fio,
        sysbench_path: args.sysbench,
        write_jobs_dir: args.write_jobs,
        out,
    })
}

/// The hostname, made safe for a file name; `localhost` if there is none.
fn default_env() -> String {
    let host = HostFacts::read().hostname;
    let cleaned: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    let cleaned = cleaned.trim_start_matches('.').to_string();
    if cleaned.is_empty() {
        "localhost".to_string()
    } else {
        cleaned
    }
}
