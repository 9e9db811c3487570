//! The `probe` step (`cqlbench probe`): characterise this host (CPU score, Cassandra-like disk
//! I/O with fio).

use std::path::PathBuf;

use crate::host::HostFacts;
use crate::probe;
use crate::result::probe::ProbeResult;
use crate::scenario::error::refuse;
use crate::scenario::event::{Event, ProbeEvent};
use crate::scenario::{Context, ScenarioError};
use crate::spec::probe::{ProbeSpec, Profile};
use crate::spec::probe::{Timing, validate_env};
use crate::spec::ssh::SshTarget;
pub use crate::step::probe::ProbeStep;

impl ProbeStep {
    /// How long each run lasts and how big its file is: `--quick`'s or the full probe's,
    /// `--runtime-s` for every run (fio and CPU), `--size-mib` for the files.
    pub fn timing(&self) -> Timing {
        let mut timing = if self.quick {
            Timing::QUICK
        } else {
            Timing::FULL
        };
        if let Some(s) = self.runtime_s {
            timing.runtime_s = s;
            timing.cpu_time_s = s;
            timing.ramp_s = timing.ramp_s.min(s);
        }
        if let Some(m) = self.size_mib {
            timing.file_size_mib = m;
        }
        timing
    }

    /// Checks every value that can be checked without the host.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if self.dir.is_some() && self.cluster.is_some() {
            refuse!("give --dir or --cluster, not both");
        }
        if let Some(s) = self.runtime_s
            && !(1..=3600).contains(&s)
        {
            refuse!("--runtime-s {s}: give 1 to 3600 seconds");
        }
        if self.size_mib == Some(0) {
            refuse!("--size-mib must be at least 1");
        }
        if let Some(env) = &self.env {
            validate_env(env)?;
        }
        if let Some(dest) = &self.ssh {
            if self.dir.is_none() {
                refuse!(
                    "--ssh {dest} needs --dir: the directory of that host whose filesystem is measured"
                );
            }
            if let Some(key) = &self.ssh_identity
                && !key.is_file()
            {
                refuse!(
                    "--ssh-identity '{}' is not a file (give the private key to log in with)",
                    key.display()
                );
            }
            return Ok(());
        }
        if !self.ssh_option.is_empty() || self.ssh_identity.is_some() {
            refuse!("--ssh-identity and --ssh-option go with --ssh");
        }
        if let Some(dir) = &self.dir {
            let dir = dir.clone();
            if !dir.exists() {
                return Err(crate::probe::ProbeError::DirMissing { dir }.into());
            }
            if !dir.is_dir() {
                return Err(crate::probe::ProbeError::NotADir { dir }.into());
            }
        }
        Ok(())
    }
}

/// The fio this step runs: its own, else the context's.
pub fn fio(args: &ProbeStep, ctx: &Context) -> PathBuf {
    args.fio.clone().unwrap_or_else(|| ctx.fio.clone())
}

pub fn run(args: &ProbeStep, ctx: &Context) -> Result<ProbeResult, ScenarioError> {
    args.validate()?;
    let cluster = match &args.cluster {
        Some(name) => Some(crate::cluster::Cluster::open(&ctx.clusters, name)?),
        None => None,
    };
    let dir = measured_dir(args, cluster.as_ref(), ctx)?;
    let mut named = args.clone();
    if let (None, Some(c), Some(dc)) = (&args.env, &args.cluster, &args.dc) {
        named.env = Some(format!("{c}-{dc}"));
    }
    let spec = spec_from_args(named, dir, ctx)?;
    crate::fsutil::check_out_path(&spec.out)?;
    // A local cluster whose nodes are pinned (an emulated smaller host): the probe runs on
    // their CPUs, so its CPU score is that host's.
    let cpus: std::collections::BTreeSet<usize> = cluster
        .iter()
        .flat_map(|c| c.state.plan.nodes.iter())
        .flat_map(|n| n.cpus.iter().copied())
        .collect();
    let cpus: Vec<usize> = cpus.into_iter().collect();
    let _pinned = match cpus.is_empty() {
        true => None,
        false => {
            ctx.emit(Event::Probe(ProbeEvent::Pinned { cpus: &cpus }));
            Some(crate::host::Pinned::to(&cpus).map_err(|e| {
                ScenarioError::io("pinning the probe to the cluster's CPUs", &spec.dir, e)
            })?)
        }
    };
    let mut progress = |line: &str| ctx.emit(Event::Probe(ProbeEvent::Progress(line)));
    let result = probe::run(&spec, &ctx.cancel, &mut progress)?;
    ctx.emit(Event::Probe(ProbeEvent::Done { result: &result }));
    ctx.emit(Event::ResultAt {
        what: "probe result",
        path: &spec.out,
    });
    Ok(result)
}

/// The directory measured: a DC's first node's data directory (its emulated disk attached,
/// with its limits), or the cluster's, or none (`--dir`, else the home).
fn measured_dir(
    args: &ProbeStep,
    cluster: Option<&crate::cluster::Cluster>,
    ctx: &Context,
) -> Result<Option<PathBuf>, ScenarioError> {
    Ok(match (cluster, &args.dc) {
        (Some(c), Some(dc)) => {
            let Some(node) = c.nodes().iter().find(|n| &n.dc == dc) else {
                let mut dcs: Vec<&str> = c.nodes().iter().map(|n| n.dc.as_str()).collect();
                dcs.dedup();
                refuse!(
                    "--dc {dc}: cluster {} has no such data centre (it has {})",
                    c.name(),
                    dcs.join(", ")
                );
            };
            if let Some((disk, class)) = c.disk(node) {
                // Mounted with its limits, whether or not the node is running.
                disk.attach(class)
                    .map_err(crate::cluster::ClusterError::from)?;
                ctx.emit(Event::Probe(ProbeEvent::Disk {
                    dc,
                    node: &node.name,
                    class: &class.describe(),
                }));
            }
            Some(c.node_dirs(node).data)
        }
        (Some(c), None) => Some(c.dir.clone()),
        (None, Some(dc)) => {
            refuse!("--dc {dc} names a data centre of a local cluster: give --cluster too")
        }
        (None, None) => None,
    })
}

/// Converts the command line into a [`ProbeSpec`].
/// `cluster_dir` is the directory of the `--cluster` (opened by the caller).
fn spec_from_args(
    args: ProbeStep,
    cluster_dir: Option<PathBuf>,
    ctx: &Context,
) -> Result<ProbeSpec, ScenarioError> {
    let home = &ctx.home;
    let timing = args.timing();
    let env = match (args.env, &args.cluster, &args.ssh) {
        (Some(env), _, _) => env,
        (None, Some(name), _) => name.clone(),
        (None, None, Some(dest)) => env_name(&dest.host),
        (None, None, None) => default_env(),
    };
    validate_env(&env)?;
    let remote = args.ssh.map(|dest| SshTarget {
        dest,
        identity: args.ssh_identity,
        options: args.ssh_option,
        connect_timeout_s: SshTarget::CONNECT_TIMEOUT_S,
    });
    let dir = match args.dir.or(cluster_dir) {
        // A path of the remote host, as given.
        Some(dir) if remote.is_some() => dir,
        // Absolute in the result; a missing directory is reported by the probe itself.
        Some(dir) => std::fs::canonicalize(&dir).unwrap_or(dir),
        None => {
            std::fs::create_dir_all(home)
                .map_err(|e| ScenarioError::io("creating the cqlbench home", home, e))?;
            home.clone()
        }
    };
    let mut profiles = if args.profiles.is_empty() {
        Profile::ALL.to_vec()
    } else {
        args.profiles
    };
    let mut seen = std::collections::HashSet::new();
    profiles.retain(|p| seen.insert(*p));
    let out = args
        .out
        .unwrap_or_else(|| probe::store::default_path(home, &env, crate::host::unix_now_s()));
    Ok(ProbeSpec {
        dir,
        env,
        quick: args.quick,
        timing,
        profiles,
        cpu: !args.skip_cpu,
        // The remote host's own fio and sysbench on its PATH unless given: $CQLBENCH_FIO and
        // $CQLBENCH_SYSBENCH name this machine's.
        fio_path: match (args.fio, &remote) {
            (Some(p), _) => p,
            (None, Some(_)) => "fio".into(),
            (None, None) => ctx.fio.clone(),
        },
        sysbench_path: match (args.sysbench, &remote) {
            (Some(p), _) => p,
            (None, Some(_)) => "sysbench".into(),
            (None, None) => ctx.sysbench.clone(),
        },
        write_jobs_dir: args.write_jobs,
        out,
        tags: args.tag,
        remote,
    })
}

/// The hostname, made safe for a file name; `localhost` if there is none.
fn default_env() -> String {
    env_name(&HostFacts::read().hostname)
}

/// A host name made safe for a file name; `localhost` if nothing is left.
fn env_name(host: &str) -> String {
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
