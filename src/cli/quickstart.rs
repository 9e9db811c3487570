//! `cqlbench quickstart`: the README's main job. Creates (or reuses) a local 3-node cluster,
//! starts it, prints its status, runs a write/read smoke check at QUORUM, then the steps of
//! `quickstart.yaml` (a quick probe, a throughput test, a latency test at 35% of it) and the
//! report (tables and HTML); stops the cluster unless `--keep`.

use anyhow::bail;

use super::cluster::{DirArg, print_status, start};
use crate::cluster::{StartOptions, StopOptions, clusters_root};
use crate::spec::MiB;

/// The quickstart's steps.
const QUICKSTART: &str = include_str!("quickstart.yaml");

#[derive(Debug, clap::Args)]
pub struct QuickstartArgs {
    /// Cluster name.
    #[arg(long, default_value = "quickstart")]
    pub name: String,
    /// Nodes.
    #[arg(long, default_value_t = 3)]
    pub nodes: usize,
    /// Heap per node.
    #[arg(long, default_value = "256M")]
    pub heap: MiB,
    /// Rows written and read back by the smoke check.
    #[arg(long, default_value_t = 300)]
    pub rows: u32,
    /// Leave the cluster running at the end.
    #[arg(long)]
    pub keep: bool,
    /// Only the cluster and the smoke check (no probe, load tests or report).
    #[arg(long)]
    pub smoke_only: bool,
    /// Directory for the results [default: <cqlbench home>/quickstart/<time>].
    #[arg(long)]
    pub results: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub dir: DirArg,
}

pub fn run(a: QuickstartArgs) -> anyhow::Result<()> {
    let root = clusters_root(a.dir.dir.as_deref());
    let mut f = crate::scenario::file::parse(QUICKSTART).map_err(anyhow::Error::msg)?;
    let section = f.cluster.get_or_insert_with(Default::default);
    section.insert("name".into(), a.name.clone().into());
    section.insert("nodes".into(), (a.nodes as u64).into());
    section.insert("heap".into(), format!("{}M", a.heap.0).into());
    let dir = a.results.clone().unwrap_or_else(|| {
        crate::fsutil::cqlbench_home()
            .join("quickstart")
            .join(crate::host::unix_now_s().to_string())
    });
    // The whole plan is checked before the cluster is created or started.
    let plan = crate::scenario::file::plan(&f, &dir).map_err(anyhow::Error::msg)?;
    crate::scenario::check(&plan)?;
    let cp = plan
        .cluster
        .as_ref()
        .expect("quickstart.yaml has a cluster section");
    let c = crate::scenario::runner::open_or_create(&root, &cp.name, &cp.options)?;
    if c.running_addresses().len() < c.nodes().len() {
        start(&c, StartOptions::default())?;
    }
    let steps = (!a.smoke_only).then_some((plan, dir));
    let stop = crate::interrupt::flag();
    let result = (|| {
        print_status(&c)?;
        let r = crate::cluster::smoke::write_read_check(&c, a.rows)?;
        println!(
            "smoke check: {} rows at RF {} — written at QUORUM in {:.2}s ({:.0} rows/s), read back at QUORUM in {:.2}s ({:.0} rows/s), {} mismatches",
            r.rows,
            r.replication_factor,
            r.write_time.as_secs_f64(),
            r.rows as f64 / r.write_time.as_secs_f64(),
            r.read_time.as_secs_f64(),
            r.rows as f64 / r.read_time.as_secs_f64(),
            r.mismatches
        );
        if r.mismatches > 0 {
            bail!(
                "smoke check: {} of {} rows read back wrong",
                r.mismatches,
                r.rows
            );
        }
        if let Some((plan, dir)) = &steps {
            let env = crate::scenario::Env {
                clusters: root.clone(),
                keep: a.keep,
                resume: false,
            };
            crate::scenario::runner::print_plan(plan);
            crate::scenario::runner::run_steps(plan, &env, &stop)?;
            if plan.report {
                let outs = plan.steps.iter().map(|s| s.out.clone()).collect();
                crate::scenario::runner::report(dir, outs, &plan.deployments)?;
            }
            println!("results: {}", dir.display());
        }
        Ok(())
    })();
    if a.keep {
        println!(
            "cluster {} left running (stop it with: cqlbench cluster stop {})",
            c.name(),
            c.name()
        );
    } else {
        let stopped = c.stop(&StopOptions::default())?;
        println!("stopped {}", stopped.join(", "));
    }
    result
}
