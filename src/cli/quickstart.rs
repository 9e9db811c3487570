//! `cqlbench quickstart`: the README's main job, as the scenario runner: `quickstart.yaml`
//! with this command's cluster options and a smoke step first. The runner creates (or
//! reuses) the local 3-node cluster and starts it; the smoke step prints its status and
//! writes and reads back rows at QUORUM; then a quick probe, a throughput test, a latency
//! test at 35% of it, and the report (tables and HTML); the cluster is stopped unless
//! `--keep`.

use super::cluster::DirArg;
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
    #[arg(long, default_value_t = 100)]
    pub rows: u32,
    /// Leave the cluster running at the end.
    #[arg(long)]
    pub keep: bool,
    /// Only the cluster and the smoke check (no probe, load tests or report).
    #[arg(long)]
    pub smoke_only: bool,
    /// Directory for the results [default: <cqlbench home>/quickstart/<time>, <time> the UTC
    /// start as 20261122T023005Z].
    #[arg(long)]
    pub results: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub dir: DirArg,
}

pub fn run(a: QuickstartArgs) -> anyhow::Result<()> {
    let ctx = super::context(a.dir.dir.as_deref(), false);
    let mut f = crate::scenario::file::parse(QUICKSTART).map_err(anyhow::Error::msg)?;
    let section = f.cluster.get_or_insert_with(Default::default);
    section.insert("name".into(), a.name.clone().into());
    section.insert("nodes".into(), (a.nodes as u64).into());
    section.insert("heap".into(), format!("{}M", a.heap.0).into());
    // The smoke check first (the cluster's status, rows written and read back at QUORUM);
    // with --smoke-only nothing else.
    let smoke = crate::yaml::Mapping::from_iter([(
        "smoke".into(),
        crate::yaml::Mapping::from_iter([("rows".into(), u64::from(a.rows).into())]).into(),
    )]);
    f.steps.insert(0, smoke);
    if a.smoke_only {
        f.steps.truncate(1);
        f.report = false;
    }
    let dir = a.results.clone().unwrap_or_else(|| {
        ctx.home
            .join("quickstart")
            .join(crate::format::compact_utc(crate::host::unix_now_s()))
    });
    let matrix = crate::scenario::file::plan_all(&f, &dir).map_err(anyhow::Error::msg)?;
    ctx.emit(crate::scenario::Event::Planned { matrix: &matrix });
    let opts = crate::scenario::RunOptions {
        keep: a.keep,
        resume: false,
    };
    crate::scenario::run(&matrix, &ctx, opts)?;
    if a.keep {
        println!(
            "cluster {} left running (stop it with: cqlbench cluster stop {})",
            a.name, a.name
        );
    }
    Ok(())
}
