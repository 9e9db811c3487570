//! A step back into its command line: the one argv serialiser used where a step must be run
//! again as a process (`--loaders` starts `cqlbench run …` children, `k8s loaders` renders the
//! pods' arguments) or shown as a command a person can paste (a scenario's plan).
//!
//! A step's keys are its flags' long names, so serialising the step (serde) and turning each
//! key into `--key value` gives its command line; values are written in the text their parsers
//! read (the `serialize_with` helpers below use each value's `Display`). A round-trip test per
//! step checks that parsing the arguments gives back the same step.

use std::fmt::Display;
use std::time::Duration;

use serde::{Serialize, Serializer};

/// A value as the text its parser reads.
pub fn display<S: Serializer, T: Display>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

pub fn opt_display<S: Serializer, T: Display>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.collect_str(v),
        None => s.serialize_none(),
    }
}

/// A list as one flag per item (`--fault a --fault b`): for flags whose items may hold commas.
pub fn list_display<S: Serializer, T: Display>(v: &[T], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter().map(|x| x.to_string()))
}

/// A list as one comma-separated value (`--hosts a,b`): for flags that split on commas.
pub fn comma_list<S: Serializer, T: Display>(v: &[T], s: S) -> Result<S::Ok, S::Error> {
    match v.is_empty() {
        true => s.serialize_none(),
        false => s.collect_str(
            &v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(","),
        ),
    }
}

/// `1.5s`, `250ms`, `0.25ms`, `60s`: what `spec::parse_duration` reads back exactly.
pub fn duration_text(d: &Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else if d.as_nanos().is_multiple_of(1_000_000) {
        format!("{}ms", d.as_millis())
    } else if d.as_secs() == 0 {
        format!("{}ms", d.as_nanos() as f64 / 1e6)
    } else {
        format!("{}s", d.as_secs_f64())
    }
}

pub fn duration<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&duration_text(d))
}

pub fn opt_duration<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => duration(d, s),
        None => s.serialize_none(),
    }
}

/// The arguments of `command` that make `step`: positional keys first (in the order given),
/// then `--key value` for every other key that is set (a flag alone for `true`, one
/// `--key value` per item of a list). With `defaults`, keys whose value equals the default's
/// are left out.
pub fn args<T: Serialize>(
    command: &str,
    positional: &[&str],
    step: &T,
    defaults: Option<&T>,
) -> Vec<String> {
    let map = |v: &T| match serde_json::to_value(v) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => unreachable!("a step serialises to a map"),
    };
    let values = map(step);
    let defaults = defaults.map(map);
    let mut out = vec![command.to_string()];
    for key in positional {
        if let Some(v) = values.get(*key) {
            out.extend(texts(v));
        }
    }
    out.extend(flags(&values, positional, defaults.as_ref()));
    out
}

/// The `--key value` flags of a step part (no command, no positional keys).
pub fn part_flags<T: Serialize>(part: &T, defaults: Option<&T>) -> Vec<String> {
    let map = |v: &T| match serde_json::to_value(v) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => unreachable!("a step part serialises to a map"),
    };
    flags(&map(part), &[], defaults.map(map).as_ref())
}

fn flags(
    values: &serde_json::Map<String, serde_json::Value>,
    positional: &[&str],
    defaults: Option<&serde_json::Map<String, serde_json::Value>>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (key, value) in values {
        if positional.contains(&key.as_str()) || defaults.and_then(|d| d.get(key)) == Some(value) {
            continue;
        }
        match value {
            serde_json::Value::Null | serde_json::Value::Bool(false) => {}
            serde_json::Value::Bool(true) => out.push(format!("--{key}")),
            v => {
                for t in texts(v) {
                    out.push(format!("--{key}"));
                    out.push(t);
                }
            }
        }
    }
    out
}

fn texts(v: &serde_json::Value) -> Vec<String> {
    match v {
        serde_json::Value::Array(items) => items.iter().flat_map(texts).collect(),
        serde_json::Value::String(s) => vec![s.clone()],
        serde_json::Value::Null => Vec::new(),
        other => vec![other.to_string()],
    }
}

/// The arguments as one line a shell reads back the same (`cqlbench` first): an argument of
/// only letters, digits and `_ @ % + = : , . / -` as it is, any other in single quotes.
pub fn shell_line(args: &[String]) -> String {
    let plain = |a: &str| {
        !a.is_empty()
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c))
    };
    std::iter::once("cqlbench".to_string())
        .chain(args.iter().map(|a| match plain(a) {
            true => a.clone(),
            false => format!("'{}'", a.replace('\'', "'\\''")),
        }))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    #[serde(rename_all = "kebab-case")]
    struct Demo {
        workload: String,
        rows: u64,
        verify: bool,
        skip: bool,
        dc: Option<String>,
        hosts: Vec<String>,
        #[serde(serialize_with = "duration")]
        warmup: Duration,
    }

    #[test]
    fn keys_become_flags_and_defaults_can_be_left_out() {
        let d = Demo {
            workload: "kv".into(),
            rows: 10,
            verify: true,
            skip: false,
            dc: None,
            hosts: vec!["a".into(), "b c".into()],
            warmup: Duration::from_millis(1500),
        };
        assert_eq!(
            args("run", &["workload"], &d, None),
            [
                "run", "kv", "--rows", "10", "--verify", "--hosts", "a", "--hosts", "b c",
                "--warmup", "1500ms"
            ]
        );
        let base = Demo {
            rows: 10,
            hosts: vec![],
            verify: false,
            ..d
        };
        let d = Demo {
            workload: "kv".into(),
            rows: 10,
            verify: true,
            skip: false,
            dc: None,
            hosts: vec![],
            warmup: Duration::from_secs(2),
        };
        assert_eq!(
            args("run", &["workload"], &d, Some(&base)),
            ["run", "kv", "--verify", "--warmup", "2s"]
        );
        assert_eq!(
            shell_line(&["run".into(), "a b".into(), "x,y:1".into(), "it's".into()]),
            "cqlbench run 'a b' x,y:1 'it'\\''s'"
        );
    }

    #[test]
    fn durations_read_back_exactly() {
        for d in [
            Duration::from_secs(60),
            Duration::from_millis(250),
            Duration::from_micros(1500),
            Duration::from_micros(250),
            Duration::from_micros(33),
            Duration::ZERO,
        ] {
            assert_eq!(
                crate::spec::parse_duration(&duration_text(&d)).unwrap(),
                d,
                "{d:?}"
            );
        }
    }
}
