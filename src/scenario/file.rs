//! Scenario files: a whole methodology in YAML — an optional local cluster, then steps
//! (probe, run, throughput, latency, capacity, fill) with their options — read into typed
//! step specs ([`crate::scenario::steps`]). Each step writes its result into the scenario's
//! directory, and later steps refer to earlier results as `{step-name}`.
//!
//! ```yaml
//! name: ref000
//! env: laptop
//! cluster: {name: ref000, nodes: 3, heap: 256M}
//! deployments: ["laptop=m5.xlarge,3"]
//! steps:
//!   - probe: {quick: true}
//!   - throughput: {workload: tabular, concurrency: 300, duration: 60s}
//!   - latency: {workload: tabular, skip-rampup: true, rate: 35%, of: "{throughput}"}
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_yaml::Value;

use super::steps::{ClusterOptions, ClusterSection, Step, de};
use crate::report::cost::Deployment;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Environment label of every step's result.
    #[serde(default, deserialize_with = "de::opt_env")]
    pub env: Option<String>,
    /// A local cluster: the options of `cqlbench cluster create` plus `name`.
    #[serde(default)]
    pub cluster: Option<ClusterSection>,
    /// How environments are deployed, for the report's cost table
    /// (`ENV=INSTANCE,NODES[,DISK][,TERM]`, as `report --deployment`).
    #[serde(default, deserialize_with = "de::list_parsed")]
    pub deployments: Vec<Deployment>,
    /// Each step: `{COMMAND: {options}}`, optionally with `name:`.
    pub steps: Vec<serde_yaml::Mapping>,
    /// Write a report of all results at the end (default: yes).
    #[serde(default = "yes")]
    pub report: bool,
}

fn yes() -> bool {
    true
}

/// One step, placed: its name, spec and result path.
#[derive(Debug, Clone)]
pub struct PlannedStep {
    pub name: String,
    pub step: Step,
    /// Its options as written (with `{step}` references replaced), for the printout.
    pub options: Value,
    /// Where its result goes.
    pub out: PathBuf,
}

/// The scenario, typed and placed in its directory.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub dir: PathBuf,
    pub cluster: Option<ClusterPlan>,
    pub steps: Vec<PlannedStep>,
    pub deployments: Vec<Deployment>,
    pub report: bool,
}

#[derive(Debug, Clone)]
pub struct ClusterPlan {
    pub name: String,
    pub options: ClusterOptions,
}

/// Reads a scenario file's text; the error names the key at fault.
pub fn parse(text: &str) -> Result<ScenarioFile, crate::error::Invalid> {
    let v: Value =
        serde_yaml::from_str(text).map_err(|e| crate::invalid!("not a scenario file: {e}"))?;
    de::from_value(v).map_err(|e| crate::invalid!("not a scenario file: {e}"))
}

/// Replaces `{step}` with that step's result path.
fn substitute(
    arg: &str,
    done: &BTreeMap<String, PathBuf>,
) -> Result<String, crate::error::Invalid> {
    let mut out = String::new();
    let mut rest = arg;
    while let Some(i) = rest.find('{') {
        let Some(j) = rest[i..].find('}') else { break };
        let key = &rest[i + 1..i + j];
        let path = done.get(key).ok_or_else(|| {
            format!(
                "'{{{key}}}' names no earlier step (steps so far: {:?})",
                done.keys().collect::<Vec<_>>()
            )
        })?;
        out.push_str(&rest[..i]);
        out.push_str(&path.to_string_lossy());
        rest = &rest[i + j + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `{step}` references replaced in every text value of a step's options.
fn substitute_all(
    v: &mut Value,
    done: &BTreeMap<String, PathBuf>,
) -> Result<(), crate::error::Invalid> {
    match v {
        Value::String(s) => *s = substitute(s, done)?,
        Value::Sequence(items) => {
            for i in items {
                substitute_all(i, done)?;
            }
        }
        Value::Mapping(m) => {
            for (_, i) in m.iter_mut() {
                substitute_all(i, done)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Turns a scenario file into typed steps writing into `dir`.
pub fn plan(f: &ScenarioFile, dir: &Path) -> Result<Plan, crate::error::Invalid> {
    let cluster = f.cluster.as_ref().map(|c| ClusterPlan {
        name: c.name.clone().unwrap_or_else(|| f.name.clone()),
        options: c.options.clone(),
    });
    let mut done: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut steps = Vec::new();
    for (i, step) in f.steps.iter().enumerate() {
        let n = i + 1;
        let mut cmds: Vec<&str> = step
            .keys()
            .filter_map(Value::as_str)
            .filter(|k| *k != "name")
            .collect();
        let (Some(command), None) = (cmds.pop(), cmds.pop()) else {
            return Err(crate::invalid!(
                "step {n}: expected one command ({}) and optionally a name",
                Step::COMMANDS.join(", ")
            ));
        };
        if !Step::COMMANDS.contains(&command) {
            return Err(crate::invalid!(
                "step {n}: '{command}' is not a step command ({})",
                Step::COMMANDS.join(", ")
            ));
        }
        let name = match step.get("name") {
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err(crate::invalid!("step {n}: the name must be text")),
            None if done.contains_key(command) => format!("{command}-{n}"),
            None => command.to_string(),
        };
        if done.contains_key(&name) {
            return Err(crate::invalid!("step {n}: the name '{name}' is used twice"));
        }
        let mut options = step.get(command).cloned().unwrap_or(Value::Null);
        if let Value::Mapping(m) = &options
            && m.contains_key("out")
        {
            return Err(crate::invalid!(
                "step {n} ({name}): 'out' is set by the scenario (results go into its directory)"
            ));
        }
        substitute_all(&mut options, &done)
            .map_err(|e| crate::invalid!("step {n} ({name}): {e}"))?;
        let mut spec = Step::from_yaml(command, options.clone())
            .map_err(|e| crate::invalid!("step {n} ({name}): {e}"))?;
        let out = dir.join(format!("{n:02}-{name}.json"));
        spec.place(
            cluster.as_ref().map(|c| c.name.as_str()),
            f.env.as_deref(),
            out.clone(),
        );
        done.insert(name.clone(), out.clone());
        steps.push(PlannedStep {
            name,
            step: spec,
            options,
            out,
        });
    }
    if steps.is_empty() {
        return Err(crate::invalid!("the scenario has no steps"));
    }
    Ok(Plan {
        name: f.name.clone(),
        dir: dir.to_path_buf(),
        cluster,
        steps,
        deployments: f.deployments.clone(),
        report: f.report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::load::RateArg;

    const FILE: &str = "
name: ref000
env: laptop
cluster: {name: r0, nodes: 3, heap: 256M, set: {concurrent_writes: 32}}
deployments: ['laptop=m5.xlarge,3']
steps:
  - probe: {quick: true, skip-cpu: false}
  - throughput: {workload: tabular, concurrency: 300, duration: 60s, ratio: 'write=5,range=5'}
  - latency: {workload: tabular, skip-rampup: true, rate: 35%, of: '{throughput}'}
    name: lat35
  - latency: {workload: tabular, rate: 100}
  - latency: {workload: tabular, rate: 200}
";

    fn run_spec(p: &Plan, i: usize) -> &crate::scenario::steps::RunStep {
        p.steps[i].step.run_spec().expect("a load step")
    }

    #[test]
    fn steps_become_typed_specs_with_results_in_the_directory() {
        let f = parse(FILE).unwrap();
        let p = plan(&f, Path::new("/s")).unwrap();
        let c = p.cluster.as_ref().unwrap();
        assert_eq!(c.name, "r0");
        assert_eq!(c.options.nodes, 3);
        assert_eq!(c.options.heap, Some(crate::spec::MiB(256)));
        assert_eq!(
            c.options.yaml,
            [("concurrent_writes".to_string(), serde_yaml::Value::from(32))]
        );
        assert_eq!(p.deployments.len(), 1);
        assert_eq!(p.steps.len(), 5);
        let Step::Probe(probe) = &p.steps[0].step else {
            panic!("step 1 is the probe")
        };
        assert!(probe.quick && !probe.skip_cpu);
        assert_eq!(probe.cluster.as_deref(), Some("r0"));
        assert_eq!(probe.env.as_deref(), Some("laptop"));
        assert_eq!(probe.out.as_deref(), Some(Path::new("/s/01-probe.json")));
        let t = run_spec(&p, 1);
        assert_eq!(t.concurrency, Some(300));
        assert_eq!(t.duration, Some(std::time::Duration::from_secs(60)));
        assert_eq!(t.cluster.as_deref(), Some("r0"));
        assert_eq!(t.out.as_deref(), Some(Path::new("/s/02-throughput.json")));
        assert_eq!(p.steps[2].name, "lat35");
        let l = run_spec(&p, 2);
        assert_eq!(l.rate, Some(RateArg::Share(0.35)));
        assert_eq!(l.of.as_deref(), Some(Path::new("/s/02-throughput.json")));
        assert!(l.skip_rampup);
        assert_eq!(p.steps[3].name, "latency");
        assert_eq!(p.steps[4].name, "latency-5");
        for s in &p.steps {
            s.step.validate().unwrap();
        }
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let bad = |text: &str| match parse(text) {
            Ok(f) => plan(&f, Path::new("/s")).unwrap_err(),
            Err(e) => e,
        };
        assert!(bad("name: x\nsteps: [{bake: {}}]").contains("not a step command"));
        assert!(bad("name: x\nsteps: [{run: {rate: 5}}]").contains("missing field `workload`"));
        assert!(
            bad("name: x\nsteps: [{latency: {workload: keyvalue, of: '{nope}'}}]")
                .contains("names no earlier step")
        );
        assert!(
            bad("name: x\nsteps: [{run: {workload: keyvalue, out: x}}]")
                .contains("set by the scenario")
        );
        assert!(bad("name: x\nsteps: []").contains("no steps"));
        assert!(bad("name: x\nstepz: []").contains("not a scenario file"));
    }

    #[test]
    fn unknown_keys_are_refused_with_their_name() {
        let e = |text: &str| plan(&parse(text).unwrap(), Path::new("/s")).unwrap_err();
        let msg = e("name: x\nsteps: [{run: {workload: keyvalue, concurency: 5}}]");
        assert!(
            msg.contains("step 1 (run)") && msg.contains("concurency"),
            "{msg}"
        );
        // A capacity step is a run and a search: unknown keys are refused there too.
        let msg = e("name: x\nsteps: [{capacity: {workload: keyvalue, stat-rate: 5}}]");
        assert!(msg.contains("stat-rate"), "{msg}");
        let msg = e("name: x\nsteps: [{fill: {workload: keyvalue, bytes: 1M, tims-ram: 2}}]");
        assert!(msg.contains("tims-ram"), "{msg}");
        let msg = e("name: x\nsteps: [{probe: {quik: true}}]");
        assert!(msg.contains("quik"), "{msg}");
        let msg = parse("name: x\ncluster: {nodez: 3}\nsteps: [{probe: {}}]").unwrap_err();
        assert!(msg.contains("nodez"), "{msg}");
    }

    #[test]
    fn values_are_refused_by_the_parsers_the_flags_use() {
        let e = |text: &str| plan(&parse(text).unwrap(), Path::new("/s")).unwrap_err();
        let msg = e("name: x\nsteps: [{latency: {workload: keyvalue, rate: -1}}]");
        let flag = crate::spec::load::parse_rate_arg("-1").unwrap_err();
        assert!(msg.contains("rate") && msg.contains(&*flag), "{msg}");
        let msg =
            e("name: x\nsteps: [{run: {workload: keyvalue, duration: 99999999999999999999h}}]");
        assert!(msg.contains("duration"), "{msg}");
        let msg = e("name: x\nsteps: [{run: {workload: nosuch}}]");
        assert!(
            msg.contains("workload") && msg.contains("keyvalue"),
            "{msg}"
        );
        let msg = e("name: x\nsteps: [{run: {workload: keyvalue, consistency: MOST}}]");
        assert!(msg.contains("consistency"), "{msg}");
        let msg = e("name: x\nsteps: [{run: {workload: keyvalue, keyspace: 'bad name!'}}]");
        assert!(msg.contains("keyspace"), "{msg}");
        let msg =
            parse("name: x\ncluster: {set: {num_tokens: 16}}\nsteps: [{probe: {}}]").unwrap_err();
        assert!(msg.contains("num_tokens"), "{msg}");
        let msg = parse("name: x\ncluster: {dcs: 'dc1:0'}\nsteps: [{probe: {}}]").unwrap_err();
        assert!(msg.contains("dcs"), "{msg}");
        let msg = parse("name: x\nenv: 'a/../../x'\nsteps: [{probe: {}}]").unwrap_err();
        assert!(msg.contains("env"), "{msg}");
    }

    #[test]
    fn step_values_are_checked_before_anything_runs() {
        let steps = |text: &str| {
            let p = plan(&parse(text).unwrap(), Path::new("/s")).unwrap();
            p.steps[0].step.validate().unwrap_err().to_string()
        };
        let concurrency_0 = "name: x\nsteps: [{throughput: {workload: keyvalue, concurrency: 0}}]";
        assert!(steps(concurrency_0).contains("--concurrency"));
        let no_rate = "name: x\nsteps: [{latency: {workload: keyvalue}}]";
        assert!(steps(no_rate).contains("fixed rate"));
        let share_without_of = "name: x\nsteps: [{latency: {workload: keyvalue, rate: 35%}}]";
        assert!(steps(share_without_of).contains("--of"));
        let warmup = "name: x\nsteps: [{run: {workload: keyvalue, duration: 5s, warmup: 5s}}]";
        assert!(steps(warmup).contains("--warmup"));
        let both = "name: x\nsteps: [{run: {workload: keyvalue, hosts: 10.0.0.1, cluster: c}}]";
        assert!(steps(both).contains("not both"));
        let factor = "name: x\nsteps: [{capacity: {workload: keyvalue, factor: 0.5}}]";
        assert!(steps(factor).contains("--factor"));
        let fill = "name: x\nsteps: [{fill: {workload: keyvalue}}]";
        assert!(steps(fill).contains("--bytes"));
        let probe = "name: x\nsteps: [{probe: {runtime-s: 0}}]";
        assert!(steps(probe).contains("--runtime-s"));
        let rf = "name: x\nsteps: [{run: {workload: keyvalue, rf: 'dc1:3,dc1:2'}}]";
        assert!(steps(rf).contains("twice"));
    }
}
