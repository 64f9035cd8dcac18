//! The collector's public vocabulary: which collection, why, its cost model, per-GC statistics
//! and the state kept across GCs.

use super::*;

/// Which collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum GcKind {
    /// Young (sticky) generational CC: only regions allocated since the last GC.
    Sticky,
    /// Full CC; `compact` forces evacuation of every region (explicit GC, background transition).
    Full { compact: bool },
}

impl GcKind {
    pub fn is_sticky(self) -> bool {
        matches!(self, GcKind::Sticky)
    }
}

/// Why a collection runs (`GcCause`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub enum GcCause {
    /// Concurrent GC requested by crossing `concurrent_start_bytes` (`kGcCauseBackground`).
    Background,
    /// An allocation failed: blocking GC on the allocating thread (`kGcCauseForAlloc`).
    Alloc,
    /// `System.gc()` / tests (and collections run directly through [`collect`]).
    #[default]
    Explicit,
    /// Collector transition on moving to the background (`kGcCauseCollectorTransition`).
    Transition,
    /// A policy's periodic task ([`RuntimeHooks::next_task`]).
    Policy,
}

impl GcCause {
    /// Lower-case name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            GcCause::Background => "background",
            GcCause::Alloc => "alloc",
            GcCause::Explicit => "explicit",
            GcCause::Transition => "transition",
            GcCause::Policy => "policy",
        }
    }
}

/// Cost constants (see module docs for sources and reasoning).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct GcCosts {
    pub per_visit_ns: f64,
    pub per_ref_ns: f64,
    pub per_byte_copied_ns: f64,
    pub flip_pause_base_ns: f64,
    pub per_root_pause_ns: f64,
    pub per_region_ns: f64,
}

impl Default for GcCosts {
    fn default() -> Self {
        Self {
            per_visit_ns: 60.0,
            per_ref_ns: 3.0,
            per_byte_copied_ns: 0.22,
            flip_pause_base_ns: 150_000.0,
            per_root_pause_ns: 50.0,
            per_region_ns: 2_000.0,
        }
    }
}

/// What one collection did.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct GcStats {
    /// Why it ran (set by [`crate::Runtime::collect`]; [`GcCause::Explicit`] through [`collect`]).
    pub cause: GcCause,
    pub sticky: bool,
    pub compacting: bool,
    pub start: Nanos,
    /// GC-thread time: CPU + fault stalls.
    pub duration_ns: Nanos,
    /// GC CPU charged to the ledger.
    pub cpu_ns: Nanos,
    /// Stalls of the GC thread touching pages (faults).
    pub stall_ns: Nanos,
    /// Main-thread pause: the flip, plus any stop-the-world pause the policy asked for in
    /// [`RuntimeHooks::after_gc`].
    pub pause_ns: Nanos,
    pub visits: u64,
    pub refs_scanned: u64,
    pub objects_copied: u64,
    pub bytes_copied: u64,
    pub freed_objects: u64,
    pub freed_bytes: u64,
    pub regions_evacuated: u32,
    pub regions_unevacuated: u32,
    pub regions_freed: u32,
    /// Pages passed to the backing's `touch` (after coalescing). Full GCs with stock hooks skip
    /// touches of objects marked in place when the backing's touches are free
    /// ([`PageBacking::touches_are_free`]), so this undercounts on such a backing.
    pub pages_touched: u64,
    pub bytes_allocated_after: u64,
    pub target_footprint_after: u64,
}

/// Collector state kept across GCs (`Heap::next_gc_type_` and throughput statistics).
#[derive(Debug, Clone, Default, Serialize)]
pub struct GcState {
    pub next_sticky: bool,
    pub full_count: u64,
    pub sticky_count: u64,
    /// Sum of freed bytes / durations of full GCs (for ART's mean throughput).
    pub full_freed_bytes: u64,
    pub full_duration_ns: u64,
    pub total_cpu_ns: u64,
    pub total_pause_ns: u64,
    pub total_visits: u64,
}
