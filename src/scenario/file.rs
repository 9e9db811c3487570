//! Scenario files: a whole methodology in YAML — an optional local cluster, then steps
//! (probe, run, throughput, latency, capacity, fill) with their options — read into typed
//! step specs ([`crate::scenario::steps`]). Each step writes its result into the scenario's
//! directory, and later steps refer to earlier results as `{step-name}` (a path) or
//! `{step-name.FIELD}` (a value, see [`VALUE_FIELDS`]); `{STEP@ENV}` is an earlier
//! environment's step. A repeated step (`repeat: N`) is referred to by its best run. A step's
//! `vary: {OPTION: [values]}` makes one step per value (the product over several options),
//! named `NAME-OPTION-VALUE`. `scales:` holds named sets of overrides (`--scale`, see
//! [`crate::scenario::overrides`]).
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

use crate::yaml::Value;
use serde::Deserialize;

use super::refs::{self, Planned, StepRef};
pub use super::steps::Placement;
use super::steps::{ClusterOptions, ClusterSection, Step, de};
use crate::report::cost::Deployment;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Its name: it names the results folder (and the local cluster unless it has one), so
    /// 1-64 of A-Z a-z 0-9 . _ -, not starting with '.'.
    #[serde(deserialize_with = "scenario_name")]
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Environment label of every step's result (without `environments`).
    #[serde(default, deserialize_with = "de::opt_env")]
    pub env: Option<String>,
    /// A local cluster: the options of `cqlbench cluster create` plus `name`; with
    /// `environments`, what they have in common.
    #[serde(default)]
    pub cluster: Option<crate::yaml::Mapping>,
    /// Or the contact points of a cluster that exists (no local cluster is created).
    #[serde(default, deserialize_with = "de::hosts")]
    pub hosts: Vec<String>,
    /// Named sets of overrides (`--scale NAME`), e.g. `full: ['duration=30m', 'rows=1000000']`
    /// for the article's own sizes next to the laptop's; each entry as `--set` takes it.
    #[serde(default)]
    pub scales: BTreeMap<String, Vec<String>>,
    /// How every load step reaches and observes the cluster (see [`CONNECTION_KEYS`]: TLS,
    /// credentials, `dc`, driver settings, address map, metrics sources); an environment's
    /// `connection:` is merged over it, and a step's own options win over both.
    #[serde(default)]
    pub connection: Option<crate::yaml::Mapping>,
    /// Environments compared: each runs every step, on its variant of the cluster (or on
    /// hosts), as a column of the report.
    #[serde(default)]
    pub environments: Vec<Environment>,
    /// How environments are deployed, for the report's cost table
    /// (`ENV=INSTANCE,NODES[,DISK][,TERM]`, as `report --deployment`).
    #[serde(default, deserialize_with = "de::list_parsed")]
    pub deployments: Vec<Deployment>,
    /// Runs of each step (a step's own `repeat:` overrides it); the report keeps the best and
    /// the spread.
    #[serde(default = "one")]
    pub repeat: u32,
    /// Each step: `{COMMAND: {options}}`, optionally with `name:` and `repeat:`.
    pub steps: Vec<crate::yaml::Mapping>,
    /// Write a report of all results at the end (default: yes).
    #[serde(default = "yes")]
    pub report: bool,
}

/// One environment of a comparison.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Environment {
    /// Its label (a report column).
    #[serde(deserialize_with = "de::env")]
    pub name: String,
    /// Cluster options that differ from the scenario's `cluster:` (merged over it).
    #[serde(default)]
    pub cluster: Option<crate::yaml::Mapping>,
    /// Or a cluster that exists: its contact points (no local cluster is created).
    #[serde(default, deserialize_with = "de::hosts")]
    pub hosts: Vec<String>,
    /// How its load steps reach and observe its cluster, merged over the scenario's
    /// `connection:` (e.g. its own CA, credentials, `dc` and node exporters).
    #[serde(default)]
    pub connection: Option<crate::yaml::Mapping>,
    /// How it would be deployed: `INSTANCE,NODES[,DISK][,TERM]`, for the cost table.
    #[serde(default)]
    pub deployment: Option<String>,
}

fn one() -> u32 {
    1
}

fn yes() -> bool {
    true
}

/// One step, placed: its name, spec and result path.
#[derive(Debug, Clone)]
pub struct PlannedStep {
    /// Its name (`NAME-rK` for the K-th of repeated runs).
    pub name: String,
    pub command: String,
    /// The step, references to earlier steps holding stand-ins until it runs.
    pub step: Step,
    /// Its options as written, for the printout.
    pub options: Value,
    /// Options that take a value of earlier steps' results (`rows: '{fill.rows}'`): filled
    /// in from their outcomes when the step runs.
    pub refs: Vec<(String, StepRef)>,
    /// The names later steps know its outcome by: its own, a repeated step's, each with
    /// `@ENV` in an environment of several.
    pub known_as: Vec<String>,
    /// What the scenario gives the step: its cluster, hosts and environment label.
    pub placement: Placement,
    /// Where its result goes.
    pub out: PathBuf,
}

/// A whole scenario: one plan per environment, run in turn, and one report.
#[derive(Debug, Clone)]
pub struct Matrix {
    pub name: String,
    pub dir: PathBuf,
    pub envs: Vec<Plan>,
    pub deployments: Vec<Deployment>,
    pub report: bool,
}

/// One environment's part of a scenario, typed and placed in its directory.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub dir: PathBuf,
    pub cluster: Option<ClusterPlan>,
    /// The connection settings its load steps get (the scenario's merged under its own).
    pub connection: crate::yaml::Mapping,
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
    let v: Value = crate::yaml::from_str(text)
        .map_err(|e| crate::invalid!("not a scenario file: {}", crate::yaml::first_line(&e)))?;
    de::from_value(v).map_err(|e| crate::invalid!("not a scenario file: {e}"))
}

/// A name that names files and folders: 1-64 of A-Z a-z 0-9 . _ -, not starting with '.'
/// (so never `..` or a path).
pub fn check_name(what: &str, s: &str) -> Result<(), crate::error::Invalid> {
    crate::spec::probe::validate_env(s).map_err(|_| {
        crate::invalid!(
            "{what} '{s}': give 1-64 of A-Z a-z 0-9 . _ -, not starting with '.' (it names files and folders)"
        )
    })
}

fn scenario_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    use serde::de::Error;
    let s = de::text(d)?;
    check_name("name", &s).map_err(D::Error::custom)?;
    Ok(s)
}

/// Each step's name: its `name:`, else its command, else (when an earlier step has that name)
/// `COMMAND-N` for the N-th step; `None` for a name that is not text.
pub fn step_names(steps: &[crate::yaml::Mapping]) -> Vec<Option<String>> {
    let mut seen = std::collections::BTreeSet::new();
    steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let command = step_command(step).unwrap_or("step");
            let name = match step.get("name") {
                Some(Value::String(s)) => s.clone(),
                Some(_) => return None,
                None if seen.contains(command) => format!("{command}-{}", i + 1),
                None => command.to_string(),
            };
            seen.insert(name.clone());
            Some(name)
        })
        .collect()
}

/// A `repeat:` value: a whole number of runs, 1 or more.
pub fn repeat_of(v: &Value) -> Result<u32, crate::error::Invalid> {
    v.as_u64()
        .and_then(|r| u32::try_from(r).ok())
        .filter(|r| *r > 0)
        .ok_or_else(|| crate::invalid!("repeat: give a whole number of runs, 1 or more"))
}

/// A step's command: its first key that is not one of [`STEP_KEYS`].
pub fn step_command(step: &crate::yaml::Mapping) -> Option<&str> {
    step.keys()
        .map(String::as_str)
        .find(|k| !STEP_KEYS.contains(k))
}

/// The options of a load step (run, throughput, latency, capacity, fill, scaling) that say how
/// it reaches and observes a cluster rather than what load it puts on it: what a scenario's
/// and an environment's `connection:` may set (the contact points are `hosts:`).
pub const CONNECTION_KEYS: &[&str] = &[
    "dc",
    "credentials-file",
    "tls-ca",
    "tls-cert",
    "tls-key",
    "tls-key-password-file",
    "tls-key-password-env",
    "tls-server-name",
    "tls-no-hostname-check",
    "tls-min-version",
    "no-tls",
    "retry",
    "speculative",
    "compression",
    "connections-per-host",
    "rack",
    "page-size",
    "address-map",
    "require-all-nodes",
    "timeout",
    "prometheus",
    "node-exporter",
    "prometheus-server",
    "prometheus-instance",
    "prometheus-credentials",
    "prometheus-token",
    "prometheus-ca",
    "no-metrics",
    "metrics-interval",
];

/// The connection settings of an environment: its own merged over the scenario's, each key
/// checked to be one of [`CONNECTION_KEYS`].
fn connection(
    f: &ScenarioFile,
    env: Option<&Environment>,
) -> Result<crate::yaml::Mapping, crate::error::Invalid> {
    let m = merged(
        f.connection.as_ref(),
        env.and_then(|e| e.connection.as_ref()),
    )
    .unwrap_or_default();
    for k in m.keys() {
        let key = k.as_str();
        if !CONNECTION_KEYS.contains(&key) {
            return Err(crate::invalid!(
                "connection: '{}' is not a connection setting (give {}){}",
                k,
                CONNECTION_KEYS.join(", "),
                crate::format::did_you_mean(key, CONNECTION_KEYS.iter().copied())
            ));
        }
    }
    Ok(m)
}

/// A load step's options with the connection settings it does not give itself.
fn with_connection(
    command: &str,
    options: Value,
    connection: &crate::yaml::Mapping,
) -> Result<Value, crate::error::Invalid> {
    if connection.is_empty() || !Step::LOAD_COMMANDS.contains(&command) {
        return Ok(options);
    }
    let mut m = match options {
        Value::Null => crate::yaml::Mapping::new(),
        Value::Object(m) => m,
        _ => return Err(crate::invalid!("options must be a map of key: value")),
    };
    for (k, v) in connection {
        if !m.contains_key(k) {
            m.insert(k.clone(), v.clone());
        }
    }
    Ok(Value::Object(m))
}

/// The keys of a step besides its command.
pub const STEP_KEYS: &[&str] = &["name", "repeat", "vary"];

/// The variants of a step: `vary: {KEY: [v1, v2], …}` gives one step per combination of the
/// values (the product, first key outermost), each named with a suffix `-KEY-VALUE…`; without
/// `vary`, the step itself with no suffix.
fn axes(
    command: &str,
    options: &Value,
    vary: Option<&Value>,
) -> Result<Vec<(String, Value)>, crate::error::Invalid> {
    let Some(vary) = vary else {
        return Ok(vec![(String::new(), options.clone())]);
    };
    let Value::Object(vary) = vary else {
        return Err(crate::invalid!(
            "vary: give a map of option: [values], e.g. vary: {{rate: [100, 500]}}"
        ));
    };
    if vary.is_empty() {
        return Err(crate::invalid!("vary: give at least one option to vary"));
    }
    let keys = Step::keys(command);
    let given = match options {
        Value::Object(m) => m.clone(),
        _ => crate::yaml::Mapping::new(),
    };
    let mut out = vec![(String::new(), given)];
    for (key, values) in vary {
        if !keys.contains(&key.as_str()) {
            return Err(crate::invalid!(
                "vary: a {command} step has no option '{key}'"
            ));
        }
        if out[0].1.contains_key(key) {
            return Err(crate::invalid!(
                "vary: {key} is given in the step's options too: give it in one place"
            ));
        }
        let values = match values {
            Value::Array(v) if !v.is_empty() => v,
            _ => {
                return Err(crate::invalid!(
                    "vary: {key}: give a list of one or more values, e.g. [100, 500]"
                ));
            }
        };
        let mut next = Vec::new();
        for (suffix, options) in &out {
            for v in values {
                let text = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    _ => {
                        return Err(crate::invalid!(
                            "vary: {key}: each value is one number or text"
                        ));
                    }
                };
                let label: String = text
                    .chars()
                    .map(
                        |c| match c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                            true => c,
                            false => '_',
                        },
                    )
                    .collect();
                let mut options = options.clone();
                options.insert(key.clone(), v.clone());
                next.push((format!("{suffix}-{key}-{label}"), options));
            }
        }
        out = next;
    }
    Ok(out
        .into_iter()
        .map(|(suffix, m)| (suffix, Value::Object(m)))
        .collect())
}

/// Merges `over` onto `base` (keys of `over` win).
fn merged(
    base: Option<&crate::yaml::Mapping>,
    over: Option<&crate::yaml::Mapping>,
) -> Option<crate::yaml::Mapping> {
    match (base, over) {
        (None, None) => None,
        (b, o) => {
            let mut m = b.cloned().unwrap_or_default();
            for (k, v) in o.cloned().unwrap_or_default() {
                m.insert(k, v);
            }
            Some(m)
        }
    }
}

/// Turns a scenario file into one plan per environment writing into `dir` (a subdirectory per
/// environment when there are several).
pub fn plan_all(f: &ScenarioFile, dir: &Path) -> Result<Matrix, crate::error::Invalid> {
    if f.repeat == 0 {
        return Err(crate::invalid!("repeat: 0: give at least 1"));
    }
    let mut deployments = f.deployments.clone();
    let envs =
        if f.environments.is_empty() {
            vec![plan_env(f, None, dir, &BTreeMap::new())?.0]
        } else {
            if f.env.is_some() {
                return Err(crate::invalid!(
                    "env: with environments, each environment's name is its label"
                ));
            }
            let mut seen = std::collections::BTreeSet::new();
            let mut out = Vec::new();
            // Earlier environments' steps, as `{STEP@ENV}`.
            let mut earlier = BTreeMap::new();
            for e in &f.environments {
                if !seen.insert(e.name.clone()) {
                    return Err(crate::invalid!("environments: '{}' is given twice", e.name));
                }
                if let Some(d) = &e.deployment {
                    deployments.push(format!("{}={d}", e.name).parse().map_err(|err| {
                        crate::invalid!("environment {}: deployment: {err}", e.name)
                    })?);
                }
                let (plan, done) = plan_env(f, Some(e), &dir.join(&e.name), &earlier)?;
                let own = format!("@{}", e.name);
                earlier.extend(done.into_iter().filter(|(name, _)| name.ends_with(&own)));
                out.push(plan);
            }
            out
        };
    check_deployments(&envs, &deployments)?;
    Ok(Matrix {
        name: f.name.clone(),
        dir: dir.to_path_buf(),
        envs,
        deployments,
        report: f.report,
    })
}

/// Refuses, when planned rather than at the final report, a deployment naming no environment
/// of the scenario (when every step's environment label is known before the run).
fn check_deployments(
    envs: &[Plan],
    deployments: &[Deployment],
) -> Result<(), crate::error::Invalid> {
    let mut labels: Vec<&str> = Vec::new();
    for s in envs.iter().flat_map(|p| &p.steps) {
        match s.placement.env.as_deref() {
            Some(l) if !labels.contains(&l) => labels.push(l),
            Some(_) => {}
            None => return Ok(()),
        }
    }
    match deployments
        .iter()
        .find(|d| !labels.contains(&d.env.as_str()))
    {
        Some(d) if !labels.is_empty() => Err(crate::invalid!(
            "deployments: '{}' names no environment of this scenario (its environments: {})",
            d.env,
            labels.join(", ")
        )),
        _ => Ok(()),
    }
}

/// A scenario of one environment (the quickstart's, a test's).
pub fn plan(f: &ScenarioFile, dir: &Path) -> Result<Plan, crate::error::Invalid> {
    let mut m = plan_all(f, dir)?;
    if m.envs.len() != 1 {
        return Err(crate::invalid!("expected a scenario of one environment"));
    }
    let mut p = m.envs.remove(0);
    p.deployments = m.deployments;
    Ok(p)
}

/// The names an earlier step is known by: `NAME`, and `NAME@ENV` in an environment.
fn names_of(name: &str, env: Option<&Environment>) -> Vec<String> {
    std::iter::once(name.to_string())
        .chain(env.map(|e| format!("{name}@{}", e.name)))
        .collect()
}

/// Where an environment's steps run: its local cluster (the scenario's `cluster:` with the
/// environment's options merged over it), or hosts.
fn placement(
    f: &ScenarioFile,
    env: Option<&Environment>,
) -> Result<(Option<ClusterPlan>, Placement), crate::error::Invalid> {
    if !f.hosts.is_empty() && f.cluster.is_some() {
        return Err(crate::invalid!("give cluster or hosts, not both"));
    }
    let env_hosts = env.map(|e| e.hosts.clone()).unwrap_or_default();
    let env_cluster = env.and_then(|e| e.cluster.as_ref());
    let (hosts, section) = match (env_hosts.is_empty(), env_cluster) {
        (false, Some(_)) => return Err(crate::invalid!("give cluster or hosts, not both")),
        (false, None) => (env_hosts, None),
        (true, Some(c)) => (vec![], merged(f.cluster.as_ref(), Some(c))),
        (true, None) if !f.hosts.is_empty() => (f.hosts.clone(), None),
        (true, None) => (vec![], f.cluster.clone()),
    };
    let cluster = match section {
        Some(m) => {
            let c: ClusterSection =
                de::from_value(Value::Object(m)).map_err(|e| crate::invalid!("cluster: {e}"))?;
            let base = c.name.clone().unwrap_or_else(|| f.name.clone());
            Some(ClusterPlan {
                name: match env {
                    Some(e) => format!("{base}-{}", e.name),
                    None => base,
                },
                options: c.options,
            })
        }
        None => None,
    };
    let placement = Placement {
        cluster: cluster.as_ref().map(|c| c.name.clone()),
        options: cluster.as_ref().map(|c| c.options.clone()),
        hosts,
        env: env.map(|e| e.name.clone()).or_else(|| f.env.clone()),
    };
    Ok((cluster, placement))
}

/// One step of the file as written: its command, name, runs and options.
struct Written<'a> {
    /// Its position, 1-based.
    n: usize,
    command: &'a str,
    name: String,
    repeat: u32,
    options: Value,
}

/// Reads step `n` of the file (its command, `repeat`, options; `out` is the scenario's).
fn written<'a>(
    f: &ScenarioFile,
    step: &'a crate::yaml::Mapping,
    n: usize,
    name: Option<String>,
) -> Result<Written<'a>, crate::error::Invalid> {
    let mut cmds: Vec<&str> = step
        .keys()
        .map(String::as_str)
        .filter(|k| !STEP_KEYS.contains(k))
        .collect();
    let (Some(command), None) = (cmds.pop(), cmds.pop()) else {
        return Err(crate::invalid!(
            "step {n}: expected one command ({}) and optionally {}",
            Step::COMMANDS.join(", "),
            STEP_KEYS.join(", ")
        ));
    };
    if !Step::COMMANDS.contains(&command) {
        return Err(crate::invalid!(
            "step {n}: '{command}' is not a step command ({}){}",
            Step::COMMANDS.join(", "),
            crate::format::did_you_mean(command, Step::COMMANDS.iter().copied())
        ));
    }
    let name = name.ok_or_else(|| crate::invalid!("step {n}: the name must be text"))?;
    check_name("name", &name).map_err(|e| crate::invalid!("step {n}: {e}"))?;
    let repeat = match step.get("repeat") {
        None => f.repeat,
        Some(v) => repeat_of(v).map_err(|e| crate::invalid!("step {n} ({name}): {e}"))?,
    };
    let options = step.get(command).cloned().unwrap_or(Value::Null);
    if let Value::Object(m) = &options
        && m.contains_key("out")
    {
        return Err(crate::invalid!(
            "step {n} ({name}): 'out' is set by the scenario (results go into its directory)"
        ));
    }
    Ok(Written {
        n,
        command,
        name,
        repeat,
        options,
    })
}

/// The planned runs of one variant of a step (`repeat` of them), named and placed, their
/// references checked with stand-ins; `done` gets their names.
fn plan_variant(
    w: &Written,
    name: &str,
    options: &Value,
    at: (&Path, &Placement, Option<&Environment>),
    connection: &crate::yaml::Mapping,
    done: &BTreeMap<String, Planned>,
) -> Result<(Vec<PlannedStep>, Planned), crate::error::Invalid> {
    let (dir, placement, env) = at;
    let (known_now, refs) = refs::take(options, done)?;
    let known_now = with_connection(w.command, known_now, connection)?;
    let mut steps = Vec::new();
    let mut outs = Vec::new();
    for k in 1..=w.repeat {
        let run_name = match w.repeat {
            1 => name.to_string(),
            _ => format!("{name}-r{k}"),
        };
        let out = dir.join(format!("{:02}-{run_name}.json", w.n));
        let mut step = Step::from_yaml(w.command, known_now.clone())?;
        step.place(placement, out.clone());
        // Stand-ins check the rest of the step now; the values come when it runs.
        for (key, r) in &refs {
            step.set(key, &refs::stand_in(r, done))?;
        }
        let mut known_as = names_of(name, env);
        if w.repeat > 1 {
            known_as.extend(names_of(&run_name, env));
        }
        steps.push(PlannedStep {
            name: run_name,
            command: w.command.to_string(),
            step,
            options: options.clone(),
            refs: refs.clone(),
            known_as,
            placement: placement.clone(),
            out: out.clone(),
        });
        outs.push(out);
    }
    let planned = Planned {
        command: w.command.to_string(),
        runs: outs,
        closed_loop: steps
            .iter()
            .any(|s| matches!(&s.step, Step::Capacity(c) if c.search.start_concurrency.is_some())),
    };
    Ok((steps, planned))
}

/// One environment's plan, and the steps later ones may refer to (by name); `earlier` holds
/// the steps of environments planned before it, named `STEP@ENV`.
fn plan_env(
    f: &ScenarioFile,
    env: Option<&Environment>,
    dir: &Path,
    earlier: &BTreeMap<String, Planned>,
) -> Result<(Plan, BTreeMap<String, Planned>), crate::error::Invalid> {
    let in_env = |e: crate::error::Invalid| match env {
        Some(env) => crate::invalid!("environment {}: {e}", env.name),
        None => e,
    };
    let (cluster, placement) = placement(f, env).map_err(in_env)?;
    let connection = connection(f, env).map_err(in_env)?;
    let mut done: BTreeMap<String, Planned> = earlier.clone();
    let mut steps = Vec::new();
    let names = step_names(&f.steps);
    for (i, step) in f.steps.iter().enumerate() {
        let w = written(f, step, i + 1, names[i].clone())?;
        let n = w.n;
        let at = |e: crate::error::Invalid| in_env(crate::invalid!("step {n} ({}): {e}", w.name));
        let variants = axes(w.command, &w.options, step.get("vary")).map_err(at)?;
        let varied = step.contains_key("vary");
        for (suffix, options) in variants {
            let name = format!("{}{suffix}", w.name);
            if done.contains_key(&name) {
                return Err(crate::invalid!("step {n}: the name '{name}' is used twice"));
            }
            let at = |e: crate::error::Invalid| in_env(crate::invalid!("step {n} ({name}): {e}"));
            let (planned_steps, all) = plan_variant(
                &w,
                &name,
                &options,
                (dir, &placement, env),
                &connection,
                &done,
            )
            .map_err(at)?;
            // `{NAME-rK}` is a repeated step's K-th run; `{NAME}` the runs' result
            // (`{NAME-KEY-VALUE}` a variant's); a varied step's own name is none.
            if w.repeat > 1 {
                for (s, out) in planned_steps.iter().zip(&all.runs) {
                    for known in names_of(&s.name, env) {
                        done.insert(
                            known,
                            Planned {
                                command: w.command.to_string(),
                                runs: vec![out.clone()],
                                closed_loop: all.closed_loop,
                            },
                        );
                    }
                }
            }
            steps.extend(planned_steps);
            if varied || name == w.name {
                for known in names_of(&name, env) {
                    done.insert(known, all.clone());
                }
            }
        }
    }
    if steps.is_empty() {
        return Err(crate::invalid!("the scenario has no steps"));
    }
    Ok((
        Plan {
            name: f.name.clone(),
            dir: dir.to_path_buf(),
            cluster,
            connection,
            steps,
            deployments: vec![],
            report: f.report,
        },
        done,
    ))
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
        assert_eq!(c.options.nodes, Some(3));
        assert_eq!(c.options.heap, Some(crate::spec::MiB(256)));
        assert_eq!(
            c.options.yaml,
            [(
                "concurrent_writes".to_string(),
                crate::yaml::Value::from(32)
            )]
        );
        assert_eq!(p.deployments.len(), 1);
        assert_eq!(p.steps.len(), 5);
        // A deployment of an environment the scenario does not have is refused when planned.
        let typo = parse(&FILE.replace("'laptop=m5.xlarge,3'", "'lapton=m5.xlarge,3'")).unwrap();
        let e = plan(&typo, Path::new("/s")).unwrap_err().to_string();
        assert!(
            e.contains("deployments: 'lapton' names no environment of this scenario (its environments: laptop)"),
            "{e}"
        );
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
        let msg = e("name: x\ncluster: {nodez: 3}\nsteps: [{probe: {}}]");
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
        // A typed value is refused as it is read: rf, as `--rf` is.
        let msg = e("name: x\nsteps: [{run: {workload: keyvalue, rf: 'dc1:3,dc1:2'}}]");
        assert!(msg.contains("rf") && msg.contains("twice"), "{msg}");
        let msg = e("name: x\nsteps: [{capacity: {workload: keyvalue, max-node-cpu: '90'}}]");
        assert!(msg.contains("max-node-cpu") && msg.contains("90%"), "{msg}");
        let msg = e("name: x\ncluster: {set: {num_tokens: 16}}\nsteps: [{probe: {}}]");
        assert!(msg.contains("num_tokens"), "{msg}");
        let msg = e("name: x\ncluster: {dcs: 'dc1:0'}\nsteps: [{probe: {}}]");
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
    }

    const MATRIX: &str = "
name: cmp
cluster: {nodes: 1, heap: 256M}
environments:
  - {name: small, cluster: {cpus-per-node: 1}, deployment: 'r5.xlarge,3'}
  - {name: large, deployment: 'r5.2xlarge,3'}
  - {name: remote, hosts: [10.0.0.1]}
repeat: 2
steps:
  - fill: {workload: stress, bytes: 10M}
    repeat: 1
  - throughput: {workload: stress, rows: '{fill.rows}', skip-rampup: true, duration: 20s}
  - latency: {workload: stress, rows: '{fill.rows}', skip-rampup: true, rate: 35%, of: '{throughput}', duration: 20s}
";

    #[test]
    fn environments_expand_into_plans_with_their_own_clusters_dirs_and_labels() {
        let m = plan_all(&parse(MATRIX).unwrap(), Path::new("/s")).unwrap();
        assert_eq!(m.envs.len(), 3);
        let small = &m.envs[0];
        let c = small.cluster.as_ref().unwrap();
        assert_eq!(c.name, "cmp-small");
        assert_eq!(
            (c.options.nodes, c.options.cpus_per_node),
            (Some(1), Some(1))
        );
        assert_eq!(
            m.envs[1].cluster.as_ref().unwrap().options.cpus_per_node,
            None
        );
        assert!(m.envs[2].cluster.is_none(), "hosts: no local cluster");
        assert_eq!(small.dir, Path::new("/s/small"));
        // fill once, then two runs each of throughput and latency.
        let names: Vec<&str> = small.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "fill",
                "throughput-r1",
                "throughput-r2",
                "latency-r1",
                "latency-r2"
            ]
        );
        let r = small.steps[1].step.run_spec().unwrap();
        assert_eq!(r.cluster.as_deref(), Some("cmp-small"));
        assert_eq!(r.env.as_deref(), Some("small"));
        assert_eq!(
            r.out.as_deref(),
            Some(Path::new("/s/small/02-throughput-r1.json"))
        );
        // `{throughput}` is the last run's result.
        let l = small.steps[3].step.run_spec().unwrap();
        assert_eq!(
            l.of.as_deref(),
            Some(Path::new("/s/small/02-throughput-r2.json"))
        );
        let remote = m.envs[2].steps[1].step.run_spec().unwrap();
        assert_eq!(
            (remote.cluster.as_deref(), remote.hosts.as_slice()),
            (None, &["10.0.0.1".to_string()][..])
        );
        let envs: Vec<&str> = m.deployments.iter().map(|d| d.env.as_str()).collect();
        assert_eq!(envs, ["small", "large"]);
    }

    #[test]
    fn values_of_earlier_results_are_checked_at_load_and_filled_at_run() {
        let m = plan_all(&parse(MATRIX).unwrap(), Path::new("/s")).unwrap();
        let t = &m.envs[0].steps[1];
        assert!(!t.refs.is_empty() && m.envs[0].steps[0].refs.is_empty());
        // At run time the value comes from the fill's outcome.
        let mut fill = crate::result::fixture::run("x", &Default::default());
        for p in &mut fill.phases {
            if let Some(s) = &mut p.summary {
                s.ok = 61_728;
            }
        }
        let ran = crate::scenario::refs::Ran::from([(
            t.refs[0].1.step.clone(),
            vec![(
                PathBuf::from("/s/fill.json"),
                crate::scenario::Outcome::Run(Box::new(fill.clone())),
            )],
        )]);
        let mut step = t.step.clone();
        for (key, r) in &t.refs {
            assert_eq!((key.as_str(), r.field), ("rows", Some(refs::Field::Rows)));
            step.set(key, &refs::resolve(r, &ran).unwrap()).unwrap();
        }
        assert_eq!(
            step.run_spec().unwrap().rows,
            61_728 * fill.phases.len() as u64
        );
        // A value no earlier step offers is refused when the file is loaded.
        let e = |text: &str| plan_all(&parse(text).unwrap(), Path::new("/s")).unwrap_err();
        let msg =
            e("name: x\nsteps:\n  - throughput: {workload: stress, rows: '{throughput.rows}'}");
        assert!(msg.contains("names no earlier step"), "{msg}");
        let msg = e(
            "name: x\nsteps:\n  - throughput: {workload: stress}\n  - latency: {workload: stress, rate: '{throughput.rate}'}",
        );
        assert!(
            msg.contains("offers no 'rate'") && msg.contains("ops_per_s"),
            "{msg}"
        );
        let msg = e("name: x\nrepeat: 0\nsteps: [{probe: {}}]");
        assert!(msg.contains("repeat"), "{msg}");
        let msg = e("name: x\nenvironments: [{name: a}, {name: a}]\nsteps: [{probe: {}}]");
        assert!(msg.contains("twice"), "{msg}");
        let msg = e(
            "name: x\nenvironments: [{name: a, hosts: [h], cluster: {nodes: 1}}]\nsteps: [{probe: {}}]",
        );
        assert!(
            msg.contains("environment a") && msg.contains("not both"),
            "{msg}"
        );
        let msg =
            e("name: x\nenvironments: [{name: a, deployment: 'nosuch'}]\nsteps: [{probe: {}}]");
        assert!(msg.contains("environment a: deployment"), "{msg}");
    }

    #[test]
    fn the_estimate_adds_steps_and_cluster_starts() {
        let m = plan_all(&parse(MATRIX).unwrap(), Path::new("/s")).unwrap();
        let (s, unknown) = crate::scenario::runner::estimate_s(&m);
        // Per env: 2 × (20 + 2) throughput + 2 × (20 + 2) latency = 88 s; two local clusters
        // of one node at 15 + 7 s; three fills without an estimate.
        assert_eq!(unknown, 3);
        assert!((s - (3.0 * 88.0 + 2.0 * 22.0)).abs() < 1e-9, "{s}");
    }

    #[test]
    fn vary_expands_a_step_into_one_per_value_named_by_it() {
        let f = parse(
            "name: x
steps:
  - fill: {workload: iot, bytes: 1M}
  - latency: {workload: iot, skip-rampup: true, duration: 10s}
    name: lat
    vary: {rate: [100, 1.5k], consistency: [ONE, QUORUM]}
  - latency: {workload: iot, rate: 35%, of: '{lat-rate-1.5k-consistency-ONE}'}
",
        )
        .unwrap();
        let p = plan(&f, Path::new("/s")).unwrap();
        let names: Vec<&str> = p.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "fill",
                "lat-rate-100-consistency-ONE",
                "lat-rate-100-consistency-QUORUM",
                "lat-rate-1.5k-consistency-ONE",
                "lat-rate-1.5k-consistency-QUORUM",
                "latency"
            ]
        );
        let r = run_spec(&p, 3);
        assert_eq!(r.rate, Some(RateArg::PerSecond(1500.0)));
        assert_eq!(r.consistency, Some(crate::spec::Cl::One));
        assert_eq!(
            p.steps[3].out,
            Path::new("/s/02-lat-rate-1.5k-consistency-ONE.json")
        );
        assert_eq!(
            run_spec(&p, 5).of.as_deref(),
            Some(Path::new("/s/02-lat-rate-1.5k-consistency-ONE.json"))
        );
    }

    #[test]
    fn bad_axes_are_refused_with_the_step_and_key() {
        let e = |text: &str| plan(&parse(text).unwrap(), Path::new("/s")).unwrap_err();
        let steps = |vary: &str| {
            format!(
                "name: x\nsteps:\n  - latency: {{workload: iot, rate: 100}}\n    vary: {vary}\n"
            )
        };
        let msg = e(&steps("{rat: [1, 2]}"));
        assert!(
            msg.contains("step 1 (latency)") && msg.contains("no option 'rat'"),
            "{msg}"
        );
        let msg = e(&steps("{rate: [1, 2]}"));
        assert!(msg.contains("give it in one place"), "{msg}");
        let msg = e(&steps("{concurrency: 5}"));
        assert!(msg.contains("list of one or more values"), "{msg}");
        let msg = e(&steps("{concurrency: []}"));
        assert!(msg.contains("list of one or more values"), "{msg}");
        let msg = e(&steps("[concurrency]"));
        assert!(msg.contains("vary: give a map"), "{msg}");
        let msg = e(&steps("{duration: [10s, -1s]}"));
        assert!(msg.contains("duration"), "{msg}");
        // The step's own name is no result once it is varied: its variants are.
        let msg = e("name: x
steps:
  - throughput: {workload: iot}
    vary: {concurrency: [8, 16]}
  - latency: {workload: iot, rate: 35%, of: '{throughput}'}
");
        assert!(
            msg.contains("names no earlier step") && msg.contains("throughput-concurrency-8"),
            "{msg}"
        );
    }

    #[test]
    fn a_repeated_step_is_referred_to_by_its_best_run() {
        let f = parse(
            "name: x
steps:
  - throughput: {workload: iot, duration: 10s}
    repeat: 3
  - latency: {workload: iot, rate: 35%, of: '{throughput}'}
",
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = plan(&f, dir.path()).unwrap();
        let names: Vec<&str> = p.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["throughput-r1", "throughput-r2", "throughput-r3", "latency"]
        );
        let lat = &p.steps[3];
        assert_eq!(lat.refs.len(), 1, "the best run is known once they ran");
        let mut ran = crate::scenario::refs::Ran::new();
        for (i, ops) in [900.0, 1200.0, 1000.0].into_iter().enumerate() {
            let shape = crate::result::fixture::RunShape {
                ops_per_s: ops,
                ops_per_s_sd: 1.0,
                seed: i as u64 + 1,
                ..Default::default()
            };
            let run = crate::result::fixture::run("x", &shape);
            for name in &p.steps[i].known_as {
                ran.entry(name.clone()).or_default().push((
                    p.steps[i].out.clone(),
                    crate::scenario::Outcome::Run(Box::new(run.clone())),
                ));
            }
        }
        let (key, r) = &lat.refs[0];
        let mut step = lat.step.clone();
        step.set(key, &refs::resolve(r, &ran).unwrap()).unwrap();
        let of = step.run_spec().unwrap().of.clone().unwrap();
        assert_eq!(of, p.steps[1].out, "r2 had the highest throughput");
        let best = refs::StepRef {
            step: "throughput".into(),
            field: Some(refs::Field::OpsPerS),
        };
        let refs::RefValue::Number(best) = refs::resolve(&best, &ran).unwrap() else {
            panic!("a number")
        };
        assert!((best - 1200.0).abs() < 30.0, "{best}");
    }

    #[test]
    fn a_step_may_refer_to_an_earlier_environments_step() {
        // Reference 000: every environment's latency test at 35% of the baseline's throughput.
        let text = "name: x
cluster: {nodes: 1}
environments: [{name: base}, {name: other}]
steps:
  - throughput: {workload: iot, duration: 10s}
  - latency: {workload: iot, rate: 35%, of: '{throughput@base}'}
";
        let m = plan_all(&parse(text).unwrap(), Path::new("/s")).unwrap();
        for p in &m.envs {
            assert_eq!(
                run_spec(p, 1).of.as_deref(),
                Some(Path::new("/s/base/01-throughput.json"))
            );
        }
        let later = text.replace("throughput@base", "throughput@other");
        let e = plan_all(&parse(&later).unwrap(), Path::new("/s")).unwrap_err();
        assert!(
            e.contains("environment base")
                && e.contains("'{throughput@other}' names no earlier step"),
            "{e}"
        );
    }

    #[test]
    fn environments_reach_their_clusters_with_their_own_connection_settings() {
        let text = "name: x
connection: {dc: dc1, tls-ca: /ca/default.pem, node-exporter: ['n1=http://a:9100']}
environments:
  - {name: ec2, hosts: [10.0.0.5], connection: {tls-ca: /ca/ec2.pem, credentials-file: /c/ec2}}
  - {name: eks, hosts: [10.1.0.5], connection: {dc: east, address-map: '10.1.0.5=203.0.113.7:30042'}}
steps:
  - probe: {quick: true}
  - throughput: {workload: iot, duration: 10s}
  - latency: {workload: iot, rate: 35%, of: '{throughput@ec2}', dc: mine}
";
        let m = plan_all(&parse(text).unwrap(), Path::new("/s")).unwrap();
        let (ec2, eks) = (&m.envs[0], &m.envs[1]);
        // The environment's own settings merged over the scenario's.
        let t = run_spec(ec2, 1);
        assert_eq!(t.hosts, ["10.0.0.5"]);
        assert_eq!(t.tls_ca.as_deref(), Some(Path::new("/ca/ec2.pem")));
        assert_eq!(t.credentials_file.as_deref(), Some(Path::new("/c/ec2")));
        assert_eq!(t.dc.as_deref(), Some("dc1"));
        assert_eq!(t.node_exporter, ["n1=http://a:9100"]);
        let t = run_spec(eks, 1);
        assert_eq!(t.tls_ca.as_deref(), Some(Path::new("/ca/default.pem")));
        assert_eq!(t.credentials_file, None);
        assert_eq!(t.dc.as_deref(), Some("east"));
        assert_eq!(t.address_map.len(), 1);
        // A step's own option wins; a reference to the baseline's result keeps working.
        for p in &m.envs {
            let l = run_spec(p, 2);
            assert_eq!(l.dc.as_deref(), Some("mine"));
            assert_eq!(
                l.of.as_deref(),
                Some(Path::new("/s/ec2/02-throughput.json"))
            );
        }
        // The probe takes none of them (its `dc` is a local cluster's data centre).
        let Step::Probe(probe) = &ec2.steps[0].step else {
            panic!("step 1 is the probe")
        };
        assert_eq!(probe.dc, None);
        assert_eq!(
            eks.connection.get("dc"),
            Some(&crate::yaml::Value::from("east"))
        );
    }

    #[test]
    fn connection_settings_are_refused_as_the_flags_are() {
        let e = |text: &str| match parse(text) {
            Ok(f) => plan_all(&f, Path::new("/s")).unwrap_err(),
            Err(e) => e,
        };
        let msg =
            e("name: x\nhosts: [h]\nconnection: {tls-caa: /ca}\nsteps: [{run: {workload: iot}}]");
        assert!(
            msg.contains("connection: 'tls-caa' is not a connection setting")
                && msg.contains("did you mean `tls-ca`"),
            "{msg}"
        );
        // A load option that is not about reaching the cluster is a step's.
        let msg = e("name: x\nhosts: [h]\nconnection: {rate: 5}\nsteps: [{run: {workload: iot}}]");
        assert!(msg.contains("'rate' is not a connection setting"), "{msg}");
        let f = parse(
            "name: x\nenvironments: [{name: a, hosts: [h], connection: {dc: 'a,b'}}]\nsteps: [{run: {workload: iot}}]",
        )
        .unwrap();
        // Values go through the flags' checks when the plan is checked.
        let m = plan_all(&f, Path::new("/s")).unwrap();
        let msg = m.envs[0].steps[0].step.validate().unwrap_err().to_string();
        assert!(msg.contains("--dc 'a,b'"), "{msg}");
        let msg = e(
            "name: x\nhosts: [h]\nconnection: {compression: zip}\nsteps: [{run: {workload: iot}}]",
        );
        assert!(msg.contains("compression"), "{msg}");
        // Every connection key is an option of the load steps.
        let run = de::field_names::<crate::scenario::steps::RunStep>();
        for k in CONNECTION_KEYS {
            assert!(run.contains(k), "{k}");
        }
    }
}
