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
    // Clearing happens on free, so the fresh buffer's latency is its blocks only.
    assert_eq!(
        big.latency_ns,
        big.blocks.len() as u64 * fresh.params.minor_fault_ns
    );
}

#[test]
fn the_kernel_release_picks_the_heap_flags() {
    assert_eq!(IonGfp::for_kernel(3, 4), IonGfp::Linux34);
    assert_eq!(IonGfp::for_kernel(3, 10), IonGfp::Linux310);
    assert_eq!(IonGfp::for_kernel(4, 9), IonGfp::Linux310);
}
