//! `cqlbench quickstart`: the README's main job. Creates (or reuses) a local 3-node cluster,
//! starts it, prints its status, runs a write/read smoke check at QUORUM and stops the
//! cluster unless `--keep`.

use anyhow::bail;

use super::cluster::{CreateArgs, DirArg, print_status, start};
use crate::cluster::{Cluster, StartOptions, StopOptions, clusters_root};
use crate::spec::{Gc, MiB};

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
    #[arg(long, default_value_t = 1000)]
    pub rows: u32,
    /// Leave the cluster running at the end.
    #[arg(long)]
    pub keep: bool,
    #[command(flatten)]
    pub dir: DirArg,
}

pub fn run(a: QuickstartArgs) -> anyhow::Result<()> {
    let root = clusters_root(a.dir.dir.as_deref());
    let c = match Cluster::open(&root, &a.name) {
        Ok(c) => {
            println!("reusing cluster {} in {}", c.name(), c.dir.display());
            c
        }
        Err(_) => {
            let args = CreateArgs {
                name: a.name.clone(),
                nodes: a.nodes,
                dcs: None,
                racks: 1,
                cassandra_version: crate::cluster::dist::DEFAULT_LINE.into(),
                cassandra_home: None,
                heap: Some(a.heap),
                new_gen: None,
                gc: Gc::G1,
                jvm_args: vec![],
                cpus_per_node: None,
                address_prefix: "127.0.0.".into(),
                yaml: vec![],
                start: false,
                dir: a.dir.clone(),
            };
            let c = Cluster::create(&root, args.to_spec()?)?;
            println!(
                "created {}: {} nodes, Cassandra {}, heap {}",
                c.name(),
                c.nodes().len(),
                c.state.dist.version,
                c.state.plan.heap_reason
            );
            c
        }
    };
    if c.running_addresses().len() < c.nodes().len() {
        start(&c, StartOptions::default())?;
    }
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
