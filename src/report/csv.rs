//! CSV exporter: one row per (scenario, environment), one per capacity-search step, one per
//! device of each host a run sampled (one per host without a device), plus one per
//! environment that has only probe figures. The columns are the model's fields
//! ([`RUN_SECTIONS`], [`PROBE_SECTION`], [`STEP_COLUMNS`] when the report holds a capacity
//! search, and `run` with [`HOST_COLUMNS`] and [`DEVICE_COLUMNS`] when a run sampled hosts) by
//! key, and [`COST_COLUMNS`] when environments were priced (`--deployment`): each
//! row carries its environment's cost and its rank by cost per 1,000 ops/s (among two or more
//! ranked environments, as the report's ranking table); numbers are rounded to 6 decimal
//! places, absent figures empty; fields quoted by the `csv` crate where they need it.

use super::Report;
use super::capacity::{Column, STEP_COLUMNS, SearchReport, StepRow};
use super::model::hosts::{DEVICE_COLUMNS, DeviceLine, HOST_COLUMNS, HostLine};
use super::model::{EnvRuns, Field, PROBE_SECTION, ProbeRow, RUN_SECTIONS, summary};

fn run_fields() -> impl Iterator<Item = &'static Field<EnvRuns>> {
    RUN_SECTIONS.iter().flat_map(|s| s.fields.iter())
}

fn values<T: 'static>(
    fields: impl Iterator<Item = &'static Field<T>>,
    item: Option<&T>,
) -> Vec<String> {
    fields
        .map(|f| {
            item.and_then(|t| (f.get)(t))
                .map(|v| ((v * 1e6).round() / 1e6).to_string())
                .unwrap_or_default()
        })
        .collect()
}

fn step_values(step: Option<&StepRow>) -> Vec<String> {
    STEP_COLUMNS
        .iter()
        .map(|c| step.map(|s| (c.get)(s).raw()).unwrap_or_default())
        .collect()
}

/// The cost columns, filled on every row of a priced environment.
pub const COST_COLUMNS: &[&str] = &[
    "deployment",
    "usd_per_month",
    "k8s_fee_usd_per_month",
    "cost_ops_per_s",
    "cost_throughput_from",
    "usd_per_1k_ops_per_s",
    "cost_rank",
    "cost_measured_on",
];

fn number(v: Option<f64>) -> String {
    v.map(|v| ((v * 1e6).round() / 1e6).to_string())
        .unwrap_or_default()
}

fn cost_values(report: &Report, env: &str) -> Vec<String> {
    match report.costs.iter().find(|c| c.env == env) {
        Some(c) => vec![
            c.deployment.clone(),
            number(Some(c.monthly_usd)),
            number(c.k8s_fee_monthly_usd),
            number(c.ops_per_s),
            c.basis.clone(),
            number(c.per_1k_ops_usd),
            super::cost::rank_of(&report.costs, env).map_or_else(String::new, |r| r.to_string()),
            c.measured_on.clone().unwrap_or_default(),
        ],
        None => vec![String::new(); COST_COLUMNS.len()],
    }
}

fn capacity_scenario(c: &SearchReport) -> String {
    match &c.status {
        None => format!("capacity search, {}", c.workload),
        Some(s) => format!("capacity search, {} ({s})", c.workload),
    }
}

/// The host columns' keys: the run's file name, then the hosts table's and the devices
/// table's columns but the environment (and the host, named once).
fn host_keys() -> impl Iterator<Item = &'static str> {
    std::iter::once("run")
        .chain(host_columns().map(|c| c.key))
        .chain(device_columns().map(|c| c.key))
}

fn host_columns() -> impl Iterator<Item = &'static Column<HostLine>> {
    HOST_COLUMNS.iter().filter(|c| c.key != "env")
}

fn device_columns() -> impl Iterator<Item = &'static Column<DeviceLine>> {
    DEVICE_COLUMNS
        .iter()
        .filter(|c| !matches!(c.key, "env" | "host"))
}

/// A host row's host columns: its run, the host's figures and one of its devices' (empty
/// when it has none); every host column empty on other rows.
fn host_values(host: Option<(&str, &HostLine, Option<&DeviceLine>)>) -> Vec<String> {
    let Some((run, h, device)) = host else {
        return vec![String::new(); host_keys().count()];
    };
    std::iter::once(run.to_string())
        .chain(host_columns().map(|c| (c.get)(h).raw()))
        .chain(device_columns().map(|c| device.map(|d| (c.get)(d).raw()).unwrap_or_default()))
        .collect()
}

/// A row's own figures: a scenario's environment, a capacity step, or a host of a run (and
/// one of its devices).
#[derive(Clone, Copy)]
enum Of<'a> {
    Runs(&'a EnvRuns),
    Step(&'a StepRow),
    Host(&'a str, &'a HostLine, Option<&'a DeviceLine>),
    Probe,
}

pub fn render(report: &Report) -> String {
    let with_steps = !report.capacity.is_empty();
    let with_costs = !report.costs.is_empty();
    let hosts = summary::host_lines(&report.runs);
    let with_hosts = !hosts.is_empty();
    let header: Vec<&str> = ["scenario", "env"]
        .into_iter()
        .chain(run_fields().map(|f| f.key))
        .chain(PROBE_SECTION.fields.iter().map(|f| f.key))
        .chain(STEP_COLUMNS.iter().map(|c| c.key).filter(|_| with_steps))
        .chain(host_keys().filter(|_| with_hosts))
        .chain(COST_COLUMNS.iter().copied().filter(|_| with_costs))
        .collect();
    // Quoted where a field needs it by the csv crate; written to memory, which cannot fail.
    let mut out = csv::Writer::from_writer(Vec::new());
    out.write_record(&header).expect("a CSV written to memory");
    let probe = |env: &str| -> Option<&ProbeRow> { report.probes.iter().find(|p| p.env == env) };
    let mut row = |scenario: &str, env: &str, of: Of| {
        let runs = match of {
            Of::Runs(r) => Some(r),
            _ => None,
        };
        let step = match of {
            Of::Step(s) => Some(s),
            _ => None,
        };
        let host = match of {
            Of::Host(run, h, d) => Some((run, h, d)),
            _ => None,
        };
        let cells: Vec<String> = [scenario.to_string(), env.to_string()]
            .into_iter()
            .chain(values(run_fields(), runs))
            .chain(values(PROBE_SECTION.fields.iter(), probe(env)))
            .chain(step_values(step).into_iter().filter(|_| with_steps))
            .chain(host_values(host).into_iter().filter(|_| with_hosts))
            .chain(cost_values(report, env).into_iter().filter(|_| with_costs))
            .collect();
        out.write_record(&cells).expect("a CSV written to memory");
    };
    for g in &report.groups {
        for e in &g.envs {
            row(&g.scenario, &e.env, Of::Runs(e));
        }
    }
    for c in &report.capacity {
        for s in &c.steps {
            row(&capacity_scenario(c), &c.env, Of::Step(s));
        }
    }
    for h in &hosts {
        let Some(run) = report.runs.iter().find(|r| r.index == h.run) else {
            continue;
        };
        let scenario = report
            .groups
            .iter()
            .find(|g| g.runs.iter().any(|t| t.path == run.path))
            .map_or(String::new(), |g| g.scenario.clone());
        let name = run.name();
        let devices = h.devices();
        if devices.is_empty() {
            row(&scenario, &h.env, Of::Host(&name, h, None));
        }
        for d in &devices {
            row(&scenario, &h.env, Of::Host(&name, h, Some(d)));
        }
    }
    for p in &report.probes {
        let has_rows = report
            .groups
            .iter()
            .any(|g| g.envs.iter().any(|e| e.env == p.env))
            || report
                .capacity
                .iter()
                .any(|c| c.env == p.env && !c.steps.is_empty());
        if !has_rows {
            row("", &p.env, Of::Probe);
        }
    }
    let bytes = out.into_inner().expect("a CSV written to memory");
    String::from_utf8(bytes).expect("a CSV of strings is UTF-8")
}
