//! `cqlbench k8s …`: Kubernetes manifests rendered from flags, and the kubectl workflow that
//! applies them. Nothing here talks to a cluster.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use clap::{Args, Subcommand};

use crate::console::{
    JobOutcome, Manifest, job_outcome_text, manifest_written, probe_results_text,
};
use crate::k8s::cluster::K8sClusterSpec;
use crate::k8s::loaders::{CredentialsSource, LoadersSpec, Resources, ResultsClaim, render};
use crate::k8s::storage::Cloud;
use crate::load::session::Credentials;
use crate::spec::cluster::{Gc, parse_dcs};
use crate::spec::load::default_run_id;
use crate::spec::storage::StorageArg;
use crate::spec::{MiB, parse_duration};
use crate::step::order::Task;

#[derive(Debug, Subcommand)]
pub enum K8sCommand {
    /// An Indexed Job of N `cqlbench run` shards (results on a shared claim, collected with
    /// kubectl cp, merged with `cqlbench merge`): prints the manifests, or writes them to --out
    /// and prints the kubectl workflow.
    Loaders(Box<LoadersArgs>),
    /// The loaders' Indexed Job run on the cluster of your kubeconfig: applied, followed, each
    /// pod's results read from its log (no shared volume), merged here, then deleted.
    Run(Box<RunJobArgs>),
    #[command(hide = true)]
    PodRun(PodRunArgs),
    /// A K8ssandraCluster (K8ssandra's operator) and one StorageClass per volume type, rendered
    /// from a cluster spec: prints the manifests, or writes them to --out.
    Cluster(Box<ClusterArgs>),
    /// One Job per node running `cqlbench probe` on a volume of the cluster's StorageClass,
    /// pinned to that node; each pod's log is its result (JSON), collected with kubectl logs
    /// for `cqlbench report`: prints the manifests, or writes them to --out and prints the
    /// kubectl workflow.
    Probe(Box<ProbeJobsArgs>),
}

/// `cqlbench k8s probe --nodes NODE,… --storage-class SC --size SIZE --image IMAGE [options]
/// [-- PROBE ARGS…]`
#[derive(Debug, Args)]
pub struct ProbeJobsArgs {
    /// Kubernetes node names to probe, comma-separated (`kubectl get nodes`): one Job each,
    /// its pod pinned to the node by name.
    #[arg(long, value_delimiter = ',', required = true)]
    pub nodes: Vec<String>,
    /// StorageClass of each probe volume: the one Cassandra's volumes use.
    #[arg(long)]
    pub storage_class: String,
    /// Size of each probe volume (a Kubernetes quantity): give that of Cassandra's volumes,
    /// as the IOPS and throughput of many disk types grow with size.
    #[arg(long)]
    pub size: String,
    /// Container image with `cqlbench`, fio and sysbench on its PATH (scripts/image.sh).
    #[arg(long)]
    pub image: String,
    /// Prefix of the Jobs' names: NAME-0, NAME-1, … in the order of --nodes.
    #[arg(long, default_value = "cqlbench-probe")]
    pub name: String,
    /// Namespace of the Jobs (it must exist).
    #[arg(long, short = 'n', default_value = "default")]
    pub namespace: String,
    /// Labels the Jobs and names the directory the results are collected in: 1-63 of a-z 0-9
    /// . _ - [default: probe-YYYYMMDD-HHMMSS, UTC now].
    #[arg(long)]
    pub run_id: Option<String>,
    /// The pods tolerate every taint (for nodes dedicated to Cassandra).
    #[arg(long)]
    pub tolerate_taints: bool,
    /// How long the printed `kubectl wait` waits, and each Job's deadline.
    #[arg(long, value_parser = parse_duration, default_value = "30m")]
    pub timeout: Duration,
    /// Write the manifests to this file and print the kubectl workflow [default: manifests
    /// to stdout, workflow to stderr].
    #[arg(long, conflicts_with = "run")]
    pub out: Option<PathBuf>,
    /// Run the Jobs on the cluster of your kubeconfig instead of printing them: apply, wait,
    /// write each pod's result to --results DIR/NODE.json, delete the Jobs.
    #[arg(long)]
    pub run: bool,
    /// With --run: the kubeconfig file [default: $KUBECONFIG, else ~/.kube/config, else the
    /// pod's service account].
    #[arg(long, requires = "run")]
    pub kubeconfig: Option<PathBuf>,
    /// With --run: the directory the results are written to (it must not exist) [default:
    /// $CQLBENCH_HOME/results/k8s-RUN_ID].
    #[arg(long, requires = "run")]
    pub results: Option<PathBuf>,
    /// With --run: leave the Jobs in the cluster.
    #[arg(long, requires = "run")]
    pub keep: bool,
    /// What follows `cqlbench probe` in each pod, after `--`: e.g. `-- --quick --profiles
    /// lcs,rand_read_4k` (--dir, --env, --out and --json are the renderer's).
    #[arg(last = true, value_name = "PROBE ARGS")]
    pub probe_args: Vec<String>,
}

/// `cqlbench k8s cluster --cloud CLOUD --dcs DCS --storage [DC=]DISK:SIZE … [options]`
#[derive(Debug, Args)]
pub struct ClusterArgs {
    /// The K8ssandraCluster's name, also Cassandra's cluster name and the StorageClasses'
    /// prefix (a DNS-1123 label of at most 40 characters).
    #[arg(long, default_value = "cqlbench")]
    pub name: String,
    /// Namespace of the K8ssandraCluster (StorageClasses have none).
    #[arg(long, short = 'n', default_value = "default")]
    pub namespace: String,
    /// The cloud: its CSI provisioner and disk types (those of the price catalogue).
    #[arg(long, value_enum, ignore_case = true)]
    pub cloud: Cloud,
    /// Cassandra version X.Y.Z (3.11.x, 4.x.y or 5.x.y: K8ssandra picks the image).
    #[arg(long = "version", default_value = "5.0.4")]
    pub cassandra_version: String,
    /// Data centres as NAME:NODES[:RACKS],…, e.g. `dc1:3:3,dc2:3:3` (names: DNS-1123 labels).
    #[arg(long, default_value = "dc1:3:3")]
    pub dcs: String,
    /// Each data centre's volume (repeatable): `[DC=]DISK:SIZE[:IOPS[:MBPS]]`, e.g.
    /// `gp3:500Gi` (every data centre not named elsewhere), `dc3=io2:2Ti:16000`. DISK is a disk
    /// type of --cloud in the catalogue (gp2, gp3, io1, io2, st1, sc1; pd-standard,
    /// pd-balanced, pd-ssd, pd-extreme; standard-hdd, standard-ssd, premium-ssd, ultra-disk);
    /// SIZE is whole Gi or Ti; IOPS for io1, io2, pd-extreme and ultra-disk (optional for gp3),
    /// MB/s for gp3 and ultra-disk.
    #[arg(long, required = true)]
    pub storage: Vec<String>,
    /// One zone per rack, in rack order (every data centre has as many racks as zones), e.g.
    /// `us-west-2a,us-west-2b,us-west-2c` [default: racks not pinned].
    #[arg(long, value_delimiter = ',')]
    pub zones: Vec<String>,
    /// Heap per Cassandra node, e.g. 8G or 500M [default: the operator's].
    #[arg(long)]
    pub heap: Option<MiB>,
    /// Young generation (-Xmn, through additionalJvmServerOptions), e.g. 200M; needs --heap.
    #[arg(long)]
    pub new_gen: Option<MiB>,
    /// Garbage collector: g1 (with reference 000's pause, IHOP and RSet settings) or zgc.
    #[arg(long, value_enum, ignore_case = true, default_value_t = Gc::G1)]
    pub gc: Gc,
    /// CPU of each Cassandra container, its request and limit (e.g. 7500m, 8).
    #[arg(long)]
    pub cpu: Option<String>,
    /// Memory of each Cassandra container, its request and limit (e.g. 60Gi); above --heap.
    #[arg(long)]
    pub memory: Option<String>,
    /// Write the manifests to this file and print how to apply them [default: stdout].
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// The loaders' Job, as `k8s loaders` renders it and `k8s run` runs it.
#[derive(Debug, Args)]
pub struct JobArgs {
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
    /// Container image with `cqlbench` on its PATH (scripts/image.sh builds one; it also has
    /// `sleep` and `tar`, for the collector pod and `kubectl cp`).
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
    /// An existing Secret with the client's TLS files under the keys cert-manager writes:
    /// `ca.crt` (the CA of the nodes' certificates) and, with --tls-client-cert, `tls.crt`
    /// and `tls.key`; mounted read-only at /etc/cqlbench/tls in every loader pod.
    #[arg(long)]
    pub tls_secret: Option<String>,
    /// With --tls-secret: the pods present its tls.crt / tls.key as their client certificate.
    #[arg(long, requires = "tls_secret")]
    pub tls_client_cert: bool,
    /// CPU of each loader pod, its request and limit (e.g. 500m, 2).
    #[arg(long)]
    pub cpu: Option<String>,
    /// Memory of each loader pod, its request and limit (e.g. 512Mi, 2Gi).
    #[arg(long)]
    pub memory: Option<String>,
    /// The pods use their node's network (hostNetwork): for a cluster reached at the node's
    /// own addresses, such as a local cqlbench cluster on the node's loopback.
    #[arg(long)]
    pub host_network: bool,
    /// Failed pods the Job reruns before it fails (a rerun shard starts late, alone).
    #[arg(long, default_value_t = 0)]
    pub backoff_limit: u32,
    /// How long to wait for every shard to complete.
    #[arg(long, value_parser = parse_duration, default_value = "1h")]
    pub timeout: Duration,
    /// What follows `cqlbench run` in each pod, after `--`: e.g. `-- keyvalue --hosts
    /// cassandra-dc1-service --rate 4000 --duration 5m`; or `-- capacity WORKLOAD …`: one
    /// capacity search by the pods (`capacity --shard I/N`), pod 0 coordinating.
    #[arg(last = true, value_name = "RUN ARGS")]
    pub run_args: Vec<String>,
}

/// `cqlbench k8s loaders --shards N --image IMAGE [options] -- RUN ARGS…`
#[derive(Debug, Args)]
pub struct LoadersArgs {
    #[command(flatten)]
    pub job: JobArgs,
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
    /// Write the manifests to this file (mode 0600 when it holds a Secret) and print the
    /// kubectl workflow [default: manifests to stdout, workflow to stderr].
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `cqlbench k8s run --shards N --image IMAGE [options] -- RUN ARGS…`
#[derive(Debug, Args)]
pub struct RunJobArgs {
    #[command(flatten)]
    pub job: JobArgs,
    /// The kubeconfig file [default: $KUBECONFIG, else ~/.kube/config, else the pod's
    /// service account].
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// The directory the pods' results are collected in (it must not exist) [default:
    /// $CQLBENCH_HOME/results/k8s-RUN_ID].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Leave the Job and its pods in the cluster once collected.
    #[arg(long)]
    pub keep: bool,
}

/// `cqlbench k8s pod-run --dir DIR -- ARGS…` (inside a loader pod): runs `cqlbench ARGS…`,
/// then prints every file under DIR to standard output for `k8s run` to read from the log.
#[derive(Debug, Args)]
pub struct PodRunArgs {
    #[arg(long)]
    pub dir: PathBuf,
    #[arg(last = true, required = true)]
    pub args: Vec<String>,
}

pub fn run(cmd: K8sCommand) -> anyhow::Result<()> {
    match cmd {
        K8sCommand::Loaders(a) => loaders(*a),
        K8sCommand::Run(a) => run_job(*a),
        K8sCommand::PodRun(a) => pod_run(a),
        K8sCommand::Cluster(a) => cluster(*a),
        K8sCommand::Probe(a) => probe_jobs(*a),
    }
}

/// The pods' probe from what follows `--`, read by `cqlbench probe`'s own parser, the options
/// the renderer sets refused, then checked by `probe`'s own checks as far as they can be here.
fn probe_step(given: &[String]) -> anyhow::Result<crate::step::ProbeStep> {
    let step: crate::step::ProbeStep = crate::step::parse_args("probe", given)
        .map_err(|e| anyhow::anyhow!("probe arguments: {e}"))?;
    crate::k8s::probe::validate_probe(&step)?;
    step.validate()
        .map_err(|e| anyhow::anyhow!("probe arguments: {e}"))?;
    Ok(step)
}

fn probe_jobs(a: ProbeJobsArgs) -> anyhow::Result<()> {
    use crate::k8s::probe::{ProbeJobsSpec, render};
    let now_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let spec = ProbeJobsSpec {
        name: a.name,
        namespace: a.namespace,
        image: a.image,
        nodes: a.nodes,
        storage_class: a.storage_class,
        size: a.size,
        run_id: a
            .run_id
            .unwrap_or_else(|| default_run_id(now_s, None).replacen("run-", "probe-", 1)),
        probe: probe_step(&a.probe_args)?,
        tolerate_taints: a.tolerate_taints,
        wait_timeout: a.timeout,
        manifest: a.out.as_ref().map(|p| p.display().to_string()),
    };
    if a.run {
        return run_probes(spec, a.kubeconfig, a.results, a.keep);
    }
    let rendered = render(&spec)?;
    let workflow = workflow(&rendered.steps);
    match &a.out {
        None => {
            print!("{}", rendered.yaml());
            eprint!("{workflow}");
        }
        Some(path) => {
            write_manifest(path, &rendered.yaml(), 0o644)
                .with_context(|| format!("writing {}", path.display()))?;
            let m = Manifest::ProbeJobs {
                run_id: &spec.run_id,
                jobs: spec.nodes.len(),
                namespace: &spec.namespace,
            };
            print!("{}", manifest_written(path, &m));
            print!("{workflow}");
        }
    }
    Ok(())
}

fn cluster(a: ClusterArgs) -> anyhow::Result<()> {
    let storage = a
        .storage
        .iter()
        .map(|s| s.parse::<StorageArg>())
        .collect::<Result<Vec<_>, _>>()?;
    let spec = K8sClusterSpec {
        name: a.name,
        namespace: a.namespace,
        cloud: a.cloud,
        version: a.cassandra_version,
        dcs: parse_dcs(&a.dcs)?,
        heap: a.heap,
        new_gen: a.new_gen,
        gc: a.gc,
        storage,
        zones: a.zones,
        cpu: a.cpu,
        memory: a.memory,
    };
    let catalog = crate::prices::load::default_catalog()?;
    let rendered = crate::k8s::cluster::render(&spec, &catalog)?;
    match &a.out {
        None => print!("{}", rendered.yaml()),
        Some(path) => {
            write_manifest(path, &rendered.yaml(), 0o644)
                .with_context(|| format!("writing {}", path.display()))?;
            let m = Manifest::Cluster {
                storage_classes: rendered.storage_classes.len(),
                name: &spec.name,
                namespace: &spec.namespace,
            };
            print!("{}", manifest_written(path, &m));
        }
    }
    Ok(())
}

/// The pods' task from what follows `--`, read by `cqlbench run`'s (or `capacity`'s) own
/// parser and checked as pod 0 will run it (what each pod would refuse after `kubectl apply`
/// is refused now), the options the renderer owns refused.
fn task(given: &[String], shards: u32, tls: Option<bool>) -> anyhow::Result<Task> {
    let Some(first) = given.first() else {
        anyhow::bail!(
            "no run arguments: give what follows `cqlbench run` after `--`, e.g. -- keyvalue --hosts cassandra-dc1-service --rate 4000 --duration 5m"
        );
    };
    if first == "run" {
        anyhow::bail!(
            "the run arguments start with 'run': give only what follows `cqlbench run`, e.g. -- keyvalue --hosts …"
        );
    }
    let capacity = first == "capacity";
    if capacity && given.len() < 2 {
        anyhow::bail!(
            "no capacity arguments: give what follows `cqlbench capacity` after `-- capacity`, e.g. -- capacity keyvalue --hosts cassandra-dc1-service --start-rate 4000"
        );
    }
    let what = if capacity {
        "capacity arguments"
    } else {
        "run arguments"
    };
    let task = Task::from_args(given).map_err(|e| anyhow::anyhow!("{what}: {e}"))?;
    crate::k8s::loaders::validate::validate_task(&task)?;
    // As pod 0 will run it: its shard and run id set, the TLS files the pods get from
    // --tls-secret (`Some(client_cert)`) named, so that a contradiction (`--no-tls`) is
    // refused here, not in the pod.
    let mut pod = task.clone();
    let run = pod.run_mut().expect("a run or capacity task");
    run.shard = Some(crate::spec::load::Share {
        index: 0,
        count: u64::from(shards.max(1)),
    });
    run.run_id = Some("r".into());
    if let Some(client_cert) = tls {
        crate::k8s::loaders::with_tls_files(run, client_cert);
    }
    let checked = match &pod {
        Task::Capacity(c) => c.validate(),
        Task::Fill(f) => f.validate(),
        Task::Run(r) => r.validate(),
        Task::Probe(_) => unreachable!("the arguments make a run or a capacity search"),
    };
    checked.map_err(|e| anyhow::anyhow!("{what}: {e}"))?;
    Ok(task)
}

/// The Job's spec from its flags, its results collected as `results` says.
fn job_spec(
    a: JobArgs,
    results: ResultsClaim,
    manifest: Option<String>,
) -> anyhow::Result<LoadersSpec> {
    let credentials = match (&a.credentials_file, a.secret) {
        (Some(file), _) => CredentialsSource::Given(Credentials::from_file(file)?),
        (None, Some(secret)) => CredentialsSource::Secret(secret),
        (None, None) => CredentialsSource::None,
    };
    let now_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Ok(LoadersSpec {
        name: a.name,
        namespace: a.namespace,
        image: a.image,
        shards: a.shards,
        backoff_limit: a.backoff_limit,
        task: task(
            &a.run_args,
            a.shards,
            a.tls_secret.as_ref().map(|_| a.tls_client_cert),
        )?,
        run_id: a.run_id.unwrap_or_else(|| default_run_id(now_s, None)),
        credentials,
        tls: a.tls_secret.map(|name| crate::k8s::loaders::TlsSecret {
            name,
            client_cert: a.tls_client_cert,
        }),
        results,
        resources: Resources {
            cpu_request: a.cpu.clone(),
            cpu_limit: a.cpu,
            memory_request: a.memory.clone(),
            memory_limit: a.memory,
        },
        host_network: a.host_network,
        wait_timeout: a.timeout,
        manifest,
    })
}

fn loaders(a: LoadersArgs) -> anyhow::Result<()> {
    let results = match a.results_claim {
        Some(claim) => ResultsClaim::Existing(claim),
        None => ResultsClaim::New {
            size: a.results_size,
            storage_class: a.storage_class,
        },
    };
    let spec = job_spec(
        a.job,
        results,
        a.out.as_ref().map(|p| p.display().to_string()),
    )?;
    let rendered = render(&spec)?;
    match &a.out {
        None => {
            print!("{}", rendered.yaml());
            eprint!("{}", workflow(&rendered.steps));
        }
        Some(path) => {
            let mode = if rendered.secret.is_some() {
                0o600
            } else {
                0o644
            };
            write_manifest(path, &rendered.yaml(), mode)
                .with_context(|| format!("writing {}", path.display()))?;
            let m = Manifest::LoaderJobs {
                run_id: &spec.run_id,
                shards: spec.shards,
                namespace: &spec.namespace,
            };
            print!("{}", manifest_written(path, &m));
            print!("{}", workflow(&rendered.steps));
        }
    }
    Ok(())
}

fn run_job(a: RunJobArgs) -> anyhow::Result<()> {
    use crate::k8s::job_run::{self, JobEvent, JobRun, Outcome};
    let spec = job_spec(a.job, ResultsClaim::PodLogs, None)?;
    let dir = a.out.unwrap_or_else(|| {
        super::home()
            .join("results")
            .join(format!("k8s-{}", spec.run_id))
    });
    let j = JobRun {
        spec,
        kubeconfig: a.kubeconfig,
        dir,
        keep: a.keep,
    };
    let started = std::time::Instant::now();
    let mut on = |e: JobEvent| {
        eprintln!(
            "{}",
            crate::console::job_event_line(&e, started.elapsed().as_secs_f64())
        )
    };
    let text = match job_run::run(&j, &super::signals::token(), &mut on)? {
        Outcome::Run(merged, path) => job_outcome_text(
            &JobOutcome::Run {
                merged: &merged,
                path: &path,
                shards: j.spec.shards,
                run_id: &j.spec.run_id,
            },
            &j.dir,
        ),
        Outcome::Capacity(path) => {
            let result = crate::result::file::read_capacity(&path)?;
            job_outcome_text(
                &JobOutcome::Capacity {
                    result: &result,
                    path: &path,
                },
                &j.dir,
            )
        }
    };
    print!("{text}");
    Ok(())
}

fn run_probes(
    spec: crate::k8s::probe::ProbeJobsSpec,
    kubeconfig: Option<PathBuf>,
    results: Option<PathBuf>,
    keep: bool,
) -> anyhow::Result<()> {
    use crate::k8s::probe_run::{ProbeEvent, ProbeRun, run};
    let dir = results.unwrap_or_else(|| {
        super::home()
            .join("results")
            .join(format!("k8s-{}", spec.run_id))
    });
    let p = ProbeRun {
        spec,
        kubeconfig,
        dir,
        keep,
    };
    let started = std::time::Instant::now();
    let mut on = |e: ProbeEvent| {
        eprintln!(
            "{}",
            crate::console::probe_event_line(&e, started.elapsed().as_secs_f64())
        )
    };
    let paths = run(&p, &super::signals::token(), &mut on)?;
    print!("{}", probe_results_text(&paths, &p.dir));
    Ok(())
}

/// Inside a loader pod: the shard as a child of this same executable, then its files printed.
fn pod_run(a: PodRunArgs) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("finding the cqlbench executable")?;
    let status = std::process::Command::new(&exe)
        .args(&a.args)
        .status()
        .with_context(|| format!("starting {}", exe.display()))?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match crate::k8s::pod_files::emit(&a.dir, &mut out) {
        Ok(_) => {}
        // The shard failed before it wrote anything: say so in the one format.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let empty = tempfile::tempdir().context("an empty directory")?;
            crate::k8s::pod_files::emit(empty.path(), &mut out)?;
        }
        Err(e) => return Err(e).with_context(|| format!("printing {}", a.dir.display())),
    }
    if !status.success() {
        anyhow::bail!("the shard ended with {status}");
    }
    Ok(())
}

/// The steps as shell lines, each under a comment saying what it does.
fn workflow(steps: &[crate::k8s::loaders::Step]) -> String {
    steps
        .iter()
        .enumerate()
        .map(|(i, s)| format!("# {}. {}\n{}\n", i + 1, s.what, s.line))
        .collect()
}

/// Writes the manifests atomically (a temporary file renamed over `path`) with `mode` (0600 when
/// they hold a Secret's plain-text password).
fn write_manifest(path: &Path, yaml: &str, mode: u32) -> std::io::Result<()> {
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
    let written = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)?;
        f.write_all(yaml.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}
