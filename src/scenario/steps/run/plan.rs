//! A checked run step into the load engine's plan: the target it reaches, the workload spec
//! (replication, rows, mix, profile), the rampup and main phases, faults and credentials.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::check::ProfileRead;
use super::{DEFAULT_KEYSPACE, RunStep};
use crate::fault::{HookInjector, Inject, LocalInjector};
use crate::load::session::{ConnectSpec, Credentials};
use crate::load::{RunPlan, ShardPlan};
use crate::metrics::node_exporter::NodeExporter;
use crate::metrics::sampler::{Endpoint, MetricsPlan};
use crate::result::{ProbeRef, RateShare, RunResult};
use crate::scenario::error::refuse;
use crate::scenario::{Context, ScenarioError};
use crate::spec::client::{ClientSpec, DriverSpec, TlsSpec};
use crate::spec::load::{Cycles, RateArg, Share};
use crate::spec::workload::{ProfileSource, Rf, WORKLOAD_SPEC_VERSION, parse_keyspace};
use crate::spec::{LoadMode, LoadSpec, Stop, WorkloadSpec};
use crate::target::Target;

/// How long one request to a Prometheus server may take.
const FETCH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

impl RunStep {
    /// Builds the run plan (checking every value first); local clusters are looked up in the
    /// context's clusters directory.
    pub fn to_plan(&self, ctx: &Context) -> Result<RunPlan, ScenarioError> {
        let super::check::Checked {
            workload,
            rampup,
            main,
            tls,
            driver,
        } = self.checked()?;
        let target = self.target(ctx)?;
        let client = self.client(&target, tls, driver);
        if let (Some(v), None) = (self.tls_min_version, &client.tls) {
            refuse!(
                "--tls-min-version {v}: this run is plain text; it needs TLS (--tls-ca, or a local cluster created with --tls and no --no-tls)"
            );
        }
        // The TLS files read and checked now (an encrypted key opened with its password), so a
        // bad file is refused before the run starts, not reported as a failed connection.
        if let Some(t) = &client.tls {
            crate::tls::client_config(t)?;
        }
        let (workload, local_rf) = self.replicated(workload, &target)?;
        let (rate_share, main) = match self.rate {
            Some(r) => {
                let (rate, share) = self.resolve_rate(r)?;
                let split = self.shard.unwrap_or(Share::WHOLE);
                let main = LoadSpec {
                    mode: LoadMode::Open {
                        rate_per_s: rate / split.count as f64,
                        max_in_flight: split.split(self.max_in_flight),
                    },
                    ..main
                };
                (share, main)
            }
            None => (None, main),
        };
        let env = self.env_label();
        Ok(RunPlan {
            probe: latest_probe(ctx, &env),
            tags: self.tag.clone(),
            threads_by_rate: self.threads.is_none(),
            out: match &self.out {
                Some(p) => p.clone(),
                None => self.default_out(ctx, &self.workload.to_string()),
            },
            env,
            workload,
            rampup,
            main,
            connect: ConnectSpec {
                hosts: target.contact_points(),
                local_dc: target.local_dc(),
                timeout: self.timeout,
                credentials: self.credentials(ctx)?,
                client: client.clone(),
            },
            metrics: if self.no_metrics {
                MetricsPlan::default()
            } else {
                target.metrics_plan(self.metrics_interval.as_secs_f64())
            },
            cluster: target.cluster_spec(),
            cluster_start: target
                .cluster()
                .and_then(crate::cluster::Cluster::last_start),
            target: target.record(),
            drop_keyspace: self.drop,
            sequential_main: false,
            until: None,
            local_rf,
            rate_share,
            faults: self.fault.clone(),
            nodes: self.injector(&target)?,
            end_on_node_death: false,
            shard: match (self.shard, &self.run_id) {
                (Some(share), Some(run_id)) => Some(ShardPlan {
                    run_id: run_id.clone(),
                    share,
                    start_at: self.start_at,
                    barrier_timeout: self.barrier_timeout,
                }),
                _ => None,
            },
        })
    }

    /// Where the run goes: the local cluster or the hosts, with the client's DC and the
    /// Prometheus endpoints given.
    pub fn target(&self, ctx: &Context) -> Result<Target, ScenarioError> {
        self.reach().target(ctx)
    }

    /// The flags that say where the run goes and what it reads there.
    pub fn reach(&self) -> Reach<'_> {
        Reach {
            cluster: self.cluster.as_deref(),
            hosts: &self.hosts,
            dc: self.dc.as_deref(),
            prometheus: &self.prometheus,
            node_exporter: &self.node_exporter,
            prometheus_server: self.prometheus_server.as_deref(),
            prometheus_instance: &self.prometheus_instance,
            prometheus_credentials: self.prometheus_credentials.as_deref(),
            prometheus_token: self.prometheus_token.as_deref(),
            prometheus_ca: self.prometheus_ca.as_deref(),
        }
    }

    /// The reader of `plan`'s nodes for a command that reads them while it runs (a capacity
    /// search, a fill) when no endpoint of theirs is given: with `--prometheus-server`, the
    /// server's latest samples of the cluster's nodes (listed over CQL, mapped to the server's
    /// instances by address or `--prometheus-instance`); else their virtual tables through
    /// CQL. A plan with endpoints (a local cluster, `--prometheus`) is read directly.
    pub fn live_reader(&self, ctx: &Context, plan: &mut RunPlan) -> Result<(), ScenarioError> {
        use crate::load::LoadError;
        use crate::metrics::scrape::NodeSource;
        if !plan.metrics.through_cql {
            return Ok(());
        }
        let Some(mut spec) = self.prometheus_fetch(ctx)? else {
            let (metrics, unreached) =
                crate::load::server_views::attach_listing(&plan.metrics, &plan.connect)
                    .map_err(LoadError::from)?;
            plan.metrics = metrics;
            if !unreached.is_empty() {
                ctx.emit(crate::scenario::Event::Warning(
                    crate::scenario::event::Warning::Unreached {
                        nodes: unreached.iter().map(|a| a.ip().to_string()).collect(),
                    },
                ));
            }
            return Ok(());
        };
        let nodes =
            crate::load::server_views::cluster_nodes(&plan.connect).map_err(LoadError::from)?;
        spec.nodes = nodes
            .iter()
            .map(|a| (a.ip().to_string(), a.ip().to_string()))
            .collect();
        let (latest, mapped) = crate::metrics::prometheus_server::latest::Latest::connect(&spec)
            .map_err(|e| ScenarioError::RunEnded(e.to_string()))?;
        let n = mapped.len();
        plan.metrics = MetricsPlan {
            endpoints: mapped
                .iter()
                .map(|m| Endpoint {
                    node: m.node.clone(),
                    host: m.node.clone(),
                    port: 0,
                })
                .collect(),
            pids: vec![None; n],
            node_cpus: vec![0.0; n],
            through_cql: false,
            reader: Some(NodeSource(Arc::new(latest))),
            ..plan.metrics.clone()
        };
        Ok(())
    }

    /// What to fetch from `--prometheus-server` once the run is over (its window set then),
    /// `None` without one.
    pub(crate) fn prometheus_fetch(
        &self,
        ctx: &Context,
    ) -> Result<Option<crate::metrics::prometheus_server::FetchSpec>, ScenarioError> {
        self.reach()
            .prometheus_fetch(ctx, self.metrics_interval.as_secs_f64())
    }
}

/// Where a command goes and what it reads there, as its flags give it (`--cluster` or
/// `--hosts`, `--dc`, `--prometheus`, `--node-exporter`, `--prometheus-server` and its
/// instances): a load command's, or `metrics check`'s.
pub struct Reach<'a> {
    pub cluster: Option<&'a str>,
    pub hosts: &'a [String],
    pub dc: Option<&'a str>,
    pub prometheus: &'a [String],
    pub node_exporter: &'a [String],
    pub prometheus_server: Option<&'a str>,
    pub prometheus_instance: &'a [String],
    pub prometheus_credentials: Option<&'a std::path::Path>,
    pub prometheus_token: Option<&'a std::path::Path>,
    pub prometheus_ca: Option<&'a std::path::Path>,
}

impl Reach<'_> {
    /// The local cluster or the hosts, with the client's DC and the Prometheus endpoints and
    /// node exporters given.
    pub fn target(&self, ctx: &Context) -> Result<Target, ScenarioError> {
        let mut t = match self.cluster {
            Some(name) => Target::local(&ctx.clusters, name)?,
            None if self.hosts.is_empty() => {
                refuse!("give --cluster NAME (a local cluster) or --hosts a,b,c")
            }
            None => Target::hosts(self.hosts.to_vec()),
        };
        // A lab's addresses exist only inside it: never sent to from this host's network.
        if let Some(lab) = t.cluster().and_then(|c| c.lab()) {
            let here = crate::netns::current();
            if !here
                .as_ref()
                .is_some_and(|ns| lab.namespaces().contains(ns))
            {
                refuse!(
                    "cluster '{}' is a network lab: its nodes are reached only from its namespaces; run with --netns {} (what `cqlbench run --cluster {}` does by itself) or under `ip netns exec`",
                    lab.name,
                    crate::spec::lab::client_ns(&lab.name, 1),
                    lab.name
                );
            }
        }
        t.dc = self.dc.map(str::to_string);
        t.netns = ctx.netns.clone();
        t.prometheus = self
            .prometheus
            .iter()
            .map(|e| Endpoint::parse(e))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| crate::invalid!("--prometheus {e}"))?;
        t.node_exporters = self
            .node_exporter
            .iter()
            .map(|e| NodeExporter::parse(e))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| crate::invalid!("--node-exporter {e}"))?;
        Ok(t)
    }

    /// The credentials and CA files for `--prometheus-server`, read and checked.
    pub(crate) fn prometheus_access(
        &self,
    ) -> Result<crate::metrics::prometheus_server::Access, crate::error::Invalid> {
        use crate::metrics::prometheus_server::{Access, Auth};
        let auth = match (self.prometheus_credentials, self.prometheus_token) {
            (Some(f), _) => {
                let c = crate::load::session::Credentials::from_file(f)
                    .map_err(|e| crate::invalid!("--prometheus-credentials: {e}"))?;
                Some(Auth::Basic {
                    user: c.username,
                    password: c.password,
                })
            }
            (None, Some(f)) => {
                let text = std::fs::read_to_string(f)
                    .map_err(|e| crate::invalid!("--prometheus-token {}: {e}", f.display()))?;
                let token = text.lines().next().unwrap_or("").trim().to_string();
                if token.is_empty() || token.contains(char::is_whitespace) {
                    return Err(crate::invalid!(
                        "--prometheus-token {}: expected a token on its first line",
                        f.display()
                    ));
                }
                Some(Auth::Bearer(token))
            }
            (None, None) => None,
        };
        let ca_pem = match self.prometheus_ca {
            None => None,
            Some(f) => {
                let name = format!("--prometheus-ca {}", f.display());
                let pem = std::fs::read(f).map_err(|e| crate::invalid!("{name}: {e}"))?;
                Some(Access::ca(pem, &name)?)
            }
        };
        Ok(Access { auth, ca_pem })
    }

    /// What to fetch from `--prometheus-server` (the window set by the caller) at `step_s`,
    /// `None` without one: the server, the instances given, and the target's nodes (a local
    /// cluster's names and addresses, else the contact points' hosts).
    pub fn prometheus_fetch(
        &self,
        ctx: &Context,
        step_s: f64,
    ) -> Result<Option<crate::metrics::prometheus_server::FetchSpec>, ScenarioError> {
        use crate::metrics::prometheus_server::{FetchSpec, NodeInstance, Server, host_part};
        let Some(url) = self.prometheus_server else {
            return Ok(None);
        };
        let server = Server::parse(url).map_err(|e| crate::invalid!("--prometheus-server {e}"))?;
        let instances = self
            .prometheus_instance
            .iter()
            .map(|i| NodeInstance::parse(i))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| crate::invalid!("--prometheus-instance {e}"))?;
        let access = self.prometheus_access()?;
        let target = self.target(ctx)?;
        let nodes = match target.cluster() {
            Some(c) => c
                .nodes()
                .iter()
                .map(|n| (n.name.clone(), n.address.clone()))
                .collect(),
            None => target
                .contact_points()
                .iter()
                .map(|h| (host_part(h).to_string(), h.clone()))
                .collect(),
        };
        Ok(Some(FetchSpec {
            server,
            access,
            instances,
            nodes,
            start_unix_s: 0.0,
            end_unix_s: 0.0,
            t0_unix_s: 0.0,
            step_s,
            timeout: FETCH_TIMEOUT,
        }))
    }
}

impl RunStep {
    /// Who applies the faults: a local cluster's nodes (the schedule checked against their
    /// count), hook commands for other targets, nobody without faults.
    fn injector(&self, target: &Target) -> Result<Option<Arc<dyn Inject>>, ScenarioError> {
        Ok(match (self.fault.is_empty(), target.cluster()) {
            (true, None) => None,
            (_, Some(c)) => {
                crate::spec::fault::check_schedule(
                    &self.fault,
                    self.main_phase_s(),
                    Some(c.nodes().len()),
                )?;
                let network = [
                    crate::fault::Action::Partition,
                    crate::fault::Action::Heal,
                    crate::fault::Action::Isolate,
                    crate::fault::Action::Rejoin,
                ];
                if c.lab().is_none()
                    && let Some(f) = self.fault.iter().find(|f| network.contains(&f.action))
                {
                    refuse!(
                        "--fault {f}: cluster '{}' has no network lab: network faults need one (`cluster create NAME --netns`)",
                        c.name()
                    );
                }
                if let Some(f) = self.fault.iter().find(|f| {
                    f.dc.as_ref()
                        .is_some_and(|dc| !c.state.spec.dcs.iter().any(|d| &d.name == dc))
                }) {
                    refuse!(
                        "--fault {f}: cluster '{}' has no such data centre",
                        c.name()
                    );
                }
                Some(Arc::new(LocalInjector {
                    cluster: c.clone(),
                    keyspace: self.keyspace.clone(),
                }))
            }
            (false, None) => Some(Arc::new(HookInjector)),
        })
    }

    /// The workload spec with its replication, and the replicas to put in the local DC once
    /// it is known (`--hosts` without `--dc`: the run reads the DC from the node it connects
    /// to).
    fn replicated(
        &self,
        mut w: WorkloadSpec,
        target: &Target,
    ) -> Result<(WorkloadSpec, Option<u32>), ScenarioError> {
        let local_dc = target.local_dc();
        // A bare RF, or none with --hosts, is for the local DC.
        let mut local_rf = None;
        w.replication = match (&self.rf, target.default_replication(), &local_dc) {
            (Some(Rf::Local(n)), _, Some(dc)) => BTreeMap::from([(dc.clone(), *n)]),
            (Some(Rf::Local(n)), _, None) => {
                local_rf = Some(*n);
                BTreeMap::new()
            }
            (Some(Rf::PerDc(per_dc)), _, _) => per_dc.clone(),
            (None, Some(per_dc), _) => per_dc,
            (None, None, Some(dc)) => BTreeMap::from([(dc.clone(), 1)]),
            (None, None, None) => {
                local_rf = Some(1);
                BTreeMap::new()
            }
        };
        Ok((w, local_rf))
    }

    /// The workload spec of the step's flags (its replication left to [`Self::replicated`]).
    pub(super) fn workload_base(
        &self,
        profile: Option<&ProfileRead>,
    ) -> Result<WorkloadSpec, crate::error::Invalid> {
        let mut w = WorkloadSpec::defaults(self.workload);
        w.schema_version = WORKLOAD_SPEC_VERSION;
        w.keyspace = self.keyspace.clone();
        w.rows = self.rows;
        if let Some(p) = self.partsize {
            w.partsize = p;
        }
        if let Some(v) = self.value_size {
            w.value_size = v;
        }
        if let Some(c) = self.columns {
            w.columns = c;
        }
        if let Some(r) = &self.ratio {
            w.ratio = r.clone();
        }
        if let Some(d) = self.key_dist {
            w.key_dist = d;
        }
        w.verify_reads = self.verify;
        w.write_cl = self.write_cl.or(self.consistency).unwrap_or(w.write_cl);
        w.read_cl = self.read_cl.or(self.consistency).unwrap_or(w.read_cl);
        w.table_options = self.table_options.clone();
        if let Some(p) = profile {
            w.ratio = p.ratio.clone();
            if self.keyspace == DEFAULT_KEYSPACE {
                w.keyspace = parse_keyspace(&p.profile.file.keyspace)
                    .map_err(|e| crate::invalid!("{}: keyspace: {e}", p.path.display()))?;
            }
            w.profile = Some(ProfileSource {
                path: p.path.clone(),
                text: p.text.clone(),
            });
        }
        Ok(w)
    }

    /// The rampup (writing the key space once, this process's share of it with `--cycles`)
    /// and the main phase, closed loop (a rate is set by the caller).
    pub(super) fn phases(
        &self,
        w: &WorkloadSpec,
        profile: Option<&ProfileRead>,
    ) -> (Option<LoadSpec>, LoadSpec) {
        let threads = self.threads.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        });
        // A shard drives its part of the requests in flight.
        let share = self.shard.unwrap_or(Share::WHOLE);
        let main = LoadSpec {
            mode: LoadMode::Closed {
                concurrency: share.split(self.concurrency.unwrap_or(128)),
            },
            stop: match self.ops {
                Some(n) => Stop::Ops { count: n },
                None => Stop::Duration {
                    secs: self.main_phase_s().unwrap_or(super::DEFAULT_DURATION_S),
                },
            },
            warmup_s: self.warmup.as_secs_f64(),
            threads,
            timeout_s: self.timeout.as_secs_f64(),
            max_errors: self.max_errors,
            cycles: self.cycles.unwrap_or(Cycles {
                start: 0,
                end: u64::MAX,
            }),
            share,
            send_window_s: self.send_window.as_secs_f64(),
        };
        // A profile's partitions take several operations each.
        let rampup_ops = match profile {
            Some(p) => w.rows.saturating_mul(p.profile.rampup_chunks().1),
            None => w.rows,
        };
        let cycles = match self.cycles {
            Some(c) => Cycles {
                start: c.start.min(rampup_ops),
                end: c.end.min(rampup_ops),
            },
            None => Cycles {
                start: 0,
                end: rampup_ops,
            },
        };
        let rampup = (!self.skip_rampup && cycles.end > cycles.start).then(|| LoadSpec {
            mode: LoadMode::Closed {
                concurrency: share.split(self.rampup_concurrency.max(1)),
            },
            stop: Stop::Ops {
                count: cycles.end - cycles.start,
            },
            warmup_s: 0.0,
            cycles,
            send_window_s: 0.0,
            ..main.clone()
        });
        (rampup, main)
    }

    /// `--rate` in ops/s, reading the `--of` result for a share (which is returned too).
    fn resolve_rate(&self, r: RateArg) -> Result<(f64, Option<RateShare>), ScenarioError> {
        let of = match (&self.of, r) {
            (Some(path), RateArg::Share(share)) => {
                let res = RunResult::read(path)?;
                let Some(s) = res.main_summary() else {
                    refuse!("{}: the run has no main-phase result", path.display());
                };
                Some(RateShare {
                    share,
                    of: path.clone(),
                    of_ops_per_s: s.ops_per_s,
                })
            }
            _ => None,
        };
        let rate = r.resolve(of.as_ref().map(|o| o.of_ops_per_s))?;
        Ok((rate, of))
    }

    /// The client's settings: the TLS the flags give (`explicit`), or else the local cluster's
    /// own unless `--no-tls`, with the checked driver settings.
    pub fn client(
        &self,
        target: &Target,
        explicit: Option<TlsSpec>,
        driver: DriverSpec,
    ) -> ClientSpec {
        let tls = match (explicit, self.no_tls) {
            (Some(t), _) => Some(t),
            (None, false) => target.cluster_tls().map(|t| TlsSpec {
                min_version: self.tls_min_version.unwrap_or_default(),
                ..t
            }),
            (None, true) => None,
        };
        ClientSpec { tls, driver }
    }

    /// `--credentials-file`, else the credentials the context carries.
    fn credentials(&self, ctx: &Context) -> Result<Option<Credentials>, ScenarioError> {
        Ok(match &self.credentials_file {
            Some(f) => Some(Credentials::from_file(f)?),
            None => ctx.credentials.clone(),
        })
    }
}

/// The latest probe of environment `env` in the context's probes directory.
fn latest_probe(ctx: &Context, env: &str) -> Option<ProbeRef> {
    crate::probe::store::latest_for_env(&ctx.probes_dir(), env).map(|(path, p)| ProbeRef {
        path,
        summary: p.summary,
    })
}
