//! `cqlbench scenario FILE`: runs a methodology described in YAML (see
//! [`crate::scenario::file`]) through [`crate::scenario::run`]: the local cluster, each typed
//! step, a report of all results; the cluster is stopped at the end unless `--keep`.

use std::path::PathBuf;

use anyhow::Context;

use crate::scenario::overrides::{self, Overrides};
use crate::scenario::{self, file};

#[derive(Debug, clap::Args)]
pub struct ScenarioArgs {
    /// The scenario file (YAML); `scenarios/` holds one per reference article.
    pub file: PathBuf,
    /// Directory for the results [default: <cqlbench home>/scenarios/<name>-<time>, <time> the
    /// UTC start as 20261122T023005Z].
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Directory holding local clusters [default: $CQLBENCH_CLUSTERS_DIR, else <cqlbench
    /// home>/clusters].
    #[arg(long)]
    pub clusters_dir: Option<PathBuf>,
    /// Leave the (last environment's) local cluster running at the end.
    #[arg(long)]
    pub keep: bool,
    /// Continue a scenario in --dir: steps whose result is complete are kept and skipped, an
    /// interrupted capacity search continues after its last complete step.
    #[arg(long)]
    pub resume: bool,
    /// Check the whole file (the cluster section and every step's values), print the steps
    /// and stop.
    #[arg(long)]
    pub dry_run: bool,
    /// Run only these environments (NAME[,NAME…]); in a scenario without environments, the
    /// label of its results.
    #[arg(long, value_delimiter = ',', value_parser = parse_env)]
    pub env: Vec<String>,
    /// Run against an existing cluster's contact points (a,b,c) instead of a local cluster;
    /// with environments, choose the one they are with --env.
    #[arg(long, value_delimiter = ',')]
    pub hosts: Vec<String>,
    /// Change an option: KEY=VALUE for every step that takes KEY, STEP.KEY=VALUE for one step
    /// (by name or command), cluster.KEY=VALUE, repeat=N. Repeatable; later ones win.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Apply the file's named set of overrides (its `scales:`, e.g. `full` for the article's
    /// own sizes); --set wins over it.
    #[arg(long)]
    pub scale: Option<String>,
    /// Serve live metrics while the scenario runs, for Prometheus to scrape: OpenMetrics text
    /// at http://ADDR/metrics, labelled by environment and step (docs/live.md).
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// With --metrics-listen: keep serving this long after the scenario ends, so that a
    /// scraper reads the final figures.
    #[arg(long, value_parser = crate::spec::parse_duration, requires = "metrics_listen", value_name = "DURATION")]
    pub metrics_linger: Option<std::time::Duration>,
}

pub fn run(a: ScenarioArgs) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&a.file)
        .with_context(|| format!("reading {}", a.file.display()))?;
    let mut f = file::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", a.file.display()))?;
    let overrides = Overrides {
        scale: a.scale.clone(),
        set: a.set.clone(),
        envs: a.env.clone(),
        hosts: a.hosts.clone(),
    };
    overrides::apply(&mut f, &overrides)
        .map_err(|e| anyhow::anyhow!("{}: {e}", a.file.display()))?;
    let ctx = super::context(a.clusters_dir.as_deref(), false);
    let dir = a.dir.clone().unwrap_or_else(|| {
        ctx.home.join("scenarios").join(format!(
            "{}-{}",
            f.name,
            crate::format::compact_utc(crate::host::unix_now_s())
        ))
    });
    let matrix =
        file::plan_all(&f, &dir).map_err(|e| anyhow::anyhow!("{}: {e}", a.file.display()))?;
    ctx.emit(crate::scenario::Event::Planned { matrix: &matrix });
    scenario::runner::check_all(&matrix).with_context(|| a.file.display().to_string())?;
    if a.dry_run {
        println!("the scenario is valid (dry run: nothing started)");
        return Ok(());
    }
    if a.resume && a.dir.is_none() {
        anyhow::bail!("--resume continues a scenario in its --dir: give --dir");
    }
    // Listening first: a busy address is refused before anything is written.
    let labels = crate::live::Labels {
        run: dir.file_name().map(|n| n.to_string_lossy().into_owned()),
        env: String::new(),
        step: String::new(),
    };
    let (ctx, live) = super::with_live(ctx, a.metrics_listen, labels)?;
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(dir.join("scenario.yaml"), &text)
        .with_context(|| format!("writing {}", dir.display()))?;
    if !overrides.is_empty() {
        let record = serde_json::json!({
            "scale": a.scale, "set": a.set, "env": a.env, "hosts": a.hosts,
        });
        crate::fsutil::write_json(&dir.join("overrides.json"), &record)
            .with_context(|| format!("writing {}", dir.display()))?;
    }
    let opts = scenario::RunOptions {
        keep: a.keep,
        resume: a.resume,
    };
    let ran = scenario::run(&matrix, &ctx, opts);
    super::linger(live.as_deref(), a.metrics_linger);
    ran?;
    Ok(())
}

/// An environment name, refused on the command line as in the file.
fn parse_env(s: &str) -> Result<String, crate::error::Invalid> {
    crate::spec::probe::validate_env(s).map(|()| s.to_string())
}
