//! `cqlbench k8s …`: Kubernetes manifests rendered from flags, and the kubectl workflow that
//! applies them. Nothing here talks to a cluster.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use clap::{Args, Subcommand};

use crate::k8s::loaders::{
    CredentialsSource, LoadersSpec, Rendered, Resources, ResultsClaim, default_run_id, render,
};
use crate::load::session::Credentials;
use crate::spec::parse_duration;

#[derive(Debug, Subcommand)]
pub enum K8sCommand {
    /// An Indexed Job of N `cqlbench run` shards (results on a shared claim, collected with
    /// kubectl cp, merged with `cqlbench merge`): prints the manifests, or writes them to --out
    /// and prints the kubectl workflow.
    Loaders(Box<LoadersArgs>),
}

/// `cqlbench k8s loaders --shards N --image IMAGE [options] -- RUN ARGS…`
#[derive(Debug, Args)]
pub struct LoadersArgs {
    /// Shards of the run: one pod each, all at once (the Job's completions and parallelism:
    /// the shards meet at a barrier before their main phase).
    #[arg(long)]
    pub shards: u32,
    /// The Job's name (a DNS-1123 label); the other objects are NAME-collector, NAME-results
    /// and NAME-credentials.
    #[arg(long, default_value = "cqlbench-loaders")]
    pub name: String,
    /// Namespace of every object (it must exist).
    #[arg(long, short = 'n', default_value = "default")]
    pub namespace: String,
    /// Container image with `cqlbench` on its PATH (and `sleep` and `tar`, for the collector
    /// pod and `kubectl cp`).
    #[arg(long)]
    pub image: String,
    /// Names the run: its results directory, merged file and label; 1-63 of a-z 0-9 . _ -
    /// [default: run-YYYYMMDD-HHMMSS, UTC now].
    #[arg(long)]
    pub run_id: Option<String>,
    /// Database credentials file (two lines: user, password), rendered into a Secret and
    /// passed to the pods as CQLBENCH_USERNAME/CQLBENCH_PASSWORD.
    #[arg(long, conflicts_with = "secret")]
    pub credentials_file: Option<PathBuf>,
    /// An existing Secret holding the database credentials under the keys `username` and
    /// `password`.
    #[arg(long)]
    pub secret: Option<String>,
    /// An existing PersistentVolumeClaim for the results (ReadWriteMany: every pod mounts it)
    /// instead of creating NAME-results.
    #[arg(long, conflicts_with_all = ["results_size", "storage_class"])]
    pub results_claim: Option<String>,
    /// Size of the results claim created (a Kubernetes quantity).
    #[arg(long, default_value = "1Gi")]
    pub results_size: String,
    /// Storage class of the results claim; it must offer ReadWriteMany [default: the
    /// cluster's default class].
    #[arg(long)]
    pub storage_class: Option<String>,
    /// CPU of each loader pod, its request and limit (e.g. 500m, 2).
    #[arg(long)]
    pub cpu: Option<String>,
    /// Memory of each loader pod, its request and limit (e.g. 512Mi, 2Gi).
    #[arg(long)]
    pub memory: Option<String>,
    /// Failed pods the Job reruns before it fails (a rerun shard starts late, alone).
    #[arg(long, default_value_t = 0)]
    pub backoff_limit: u32,
    /// How long the printed `kubectl wait` waits for every shard to complete.
    #[arg(long, value_parser = parse_duration, default_value = "1h")]
    pub timeout: Duration,
    /// Write the manifests to this file (mode 0600 when it holds a Secret) and print the
    /// kubectl workflow [default: manifests to stdout, workflow to stderr].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// What follows `cqlbench run` in each pod, after `--`: e.g. `-- keyvalue --hosts
    /// cassandra-dc1-service --rate 4000 --duration 5m`.
    #[arg(last = true, value_name = "RUN ARGS")]
    pub run_args: Vec<String>,
}

pub fn run(cmd: K8sCommand) -> anyhow::Result<()> {
    match cmd {
        K8sCommand::Loaders(a) => loaders(*a),
    }
}

fn loaders(a: LoadersArgs) -> anyhow::Result<()> {
    let credentials = match (&a.credentials_file, a.secret) {
        (Some(file), _) => CredentialsSource::Given(Credentials::from_file(file)?),
        (None, Some(secret)) => CredentialsSource::Secret(secret),
        (None, None) => CredentialsSource::None,
    };
    let results = match a.results_claim {
        Some(claim) => ResultsClaim::Existing(claim),
        None => ResultsClaim::New {
            size: a.results_size,
            storage_class: a.storage_class,
        },
    };
    let now_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let spec = LoadersSpec {
        name: a.name,
        namespace: a.namespace,
        image: a.image,
        shards: a.shards,
        backoff_limit: a.backoff_limit,
        run_id: a.run_id.unwrap_or_else(|| default_run_id(now_s)),
        run_args: a.run_args,
        credentials,
        results,
        resources: Resources {
            cpu_request: a.cpu.clone(),
            cpu_limit: a.cpu,
            memory_request: a.memory.clone(),
            memory_limit: a.memory,
        },
        wait_timeout: a.timeout,
        manifest: a.out.as_ref().map(|p| p.display().to_string()),
    };
    let rendered = render(&spec)?;
    match &a.out {
        None => {
            print!("{}", rendered.yaml());
            eprint!("{}", workflow(&rendered));
        }
        Some(path) => {
            write_manifest(path, &rendered)
                .with_context(|| format!("writing {}", path.display()))?;
            println!(
                "wrote {}: run {}, {} shards of `cqlbench run` in namespace {}",
                path.display(),
                spec.run_id,
                spec.shards,
                spec.namespace
            );
            print!("{}", workflow(&rendered));
        }
    }
    Ok(())
}

/// The steps as shell lines, each under a comment saying what it does.
fn workflow(r: &Rendered) -> String {
    r.steps
        .iter()
        .enumerate()
        .map(|(i, s)| format!("# {}. {}\n{}\n", i + 1, s.what, s.line))
        .collect()
}

/// Writes the manifests atomically (a temporary file renamed over `path`); readable by the
/// owner only when they hold a Secret's plain-text password.
fn write_manifest(path: &Path, r: &Rendered) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = path.file_name().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the path has no file name",
        )
    })?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(format!(".tmp{}", std::process::id()));
    let tmp = dir.join(tmp_name);
    let mode = if r.secret.is_some() { 0o600 } else { 0o644 };
    let written = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)?;
        f.write_all(r.yaml().as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}
