//! CSV exporter: one row per (scenario, environment), one per capacity-search step, plus one
//! per environment that has only probe figures. The columns are the model's fields
//! ([`RUN_SECTIONS`], [`PROBE_SECTION`], and [`STEP_COLUMNS`] when the report holds a capacity
//! search) by key, and [`COST_COLUMNS`] when environments were priced (`--deployment`): each
//! row carries its environment's cost; numbers are rounded to 6 decimal places, absent figures
//! empty.

use super::Report;
use super::capacity::{STEP_COLUMNS, SearchReport, StepRow};
use super::model::{EnvRuns, Field, PROBE_SECTION, ProbeRow, RUN_SECTIONS};

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

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
        .map(|c| step.map(|s| quote(&(c.get)(s).raw())).unwrap_or_default())
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
    "cost_measured_on",
];

fn number(v: Option<f64>) -> String {
    v.map(|v| ((v * 1e6).round() / 1e6).to_string())
        .unwrap_or_default()
}

fn cost_values(report: &Report, env: &str) -> Vec<String> {
    match report.costs.iter().find(|c| c.env == env) {
        Some(c) => vec![
            quote(&c.deployment),
            number(Some(c.monthly_usd)),
            number(c.k8s_fee_monthly_usd),
            number(c.ops_per_s),
            quote(&c.basis),
            number(c.per_1k_ops_usd),
            quote(c.measured_on.as_deref().unwrap_or_default()),
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

pub fn render(report: &Report) -> String {
    let with_steps = !report.capacity.is_empty();
    let with_costs = !report.costs.is_empty();
    let header: Vec<&str> = ["scenario", "env"]
        .into_iter()
        .chain(run_fields().map(|f| f.key))
        .chain(PROBE_SECTION.fields.iter().map(|f| f.key))
        .chain(STEP_COLUMNS.iter().map(|c| c.key).filter(|_| with_steps))
        .chain(COST_COLUMNS.iter().copied().filter(|_| with_costs))
        .collect();
    let mut out = header.join(",") + "\n";
    let probe = |env: &str| -> Option<&ProbeRow> { report.probes.iter().find(|p| p.env == env) };
    let mut row = |scenario: &str, env: &str, runs: Option<&EnvRuns>, step: Option<&StepRow>| {
        let cells: Vec<String> = [quote(scenario), quote(env)]
            .into_iter()
            .chain(values(run_fields(), runs))
            .chain(values(PROBE_SECTION.fields.iter(), probe(env)))
            .chain(step_values(step).into_iter().filter(|_| with_steps))
            .chain(cost_values(report, env).into_iter().filter(|_| with_costs))
            .collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    };
    for g in &report.groups {
        for e in &g.envs {
            row(&g.scenario, &e.env, Some(e), None);
        }
    }
    for c in &report.capacity {
        for s in &c.steps {
            row(&capacity_scenario(c), &c.env, None, Some(s));
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
            row("", &p.env, None, None);
        }
    }
    out
}
