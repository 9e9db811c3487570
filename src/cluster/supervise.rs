//! Starting and stopping nodes. Start is a list of steps — check, render, spawn, watch logs,
//! check CQL — and on failure the nodes this call started are stopped again, so a failed
//! start leaves nothing running that was not running before.

use std::time::{Duration, Instant};

use super::plan::{NATIVE_PORT, NodePlan, STORAGE_PORT};
use super::state::{self, NodeDirs, NodeRun};
use super::{Cluster, ClusterError, process, readiness, render};

/// Options of [`Cluster::start`].
#[derive(Debug, Clone)]
pub struct StartOptions {
    /// Nodes to start (1-based); empty = every node not running.
    pub nodes: Vec<usize>,
    /// Give up after this long.
    pub timeout: Duration,
}

impl Default for StartOptions {
    fn default() -> Self {
        StartOptions {
            nodes: Vec::new(),
            timeout: Duration::from_secs(180),
        }
    }
}

/// What a start did.
#[derive(Debug, Clone)]
pub struct StartReport {
    pub started: Vec<String>,
    pub elapsed: Duration,
}

/// Options of [`Cluster::stop`].
#[derive(Debug, Clone)]
pub struct StopOptions {
    /// Nodes to stop (1-based); empty = all.
    pub nodes: Vec<usize>,
    /// SIGKILL at once instead of SIGTERM (and SIGKILL after `timeout`).
    pub kill: bool,
    pub timeout: Duration,
}

impl Default for StopOptions {
    fn default() -> Self {
        StopOptions {
            nodes: Vec::new(),
            kill: false,
            timeout: Duration::from_secs(60),
        }
    }
}

impl Cluster {
    fn selected(&self, indices: &[usize]) -> Result<Vec<NodePlan>, ClusterError> {
        if indices.is_empty() {
            return Ok(self.nodes().to_vec());
        }
        indices.iter().map(|&i| self.node(i).cloned()).collect()
    }

    /// Starts the selected nodes that are not running and waits until each is ready: its
    /// log (read from the offset saved at start) shows CQL listening and every other running
    /// node UP, every running node's log shows the started ones UP, and every node answers a
    /// CQL query listing all its peers.
    pub fn start(&self, opts: &StartOptions) -> Result<StartReport, ClusterError> {
        let t0 = Instant::now();
        let selected = self.selected(&opts.nodes)?;
        let targets: Vec<NodePlan> = selected
            .into_iter()
            .filter(|n| self.pid(n).is_none())
            .collect();
        if targets.is_empty() {
            return Err(ClusterError::AlreadyRunning {
                name: self.name().to_string(),
            });
        }
        for n in &targets {
            match self.node_netns(n) {
                // A lab node's ports are its namespace's: checked from there.
                Some(ns) => crate::netns::run_in(&ns, || check_ports(n))??,
                None => check_ports(n)?,
            }
        }
        // Emulated disks: mounted again after a host restart, their limits applied again.
        self.attach_disks(&targets)?;
        // Offsets of the already-running nodes' logs: they must log the new nodes UP.
        let running: Vec<(NodePlan, u64)> = self
            .nodes()
            .iter()
            .filter(|n| !targets.contains(n) && self.pid(n).is_some())
            .map(|n| (n.clone(), readiness::size(&self.node_dirs(n).system_log())))
            .collect();
        // Every node is a seed (see `plan`): none can lose a start-up gossip race to a seed
        // that does not listen yet, so a failed start is not retried.
        let mut spawned = Vec::new();
        let result = self
            .spawn_all(&targets, &mut spawned)
            .and_then(|_| self.wait_ready(&targets, &running, t0, opts.timeout));
        if let Err(e) = result {
            for (_, pid) in &spawned {
                process::signal(*pid, libc::SIGKILL);
            }
            // What the killed nodes leave behind: memory groups, a class archive half written.
            let _ = self.stop(&StopOptions {
                nodes: targets.iter().map(|n| n.index).collect(),
                kill: true,
                ..StopOptions::default()
            });
            for n in &targets {
                let _ = std::fs::remove_file(super::cds::pending(&self.node_dirs(n).node));
            }
            return Err(e);
        }
        let report = StartReport {
            started: targets.iter().map(|n| n.name.clone()).collect(),
            elapsed: t0.elapsed(),
        };
        // A whole cluster's start: a node restarted alone (a fault) is not the cluster's.
        if targets.len() == self.nodes().len() {
            self.record_start(&report)?;
        }
        Ok(report)
    }

    fn spawn_all(
        &self,
        targets: &[NodePlan],
        spawned: &mut Vec<(String, u32)>,
    ) -> Result<(), ClusterError> {
        let archive = super::cds::archive(&self.state.dist);
        if let Some(dir) = archive.as_deref().and_then(|a| a.parent()) {
            std::fs::create_dir_all(dir).map_err(|e| ClusterError::io(dir, e))?;
        }
        let dirs: Vec<std::path::PathBuf> =
            targets.iter().map(|n| self.node_dirs(n).node).collect();
        let dirs: Vec<&std::path::Path> = dirs.iter().map(|d| d.as_path()).collect();
        // An archive under this JDK's name was written by it, so it is a JDK that maps one:
        // only a start that would write one asks `java -version`.
        let cds = match &archive {
            Some(a) if a.is_file() || super::cds::supported(&self.state.dist.java) => {
                super::cds::plan(a, &dirs)
            }
            _ => vec![None; targets.len()],
        };
        for (n, cds) in targets.iter().zip(&cds) {
            let dirs = self.node_dirs(n);
            self.write_node_files(n, &dirs)?;
            let log_offset = readiness::size(&dirs.system_log());
            let args = render::jvm_args(
                &self.state.spec,
                n,
                &dirs.as_paths(),
                &self.state.dist,
                cds.as_ref(),
            );
            let out = dirs.logs.join("stdout.log");
            let cgroup = match self.state.spec.node_memory {
                Some(limit) => Some(super::memory::prepare(&self.memory_group(n)?, limit.0)?),
                None => None,
            };
            let pid = process::spawn_detached(
                &self.state.dist.java,
                &args,
                &dirs.node,
                &out,
                &n.cpus,
                cgroup.as_deref(),
                self.node_netns(n).as_deref(),
            )
            .map_err(|e| ClusterError::io(&self.state.dist.java, e))?;
            spawned.push((n.name.clone(), pid));
            state::write_json(
                &dirs.run_file(),
                &NodeRun {
                    pid,
                    started_unix_s: crate::host::unix_now_s(),
                    log_offset,
                },
            )?;
        }
        Ok(())
    }

    fn write_node_files(&self, n: &NodePlan, dirs: &NodeDirs) -> Result<(), ClusterError> {
        for d in [&dirs.conf, &dirs.data, &dirs.logs] {
            std::fs::create_dir_all(d).map_err(|e| ClusterError::io(d, e))?;
        }
        let s = &self.state;
        let files = [
            (
                "cassandra.yaml",
                render::cassandra_yaml(
                    &s.spec,
                    &s.plan,
                    n,
                    &dirs.as_paths(),
                    s.dist.line().unwrap_or(super::versions::Line::V50),
                ),
            ),
            ("cassandra-rackdc.properties", render::rackdc_properties(n)),
            ("logback.xml", render::logback_xml(&dirs.logs)),
            ("exporter.yaml", render::exporter_yaml()),
        ];
        for (name, text) in files {
            let p = dirs.conf.join(name);
            crate::fsutil::write_atomic(&p, text.as_bytes())
                .map_err(|e| ClusterError::io(&p, e))?;
        }
        Ok(())
    }

    fn wait_ready(
        &self,
        targets: &[NodePlan],
        running: &[(NodePlan, u64)],
        t0: Instant,
        timeout: Duration,
    ) -> Result<(), ClusterError> {
        let all_up: Vec<&NodePlan> = targets
            .iter()
            .chain(running.iter().map(|(n, _)| n))
            .collect();
        loop {
            let mut first_missing: Option<(&NodePlan, String)> = None;
            for n in targets {
                let dirs = self.node_dirs(n);
                let run = state::read_run(&dirs).ok_or_else(|| ClusterError::NodeNotRunning {
                    node: n.name.clone(),
                })?;
                if !process::is_alive(run.pid, &dirs.conf.to_string_lossy()) {
                    let log = dirs.system_log();
                    let mut tail = readiness::tail(&log, 20);
                    let out = readiness::tail(&dirs.logs.join("stdout.log"), 10);
                    if !out.is_empty() {
                        tail = format!("{tail}\n--- stdout.log ---\n{out}");
                    }
                    return Err(ClusterError::NodeDied {
                        node: n.name.clone(),
                        log,
                        tail,
                    });
                }
                let view = readiness::read_from(&dirs.system_log(), run.log_offset);
                let missing = missing_for(n, &view, &all_up);
                if first_missing.is_none()
                    && let Some(m) = missing
                {
                    first_missing = Some((n, m));
                }
            }
            for (n, offset) in running {
                let view = readiness::read_from(&self.node_dirs(n).system_log(), *offset);
                if first_missing.is_none()
                    && let Some(t) = targets.iter().find(|t| !view.up.contains(&t.address))
                {
                    first_missing = Some((n, format!("does not see {} UP", t.address)));
                }
            }
            if first_missing.is_none() {
                // The logs say ready; CQL must agree: every node answers and lists all peers.
                match self.cql_missing(&all_up) {
                    None => return Ok(()),
                    Some(m) => first_missing = Some((all_up[0], m)),
                }
            }
            if let Some((n, missing)) = first_missing
                && t0.elapsed() >= timeout
            {
                let log = self.node_dirs(n).system_log();
                let tail = readiness::tail(&log, 20);
                return Err(ClusterError::StartTimeout {
                    node: n.name.clone(),
                    waited_s: t0.elapsed().as_secs(),
                    missing,
                    log,
                    tail,
                });
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// What the CQL view still lacks, if anything: every node must answer on its own
    /// address and list every other node with its planned data centre and rack.
    fn cql_missing(&self, up: &[&NodePlan]) -> Option<String> {
        let addrs: Vec<String> = up.iter().map(|n| n.address.clone()).collect();
        let tls = self.client_tls();
        let asked = self.reach_nodes(|| {
            super::cql::views_by_node(&addrs, Duration::from_secs(10), tls.as_ref())
        });
        let views = match asked {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => return Some(e.0),
            Err(e) => return Some(e.to_string()),
        };
        for v in views {
            for other in self.nodes().iter().filter(|o| o.address != v.address) {
                let expected = (
                    other.address.clone(),
                    Some(other.dc.clone()),
                    Some(other.rack.clone()),
                );
                if !v.peers.contains(&expected) {
                    return Some(format!(
                        "{} does not yet list {} ({}/{}) in system.peers",
                        v.address, other.address, other.dc, other.rack
                    ));
                }
            }
        }
        None
    }

    /// Stops the selected nodes: SIGTERM (or SIGKILL with `kill`), wait until their JVMs are
    /// gone, SIGKILL whatever is left after the timeout. Nodes not running are skipped.
    pub fn stop(&self, opts: &StopOptions) -> Result<Vec<String>, ClusterError> {
        let selected = self.selected(&opts.nodes)?;
        let targets: Vec<(NodePlan, u32)> = selected
            .iter()
            .filter_map(|n| self.pid(n).map(|p| (n.clone(), p)))
            .collect();
        let sig = if opts.kill {
            libc::SIGKILL
        } else {
            libc::SIGTERM
        };
        for (_, pid) in &targets {
            process::signal(*pid, sig);
            process::signal(*pid, libc::SIGCONT); // a paused node must run to handle SIGTERM
        }
        let deadline = Instant::now() + opts.timeout;
        let mut escalated = opts.kill;
        loop {
            let alive: Vec<&(NodePlan, u32)> = targets
                .iter()
                .filter(|(n, _)| self.pid(n).is_some())
                .collect();
            if alive.is_empty() {
                break;
            }
            if Instant::now() >= deadline {
                if escalated {
                    return Err(ClusterError::NodeNotRunning {
                        node: format!("{} survived SIGKILL;", alive[0].0.name),
                    });
                }
                for (_, pid) in &alive {
                    process::signal(*pid, libc::SIGKILL);
                }
                escalated = true;
                continue;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // A JVM's listening sockets can outlive its last visible thread by a few seconds:
        // stopped means the ports can be bound again too (bounded wait).
        let deadline = Instant::now() + Duration::from_secs(30);
        let archive = super::cds::archive(&self.state.dist);
        for (n, _) in &targets {
            while busy_port(n).is_some() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(100));
            }
            // A node that wrote the class archive at exit: kept only from a clean stop.
            if let Some(archive) = &archive {
                super::cds::settle(archive, &self.node_dirs(n).node, !escalated);
            }
        }
        // Memory groups of every selected node, a node that died on its own included.
        if self.state.spec.node_memory.is_some() {
            for n in &selected {
                if let Ok(g) = self.memory_group(n) {
                    super::memory::remove(&g);
                }
            }
        }
        Ok(targets.into_iter().map(|(n, _)| n.name).collect())
    }

    /// Freezes a node (SIGSTOP): it keeps its sockets but answers nothing.
    pub fn pause(&self, index: usize) -> Result<(), ClusterError> {
        self.signal_node(index, libc::SIGSTOP)
    }

    /// Resumes a paused node (SIGCONT).
    pub fn resume(&self, index: usize) -> Result<(), ClusterError> {
        self.signal_node(index, libc::SIGCONT)
    }

    fn signal_node(&self, index: usize, sig: libc::c_int) -> Result<(), ClusterError> {
        let n = self.node(index)?;
        let pid = self.pid(n).ok_or_else(|| ClusterError::NodeNotRunning {
            node: n.name.clone(),
        })?;
        process::signal(pid, sig);
        Ok(())
    }
}

/// What node `n` still lacks to be ready, given what its log shows.
fn missing_for(n: &NodePlan, view: &readiness::LogView, all_up: &[&NodePlan]) -> Option<String> {
    if !view.cql_ready {
        return Some("CQL not listening yet".to_string());
    }
    all_up
        .iter()
        .find(|o| o.address != n.address && !view.up.contains(&o.address))
        .map(|o| format!("does not see {} UP", o.address))
}

/// The first of a node's ports that cannot be bound, if any.
fn busy_port(n: &NodePlan) -> Option<(&str, u16)> {
    [
        (n.address.as_str(), NATIVE_PORT),
        (n.address.as_str(), STORAGE_PORT),
        (n.address.as_str(), n.metrics_port),
        ("127.0.0.1", n.jmx_port),
    ]
    .into_iter()
    .find(|(addr, port)| !process::port_free(addr, *port))
}

/// Refuses to start a node whose ports stay busy for a few seconds (a just-stopped process may
/// still be releasing them; another cluster or program will not).
fn check_ports(n: &NodePlan) -> Result<(), ClusterError> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match busy_port(n) {
            None => return Ok(()),
            Some((addr, port)) if Instant::now() >= deadline => {
                return Err(ClusterError::PortInUse {
                    node: n.name.clone(),
                    addr: addr.to_string(),
                    port,
                });
            }
            Some(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}
