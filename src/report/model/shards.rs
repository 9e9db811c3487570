//! The shards a merged run came from, one row each.

use super::RunTimeline;
use crate::format::Table;

impl RunTimeline {
    /// The shards of a merged run, one row each: what each drove, and whether it kept up.
    pub fn shard_table(&self) -> Option<Table> {
        let m = self.merged.as_ref()?;
        let first = m
            .shards
            .iter()
            .filter_map(|s| s.main_started_unix_s)
            .fold(f64::INFINITY, f64::min);
        let rows = m
            .shards
            .iter()
            .zip(crate::shards::behind::behind_all(
                &m.shards,
                crate::shards::behind::ON_TIME,
            ))
            .map(|(s, behind)| {
                vec![
                    format!("{}/{}", s.index, m.shards.len()),
                    crate::format::cell(Some(s.ops_per_s), 0),
                    crate::format::cell(s.target_rate_per_s, 0),
                    crate::format::cell(s.achieved_ratio.map(|r| r * 100.0), 2),
                    crate::format::cell(Some(s.client_cpu_util * 100.0), 0),
                    s.max_backlog.to_string(),
                    crate::format::cell(s.main_started_unix_s.map(|t| (t - first) * 1000.0), 1),
                    if behind.is_empty() {
                        "kept up".into()
                    } else {
                        format!("behind: {}", behind.join("; "))
                    },
                ]
            })
            .collect();
        Some(Table {
            title: format!(
                "Shards — {} ({}), run {}, main phases started within {:.1} ms",
                self.env,
                self.path.display(),
                m.run_id,
                m.start_spread_ms
            ),
            header: [
                "shard",
                "ops/s",
                "target ops/s",
                "sent on time %",
                "client CPU %",
                "max backlog",
                "start (ms after first)",
                "verdict",
            ]
            .map(String::from)
            .to_vec(),
            rows,
            text_columns: vec![0, 7],
        })
    }
}
