//! Heap sizing after a collection (ART `Heap::GrowForUtilization`) and the next collection's
//! kind (`Heap::next_gc_type_`).

use super::*;

/// Apply a policy's target footprint ([`AfterGc::target_footprint`]) after the stock sizing of
/// this GC, keeping the stock target and trigger to restore at the next state change.
pub(super) fn set_policy_target(heap: &mut Heap, target: u64) {
    let stock = (heap.target_footprint, heap.concurrent_start_bytes);
    heap.stock_target = Some(stock);
    let used = heap.bytes_allocated;
    let target = target.min(heap.config.growth_limit).max(used);
    heap.target_footprint = target;
    heap.concurrent_start_bytes = target.saturating_sub(heap.concurrent_remaining).max(used);
}

/// The app changed state: a policy's target footprint lapses and the stock target of the last GC
/// is back in force.
pub(crate) fn restore_stock_target(heap: &mut Heap) {
    if let Some((target, trigger)) = heap.stock_target.take() {
        heap.target_footprint = target;
        heap.concurrent_start_bytes = trigger;
    }
}

/// `Heap::GrowForUtilization` (see module docs) and the next-GC-type decision.
pub fn grow_for_utilization(heap: &mut Heap, kind: GcKind, st: &GcStats, now: Nanos) {
    heap.stock_target = None;
    let c = &heap.config;
    let used = heap.bytes_allocated;
    let mult = heap.growth_multiplier();
    let adj_max = (c.max_free as f64 * mult) as u64;
    // ART: throughput = freed bytes * 1000 / (duration_ms + 1).
    let throughput = |freed: u64, dur_ns: u64| freed as f64 * 1000.0 / (dur_ns as f64 / 1e6 + 1.0);
    let target = if !kind.is_sticky() {
        let delta = (used as f64 * (1.0 / c.target_utilization - 1.0)) as u64;
        let grow = delta.clamp(c.min_free, c.max_free);
        heap.gc.next_sticky = c.generational;
        heap.gc.full_count += 1;
        heap.gc.full_freed_bytes += st.freed_bytes;
        heap.gc.full_duration_ns += st.duration_ns;
        used + (grow as f64 * mult) as u64
    } else {
        heap.gc.sticky_count += 1;
        let sticky_tp = throughput(st.freed_bytes, st.duration_ns) * 0.5;
        let full_tp = throughput(heap.gc.full_freed_bytes, heap.gc.full_duration_ns);
        // ART also requires `bytes_allocated <= concurrent_start_bytes_` (for a concurrent GC), so
        // sticky GCs that leave the heap above the trigger are followed by a full one.
        heap.gc.next_sticky =
            heap.gc.full_count > 0 && sticky_tp >= full_tp && used <= heap.concurrent_start_bytes;
        if used + adj_max < heap.target_footprint {
            used + adj_max
        } else {
            used.max(heap.target_footprint)
        }
    };
    heap.target_footprint = target.min(heap.config.growth_limit);
    // Allocation rate since the previous GC, times this GC's duration.
    let since = now.saturating_sub(heap.last_gc_end).max(1);
    let rate = heap.bytes_since_gc as f64 / (since as f64 / 1e9);
    let remaining = ((rate * st.duration_ns as f64 / 1e9) as u64).clamp(128 << 10, 512 << 10);
    heap.concurrent_remaining = remaining;
    heap.concurrent_start_bytes = if remaining > heap.target_footprint {
        used
    } else {
        (heap.target_footprint - remaining).max(used)
    };
}

/// ART's choice of collector for a background (concurrent) or allocation GC.
pub fn proposed_kind(heap: &Heap) -> GcKind {
    if heap.config.generational && heap.gc.next_sticky {
        GcKind::Sticky
    } else {
        GcKind::Full { compact: false }
    }
}
