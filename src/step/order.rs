//! What a loader is sent: one shard of a run or of a capacity search, as a versioned JSON
//! document. `--loaders N` and each step of a `capacity --loaders N` search write it beside
//! their result (`NAME.order.json`) and start `cqlbench shard NAME.order.json --index I --out
//! …` per loader; `k8s loaders` puts it in a ConfigMap every pod mounts. The step inside is
//! the same typed step the command line and scenario files build ([`RunStep`],
//! [`CapacityStep`]), read back through the same value parsers, so a loader refuses exactly
//! what `cqlbench run` would.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{CapacityStep, FillStep, ProbeStep, RunStep};
use crate::error::Invalid;
use crate::spec::load::Share;

/// The version this cqlbench writes and reads; an order from a newer one is refused.
pub const VERSION: u32 = 1;

/// One run (or capacity search) split into `shards` loaders, all meeting under `run_id`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Order {
    pub version: u32,
    /// The run the shards belong to: they meet under it at the barrier.
    pub run_id: String,
    /// How many loaders the run has (each gets its own index, 0 to shards − 1).
    pub shards: u64,
    pub task: Task,
    /// Each loader serves its live metrics here (`--metrics-listen`, kept out of the step's
    /// keys: a scenario's steps share one endpoint), and for this long after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::de::opt_duration",
        serialize_with = "super::argv::opt_duration"
    )]
    pub metrics_linger: Option<std::time::Duration>,
}

/// What every loader of the order runs (its shard, run id and result path set per loader).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Task {
    /// `cqlbench run`: one shard of a run.
    Run(Box<RunStep>),
    /// `cqlbench fill`: one shard of a fill (each writes its share of new rows).
    Fill(Box<FillStep>),
    /// `cqlbench capacity`: one shard of a search that shard 0 coordinates.
    Capacity(Box<CapacityStep>),
    /// `cqlbench probe --json`: loader I probes the host it runs on, its result named
    /// `envs[I]` (`k8s probe`: one Job per node, named after it).
    Probe(Box<ProbeTask>),
}

/// A probe of each of several hosts, one loader each.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ProbeTask {
    pub probe: ProbeStep,
    /// Each loader's environment label, by its index.
    pub envs: Vec<String>,
}

impl Task {
    /// The run part of the task (workload, target, client, sampling); a probe has none.
    pub fn run(&self) -> Option<&RunStep> {
        match self {
            Task::Run(r) => Some(r),
            Task::Fill(f) => Some(&f.run),
            Task::Capacity(c) => Some(&c.run),
            Task::Probe(_) => None,
        }
    }

    pub fn run_mut(&mut self) -> Option<&mut RunStep> {
        match self {
            Task::Run(r) => Some(r),
            Task::Fill(f) => Some(&mut f.run),
            Task::Capacity(c) => Some(&mut c.run),
            Task::Probe(_) => None,
        }
    }

    pub fn is_capacity(&self) -> bool {
        matches!(self, Task::Capacity(_))
    }

    /// The task of `args`, read by the command's own parser: what follows `cqlbench run`
    /// (`WORKLOAD --flag …`), or `capacity WORKLOAD …` for a capacity search. A refusal is
    /// clap's first line, e.g. `unexpected argument '--rat' found`.
    pub fn from_args(args: &[String]) -> Result<Task, Invalid> {
        use super::parse_args as parse;
        match args.split_first() {
            Some((first, rest)) if first == "capacity" => {
                Ok(Task::Capacity(Box::new(parse("capacity", rest)?)))
            }
            _ => Ok(Task::Run(Box::new(parse("run", args)?))),
        }
    }
}

impl Order {
    /// The order of `task` (its live-metrics options included) for `shards` loaders.
    pub fn new(run_id: String, shards: u64, task: Task) -> Order {
        Order {
            version: VERSION,
            run_id,
            shards,
            metrics_listen: task.run().and_then(|r| r.metrics_listen),
            metrics_linger: task.run().and_then(|r| r.metrics_linger),
            task,
        }
    }

    /// The document: JSON, options left unset omitted.
    pub fn to_json(&self) -> String {
        let mut v = serde_json::to_value(self).expect("an order serialises");
        drop_nulls(&mut v);
        serde_json::to_string_pretty(&v).expect("a JSON value serialises")
    }

    /// Reads a document written by [`Self::to_json`]; `what` names it in errors.
    pub fn from_json(text: &str, what: &str) -> Result<Order, Invalid> {
        let v: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| crate::invalid!("{what}: not a cqlbench order ({e})"))?;
        if let Some(version) = v.get("version").and_then(|x| x.as_u64())
            && version > u64::from(VERSION)
        {
            return Err(crate::invalid!(
                "{what}: order version {version} was written by a newer cqlbench (this one reads {VERSION}): run the same cqlbench on every loader"
            ));
        }
        super::de::from_value(v).map_err(|e| crate::invalid!("{what}: {e}"))
    }

    /// Reads the order in `path`.
    pub fn read(path: &Path) -> Result<Order, Invalid> {
        let what = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| crate::invalid!("cannot read the order {what}: {e}"))?;
        Order::from_json(&text, &what)
    }

    /// The task of loader `index`: its shard of the run, the run id and its result at `out`
    /// (quiet as the order's step says: `--loaders` makes its local loaders quiet, a pod's
    /// output is what `k8s run` streams).
    pub fn for_shard(&self, index: u64, out: PathBuf) -> Result<Task, Invalid> {
        if index >= self.shards {
            return Err(crate::invalid!(
                "--index {index}: the order has {} shards (0 to {})",
                self.shards,
                self.shards.saturating_sub(1)
            ));
        }
        let mut task = self.task.clone();
        if let Task::Probe(p) = &mut task {
            // A probe's log is its result alone, as JSON.
            p.probe.env = p.envs.get(index as usize).cloned().or(p.probe.env.take());
            p.probe.out = Some(out);
            p.probe.json = true;
            return Ok(task);
        }
        let run = task.run_mut().expect("a run, fill or capacity task");
        run.shard = Some(Share {
            index,
            count: self.shards,
        });
        run.run_id = Some(self.run_id.clone());
        run.out = Some(out);
        run.metrics_listen = self.metrics_listen;
        run.metrics_linger = self.metrics_linger;
        Ok(task)
    }
}

/// A run of keyvalue against `hosts`, for tests of what ships orders.
#[cfg(test)]
pub fn test_task(hosts: &str) -> Task {
    let v = serde_json::json!({"workload": "keyvalue", "hosts": hosts});
    Task::Run(Box::new(super::de::from_value(v).unwrap()))
}

/// Removes every `null` from objects: an unset option is left out of the document.
fn drop_nulls(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            m.values_mut().for_each(drop_nulls);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed<T: clap::Args + clap::FromArgMatches>(args: &[&str]) -> T {
        let cmd = T::augment_args(clap::Command::new("x").no_binary_name(true));
        let m = cmd.try_get_matches_from(args).unwrap();
        T::from_arg_matches(&m).unwrap()
    }

    /// Every option a person can give a run, set to something other than its default.
    const RUN: &[&str] = &[
        "tabular",
        "--hosts",
        "10.0.0.1:9042,db2",
        "--dc",
        "dc2",
        "--keyspace",
        "ks1",
        "--rf",
        "dc1:3,dc2:2",
        "--drop",
        "--table-options",
        "compaction = {'class': 'LeveledCompactionStrategy'}",
        "--rows",
        "5000",
        "--partsize",
        "7",
        "--value-size",
        "64",
        "--ratio",
        "write=1,read=3",
        "--key-dist",
        "zipf:1.1",
        "--verify",
        "--write-cl",
        "one",
        "--read-cl",
        "local_one",
        "--rate",
        "1500",
        "--max-in-flight",
        "64",
        "--send-window",
        "2ms",
        "--duration",
        "90s",
        "--warmup",
        "1500ms",
        "--threads",
        "2",
        "--timeout",
        "3s",
        "--tls-ca",
        "/ca.pem",
        "--tls-min-version",
        "1.3",
        "--retry",
        "none",
        "--compression",
        "lz4",
        "--connections-per-host",
        "2",
        "--page-size",
        "100",
        "--address-map",
        "10.0.0.1=198.18.0.1",
        "--max-errors",
        "9",
        "--rampup-concurrency",
        "16",
        "--prometheus",
        "10.0.0.1:7070",
        "--metrics-interval",
        "2s",
        "--fault",
        "30s:kill:node2",
        "--barrier-timeout",
        "2m",
        "--env",
        "lab",
        "--tag",
        "a,b",
    ];

    fn json(t: &Task) -> serde_json::Value {
        let mut v = serde_json::to_value(t).unwrap();
        drop_nulls(&mut v);
        v
    }

    #[test]
    fn a_run_order_reads_back_as_the_same_step() {
        let run: RunStep = parsed(RUN);
        let order = Order::new("r1".into(), 3, Task::Run(Box::new(run)));
        let text = order.to_json();
        assert!(!text.contains("null"), "{text}");
        let back = Order::from_json(&text, "o.json").unwrap();
        assert_eq!(back.run_id, "r1");
        assert_eq!(back.shards, 3);
        assert_eq!(json(&back.task), json(&order.task), "{text}");
        // The flags give the same step as the document: every value survived.
        assert_eq!(
            back.task.run().unwrap().args("run"),
            order.task.run().unwrap().args("run")
        );
    }

    #[test]
    fn a_capacity_order_reads_back_as_the_same_search() {
        let mut args = RUN.to_vec();
        args.retain(|a| !["--rate", "1500", "--duration", "90s", "--fault"].contains(a));
        args.retain(|a| *a != "30s:kill:node2");
        args.extend([
            "--start-concurrency",
            "8",
            "--increment",
            "8",
            "--max-latency",
            "read:p99:40ms",
            "--max-pending",
            "off",
            "--refine",
            "2",
        ]);
        let cap: CapacityStep = parsed(&args);
        let order = Order::new("r2".into(), 2, Task::Capacity(Box::new(cap)));
        let back = Order::from_json(&order.to_json(), "o.json").unwrap();
        let (Task::Capacity(a), Task::Capacity(b)) = (&back.task, &order.task) else {
            panic!("a capacity task");
        };
        assert_eq!(a.args(), b.args());
        assert!(a.args().contains(&"read:p99:40ms".to_string()));
    }

    #[test]
    fn each_loader_gets_its_shard_run_id_and_result() {
        let run: RunStep = parsed(&["keyvalue", "--hosts", "db1"]);
        let order = Order::new("r3".into(), 4, Task::Run(Box::new(run)));
        let t = order.for_shard(2, "/r/x.shard-2.json".into()).unwrap();
        let r = t.run().unwrap();
        assert_eq!(r.shard, Some(Share { index: 2, count: 4 }));
        assert_eq!(r.run_id.as_deref(), Some("r3"));
        assert_eq!(r.out.as_deref(), Some(Path::new("/r/x.shard-2.json")));
        let e = order.for_shard(4, "/r/x.json".into()).unwrap_err();
        assert_eq!(e.to_string(), "--index 4: the order has 4 shards (0 to 3)");
    }

    #[test]
    fn a_bad_or_newer_order_is_refused_in_one_line() {
        let run: RunStep = parsed(&["keyvalue"]);
        let good = Order::new("r4".into(), 2, Task::Run(Box::new(run))).to_json();
        for (text, needle) in [
            ("{", "o.json: not a cqlbench order"),
            (
                &good.replace("\"version\": 1", "\"version\": 2"),
                "order version 2 was written by a newer cqlbench",
            ),
            (
                &good.replace("\"rows\"", "\"rowz\""),
                "unknown field `rowz`",
            ),
            (&good.replace("\"rows\": 100000", "\"rows\": -1"), "rows"),
        ] {
            let e = Order::from_json(text, "o.json").unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
