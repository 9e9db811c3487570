//! Typed step specs: what each step of a scenario (and each cqlbench command) does. One type per
//! step is both the command line (`clap::Args`, flags) and the scenario-file step (`serde`,
//! keys named as the flags, unknown keys refused); values go through the same parsers either
//! way, and `validate` refuses what the command would refuse, before anything starts. A step
//! runs with a [`Context`] and returns its typed [`Outcome`]; [`argv`] turns it back into its
//! command line.

pub mod capacity;
pub mod cluster;
pub mod fill;
pub mod metrics_check;
pub mod probe;
pub mod report;
pub mod run;
pub mod scaling;
pub mod smoke;
pub mod throughput;

use std::path::{Path, PathBuf};

pub use capacity::CapacityStep;
pub use cluster::{ClusterOptions, ClusterSection};
pub use fill::FillStep;
pub use probe::ProbeStep;
pub use report::ReportStep;
pub use run::RunStep;
pub use scaling::ScalingStep;
pub use smoke::SmokeStep;

use super::{Context, Outcome, ScenarioError};
pub use crate::step::{argv, de};

/// Makes ready to write a result at `out`: refused in one line when it is a directory or lies
/// under a file, else its directory is created.
pub fn prepare_out(out: &Path) -> Result<(), ScenarioError> {
    crate::fsutil::check_out_path(out)?;
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| ScenarioError::io("creating", dir, e))?;
    }
    Ok(())
}

/// Where a scenario's step runs: a local cluster or hosts, and the environment label.
#[derive(Debug, Clone, Default)]
pub struct Placement {
    pub cluster: Option<String>,
    pub hosts: Vec<String>,
    pub env: Option<String>,
    /// The local cluster's options (what a scaling step resizes).
    pub options: Option<ClusterOptions>,
}

/// One step of a scenario.
#[derive(Debug, Clone)]
pub enum Step {
    Probe(Box<ProbeStep>),
    Run(Box<RunStep>),
    /// Unthrottled at a fixed concurrency (reference 000's throughput test).
    Throughput(Box<RunStep>),
    /// At a fixed rate (reference 000's latency test).
    Latency(Box<RunStep>),
    Capacity(Box<CapacityStep>),
    Fill(Box<FillStep>),
    /// The same capacity search at several cluster sizes (reference 004).
    Scaling(Box<ScalingStep>),
    /// The cluster's status and a write/read check at QUORUM (the quickstart's first step).
    Smoke(Box<SmokeStep>),
}

impl Step {
    /// The commands a step may be.
    pub const COMMANDS: &[&str] = &[
        "probe",
        "run",
        "throughput",
        "latency",
        "capacity",
        "fill",
        "scaling",
        "smoke",
    ];

    /// The commands whose steps put load on a cluster: those with a run part
    /// ([`Self::run_spec`]), which take the connection settings of a scenario's environment.
    pub const LOAD_COMMANDS: &[&str] = &[
        "run",
        "throughput",
        "latency",
        "capacity",
        "fill",
        "scaling",
    ];

    pub fn command(&self) -> &'static str {
        match self {
            Step::Probe(_) => "probe",
            Step::Run(_) => "run",
            Step::Throughput(_) => "throughput",
            Step::Latency(_) => "latency",
            Step::Capacity(_) => "capacity",
            Step::Fill(_) => "fill",
            Step::Scaling(_) => "scaling",
            Step::Smoke(_) => "smoke",
        }
    }

    /// A step from its command and options (`{workload: tabular, rate: 35%, …}`, or nothing);
    /// the error names the key at fault.
    pub fn from_yaml(
        command: &str,
        options: crate::yaml::Value,
    ) -> Result<Step, crate::error::Invalid> {
        let options = match options {
            crate::yaml::Value::Null => crate::yaml::Value::Object(Default::default()),
            m @ crate::yaml::Value::Object(_) => m,
            _ => return Err("options must be a map of key: value".into()),
        };
        Ok(match command {
            "probe" => Step::Probe(Box::new(de::from_value(options)?)),
            "run" => Step::Run(Box::new(de::from_value(options)?)),
            "throughput" => Step::Throughput(Box::new(de::from_value(options)?)),
            "latency" => Step::Latency(Box::new(de::from_value(options)?)),
            "capacity" => Step::Capacity(Box::new(de::from_value(options)?)),
            "fill" => Step::Fill(Box::new(de::from_value(options)?)),
            "scaling" => Step::Scaling(Box::new(de::from_value(options)?)),
            "smoke" => Step::Smoke(Box::new(de::from_value(options)?)),
            other => {
                return Err(crate::invalid!(
                    "'{other}' is not a step command ({})",
                    Step::COMMANDS.join(", ")
                ));
            }
        })
    }

    /// The option keys a step of `command` takes (its flags' long names); empty for a command
    /// that is not a step.
    pub fn keys(command: &str) -> Vec<&'static str> {
        let run = de::field_names::<RunStep>();
        match command {
            "probe" => de::field_names::<ProbeStep>().to_vec(),
            "run" | "throughput" | "latency" => run.to_vec(),
            "capacity" => [run, de::field_names::<capacity::CapacitySearch>()].concat(),
            "fill" => [run, de::field_names::<fill::FillOptions>()].concat(),
            "scaling" => [
                run,
                de::field_names::<capacity::CapacitySearch>(),
                scaling::KEYS,
            ]
            .concat(),
            "smoke" => de::field_names::<SmokeStep>().to_vec(),
            _ => vec![],
        }
    }

    /// The run part of a load step.
    pub fn run_spec(&self) -> Option<&RunStep> {
        match self {
            Step::Probe(_) | Step::Smoke(_) => None,
            Step::Run(r) | Step::Throughput(r) | Step::Latency(r) => Some(r),
            Step::Capacity(c) => Some(&c.run),
            Step::Fill(f) => Some(&f.run),
            Step::Scaling(s) => Some(&s.capacity.run),
        }
    }

    pub(crate) fn run_spec_mut(&mut self) -> Option<&mut RunStep> {
        match self {
            Step::Probe(_) | Step::Smoke(_) => None,
            Step::Run(r) | Step::Throughput(r) | Step::Latency(r) => Some(r),
            Step::Capacity(c) => Some(&mut c.run),
            Step::Fill(f) => Some(&mut f.run),
            Step::Scaling(s) => Some(&mut s.capacity.run),
        }
    }

    /// What a scenario gives each step: its target — a local cluster, or hosts — unless the
    /// step names one, its environment label unless the step has one, and where the result
    /// goes (a step must not choose that: `out` is refused).
    pub fn place(&mut self, at: &Placement, out: PathBuf) {
        match self {
            Step::Probe(p) => {
                if p.cluster.is_none() && p.dir.is_none() {
                    p.cluster = at.cluster.clone();
                }
                // A data centre's probe is labelled CLUSTER-DC (its storage class's).
                if p.env.is_none() && p.dc.is_none() {
                    p.env = at.env.clone();
                }
                p.out = Some(out);
            }
            Step::Smoke(s) => s.cluster = at.cluster.clone(),
            _ => {
                if let Step::Scaling(s) = self {
                    s.base = at.cluster.clone().zip(at.options.clone());
                }
                let r = self.run_spec_mut().expect("a load step");
                if r.cluster.is_none() && r.hosts.is_empty() {
                    match &at.cluster {
                        Some(c) => r.cluster = Some(c.clone()),
                        None => r.hosts = at.hosts.clone(),
                    }
                }
                if r.env.is_none() {
                    r.env = at.env.clone();
                }
                r.out = Some(out);
            }
        }
    }

    /// Where the step writes its result, when set.
    pub fn out(&self) -> Option<&Path> {
        match self {
            Step::Probe(p) => p.out.as_deref(),
            Step::Smoke(_) => None,
            s => s.run_spec().and_then(|r| r.out.as_deref()),
        }
    }

    /// Checks every value that can be checked before any cluster starts.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        match self {
            Step::Probe(p) => p.validate(),
            Step::Run(r) => Ok(r.validate()?),
            Step::Throughput(r) => Ok(throughput::validate_throughput(r)?),
            Step::Latency(r) => Ok(throughput::validate_latency(r)?),
            Step::Capacity(c) => Ok(c.validate()?),
            Step::Fill(f) => Ok(f.validate()?),
            Step::Scaling(s) => s.validate(),
            Step::Smoke(s) => s.validate(),
        }
    }

    /// Runs the step and returns what it wrote.
    pub fn run(&self, ctx: &Context) -> Result<Outcome, ScenarioError> {
        Ok(match self {
            Step::Probe(p) => Outcome::Probe(Box::new(probe::run(p, ctx)?)),
            Step::Run(r) => Outcome::Run(Box::new(run::execute(r, ctx)?)),
            Step::Throughput(r) => Outcome::Run(Box::new(throughput::throughput(r, ctx)?)),
            Step::Latency(r) => Outcome::Run(Box::new(throughput::latency(r, ctx)?)),
            Step::Capacity(c) => Outcome::Capacity(Box::new(capacity::run(c, ctx)?)),
            Step::Fill(f) => Outcome::Run(Box::new(fill::run(f, ctx)?)),
            Step::Scaling(s) => Outcome::Scaling(Box::new(scaling::run(s, ctx)?)),
            Step::Smoke(s) => Outcome::Smoke(smoke::run(s, ctx)?),
        })
    }

    /// The step as the arguments of the cqlbench command that does the same, every option
    /// that is not at its default included (the shard options a process gets of its own
    /// aside).
    pub fn args(&self) -> Vec<String> {
        match self {
            Step::Probe(p) => {
                let defaults: ProbeStep =
                    de::from_value(crate::yaml::Value::Object(Default::default()))
                        .expect("no keys is a valid probe");
                argv::args("probe", &[], p.as_ref(), Some(&defaults))
            }
            Step::Run(r) => r.args_shown("run"),
            Step::Throughput(r) => throughput::throughput_run(r).args_shown("throughput"),
            Step::Latency(r) => r.args_shown("latency"),
            Step::Capacity(c) => c.args_shown("capacity"),
            Step::Fill(f) => {
                let mut a = f.run.args_shown("fill");
                a.extend(argv::part_flags(&f.fill, None));
                a
            }
            Step::Scaling(s) => {
                let mut a = s.capacity.args_shown("scaling");
                let sizes: Vec<String> = s.nodes.iter().map(|n| n.to_string()).collect();
                a.extend(["--nodes".to_string(), sizes.join(",")]);
                a
            }
            Step::Smoke(s) => argv::args("smoke", &[], s.as_ref(), None),
        }
    }

    /// The step as one command line a shell reads back (for the plan's printout). A scaling
    /// or smoke step has no command of its own: it is a scenario step, shown in the same form
    /// without the `cqlbench` that would make it look like a command to paste.
    pub fn describe(&self) -> String {
        let mut line = argv::shell_line(&self.args());
        if matches!(self, Step::Scaling(_) | Step::Smoke(_)) {
            line = line.trim_start_matches("cqlbench ").to_string();
        }
        if let Step::Scaling(s) = self
            && let Some((base, _)) = &s.base
        {
            let names: Vec<String> = s
                .nodes
                .iter()
                .map(|n| scaling::ScalingStep::cluster_name(base, *n))
                .collect();
            line.push_str(&format!(" (on clusters {})", names.join(", ")));
        }
        if matches!(self, Step::Scaling(_) | Step::Smoke(_)) {
            line.push_str(" (a scenario step: no cqlbench command of its own)");
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml<T: serde::de::DeserializeOwned>(text: &str) -> T {
        de::from_value(crate::yaml::from_str(text).unwrap()).unwrap()
    }

    /// A spec built in code is refused as the command line and the file refuse it.
    #[test]
    fn specs_built_in_code_are_checked_the_same_way() {
        let mut r: RunStep = yaml("workload: keyvalue");
        r.validate().unwrap();
        r.concurrency = Some(0);
        assert!(r.validate().unwrap_err().contains("--concurrency"));
        r.concurrency = None;
        r.rate = Some(crate::spec::load::RateArg::Share(0.35));
        assert!(r.validate().unwrap_err().contains("--of"));
        let step = Step::Latency(Box::new(yaml("workload: keyvalue")));
        assert!(
            step.validate()
                .unwrap_err()
                .one_line()
                .contains("fixed rate")
        );
        // Values a flag's parser refuses are refused by the spec's own checks too.
        let err = Step::from_yaml(
            "latency",
            crate::yaml::from_str("{workload: keyvalue, rate: -1}").unwrap(),
        )
        .unwrap_err();
        assert!(err.starts_with("rate:"), "{err}");
        let err = Step::from_yaml(
            "run",
            crate::yaml::from_str("{workload: keyvalue, fault: ['30s:explode:node1']}").unwrap(),
        )
        .unwrap_err();
        assert!(
            err.starts_with("fault:") && err.contains("unknown action 'explode'"),
            "{err}"
        );
    }
}
