//! Command-line definitions. Each command lives in its own file and converts its arguments
//! into specs; the library does the work.

use clap::{Parser, Subcommand};

pub mod cluster;
pub mod compare;
pub mod cost;
pub mod k8s;
pub mod merge;
pub mod profile;
pub mod quickstart;
pub mod scenario;
pub mod verify;

use crate::scenario::steps::{self, CapacityStep, FillStep, ProbeStep, ReportStep, RunStep};

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
    /// Is run B better, worse or not distinguishable from run A, per metric.
    Compare(compare::CompareArgs),
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
    /// Kubernetes manifests and their kubectl workflow: `loaders` renders N `cqlbench run`
    /// shards as an Indexed Job.
    #[command(subcommand)]
    K8s(k8s::K8sCommand),
}

/// Where the commands look local clusters up: $CQLBENCH_CLUSTERS_DIR, else the home's.
fn clusters() -> std::path::PathBuf {
    crate::cluster::clusters_root(None)
}

/// Runs one parsed command.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Cluster(cmd) => cluster::run(*cmd),
        Command::Quickstart(args) => quickstart::run(args),
        Command::Run(a) => steps::run::execute(&a, &clusters()).map(drop),
        Command::Throughput(a) => steps::throughput::throughput(&a, &clusters()).map(drop),
        Command::Latency(a) => steps::throughput::latency(&a, &clusters()).map(drop),
        Command::Capacity(a) => steps::capacity::run(&a, &clusters()).map(drop),
        Command::Fill(a) => steps::fill::run(&a, &clusters()).map(drop),
        Command::Scenario(args) => scenario::run(args),
        Command::Probe(a) => steps::probe::run(&a, &clusters()).map(drop),
        Command::Cost(args) => cost::run_cost(args),
        Command::Plan(args) => cost::run_plan(args),
        Command::Report(args) => steps::report::run(&args),
        Command::Compare(args) => compare::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Profile(args) => profile::run(args),
        Command::K8s(cmd) => k8s::run(cmd),
    }
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
        de::from_value(serde_yaml::from_str(text).unwrap()).unwrap()
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
}
