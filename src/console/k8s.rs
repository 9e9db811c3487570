//! What the Kubernetes commands show: a Job run's and a probe run's events while they go (one
//! line per event, stamped with the seconds since the run started), what they leave, and the
//! manifests written.

use std::path::{Path, PathBuf};

use crate::k8s::job_run::JobEvent;
use crate::k8s::probe_run::ProbeEvent;
use crate::result::RunResult;
use crate::result::capacity::CapacityResult;

/// What a written manifest holds and where it is (`k8s probe --out`, `k8s run --out`, `k8s
/// cluster --out`).
pub enum Manifest<'a> {
    ProbeJobs {
        run_id: &'a str,
        jobs: usize,
        namespace: &'a str,
    },
    LoaderJobs {
        run_id: &'a str,
        shards: u32,
        namespace: &'a str,
    },
    Cluster {
        storage_classes: usize,
        name: &'a str,
        namespace: &'a str,
    },
}

/// The line saying a manifest was written (and, for a cluster, how to apply it).
pub fn manifest_written(path: &Path, m: &Manifest) -> String {
    let p = path.display();
    match m {
        Manifest::ProbeJobs {
            run_id,
            jobs,
            namespace,
        } => format!("wrote {p}: run {run_id}, {jobs} probe Job(s) in namespace {namespace}\n"),
        Manifest::LoaderJobs {
            run_id,
            shards,
            namespace,
        } => format!(
            "wrote {p}: run {run_id}, {shards} shards of `cqlbench run` in namespace {namespace}\n"
        ),
        Manifest::Cluster {
            storage_classes,
            name,
            namespace,
        } => format!(
            "wrote {p}: {storage_classes} StorageClass(es) and K8ssandraCluster {name} in namespace \
             {namespace}\n# needs k8ssandra-operator (and its CRDs) installed; StorageClasses are \
             cluster-scoped\nkubectl apply -f {p}\n"
        ),
    }
}

/// What a loader Job run left: the merged run (its final text) or the search pod 0
/// coordinated, and the pods' files.
pub enum JobOutcome<'a> {
    Run {
        merged: &'a RunResult,
        path: &'a Path,
        shards: u32,
        run_id: &'a str,
    },
    Capacity {
        result: &'a CapacityResult,
        path: &'a Path,
    },
}

/// A finished loader Job run's text.
pub fn job_outcome_text(o: &JobOutcome, pods_dir: &Path) -> String {
    let mut out = match o {
        JobOutcome::Run {
            merged,
            path,
            shards,
            run_id,
        } => format!(
            "{}merged {shards} shards of run {run_id}: {}\n",
            super::final_text(merged),
            path.display()
        ),
        JobOutcome::Capacity { result, path } => format!(
            "{}capacity result (pod 0 coordinated): {}\n",
            super::capacity_text(result),
            path.display()
        ),
    };
    out.push_str(&format!("the pods' files: {}\n", pods_dir.display()));
    out
}

/// A probe run's results: each path, then how many and the command that reports them.
pub fn probe_results_text(paths: &[PathBuf], dir: &Path) -> String {
    let mut out: String = paths.iter().map(|p| format!("{}\n", p.display())).collect();
    let all: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    out.push_str(&format!(
        "{} probe result(s) in {}: cqlbench report {}\n",
        paths.len(),
        dir.display(),
        all.join(" ")
    ));
    out
}

/// The stamp every line starts with: seconds since the run started.
fn at(elapsed_s: f64) -> String {
    format!("[{elapsed_s:6.1}s]")
}

/// A loader Job's event as a line (a pod's own output lines are shown indented, unstamped).
pub fn job_event_line(e: &JobEvent, elapsed_s: f64) -> String {
    let at = at(elapsed_s);
    match e {
        JobEvent::Created {
            job,
            namespace,
            shards,
        } => format!("{at} created Job {job} in namespace {namespace}: {shards} shards"),
        JobEvent::Pod {
            index,
            pod,
            phase,
            node,
        } => {
            let on = if node.is_empty() {
                String::new()
            } else {
                format!(" on {node}")
            };
            format!("{at} shard {index}: pod {pod} {phase}{on}")
        }
        JobEvent::Line { index, line } => format!("  [{index}] {line}"),
        JobEvent::Collected {
            index,
            files,
            bytes,
        } => format!("{at} shard {index}: collected {files} file(s), {bytes} bytes from its log"),
        JobEvent::Deleted { job } => format!("{at} deleted Job {job} and its pods"),
    }
}

/// A probe run's event as a line.
pub fn probe_event_line(e: &ProbeEvent, elapsed_s: f64) -> String {
    let at = at(elapsed_s);
    match e {
        ProbeEvent::Created { jobs, namespace } => {
            format!("{at} created {jobs} probe Job(s) in namespace {namespace}")
        }
        ProbeEvent::Pod { node, pod, phase } => format!("{at} node {node}: pod {pod} {phase}"),
        ProbeEvent::Collected { node, path } => {
            format!("{at} node {node}: result {}", path.display())
        }
        ProbeEvent::Deleted { jobs } => format!("{at} deleted {jobs} probe Job(s)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_event_is_one_stamped_line() {
        let pod = JobEvent::Pod {
            index: 1,
            pod: "p-1",
            phase: "Running",
            node: "w2",
        };
        assert_eq!(
            job_event_line(&pod, 3.25),
            "[   3.2s] shard 1: pod p-1 Running on w2"
        );
        let pending = JobEvent::Pod {
            index: 0,
            pod: "p-0",
            phase: "Pending",
            node: "",
        };
        assert_eq!(
            job_event_line(&pending, 0.0),
            "[   0.0s] shard 0: pod p-0 Pending"
        );
        let line = JobEvent::Line {
            index: 0,
            line: "main 4000 ops/s",
        };
        assert_eq!(job_event_line(&line, 9.0), "  [0] main 4000 ops/s");
        let collected = JobEvent::Collected {
            index: 1,
            files: 2,
            bytes: 300,
        };
        assert_eq!(
            job_event_line(&collected, 61.0),
            "[  61.0s] shard 1: collected 2 file(s), 300 bytes from its log"
        );
        let path = std::path::Path::new("/r/node1.json");
        let got = ProbeEvent::Collected { node: "w1", path };
        assert_eq!(
            probe_event_line(&got, 12.0),
            "[  12.0s] node w1: result /r/node1.json"
        );
        let gone = ProbeEvent::Deleted { jobs: 3 };
        assert_eq!(
            probe_event_line(&gone, 20.0),
            "[  20.0s] deleted 3 probe Job(s)"
        );
    }
}
