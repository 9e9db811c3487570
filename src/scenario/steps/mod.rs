//! Typed step specs: what each step of a scenario (and each cqlbench command) does. One type per
//! step is both the command line (`clap::Args`, flags) and the scenario-file step (`serde`,
//! keys named as the flags, unknown keys refused); values go through the same parsers either
//! way, and `validate` refuses what the command would refuse, before anything starts.

pub mod capacity;
pub mod cluster;
pub mod de;
pub mod fill;
pub mod probe;
pub mod report;
pub mod run;
pub mod scaling;
pub mod throughput;

use std::path::{Path, PathBuf};

pub use capacity::CapacityStep;
pub use cluster::{ClusterOptions, ClusterSection};
pub use fill::FillStep;
pub use probe::ProbeStep;
pub use report::ReportStep;
pub use run::RunStep;
pub use scaling::ScalingStep;

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
        }
    }

    /// A step from its command and options (`{workload: tabular, rate: 35%, …}`, or nothing);
    /// the error names the key at fault.
    pub fn from_yaml(
        command: &str,
        options: serde_yaml::Value,
    ) -> Result<Step, crate::error::Invalid> {
        let options = match options {
            serde_yaml::Value::Null => serde_yaml::Value::Mapping(Default::default()),
            m @ serde_yaml::Value::Mapping(_) => m,
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
            _ => vec![],
        }
    }

    /// The run part of a load step.
    pub fn run_spec(&self) -> Option<&RunStep> {
        match self {
            Step::Probe(_) => None,
            Step::Run(r) | Step::Throughput(r) | Step::Latency(r) => Some(r),
            Step::Capacity(c) => Some(&c.run),
            Step::Fill(f) => Some(&f.run),
            Step::Scaling(s) => Some(&s.capacity.run),
        }
    }

    fn run_spec_mut(&mut self) -> Option<&mut RunStep> {
        match self {
            Step::Probe(_) => None,
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
            s => s.run_spec().and_then(|r| r.out.as_deref()),
        }
    }

    /// Checks every value that can be checked before any cluster starts.
    pub fn validate(&self) -> anyhow::Result<()> {
        match self {
            Step::Probe(p) => p.validate(),
            Step::Run(r) => r.validate(),
            Step::Throughput(r) => throughput::validate_throughput(r),
            Step::Latency(r) => throughput::validate_latency(r),
            Step::Capacity(c) => c.validate(),
            Step::Fill(f) => f.validate(),
            Step::Scaling(s) => s.validate(),
        }
    }

    /// Runs the step; local clusters are looked up in `clusters`.
    pub fn run(&self, clusters: &Path) -> anyhow::Result<()> {
        match self {
            Step::Probe(p) => probe::run(p, clusters).map(drop),
            Step::Run(r) => run::execute(r, clusters).map(drop),
            Step::Throughput(r) => throughput::throughput(r, clusters).map(drop),
            Step::Latency(r) => throughput::latency(r, clusters).map(drop),
            Step::Capacity(c) => capacity::run(c, clusters).map(drop),
            Step::Fill(f) => fill::run(f, clusters).map(drop),
            Step::Scaling(s) => scaling::run(s, clusters).map(drop),
        }
    }

    /// The step as the cqlbench command line that does the same (for the plan's printout).
    pub fn describe(&self) -> String {
        let mut line = self.command().to_string();
        if let Step::Probe(p) = self
            && let Some(c) = &p.cluster
        {
            line.push_str(&format!(" --cluster {c}"));
        }
        if let Step::Probe(p) = self
            && let Some(dc) = &p.dc
        {
            line.push_str(&format!(" --dc {dc}"));
        }
        if let Step::Scaling(s) = self {
            let sizes: Vec<String> = s.nodes.iter().map(|n| n.to_string()).collect();
            line.push_str(&format!(" --nodes {}", sizes.join(",")));
            if let Some((base, _)) = &s.base {
                let names: Vec<String> = s
                    .nodes
                    .iter()
                    .map(|n| scaling::ScalingStep::cluster_name(base, *n))
                    .collect();
                line.push_str(&format!(" (on clusters {})", names.join(", ")));
            }
        }
        if let Some(r) = self.run_spec() {
            line.push_str(&format!(" {}", r.workload));
            if let Some(p) = &r.profile {
                line.push_str(&format!(" --profile {}", p.display()));
            }
            if let Some(o) = &r.profile_ops {
                line.push_str(&format!(" --profile-ops '{o}'"));
            }
            if let Some(d) = &r.key_dist {
                line.push_str(&format!(" --key-dist {d}"));
            }
            if r.verify {
                line.push_str(" --verify");
            }
            if let Some(c) = &r.cluster
                && !matches!(self, Step::Scaling(_))
            {
                line.push_str(&format!(" --cluster {c}"));
            }
            if !r.hosts.is_empty() {
                line.push_str(&format!(" --hosts {}", r.hosts.join(",")));
            }
            if let Some(rate) = &r.rate {
                line.push_str(&format!(" --rate {rate}"));
            }
            if let Some(c) = r.concurrency {
                line.push_str(&format!(" --concurrency {c}"));
            }
            if let Some(d) = r.duration {
                line.push_str(&format!(" --duration {}s", d.as_secs_f64()));
            }
        }
        if let Some(out) = self.out() {
            line.push_str(&format!(" --out {}", out.display()));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml<T: serde::de::DeserializeOwned>(text: &str) -> T {
        de::from_value(serde_yaml::from_str(text).unwrap()).unwrap()
    }

    /// A spec built in code is refused as the command line and the file refuse it.
    #[test]
    fn specs_built_in_code_are_checked_the_same_way() {
        let mut r: RunStep = yaml("workload: keyvalue");
        r.validate().unwrap();
        r.concurrency = Some(0);
        assert!(
            r.validate()
                .unwrap_err()
                .to_string()
                .contains("--concurrency")
        );
        r.concurrency = None;
        r.rate = Some(crate::spec::load::RateArg::Share(0.35));
        assert!(r.validate().unwrap_err().to_string().contains("--of"));
        let step = Step::Latency(Box::new(yaml("workload: keyvalue")));
        assert!(
            step.validate()
                .unwrap_err()
                .to_string()
                .contains("fixed rate")
        );
        // Values a flag's parser refuses are refused by the spec's own checks too.
        let err = Step::from_yaml(
            "latency",
            serde_yaml::from_str("{workload: keyvalue, rate: -1}").unwrap(),
        )
        .unwrap_err();
        assert!(err.starts_with("rate:"), "{err}");
        let err = Step::from_yaml(
            "run",
            serde_yaml::from_str("{workload: keyvalue, fault: ['30s:explode:node1']}").unwrap(),
        )
        .unwrap_err();
        assert!(
            err.starts_with("fault:") && err.contains("unknown action 'explode'"),
            "{err}"
        );
    }
}
