//! Everything a scenario, a step or a command tells a person while it runs, as data: the
//! console renders these ([`crate::console`]); the library never prints.

use std::path::Path;

use super::capacity::Progress;
use super::file::Matrix;
use super::steps::throughput::IntervalThroughput;
use crate::result::capacity::CapacityResult;
use crate::result::probe::ProbeResult;
use crate::result::{RunResult, ScalingResult};

/// One thing that happened.
pub enum Event<'a> {
    /// The whole scenario as planned, before anything starts.
    Planned {
        matrix: &'a Matrix,
    },
    /// With `--resume`: what is left to run.
    Remaining {
        estimate_s: f64,
    },
    /// An environment of a comparison begins.
    Environment {
        label: &'a str,
        index: usize,
        count: usize,
    },
    Cluster(ClusterEvent<'a>),
    /// A step begins: its position, name and the command line that does the same.
    StepStarted {
        index: usize,
        count: usize,
        name: &'a str,
        command_line: &'a str,
        /// Only its final table is wanted (`quiet`).
        quiet: bool,
    },
    /// With `--resume`: a step whose result was complete is kept.
    StepKept {
        index: usize,
        count: usize,
        name: &'a str,
    },
    /// Where a step's result goes (`what`: "result", "capacity result", …), said first and
    /// again once it is written.
    ResultAt {
        what: &'static str,
        path: &'a Path,
    },
    /// The load engine's events of a run (phases, intervals).
    Load(crate::load::Event<'a>),
    /// A run ended: its result (the final table is rendered from it).
    RunDone {
        result: &'a RunResult,
    },
    /// A throughput run's per-interval throughput.
    IntervalThroughput(&'a IntervalThroughput),
    Loaders(LoadersEvent<'a>),
    /// The capacity search's progress (settling, steps, their checks, the runs' intervals).
    Capacity(Progress<'a>),
    /// A capacity search without metrics endpoints: some criteria cannot be measured; node
    /// CPU still can when node exporters are given.
    CapacityWithoutMetrics {
        node_exporters: bool,
    },
    CapacityDone {
        result: &'a CapacityResult,
    },
    Fill(FillEvent<'a>),
    Probe(ProbeEvent<'a>),
    Scaling(ScalingEvent<'a>),
    /// A local cluster's status, node by node.
    ClusterStatus {
        cluster: &'a crate::cluster::Cluster,
        nodes: &'a [crate::cluster::status::NodeStatus],
    },
    /// A smoke check (written and read back at QUORUM) ended.
    Smoke(&'a crate::cluster::smoke::SmokeReport),
    /// The report of the scenario's results was written; `text` is its terminal form.
    Report {
        txt: &'a Path,
        html: &'a Path,
        text: &'a str,
    },
    /// The scenario ended: how long it took against its estimate.
    Finished {
        took_s: f64,
        estimate_s: f64,
        dir: &'a Path,
    },
    /// A run's nodes' and their hosts' series were fetched from a Prometheus server after it:
    /// what was found and what was not.
    SeriesFetched {
        fetched: &'a crate::result::series::Fetched,
    },
    /// Something went wrong that does not stop the scenario.
    Warning(Warning<'a>),
}

/// A local cluster's lifecycle, as the scenario drives it.
pub enum ClusterEvent<'a> {
    Reused {
        name: &'a str,
        dir: &'a Path,
    },
    Created {
        name: &'a str,
        nodes: usize,
        /// "Cassandra 4.1.10 on Java 11.0.13".
        software: String,
        heap: &'a str,
    },
    Started {
        name: &'a str,
        nodes: &'a [String],
        secs: f64,
    },
    /// Stopping: at the end of its environment, or before a scaling step (which has the host
    /// to itself).
    Stopping {
        name: &'a str,
        for_scaling: bool,
    },
    /// A node failed to start: the end of its log.
    LogTail {
        tail: &'a str,
    },
}

/// `--loaders N`: the shard processes of one run.
pub enum LoadersEvent<'a> {
    Started {
        count: u64,
        run_id: &'a str,
    },
    Shard {
        index: u64,
        count: u64,
        out: &'a Path,
        log: &'a Path,
    },
    Merged {
        count: u64,
        start_spread_ms: f64,
        out: &'a Path,
    },
    /// `capacity --shard I/N`, I > 0: this machine follows the search shard 0 runs.
    Following {
        share: crate::spec::load::Share,
        run_id: &'a str,
    },
    /// … and runs its shard of a step shard 0 published.
    FollowStep {
        step: usize,
        level: &'a str,
        step_run: &'a str,
    },
    /// … until shard 0 ended the search.
    Followed {
        share: crate::spec::load::Share,
        run_id: &'a str,
        steps: usize,
    },
}

/// A fill's progress.
pub enum FillEvent<'a> {
    /// The load engine's events of the fill's run (the console shows `Writing` instead).
    Run(crate::load::Event<'a>),
    Started {
        target_mib: f64,
        out: &'a Path,
    },
    /// The nodes' mean load, read from their metrics.
    NodeLoad {
        mib: f64,
        target_mib: f64,
    },
    /// Every 5 s of writing.
    Writing {
        at_s: f64,
        ops_per_s: f64,
    },
    Wrote {
        rows: u64,
        mean_mib: f64,
    },
    NotReached {
        within_s: f64,
    },
    WaitingForCompactions {
        timeout_s: f64,
    },
    Pending {
        compactions: f64,
    },
    Compacted {
        after_s: f64,
        pending: Option<f64>,
    },
}

/// A probe's progress.
pub enum ProbeEvent<'a> {
    /// Measuring a data centre's emulated disk.
    Disk {
        dc: &'a str,
        node: &'a str,
        class: &'a str,
    },
    /// Pinned to the cluster's CPUs.
    Pinned {
        cpus: &'a [usize],
    },
    /// One line of the probe's own progress.
    Progress(&'a str),
    Done {
        result: &'a ProbeResult,
    },
}

/// A scaling step's sizes.
pub enum ScalingEvent<'a> {
    /// Size `nodes` begins on cluster `cluster`.
    Size {
        nodes: usize,
        cluster: &'a str,
    },
    /// With `--resume`: size `nodes` was searched before; its result `file` is kept.
    SizeKept {
        nodes: usize,
        file: &'a str,
    },
    Done {
        result: &'a ScalingResult,
    },
}

/// What went wrong without stopping anything.
pub enum Warning<'a> {
    StopFailed {
        cluster: &'a str,
        error: String,
    },
    DestroyFailed {
        cluster: &'a str,
        error: String,
    },
    /// Fetching a run's hosts' series from a Prometheus server failed (the run's result is
    /// kept as written): the error names the server and what it answered.
    FetchFailed {
        error: String,
    },
    /// Nodes the CQL metrics reader did not reach (down, or out of the client's reach): left
    /// out of the nodes whose figures the command reads.
    Unreached {
        nodes: Vec<String>,
    },
}
