//! Scenario files: a whole methodology in YAML — an optional local cluster, then steps that are
//! cqlbench commands (probe, run, throughput, latency, capacity, fill) with their options —
//! turned into command lines. Each step writes its result into the scenario's directory, and
//! later steps refer to earlier results as `{step-name}`.
//!
//! ```yaml
//! name: ref000
//! env: laptop
//! cluster: {name: ref000, nodes: 3, heap: 256M}
//! steps:
//!   - probe: {quick: true}
//!   - throughput: {workload: tabular, concurrency: 300, duration: 60s}
//!   - latency: {workload: tabular, skip-rampup: true, rate: 35%, of: "{throughput}"}
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_yaml::Value;

/// Commands a step may run, and whether they take `--cluster` and `--env`.
const STEP_COMMANDS: &[&str] = &["probe", "run", "throughput", "latency", "capacity", "fill"];

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Environment label of every step's result.
    #[serde(default)]
    pub env: Option<String>,
    /// A local cluster: options of `cqlbench cluster create` plus `name`.
    #[serde(default)]
    pub cluster: Option<BTreeMap<String, Value>>,
    pub steps: Vec<BTreeMap<String, Value>>,
    /// Write a report of all results at the end (default: yes).
    #[serde(default = "yes")]
    pub report: bool,
}

fn yes() -> bool {
    true
}

/// One step as a command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub name: String,
    pub command: String,
    /// Arguments after the command name.
    pub args: Vec<String>,
    /// Where its result goes.
    pub out: PathBuf,
}

impl Step {
    /// The command and its arguments, as typed after `cqlbench`.
    pub fn line(&self) -> Vec<String> {
        std::iter::once(self.command.clone())
            .chain(self.args.iter().cloned())
            .collect()
    }
}

/// The scenario as command lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub name: String,
    pub cluster: Option<ClusterPlan>,
    pub steps: Vec<Step>,
    pub report: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClusterPlan {
    pub name: String,
    /// Arguments of `cqlbench cluster create` after the name.
    pub create_args: Vec<String>,
}

pub fn parse(text: &str) -> Result<ScenarioFile, String> {
    serde_yaml::from_str(text).map_err(|e| format!("not a scenario file: {e}"))
}

fn scalar(key: &str, v: &Value) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        _ => Err(format!("option '{key}': expected a scalar value")),
    }
}

/// `{key: value}` options as command-line flags: `true` → `--key`, `false` → nothing, lists →
/// the flag repeated, maps → `--key k=v` per entry (e.g. cassandra.yaml `set`).
fn flags(options: &BTreeMap<String, Value>, skip: &[&str]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for (k, v) in options {
        if skip.contains(&k.as_str()) {
            continue;
        }
        let flag = format!("--{k}");
        match v {
            Value::Bool(true) => out.push(flag),
            Value::Bool(false) | Value::Null => {}
            Value::Sequence(items) => {
                for i in items {
                    out.push(flag.clone());
                    out.push(scalar(k, i)?);
                }
            }
            Value::Mapping(m) => {
                for (mk, mv) in m {
                    out.push(flag.clone());
                    out.push(format!("{}={}", scalar(k, mk)?, scalar(k, mv)?));
                }
            }
            v => {
                out.push(flag);
                out.push(scalar(k, v)?);
            }
        }
    }
    Ok(out)
}

/// Replaces `{step}` with that step's result path.
fn substitute(arg: &str, done: &BTreeMap<String, PathBuf>) -> Result<String, String> {
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

/// Turns a scenario file into command lines writing into `dir`.
pub fn plan(f: &ScenarioFile, dir: &Path) -> Result<Plan, String> {
    let cluster = match &f.cluster {
        Some(c) => {
            let name = c
                .get("name")
                .map(|v| scalar("name", v))
                .transpose()?
                .unwrap_or_else(|| f.name.clone());
            Some(ClusterPlan {
                name,
                create_args: flags(c, &["name"])?,
            })
        }
        None => None,
    };
    let mut done: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut steps = Vec::new();
    for (i, step) in f.steps.iter().enumerate() {
        let n = i + 1;
        let mut cmds: Vec<&String> = step.keys().filter(|k| *k != "name").collect();
        let (Some(command), None) = (cmds.pop(), cmds.pop()) else {
            return Err(format!(
                "step {n}: expected one command ({}) and optionally a name",
                STEP_COMMANDS.join(", ")
            ));
        };
        if !STEP_COMMANDS.contains(&command.as_str()) {
            return Err(format!(
                "step {n}: '{command}' is not a step command ({})",
                STEP_COMMANDS.join(", ")
            ));
        }
        let name = match step.get("name") {
            Some(v) => scalar("name", v)?,
            None if done.contains_key(command.as_str()) => format!("{command}-{n}"),
            None => command.clone(),
        };
        if done.contains_key(&name) {
            return Err(format!("step {n}: the name '{name}' is used twice"));
        }
        let options = match &step[command] {
            Value::Mapping(_) => {
                serde_yaml::from_value::<BTreeMap<String, Value>>(step[command].clone())
                    .map_err(|e| format!("step {n} ({name}): {e}"))?
            }
            Value::Null => BTreeMap::new(),
            _ => return Err(format!("step {n} ({name}): options must be a map")),
        };
        for reserved in ["out"] {
            if options.contains_key(reserved) {
                return Err(format!(
                    "step {n} ({name}): '{reserved}' is set by the scenario (results go into its directory)"
                ));
            }
        }
        let mut args = Vec::new();
        if command != "probe" {
            let w = options
                .get("workload")
                .ok_or_else(|| format!("step {n} ({name}): give the workload"))?;
            args.push(scalar("workload", w)?);
        }
        args.extend(
            flags(&options, &["workload"])?
                .into_iter()
                .map(|a| substitute(&a, &done))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("step {n} ({name}): {e}"))?,
        );
        if let Some(c) = &cluster
            && !options.contains_key("cluster")
            && !options.contains_key("hosts")
        {
            args.extend(["--cluster".into(), c.name.clone()]);
        }
        if let Some(env) = &f.env
            && !options.contains_key("env")
        {
            args.extend(["--env".into(), env.clone()]);
        }
        let out = dir.join(format!("{n:02}-{name}.json"));
        args.extend(["--out".into(), out.to_string_lossy().to_string()]);
        done.insert(name.clone(), out.clone());
        steps.push(Step {
            name,
            command: command.clone(),
            args,
            out,
        });
    }
    if steps.is_empty() {
        return Err("the scenario has no steps".into());
    }
    Ok(Plan {
        name: f.name.clone(),
        cluster,
        steps,
        report: f.report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "
name: ref000
env: laptop
cluster: {name: r0, nodes: 3, heap: 256M, set: {concurrent_writes: 32}}
steps:
  - probe: {quick: true, skip-cpu: false}
  - throughput: {workload: tabular, concurrency: 300, duration: 60s, ratio: 'write=5,read=5'}
  - latency: {workload: tabular, skip-rampup: true, rate: 35%, of: '{throughput}'}
    name: lat35
  - latency: {workload: tabular, rate: 100}
  - latency: {workload: tabular, rate: 200}
";

    #[test]
    fn steps_become_command_lines_with_results_in_the_directory() {
        let f = parse(FILE).unwrap();
        let p = plan(&f, Path::new("/s")).unwrap();
        let c = p.cluster.unwrap();
        assert_eq!(c.name, "r0");
        assert_eq!(
            c.create_args,
            [
                "--heap",
                "256M",
                "--nodes",
                "3",
                "--set",
                "concurrent_writes=32"
            ]
        );
        assert_eq!(p.steps.len(), 5);
        assert_eq!(
            p.steps[0].args,
            [
                "--quick",
                "--cluster",
                "r0",
                "--env",
                "laptop",
                "--out",
                "/s/01-probe.json"
            ]
        );
        assert_eq!(
            p.steps[1].args,
            [
                "tabular",
                "--concurrency",
                "300",
                "--duration",
                "60s",
                "--ratio",
                "write=5,read=5",
                "--cluster",
                "r0",
                "--env",
                "laptop",
                "--out",
                "/s/02-throughput.json"
            ]
        );
        assert_eq!(p.steps[2].name, "lat35");
        assert!(
            p.steps[2]
                .args
                .windows(2)
                .any(|w| w == ["--of", "/s/02-throughput.json"])
        );
        assert_eq!(p.steps[3].name, "latency");
        assert_eq!(p.steps[4].name, "latency-5");
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let bad = |text: &str| plan(&parse(text).unwrap(), Path::new("/s")).unwrap_err();
        assert!(bad("name: x\nsteps: [{bake: {}}]").contains("not a step command"));
        assert!(bad("name: x\nsteps: [{run: {rate: 5}}]").contains("give the workload"));
        assert!(
            bad("name: x\nsteps: [{latency: {workload: keyvalue, of: '{nope}'}}]")
                .contains("names no earlier step")
        );
        assert!(
            bad("name: x\nsteps: [{run: {workload: keyvalue, out: x}}]")
                .contains("set by the scenario")
        );
        assert!(bad("name: x\nsteps: []").contains("no steps"));
        assert!(
            parse("name: x\nstepz: []")
                .unwrap_err()
                .contains("not a scenario file")
        );
    }
}
