//! Command-line definitions. Each command lives in its own file and converts its arguments
//! into specs; the library does the work.

use clap::{Parser, Subcommand};

pub mod cluster;
pub mod compare;
pub mod cost;
#[cfg(feature = "k8s")]
pub mod k8s;
pub mod merge;
pub mod metrics;
pub mod profile;
pub mod quickstart;
pub mod runs;
pub mod scenario;
pub mod signals;
pub mod verify;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::console::Console;
use crate::scenario::steps::{self, CapacityStep, FillStep, ProbeStep, ReportStep, RunStep};
use crate::scenario::{Context, ScenarioError};

/// Benchmarking and capacity planning for Apache Cassandra deployments.
#[derive(Debug, Parser)]
#[command(name = "cqlbench", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Local Apache Cassandra clusters: create, start, stop, status, destroy, …
    #[command(subcommand)]
    Cluster(Box<cluster::ClusterCommand>),
    /// The main job: a local 3-node cluster, its status and a short write/read check.
    Quickstart(quickstart::QuickstartArgs),
    /// Drive a workload against a cluster and record what it sustained, at what latency.
    Run(Box<RunStep>),
    /// Reference 000's throughput test: rampup, then unthrottled at a fixed concurrency
    /// (default 300 in flight); average and per-interval throughput.
    Throughput(Box<RunStep>),
    /// A fixed-rate test: --rate OPS, or --rate 35% --of THROUGHPUT.json; response-time
    /// percentiles corrected for coordinated omission.
    Latency(Box<RunStep>),
    /// Reference 001's capacity search: raise the rate step by step until an overload
    /// criterion fails (latency, pending compactions, node CPU, errors, achieved rate).
    Capacity(Box<CapacityStep>),
    /// Reference 001's fill: write rows until each node holds N× its RAM (or a size), then
    /// wait for compactions.
    Fill(Box<FillStep>),
    /// Run a whole methodology from a YAML file (cluster, probe, throughput, latency,
    /// capacity, fill, report); `scenarios/` has one per reference article.
    Scenario(scenario::ScenarioArgs),
    /// Characterise this host: CPU score and Cassandra-like disk I/O profiles.
    Probe(Box<ProbeStep>),
    /// Monthly cost of a cluster from the price catalogue.
    Cost(cost::CostArgs),
    /// Size a cluster for a target throughput and data size, ranked by cost.
    Plan(cost::PlanArgs),
    /// Environments side by side from run, capacity and probe results: terminal, Markdown,
    /// CSV, and an HTML page with charts.
    Report(ReportStep),
    /// Is run B (or a set of runs) better, worse or not distinguishable from run A (or a
    /// set), per metric; `--fail-if` gates a change on its numbers.
    Compare(compare::CompareArgs),
    /// The runs index: every result under the cqlbench home and the directories
    /// imported, listed and filtered (id, date, kind, environment, workload, status, figures).
    Runs(runs::RunsArgs),
    /// Read back every write a run's cluster acknowledged (its ledger) and compare it with
    /// what was written: present, missing and different rows.
    Verify(verify::VerifyArgs),
    /// One run from its shards (`run --shard I/N`, `run --loaders N`): throughput summed per
    /// interval, latency histograms added (never percentiles averaged), shards that fell
    /// behind named.
    Merge(merge::MergeArgs),
    /// Check a cassandra-stress user profile and show what one operation of each kind writes
    /// and reads (columns, sizes, a sample row, each query's bound values); no cluster.
    Profile(profile::ProfileArgs),
    /// What a cluster's metric sources serve: `metrics check`.
    #[command(subcommand)]
    Metrics(metrics::MetricsCommand),
    /// Kubernetes manifests and their kubectl workflow: `loaders` renders N `cqlbench run`
    /// shards as an Indexed Job.
    #[cfg(feature = "k8s")]
    #[command(subcommand)]
    K8s(k8s::K8sCommand),
    /// A build without the `k8s` feature (the quickstart's) refuses `cqlbench k8s` in one line.
    #[cfg(not(feature = "k8s"))]
    #[command(hide = true, disable_help_flag = true)]
    K8s {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// One loader of a run split over several: its shard of the order (a JSON document) that
    /// `--loaders N`, a `capacity --loaders N` step or `k8s loaders` wrote for it.
    Shard(ShardArgs),
}

#[derive(Debug, clap::Args)]
pub struct ShardArgs {
    /// The order: `NAME.order.json` beside the merged result, or the pods' ConfigMap file.
    pub order: PathBuf,
    /// This loader's shard, 0 to the order's shards − 1.
    #[arg(long)]
    pub index: u64,
    /// This loader's result file.
    #[arg(long)]
    pub out: PathBuf,
}

/// `cqlbench shard ORDER --index I --out FILE`: the order's task as shard I of it, run as the
/// command it stands for (`run`, `fill` or `capacity`) would run it.
fn shard(a: ShardArgs) -> anyhow::Result<()> {
    use crate::step::order::{Order, Task};
    let order = Order::read(&a.order)?;
    match order.for_shard(a.index, a.out)? {
        Task::Run(r) => load_command(&r, "run", |ctx| steps::run::execute(&r, ctx)),
        Task::Fill(f) => load_command(&f.run, "fill", |ctx| steps::fill::run(&f, ctx)),
        Task::Capacity(c) => capacity(&c),
        Task::Probe(p) => probe_json(&p.probe),
    }
}

/// `cqlbench probe --json`: silent but for the result, so that a pod's log (stdout and
/// stderr) is the JSON alone.
fn probe_json(a: &ProbeStep) -> anyhow::Result<()> {
    let ctx = context(None, true).with_sink(registering(Arc::new(|_| {})));
    let result = steps::probe::run(a, &ctx)?;
    println!("{}", serde_json::to_string(&result)?);
    Ok(())
}

/// `cqlbench capacity`: the search, or with `--shard I/N` (I > 0) a follower of the search
/// shard 0 runs.
fn capacity(a: &CapacityStep) -> anyhow::Result<()> {
    load_command(&a.run, "capacity", |ctx| match a.run.shard {
        Some(s) if s.index > 0 => steps::capacity::follow(a, ctx).map(drop),
        _ => steps::capacity::run(a, ctx).map(drop),
    })
}

/// The directory cqlbench keeps its state in: `$CQLBENCH_HOME` if set, else
/// `<user data dir>/cqlbench` (e.g. `~/.local/share/cqlbench`).
pub fn home() -> PathBuf {
    if let Some(dir) = std::env::var_os("CQLBENCH_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    dirs::data_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("cqlbench")
}

/// The directory holding local clusters: `dir` (a `--dir` flag), else
/// `$CQLBENCH_CLUSTERS_DIR`, else `<cqlbench home>/clusters`.
pub fn clusters_dir(dir: Option<&Path>) -> PathBuf {
    if let Some(d) = dir {
        return d.to_path_buf();
    }
    if let Some(d) = std::env::var_os("CQLBENCH_CLUSTERS_DIR").filter(|v| !v.is_empty()) {
        return PathBuf::from(d);
    }
    home().join("clusters")
}

/// Where local clusters' jars are cached (`<home>/cache`) and the `java` that runs them:
/// `$JAVA_HOME/bin/java`, else the first `java` on `PATH`.
pub fn toolchain() -> crate::cluster::dist::Toolchain {
    let java = match std::env::var_os("JAVA_HOME").filter(|v| !v.is_empty()) {
        Some(h) => PathBuf::from(h).join("bin/java"),
        None => std::env::var_os("PATH")
            .and_then(|path| {
                std::env::split_paths(&path)
                    .map(|d| d.join("java"))
                    .find(|j| j.is_file())
            })
            .unwrap_or_else(|| "java".into()),
    };
    crate::cluster::dist::Toolchain {
        cache: home().join("cache"),
        java,
        on_fetch: Some(|what| eprintln!("{what}")),
    }
}

/// Moves this process into network namespace `ns` for the rest of the command: every
/// thread and child it starts from now on is there (as under `ip netns exec`). A command
/// enters one namespace: a second, different one is refused.
pub fn enter_netns(ns: &str) -> anyhow::Result<()> {
    if let Some(current) = NETNS.get() {
        if current == ns {
            return Ok(());
        }
        anyhow::bail!("this command already runs in network namespace '{current}', not '{ns}'");
    }
    crate::netns::enter(ns)?.keep();
    let _ = NETNS.set(ns.to_string());
    Ok(())
}

/// The namespace [`enter_netns`] moved this process into.
pub fn entered_netns() -> Option<String> {
    NETNS.get().cloned()
}

static NETNS: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Enters the namespace a load command runs in: `--netns`, else, for a lab cluster
/// (`--cluster`), the lab's first loader namespace.
fn enter_load_netns(a: &steps::RunStep) -> anyhow::Result<()> {
    enter_netns_for(a.netns.as_deref(), a.cluster.as_deref())
}

/// Enters `netns` if given, else, for a lab `cluster`, the lab's first loader namespace.
pub fn enter_netns_for(netns: Option<&str>, cluster: Option<&str>) -> anyhow::Result<()> {
    if let Some(ns) = netns {
        return enter_netns(ns);
    }
    // Started inside a namespace already (`ip netns exec`, or a loader's parent): stay.
    if crate::netns::current().is_some() {
        return Ok(());
    }
    let lab_client = cluster
        .and_then(|name| crate::cluster::Cluster::open(&clusters_dir(None), name).ok())
        .and_then(|c| c.client_netns());
    match lab_client {
        Some(ns) => enter_netns(&ns),
        None => Ok(()),
    }
}

/// A command's context: the home and clusters directories, the signal-driven cancellation
/// token, the tools and credentials the environment names, and a console printing events
/// (only final tables and verdicts with `quiet`).
pub fn context(clusters: Option<&Path>, quiet: bool) -> Context {
    let env_path = |name: &str, default: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map_or_else(|| PathBuf::from(default), PathBuf::from)
    };
    let mut ctx = Context::new(&home(), &clusters_dir(clusters))
        .with_cancel(signals::token())
        .with_sink(registering(Console::new(quiet).sink()));
    ctx.fio = env_path("CQLBENCH_FIO", "fio");
    ctx.sysbench = env_path("CQLBENCH_SYSBENCH", "sysbench");
    ctx.credentials = crate::load::session::Credentials::from_env_values(
        std::env::var("CQLBENCH_USERNAME").ok(),
        std::env::var("CQLBENCH_PASSWORD").ok(),
    );
    ctx.exe = std::env::current_exe().ok();
    ctx.toolchain = toolchain();
    ctx.netns = entered_netns().or_else(crate::netns::current);
    ctx
}

/// `ctx` with its events served as live metrics at `listen` too (none: `ctx` as it is), and
/// the endpoint, which serves as long as it is held.
pub fn with_live(
    ctx: Context,
    listen: Option<std::net::SocketAddr>,
    labels: crate::live::Labels,
) -> anyhow::Result<(Context, Option<Arc<crate::live::Live>>)> {
    let Some(addr) = listen else {
        return Ok((ctx, None));
    };
    let live = crate::live::Live::listen(addr, labels)?;
    eprintln!("live metrics: http://{}/metrics", live.addr());
    let sink = live.tee(ctx.sink());
    Ok((ctx.with_sink(sink), Some(live)))
}

/// Keeps the live endpoint serving for `linger` (`--metrics-linger`) once the command is done.
fn linger(live: Option<&crate::live::Live>, linger: Option<std::time::Duration>) {
    if let (Some(_), Some(d)) = (live, linger) {
        std::thread::sleep(d);
    }
}

/// A command that drives load: its context (with the live endpoint, if asked for), the step
/// `body`, then, when it succeeded, the endpoint kept up for `--metrics-linger`.
fn load_command<T>(
    a: &steps::RunStep,
    name: &str,
    body: impl FnOnce(&Context) -> Result<T, ScenarioError>,
) -> anyhow::Result<()> {
    enter_load_netns(a)?;
    let (ctx, live) = load_context(a, name)?;
    let done = body(&ctx);
    // A scraper reads the final figures of a command that finished; a failed one has none.
    if done.is_ok() {
        linger(live.as_deref(), a.metrics_linger);
    }
    step(done)
}

/// The context of a command that drives load (`step` names it in the live metrics' labels).
fn load_context(
    a: &steps::RunStep,
    step: &str,
) -> anyhow::Result<(Context, Option<Arc<crate::live::Live>>)> {
    let labels = crate::live::Labels {
        run: None,
        env: a.env_label(),
        step: step.into(),
    };
    with_live(context(None, a.quiet), a.metrics_listen, labels)
}

/// `inner`, and every result file an event says is written added to the runs index,
/// so that `cqlbench runs` lists a result written anywhere (`--out /elsewhere/r.json`), not
/// only under the home's directories. An index that cannot take it is a warning: the
/// result file is what counts.
fn registering(inner: crate::scenario::Sink) -> crate::scenario::Sink {
    Arc::new(move |e: &crate::scenario::Event| {
        inner(e);
        if let crate::scenario::Event::ResultAt { path, .. } = e
            && path.is_file()
        {
            let added = runs::open(&home()).and_then(|c| Ok(c.add_file(path)?));
            if let Err(err) = added {
                eprintln!(
                    "warning: the runs index did not take {}: {err}",
                    path.display()
                );
            }
        }
    })
}

/// A library step's outcome as the command's: interrupted runs exit 130 (SIGINT's code).
fn step<T>(r: Result<T, ScenarioError>) -> anyhow::Result<()> {
    r.map(drop).map_err(anyhow::Error::from)
}

/// Runs one parsed command.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    if let Command::Probe(a) = &cli.command
        && let Some(ns) = &a.netns
    {
        enter_netns(ns)?;
    }
    match cli.command {
        Command::Cluster(cmd) => cluster::run(*cmd),
        Command::Quickstart(args) => quickstart::run(args),
        Command::Run(a) => load_command(&a, "run", |ctx| steps::run::execute(&a, ctx)),
        Command::Throughput(a) => load_command(&a, "throughput", |ctx| {
            steps::throughput::throughput(&a, ctx)
        }),
        Command::Latency(a) => {
            load_command(&a, "latency", |ctx| steps::throughput::latency(&a, ctx))
        }
        Command::Capacity(a) => capacity(&a),
        Command::Fill(a) => load_command(&a.run, "fill", |ctx| steps::fill::run(&a, ctx)),
        Command::Scenario(args) => scenario::run(args),
        Command::Probe(a) if a.json => probe_json(&a),
        Command::Probe(a) => step(steps::probe::run(&a, &context(None, false))),
        Command::Cost(args) => cost::run_cost(args),
        Command::Plan(args) => cost::run_plan(args),
        Command::Report(mut args) => {
            args.results = runs::resolve_paths(&args.results)?;
            let index = match args.history {
                Some(_) => {
                    let mut c = runs::open(&home())?;
                    c.sync()?;
                    Some(c)
                }
                None => None,
            };
            if let Some(text) = steps::report::run(&args, index.as_ref())? {
                print!("{text}");
            }
            Ok(())
        }
        Command::Compare(args) => compare::run(args),
        Command::Runs(args) => runs::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Profile(args) => profile::run(args),
        Command::Metrics(cmd) => metrics::run(cmd),
        Command::Shard(a) => shard(a),
        #[cfg(feature = "k8s")]
        Command::K8s(cmd) => k8s::run(cmd),
        #[cfg(not(feature = "k8s"))]
        Command::K8s { .. } => {
            Err(crate::error::not_built("cqlbench k8s", "the Kubernetes client", "k8s").into())
        }
    }
}

/// An error and its causes on one line, joined by ": ", each said once (a cause whose text
/// an error already ends with is not repeated).
pub fn one_line(err: &anyhow::Error) -> String {
    let mut line = err.to_string();
    for cause in err.chain().skip(1) {
        let text = cause.to_string();
        if !line.ends_with(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
    }
    line
}

/// A console of its own for commands that print a library event or two.
pub fn console() -> Arc<Console> {
    Console::new(false)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::{Cli, Command};
    use crate::scenario::steps::{CapacityStep, ClusterOptions, FillStep, ProbeStep, RunStep, de};

    #[test]
    fn command_line_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }

    fn cli(args: &[&str]) -> Command {
        Cli::try_parse_from(std::iter::once("cqlbench").chain(args.iter().copied()))
            .unwrap()
            .command
    }

    fn yaml<T: serde::de::DeserializeOwned>(text: &str) -> T {
        de::from_value(crate::yaml::from_str(text).unwrap()).unwrap()
    }

    /// A key left out of a scenario step means what the flag left out means.
    #[test]
    fn file_defaults_are_the_command_line_defaults() {
        let Command::Run(flags) = cli(&["run", "keyvalue"]) else {
            panic!()
        };
        let keys: RunStep = yaml("workload: keyvalue");
        assert_eq!(format!("{flags:?}"), format!("{keys:?}"));

        let Command::Capacity(flags) = cli(&["capacity", "stress"]) else {
            panic!()
        };
        let keys: CapacityStep = yaml("workload: stress");
        assert_eq!(format!("{flags:?}"), format!("{keys:?}"));

        let Command::Fill(flags) = cli(&["fill", "stress", "--bytes", "10M"]) else {
            panic!()
        };
        let keys: FillStep = yaml("{workload: stress, bytes: 10M}");
        assert_eq!(format!("{flags:?}"), format!("{keys:?}"));

        let Command::Probe(flags) = cli(&["probe"]) else {
            panic!()
        };
        let keys: ProbeStep = yaml("{}");
        assert_eq!(format!("{flags:?}"), format!("{keys:?}"));

        let Command::Cluster(c) = cli(&["cluster", "create", "x"]) else {
            panic!()
        };
        let crate::cli::cluster::ClusterCommand::Create(flags) = *c else {
            panic!()
        };
        let keys: ClusterOptions = yaml("{}");
        assert_eq!(format!("{:?}", flags.options), format!("{keys:?}"));
    }

    /// Every step of every shipped scenario (each scale too, and the quickstart's), as the
    /// command line its plan prints (`→ cqlbench …`), parses with this CLI into the same
    /// typed step: a pasted step command runs what the scenario runs.
    #[test]
    fn every_shipped_step_command_parses_back_to_its_step() {
        use crate::scenario::file::{ScenarioFile, parse, plan_all};
        use crate::scenario::overrides::{Overrides, apply};
        use crate::scenario::steps::{Step, throughput::throughput_run};

        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("scenarios"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        files.sort();
        files.push(root.join("src/cli/quickstart.yaml"));
        let mut checked = std::collections::BTreeMap::<&str, usize>::new();
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap();
            let base = parse(&text).unwrap();
            let scales = std::iter::once(None).chain(base.scales.keys().cloned().map(Some));
            let variants: Vec<(Option<String>, ScenarioFile)> = scales
                .map(|scale| {
                    let mut f = base.clone();
                    let o = Overrides {
                        scale: scale.clone(),
                        ..Default::default()
                    };
                    apply(&mut f, &o).unwrap();
                    (scale, f)
                })
                .collect();
            for (scale, f) in variants {
                let m = plan_all(&f, std::path::Path::new("/results")).unwrap();
                for s in m.envs.iter().flat_map(|e| &e.steps) {
                    let at = format!("{} {scale:?} step {}", file.display(), s.name);
                    let line = s.step.describe();
                    if matches!(s.step, Step::Scaling(_) | Step::Smoke(_)) {
                        assert!(!line.starts_with("cqlbench"), "{at}: {line}");
                        *checked.entry("scenario-only").or_default() += 1;
                        continue;
                    }
                    // What a shell makes of the printed line.
                    let words = shlex::split(&line).unwrap_or_else(|| panic!("{at}: {line}"));
                    let parsed = Cli::try_parse_from(&words)
                        .unwrap_or_else(|e| panic!("{at}: `{line}` does not parse: {e}"))
                        .command;
                    let mut same = |kind: &'static str, a: String, b: String| {
                        assert_eq!(a, b, "{at}: `{line}` parses to another {kind} step");
                        *checked.entry(kind).or_default() += 1;
                    };
                    match (&s.step, parsed) {
                        (Step::Run(r), Command::Run(p)) => {
                            same("run", format!("{r:?}"), format!("{p:?}"))
                        }
                        (Step::Throughput(r), Command::Throughput(p)) => same(
                            "throughput",
                            format!("{:?}", throughput_run(r)),
                            format!("{:?}", throughput_run(&p)),
                        ),
                        (Step::Latency(r), Command::Latency(p)) => {
                            same("latency", format!("{r:?}"), format!("{p:?}"))
                        }
                        (Step::Capacity(c), Command::Capacity(p)) => {
                            same("capacity", format!("{c:?}"), format!("{p:?}"))
                        }
                        (Step::Fill(f), Command::Fill(p)) => {
                            same("fill", format!("{f:?}"), format!("{p:?}"))
                        }
                        (Step::Probe(x), Command::Probe(p)) => {
                            same("probe", format!("{x:?}"), format!("{p:?}"))
                        }
                        (_, other) => panic!("{at}: `{line}` parses to {other:?}"),
                    }
                }
            }
        }
        // The shipped files hold every step kind that has a command of its own.
        for kind in ["throughput", "latency", "capacity", "fill", "probe"] {
            assert!(
                checked.contains_key(kind),
                "no {kind} step checked: {checked:?}"
            );
        }
    }

    /// The same values given as flags and as keys make the same spec.
    #[test]
    fn flags_and_keys_make_the_same_spec() {
        let Command::Latency(flags) = cli(&[
            "latency",
            "tabular",
            "--rate",
            "35%",
            "--of",
            "t.json",
            "--rf",
            "dc1:3,dc2:1",
            "--consistency",
            "local_quorum",
            "--hosts",
            "10.0.0.1,10.0.0.2:9043",
            "--duration",
            "90s",
            "--ratio",
            "write=1,range=3",
            "--prometheus",
            "a:9500,b:9500",
            "--fault",
            "30s:hook:true",
            "--fault",
            "60s:hook:echo a b",
        ]) else {
            panic!()
        };
        let keys: RunStep = yaml(
            "{workload: tabular, rate: 35%, of: t.json, rf: 'dc1:3,dc2:1', consistency: LOCAL_QUORUM,
              hosts: [10.0.0.1, '10.0.0.2:9043'], duration: 90s, ratio: 'write=1,range=3',
              prometheus: 'a:9500,b:9500', fault: ['30s:hook:true', '60s:hook:echo a b']}",
        );
        assert_eq!(format!("{flags:?}"), format!("{keys:?}"));
        flags.validate().unwrap();
    }

    /// What each loader of a `capacity --loaders 2` step runs: the search's run at the step's
    /// whole rate or concurrency, `--step` long, the rampup in the first step only; its
    /// own `--shard` takes its share (half the rate; 3 and 2 of 5 in flight).
    #[test]
    fn each_loader_of_a_capacity_step_runs_its_share_of_the_step() {
        use crate::capacity::Level;
        use crate::load::RunPlan;
        use crate::spec::{LoadMode, Stop};
        use crate::step::order::{Order, Task};
        let Command::Capacity(cap) = cli(&[
            "capacity",
            "keyvalue",
            "--hosts",
            "127.0.0.1:1",
            "--dc",
            "dc1",
            "--rows",
            "1000",
            "--loaders",
            "2",
            "--step",
            "20s",
            "--step-warmup",
            "5s",
        ]) else {
            panic!()
        };
        let dir = tempfile::tempdir().unwrap();
        let ctx = crate::scenario::Context::new(dir.path(), dir.path());
        let shard = |level: Level, index: usize, share: &str| -> RunPlan {
            // What the loader reads: the order, through its JSON, then its own shard.
            let run = cap.loader_run(index, level).unwrap();
            assert_eq!(run.loaders, None);
            let order = Order::new("r-s01".into(), 2, Task::Run(Box::new(run)));
            let order = Order::from_json(&order.to_json(), "order").unwrap();
            let i: u64 = share[..1].parse().unwrap();
            let task = order.for_shard(i, "x.json".into()).unwrap();
            task.run().unwrap().to_plan(&ctx).unwrap()
        };
        let first = shard(Level::Rate(3000.0), 1, "1/2");
        assert!(
            matches!(first.main.mode, LoadMode::Open { rate_per_s, .. } if rate_per_s == 1500.0),
            "{:?}",
            first.main.mode
        );
        assert_eq!(first.main.stop, Stop::Duration { secs: 20.0 });
        assert_eq!(first.main.warmup_s, 5.0);
        assert!(first.rampup.is_some(), "the first step loads the rows");
        assert_eq!(first.shard.as_ref().unwrap().run_id, "r-s01");
        let later = shard(Level::Rate(4500.0), 2, "0/2");
        assert!(later.rampup.is_none(), "later steps do not");
        assert!(
            later.threads_by_rate,
            "no --threads: the step's rate picks them"
        );
        assert!(
            matches!(later.main.mode, LoadMode::Open { rate_per_s, .. } if rate_per_s == 2250.0)
        );
        let closed: Vec<LoadMode> = ["0/2", "1/2"]
            .map(|s| shard(Level::Concurrency(5), 3, s).main.mode)
            .to_vec();
        assert_eq!(
            closed,
            [
                LoadMode::Closed { concurrency: 3 },
                LoadMode::Closed { concurrency: 2 }
            ]
        );
    }
}
