//! Cost beside the measured throughput, as every reference article ends: an environment that
//! names its deployment (`report --deployment ENV=INSTANCE,NODES[,DISK][,TERM]`) gets its
//! monthly cost from the price catalogue and its dollars per month for each 1,000 ops/s of
//! what it sustained there (a capacity verdict's highest passing throughput, else the best
//! closed-loop throughput test).

use std::str::FromStr;

use super::model::Report;
use crate::cost::{Catalog, CloudCluster, CostError, DiskSpec, Pricing};
use crate::cost::{cost_per_1k_ops_usd, price_cluster};
use crate::format::Table;

/// Where an environment's results would run.
#[derive(Debug, Clone, PartialEq)]
pub struct Deployment {
    pub env: String,
    pub instance: String,
    pub nodes: u32,
    pub disk: Option<DiskSpec>,
    pub pricing: Pricing,
}

impl FromStr for Deployment {
    type Err = crate::error::Invalid;

    /// `ENV=INSTANCE,NODES[,DISK][,TERM]`, e.g. `ec2=r5.2xlarge,3,gp3:4TB,1y`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| {
            crate::invalid!(
                "'{s}' is not a deployment: {why} (expected ENV=INSTANCE,NODES[,DISK][,TERM], e.g. ec2=r5.2xlarge,3,gp3:4TB,1y)"
            )
        };
        let (env, rest) = s.split_once('=').ok_or_else(|| bad("no '='"))?;
        crate::spec::probe::validate_env(env.trim()).map_err(|e| bad(&e))?;
        let parts: Vec<&str> = rest.split(',').map(str::trim).collect();
        let (instance, nodes) = match parts.as_slice() {
            [i, n, ..] if !i.is_empty() => (i.to_string(), n),
            _ => return Err(bad("an instance type and a node count are needed")),
        };
        let nodes: u32 = nodes
            .parse()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| bad("the node count must be a whole number from 1"))?;
        let mut disk = None;
        let mut pricing = Pricing::OnDemand;
        for p in &parts[2..] {
            if let Ok(t) = p.parse::<Pricing>() {
                pricing = t;
            } else {
                disk = Some(p.parse::<DiskSpec>().map_err(|e| bad(&e.to_string()))?);
            }
        }
        Ok(Deployment {
            env: env.trim().to_string(),
            instance,
            nodes,
            disk,
            pricing,
        })
    }
}

/// One environment's cost.
#[derive(Debug, Clone, PartialEq)]
pub struct CostRow {
    pub env: String,
    /// e.g. "3 × r5.2xlarge, gp3:4TB, on-demand".
    pub deployment: String,
    pub monthly_usd: f64,
    pub ops_per_s: Option<f64>,
    /// Where the throughput comes from, e.g. "capacity verdict".
    pub basis: String,
    pub per_1k_ops_usd: Option<f64>,
}

/// The throughput an environment sustained, and where it comes from.
fn sustained(report: &Report, env: &str) -> Option<(f64, &'static str)> {
    let capacity = report
        .capacity
        .iter()
        .filter(|c| c.env == env)
        .filter_map(|c| c.verdict.highest_passing_ops_per_s)
        .reduce(f64::max);
    if let Some(c) = capacity {
        return Some((c, "capacity verdict"));
    }
    report
        .groups
        .iter()
        .filter(|g| g.is_closed_loop())
        .flat_map(|g| g.envs.iter().filter(|e| e.env == env))
        .map(|e| e.mean_ops_per_s())
        .reduce(f64::max)
        .map(|t| (t, "throughput test"))
}

/// Prices every deployment against the report's results.
pub fn rows(
    report: &Report,
    deployments: &[Deployment],
    cat: &Catalog,
) -> Result<Vec<CostRow>, CostError> {
    deployments
        .iter()
        .map(|d| {
            let spec = CloudCluster {
                nodes: d.nodes,
                instance: d.instance.clone(),
                disk: d.disk.clone(),
                k8s: None,
                pricing: d.pricing,
            };
            let b = price_cluster(cat, &spec)?;
            let found = sustained(report, &d.env);
            let disk = d
                .disk
                .as_ref()
                .map(|x| format!(", {x}"))
                .unwrap_or_default();
            Ok(CostRow {
                env: d.env.clone(),
                deployment: format!("{} × {}{disk}, {}", d.nodes, d.instance, d.pricing),
                monthly_usd: b.total_monthly_usd,
                ops_per_s: found.map(|f| f.0),
                basis: found.map_or("no throughput result".into(), |f| f.1.into()),
                per_1k_ops_usd: found.and_then(|f| cost_per_1k_ops_usd(b.total_monthly_usd, f.0)),
            })
        })
        .collect()
}

/// The cost table, environments as columns.
pub fn table(rows: &[CostRow]) -> Option<Table> {
    if rows.is_empty() {
        return None;
    }
    let line = |label: &str, f: &dyn Fn(&CostRow) -> String| -> Vec<String> {
        std::iter::once(label.to_string())
            .chain(rows.iter().map(f))
            .collect()
    };
    Some(Table {
        title: "Cost (price catalogue × deployment; throughput measured)".into(),
        header: std::iter::once(String::new())
            .chain(rows.iter().map(|r| r.env.clone()))
            .collect(),
        rows: vec![
            line("deployment", &|r| r.deployment.clone()),
            line("$/month", &|r| crate::format::cell(Some(r.monthly_usd), 2)),
            line("throughput (ops/s)", &|r| {
                crate::format::cell(r.ops_per_s, 0)
            }),
            line("throughput from", &|r| r.basis.clone()),
            line("$ per 1,000 ops/s", &|r| {
                crate::format::cell(r.per_1k_ops_usd, 2)
            }),
        ],
        text_columns: (1..=rows.len()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deployments_parse_with_or_without_disk_and_term() {
        let d: Deployment = "ec2=r5.2xlarge,3,gp3:4TB,1y".parse().unwrap();
        assert_eq!(
            (d.env.as_str(), d.instance.as_str(), d.nodes),
            ("ec2", "r5.2xlarge", 3)
        );
        assert_eq!(d.pricing, Pricing::Reserved1y);
        assert_eq!(d.disk.unwrap().kind, "gp3");
        let d: Deployment = "laptop=i3.xlarge,1".parse().unwrap();
        assert_eq!((d.disk, d.pricing), (None, Pricing::OnDemand));
        for bad in [
            "ec2",
            "ec2=r5.2xlarge",
            "ec2=r5.2xlarge,0",
            "../x=r5,1",
            "ec2=r5,3,floppy",
        ] {
            let e = bad.parse::<Deployment>().unwrap_err();
            assert!(
                e.starts_with(&format!("'{bad}' is not a deployment")),
                "{e}"
            );
        }
    }
}
