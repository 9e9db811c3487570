//! Per-node capacities the planner sizes with: measured ones from capacity-search results
//! (`cqlbench capacity`), or the catalogue's assumed ones.
//!
//! A capacity search ran on a cluster whose instance type the result cannot know, so the user
//! names it: `--capacity INSTANCE[:NODES]=RESULT.json`. The node count comes from the search's
//! first step (a local cluster's spec) unless given. The capacity is the verdict's highest
//! passing step (its achieved throughput); per-node capacity is that ÷ nodes: throughput scales
//! linearly with the node count, as ref 004 observed up to hundreds of nodes.

use std::path::PathBuf;
use std::str::FromStr;

use serde::Serialize;

use crate::cost::measured::HardwareError;
use crate::cost::price::Origin;
use crate::cost::{CostError, Hardware};
use crate::format::thousands;
use crate::prices::Catalog;
use crate::prices::catalog::Instance;
use crate::result::ScalingResult;
use crate::result::capacity::CapacityResult;

/// The throughput one node of an instance type sustains.
#[derive(Debug, Clone, Serialize)]
pub struct Capacity {
    pub instance: String,
    pub ops_per_s_per_node: f64,
    /// The arithmetic, e.g. "45,000 ops/s / 3 nodes".
    pub how: String,
    pub origin: Origin,
    /// A measured capacity: the cluster's throughput and node count as measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured: Option<MeasuredOn>,
}

/// What a measured capacity was measured on.
#[derive(Debug, Clone, Serialize)]
pub struct MeasuredOn {
    /// The throughput of the whole measured cluster.
    pub ops_per_s: f64,
    /// Its nodes (0: not recorded, a cluster cqlbench did not start).
    pub nodes: u32,
    /// The hardware as the result records it; `None` when its run result cannot be read
    /// (`unknown` says why).
    pub hardware: Option<Hardware>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
    /// Warnings about the result itself, e.g. a node count given that contradicts it.
    pub warnings: Vec<String>,
}

impl MeasuredOn {
    pub(crate) fn new(
        ops_per_s: f64,
        nodes: u32,
        hardware: Result<Hardware, HardwareError>,
    ) -> MeasuredOn {
        let (hardware, unknown) = match hardware {
            Ok(h) => (Some(h), None),
            Err(e) => (None, Some(e.to_string())),
        };
        MeasuredOn {
            ops_per_s,
            nodes,
            hardware,
            unknown,
            warnings: Vec::new(),
        }
    }

    /// The hardware in one line, or why it is not known.
    pub fn describe(&self) -> String {
        match (&self.hardware, &self.unknown) {
            (Some(h), _) => h.describe(),
            (None, why) => format!(
                "not known: {}",
                why.as_deref().unwrap_or("the result records no run")
            ),
        }
    }

    /// Every warning for pricing this measurement as `inst`: the result's own, then how its
    /// hardware differs from the instance.
    pub fn warnings_against(&self, inst: &Instance) -> Vec<String> {
        let mut out = self.warnings.clone();
        match &self.hardware {
            Some(h) => out.extend(h.against(inst)),
            None => out.push(format!(
                "the measured hardware is not known, so it cannot be compared with {}",
                inst.name
            )),
        }
        out
    }

    /// [`MeasuredOn::warnings_against`], and a warning when the `nodes` priced are not the
    /// nodes measured: the cost of one cluster divided by what another sustained.
    pub fn warnings_against_cluster(&self, inst: &Instance, nodes: u32) -> Vec<String> {
        let mut out = self.warnings_against(inst);
        if self.nodes > 0 && self.nodes != nodes {
            out.insert(
                0,
                format!(
                    "{} priced, but the throughput was measured on {}: $ per 1,000 ops/s divides the cost of {} by what {} sustained",
                    nodes_text(nodes),
                    nodes_text(self.nodes),
                    nodes_text(nodes),
                    nodes_text(self.nodes)
                ),
            );
        }
        out
    }
}

/// `INSTANCE[:NODES]=RESULT.json`: a capacity-search result and what it ran on.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityArg {
    pub instance: String,
    pub nodes: Option<u32>,
    pub path: PathBuf,
}

impl FromStr for CapacityArg {
    type Err = CostError;

    fn from_str(s: &str) -> Result<Self, CostError> {
        let bad = |problem: &str| CostError::InputFile {
            file: s.to_string(),
            problem: problem.to_string(),
        };
        let (what, path) = s.split_once('=').ok_or_else(|| {
            bad("expected INSTANCE[:NODES]=CAPACITY-RESULT.json, e.g. i3.2xlarge:3=cap.json")
        })?;
        let (instance, nodes) = match what.split_once(':') {
            Some((i, n)) => (
                i,
                Some(
                    n.trim()
                        .parse::<u32>()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or_else(|| bad("NODES must be a positive whole number"))?,
                ),
            ),
            None => (what, None),
        };
        if instance.trim().is_empty() || path.trim().is_empty() {
            return Err(bad(
                "expected INSTANCE[:NODES]=CAPACITY-RESULT.json, e.g. i3.2xlarge:3=cap.json",
            ));
        }
        Ok(CapacityArg {
            instance: instance.trim().to_string(),
            nodes,
            path: PathBuf::from(path.trim()),
        })
    }
}

impl Capacity {
    /// The capacity a search found, on `nodes` nodes of `instance`; `file` names it.
    pub fn from_result(
        r: &CapacityResult,
        instance: &str,
        nodes: u32,
        file: &str,
    ) -> Result<Capacity, CostError> {
        let bad = |problem: String| CostError::InputFile {
            file: file.to_string(),
            problem,
        };
        if nodes == 0 {
            return Err(bad("the node count must be at least 1".into()));
        }
        let v = r
            .verdict
            .as_ref()
            .ok_or_else(|| bad("the search has no verdict (no step completed)".into()))?;
        let ops = v
            .highest_passing_ops_per_s
            .filter(|o| *o > 0.0 && o.is_finite())
            .ok_or_else(|| bad("no step of the search passed: it measured no capacity".into()))?;
        let mut note = format!("{} on {}", r.workload.kind, r.env);
        if !v.found_failure() {
            note.push_str(", a lower bound: no step failed");
        }
        if !v.unverified.is_empty() {
            note.push_str(&format!(", {} unverified criteria", v.unverified.len()));
        }
        Ok(Capacity {
            instance: instance.to_string(),
            ops_per_s_per_node: ops / f64::from(nodes),
            how: format!(
                "{} ops/s / {} (linear scaling, ref 004)",
                thousands(ops),
                nodes_text(nodes)
            ),
            origin: Origin::Measured(format!("{file} ({note})")),
            measured: Some(MeasuredOn::new(
                ops,
                nodes,
                Err(HardwareError::NotRead("the search's run results")),
            )),
        })
    }

    /// The capacity per node of a scaling run's largest size that has one: the size nearest
    /// the clusters planned, whose per-node capacity carries what scaling up to it cost.
    pub fn from_scaling(
        s: &ScalingResult,
        instance: &str,
        file: &str,
    ) -> Result<Capacity, CostError> {
        let bad = |problem: String| CostError::InputFile {
            file: file.to_string(),
            problem,
        };
        let p = s.largest_measured().ok_or_else(|| {
            bad("no size of the scaling run passed a step: it measured no capacity".into())
        })?;
        let (Some(capacity), Some(per)) = (p.capacity_ops_per_s, p.ops_per_s_per_node) else {
            return Err(bad("no size of the scaling run measured a capacity".into()));
        };
        let sizes: Vec<String> = s
            .points
            .iter()
            .map(|q| match q.efficiency {
                Some(e) => format!("{} nodes {:.0}%", q.nodes, e * 100.0),
                None => format!("{} nodes -", q.nodes),
            })
            .collect();
        let mut note = format!("{} on {}", s.workload, s.env);
        if p.lower_bound {
            note.push_str(", a lower bound: no step failed");
        }
        if s.status != crate::result::capacity::CapacityStatus::Completed {
            note.push_str(", the run did not complete");
        }
        Ok(Capacity {
            instance: instance.to_string(),
            ops_per_s_per_node: per,
            how: format!(
                "{} ops/s / {} nodes (scaling efficiency {})",
                thousands(capacity),
                p.nodes,
                sizes.join(", ")
            ),
            origin: Origin::Measured(format!("{file} ({note})")),
            measured: Some(MeasuredOn::new(
                capacity,
                p.nodes,
                Err(HardwareError::NotRead("the scaling run's results")),
            )),
        })
    }

    /// Reads the capacity-search (or scaling) result an argument names, and the hardware its
    /// runs record. The node count comes from the cluster the search ran on; a count given in
    /// the argument is used only when the result records none, and a count that contradicts
    /// the recorded one is a warning naming both.
    pub fn read(arg: &CapacityArg) -> Result<Capacity, CostError> {
        let file = arg.path.display().to_string();
        let bad = |problem: String| CostError::InputFile {
            file: file.clone(),
            problem,
        };
        let r = match crate::result::read(&arg.path)? {
            crate::result::ResultFile::Capacity(r) => r,
            crate::result::ResultFile::Scaling(s) => {
                if arg.nodes.is_some() {
                    return Err(bad(format!(
                        "a scaling result names its cluster sizes: give {}={file}",
                        arg.instance
                    )));
                }
                let mut c = Capacity::from_scaling(&s, &arg.instance, &file)?;
                if let Some(m) = &mut c.measured {
                    *m = MeasuredOn::new(m.ops_per_s, m.nodes, Hardware::of_scaling(&s, &arg.path));
                }
                return Ok(c);
            }
            other => {
                return Err(bad(format!(
                    "a {} result, not a capacity-search or scaling result",
                    other.kind().name()
                )));
            }
        };
        let hardware = Hardware::of_capacity(&r, &arg.path);
        let recorded = hardware.as_ref().ok().and_then(|h| h.nodes);
        let mut warnings = Vec::new();
        let nodes = match (arg.nodes, recorded) {
            (Some(given), Some(rec)) if given != rec => {
                warnings.push(format!(
                    "{}:{given}={file} says {}, but the result records {}: the capacity per node uses the recorded {rec}",
                    arg.instance,
                    nodes_text(given),
                    nodes_text(rec)
                ));
                rec
            }
            (_, Some(rec)) => rec,
            (Some(given), None) => given,
            (None, None) => {
                return Err(bad(format!(
                    "the search's cluster size is not known (not a local cluster): give it as {}:NODES={file}",
                    arg.instance
                )));
            }
        };
        let mut c = Capacity::from_result(&r, &arg.instance, nodes, &file)?;
        if let Some(m) = &mut c.measured {
            *m = MeasuredOn::new(m.ops_per_s, nodes, hardware);
            m.warnings = warnings;
        }
        Ok(c)
    }
}

/// `1 node`, `3 nodes`.
pub(super) fn nodes_text(n: u32) -> String {
    match n {
        1 => "1 node".into(),
        _ => format!("{n} nodes"),
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
                measured: None,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prices::default_catalog;

    #[test]
    fn a_capacity_result_gives_ops_per_node() {
        let mut r = crate::result::fixture::capacity("lab", &[1_000.0, 2_000.0, 3_000.0], 2);
        let achieved = r
            .verdict
            .as_ref()
            .unwrap()
            .highest_passing_ops_per_s
            .unwrap();
        let c = Capacity::from_result(&r, "i3.2xlarge", 3, "cap.json").unwrap();
        assert_eq!(c.ops_per_s_per_node, achieved / 3.0);
        let Origin::Measured(how) = &c.origin else {
            panic!("{:?}", c.origin)
        };
        assert!(
            how.starts_with("cap.json (") && how.contains("on lab"),
            "{how}"
        );
        r.verdict.as_mut().unwrap().highest_passing_ops_per_s = None;
        let e = Capacity::from_result(&r, "i3.2xlarge", 3, "c.json").unwrap_err();
        assert_eq!(
            e.to_string(),
            "c.json: no step of the search passed: it measured no capacity"
        );
    }

    #[test]
    fn capacity_arguments_name_the_instance_and_maybe_the_nodes() {
        let a: CapacityArg = "i3.2xlarge:3=out/cap.json".parse().unwrap();
        assert_eq!(
            a,
            CapacityArg {
                instance: "i3.2xlarge".into(),
                nodes: Some(3),
                path: "out/cap.json".into()
            }
        );
        let a: CapacityArg = "r5.xlarge=cap.json".parse().unwrap();
        assert_eq!(a.nodes, None);
        for bad in ["cap.json", "i3:0=cap.json", "i3:x=c.json", "=c.json", "i3="] {
            assert!(bad.parse::<CapacityArg>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_scaling_run_gives_its_largest_sizes_capacity_per_node() {
        let mut s = ScalingResult::new("lab", "stress", &[1, 2, 3]);
        for (n, ops) in [(1, 1_000.0), (2, 1_800.0), (3, 2_400.0)] {
            let r = crate::result::fixture::capacity_at("lab", ops);
            s.record(n, &format!("n{n}.json"), &r);
        }
        let c = Capacity::from_scaling(&s, "i3.2xlarge", "sc.json").unwrap();
        assert_eq!(c.ops_per_s_per_node, 800.0);
        assert!(
            c.how.contains("2,400 ops/s / 3 nodes")
                && c.how.contains("1 nodes 100%, 2 nodes 90%, 3 nodes 80%"),
            "{}",
            c.how
        );
        s.points.clear();
        let e = Capacity::from_scaling(&s, "i3.2xlarge", "sc.json").unwrap_err();
        assert!(e.to_string().contains("measured no capacity"), "{e}");
    }

    #[test]
    fn measured_replaces_assumed() {
        let cat = default_catalog().unwrap();
        let r = crate::result::fixture::capacity("lab", &[1_000.0, 2_000.0], 2);
        let measured = |instance: &str| Capacity::from_result(&r, instance, 3, "cap.json").unwrap();
        let caps = capacities(&cat, &[measured("i3.2xlarge")]).unwrap();
        let i3: Vec<&Capacity> = caps.iter().filter(|c| c.instance == "i3.2xlarge").collect();
        assert_eq!(i3.len(), 1);
        assert!(matches!(i3[0].origin, Origin::Measured(_)));
        assert!(caps.iter().any(|c| matches!(c.origin, Origin::Assumed(_))));
        assert!(capacities(&cat, &[measured("zz.huge")]).is_err());
    }
}
