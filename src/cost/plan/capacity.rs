//! Per-node capacities the planner sizes with: measured ones from capacity files, or the
//! catalogue's assumed ones.
//!
//! A capacity file is a small JSON document (the capacity scenario's result format does not
//! exist yet; see docs/cost.md):
//!
//! ```json
//! {"instance": "i3.2xlarge", "nodes": 3, "ops_per_s": 45000, "note": "tabular 50/50, p99 < 10 ms"}
//! ```
//!
//! Per-node capacity is `ops_per_s / nodes`: throughput scales linearly with the node count, as
//! ref 004 observed up to hundreds of nodes.

use serde::Serialize;
use serde_json::Value;

use crate::cost::price::Origin;
use crate::cost::units::thousands;
use crate::cost::{Catalog, CostError};

/// The throughput one node of an instance type sustains.
#[derive(Debug, Clone, Serialize)]
pub struct Capacity {
    pub instance: String,
    pub ops_per_s_per_node: f64,
    /// The arithmetic, e.g. "45,000 ops/s / 3 nodes".
    pub how: String,
    pub origin: Origin,
}

impl Capacity {
    /// Reads a capacity file's JSON; `file` names it in errors and in the output.
    pub fn from_json(doc: &Value, file: &str) -> Result<Capacity, CostError> {
        let bad = |problem: &str| CostError::InputFile {
            file: file.to_string(),
            problem: problem.to_string(),
        };
        let obj = doc
            .as_object()
            .ok_or_else(|| bad("expected an object {\"instance\", \"nodes\", \"ops_per_s\"}"))?;
        let instance = obj
            .get("instance")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("field \"instance\": expected an instance name"))?;
        let nodes = obj
            .get("nodes")
            .and_then(Value::as_u64)
            .filter(|n| *n > 0)
            .ok_or_else(|| bad("field \"nodes\": expected a positive integer"))?;
        let ops = obj
            .get("ops_per_s")
            .and_then(Value::as_f64)
            .filter(|o| *o > 0.0 && o.is_finite())
            .ok_or_else(|| bad("field \"ops_per_s\": expected a positive number"))?;
        let note = obj.get("note").and_then(Value::as_str);
        Ok(Capacity {
            instance: instance.to_string(),
            ops_per_s_per_node: ops / nodes as f64,
            how: format!(
                "{} ops/s / {nodes} nodes (linear scaling, ref 004)",
                thousands(ops)
            ),
            origin: Origin::Measured(match note {
                Some(n) => format!("{file} ({n})"),
                None => file.to_string(),
            }),
        })
    }
}

/// The capacities to plan with: every measured one, then the catalogue's assumed capacity of
/// each instance that has no measured one.
pub fn capacities(cat: &Catalog, measured: &[Capacity]) -> Result<Vec<Capacity>, CostError> {
    for m in measured {
        cat.instance(&m.instance)?;
    }
    let mut out = measured.to_vec();
    for a in &cat.capacities {
        if !measured.iter().any(|m| m.instance == a.instance) {
            out.push(Capacity {
                instance: a.instance.clone(),
                ops_per_s_per_node: a.ops_per_s_per_node,
                how: match &a.note {
                    Some(n) => format!("{n} = {} ops/s per node", thousands(a.ops_per_s_per_node)),
                    None => format!("{} ops/s per node", thousands(a.ops_per_s_per_node)),
                },
                origin: Origin::Assumed(format!(
                    "catalogue capacity of {} ({}, {})",
                    a.instance, a.source.source, a.source.date
                )),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::default_catalog;

    #[test]
    fn a_capacity_file_gives_ops_per_node() {
        let doc = serde_json::json!({"instance": "i3.2xlarge", "nodes": 3, "ops_per_s": 45000});
        let c = Capacity::from_json(&doc, "cap.json").unwrap();
        // 45,000 ops/s / 3 nodes = 15,000 ops/s per node
        assert_eq!(c.ops_per_s_per_node, 15000.0);
        assert_eq!(c.origin, Origin::Measured("cap.json".into()));
        let e = Capacity::from_json(
            &serde_json::json!({"instance": "x", "nodes": 0, "ops_per_s": 1}),
            "c.json",
        );
        assert_eq!(
            e.unwrap_err().to_string(),
            "c.json: field \"nodes\": expected a positive integer"
        );
    }

    #[test]
    fn measured_replaces_assumed() {
        let cat = default_catalog().unwrap();
        let doc = serde_json::json!({"instance": "i3.2xlarge", "nodes": 3, "ops_per_s": 45000});
        let caps = capacities(&cat, &[Capacity::from_json(&doc, "cap.json").unwrap()]).unwrap();
        let i3: Vec<&Capacity> = caps.iter().filter(|c| c.instance == "i3.2xlarge").collect();
        assert_eq!(i3.len(), 1);
        assert!(matches!(i3[0].origin, Origin::Measured(_)));
        assert!(caps.iter().any(|c| matches!(c.origin, Origin::Assumed(_))));
        let unknown = serde_json::json!({"instance": "zz.huge", "nodes": 3, "ops_per_s": 1});
        assert!(capacities(&cat, &[Capacity::from_json(&unknown, "u.json").unwrap()]).is_err());
    }
}
