//! The checks of a run step that need no cluster: the combinations of its flags here, then
//! the values of the specs it makes ([`crate::spec::LoadSpec::check`],
//! [`crate::workload::check_spec`]: the same rules a spec built in code meets in the load
//! engine). What building its plan would refuse before it connects, so a flag, a scenario key
//! and a step built in code are refused alike, and a scenario's dry run refuses it too.

use crate::spec::client::{DriverSpec, HostnameCheck, KeyPassword, TlsSpec};
use std::path::PathBuf;
use std::time::Duration;

use super::{DEFAULT_DURATION_S, RunStep};
use crate::error::Invalid;
use crate::metrics::sampler::Endpoint;
use crate::spec::load::RateArg;
use crate::spec::{LoadSpec, Ratio, WorkloadKind, WorkloadSpec};
use crate::workload::profile::Profile;

/// A user profile as the step reads it, once: its text, the profile, the ratio of its
/// operations.
pub(super) struct ProfileRead {
    pub path: PathBuf,
    pub text: String,
    pub profile: Profile,
    pub ratio: Ratio,
}

/// What a checked step makes: its workload spec (replication aside, which needs the target;
/// a profile read once, into it) and its phases (closed loop: a rate is set from the target).
pub(super) struct Checked {
    pub workload: WorkloadSpec,
    pub rampup: Option<LoadSpec>,
    pub main: LoadSpec,
    /// The TLS the flags give (None without `--tls-ca`) and the driver settings.
    pub tls: Option<TlsSpec>,
    pub driver: DriverSpec,
}

/// Refuses with a one-line message.
macro_rules! no {
    ($($t:tt)*) => {
        return Err(crate::invalid!($($t)*))
    };
}

impl RunStep {
    /// Checks every value and combination that can be checked without the cluster.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.checked().map(drop)
    }

    /// [`Self::validate`], keeping what the checks made.
    pub(super) fn checked(&self) -> Result<Checked, Invalid> {
        self.check_target()?;
        let tls = self.explicit_tls()?;
        let driver = self.driver()?;
        self.check_workload()?;
        self.check_shards()?;
        self.check_load()?;
        let profile = match &self.profile {
            Some(_) => Some(self.load_profile()?),
            None => None,
        };
        let workload = self.workload_base(profile.as_ref())?;
        crate::workload::check_spec(&workload)?;
        let (rampup, main) = self.phases(&workload, profile.as_ref());
        main.check()?;
        if let Some(r) = &rampup {
            r.check()?;
        }
        Ok(Checked {
            workload,
            rampup,
            main,
            tls,
            driver,
        })
    }

    /// Reads the files the step names to reach the cluster — its TLS files (an encrypted key
    /// opened with its password) and its credentials file — so that a scenario's dry run
    /// refuses a bad one. Not part of [`Self::validate`], which also checks steps whose files
    /// are another host's (a Kubernetes pod's).
    pub fn check_files(&self) -> Result<(), Invalid> {
        if let Some(t) = self.explicit_tls()? {
            crate::tls::client_config(&t)?;
        }
        if let Some(f) = &self.credentials_file {
            crate::load::session::Credentials::from_file(f)?;
        }
        self.reach().prometheus_access()?;
        Ok(())
    }

    /// The TLS the flags give (`--tls-ca` and the rest), checked; None without `--tls-ca`.
    /// Its files are read when connecting.
    pub(super) fn explicit_tls(&self) -> Result<Option<TlsSpec>, Invalid> {
        let Some(ca) = &self.tls_ca else {
            if self.tls_cert.is_some()
                || self.tls_key.is_some()
                || self.tls_key_password_file.is_some()
                || self.tls_key_password_env.is_some()
                || self.tls_server_name.is_some()
                || self.tls_no_hostname_check
            {
                return Err(crate::invalid!(
                    "--tls-cert, --tls-key (and its password), --tls-server-name and --tls-no-hostname-check need --tls-ca (the CA that signed the nodes' certificates)"
                ));
            }
            return Ok(None);
        };
        if self.no_tls {
            return Err(crate::invalid!(
                "--no-tls and --tls-ca contradict each other: give one"
            ));
        }
        let tls = TlsSpec {
            ca: ca.clone(),
            cert: self.tls_cert.clone(),
            key: self.tls_key.clone(),
            key_password: match (&self.tls_key_password_file, &self.tls_key_password_env) {
                (Some(_), Some(_)) => {
                    return Err(crate::invalid!(
                        "--tls-key-password-file and --tls-key-password-env contradict each other: give one"
                    ));
                }
                (Some(f), None) => Some(KeyPassword::File(f.clone())),
                (None, Some(v)) => Some(KeyPassword::Env(v.clone())),
                (None, None) => None,
            },
            hostname: match (&self.tls_server_name, self.tls_no_hostname_check) {
                (Some(_), true) => {
                    return Err(crate::invalid!(
                        "--tls-server-name and --tls-no-hostname-check contradict each other: give one"
                    ));
                }
                (Some(n), false) => HostnameCheck::Name(n.clone()),
                (None, true) => HostnameCheck::Skip,
                (None, false) => HostnameCheck::Address,
            },
            min_version: self.tls_min_version.unwrap_or_default(),
        };
        tls.check()?;
        Ok(Some(tls))
    }

    /// The driver settings the flags give, checked.
    pub(super) fn driver(&self) -> Result<DriverSpec, Invalid> {
        let driver = DriverSpec {
            retry: self.retry,
            speculative: self.speculative,
            compression: self.compression,
            connections_per_host: self.connections_per_host,
            rack: self.rack.clone(),
            page_size: self.page_size,
            address_map: self
                .address_map
                .iter()
                .flat_map(|m| m.0.iter().copied())
                .collect(),
            require_all_nodes: self.require_all_nodes,
        };
        driver.check()?;
        if driver.rack.is_some() && self.cluster.is_none() && self.dc.is_none() {
            return Err(crate::invalid!(
                "--rack needs the local data centre: give --dc"
            ));
        }
        Ok(driver)
    }

    /// The main phase's length in seconds; `None` when it is an operation count.
    pub(super) fn main_phase_s(&self) -> Option<f64> {
        self.ops.is_none().then(|| {
            self.duration
                .map_or(DEFAULT_DURATION_S, |d| d.as_secs_f64())
        })
    }

    fn check_target(&self) -> Result<(), Invalid> {
        for t in &self.tag {
            crate::spec::probe::validate_tag(t)?;
        }
        if self.cluster.is_some() && !self.hosts.is_empty() {
            no!("give --cluster or --hosts, not both");
        }
        if let Some(dc) = &self.dc
            && (dc.trim().is_empty() || dc.contains([',', ':']) || dc.trim() != dc)
        {
            no!("--dc '{dc}': give one data centre name (e.g. dc1), the one the client is in");
        }
        if self.no_metrics && !self.prometheus.is_empty() {
            no!("give --prometheus or --no-metrics, not both");
        }
        if self.metrics_interval.as_secs_f64() < 0.1 {
            no!("--metrics-interval must be at least 100ms");
        }
        for e in &self.prometheus {
            Endpoint::parse(e).map_err(|e| crate::invalid!("--prometheus {e}"))?;
        }
        let mut exporter_nodes = std::collections::BTreeSet::new();
        for e in &self.node_exporter {
            let x = crate::metrics::node_exporter::NodeExporter::parse(e)
                .map_err(|e| crate::invalid!("--node-exporter {e}"))?;
            if !exporter_nodes.insert(x.node.clone()) {
                no!(
                    "--node-exporter {e}: node '{}' is given twice (one exporter per node's host)",
                    x.node
                );
            }
        }
        self.check_prometheus_server()?;
        Ok(())
    }

    /// `--prometheus-server` and its `--prometheus-instance`s.
    fn check_prometheus_server(&self) -> Result<(), Invalid> {
        use crate::metrics::prometheus_server::{NodeInstance, Server};
        match &self.prometheus_server {
            None if !self.prometheus_instance.is_empty() => {
                no!("--prometheus-instance maps nodes on a --prometheus-server: give one")
            }
            None if self.prometheus_credentials.is_some()
                || self.prometheus_token.is_some()
                || self.prometheus_ca.is_some() =>
            {
                no!(
                    "--prometheus-credentials, --prometheus-token and --prometheus-ca are for a --prometheus-server: give one"
                )
            }
            None => {}
            Some(_) if self.no_metrics => {
                no!("give --prometheus-server or --no-metrics, not both")
            }
            Some(url) => {
                Server::parse(url).map_err(|e| crate::invalid!("--prometheus-server {e}"))?;
            }
        }
        for i in &self.prometheus_instance {
            NodeInstance::parse(i).map_err(|e| crate::invalid!("--prometheus-instance {e}"))?;
        }
        Ok(())
    }

    fn check_workload(&self) -> Result<(), Invalid> {
        match (self.workload == WorkloadKind::Profile, &self.profile) {
            (true, None) => {
                no!("workload profile needs --profile FILE (a cassandra-stress user profile)")
            }
            (false, Some(_)) => {
                no!("--profile goes with the workload profile: cqlbench run profile --profile FILE")
            }
            (true, Some(_)) => {
                if self.ratio.is_some() || self.partsize.is_some() {
                    no!(
                        "--ratio and --partsize: a profile's mix is --profile-ops and its partitions come from its columnspec"
                    );
                }
            }
            (false, None) => {}
        }
        if self.profile_ops.is_some() && self.workload != WorkloadKind::Profile {
            no!("--profile-ops is a profile's operation mix: use --ratio for built-in workloads");
        }
        if self.workload.fixed_row() && (self.value_size.is_some() || self.columns.is_some()) {
            no!(
                "--value-size and --columns: workload {} writes its reference workload's row as it is; use tabular, iot or stress to size values",
                self.workload
            );
        }
        if self.verify && self.ratio.as_ref().is_some_and(|r| r.has("delete")) {
            no!(
                "--verify with delete in the mix: a read finding no row could be a delete, not a lost write; leave delete out or run without --verify"
            );
        }
        Ok(())
    }

    fn check_load(&self) -> Result<(), Invalid> {
        if self.concurrency.is_some() && self.rate.is_some() {
            no!("give --concurrency (closed loop) or --rate (open loop), not both");
        }
        match (&self.of, &self.rate) {
            (Some(_), Some(RateArg::Share(_))) | (None, None | Some(RateArg::PerSecond(_))) => {}
            (Some(_), _) => no!("--of goes with a share rate such as --rate 35%"),
            (None, Some(RateArg::Share(_))) => {
                no!("--rate N% is a share of a throughput result: give --of RESULT.json")
            }
        }
        if !self.send_window.is_zero() && self.rate.is_none() {
            no!(
                "--send-window batches the sends of a fixed rate: give --rate (capacity: --start-rate)"
            );
        }
        if self.duration.is_some() && self.ops.is_some() {
            no!("give --duration or --ops, not both");
        }
        // Before a shard's part of them is taken (which is at least 1).
        if self.concurrency == Some(0) || self.max_in_flight == 0 {
            no!("--concurrency and --max-in-flight must be at least 1");
        }
        // The node count is checked against the cluster when the plan is built.
        let nodes = self.cluster.as_ref().map(|_| usize::MAX);
        crate::spec::fault::check_schedule(&self.fault, self.main_phase_s(), nodes)
    }

    fn check_shards(&self) -> Result<(), Invalid> {
        if let Some(n) = self.loaders
            && !(1..=64).contains(&n)
        {
            no!("--loaders {n}: give 1 to 64 local processes");
        }
        let sharded = self.shard.is_some() || self.loaders.is_some();
        if sharded && self.drop {
            no!(
                "--drop with --shard or --loaders: the other shards could read the keyspace while it is dropped; drop it before the run"
            );
        }
        if sharded && !self.fault.is_empty() {
            no!("--fault applies to one client: not with --shard or --loaders");
        }
        if self.barrier_timeout < Duration::from_secs(1) {
            no!("--barrier-timeout must be at least 1s");
        }
        Ok(())
    }

    /// The profile, read once, and the ratio of its operations (`--profile-ops`, else insert
    /// only).
    fn load_profile(&self) -> Result<ProfileRead, Invalid> {
        use crate::workload::profile::{parse_ops, run};
        let Some(path) = self.profile.as_ref() else {
            no!("workload profile needs --profile FILE (a cassandra-stress user profile)");
        };
        let invalid = |e: crate::workload::profile::ProfileError| Invalid(e.to_string());
        let text = std::fs::read_to_string(path)
            .map_err(|e| crate::invalid!("{}: file: {e}", path.display()))?;
        let profile = Profile::parse(path, &text).map_err(invalid)?;
        let ops = parse_ops(self.profile_ops.as_deref().unwrap_or("insert=1"))
            .map_err(|e| crate::invalid!("--profile-ops {e}"))?;
        profile.check_ops(&ops).map_err(invalid)?;
        if self.verify {
            profile
                .check_verifiable(&ops)
                .map_err(|e| crate::invalid!("--verify: {e}"))?;
        }
        let ratio = ops
            .iter()
            .filter(|(_, w)| **w > 0)
            .map(|(name, w)| (run::op_kind(&profile, name), *w))
            .collect();
        Ok(ProfileRead {
            path: path.clone(),
            text,
            profile,
            ratio: Ratio(ratio),
        })
    }
}
