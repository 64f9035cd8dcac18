//! `cargo run --release -p hotlaunch-runtime --example gc_probe`: per-GC timing and counters on the bench heap.
use engine::CpuLedger;
use runtime::gc::{collect, GcCosts, GcKind};
fn main() {
    let mut heap = runtime::bench::bench_heap(4_000_000);
    let mut b = runtime::NullBacking::default();
    let mut l = CpuLedger::default();
    for i in 0..3 {
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
        println!(
            "gc{i}: {:.3}s visits {} refs {} copied {} evac {} unevac {} live {}",
            t.elapsed().as_secs_f64(),
            st.visits,
            st.refs_scanned,
            st.objects_copied,
            st.regions_evacuated,
            st.regions_unevacuated,
            heap.live_objects
        );
    }
}
