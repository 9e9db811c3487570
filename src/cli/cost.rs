//! `cqlbench cost` and `cqlbench plan`: build the specs from the command line, call the cost
//! library, print its text (or JSON).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::console::{cost_text, plan_text};
use crate::cost::plan::{Capacity, CapacityArg, PlanSpec, Sourced, plan};
use crate::cost::probe_check::{flag_against, probe_figures};
use crate::cost::throughput::OpsArg;
use crate::cost::throughput::Throughput;
use crate::cost::{CloudCluster, price_cluster};
use crate::prices::{
    Catalog, DataSize, DiskSpec, Headroom, Pricing, default_catalog, load_catalog,
};

/// Arguments of `cqlbench cost`.
#[derive(Debug, clap::Args)]
pub struct CostArgs {
    /// Number of nodes.
    #[arg(long, default_value_t = 3)]
    pub nodes: u32,
    /// Instance type of the catalogue, e.g. r5.2xlarge, n2-highmem-8, Standard_E8s_v4.
    #[arg(long)]
    pub instance: String,
    /// One data volume per node: TYPE:SIZE[:Niops][:Nmbps], e.g. gp2:3400GB,
    /// gp3:5TB:16000iops:1000mbps, ultra-disk:4TB:10000iops:200mbps; `local` for the
    /// instance's own disks.
    #[arg(long)]
    pub disk: Option<DiskSpec>,
    /// Managed Kubernetes service whose cluster fee to add: eks, gke or aks.
    #[arg(long)]
    pub k8s: Option<String>,
    /// Reserved / committed-use term instead of on-demand: 1y or 3y.
    #[arg(long)]
    pub reserved: Option<Pricing>,
    /// Throughput to express the cost per 1,000 ops/s against: ops/s (positive, e.g. 45000 or
    /// 45k; your own figure, printed as such), or a result file whose measured throughput to
    /// use (a capacity search's verdict, or a run's main phase), printed with the hardware it
    /// was measured on beside the instance priced.
    #[arg(long, value_name = "OPS|RESULT")]
    pub ops: Option<OpsArg>,
    /// A probe result (JSON) whose disk IOPS and MB/s are flagged against the disk's limits.
    #[arg(long)]
    pub probe: Option<PathBuf>,
    /// Price catalogue (YAML) to use instead of the built-in one.
    #[arg(long)]
    pub catalog: Option<PathBuf>,
    /// Print the breakdown as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `cqlbench plan`.
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// Target throughput of the whole cluster in ops/s (positive, e.g. 100000 or 100k).
    #[arg(long, value_parser = crate::spec::load::parse_rate)]
    pub ops: f64,
    /// Live data before replication, e.g. 10TB.
    #[arg(long)]
    pub data: DataSize,
    /// Replication factor.
    #[arg(long, default_value_t = 3)]
    pub rf: u32,
    /// Disk headroom for compaction: stcs (2×), lcs (1.2×), twcs (1.2×) or a factor
    /// [default: stcs, an assumption].
    #[arg(long)]
    pub compaction: Option<Headroom>,
    /// Most replicated data one node holds [default: 2TB, an assumption].
    #[arg(long)]
    pub density: Option<DataSize>,
    /// IOPS one node's data disk must sustain [default: 5000, an assumption].
    #[arg(long)]
    pub min_iops: Option<f64>,
    /// MB/s one node's data disk must sustain [default: 125, an assumption].
    #[arg(long)]
    pub min_mbps: Option<f64>,
    /// A measured capacity: INSTANCE[:NODES]=RESULT.json, a `cqlbench capacity` result and the
    /// instance type (and node count, when the search did not run on a local cluster) it ran
    /// on, e.g. i3.2xlarge:3=cap.json; repeatable. Other instances use the catalogue's assumed
    /// capacities.
    #[arg(long, num_args = 1.., value_name = "INSTANCE[:NODES]=RESULT")]
    pub capacity: Vec<CapacityArg>,
    /// Network disk types for instances without local disks.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "gp3,gp2,pd-balanced,pd-ssd,premium-ssd"
    )]
    pub disks: Vec<String>,
    /// Only these providers (aws, gcp, azure), comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub provider: Vec<String>,
    /// Add each provider's managed Kubernetes fee.
    #[arg(long)]
    pub k8s: bool,
    /// Rank by a reserved / committed-use term (1y or 3y) instead of on-demand.
    #[arg(long)]
    pub reserved: Option<Pricing>,
    /// How many of the cheapest candidates to explain line by line.
    #[arg(long, default_value_t = 3)]
    pub top: usize,
    /// Price catalogue (YAML) to use instead of the built-in one.
    #[arg(long)]
    pub catalog: Option<PathBuf>,
    /// Print the plan as JSON.
    #[arg(long)]
    pub json: bool,
}

fn catalog(path: Option<&Path>) -> Result<Catalog> {
    Ok(match path {
        Some(p) => load_catalog(p)?,
        None => default_catalog().context("the built-in catalogue")?,
    })
}

pub fn run_cost(args: CostArgs) -> Result<()> {
    let cat = catalog(args.catalog.as_deref())?;
    let spec = CloudCluster {
        nodes: args.nodes,
        instance: args.instance.clone(),
        disk: args.disk.clone(),
        k8s: args.k8s.clone(),
        pricing: args.reserved.unwrap_or(Pricing::OnDemand),
    };
    let breakdown = price_cluster(&cat, &spec)?;
    let throughput = args
        .ops
        .as_ref()
        .map(Throughput::of)
        .transpose()
        .context("--ops")?;
    let flags = match &args.probe {
        None => None,
        Some(path) => {
            let probe = crate::result::read_probe(path)?;
            let quote = breakdown.disk.as_ref().with_context(|| {
                format!(
                    "{}: a probe is flagged against a --disk TYPE:SIZE",
                    path.display()
                )
            })?;
            Some(flag_against(&probe_figures(&probe), quote))
        }
    };
    if args.json {
        let mut v = serde_json::to_value(&breakdown)?;
        if let Some(t) = &throughput {
            v["ops_per_s"] = t.ops_per_s.into();
            v["ops_origin"] = serde_json::to_value(&t.origin)?;
            v["cost_per_1k_ops_usd"] = breakdown.cost_per_1k_ops_usd(t.ops_per_s).into();
            if let Some(m) = &t.measured {
                v["measured_on"] = serde_json::to_value(m)?;
                let inst = cat.instance(&args.instance)?;
                v["warnings"] = t.warnings_against(inst, args.nodes).into();
            }
        }
        if let Some(f) = &flags {
            v["probe_flags"] = serde_json::to_value(f)?;
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        let probe_name = args.probe.as_ref().map(|p| p.display().to_string());
        let probe = probe_name.as_deref().zip(flags.as_deref());
        let inst = cat.instance(&args.instance).ok();
        print!(
            "{}",
            cost_text(&breakdown, inst, throughput.as_ref(), probe)
        );
    }
    Ok(())
}

pub fn run_plan(args: PlanArgs) -> Result<()> {
    let cat = catalog(args.catalog.as_deref())?;
    let measured = args
        .capacity
        .iter()
        .map(Capacity::read)
        .collect::<Result<Vec<_>, _>>()?;
    for d in &args.disks {
        cat.disk(d)?;
    }
    let spec = PlanSpec {
        ops_per_s: args.ops,
        data: args.data,
        rf: args.rf,
        headroom: given_or(args.compaction, "stcs".parse()?, HEADROOM_WHY),
        density: given_or(args.density, "2TB".parse()?, DENSITY_WHY),
        min_iops: given_or(args.min_iops, 5000.0, IOPS_WHY),
        min_mbps: given_or(args.min_mbps, 125.0, MBPS_WHY),
        disks: args.disks,
        providers: args.provider,
        k8s: args.k8s,
        rank_by: args.reserved.unwrap_or(Pricing::OnDemand),
    };
    let plan = plan(&cat, &spec, &measured)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&plan)?);
    } else {
        print!("{}", plan_text(&plan, args.top));
    }
    Ok(())
}

const HEADROOM_WHY: &str = "default STCS: a compaction may rewrite the largest SSTables next to \
                            themselves; use --compaction lcs (1.2×) for leveled compaction";
const DENSITY_WHY: &str = "default 2 TB of data per node, 2-4 TB of disk with headroom as ref 000 \
                           recommends";
const IOPS_WHY: &str = "default 5,000, the low end of ref 000's 5k-10k IOPS recommendation";
const MBPS_WHY: &str = "default 125 MB/s, what ref 000's EC2 baseline disk delivered under its fio \
                        profile (125 MiB/s)";

fn given_or<T>(given: Option<T>, default: T, why: &str) -> Sourced<T> {
    match given {
        Some(v) => Sourced::given(v),
        None => Sourced::assumed(default, why),
    }
}
