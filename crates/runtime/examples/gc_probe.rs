//! `cargo run --release -p hotlaunch-runtime --example gc_probe [OBJECTS] [GCS] [LOCAL SHARED]`:
//! per-GC timing and counters on the bench heap (default 4 M objects, 3 full non-compacting GCs;
//! the first evacuates the freshly allocated heap). `LOCAL SHARED` change the mix of extra
//! references (`0 0`: all uniformly random, the worst case).
use engine::CpuLedger;
use runtime::gc::{GcCosts, GcKind};

use runtime::gc::collect_standalone as collect;

fn main() {
    let mut args = std::env::args().skip(1);
    let objects = args.next().and_then(|s| s.parse().ok()).unwrap_or(4_000_000);
    let gcs = args.next().and_then(|s| s.parse().ok()).unwrap_or(3);
    let local = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(runtime::bench::BENCH_LOCAL_REFS);
    let shared = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(runtime::bench::BENCH_SHARED_REFS);
    let mut heap = runtime::bench::bench_heap_with(objects, local, shared);
    let mut b = runtime::NullBacking::default();
    let mut l = CpuLedger::default();
    for i in 0..gcs {
        let t = std::time::Instant::now();
        let st = collect(
            &mut heap,
            &mut runtime::StockArt,
            GcKind::Full { compact: false },
            0,
            &mut b,
            &mut l,
            &GcCosts::default(),
        );
        let secs = t.elapsed().as_secs_f64();
        println!(
            "gc{i}: {secs:.3}s ({:.1} M visits/s) visits {} refs {} copied {} evac {} unevac {} live {}",
            st.visits as f64 / secs / 1e6,
            st.visits,
            st.refs_scanned,
            st.objects_copied,
            st.regions_evacuated,
            st.regions_unevacuated,
            heap.live_objects
        );
    }
}
