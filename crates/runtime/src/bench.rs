//! GC tracing benchmark (DESIGN §7: ≥ 50 M object visits/s on one core, release build).
//!
//! The graph: [`bench_heap`] generates ~4 M small objects (Fleet Fig. 7 sizes below 256 B) with the
//! default depth-from-roots profile: a forest of spanning trees from ~38 k roots plus ~1 extra
//! reference per object that has reference fields. 85% of the extra references stay in the source's
//! own structure (its parent, a sibling or a child), 10% go to 256 widely shared objects near the
//! roots, and 5% to a uniformly random object anywhere in the heap ([`BENCH_LOCAL_REFS`],
//! [`BENCH_SHARED_REFS`]). This mix is an estimate — Fleet and Marvin publish no reference-distance
//! data — meant to look like a real heap (most references short, a few popular objects, some
//! long-range references) rather than an adversarial random graph. Objects are laid out in the
//! order the collector copies them (as after a compacting GC). [`bench_heap_with`]`(n, 0.0, 0.0)`
//! gives the worst case, every extra reference uniformly random, for comparison.

use crate::backing::NullBacking;
use crate::gc::{collect_standalone, GcCosts, GcKind};
use crate::gen::{generate, GraphSpec, SizeDist};
use crate::heap::{Heap, HeapConfig};
use crate::hooks::StockArt;
use engine::{CpuLedger, RngStreams};
use std::time::Duration;

thread_local! {
    /// Host-time probe of the collector for benchmarks: a thread-CPU clock (ns) and the time
    /// collections on this thread have spent so far. Unset (the default) the collector reads no
    /// clock: simulations never depend on host time.
    static GC_CLOCK: std::cell::Cell<Option<fn() -> u64>> = const { std::cell::Cell::new(None) };
    static GC_HOST_NS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Measure the host CPU time of every collection on this thread with `clock` (thread CPU time,
/// ns), from zero; `None` stops measuring. Read it with [`gc_host_ns`].
pub fn set_gc_clock(clock: Option<fn() -> u64>) {
    GC_CLOCK.with(|c| c.set(clock));
    GC_HOST_NS.with(|t| t.set(0));
}

/// Host CPU ns spent in collections on this thread since [`set_gc_clock`].
pub fn gc_host_ns() -> u64 {
    GC_HOST_NS.with(|t| t.get())
}

/// Times one collection when a clock is set (see [`set_gc_clock`]).
pub(crate) struct GcTimer(Option<(fn() -> u64, u64)>);

impl GcTimer {
    #[inline]
    pub(crate) fn start() -> Self {
        Self(GC_CLOCK.with(|c| c.get()).map(|clock| (clock, clock())))
    }
}

impl Drop for GcTimer {
    fn drop(&mut self) {
        if let Some((clock, t0)) = self.0 {
            let dt = clock().saturating_sub(t0);
            GC_HOST_NS.with(|t| t.set(t.get() + dt));
        }
    }
}

/// Share of the bench heap's extra references that stay in the source's own structure.
pub const BENCH_LOCAL_REFS: f64 = 0.85;
/// Share of the bench heap's extra references to a few hundred shared objects.
pub const BENCH_SHARED_REFS: f64 = 0.10;

/// Build a generated heap of about `objects` objects (small objects, Fleet Fig. 7 sizes below
/// 256 B, ~1 extra reference each) on a no-cost backing.
pub fn bench_heap(objects: u64) -> Heap {
    bench_heap_with(objects, BENCH_LOCAL_REFS, BENCH_SHARED_REFS)
}

/// [`bench_heap`] with another mix of extra references (`0.0, 0.0`: every extra reference goes
/// to a uniformly random object, the worst case for the collector's caches).
pub fn bench_heap_with(objects: u64, local_refs: f64, shared_refs: f64) -> Heap {
    let mut sizes = SizeDist::commercial_apps();
    sizes.buckets.truncate(4);
    let spec = GraphSpec {
        bytes: (objects as f64 * sizes.mean()) as u64,
        sizes,
        local_refs,
        shared_refs,
        ..GraphSpec::default()
    };
    let cap = (spec.bytes * 3).next_power_of_two().max(64 << 20);
    let config = HeapConfig {
        capacity: cap,
        growth_limit: cap,
        ..HeapConfig::default()
    };
    let mut heap = Heap::new(1, config);
    let mut rng = RngStreams::new(7).stream("bench", 0);
    generate(&mut heap, &spec, &mut rng, 0, &mut NullBacking::default()).expect("bench heap fits");
    heap
}

/// Objects visited per second of `clock` (the caller's choice: thread CPU time for an honest rate
/// on a shared machine) by full (non-compacting) GCs over a ~4 M-object heap: the median over the
/// GCs run until `seconds_budget` of that clock has been spent (at least five), so a burst of
/// other load shows up as an outlier rather than a shift. The first GC (which evacuates the
/// freshly allocated heap) is not timed.
pub fn gc_object_visits_per_sec(seconds_budget: f64, clock: fn() -> Duration) -> f64 {
    let mut heap = bench_heap(4_000_000);
    // The same unchanged heap is collected again and again: a replayed trace (`gc::replay`)
    // would count visits it never made. This measures the tracer.
    heap.set_trace_replay(false);
    let mut backing = NullBacking::default();
    let mut ledger = CpuLedger::default();
    let costs = GcCosts::default();
    let mut hooks = StockArt;
    let kind = GcKind::Full { compact: false };
    collect_standalone(&mut heap, &mut hooks, kind, 0, &mut backing, &mut ledger, &costs);
    let start = clock();
    let mut rates = Vec::new();
    while rates.len() < 5 || (clock() - start).as_secs_f64() < seconds_budget {
        let t = clock();
        let st = collect_standalone(&mut heap, &mut hooks, kind, 0, &mut backing, &mut ledger, &costs);
        rates.push(st.visits as f64 / (clock() - t).as_secs_f64().max(1e-9));
    }
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}
