//! Heap allocations per swapped page in zram (issue 14): a counting global allocator (per thread,
//! so parallel tests do not disturb each other) around store/load/free rounds of real content.
//! The first round fills the compression memo and grows zram's arenas; later rounds reuse them, so
//! steady-state zram bookkeeping must allocate (almost) nothing per page.

use content::{Codec, ContentId, ContentStore, CostTable, SynthMix};
use hotlaunch_kernel::swap::{BackendEnv, FlashDevice, SwapBackend, SwapOutPage};
use hotlaunch_kernel::zram::{FixedPlanner, Zram, ZramConfig};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocs() -> u64 {
    ALLOCS.with(|c| c.get())
}

/// Allocations per page of (first round, later rounds) of `rounds` store+load+free rounds of
/// `ids` in batches of 32, with `chunk` bytes per chunk (4096 = Linux).
fn per_page(store: &ContentStore, ids: &[ContentId], chunk: u32, rounds: usize) -> (f64, f64) {
    let mut z = Zram::with_planner(
        ZramConfig::new(1 << 30, Codec::Lz4),
        CostTable::builtin(),
        Box::new(FixedPlanner {
            chunk_bytes: chunk,
            codec: None,
        }),
    );
    let mut flash = FlashDevice::new(100_000, 200_000, 2000.0, 1000.0);
    let mut handles = Vec::with_capacity(ids.len());
    let mut batch = Vec::with_capacity(32);
    let mut counts = Vec::new();
    for _ in 0..rounds {
        handles.clear();
        let before = allocs();
        for (i, chunk_ids) in ids.chunks(32).enumerate() {
            batch.clear();
            batch.extend(chunk_ids.iter().enumerate().map(|(k, &id)| SwapOutPage {
                page: (i * 32 + k) as u32,
                pid: 1,
                content: id,
                tag: 0,
            }));
            let mut env = BackendEnv {
                now: 0,
                contents: store,
                cpu_factor: 1.0,
                flash: &mut flash,
            };
            z.store(&mut env, &batch, &mut handles).expect("store fits");
        }
        for (&h, &id) in handles.iter().zip(ids) {
            let mut env = BackendEnv {
                now: 0,
                contents: store,
                cpu_factor: 1.0,
                flash: &mut flash,
            };
            assert_eq!(z.load(&mut env, h).checksum, store.checksum(id));
        }
        for &h in &handles {
            z.free(h);
        }
        counts.push(allocs() - before);
    }
    assert_eq!(z.mm_stat().mem_used_total, 0);
    let n = ids.len() as f64;
    let later = counts[1..].iter().sum::<u64>() as f64 / (rounds - 1) as f64;
    (counts[0] as f64 / n, later / n)
}

fn workload() -> (ContentStore, Vec<ContentId>) {
    let mut s = ContentStore::new();
    let distinct: Vec<ContentId> = s.append_synthetic(&SynthMix::default(), 2_000, 7).collect();
    // 20,000 simulated pages share 2,000 content pages (as app pages share content in a run).
    let ids = (0..20_000u64)
        .map(|i| distinct[(i.wrapping_mul(2_654_435_761) % distinct.len() as u64) as usize])
        .collect();
    (s, ids)
}

#[test]
fn zram_steady_state_allocates_almost_nothing_per_page() {
    let (store, ids) = workload();
    let mut worst = (0.0f64, 0);
    for chunk in [4096u32, 1024, 16384] {
        let (first, later) = per_page(&store, &ids, chunk, 4);
        eprintln!(
            "chunk {chunk}: allocations per swapped page: first round {first:.3}, later rounds {later:.3}"
        );
        if later >= worst.0 {
            worst = (later, chunk);
        }
    }
    assert!(
        worst.0 < 0.05,
        "chunk {}: {:.3} allocations per page in steady state",
        worst.1,
        worst.0
    );
}
