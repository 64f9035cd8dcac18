//! Direct compaction for high-order allocations: the decision whether to compact
//! (`compaction_suitable`, `compaction_deferred` of Linux `mm/compaction.c`) and the run itself
//! ([`crate::buddy::BuddyAllocator::compact`] with frame ownership updated through a
//! [`FrameMover`]).
//!
//! Modelled (Linux 3.4 … 6.x names):
//! - `compaction_suitable`: skipped when free memory after the request would sit below the low
//!   watermark plus `2 << order` (reclaim first), or when the fragmentation index says the failure
//!   is due to lack of memory, not fragmentation (`fragindex` in `0..=sysctl_extfrag_threshold`,
//!   default 500); not needed when a suitable block already exists (`fragindex == -1000`).
//! - Deferral after failure (`defer_compaction` / `compaction_deferred` /
//!   `compaction_defer_reset`, per zone): a failed compaction for `order` sets
//!   `compact_order_failed = order`, raises `compact_defer_shift` (at most
//!   `COMPACT_MAX_DEFER_SHIFT` = 6) and restarts `compact_considered`; requests of at least that
//!   order then skip compaction until `1 << compact_defer_shift` of them have been considered. A
//!   success resets the shift and lets orders up to the successful one through.
//!
//! - Pageblock skip hints (Linux 3.7+, `PB_migrate_skip`; the buddy allocator's
//!   `set_skip_hints`, on for kernels from 3.7 and profiles without a release): a scanner that
//!   scans the rest of a pageblock without isolating anything marks it, and later runs pass it
//!   by. The marks are cleared when compaction restarts after the longest deferral
//!   (`compaction_restarting` → `__reset_isolation_suitable`, which also restarts both scanners
//!   from the zone's ends) and when kswapd goes to sleep after a direct compaction's scanners met
//!   (`compact_blockskip_flush` → `reset_isolation_suitable` in `kswapd_try_to_sleep`).
//!
//! - `compaction_ready` (Linux 3.3–4.x `mm/vmscan.c`): direct reclaim for a costly order (above
//!   `PAGE_ALLOC_COSTLY_ORDER` = 3) is aborted when the zone already has enough free memory for
//!   compaction — free above high + balance gap (min(low, 1% of the zone)) + `2 << order` — and
//!   compaction is deferred or suitable; the allocator then goes on to its sync compaction.
//!
//! Simplified: one zone; async and sync compaction are the same scan (see `buddy.rs`); no
//! `compact_cached_migrate_pfn` per sync mode; `sysctl_extfrag_threshold` is fixed at its default.

use crate::buddy::FrameMover;
use crate::types::*;
use crate::{mm, Kernel, OWNER_KERNEL, OWNER_ZRAM_BIT};
use engine::Nanos;
use serde::Serialize;

/// `COMPACT_MAX_DEFER_SHIFT` (`include/linux/compaction.h`): at most 64 requests skip compaction
/// after repeated failures.
pub const COMPACT_MAX_DEFER_SHIFT: u32 = 6;
/// `sysctl_extfrag_threshold` default (`mm/compaction.c`): a fragmentation index at or below
/// 500 means "reclaim, not compaction".
pub const EXTFRAG_THRESHOLD: i32 = 500;
/// Host cost of the compaction scanners' test of one page frame or free block, ns (estimate:
/// `isolate_migratepages` / `isolate_freepages` read the frame's `struct page` flags in PFN order,
/// a prefetch-friendly sequential walk of ~5-10 ns per frame on a desktop core, against ~100 ns
/// for an LRU scan step with its rmap walk; scaled by the device's `speed_factor`).
const COMPACT_SCAN_NS_HOST: f64 = 10.0;
/// `PAGE_ALLOC_COSTLY_ORDER` (`include/linux/mmzone.h`).
pub const PAGE_ALLOC_COSTLY_ORDER: u8 = 3;
/// `KSWAPD_ZONE_BALANCE_GAP_RATIO` (`include/linux/swap.h`): the balance gap is at most 1% of the
/// zone.
const KSWAPD_ZONE_BALANCE_GAP_RATIO: u64 = 100;
/// Most pages one direct compaction migrates (a bound on the simulated run, as the kernel's
/// scanners meeting is; 16 MiB of moves).
const MAX_MIGRATE_PER_RUN: u32 = 1 << 12;

/// Per-zone compaction deferral state (`zone->compact_considered`, `compact_defer_shift`,
/// `compact_order_failed`).
/// Starts zeroed, as the kernel's zone struct does.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct CompactDefer {
    pub considered: u32,
    pub defer_shift: u32,
    pub order_failed: u8,
}

impl CompactDefer {
    /// `compaction_deferred`: whether a request of `order` skips compaction (counts the request).
    pub fn deferred(&mut self, order: u8) -> bool {
        if order < self.order_failed {
            return false;
        }
        let limit = 1u32 << self.defer_shift;
        self.considered = (self.considered + 1).min(limit);
        self.considered < limit
    }

    /// `defer_compaction`: compaction for `order` failed.
    pub fn defer(&mut self, order: u8) {
        self.considered = 0;
        self.defer_shift = (self.defer_shift + 1).min(COMPACT_MAX_DEFER_SHIFT);
        self.order_failed = self.order_failed.min(order);
    }

    /// `compaction_restarting`: compaction for `order` runs again after the longest deferral
    /// (its pageblock skip marks are then cleared first).
    pub fn restarting(&self, order: u8) -> bool {
        order >= self.order_failed
            && self.defer_shift == COMPACT_MAX_DEFER_SHIFT
            && self.considered >= 1u32 << self.defer_shift
    }

    /// `compaction_defer_reset`: compaction for `order` succeeded.
    pub fn reset(&mut self, order: u8) {
        self.considered = 0;
        self.defer_shift = 0;
        if order >= self.order_failed {
            self.order_failed = order + 1;
        }
    }
}

/// What `compaction_suitable` decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suitable {
    /// Not enough free memory, or the failure is not due to fragmentation: reclaim instead.
    Skipped,
    /// A suitable free block already exists: the allocation should succeed without compaction.
    Partial,
    /// Compaction may produce the block.
    Continue,
}

/// Adapter giving the buddy allocator's compaction access to frame ownership.
struct FrameMap<'a> {
    owner: &'a mut [u32],
    pages: &'a mut [mm::Page],
    zram: &'a mut [Pfn],
    migrated: u64,
}

impl FrameMover for FrameMap<'_> {
    fn movable(&self, pfn: Pfn) -> bool {
        let o = self.owner[pfn as usize];
        o != NIL && o != OWNER_KERNEL
    }

    fn moved(&mut self, from: Pfn, to: Pfn) {
        let o = self.owner[from as usize];
        self.owner[from as usize] = NIL;
        self.owner[to as usize] = o;
        if o & OWNER_ZRAM_BIT != 0 {
            self.zram[(o & !OWNER_ZRAM_BIT) as usize] = to;
        } else {
            self.pages[o as usize].loc = to;
        }
        self.migrated += 1;
    }
}

impl Kernel {
    /// `compaction_suitable` for an `order` request (one zone).
    pub(crate) fn compaction_suitable(&self, order: u8) -> Suitable {
        let wm = self.params.watermarks;
        if self.free_pages() <= wm.low + (2u64 << order) {
            return Suitable::Skipped;
        }
        match self.buddy.extfrag_index(order) {
            -1000 => Suitable::Partial,
            f if (0..=EXTFRAG_THRESHOLD).contains(&f) => Suitable::Skipped,
            _ => Suitable::Continue,
        }
    }

    /// `compaction_ready` (3.4 `mm/vmscan.c`): whether direct reclaim for an `order` request
    /// aborts because compaction can already proceed (module docs). Counts the request against
    /// the deferral, as the kernel's `compaction_deferred` call does.
    pub(crate) fn compaction_ready(&mut self, order: u8) -> bool {
        if order <= PAGE_ALLOC_COSTLY_ORDER {
            return false;
        }
        let wm = self.params.watermarks;
        let gap = wm
            .low
            .min((self.buddy.nr_pages() as u64).div_ceil(KSWAPD_ZONE_BALANCE_GAP_RATIO));
        let watermark_ok = self.free_pages() > wm.high + gap + (2u64 << order);
        if self.compact_defer.deferred(order) {
            return watermark_ok;
        }
        self.compaction_suitable(order) != Suitable::Skipped && watermark_ok
    }

    /// Run compaction towards a free block of `order` (`direct`: on an allocating thread, not
    /// kcompactd); returns its CPU cost.
    pub(crate) fn compact(&mut self, order: u8, direct: bool) -> Nanos {
        if self.buddy.skip_hints() && self.compact_defer.restarting(order) {
            self.buddy.reset_isolation_suitable();
        }
        // Migration moves pages to other frames (accesses do not look at frames; bumped to be safe).
        self.pt.epoch += 1;
        let mut map = FrameMap {
            owner: &mut self.frame_owner,
            pages: &mut self.pt.pages,
            zram: &mut self.zram_frames,
            migrated: 0,
        };
        let out = self.buddy.compact(order, &mut map, MAX_MIGRATE_PER_RUN);
        if direct && out.scanners_met {
            self.buddy.note_blockskip_flush();
        }
        self.vmstat.pgmigrate_success += out.pages_migrated;
        let scan_ns = (COMPACT_SCAN_NS_HOST * self.params.cpu_factor).round().max(1.0) as Nanos;
        out.pages_scanned * scan_ns
            + out.pages_migrated * (self.params.page_copy_ns + self.params.minor_fault_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deferral_backs_off_exponentially_and_resets() {
        let mut d = CompactDefer::default();
        assert!(!d.deferred(8), "nothing failed yet");
        d.reset(3); // a success at order 3: orders <= 3 are never deferred
        assert_eq!(d.order_failed, 4);
        d.defer(8);
        assert_eq!(d.order_failed, 4, "only lowered by a failure below it");
        // shift 1: the first request after the failure skips, the second compacts.
        assert!(d.deferred(8));
        assert!(!d.deferred(8));
        d.defer(8);
        d.defer(8);
        assert_eq!(d.defer_shift, 3);
        let skipped = (0..8).take_while(|_| d.deferred(8)).count();
        assert_eq!(skipped, 7, "1 << 3 requests considered, the 8th compacts");
        assert!(
            !d.deferred(2),
            "orders below compact_order_failed are not deferred"
        );
        for _ in 0..10 {
            d.defer(8);
        }
        assert_eq!(d.defer_shift, COMPACT_MAX_DEFER_SHIFT);
        assert!(!d.restarting(8), "still backing off");
        assert_eq!((0..64).filter(|_| d.deferred(5)).count(), 63);
        assert!(d.restarting(8), "the run after the longest back-off restarts");
        assert!(!d.restarting(3), "below compact_order_failed");
        d.reset(8);
        assert!(!d.restarting(8));
        assert!(!d.deferred(8));
        assert_eq!(d.order_failed, 9);
    }
}
