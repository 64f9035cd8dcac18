//! `[java.linked]`: medium-lived objects the app's code links into its live graph (the runtime's
//! `runtime::linked`; sources there). Optional: without the table the app allocates only
//! short-lived garbage and its blueprint objects, as before.

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

impl LinkedSection {
    /// The first out-of-range key, if any: `(key, expected, got)` (shared by app profiles and
    /// scenarios, which report it with their own file and line).
    pub fn problem(&self) -> Option<(&'static str, String, String)> {
        let checks: [(&'static str, f64, f64, bool, f64); 4] = [
            ("share", self.share, 0.0, true, 1.0),
            ("object_bytes", self.object_bytes as f64, 16.0, true, 65536.0),
            ("fg_death_per_gc", self.fg_death_per_gc, 0.0, false, 1.0),
            ("bg_death_per_gc", self.bg_death_per_gc, 0.0, false, 1.0),
        ];
        checks.into_iter().find_map(|(key, x, lo, lo_incl, hi)| {
            let ok = x.is_finite() && (if lo_incl { x >= lo } else { x > lo }) && x <= hi;
            (!ok).then(|| {
                let lb = if lo_incl { '[' } else { '(' };
                (key, format!("a number in {lb}{lo}, {hi}]"), x.to_string())
            })
        })
    }
}
