//! A run split over loader processes: which shard of which run a result is, and the shards a
//! merged result was made of.

use serde::{Deserialize, Serialize};

use super::RunStatus;

/// Which shard of which run a result is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardOf {
    pub run_id: String,
    pub index: u64,
    pub count: u64,
    /// How the shards agreed on their start: "barrier" (in the cluster) or "start-at".
    pub start: String,
    /// Unix seconds when this shard's main phase began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_started_unix_s: Option<f64>,
}

/// The shards a merged result was made of, each with its own figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Merged {
    pub run_id: String,
    /// Latest minus earliest main-phase start among the shards.
    pub start_spread_ms: f64,
    pub shards: Vec<ShardFigures>,
}

/// One shard's main phase, as merged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardFigures {
    pub index: u64,
    pub path: std::path::PathBuf,
    pub status: RunStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_started_unix_s: Option<f64>,
    pub ops_per_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_rate_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub achieved_ratio: Option<f64>,
    pub client_cpu_s: f64,
    pub client_cpu_util: f64,
    pub max_backlog: u64,
    /// The backlog at the end of the measured window.
    pub final_backlog: u64,
    /// Median service time of all its operations: against the same cluster, a shard whose
    /// service time stands far above the others' is slow on its own side.
    #[serde(default)]
    pub service_p50_ms: f64,
}
