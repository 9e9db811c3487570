//! A cluster held for a piece of work: opened (or created from a spec when it does not
//! exist), started when not all its nodes run, and stopped when the work is done unless it is
//! to be kept. The scenario runner, the quickstart and the scaling step all hold their
//! clusters this way.

use std::path::Path;

use super::{Cluster, ClusterError, StartOptions, StopOptions};
use crate::spec::ClusterSpec;

/// What acquiring a cluster did.
pub enum LeaseEvent<'a> {
    /// It existed: its options stay as created.
    Reused {
        cluster: &'a Cluster,
    },
    Created {
        cluster: &'a Cluster,
    },
    /// Some nodes were started: which, and how long until all were up.
    Started {
        cluster: &'a Cluster,
        nodes: &'a [String],
        secs: f64,
    },
}

/// A cluster held until [`Lease::release`].
#[derive(Debug)]
pub struct Lease {
    pub cluster: Cluster,
}

impl Lease {
    /// Opens cluster `name` in `root`, or creates it (its software from `tc`) with the spec
    /// `spec` gives (asked only when it does not exist); with `start`, starts the nodes that
    /// are not running.
    pub fn acquire<E: From<ClusterError>>(
        root: &Path,
        tc: &super::dist::Toolchain,
        name: &str,
        spec: impl FnOnce() -> Result<ClusterSpec, E>,
        start: bool,
        on: &mut dyn FnMut(LeaseEvent),
    ) -> Result<Lease, E> {
        let cluster = match Cluster::open(root, name) {
            Ok(c) => {
                on(LeaseEvent::Reused { cluster: &c });
                c
            }
            Err(ClusterError::NotFound { .. }) => {
                let c = Cluster::create(root, spec()?, tc)?;
                on(LeaseEvent::Created { cluster: &c });
                c
            }
            Err(e) => return Err(e.into()),
        };
        let lease = Lease { cluster };
        if start {
            lease.start(on)?;
        }
        Ok(lease)
    }

    /// Starts the nodes that are not running (nothing when all are).
    pub fn start(&self, on: &mut dyn FnMut(LeaseEvent)) -> Result<(), ClusterError> {
        let c = &self.cluster;
        if c.running_addresses().len() == c.nodes().len() {
            return Ok(());
        }
        let r = c.start(&StartOptions::default())?;
        on(LeaseEvent::Started {
            cluster: c,
            nodes: &r.started,
            secs: r.elapsed.as_secs_f64(),
        });
        Ok(())
    }

    /// Stops every node unless `keep`; the names of the nodes stopped.
    pub fn release(self, keep: bool) -> Result<Vec<String>, ClusterError> {
        match keep {
            true => Ok(Vec::new()),
            false => self.cluster.stop(&StopOptions::default()),
        }
    }
}
