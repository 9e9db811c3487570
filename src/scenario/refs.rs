//! References between a scenario's steps, typed: an option whose whole value is `{NAME}` (an
//! earlier step's result) or `{NAME.FIELD}` (a value of it, see [`Field`]) is planned as a
//! [`StepRef`] on that option's key, and filled in when the step runs from the earlier steps'
//! typed outcomes — never by substituting text and parsing the step again. `{NAME@ENV}` is an
//! earlier environment's step; a repeated step's `{NAME}` is its best run (the highest
//! main-phase throughput, as reference 000 kept the best of several runs).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::outcome::Outcome;
use super::steps::Step;
use crate::error::Invalid;
use crate::result::capacity::SearchMode;
use crate::spec::load::RateArg;

/// A value of an earlier step's result that a later step may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The rows a fill wrote.
    Rows,
    /// A run's main-phase throughput.
    OpsPerS,
    /// A capacity search's highest passing rate.
    Rate,
    /// A capacity search's highest passing throughput.
    Capacity,
}

impl Field {
    /// Every field: its name, the commands whose results offer it, what it is.
    pub const ALL: &[(Field, &str, &[&str], &str)] = &[
        (Field::Rows, "rows", &["fill"], "the rows the fill wrote"),
        (
            Field::OpsPerS,
            "ops_per_s",
            &["run", "throughput", "latency"],
            "the main phase's throughput",
        ),
        (
            Field::Rate,
            "rate",
            &["capacity"],
            "the capacity verdict's highest passing rate (open loop)",
        ),
        (
            Field::Capacity,
            "capacity",
            &["capacity"],
            "the capacity verdict's highest passing throughput",
        ),
    ];

    fn name(self) -> &'static str {
        Field::ALL
            .iter()
            .find(|f| f.0 == self)
            .map(|f| f.1)
            .expect("every field is listed")
    }
}

/// `{NAME}` or `{NAME.FIELD}` on a step's option.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRef {
    /// The earlier step's name (`NAME@ENV` for another environment's).
    pub step: String,
    pub field: Option<Field>,
}

/// What a reference gives a step's option.
#[derive(Debug, Clone, PartialEq)]
pub enum RefValue {
    Path(PathBuf),
    Number(f64),
}

/// The keys a reference may stand for, and what each takes.
pub const KEYS: &[(&str, &str)] = &[
    ("of", "a result: {NAME}"),
    ("rows", "a number: {NAME.rows}"),
    ("ops", "a number"),
    (
        "rate",
        "a rate: {NAME.ops_per_s}, {NAME.rate}, {NAME.capacity}",
    ),
    ("start-rate", "a rate"),
];

/// An earlier step as later steps may refer to it, while planning: its command, its runs'
/// result paths.
#[derive(Debug, Clone)]
pub struct Planned {
    pub command: String,
    pub runs: Vec<PathBuf>,
    /// A closed-loop capacity search (`start-concurrency`): it has no rate to offer.
    pub closed_loop: bool,
}

/// The reference a whole option value makes, if it is one: `Ok(None)` for a value that is
/// not a reference; a `{…}` inside a longer text is refused.
fn reference(
    key: &str,
    value: &crate::yaml::Value,
    known: &BTreeMap<String, Planned>,
) -> Result<Option<StepRef>, Invalid> {
    let Some(text) = value.as_str() else {
        return Ok(None);
    };
    let Some(inner) = text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) else {
        if text.contains('{') && text.contains('}') {
            return Err(crate::invalid!(
                "{key}: '{text}': a reference to an earlier step is a whole value, e.g. '{{throughput}}'"
            ));
        }
        return Ok(None);
    };
    if !KEYS.iter().any(|(k, _)| *k == key) {
        let keys: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
        return Err(crate::invalid!(
            "{key}: '{text}': an earlier step's result can be given to {} only",
            keys.join(", ")
        ));
    }
    // A step's name may hold dots (`lat-rate-1.5k`): the whole name first, then
    // `NAME.FIELD` split at the last dot.
    let (name, field) = match inner.rsplit_once('.') {
        Some((n, f)) if !known.contains_key(inner) => (n, Some(f)),
        _ => (inner, None),
    };
    let d = known.get(name).ok_or_else(|| {
        crate::invalid!(
            "'{text}' names no earlier step (steps so far: {:?})",
            known.keys().collect::<Vec<_>>()
        )
    })?;
    let field = match field {
        None => None,
        Some(f) => Some(
            Field::ALL
                .iter()
                .find(|(_, name, commands, _)| *name == f && commands.contains(&d.command.as_str()))
                .map(|x| x.0)
                .ok_or_else(|| {
                    let offered: Vec<&str> = Field::ALL
                        .iter()
                        .filter(|(_, _, c, _)| c.contains(&d.command.as_str()))
                        .map(|x| x.1)
                        .collect();
                    crate::invalid!(
                        "'{text}': a {} step offers no '{f}' (it offers: {})",
                        d.command,
                        match offered.is_empty() {
                            true => "its result path only".to_string(),
                            false => offered.join(", "),
                        }
                    )
                })?,
        ),
    };
    if field == Some(Field::Rate) && d.closed_loop {
        return Err(closed_loop_rate(text, name));
    }
    Ok(Some(StepRef {
        step: name.to_string(),
        field,
    }))
}

/// `{NAME.rate}` of a closed-loop capacity search, refused.
fn closed_loop_rate(text: &str, name: &str) -> Invalid {
    crate::invalid!(
        "'{text}': '{name}' is a closed-loop capacity search (start-concurrency), which has no rate: refer to '{{{name}.capacity}}', its highest passing throughput"
    )
}

/// Takes the references out of a step's options (a map, or nothing): the options without
/// them, and each reference with its key. A reference whose value is known now — the result
/// path of a step run once — is left in the options as that path.
pub fn take(
    options: &crate::yaml::Value,
    known: &BTreeMap<String, Planned>,
) -> Result<(crate::yaml::Value, Vec<(String, StepRef)>), Invalid> {
    let crate::yaml::Value::Object(m) = options else {
        return Ok((options.clone(), Vec::new()));
    };
    let mut rest = crate::yaml::Mapping::new();
    let mut refs = Vec::new();
    for (k, v) in m {
        let key = k.as_str();
        match reference(key, v, known)? {
            Some(r) => {
                let d = &known[&r.step];
                if r.field.is_none() && d.runs.len() == 1 {
                    let path = d.runs[0].to_string_lossy().into_owned();
                    rest.insert(k.clone(), path.into());
                } else {
                    refs.push((key.to_string(), r));
                }
            }
            None => {
                rest.insert(k.clone(), v.clone());
            }
        }
    }
    Ok((crate::yaml::Value::Object(rest), refs))
}

/// A value standing in for a reference while a step is checked before anything runs.
pub fn stand_in(r: &StepRef, known: &BTreeMap<String, Planned>) -> RefValue {
    match r.field {
        None => RefValue::Path(known[&r.step].runs.last().cloned().unwrap_or_default()),
        Some(_) => RefValue::Number(1.0),
    }
}

/// The earlier steps as they ran: by name, each run's result path and outcome.
pub type Ran = BTreeMap<String, Vec<(PathBuf, Outcome)>>;

/// What `r` reads from the earlier steps' outcomes.
pub fn resolve(r: &StepRef, ran: &Ran) -> Result<RefValue, Invalid> {
    let runs = ran
        .get(&r.step)
        .filter(|runs| !runs.is_empty())
        .ok_or_else(|| crate::invalid!("{{{}}}: that step has not run", r.step))?;
    let (path, outcome) = best(runs);
    let missing = |what: &str| crate::invalid!("{{{}}}: {}: {what}", r.step, path.display());
    let n = match (r.field, outcome) {
        (None, _) => return Ok(RefValue::Path(path.clone())),
        (Some(Field::Rows), Outcome::Run(run)) => run
            .phases
            .iter()
            .filter_map(|p| p.summary.as_ref())
            .map(|s| s.ok)
            .sum::<u64>() as f64,
        (Some(Field::OpsPerS), Outcome::Run(run)) => {
            run.main_summary()
                .ok_or_else(|| missing("the run has no main-phase result"))?
                .ops_per_s
        }
        (Some(f @ (Field::Rate | Field::Capacity)), Outcome::Capacity(c)) => {
            // Refused when planned; a result read back (another environment's) is checked too.
            if f == Field::Rate && c.spec.mode != SearchMode::Rate {
                let text = format!("{{{}.rate}}", r.step);
                return Err(closed_loop_rate(&text, &r.step));
            }
            let v = c
                .verdict
                .as_ref()
                .ok_or_else(|| missing("the search has no verdict"))?;
            match f {
                Field::Rate => v.highest_passing_rate_per_s,
                _ => v.highest_passing_ops_per_s,
            }
            .ok_or_else(|| missing("no step of the search passed"))?
        }
        (Some(f), _) => return Err(missing(&format!("its result has no {}", f.name()))),
    };
    Ok(RefValue::Number(n.round()))
}

/// The run whose main phase had the highest throughput (the last run when none has one).
fn best(runs: &[(PathBuf, Outcome)]) -> &(PathBuf, Outcome) {
    let ops = |o: &Outcome| o.run().and_then(|r| r.main_summary()).map(|s| s.ops_per_s);
    runs.iter()
        .filter(|(_, o)| ops(o).is_some())
        .max_by(|a, b| {
            ops(&a.1)
                .partial_cmp(&ops(&b.1))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .unwrap_or_else(|| runs.last().expect("not empty"))
}

impl Step {
    /// Gives option `key` the value of a reference.
    pub fn set(&mut self, key: &str, value: &RefValue) -> Result<(), Invalid> {
        let number = |v: &RefValue| match v {
            RefValue::Number(n) if n.is_finite() && *n >= 0.0 => Ok(*n),
            _ => Err(crate::invalid!("{key}: expected a number, got {value:?}")),
        };
        if let (Step::Capacity(c), "start-rate") = (&mut *self, key) {
            c.search.start_rate = Some(number(value)?);
            return Ok(());
        }
        let Some(run) = self.run_spec_mut() else {
            return Err(crate::invalid!("{key}: this step takes no reference"));
        };
        match (key, value) {
            ("of", RefValue::Path(p)) => run.of = Some(p.clone()),
            ("rows", v) => run.rows = number(v)? as u64,
            ("ops", v) => run.ops = Some(number(v)? as u64),
            ("rate", v) => run.rate = Some(RateArg::PerSecond(number(v)?)),
            _ => return Err(crate::invalid!("{key}: takes no {value:?}")),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> BTreeMap<String, Planned> {
        BTreeMap::from([
            (
                "fill".to_string(),
                Planned {
                    command: "fill".into(),
                    runs: vec!["/s/01-fill.json".into()],
                    closed_loop: false,
                },
            ),
            (
                "lat-1.5k".to_string(),
                Planned {
                    command: "latency".into(),
                    runs: vec!["/s/02-a.json".into(), "/s/03-b.json".into()],
                    closed_loop: false,
                },
            ),
        ])
    }

    #[test]
    fn whole_values_become_typed_references() {
        let opts: crate::yaml::Value = crate::yaml::from_str(
            "{rows: '{fill.rows}', of: '{fill}', rate: '{lat-1.5k.ops_per_s}', duration: 10s}",
        )
        .unwrap();
        let (rest, refs) = take(&opts, &known()).unwrap();
        // A path known now stays in the options; values are references.
        assert_eq!(rest["of"].as_str(), Some("/s/01-fill.json"));
        assert_eq!(rest["duration"].as_str(), Some("10s"));
        assert!(rest.get("rows").is_none());
        assert_eq!(
            refs,
            [
                (
                    "rows".to_string(),
                    StepRef {
                        step: "fill".into(),
                        field: Some(Field::Rows)
                    }
                ),
                (
                    "rate".to_string(),
                    StepRef {
                        step: "lat-1.5k".into(),
                        field: Some(Field::OpsPerS)
                    }
                ),
            ]
        );
        let e = |text: &str| {
            take(&crate::yaml::from_str(text).unwrap(), &known())
                .unwrap_err()
                .to_string()
        };
        assert!(e("{rows: '{nosuch.rows}'}").contains("names no earlier step"));
        assert!(
            e("{rows: '{fill.ops_per_s}'}").contains("offers no 'ops_per_s' (it offers: rows)")
        );
        assert!(e("{of: 'x{fill}'}").contains("whole value"));
        assert!(e("{duration: '{fill}'}").contains("can be given to of, rows"));
    }

    #[test]
    fn a_closed_loop_search_offers_no_rate_when_planned_or_run() {
        let mut known = known();
        known.insert(
            "cap".to_string(),
            Planned {
                command: "capacity".into(),
                runs: vec!["/s/04-cap.json".into()],
                closed_loop: true,
            },
        );
        let opts = |text: &str| crate::yaml::from_str::<crate::yaml::Value>(text).unwrap();
        let e = take(&opts("{rate: '{cap.rate}'}"), &known)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "'{cap.rate}': 'cap' is a closed-loop capacity search (start-concurrency), which has no rate: refer to '{cap.capacity}', its highest passing throughput"
        );
        let (_, refs) = take(&opts("{rate: '{cap.capacity}'}"), &known).unwrap();
        assert_eq!(refs[0].1.field, Some(Field::Capacity));
        // An open-loop search offers both.
        known.get_mut("cap").unwrap().closed_loop = false;
        let (_, refs) = take(&opts("{rate: '{cap.rate}'}"), &known).unwrap();
        assert_eq!(refs[0].1.field, Some(Field::Rate));

        // Its result, when the reference is filled in (another environment's step is read
        // back): refused by the search's mode, even when no step passed.
        let of = |field| StepRef {
            step: "cap".into(),
            field: Some(field),
        };
        let ran = |c: crate::result::CapacityResult| -> Ran {
            BTreeMap::from([(
                "cap".to_string(),
                vec![("/s/04-cap.json".into(), Outcome::Capacity(Box::new(c)))],
            )])
        };
        let search = crate::result::fixture::capacity_closed("lab", &[4, 8, 16], 3);
        let capacity = search.verdict.as_ref().unwrap().highest_passing_ops_per_s;
        let closed = ran(search);
        let e = resolve(&of(Field::Rate), &closed).unwrap_err().to_string();
        assert!(e.starts_with("'{cap.rate}': 'cap' is a closed-loop"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        // 4 and 8 in flight passed (about 800 ops/s): the capacity is the throughput at 8.
        assert!(
            capacity.is_some_and(|c| (c - 800.0).abs() < 40.0),
            "{capacity:?}"
        );
        assert_eq!(
            resolve(&of(Field::Capacity), &closed).unwrap(),
            RefValue::Number(capacity.unwrap().round())
        );
        let all_failed = ran(crate::result::fixture::capacity_closed("lab", &[4], 1));
        let e = resolve(&of(Field::Rate), &all_failed)
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a closed-loop capacity search"), "{e}");
        let open = ran(crate::result::fixture::capacity(
            "lab",
            &[1000.0, 2000.0],
            2,
        ));
        assert_eq!(
            resolve(&of(Field::Rate), &open).unwrap(),
            RefValue::Number(1000.0)
        );
    }
}
