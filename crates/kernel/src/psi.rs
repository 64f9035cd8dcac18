//! Pressure stall information for memory (`/proc/pressure/memory`), as cumulative totals.
//!
//! Linux PSI accumulates, per CPU, the time during which *some* non-idle task was stalled on
//! memory (reclaim, refaults of the working set, compaction) and during which *all* non-idle tasks
//! were ("full"). lmkd samples the totals and compares their growth within a window with its
//! thresholds. Here stalls are recorded as intervals; "some" is the union of all stall intervals
//! (kswapd's reclaim included, as kswapd runs under `psi_memstall_enter`), "full" the union of the
//! stalls of app main threads — the task that matters on a phone — which approximates "every
//! runnable task waits" when the foreground app is the only busy task.

use engine::Nanos;
use serde::Serialize;

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Psi {
    pub some_total_ns: u64,
    pub full_total_ns: u64,
    #[serde(skip)]
    some_until: Nanos,
    #[serde(skip)]
    full_until: Nanos,
}

/// Add the part of `[start, start+len)` not already covered up to `*until`.
fn union_add(total: &mut u64, until: &mut Nanos, start: Nanos, len: Nanos) {
    let end = start + len;
    if end > *until {
        *total += end - start.max(*until);
        *until = end;
    }
}

impl Psi {
    /// Record a memory stall of `len` ns starting at `start`; `full` if it is on an app main thread.
    pub fn record(&mut self, start: Nanos, len: Nanos, full: bool) {
        if len == 0 {
            return;
        }
        union_add(&mut self.some_total_ns, &mut self.some_until, start, len);
        if full {
            union_add(&mut self.full_total_ns, &mut self.full_until, start, len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_stalls_count_once() {
        let mut p = Psi::default();
        p.record(0, 100, false);
        p.record(50, 100, true);
        p.record(300, 10, true);
        assert_eq!(p.some_total_ns, 160);
        assert_eq!(p.full_total_ns, 110);
    }
}
