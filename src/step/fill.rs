//! The `fill` step as typed input: the run (workload, target) and how full to make the nodes,
//! as flags, scenario keys and what each loader of `fill --loaders N` is sent. The fill itself
//! is `scenario::steps::fill`.

use std::time::Duration;

use clap::Args;
use serde::{Deserialize, Serialize};

use super::run::RunStep;
use super::{argv, de};
use crate::spec::{MiB, parse_duration};

/// A fill step: the run (workload, target) and how full to make the nodes.
#[derive(Debug, Clone, Args, Serialize)]
pub struct FillStep {
    #[command(flatten)]
    #[serde(flatten)]
    pub run: RunStep,
    #[command(flatten)]
    #[serde(flatten)]
    pub fill: FillOptions,
}

impl<'de> Deserialize<'de> for FillStep {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (fill, run) = de::split(d)?;
        Ok(FillStep { run, fill })
    }
}

fn default_compaction_timeout() -> Duration {
    Duration::from_secs(30 * 60)
}

#[derive(Debug, Clone, Args, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FillOptions {
    /// Fill until each node holds this many times its RAM (reference 001: 5).
    #[arg(long, conflicts_with = "bytes", required_unless_present = "bytes")]
    #[serde(default)]
    pub times_ram: Option<f64>,
    /// A node's RAM for --times-ram [default: local nodes share the host's RAM equally].
    #[arg(long)]
    #[serde(
        default,
        deserialize_with = "de::opt_parsed",
        serialize_with = "argv::opt_display"
    )]
    pub node_ram: Option<MiB>,
    /// Fill until each node holds this much data, e.g. 200M or 10G.
    #[arg(long)]
    #[serde(
        default,
        deserialize_with = "de::opt_parsed",
        serialize_with = "argv::opt_display"
    )]
    pub bytes: Option<MiB>,
    /// Then wait at most this long for pending compactions to reach zero.
    #[arg(long, value_parser = parse_duration, default_value = "30m")]
    #[serde(
        default = "default_compaction_timeout",
        deserialize_with = "de::duration",
        serialize_with = "argv::duration"
    )]
    pub compaction_timeout: Duration,
}

impl FillStep {
    /// The step as the arguments of `fill` that make it again (every option set).
    pub fn args(&self) -> Vec<String> {
        let mut a = self.run.args("fill");
        a.extend(argv::part_flags(&self.fill, None));
        a
    }
}
