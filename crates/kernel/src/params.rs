//! The kernel's parameters, derived from the device profile and its kernel release in
//! [`crate::Kernel::new`].

use crate::{IonGfp, Watermarks};
use engine::Nanos;
use serde::Serialize;

/// Reclaim and fault cost parameters (from the device profile; see `device` docs for sources).
#[derive(Debug, Clone, Serialize)]
pub struct KernelParams {
    pub swappiness: u32,
    pub page_cluster: u32,
    pub read_ahead_pages: u32,
    pub minor_fault_ns: Nanos,
    pub major_fault_overhead_ns: Nanos,
    pub reclaim_scan_ns: Nanos,
    pub reclaim_unmap_ns: Nanos,
    /// Range zap (shrinker ranges): per present page and per range (`device` `cpu.zap_*`).
    pub zap_page_ns: Nanos,
    pub zap_range_ns: Nanos,
    pub page_copy_ns: Nanos,
    pub cpu_factor: f64,
    pub watermarks: Watermarks,
    /// The ION system heap's `gfp` flags per order (kernel release; see [`ion`]).
    pub ion_gfp: IonGfp,
    /// Android's `vm.min_free_order_shift`: how fast the reserve a high-order allocation must
    /// leave shrinks per order in the watermark check ([`alloc::zone_watermark_ok`]). `None`
    /// on kernels 4.4 and later (and profiles without a release), which dropped the per-order loop.
    pub min_free_order_shift: Option<u32>,
    /// One global LRU instead of one lruvec per process: Android without per-app memory
    /// cgroups (`ro.config.per_app_memcg` false) charges every app to the root memcg
    /// ([`reclaim`]'s `shrink_global`).
    pub global_lru: bool,
    /// With [`Self::global_lru`]: the node's lists ordered by page age (pages stamped when put
    /// at a list head, reclaim takes the oldest tail across processes: `shrink_global_by_age`)
    /// instead of whole processes in `oom_score_adj` order (`[android] node_lru_by_page_age`).
    pub node_lru_by_page_age: bool,
    /// A file refault's distance is compared with active anon + file (kernel >= 5.9, and
    /// profiles without a release), else with active file only (see `fault.rs`).
    pub refault_anon_challenge: bool,
    /// New anon pages (and a page swapped in by its own fault) start on the active anon list, as
    /// before Linux 5.9; only with [`Self::node_lru_by_page_age`] on a pre-5.9 release (see
    /// `node_lru.rs`), else on the inactive list (5.9+; the per-process models' measured start).
    pub new_anon_active: bool,
    /// Linux before 5.8's `get_scan_count` (`recent_rotated / recent_scanned` per type, file only
    /// while the inactive file list is not low): with [`Self::node_lru_by_page_age`] on a pre-5.8
    /// release only (see `scan_balance.rs`), else the 5.8+ reclaim cost model.
    pub scan_balance_49: bool,
    /// With [`Self::scan_balance_49`] before Linux 4.7: the inactive file list is low once it is
    /// smaller than the active one (59dc76b0d4df gave file anon's `sqrt(10 × GB)` ratio in 4.7).
    pub file_ratio_one: bool,
    /// A `write()` calls `mark_page_accessed` on its page, as before Linux 4.7's bbddabe2e436
    /// (releases before 4.7; see `mark_accessed.rs`).
    pub write_marks_accessed: bool,
    /// When direct reclaim has failed and the OOM killer runs: the release's rule
    /// ([`crate::OomRule`], `oom_rule.rs`).
    pub oom_rule: crate::OomRule,
}
