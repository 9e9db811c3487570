//! Response time by rate: a workload run at several fixed rates, one row per rate.

use super::{Report, ScenarioGroup};
use crate::format::Table;

impl Report {
    /// Per workload run at two or more fixed rates: response-time p99 by rate, rates as rows
    /// and environments as columns (reference 002's table).
    pub fn by_rate_tables(&self) -> Vec<Table> {
        let mut workloads: Vec<&str> = Vec::new();
        for g in &self.groups {
            if g.open_rate_per_s.is_some() && !workloads.contains(&g.workload.as_str()) {
                workloads.push(&g.workload);
            }
        }
        let mut out = Vec::new();
        for w in workloads {
            let mut groups: Vec<&ScenarioGroup> = self
                .groups
                .iter()
                .filter(|g| g.workload == w && g.open_rate_per_s.is_some())
                .collect();
            if groups.len() < 2 {
                continue;
            }
            groups.sort_by(|a, b| {
                let rate = |g: &&ScenarioGroup| g.open_rate_per_s.unwrap_or(0.0);
                rate(a).total_cmp(&rate(b))
            });
            let mut envs: Vec<&str> = Vec::new();
            for g in &groups {
                for e in &g.envs {
                    if !envs.contains(&e.env.as_str()) {
                        envs.push(&e.env);
                    }
                }
            }
            let header = std::iter::once("target ops/s".to_string())
                .chain(envs.iter().map(|e| e.to_string()))
                .collect();
            let rows = groups
                .iter()
                .map(|g| {
                    std::iter::once(crate::format::cell(g.open_rate_per_s, 0))
                        .chain(envs.iter().map(|env| {
                            crate::format::cell(
                                g.envs
                                    .iter()
                                    .find(|e| e.env == *env)
                                    .map(|e| e.response.p99_ms),
                                2,
                            )
                        }))
                        .collect()
                })
                .collect();
            out.push(Table {
                title: format!("Response time p99 (ms) by rate — {w}, open loop"),
                header,
                rows,
                text_columns: vec![],
            });
        }
        out
    }
}
