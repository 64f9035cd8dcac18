//! Per-event rows of a run (not part of the JSON report, whose bytes stay as they are): one row
//! per launch and per process death, for the Python package's DataFrames and trace exports.
//!
//! Times are integers (simulated µs) so that no rounding hides the order of close events.

use serde::{Deserialize, Serialize};

/// One launch the user saw.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LaunchRow {
    /// When the user asked for the app, simulated µs.
    pub t_us: u64,
    pub app: String,
    /// Launch context index of the app's access model.
    pub context: u32,
    /// `hot` (the process was cached) or `cold`.
    pub kind: String,
    /// Request to first frame, µs (at least 1, as the latency histograms record it).
    pub latency_us: u64,
}

/// One process death.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KillRow {
    /// Simulated µs.
    pub t_us: u64,
    pub app: String,
    /// lmkd / kernel reason name (`user` for force-stops).
    pub reason: String,
}

/// The event rows of one policy's run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunEvents {
    /// The run's label, as in [`crate::model::PolicyResult::policy`].
    pub policy: String,
    pub launches: Vec<LaunchRow>,
    pub kills: Vec<KillRow>,
    /// kswapd's runs, `[wake, sleep]` in simulated µs.
    #[serde(default)]
    pub kswapd_runs: Vec<[u64; 2]>,
}
