//! Optional Java workload behaviours (off unless a profile or scenario sets the table):
//! - `[java.linked]`: medium-lived objects the app's code links into its live graph
//!   (`runtime::linked`; sources there). Without it the app allocates only short-lived garbage
//!   and its blueprint objects.
//! - `[java.launch_bias]`: a hot launch re-reads near-root and foreground-young objects
//!   (`runtime::launch_bias`; Fleet §3 / Fig. 6a). Without it the launch touches the access
//!   model's Java pages as they are.

use serde::{Deserialize, Serialize};

/// `[java.linked]`: a share of the short-lived allocation that instead becomes objects stored
/// into the live graph (a mutator reference store through the write barrier), each alive for a
/// geometric number of GCs. Every key is optional.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinkedSection {
    /// Fraction of the short-lived allocation bytes (foreground, background and launch) that are
    /// linked objects instead (estimate: no paper publishes it). [0, 1].
    pub share: f64,
    /// Size of one linked object, bytes (estimate: about the mean object of Fleet Fig. 7's
    /// commercial apps, ~110 B). [16, 65536].
    pub object_bytes: u32,
    /// Probability that an object allocated in the foreground dies at each GC it sees (Fleet
    /// Fig. 5: > 40% of FGO survive 15 GCs; 0.95^15 = 46%). (0, 1].
    pub fg_death_per_gc: f64,
    /// The same for objects allocated in the background (Fleet Fig. 5: most BGO die within the
    /// first several GCs; 0.5^3 = 12.5% survive 3). (0, 1].
    pub bg_death_per_gc: f64,
}

impl Default for LinkedSection {
    fn default() -> Self {
        Self {
            share: 0.0,
            object_bytes: 112,
            fg_death_per_gc: 0.05,
            bg_death_per_gc: 0.5,
        }
    }
}

type Check = (&'static str, f64, f64, bool, f64);

/// The first `(key, x, lo, lo_inclusive, hi)` out of range: `(key, expected, got)`.
fn first_problem(checks: &[Check]) -> Option<(&'static str, String, String)> {
    checks.iter().find_map(|&(key, x, lo, lo_incl, hi)| {
        let ok = engine::text::in_range(x, lo, lo_incl, hi);
        (!ok).then(|| {
            let lb = if lo_incl { '[' } else { '(' };
            (key, format!("a number in {lb}{lo}, {hi}]"), x.to_string())
        })
    })
}

impl LinkedSection {
    /// The first out-of-range key, if any: `(key, expected, got)` (shared by app profiles and
    /// scenarios, which report it with their own file and line).
    pub fn problem(&self) -> Option<(&'static str, String, String)> {
        first_problem(&[
            ("share", self.share, 0.0, true, 1.0),
            ("object_bytes", self.object_bytes as f64, 16.0, true, 65536.0),
            ("fg_death_per_gc", self.fg_death_per_gc, 0.0, false, 1.0),
            ("bg_death_per_gc", self.bg_death_per_gc, 0.0, false, 1.0),
        ])
    }
}

/// `[java.launch_bias]`: which Java objects a hot launch re-reads. Every key is optional.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LaunchBiasSection {
    /// Probability that a Java page of a launch set is replaced by a page of near-root objects
    /// (Fleet Fig. 6a: ~50% of re-accessed objects are near-root). [0, 1].
    pub near_root_share: f64,
    /// Largest depth from the roots (roots = 0; Fleet's D = 2, artifact reading). [0, 64].
    pub near_root_depth: u32,
    /// Probability that it is replaced by a page's worth of objects linked since the last GC before the app
    /// left the foreground (needs `[java.linked]`; Fig. 6a: union 68% less near-root 50%).
    /// [0, 1 − near_root_share].
    pub young_share: f64,
}

impl Default for LaunchBiasSection {
    fn default() -> Self {
        Self {
            near_root_share: 0.5,
            near_root_depth: 2,
            young_share: 0.18,
        }
    }
}

impl LaunchBiasSection {
    /// The first out-of-range key, if any: `(key, expected, got)`.
    pub fn problem(&self) -> Option<(&'static str, String, String)> {
        first_problem(&[
            ("near_root_share", self.near_root_share, 0.0, true, 1.0),
            ("near_root_depth", self.near_root_depth as f64, 0.0, true, 64.0),
            (
                "young_share",
                self.young_share,
                0.0,
                true,
                1.0 - self.near_root_share,
            ),
        ])
    }
}
