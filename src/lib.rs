//! cqlbench: benchmarking and capacity planning for Apache Cassandra deployments.
//!
//! The library holds every capability; the binary in `main.rs` is a thin shell over [`cli`].
//! Data flows one way (DESIGN.md's pipeline): specs → cluster → load → stats/metrics →
//! results → report/cost.
//!
//! # Layers
//!
//! Each module may import (`crate::…`) only the modules on the lines above its own; modules on
//! one line are peers and do not import each other. `tests/layers.rs` reads this block and
//! fails on any import against it, naming the file and line: change the order here and in the
//! code together, deliberately. (DESIGN.md's list is the first draft of this one: here the
//! price catalogue (`prices`) sits below the clusters that price their emulated disks while
//! pricing over results (`cost`) stays high, fault schedules sit below the load engine that
//! runs them, and the shard barrier inside the load engine.)
//!
//! ```text
//! error  the one-line error of refused input
//! format, fsutil, spill, host, netns, cancel, yaml, testutil  leaves: YAML in and out; numbers, money, times and tables for people; atomic files and output paths; items a long run keeps on disk instead of in memory; this host's facts and clocks; network namespaces by name; a cancellation token; golden files in tests
//! spec  persisted, versioned specs that validate themselves
//! prices  the price catalogue: instances, disks and their formulas, read and checked
//! tls, lab  client TLS configurations, handshake failures in words, a local cluster's certificate authority; network labs (namespaces, bridges, NAT, partitions)
//! stats  HDR recording, intervals, summaries, written-cycle sets, comparisons
//! result  every persisted output and its one versioned reader/writer (the narrow waist)
//! step  steps as typed input: flags, scenario keys and the versioned order a loader process or pod receives
//! runs_index  the results index behind `cqlbench runs` (SQLite): rebuilt from the result files, listed and filtered
//! metrics  sources (local /proc, JMX exporter, K8ssandra, Prometheus) into one series model
//! cluster  local clusters: plan, render, dist (jars, JDKs), process, state
//! target  where a run goes and what can be observed there
//! fault  fault schedules applied to a target during a run
//! workload  the workloads: schema, statements, operations, row images
//! load  the load engine: scheduler, executor, session, barrier
//! verify  reading acknowledged writes back
//! shards  one run over several loader processes: merging their results
//! capacity  the capacity search as a pure policy: the next step's level, each step's overload checks
//! probe, k8s  host characterisation; Kubernetes manifests
//! cost  pricing and planning over the price catalogue and results: a cluster's monthly cost, $ per 1,000 ops/s, candidate clusters
//! report  results into tables, Markdown, CSV and HTML
//! scenario  the methodologies and scenario files: steps run on a target, events and typed outcomes
//! console, live  renders events, progress and tables for a person (the only module below cli that prints); serves a run's live metrics for Prometheus (`--metrics-listen`)
//! cli, main  flags into specs, one command each; errors into one line and an exit code
//! ```

pub mod cancel;
pub mod capacity;
pub mod cli;
pub mod cluster;
pub mod console;
pub mod cost;
pub mod error;
pub mod fault;
pub mod format;
pub mod fsutil;
pub mod host;
#[cfg(feature = "k8s")]
pub mod k8s;
pub mod lab;
pub mod live;
pub mod load;
pub mod metrics;
pub mod netns;
pub mod prices;
pub mod probe;
pub mod report;
pub mod result;
pub mod runs_index;
pub mod scenario;
pub mod shards;
pub mod spec;
pub mod spill;
pub mod stats;
pub mod step;
pub mod target;
pub mod tls;
pub mod verify;
pub mod workload;
pub mod yaml;

#[cfg(test)]
pub(crate) mod testutil;
