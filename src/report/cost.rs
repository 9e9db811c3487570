//! Cost beside the measured throughput, as every reference article ends: an environment that
//! names its deployment (`report --deployment ENV=INSTANCE,NODES[,DISK][,k8s:SERVICE][,TERM]`)
//! gets its monthly cost from the price catalogue (with the managed Kubernetes fee, as ref 000's
//! cost table has it) and its dollars per month for each 1,000 ops/s of what it MEASURED there:
//! the best of its capacity verdicts (each a search's highest passing step, achieved), else the
//! best of its closed-loop throughput tests — the highest, as `{NAME.ops}` references in a
//! scenario take the best of a step's runs. Beside the instance priced stands the hardware the
//! throughput was measured on, and what differs is a note.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use super::model::Report;
use super::model::summary::RunLoad;
use crate::cost::plan::MeasuredOn;
use crate::cost::{CloudCluster, CostError, Hardware};
use crate::cost::{cost_per_1k_ops_usd, price_cluster};
use crate::format::Table;
use crate::prices::{Catalog, DiskSpec, Pricing};

/// Where an environment's results would run.
#[derive(Debug, Clone, PartialEq)]
pub struct Deployment {
    pub env: String,
    pub instance: String,
    pub nodes: u32,
    pub disk: Option<DiskSpec>,
    /// The managed Kubernetes service whose cluster fee to add (`k8s:eks`).
    pub k8s: Option<String>,
    pub pricing: Pricing,
}

impl FromStr for Deployment {
    type Err = crate::error::Invalid;

    /// `ENV=INSTANCE,NODES[,DISK][,k8s:SERVICE][,TERM]`, e.g. `eks=r5.2xlarge,3,gp2:4TB,k8s:eks,1y`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| {
            crate::invalid!(
                "'{s}' is not a deployment: {why} (expected ENV=INSTANCE,NODES[,DISK][,k8s:SERVICE][,TERM], e.g. eks=r5.2xlarge,3,gp2:4TB,k8s:eks,1y)"
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
        let mut k8s = None;
        let mut pricing = Pricing::OnDemand;
        for p in &parts[2..] {
            if let Some(service) = p.strip_prefix("k8s:") {
                let service = service.trim();
                if service.is_empty() {
                    return Err(bad("k8s: needs a managed Kubernetes service, e.g. k8s:eks"));
                }
                if k8s.replace(service.to_string()).is_some() {
                    return Err(bad("k8s: is given twice"));
                }
            } else if let Ok(t) = p.parse::<Pricing>() {
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
            k8s,
            pricing,
        })
    }
}

/// One environment's cost.
#[derive(Debug, Clone, PartialEq)]
pub struct CostRow {
    pub env: String,
    /// e.g. "3 × r5.2xlarge, gp3:4TB, k8s:eks, on-demand".
    pub deployment: String,
    /// Its nodes (instances).
    pub nodes: u32,
    /// The instance priced, e.g. "r5.2xlarge: 8 vCPU, 64 GB RAM".
    pub instance: String,
    /// Total $/month: instances, disks and the managed Kubernetes fee.
    pub monthly_usd: f64,
    /// The managed Kubernetes service and its fee, when the deployment names one.
    pub k8s: Option<String>,
    pub k8s_fee_monthly_usd: Option<f64>,
    /// The best measured throughput (none when the environment has no throughput result).
    pub ops_per_s: Option<f64>,
    /// Where the throughput comes from, e.g. "capacity verdict" or "throughput test (best of 3)".
    pub basis: String,
    /// Monthly cost ÷ the measured throughput × 1,000.
    pub per_1k_ops_usd: Option<f64>,
    /// The hardware the throughput was measured on, in a few words, and in full.
    pub measured_on: Option<String>,
    pub measured_detail: Option<String>,
    /// What differs between the measured hardware and the deployment priced.
    pub warnings: Vec<String>,
}

/// The best throughput an environment measured: the value, where it comes from, and the
/// result file it was measured in (a capacity search's, or a run's).
struct Sustained {
    ops_per_s: f64,
    basis: String,
    source: Source,
}

enum Source {
    Capacity(PathBuf),
    Run(PathBuf),
}

fn best_of(kind: &str, n: usize) -> String {
    match n {
        1 => kind.to_string(),
        _ => format!("{kind} (best of {n})"),
    }
}

/// The throughput an environment sustained: its best capacity verdict, else its best
/// closed-loop run.
fn sustained(report: &Report, env: &str) -> Option<Sustained> {
    let verdicts: Vec<(f64, &Path)> = report
        .capacity
        .iter()
        .filter(|c| c.env == env)
        .filter_map(|c| Some((c.verdict.highest_passing_ops_per_s?, c.path.as_path())))
        .collect();
    if let Some((ops, path)) = verdicts.iter().copied().max_by(|a, b| a.0.total_cmp(&b.0)) {
        return Some(Sustained {
            ops_per_s: ops,
            basis: best_of("capacity verdict", verdicts.len()),
            source: Source::Capacity(path.to_path_buf()),
        });
    }
    let runs: Vec<(f64, &Path)> = report
        .runs
        .iter()
        .filter(|r| r.env == env && matches!(r.load, RunLoad::Closed { .. }))
        .map(|r| (r.ops_per_s, r.path.as_path()))
        .collect();
    let (ops, path) = runs.iter().copied().max_by(|a, b| a.0.total_cmp(&b.0))?;
    Some(Sustained {
        ops_per_s: ops,
        basis: best_of("throughput test", runs.len()),
        source: Source::Run(path.to_path_buf()),
    })
}

/// Every environment the report's results name, in order of appearance.
fn environments(report: &Report) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let all = report
        .runs
        .iter()
        .map(|r| r.env.as_str())
        .chain(
            report
                .groups
                .iter()
                .flat_map(|g| g.envs.iter().map(|e| e.env.as_str())),
        )
        .chain(report.capacity.iter().map(|c| c.env.as_str()))
        .chain(report.probes.iter().map(|p| p.env.as_str()))
        .chain(report.scaling.iter().map(|s| s.env.as_str()));
    for e in all {
        if !out.contains(&e) {
            out.push(e);
        }
    }
    out
}

/// Prices every deployment against the report's results. A deployment of an environment that
/// none of the results names is refused, listing those they do name.
pub fn rows(
    report: &Report,
    deployments: &[Deployment],
    cat: &Catalog,
) -> Result<Vec<CostRow>, CostError> {
    let known = environments(report);
    deployments
        .iter()
        .map(|d| {
            if !known.contains(&d.env.as_str()) {
                return Err(CostError::UnknownEnvironment {
                    env: d.env.clone(),
                    known: if known.is_empty() {
                        "none".into()
                    } else {
                        known.join(", ")
                    },
                });
            }
            row(report, d, cat)
        })
        .collect()
}

fn row(report: &Report, d: &Deployment, cat: &Catalog) -> Result<CostRow, CostError> {
    let spec = CloudCluster {
        nodes: d.nodes,
        instance: d.instance.clone(),
        disk: d.disk.clone(),
        k8s: d.k8s.clone(),
        pricing: d.pricing,
    };
    let b = price_cluster(cat, &spec)?;
    let inst = cat.instance(&d.instance)?;
    let found = sustained(report, &d.env);
    let disk = d
        .disk
        .as_ref()
        .map(|x| format!(", {x}"))
        .unwrap_or_default();
    let k8s = d
        .k8s
        .as_ref()
        .map(|k| format!(", k8s:{k}"))
        .unwrap_or_default();
    let measured = found.as_ref().map(|f| {
        let hardware = match &f.source {
            Source::Capacity(p) => Hardware::read_capacity(p),
            Source::Run(p) => Hardware::read_run(p),
        };
        let nodes = hardware.as_ref().ok().and_then(|h| h.nodes).unwrap_or(0);
        MeasuredOn::new(f.ops_per_s, nodes, hardware)
    });
    Ok(CostRow {
        env: d.env.clone(),
        deployment: format!("{} × {}{disk}{k8s}, {}", d.nodes, d.instance, d.pricing),
        nodes: d.nodes,
        instance: format!(
            "{}: {} vCPU, {} GB RAM",
            inst.name,
            inst.vcpus,
            crate::format::thousands(inst.ram_gb)
        ),
        monthly_usd: b.total_monthly_usd,
        k8s: d.k8s.clone(),
        k8s_fee_monthly_usd: d.k8s.as_ref().map(|_| b.k8s_fee_monthly_usd),
        ops_per_s: found.as_ref().map(|f| f.ops_per_s),
        basis: found
            .as_ref()
            .map_or("no throughput result".into(), |f| f.basis.clone()),
        per_1k_ops_usd: found
            .as_ref()
            .and_then(|f| cost_per_1k_ops_usd(b.total_monthly_usd, f.ops_per_s)),
        measured_on: measured.as_ref().map(|m| match &m.hardware {
            Some(h) => h.short(),
            None => "not known".into(),
        }),
        measured_detail: measured.as_ref().map(|m| match &m.hardware {
            Some(h) => format!("{} ({})", h.describe(), h.run),
            None => m.describe(),
        }),
        warnings: measured
            .as_ref()
            .map(|m| m.warnings_against_cluster(inst, d.nodes))
            .unwrap_or_default(),
    })
}

/// Prices the deployments into `report`: its cost table, and a note per environment with the
/// hardware its throughput was measured on and each way that differs from what is priced.
pub fn price(
    report: &mut Report,
    deployments: &[Deployment],
    cat: &Catalog,
) -> Result<(), CostError> {
    let rows = rows(report, deployments, cat)?;
    for r in &rows {
        if let Some(m) = &r.measured_detail {
            report.notes.push(format!(
                "{}: cost priced as {}; throughput measured on {m}",
                r.env, r.instance
            ));
        }
        for w in &r.warnings {
            report.notes.push(format!("{}: warning: {w}", r.env));
        }
    }
    report.costs = rows;
    Ok(())
}

/// The cost table, environments as columns; a managed Kubernetes fee row when a deployment
/// names one (ref 000's "k8s cluster cost" column).
pub fn table(rows: &[CostRow]) -> Option<Table> {
    if rows.is_empty() {
        return None;
    }
    let line = |label: &str, f: &dyn Fn(&CostRow) -> String| -> Vec<String> {
        std::iter::once(label.to_string())
            .chain(rows.iter().map(f))
            .collect()
    };
    let mut table = vec![
        line("deployment", &|r| r.deployment.clone()),
        line("instance priced", &|r| r.instance.clone()),
        line("measured on", &|r| {
            r.measured_on.clone().unwrap_or_else(|| "-".into())
        }),
        line("$/month", &|r| crate::format::cell(Some(r.monthly_usd), 2)),
    ];
    if rows.iter().any(|r| r.k8s.is_some()) {
        table.push(line(
            "k8s fee ($/month)",
            &|r| match (&r.k8s, r.k8s_fee_monthly_usd) {
                (Some(k), Some(fee)) => format!("{} {k}", crate::format::cell(Some(fee), 2)),
                _ => "-".into(),
            },
        ));
    }
    table.extend([
        line("throughput (ops/s)", &|r| {
            crate::format::cell(r.ops_per_s, 0)
        }),
        line("throughput from", &|r| r.basis.clone()),
        line("$ per 1,000 ops/s (measured)", &|r| {
            crate::format::cell(r.per_1k_ops_usd, 2)
        }),
    ]);
    Some(Table {
        title: "Cost (price catalogue × deployment; $/month includes the k8s fee; $ per 1,000 ops/s of the best measured throughput)".into(),
        header: std::iter::once(String::new())
            .chain(rows.iter().map(|r| r.env.clone()))
            .collect(),
        rows: table,
        text_columns: (1..=rows.len()).collect(),
    })
}

/// The environments with a measured throughput and its cost, cheapest $ per 1,000 ops/s first
/// (ties: the higher throughput first), with that throughput and cost; none for fewer than two.
fn ranked(rows: &[CostRow]) -> Vec<(&CostRow, f64, f64)> {
    let mut ranked: Vec<(&CostRow, f64, f64)> = rows
        .iter()
        .filter_map(|r| Some((r, r.ops_per_s?, r.per_1k_ops_usd?)))
        .collect();
    if ranked.len() < 2 {
        return vec![];
    }
    ranked.sort_by(|a, b| a.2.total_cmp(&b.2).then(b.1.total_cmp(&a.1)));
    ranked
}

/// Environment `env`'s place in the ranking (1: cheapest), as the ranking table gives it.
pub fn rank_of(rows: &[CostRow], env: &str) -> Option<usize> {
    ranked(rows)
        .iter()
        .position(|(r, _, _)| r.env == env)
        .map(|i| i + 1)
}

/// Reference 001's table: the environments with a measured throughput ranked by what each
/// 1,000 ops/s of it costs (cheapest first), with the instance, the nodes and the throughput per
/// node; None for fewer than two.
pub fn ranking_table(rows: &[CostRow]) -> Option<Table> {
    let ranked = ranked(rows);
    if ranked.is_empty() {
        return None;
    }
    let cell = |v: f64, d: usize| crate::format::cell(Some(v), d);
    Some(Table {
        title: "Ranking by cost per sustained throughput (cheapest $ per 1,000 ops/s first)".into(),
        header: [
            "rank",
            "env",
            "instance priced",
            "nodes",
            "sustained ops/s",
            "ops/s per node",
            "from",
            "$/month",
            "$ per 1,000 ops/s",
        ]
        .map(String::from)
        .to_vec(),
        rows: ranked
            .iter()
            .enumerate()
            .map(|(i, (r, ops, per_1k))| {
                vec![
                    (i + 1).to_string(),
                    r.env.clone(),
                    r.instance.clone(),
                    r.nodes.to_string(),
                    cell(*ops, 0),
                    cell(ops / f64::from(r.nodes.max(1)), 0),
                    r.basis.clone(),
                    cell(r.monthly_usd, 2),
                    cell(*per_1k, 2),
                ]
            })
            .collect(),
        text_columns: vec![1, 2, 6],
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
        assert_eq!(d.k8s, None);
        let d: Deployment = "eks=r5.2xlarge,3,k8s:eks,gp2:4TB,3y".parse().unwrap();
        assert_eq!(d.k8s.as_deref(), Some("eks"));
        assert_eq!(
            (d.disk.unwrap().kind.as_str(), d.pricing),
            ("gp2", Pricing::Reserved3y)
        );
        let d: Deployment = "laptop=i3.xlarge,1".parse().unwrap();
        assert_eq!((d.disk, d.pricing), (None, Pricing::OnDemand));
        for bad in [
            "eks=r5.2xlarge,3,k8s:",
            "eks=r5.2xlarge,3,k8s:eks,k8s:gke",
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

    use crate::cost::fixture::{Shape, throughput_run, write_capacity};
    use crate::report::Input;

    /// A laptop environment with three closed-loop runs (1,000, 3,000 and 2,000 ops/s) written
    /// to `dir`, and a capacity search of another on a 3-node cluster.
    fn report(dir: &Path) -> Report {
        let mut inputs = Vec::new();
        for (i, ops) in [1_000.0, 3_000.0, 2_000.0].into_iter().enumerate() {
            let r = throughput_run("laptop", ops, &Shape::laptop());
            let path = dir.join(format!("run{i}.json"));
            r.write(&path).unwrap();
            inputs.push(Input::Run { path, result: r });
        }
        let three = Shape {
            nodes: 3,
            host_cpus: 24,
            host_ram_gib: 192,
            cpus_per_node: Some(8),
            node_memory_mib: Some(64 * 1024),
        };
        let path = write_capacity(dir, "cap", "lab", 30_000.0, &three).unwrap();
        let result = crate::result::read_capacity(&path).unwrap();
        inputs.push(Input::Capacity { path, result });
        Report::build(&inputs).unwrap()
    }

    #[test]
    fn the_best_of_repeated_runs_is_priced_with_its_hardware_and_the_k8s_fee() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = report(dir.path());
        let cat = crate::prices::default_catalog().unwrap();
        let d: Vec<Deployment> = ["laptop=r5.2xlarge,3,gp2:4TB,k8s:eks", "lab=r5.2xlarge,3"]
            .iter()
            .map(|d| d.parse().unwrap())
            .collect();
        price(&mut r, &d, &cat).unwrap();
        let laptop = &r.costs[0];
        // The best of three runs, as `{NAME.ops}` references take, not their mean (2,000).
        let best = laptop.ops_per_s.unwrap();
        assert!((best - 3_000.0).abs() < 1.0, "{best}");
        assert_eq!(laptop.basis, "throughput test (best of 3)");
        assert_eq!(laptop.k8s_fee_monthly_usd, Some(73.0));
        let priced = price_cluster(
            &cat,
            &CloudCluster {
                nodes: 3,
                instance: "r5.2xlarge".into(),
                disk: Some("gp2:4TB".parse().unwrap()),
                k8s: Some("eks".into()),
                pricing: Pricing::OnDemand,
            },
        )
        .unwrap();
        assert_eq!(laptop.monthly_usd, priced.total_monthly_usd);
        assert_eq!(
            laptop.per_1k_ops_usd,
            cost_per_1k_ops_usd(priced.total_monthly_usd, best)
        );
        assert_eq!(
            laptop.measured_on.as_deref(),
            Some("1 node, 2 CPUs 8.0 GB each, client on host")
        );
        assert!(
            laptop.warnings[0]
                .starts_with("3 nodes priced, but the throughput was measured on 1 node"),
            "{:?}",
            laptop.warnings
        );
        assert!(
            laptop.warnings[1].starts_with("measured on hardware unlike r5.2xlarge"),
            "{:?}",
            laptop.warnings
        );
        // The capacity search on three 8-CPU, 64 GB nodes: only the shared client is a warning.
        let lab = &r.costs[1];
        assert_eq!(
            (lab.basis.as_str(), lab.k8s_fee_monthly_usd),
            ("capacity verdict", None)
        );
        assert_eq!(lab.warnings.len(), 1, "{:?}", lab.warnings);
        assert!(r.notes.iter().any(|n| n.starts_with("laptop: cost priced as r5.2xlarge: 8 vCPU, 64 GB RAM; throughput measured on 1 node on one host of 2 CPUs")), "{:?}", r.notes);
        assert!(
            r.notes
                .iter()
                .any(|n| n.starts_with("laptop: warning: measured on hardware unlike"))
        );
        // The table: a k8s fee row (ref 000's "k8s cluster cost"), "-" where none is deployed.
        let t = table(&r.costs).unwrap();
        let fee = t
            .rows
            .iter()
            .find(|row| row[0] == "k8s fee ($/month)")
            .unwrap();
        assert_eq!(fee[1..], ["73.00 eks".to_string(), "-".to_string()]);
        let measured = t.rows.iter().find(|row| row[0] == "measured on").unwrap();
        assert_eq!(
            measured[2],
            "3 nodes, 8 CPUs 64 GB each, client on host, emulated"
        );
        // Without a k8s deployment, no fee row.
        let t = table(&r.costs[1..]).unwrap();
        assert!(t.rows.iter().all(|row| !row[0].starts_with("k8s")));
        // CSV: the fee and the hardware in their columns.
        let out = crate::report::csv::render(&r);
        let row = out.lines().find(|l| l.contains(",laptop,")).unwrap();
        assert!(
            row.contains(",73,")
                && row.ends_with(",\"1 node, 2 CPUs 8.0 GB each, client on host\""),
            "{row}"
        );
        // The rank column holds the ranking table's place, read back by a CSV reader.
        let mut csv = ::csv::Reader::from_reader(out.as_bytes());
        let col = csv.headers().unwrap().iter().position(|h| h == "cost_rank");
        let laptop = csv
            .records()
            .map(Result::unwrap)
            .find(|r| r.get(1) == Some("laptop"))
            .unwrap();
        let expected = rank_of(&r.costs, "laptop").map_or(String::new(), |n| n.to_string());
        assert_eq!(laptop.get(col.unwrap()), Some(expected.as_str()));
        assert!(rank_of(&r.costs, "laptop").is_some(), "{out}");
    }

    #[test]
    fn an_environment_without_results_is_refused_naming_those_with() {
        let dir = tempfile::tempdir().unwrap();
        let r = report(dir.path());
        let cat = crate::prices::default_catalog().unwrap();
        let d: Vec<Deployment> = vec!["ec2=r5.2xlarge,3".parse().unwrap()];
        assert_eq!(
            rows(&r, &d, &cat).unwrap_err().to_string(),
            "--deployment ec2=…: no result of environment \"ec2\" among the results (their environments: laptop, lab)"
        );
    }

    fn row(env: &str, nodes: u32, monthly: f64, ops: Option<f64>) -> CostRow {
        CostRow {
            env: env.into(),
            deployment: format!("{nodes} × x"),
            nodes,
            instance: "x: 4 vCPU, 32 GB RAM".into(),
            monthly_usd: monthly,
            k8s: None,
            k8s_fee_monthly_usd: None,
            ops_per_s: ops,
            basis: "capacity verdict".into(),
            per_1k_ops_usd: ops.and_then(|o| cost_per_1k_ops_usd(monthly, o)),
            measured_on: None,
            measured_detail: None,
            warnings: vec![],
        }
    }

    #[test]
    fn searches_are_ranked_by_cost_per_sustained_throughput() {
        let rows = [
            row("dear", 3, 900.0, Some(30_000.0)),
            row("cheap", 6, 600.0, Some(60_000.0)),
            row("unmeasured", 3, 100.0, None),
            row("mid", 3, 450.0, Some(30_000.0)),
        ];
        let t = ranking_table(&rows).unwrap();
        let envs: Vec<&str> = t.rows.iter().map(|r| r[1].as_str()).collect();
        assert_eq!(envs, ["cheap", "mid", "dear"]);
        assert_eq!(t.rows[0][0], "1");
        // 60,000 ops/s on 6 nodes; $600 a month for 60 × 1,000 ops/s.
        assert_eq!(
            (t.rows[0][5].as_str(), t.rows[0][8].as_str()),
            ("10,000", "10.00")
        );
        assert_eq!(t.rows[2][8], "30.00");
        // The CSV's rank column gives each environment the table's place.
        let ranks: Vec<_> = rows.iter().map(|r| rank_of(&rows, &r.env)).collect();
        assert_eq!(ranks, [Some(3), Some(1), None, Some(2)]);
        // One measured environment ranks nothing.
        assert!(ranking_table(&rows[2..3]).is_none());
        assert!(ranking_table(&rows[..1]).is_none());
        assert_eq!(rank_of(&rows[..1], "dear"), None);
    }
}
