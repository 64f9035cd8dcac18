//! Which Java objects a hot launch re-reads: a launch's Java pages biased towards objects near the
//! roots and towards the objects the app allocated just before it left the foreground.
//!
//! What is modelled (Fleet ASPLOS'24 §3, Fig. 6a: five apps, 10 min in the foreground, hot launch
//! after 30 s in the background): about 50% of the objects a hot launch re-accesses are within
//! depth D = 2 of the roots (activities, views and their direct fields) and about 40% are
//! "foreground-young" (allocated since the last GC before the switch), 68% in their union. The
//! app access model ([`apps`' launch sets], logical pages) knows nothing of objects, so
//! [`crate::app::JavaApp::bias_launch`] rewrites each Java page of a launch set: with probability
//! [`LaunchBias::near_root_share`] into a page's worth of objects at blueprint depth ≤
//! [`LaunchBias::near_root_depth`] (roots are depth 0, Fleet's artifact level 0; a run of
//! consecutive such objects, [`crate::app::JavaApp::touch_biased`]), with probability
//! [`LaunchBias::young_share`] into a page's worth of the objects linked since the last GC before the app left
//! the foreground ([`crate::linked`]; none without linked allocation), otherwise unchanged.
//!
//! Simplified: our young objects are linked leaves below the roots' depth, so the two classes never
//! overlap; the paper's union (68%) less its near-root part (50%) is the young share (18%) that
//! reproduces the union, not the paper's FYO share (40%, of which 22 points are also near-root).

use crate::blueprint::Blueprint;
use crate::heap::NULL;
use serde::Serialize;
use std::collections::VecDeque;

/// Launch-set bias (see module docs for sources).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LaunchBias {
    /// Probability that a launch's Java page is replaced by a page of near-root objects. [0, 1].
    pub near_root_share: f64,
    /// Largest blueprint depth of a near-root object (roots are 0).
    pub near_root_depth: u32,
    /// Probability that it is replaced by foreground-young objects instead. [0, 1 − near_root].
    pub young_share: f64,
}

impl Default for LaunchBias {
    fn default() -> Self {
        Self {
            near_root_share: 0.5,
            near_root_depth: 2,
            young_share: 0.18,
        }
    }
}

/// BFS depth of every blueprint object from its roots (`u32::MAX`: unreachable).
pub fn depths(bp: &Blueprint) -> Vec<u32> {
    let mut d = vec![u32::MAX; bp.len()];
    let mut q: VecDeque<u32> = VecDeque::new();
    for &r in &bp.roots {
        d[r as usize] = 0;
        q.push_back(r);
    }
    while let Some(o) = q.pop_front() {
        for c in bp.slots(o) {
            if c != NULL && d[c as usize] == u32::MAX {
                d[c as usize] = d[o as usize] + 1;
                q.push_back(c);
            }
        }
    }
    d
}
