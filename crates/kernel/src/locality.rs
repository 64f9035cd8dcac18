//! Swap-in locality of a launch (Ariadne §3, Table 3): do the pages a relaunch swaps in sit in
//! adjacent slots of the swap device?
//!
//! The framework brackets a launch with [`Kernel::trace_swapins`]; the swap-in faults of that
//! process (the faulting page, not readahead) are recorded as (device, slot). At the end they
//! are cut into windows of [`LOCALITY_WINDOW`] faults, as the paper artifact's
//! `locality_check.py` does (sort a window's sectors, count runs of adjacent ones): a fault counts
//! for P(2 consecutive) if the next slot of its device was also swapped in within the window, and
//! for P(4 consecutive) if the next three were. Windows of fewer than 16 faults are skipped.

use crate::types::*;
use crate::Kernel;

/// Swap-in faults per locality window (the artifact's 256).
pub const LOCALITY_WINDOW: usize = 256;
const MIN_WINDOW: usize = 16;

impl Kernel {
    /// Start tracing the swap-in faults of `pid` (`Some`) or stop and score the trace (`None`).
    pub fn trace_swapins(&mut self, pid: Option<Pid>) {
        if pid.is_none() && self.trace_pid.is_some() {
            let trace = std::mem::take(&mut self.trace_slots);
            let mut sorted = Vec::with_capacity(LOCALITY_WINDOW);
            for w in trace.chunks(LOCALITY_WINDOW).filter(|w| w.len() >= MIN_WINDOW) {
                sorted.clear();
                sorted.extend_from_slice(w);
                sorted.sort_unstable();
                let has = |d: u8, s: SwapHandle| sorted.binary_search(&(d, s)).is_ok();
                for &(d, s) in w {
                    self.vmstat.swapin_locality_faults += 1;
                    if has(d, s.wrapping_add(1)) {
                        self.vmstat.swapin_locality_next1 += 1;
                        if has(d, s.wrapping_add(2)) && has(d, s.wrapping_add(3)) {
                            self.vmstat.swapin_locality_next3 += 1;
                        }
                    }
                }
            }
            self.trace_slots = trace;
        }
        self.trace_slots.clear();
        self.trace_pid = pid;
    }

    /// Record a swap-in fault of `pid` on slot `h` of device `dev` if it is being traced.
    #[inline]
    pub(crate) fn note_swapin(&mut self, pid: Pid, dev: usize, h: SwapHandle) {
        if self.trace_pid == Some(pid) {
            self.trace_slots.push((dev as u8, h));
        }
    }

    /// Measured P(2 consecutive) and P(4 consecutive) over every traced launch so far.
    pub fn swapin_locality(&self) -> (f64, f64) {
        let n = self.vmstat.swapin_locality_faults.max(1) as f64;
        (
            self.vmstat.swapin_locality_next1 as f64 / n,
            self.vmstat.swapin_locality_next3 as f64 / n,
        )
    }
}
