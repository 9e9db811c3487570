//! Faults during a run: a schedule of [`Fault`]s applied at their offsets into the main phase by
//! a thread of their own (a restart blocks for seconds; the load goes on meanwhile), each one an
//! [`FaultEvent`] on the run's time axis with when it began, when it completed and how it ended.
//!
//! A local cluster's faults act on its node processes and nodetool ([`LocalInjector`]); for any
//! other cluster the only action is a hook command ([`HookInjector`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::cluster::Cluster;
use crate::cluster::supervise::{StartOptions, StopOptions};
pub use crate::spec::fault::{Action, Fault};

use crate::cluster::ClusterError;
use crate::result::fault::FaultEvent;

/// Why a fault's action failed (recorded in its event, the run goes on).
#[derive(Debug, thiserror::Error)]
pub enum FaultError {
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error("nodetool {args} failed: {last}")]
    Nodetool { args: String, last: String },
    /// A stop whose drain failed: the node was stopped anyway.
    #[error("stopped, but {0}")]
    NotDrained(Box<FaultError>),
    #[error("{fault}: node faults need a local cluster")]
    NeedsCluster { fault: String },
    #[error("running sh: {0}")]
    Shell(std::io::Error),
    #[error(transparent)]
    Lab(#[from] crate::lab::LabError),
    #[error(
        "{fault}: cluster '{cluster}' has no network lab: network faults need one (`cluster create NAME --netns`)"
    )]
    NeedsLab { fault: String, cluster: String },
    #[error("{fault}: the cluster has no such data centre (it has {dcs})")]
    NoSuchDc { fault: String, dcs: String },
    #[error("hook exited with {status}: {last}")]
    Hook {
        status: std::process::ExitStatus,
        last: String,
    },
}

/// The nodes of a target as a run sees them: applies faults (blocking) and tells which nodes
/// are down.
pub trait Inject: Send + Sync + std::fmt::Debug {
    fn apply(&self, f: &Fault) -> Result<(), FaultError>;

    /// Names of the nodes whose process is not running; None when that cannot be seen.
    fn down(&self) -> Option<Vec<String>> {
        None
    }
}

/// Faults on the nodes of a local cluster (and hooks).
#[derive(Debug)]
pub struct LocalInjector {
    pub cluster: Cluster,
    /// nodetool flush/compact/repair act on this keyspace.
    pub keyspace: String,
}

impl LocalInjector {
    /// The cluster's network lab, which network faults need.
    fn lab(&self, f: &Fault) -> Result<crate::lab::Lab, FaultError> {
        self.cluster.lab().ok_or_else(|| FaultError::NeedsLab {
            fault: f.to_string(),
            cluster: self.cluster.name().to_string(),
        })
    }
}

impl Inject for LocalInjector {
    fn down(&self) -> Option<Vec<String>> {
        Some(
            self.cluster
                .nodes()
                .iter()
                .filter(|n| self.cluster.pid(n).is_none())
                .map(|n| n.name.clone())
                .collect(),
        )
    }

    fn apply(&self, f: &Fault) -> Result<(), FaultError> {
        if let (true, Some(dc)) = (f.action.on_dc(), &f.dc) {
            let lab = self.lab(f)?;
            let index = self
                .cluster
                .state
                .spec
                .dcs
                .iter()
                .position(|d| &d.name == dc)
                .ok_or_else(|| FaultError::NoSuchDc {
                    fault: f.to_string(),
                    dcs: self
                        .cluster
                        .state
                        .spec
                        .dcs
                        .iter()
                        .map(|d| d.name.clone())
                        .collect::<Vec<_>>()
                        .join(", "),
                })?;
            let done = match f.action {
                Action::Isolate => lab.isolate(index),
                _ => lab.rejoin(index),
            };
            return Ok(done?);
        }
        let Some(n) = f.node else {
            return HookInjector.apply(f);
        };
        let c = &self.cluster;
        let stop = |kill: bool| {
            c.stop(&StopOptions {
                nodes: vec![n],
                kill,
                timeout: Duration::from_secs(60),
            })
            .map(|_| ())
        };
        let start = || {
            c.start(&StartOptions {
                nodes: vec![n],
                timeout: Duration::from_secs(240),
            })
            .map(|_| ())
        };
        let nodetool = |args: &[&str]| -> Result<(), FaultError> {
            let out = c.nodetool(n, args)?;
            if out.status.success() {
                Ok(())
            } else {
                let text = String::from_utf8_lossy(&out.stderr).to_string()
                    + &String::from_utf8_lossy(&out.stdout);
                Err(FaultError::Nodetool {
                    args: args.join(" "),
                    last: crate::fsutil::last_line(&text),
                })
            }
        };
        let ks = self.keyspace.as_str();
        // A paused node (SIGSTOP) would ignore the stop until its timeout: it is resumed
        // first (nothing happens to a running one).
        if matches!(f.action, Action::Stop | Action::Restart | Action::Drain) {
            let _ = c.resume(n);
        }
        match f.action {
            Action::Kill => Ok(stop(true)?),
            Action::Stop => {
                // A node that cannot drain (paused, overloaded) is still stopped.
                let drained = nodetool(&["drain"]);
                stop(false)?;
                drained.map_err(|e| FaultError::NotDrained(Box::new(e)))
            }
            Action::Start => Ok(start()?),
            Action::Restart => {
                stop(false)?;
                Ok(start()?)
            }
            Action::Pause => Ok(c.pause(n)?),
            Action::Resume => Ok(c.resume(n)?),
            Action::Flush => nodetool(&["flush", ks]),
            Action::Compact => nodetool(&["compact", ks]),
            Action::Repair => nodetool(&["repair", "-full", ks]),
            Action::Drain => nodetool(&["drain"]),
            Action::Hook => HookInjector.apply(f),
            Action::Partition => Ok(self.lab(f)?.partition(n)?),
            Action::Heal => Ok(self.lab(f)?.heal(n)?),
            // Data-centre faults carry no node: handled above.
            Action::Isolate | Action::Rejoin => Err(FaultError::NeedsCluster {
                fault: f.to_string(),
            }),
        }
    }
}

/// Hooks only: `sh -c COMMAND`, with `CQLBENCH_FAULT` (the fault as given) in its environment.
#[derive(Debug)]
pub struct HookInjector;

impl Inject for HookInjector {
    fn apply(&self, f: &Fault) -> Result<(), FaultError> {
        let Some(cmd) = &f.command else {
            return Err(FaultError::NeedsCluster {
                fault: f.to_string(),
            });
        };
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .env("CQLBENCH_FAULT", f.to_string())
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(FaultError::Shell)?;
        if out.status.success() {
            Ok(())
        } else {
            Err(FaultError::Hook {
                status: out.status,
                last: crate::fsutil::last_line(&String::from_utf8_lossy(&out.stderr)),
            })
        }
    }
}

/// The fault that undoes `f` (its node or data centre, no duration).
fn undo_of(f: &Fault, undo: Action) -> Fault {
    Fault {
        at_s: f.at_s,
        action: undo,
        node: f.node,
        for_s: None,
        dc: f.dc.clone(),
        command: None,
    }
}

/// The schedule as applied: a pause with a duration becomes a pause and a resume.
pub fn expand(faults: &[Fault]) -> Vec<Fault> {
    let mut out: Vec<Fault> = Vec::new();
    for f in faults {
        out.push(f.clone());
        if let (Some(undo), Some(d)) = (f.action.undone_by(), f.for_s) {
            out.push(Fault {
                at_s: f.at_s + d,
                ..undo_of(f, undo)
            });
        }
    }
    out.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    out
}

/// A schedule running beside a main phase.
pub struct Running {
    pub events: Arc<Mutex<Vec<FaultEvent>>>,
    done: Arc<AtomicBool>,
    /// The schedule's thread; it returns the faults that undo what it left done.
    thread: Option<std::thread::JoinHandle<Vec<Fault>>>,
    injector: Arc<dyn Inject>,
    axis: Arc<dyn Fn() -> f64 + Send + Sync>,
}

impl Running {
    /// Starts applying `faults` (offsets from now, the main phase's start); `run_axis` gives
    /// the time on the run's axis.
    pub fn start(
        faults: &[Fault],
        injector: Arc<dyn Inject>,
        run_axis: impl Fn() -> f64 + Send + Sync + 'static,
    ) -> Running {
        let events = Arc::new(Mutex::new(Vec::new()));
        let done = Arc::new(AtomicBool::new(false));
        let schedule = expand(faults);
        let (ev, dn) = (events.clone(), done.clone());
        let axis: Arc<dyn Fn() -> f64 + Send + Sync> = Arc::new(run_axis);
        let (inj, run_axis) = (injector.clone(), axis.clone());
        let t0 = Instant::now();
        let thread = std::thread::Builder::new()
            .name("faults".into())
            .spawn(move || {
                let injector = inj;
                // What the schedule did and has not undone yet: the faults that undo it.
                let mut pending: Vec<Fault> = Vec::new();
                for f in schedule {
                    let due = t0 + Duration::from_secs_f64(f.at_s);
                    while Instant::now() < due && !dn.load(Ordering::Relaxed) {
                        std::thread::sleep(
                            due.saturating_duration_since(Instant::now())
                                .min(Duration::from_millis(20)),
                        );
                    }
                    let started_s = run_axis();
                    if dn.load(Ordering::Relaxed) {
                        ev.lock().expect("events").push(FaultEvent {
                            fault: f,
                            started_s,
                            finished_s: None,
                            error: Some("not applied: the main phase ended first".into()),
                        });
                        continue;
                    }
                    let index = {
                        let mut e = ev.lock().expect("events");
                        e.push(FaultEvent {
                            fault: f.clone(),
                            started_s,
                            finished_s: None,
                            error: None,
                        });
                        e.len() - 1
                    };
                    let outcome = injector.apply(&f);
                    if outcome.is_ok() {
                        // A pause is over once anything else acts on its node (a stop
                        // resumes it first); a partition or isolation only once healed.
                        pending.retain(|p| {
                            !(p.node == f.node
                                && p.dc == f.dc
                                && (p.action == f.action || p.action == Action::Resume))
                        });
                        if let Some(undo) = f.action.undone_by() {
                            pending.push(undo_of(&f, undo));
                        }
                    }
                    let mut e = ev.lock().expect("events");
                    e[index].finished_s = Some(run_axis());
                    e[index].error = outcome.err().map(|e| e.to_string());
                }
                pending
            })
            .expect("spawning the fault thread");
        Running {
            events,
            done,
            thread: Some(thread),
            injector,
            axis,
        }
    }

    pub fn snapshot(&self) -> Vec<FaultEvent> {
        self.events.lock().expect("events").clone()
    }

    /// The main phase is over: faults not yet due are recorded as not applied; one in
    /// progress (a restart) is waited for; a node the schedule paused or partitioned (or a
    /// data centre it isolated) and did not bring back is brought back now (an event of its
    /// own), so nothing stays frozen or cut off after the run. Returns every event.
    pub fn finish(mut self) -> Vec<FaultEvent> {
        self.done.store(true, Ordering::Relaxed);
        let pending = self
            .thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        for undo in pending {
            let started_s = (self.axis)();
            let outcome = self.injector.apply(&undo);
            self.events.lock().expect("events").push(FaultEvent {
                fault: Fault {
                    at_s: started_s,
                    ..undo
                },
                started_s,
                finished_s: Some((self.axis)()),
                error: outcome
                    .err()
                    .map(|e| format!("{e} (undoing it at the end of the run)")),
            });
        }
        self.snapshot()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default)]
    struct Recorder(Mutex<Vec<(String, Instant)>>);

    impl Recorder {
        /// Until `n` faults were applied (at most 10 s: a loaded host delays, never this long).
        fn wait_for(&self, n: usize) {
            let until = Instant::now() + Duration::from_secs(10);
            while self.0.lock().unwrap().len() < n && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }

    impl Inject for Recorder {
        fn apply(&self, f: &Fault) -> Result<(), FaultError> {
            self.0.lock().unwrap().push((f.label(), Instant::now()));
            if f.action == Action::Flush {
                return Err(FaultError::Nodetool {
                    args: "flush".into(),
                    last: "boom".into(),
                });
            }
            Ok(())
        }
    }

    #[test]
    fn a_timed_pause_becomes_pause_and_resume_in_order() {
        let faults: Vec<Fault> = ["5s:kill:node1", "1s:pause:node2:2s"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let labels: Vec<(f64, String)> = expand(&faults)
            .iter()
            .map(|f| (f.at_s, f.label()))
            .collect();
        assert_eq!(
            labels,
            vec![
                (1.0, "pause node2 for 2s".to_string()),
                (3.0, "resume node2".to_string()),
                (5.0, "kill node1".to_string()),
            ]
        );
    }

    #[test]
    fn faults_run_at_their_offsets_and_late_ones_are_recorded_as_not_applied() {
        let rec = Arc::new(Recorder::default());
        let faults: Vec<Fault> = ["0.1s:kill:node1", "0.2s:flush:node2", "30s:start:node1"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let t0 = Instant::now();
        let running = Running::start(&faults, rec.clone(), move || t0.elapsed().as_secs_f64());
        rec.wait_for(2);
        let events = running.finish();
        assert_eq!(events.len(), 3);
        let applied = rec.0.lock().unwrap();
        assert_eq!(applied.len(), 2, "{applied:?}");
        // Never before its offset; after it by no more than a loaded host's scheduling delay.
        let at = applied[0].1.duration_since(t0).as_secs_f64();
        assert!((0.1..2.0).contains(&at), "kill at {at}");
        assert!((0.1..2.0).contains(&events[0].started_s));
        assert!(
            applied[1].1 >= t0 + Duration::from_millis(200),
            "flush before 0.2 s"
        );
        assert!(events[0].error.is_none() && events[0].finished_s.is_some());
        assert_eq!(
            events[1].error.as_deref(),
            Some("nodetool flush failed: boom")
        );
        assert_eq!(
            events[2].error.as_deref(),
            Some("not applied: the main phase ended first")
        );
        assert!(events[2].finished_s.is_none());
    }

    #[test]
    fn a_node_left_paused_is_resumed_when_the_run_ends() {
        let rec = Arc::new(Recorder::default());
        let faults: Vec<Fault> = ["0s:pause:node2", "0s:pause:node3", "0.05s:resume:node3"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let t0 = Instant::now();
        let running = Running::start(&faults, rec.clone(), move || t0.elapsed().as_secs_f64());
        rec.wait_for(3);
        std::thread::sleep(Duration::from_millis(150));
        let events = running.finish();
        let labels: Vec<String> = rec
            .0
            .lock()
            .unwrap()
            .iter()
            .map(|(l, _)| l.clone())
            .collect();
        assert_eq!(
            labels,
            ["pause node2", "pause node3", "resume node3", "resume node2"]
        );
        let last = events.last().unwrap();
        assert_eq!(last.fault.label(), "resume node2");
        assert!(last.error.is_none() && last.finished_s.is_some());
        assert!(last.started_s >= 0.15, "{last:?}");
    }

    #[test]
    fn a_partition_or_isolation_left_in_place_is_undone_when_the_run_ends() {
        let rec = Arc::new(Recorder::default());
        let faults: Vec<Fault> = [
            "0s:partition:node2",
            "0s:isolate:dc2",
            "0s:partition:node1:0.05s",
        ]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
        let t0 = Instant::now();
        let running = Running::start(&faults, rec.clone(), move || t0.elapsed().as_secs_f64());
        rec.wait_for(4);
        let events = running.finish();
        let mut labels: Vec<String> = rec
            .0
            .lock()
            .unwrap()
            .iter()
            .map(|(l, _)| l.clone())
            .collect();
        // The timed partition healed on schedule, the other two undone at the end.
        assert_eq!(labels.len(), 6, "{labels:?}");
        assert_eq!(labels[3], "heal node1");
        labels[4..].sort();
        assert_eq!(labels[4..], ["heal node2", "rejoin dc2"]);
        assert!(events.iter().all(|e| e.error.is_none()), "{events:?}");
    }

    #[test]
    fn a_failing_hook_says_how_it_ended() {
        let ok: Fault = "1s:hook:true".parse().unwrap();
        assert!(HookInjector.apply(&ok).is_ok());
        let bad: Fault = "1s:hook:echo nope >&2; exit 3".parse().unwrap();
        let e = HookInjector.apply(&bad).unwrap_err().to_string();
        assert!(e.contains("exit status: 3") && e.ends_with("nope"), "{e}");
        let env: Fault = "1s:hook:case \"$CQLBENCH_FAULT\" in 1s:hook:*) exit 0;; *) exit 5;; esac"
            .parse()
            .unwrap();
        assert!(HookInjector.apply(&env).is_ok());
    }
}
