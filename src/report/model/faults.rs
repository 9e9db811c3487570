//! What a run did around each fault it was dealt: throughput before, availability and errors
//! after, how long it took to recover; and the fault table.

use std::collections::BTreeMap;

use super::RunTimeline;
use crate::format::Table;
use crate::result::IntervalRecord;

/// What a run did around one fault.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultImpact {
    pub event: crate::result::fault::FaultEvent,
    /// Seconds into the main phase.
    pub at_s: f64,
    /// Mean throughput over the (up to) 10 s before the fault; in open loop at most the
    /// target rate (a backlog being caught up is not the level to recover to).
    pub before_ops_per_s: Option<f64>,
    /// Lowest per-interval availability from the fault until the next one (or the end);
    /// an interval counts for the fault its midpoint follows.
    pub min_availability: Option<f64>,
    /// From the fault until the first interval back at 95% of `before_ops_per_s`: Some(0.0)
    /// when throughput never fell below it, None when it had not recovered by the next fault
    /// (or the end), or when no whole interval followed it.
    pub recovery_s: Option<f64>,
    /// Whole intervals between the fault and the next one (or the end).
    pub intervals_after: usize,
    /// Errors by kind from the fault until the next one (or the end).
    pub errors: BTreeMap<crate::stats::ErrorKind, u64>,
}

impl RunTimeline {
    /// The impact of each fault, in order.
    /// Faults that were never applied (due after the main phase ended) have none.
    pub fn fault_impacts(&self) -> Vec<FaultImpact> {
        let rel = |run_s: f64| run_s - self.offset_s;
        let end = self.intervals.last().map_or(0.0, |i| i.end_s);
        let events: Vec<&crate::result::fault::FaultEvent> =
            self.events.iter().filter(|e| e.applied()).collect();
        let mut out = Vec::new();
        for (i, e) in events.iter().enumerate() {
            let at = rel(e.started_s);
            let until = events.get(i + 1).map_or(end, |n| rel(n.started_s)).max(at);
            let before: Vec<f64> = self
                .intervals
                .iter()
                .filter(|iv| iv.end_s <= at + 1e-9 && iv.start_s >= at - 10.0 && !iv.drain)
                .map(|iv| iv.ops_per_s)
                .collect();
            let before_ops = (!before.is_empty())
                .then(|| before.iter().sum::<f64>() / before.len() as f64)
                .map(|b| self.target_rate_per_s.map_or(b, |t| b.min(t)));
            // Each interval belongs to the fault its midpoint follows: counted once.
            let last = i + 1 == events.len();
            let after: Vec<&IntervalRecord> = self
                .intervals
                .iter()
                .filter(|iv| {
                    let mid = (iv.start_s + iv.end_s) / 2.0;
                    mid >= at && (mid < until || last) && !iv.drain
                })
                .collect();
            let min_availability = after
                .iter()
                .filter_map(|iv| iv.availability())
                .fold(None, |m: Option<f64>, a| Some(m.map_or(a, |m| m.min(a))));
            // Intervals wholly after the fault; the one it fell in is partly before it.
            let whole: Vec<&&IntervalRecord> =
                after.iter().filter(|iv| iv.start_s >= at - 1e-9).collect();
            let recovery_s = before_ops.filter(|_| !whole.is_empty()).and_then(|b| {
                let level = 0.95 * b;
                if whole.iter().all(|iv| iv.ops_per_s >= level) {
                    return Some(0.0);
                }
                let dipped = whole.iter().position(|iv| iv.ops_per_s < level)?;
                whole[dipped..]
                    .iter()
                    .find(|iv| iv.ops_per_s >= level)
                    .map(|iv| iv.start_s - at)
            });
            let mut errors = BTreeMap::new();
            for iv in &after {
                crate::stats::add_errors(&mut errors, &iv.errors_by_kind);
            }
            out.push(FaultImpact {
                event: (*e).clone(),
                intervals_after: whole.len(),
                at_s: at,
                before_ops_per_s: before_ops,
                min_availability,
                recovery_s,
                errors,
            });
        }
        out
    }

    /// Successful ÷ attempted operations over the main phase.
    pub fn availability(&self) -> Option<f64> {
        let (ok, all) = self.intervals.iter().fold((0u64, 0u64), |(o, a), iv| {
            (o + iv.ok, a + iv.ok + iv.errors)
        });
        (all > 0).then(|| ok as f64 / all as f64)
    }

    /// The fault table of this run, when it had faults.
    pub fn fault_table(&self) -> Option<Table> {
        if self.events.is_empty() {
            return None;
        }
        let mut rows: Vec<Vec<String>> = self
            .fault_impacts()
            .into_iter()
            .map(|f| {
                let took = f
                    .event
                    .finished_s
                    .map(|e| format!("{:.1}", e - f.event.started_s));
                let errors: Vec<String> = f
                    .errors
                    .iter()
                    .map(|(k, n)| format!("{}={n}", k.name()))
                    .collect();
                vec![
                    format!("{:.1}", f.at_s),
                    f.event.fault.label(),
                    took.unwrap_or_else(|| "-".into()),
                    crate::format::cell(f.before_ops_per_s, 0),
                    crate::format::cell(f.min_availability.map(|a| a * 100.0), 2),
                    match (f.recovery_s, f.before_ops_per_s) {
                        (Some(s), _) => format!("{s:.0}"),
                        (None, Some(_)) if f.intervals_after > 0 => "not recovered".into(),
                        (None, _) => "-".into(),
                    },
                    if errors.is_empty() {
                        "none".into()
                    } else {
                        errors.join(", ")
                    },
                    f.event.error.clone().unwrap_or_else(|| "ok".into()),
                ]
            })
            .collect();
        // Faults never applied are listed, with nothing measured.
        for e in self.events.iter().filter(|e| !e.applied()) {
            let mut row = vec!["-".to_string(); 8];
            row[0] = format!("{:.1}", e.fault.at_s);
            row[1] = e.fault.label();
            row[7] = e.error.clone().unwrap_or_default();
            rows.push(row);
        }
        Some(Table {
            title: format!(
                "Faults — {} ({}), availability over the main phase {}%",
                self.env,
                self.path.display(),
                crate::format::cell(self.availability().map(|a| a * 100.0), 2)
            ),
            header: [
                "at (s)",
                "fault",
                "took (s)",
                "ops/s before",
                "min availability %",
                "recovered to 95% after (s)",
                "errors until next fault",
                "outcome",
            ]
            .map(String::from)
            .to_vec(),
            rows,
            text_columns: vec![1, 5, 6, 7],
        })
    }
}
