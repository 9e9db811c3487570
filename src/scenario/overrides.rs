//! Overrides of a scenario file from the command line, so one file serves a laptop and a real
//! cluster: `--scale NAME` (a named set of overrides the file carries, e.g. the article's own
//! sizes), `--set KEY=VALUE`, `--env NAME` and `--hosts`. They change the file's text-level
//! values before it is planned, so every value still goes through the step specs' parsers and
//! checks.
//!
//! `--set` keys:
//! - `KEY=VALUE`: the option `KEY` of every step that takes it (`duration=30m`, `rows=1000000`);
//!   refused when no step does;
//! - `STEP.KEY=VALUE`: of the steps named `STEP` or whose command is `STEP`
//!   (`latency.rate=35%`, `fill-1.bytes=2G`);
//! - `cluster.KEY=VALUE`: of the cluster section, and of every environment that sets KEY
//!   (`cluster.heap=8G`);
//! - `repeat=N`: runs of every step.
//!
//! A value reads as YAML (`500` is a number, `a,b` text); `KEY=~` removes the option (back to
//! its default). A key that a step varies (`vary:`)
//! is replaced, not varied. With `--hosts`, a scale's `cluster.` entries are left out (there is
//! no local cluster) and a `--set cluster.…` is refused.

use crate::yaml::{Mapping, Value};

use super::file::{ScenarioFile, repeat_of, step_command};
use super::steps::Step;
use crate::error::Invalid;

/// What the command line changes in a scenario.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// A named set of overrides in the file's `scales:`; applied before `set`.
    pub scale: Option<String>,
    /// `KEY=VALUE`, applied in order (a later one wins).
    pub set: Vec<String>,
    /// Run only these environments (with `environments:`), or label the results (without).
    pub envs: Vec<String>,
    /// Run against an existing cluster's contact points instead of a local cluster.
    pub hosts: Vec<String>,
}

impl Overrides {
    pub fn is_empty(&self) -> bool {
        self.scale.is_none() && self.set.is_empty() && self.envs.is_empty() && self.hosts.is_empty()
    }
}

/// Applies `o` to `f`; the error says which override is at fault.
pub fn apply(f: &mut ScenarioFile, o: &Overrides) -> Result<(), Invalid> {
    let mut sets: Vec<(String, String)> = Vec::new();
    if let Some(scale) = &o.scale {
        let Some(entries) = f.scales.get(scale) else {
            return Err(crate::invalid!(
                "--scale {scale}: the file has no such scale (it has: {})",
                match f.scales.is_empty() {
                    true => "none".to_string(),
                    false => f.scales.keys().cloned().collect::<Vec<_>>().join(", "),
                }
            ));
        };
        for e in entries {
            // On hosts there is no local cluster to size.
            if o.hosts.is_empty() || !e.trim_start().starts_with("cluster.") {
                sets.push((format!("--scale {scale}: scales.{scale}"), e.clone()));
            }
        }
    }
    for e in &o.set {
        if !o.hosts.is_empty() && e.trim_start().starts_with("cluster.") {
            return Err(crate::invalid!(
                "--set {e}: with --hosts there is no local cluster to set"
            ));
        }
        sets.push(("--set".to_string(), e.clone()));
    }
    for (origin, entry) in &sets {
        set(f, entry).map_err(|e| crate::invalid!("{origin} {entry}: {e}"))?;
    }
    select_envs(f, &o.envs)?;
    if !o.hosts.is_empty() {
        on_hosts(f, &o.hosts)?;
    }
    Ok(())
}

/// One `KEY=VALUE`.
fn set(f: &mut ScenarioFile, entry: &str) -> Result<(), Invalid> {
    let Some((key, text)) = entry.split_once('=') else {
        return Err(crate::invalid!("expected KEY=VALUE"));
    };
    let (key, text) = (key.trim(), text.trim());
    if key.is_empty() {
        return Err(crate::invalid!("expected KEY=VALUE"));
    }
    let value: Value = match text {
        "" => Value::String(String::new()),
        t => crate::yaml::from_str(t).unwrap_or_else(|_| Value::String(t.to_string())),
    };
    if key == "repeat" {
        f.repeat = repeat_of(&value)?;
        // A step's own repeat gives way too.
        for s in &mut f.steps {
            s.remove("repeat");
        }
        return Ok(());
    }
    let (scope, option) = match key.split_once('.') {
        Some((s, o)) => (Some(s), o),
        None => (None, key),
    };
    if scope == Some("cluster") {
        // Over every environment's own value too.
        let envs = f.environments.iter_mut().filter_map(|e| e.cluster.as_mut());
        for (i, cluster) in std::iter::once(f.cluster.get_or_insert_with(Mapping::new))
            .chain(envs)
            .enumerate()
        {
            match &value {
                Value::Null => cluster.remove(option),
                _ if i > 0 && !cluster.contains_key(option) => None,
                v => cluster.insert(option.to_string(), v.clone()),
            };
        }
        return Ok(());
    }
    let mut changed = 0;
    let names = super::file::step_names(&f.steps);
    for (i, step) in f.steps.iter_mut().enumerate() {
        let Some(command) = step_command(step).map(str::to_string) else {
            continue;
        };
        if let Some(scope) = scope
            && names[i].as_deref() != Some(scope)
            && scope != command
        {
            continue;
        }
        if !Step::keys(&command).contains(&option) {
            if scope.is_some() {
                return Err(crate::invalid!(
                    "a {command} step has no option '{option}'{}",
                    crate::format::did_you_mean(option, Step::keys(&command))
                ));
            }
            continue;
        }
        let options = step.entry(command.as_str()).or_insert(Value::Null);
        if options.is_null() {
            *options = Value::Object(Mapping::new());
        }
        let Value::Object(options) = options else {
            return Err(crate::invalid!("step {}: options must be a map", i + 1));
        };
        match value {
            Value::Null => options.remove(option),
            _ => options.insert(option.to_string(), value.clone()),
        };
        if let Some(Value::Object(vary)) = step.get_mut("vary") {
            vary.remove(option);
            if vary.is_empty() {
                step.remove("vary");
            }
        }
        changed += 1;
    }
    match (changed, scope) {
        (0, Some(scope)) => Err(crate::invalid!(
            "no step is named '{scope}' or is a '{scope}' step"
        )),
        (0, None) => {
            let mut known: Vec<&str> = f
                .steps
                .iter()
                .filter_map(step_command)
                .flat_map(Step::keys)
                .collect();
            known.extend(["repeat", "cluster"]);
            Err(crate::invalid!(
                "no step of the scenario takes '{option}'{}",
                crate::format::did_you_mean(option, known)
            ))
        }
        _ => Ok(()),
    }
}

/// `--env`: the environments to run, or the label of a scenario without environments.
fn select_envs(f: &mut ScenarioFile, names: &[String]) -> Result<(), Invalid> {
    if names.is_empty() {
        return Ok(());
    }
    if f.environments.is_empty() {
        let [name] = names else {
            return Err(crate::invalid!(
                "--env: the scenario has no environments: give one label"
            ));
        };
        f.env = Some(name.clone());
        return Ok(());
    }
    for n in names {
        if !f.environments.iter().any(|e| &e.name == n) {
            return Err(crate::invalid!(
                "--env {n}: no such environment (the scenario has: {})",
                f.environments
                    .iter()
                    .map(|e| e.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    f.environments.retain(|e| names.contains(&e.name));
    Ok(())
}

/// `--hosts`: the (one) environment runs on an existing cluster; the cluster section is unused.
fn on_hosts(f: &mut ScenarioFile, hosts: &[String]) -> Result<(), Invalid> {
    match f.environments.as_mut_slice() {
        [] => {}
        [one] => {
            one.cluster = None;
            one.hosts = hosts.to_vec();
        }
        many => {
            return Err(crate::invalid!(
                "--hosts: the scenario compares {} environments; choose the one these hosts \
                 are with --env",
                many.len()
            ));
        }
    }
    f.cluster = None;
    f.hosts = hosts.to_vec();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::file::{parse, plan_all};
    use std::path::Path;

    const FILE: &str = "
name: s
cluster: {nodes: 3, heap: 256M}
environments:
  - {name: big}
  - {name: small, cluster: {cpus-per-node: 1, heap: 128M}}
scales:
  full: ['duration=30m', 'cluster.heap=8G', 'rows=1000000']
steps:
  - fill: {workload: tabular, bytes: 1G}
  - throughput: {workload: tabular, concurrency: 300, duration: 45s}
  - latency: {workload: tabular, skip-rampup: true, rate: 35%, of: '{throughput}'}
    name: lat
  - latency: {workload: tabular, skip-rampup: true, duration: 20s}
    vary: {rate: [100, 500]}
";

    fn applied(o: Overrides) -> Result<ScenarioFile, Invalid> {
        let mut f = parse(FILE).unwrap();
        apply(&mut f, &o).map(|()| f)
    }

    fn sets(s: &[&str]) -> Overrides {
        Overrides {
            set: s.iter().map(|s| s.to_string()).collect(),
            ..Overrides::default()
        }
    }

    #[test]
    fn set_reaches_every_step_that_takes_the_key_and_only_those() {
        let f = applied(sets(&["duration=10s", "lat.rate=50%", "cluster.heap=512M"])).unwrap();
        let m = plan_all(&f, Path::new("/s")).unwrap();
        for p in &m.envs {
            // fill takes duration too; every load step got it.
            for s in &p.steps {
                let r = s.step.run_spec().unwrap();
                assert_eq!(
                    r.duration,
                    Some(std::time::Duration::from_secs(10)),
                    "{}",
                    s.name
                );
            }
            let lat = p.steps.iter().find(|s| s.name == "lat").unwrap();
            assert_eq!(
                lat.step.run_spec().unwrap().rate,
                Some(crate::spec::load::RateArg::Share(0.5))
            );
            assert_eq!(
                p.cluster.as_ref().unwrap().options.heap,
                Some(crate::spec::MiB(512))
            );
        }
    }

    #[test]
    fn a_scale_is_a_named_set_and_the_command_line_wins_over_it() {
        let o = Overrides {
            scale: Some("full".into()),
            set: vec!["duration=1m".into()],
            ..Overrides::default()
        };
        let f = applied(o).unwrap();
        let m = plan_all(&f, Path::new("/s")).unwrap();
        // Over an environment's own value too.
        assert_eq!(
            m.envs[1].cluster.as_ref().unwrap().options.heap,
            Some(crate::spec::MiB(8192))
        );
        let p = &m.envs[0];
        assert_eq!(
            p.cluster.as_ref().unwrap().options.heap,
            Some(crate::spec::MiB(8192))
        );
        let t = p.steps[1].step.run_spec().unwrap();
        assert_eq!(t.duration, Some(std::time::Duration::from_secs(60)));
        assert_eq!(t.rows, 1_000_000);
        let e = applied(Overrides {
            scale: Some("huge".into()),
            ..Overrides::default()
        })
        .unwrap_err();
        assert!(e.contains("--scale huge") && e.contains("full"), "{e}");
    }

    #[test]
    fn set_replaces_an_axis() {
        let f = applied(sets(&["latency.rate=300"])).unwrap();
        let m = plan_all(&f, Path::new("/s")).unwrap();
        let names: Vec<&str> = m.envs[0].steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["fill", "throughput", "lat", "latency"]);
        let f = applied(sets(&["duration=~", "cluster.heap=~"])).unwrap();
        let m = plan_all(&f, Path::new("/s")).unwrap();
        assert_eq!(m.envs[0].steps[1].step.run_spec().unwrap().duration, None);
        assert_eq!(m.envs[0].cluster.as_ref().unwrap().options.heap, None);
        let e = applied(sets(&["repeat=3"])).unwrap();
        let m = plan_all(&e, Path::new("/s")).unwrap();
        assert_eq!(m.envs[0].steps.len(), 3 * 5);
    }

    #[test]
    fn bad_overrides_say_which_and_why() {
        let e = |s: &[&str]| applied(sets(s)).unwrap_err();
        assert!(e(&["duration"]).contains("KEY=VALUE"));
        assert!(e(&["concurency=5"]).contains("no step of the scenario takes 'concurency'"));
        assert!(e(&["nosuch.rate=5"]).contains("no step is named 'nosuch'"));
        assert!(e(&["lat.quick=true"]).contains("has no option 'quick'"));
        assert!(e(&["repeat=0"]).contains("1 or more"));
        // A value is checked by the step's own parser when planned.
        let f = applied(sets(&["rate=-5"])).unwrap();
        let msg = plan_all(&f, Path::new("/s")).unwrap_err();
        assert!(msg.contains("rate") && msg.contains("-5"), "{msg}");
    }

    #[test]
    fn env_selects_and_hosts_needs_one_environment() {
        let o = |envs: &[&str], hosts: &[&str]| Overrides {
            envs: envs.iter().map(|s| s.to_string()).collect(),
            hosts: hosts.iter().map(|s| s.to_string()).collect(),
            ..Overrides::default()
        };
        let f = applied(o(&["small"], &[])).unwrap();
        let m = plan_all(&f, Path::new("/s")).unwrap();
        assert_eq!(m.envs.len(), 1);
        assert_eq!(m.envs[0].steps[0].placement.env.as_deref(), Some("small"));
        let e = applied(o(&["medium"], &[])).unwrap_err();
        assert!(e.contains("medium") && e.contains("big, small"), "{e}");
        let e = applied(o(&[], &["10.0.0.1"])).unwrap_err();
        assert!(e.contains("--env"), "{e}");
        let f = applied(o(&["big"], &["10.0.0.1", "10.0.0.2"])).unwrap();
        let m = plan_all(&f, Path::new("/s")).unwrap();
        assert!(m.envs[0].cluster.is_none());
        let r = m.envs[0].steps[1].step.run_spec().unwrap();
        assert_eq!(r.hosts, ["10.0.0.1", "10.0.0.2"]);
        assert_eq!(r.cluster, None);
        assert_eq!(r.env.as_deref(), Some("big"));
    }
}
