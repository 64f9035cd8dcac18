//! The ION system heap model: order fallback, compaction on high-order attempts as the kernel
//! release's gfp flags allow, and costs that depend on the blocks' orders.

use content::{ContentStore, SynthMix};
use device::DeviceProfile;
use engine::Actor;
use hotlaunch_kernel as kernel;
use kernel::hooks::KernelHooks;
use kernel::mm::ContentSource;
use kernel::types::PageKind;
use kernel::{IonGfp, Kernel};

const SRC: ContentSource = ContentSource {
    base: 0,
    len: 64,
    seed: 7,
};

fn kernel(ion: IonGfp) -> Kernel {
    let mut d = DeviceProfile::builtin("nexus10").unwrap();
    d.memory.dram_mb = 160;
    d.memory.kernel_reserve_mb = 32;
    d.memory.system_reserve_mb = 8;
    d.kernel.min_free_kbytes = Some(1024);
    d.kernel.pageblock_order = 9;
    let mut c = ContentStore::new();
    c.append_synthetic(&SynthMix::default(), 64, 3);
    let mut k = Kernel::new(&d, c, Vec::new(), KernelHooks::default()).unwrap();
    k.params.ion_gfp = ion;
    k
}

/// Fill memory with one process's anonymous pages, then unmap every other page of a second
/// mapping: free memory is plentiful but mostly in order-0 holes between movable pages. Returns
/// the free order-8 blocks left over (the tail the filler did not reach).
fn fragment(k: &mut Kernel) -> u64 {
    let pid = k.spawn("filler", 0, 1);
    let free = k.meminfo().free;
    let n = (free - k.params.watermarks.high - 16) as u32;
    let first = k.mmap(pid, n, PageKind::NativeAnon, false, SRC).unwrap();
    k.access_range(0, Actor::AppMain(pid), first, n, true).unwrap();
    // Release every other page (MADV_DONTNEED-style), leaving order-0 holes.
    for i in (0..n).step_by(2) {
        k.discard(first + i, 1);
    }
    let left = k.buddy().free_block_counts()[8];
    assert!(left <= 2, "{left} order-8 blocks left");
    left
}

#[test]
fn a_fresh_machine_serves_whole_megabyte_blocks_without_compaction() {
    let mut k = kernel(IonGfp::Linux34);
    let b = k.alloc_io_buffer(0, Actor::Kernel, 11 << 20).unwrap();
    assert!(b.blocks.iter().all(|&(_, o)| o == 8), "{:?}", b.blocks);
    assert_eq!(b.blocks.len(), 11);
    assert_eq!(k.io_buffers.compact_stalls, 0);
    assert_eq!(k.io_buffers.compacted_buffers, 0);
    k.free_io_buffer(b);
    k.check_invariants().unwrap();
}

#[test]
fn linux_3_4_compacts_on_high_order_attempts_and_3_10_does_not_at_order_8() {
    let mut old = kernel(IonGfp::Linux34);
    let pre = fragment(&mut old) as usize;
    let a = old.alloc_io_buffer(0, Actor::Kernel, 4 << 20).unwrap();
    let mut new = kernel(IonGfp::Linux310);
    fragment(&mut new);
    let b = new.alloc_io_buffer(0, Actor::Kernel, 4 << 20).unwrap();
    let order8 = |blocks: &[(u32, u8)]| blocks.iter().filter(|b| b.1 == 8).count();
    assert!(
        old.io_buffers.compact_stalls > 0,
        "3.4 compacts for order 8: {:?} pre {pre} counts {:?} {:?}",
        old.io_buffers,
        old.buddy().free_block_counts(),
        old.meminfo()
    );
    // One buffer, however many compaction runs it made: the share of buffers that compacted
    // is counted per buffer, not per run.
    assert_eq!(old.io_buffers.compacted_buffers, 1);
    assert!(
        order8(&a.blocks) > pre,
        "compaction made order-8 blocks: {:?}",
        old.io_buffers
    );
    assert!(order8(&b.blocks) <= pre, "3.10+ order 8: free lists only");
    // Order 4 uses low_order_gfp_flags (the full slow path): it may compact.
    assert!(b.blocks.iter().skip(pre).all(|&(_, o)| o <= 4), "{:?}", b.blocks);
    assert_eq!(
        new.io_buffers.failed_by_order[8], 1,
        "one failed order-8 try, then order 4 for good"
    );
    // Each buffer's compaction time is on its latency.
    assert!(a.latency_ns >= old.io_buffers.compact_ns);
    for k in [&mut old, &mut new] {
        k.check_invariants().unwrap();
    }
}

#[test]
fn latency_grows_with_the_number_of_blocks_not_only_the_bytes() {
    // Same bytes, same clearing: a buffer of smaller blocks pays one allocation + mapping per
    // block (and here the compaction that made them).
    let mut fresh = kernel(IonGfp::Linux310);
    let big = fresh.alloc_io_buffer(0, Actor::Kernel, 2 << 20).unwrap();
    let mut frag = kernel(IonGfp::Linux310);
    fragment(&mut frag);
    // Order 8 cannot be had: order-4 blocks (after compaction) make up the buffer.
    let small = frag.alloc_io_buffer(0, Actor::Kernel, 2 << 20).unwrap();
    assert!(small.blocks.len() > big.blocks.len());
    assert!(
        small.latency_ns > big.latency_ns,
        "{} vs {}",
        small.latency_ns,
        big.latency_ns
    );
    // Clearing happens on free, so the fresh buffer's latency is its blocks only: a call per
    // block plus a `struct page` preparation per page, not a fixed cost per block.
    assert_eq!(big.latency_ns, fresh.io_blocks_cost(&big.blocks));
}

#[test]
fn block_cost_depends_on_the_order() {
    let k = kernel(IonGfp::Linux34);
    let one_meg = k.io_blocks_cost(&[(0, 8)]);
    let sixteen = k.io_blocks_cost(&(0..16).map(|i| (i << 4, 4)).collect::<Vec<_>>());
    let pages = k.io_blocks_cost(&(0..256).map(|i| (i, 0)).collect::<Vec<_>>());
    // Same 1 MiB: the more blocks, the dearer; the per-page part is common to all three.
    assert!(
        one_meg < sixteen && sixteen < pages,
        "{one_meg} {sixteen} {pages}"
    );
    let per_block = (pages - one_meg) / 255;
    assert!(per_block > 0);
    assert_eq!(sixteen - one_meg, 15 * per_block, "linear in the block count");
    // 4 KiB pages cost several times the 1 MiB block (Fig. 11's VAN vs RG gap, before compaction).
    assert!(pages > 5 * one_meg, "{pages} vs {one_meg}");
}

#[test]
fn the_kernel_release_picks_the_heap_flags() {
    assert_eq!(IonGfp::for_kernel(3, 4), IonGfp::Linux34);
    assert_eq!(IonGfp::for_kernel(3, 10), IonGfp::Linux310);
    assert_eq!(IonGfp::for_kernel(4, 9), IonGfp::Linux310);
}

/// Fragment, then allocate and free a 4 MiB buffer (compaction makes its megabyte blocks).
/// Returns the freed buffer's order-8 block heads.
fn freed_buffer(k: &mut Kernel) -> Vec<u32> {
    fragment(k);
    let b = k.alloc_io_buffer(0, Actor::Kernel, 4 << 20).unwrap();
    let mega: Vec<u32> = b.blocks.iter().filter(|b| b.1 == 8).map(|b| b.0).collect();
    assert!(
        !mega.is_empty(),
        "compaction made no order-8 block: {:?}",
        b.blocks
    );
    k.free_io_buffer(b);
    mega
}

/// A process that allocates and touches `pages` anonymous (movable) pages.
fn movable_demand(k: &mut Kernel, pages: u32) {
    let pid = k.spawn("demand", 0, 1);
    let first = k.mmap(pid, pages, PageKind::NativeAnon, false, SRC).unwrap();
    k.access_range(1, Actor::AppMain(pid), first, pages, true)
        .unwrap();
}

#[test]
fn a_freed_buffer_s_megabyte_blocks_serve_the_next_buffer_while_small_blocks_last() {
    // ismm15-livelab's stock gap (reproduce/baseline/ion.rs): order-0 demand between two
    // buffers is served from the smallest free blocks, so the next buffer gets the freed
    // megabyte blocks back without compaction. The blocks sit in pageblocks the unmovable
    // fallback claimed.
    let mut k = kernel(IonGfp::Linux34);
    let mega = freed_buffer(&mut k);
    for &pfn in &mega {
        assert_eq!(
            k.buddy().pageblock_type(pfn),
            kernel::types::MigrateType::Unmovable
        );
    }
    let holes = k.buddy().free_block_counts()[..4]
        .iter()
        .enumerate()
        .map(|(o, n)| n << o)
        .sum::<u64>();
    movable_demand(&mut k, (holes / 2) as u32);
    let stalls = k.io_buffers.compact_stalls;
    let b = k.alloc_io_buffer(2, Actor::Kernel, 4 << 20).unwrap();
    let got: Vec<u32> = b.blocks.iter().filter(|b| b.1 == 8).map(|b| b.0).collect();
    for pfn in &mega {
        assert!(
            got.contains(pfn),
            "block {pfn} of the freed buffer not reused: {got:?}"
        );
    }
    assert_eq!(
        k.io_buffers.compact_stalls, stalls,
        "recycled blocks need no compaction"
    );
    assert!(*k.io_buffers.megablock_free_pages.last().unwrap() >= 256 * mega.len() as u64);
    k.check_invariants().unwrap();
}

#[test]
fn movable_demand_that_drains_the_movable_lists_falls_back_into_the_freed_buffer_s_blocks() {
    // Linux's `__rmqueue_fallback`: once every Movable list is empty, a movable page comes from
    // the largest Unmovable block, i.e. the freed buffer's. This is what keeps an aged phone's
    // I/O buffers from recycling their blocks when free memory sits at the watermarks.
    let mut k = kernel(IonGfp::Linux34);
    let mega = freed_buffer(&mut k);
    let steals = k.buddy().stats().fallback_steals;
    let n = (k.meminfo().free - k.params.watermarks.high - 16) as u32;
    movable_demand(&mut k, n);
    assert!(k.buddy().stats().fallback_steals > steals);
    let split = mega
        .iter()
        .filter(|&&pfn| !(pfn..pfn + 256).all(|f| k.buddy().is_free(f)))
        .count();
    assert!(
        split > 0,
        "no freed megabyte block was touched by the movable demand"
    );
    k.check_invariants().unwrap();
}

#[test]
fn a_costly_order_skips_the_reclaim_round_when_compaction_could_run() {
    // Unmovable holes: no order-8 block the watermark check lets through (the reserve's own
    // block fails it with the holes discounted), nothing compaction can move, yet plenty of free
    // memory.
    let mut k = kernel(IonGfp::Linux34);
    let pages: Vec<_> = std::iter::from_fn(|| k.alloc_kernel(0, Actor::Kernel, 0).0).collect();
    for &pfn in pages.iter().step_by(2) {
        k.free_kernel(pfn, 0);
    }
    let stalls = k.vmstat.allocstall;
    let b = k.alloc_io_buffer(0, Actor::Kernel, 1 << 20).unwrap();
    assert!(b.blocks.iter().all(|&(_, o)| o < 8));
    // Linux 3.4 `shrink_zones` aborts reclaim for order 8 (`compaction_ready`); order 4 and the
    // order-0 pages need none.
    assert_eq!(k.vmstat.allocstall, stalls, "no direct reclaim round for order 8");
    k.free_io_buffer(b);
    k.check_invariants().unwrap();
}
