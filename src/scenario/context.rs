//! What a caller gives every scenario function instead of globals: where cqlbench keeps its
//! state, where local clusters live, the cancellation token, the tools a probe runs, and the
//! sink that receives every [`Event`] (the console renders them; a test can collect or drop
//! them).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::event::Event;
use crate::cancel::Cancel;

/// Receives the events of a scenario as they happen.
pub type Sink = Arc<dyn Fn(&Event) + Send + Sync>;

/// Where a scenario runs and who hears about it.
#[derive(Clone)]
pub struct Context {
    /// The cqlbench home: results, probes and scenario folders go below it by default.
    pub home: PathBuf,
    /// The directory holding local clusters.
    pub clusters: PathBuf,
    pub cancel: Cancel,
    /// The fio and sysbench a probe runs when its step names none.
    pub fio: PathBuf,
    pub sysbench: PathBuf,
    /// The credentials a run uses when its step gives no `--credentials-file`.
    pub credentials: Option<crate::load::session::Credentials>,
    /// The cqlbench executable that `--loaders` starts (none: loaders are refused).
    pub exe: Option<PathBuf>,
    /// Where local clusters' jars are cached and which `java` runs them.
    pub toolchain: crate::cluster::dist::Toolchain,
    /// The network namespace this command runs in (a lab's), recorded with its runs; None:
    /// this host's own network.
    pub netns: Option<String>,
    sink: Sink,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("home", &self.home)
            .field("clusters", &self.clusters)
            .field("cancelled", &self.cancel.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl Context {
    /// A context that tells nobody: events are dropped, nothing is cancelled yet.
    pub fn new(home: &Path, clusters: &Path) -> Context {
        Context {
            home: home.to_path_buf(),
            clusters: clusters.to_path_buf(),
            cancel: Cancel::new(),
            fio: "fio".into(),
            sysbench: "sysbench".into(),
            credentials: None,
            exe: None,
            toolchain: crate::cluster::dist::Toolchain {
                cache: home.join("cache"),
                java: "java".into(),
                on_fetch: None,
            },
            netns: None,
            sink: Arc::new(|_: &Event| {}),
        }
    }

    /// The same context with `sink` receiving its events.
    /// Who hears this context's events (to wrap with another listener).
    pub fn sink(&self) -> Sink {
        self.sink.clone()
    }

    pub fn with_sink(mut self, sink: Sink) -> Context {
        self.sink = sink;
        self
    }

    /// The same context with its own cancellation token.
    pub fn with_cancel(mut self, cancel: Cancel) -> Context {
        self.cancel = cancel;
        self
    }

    pub fn emit(&self, event: Event) {
        (self.sink)(&event);
    }

    /// Where results go when a step names no `--out`.
    pub fn results_dir(&self) -> PathBuf {
        self.home.join("results")
    }

    /// Where probe results go by default, and where a run looks up its environment's latest.
    pub fn probes_dir(&self) -> PathBuf {
        crate::probe::store::probes_dir(&self.home)
    }
}
