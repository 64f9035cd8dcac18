//! Page conservation and accounting under random operation sequences: after any sequence of
//! map / touch / madvise / reclaim pressure / swap-in / unmap / exit, every page is in exactly one
//! state and place, frames add up, LRU lists are consistent, and every swapped-in page comes back
//! with the checksum of its content.

mod support;

use content::{ContentStore, SynthMix};
use engine::Actor;
use hotlaunch_kernel as kernel;
use kernel::hooks::KernelHooks;
use kernel::mm::ContentSource;
use kernel::swap::{FlashSwap, SwapBackend};
use kernel::types::*;
use kernel::Kernel;
use proptest::prelude::*;

use support::small_device;

/// Hooks that keep every swap-in read in the swap cache and shrink odd pages first.
fn swap_cache_hooks() -> KernelHooks {
    struct Keep;
    impl kernel::hooks::FaultHook for Keep {
        fn keep_swap_copy(&mut self, _: &mut engine::HookCx, _: &kernel::hooks::PageView) -> bool {
            true
        }
    }
    struct OddShrinker(PageIdx);
    impl kernel::hooks::Shrinker for OddShrinker {
        fn shrink(
            &mut self,
            _: &mut engine::HookCx,
            _: &kernel::hooks::ScanControl,
            want: u64,
            out: &mut Vec<PageIdx>,
        ) {
            // Arbitrary page indices, mapped or not: the kernel must skip what it cannot take.
            for _ in 0..want / 2 {
                self.0 = (self.0 + 7919) % 40_000;
                out.push(self.0 | 1);
            }
        }
    }
    KernelHooks {
        fault: Box::new(Keep),
        shrinkers: vec![Box::new(OddShrinker(0))],
        ..KernelHooks::default()
    }
}

/// Region-style placement: frames freed by a process are HELD for that process (up to 256 per
/// process) instead of going back to the buddy allocator, handed out again to the same process
/// first, stolen by anyone when the buddy allocator is empty, and released when it exits.
#[derive(Default)]
struct Regions {
    held: std::collections::BTreeMap<Pid, Vec<Pfn>>,
    total: u64,
}

impl kernel::hooks::PlacementHook for Regions {
    fn alloc(
        &mut self,
        _: &mut engine::HookCx,
        buddy: &mut kernel::buddy::BuddyAllocator,
        order: u8,
        mt: MigrateType,
        purpose: kernel::hooks::AllocPurpose,
    ) -> Option<Pfn> {
        if order == 0 {
            if let kernel::hooks::AllocPurpose::User { pid, .. } = purpose {
                if let Some(pfn) = self.held.get_mut(&pid).and_then(|v| v.pop()) {
                    self.total -= 1;
                    return Some(pfn);
                }
            }
        }
        buddy.alloc(order, mt).or_else(|| {
            let v = self
                .held
                .values_mut()
                .find(|v| !v.is_empty())
                .filter(|_| order == 0)?;
            self.total -= 1;
            v.pop()
        })
    }

    fn free(
        &mut self,
        _: &mut engine::HookCx,
        buddy: &mut kernel::buddy::BuddyAllocator,
        pfn: Pfn,
        order: u8,
        purpose: kernel::hooks::AllocPurpose,
    ) {
        if let (0, kernel::hooks::AllocPurpose::User { pid, .. }) = (order, purpose) {
            let v = self.held.entry(pid).or_default();
            if v.len() < 256 {
                v.push(pfn);
                self.total += 1;
                return;
            }
        }
        buddy.free(pfn, order)
    }

    fn held_free_pages(&self) -> u64 {
        self.total
    }

    fn process_exit(&mut self, _: &mut engine::HookCx, buddy: &mut kernel::buddy::BuddyAllocator, pid: Pid) {
        for pfn in self.held.remove(&pid).unwrap_or_default() {
            buddy.free(pfn, 0);
            self.total -= 1;
        }
    }
}

fn region_hooks() -> KernelHooks {
    KernelHooks {
        placement: Box::new(Regions::default()),
        ..KernelHooks::default()
    }
}

fn kernel_with(swap_pages: u32) -> Kernel {
    kernel_with_hooks(swap_pages, KernelHooks::default())
}

fn kernel_with_hooks(swap_pages: u32, hooks: KernelHooks) -> Kernel {
    let backends: Vec<Box<dyn SwapBackend>> = if swap_pages > 0 {
        vec![Box::new(FlashSwap::new(swap_pages))]
    } else {
        vec![]
    };
    kernel_with_backends(backends, hooks)
}

fn kernel_with_backends(backends: Vec<Box<dyn SwapBackend>>, hooks: KernelHooks) -> Kernel {
    let mut c = ContentStore::new();
    c.append_synthetic(&SynthMix::default(), 64, 3);
    Kernel::new(&small_device(), c, backends, hooks).unwrap()
}

#[derive(Debug, Clone)]
enum Op {
    Spawn,
    Map {
        proc: usize,
        pages: u32,
        file: bool,
    },
    Touch {
        proc: usize,
        map: usize,
        start: u32,
        len: u32,
        write: bool,
    },
    PageOut {
        proc: usize,
        map: usize,
    },
    Cold {
        proc: usize,
        map: usize,
    },
    WillNeed {
        proc: usize,
        map: usize,
    },
    Unmap {
        proc: usize,
        map: usize,
    },
    Exit {
        proc: usize,
    },
    Advance {
        ms: u64,
    },
    /// Mlock (0), Munlock (1) or WriteAhead (2) over a whole mapping.
    Lock {
        proc: usize,
        map: usize,
        which: u8,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => Just(Op::Spawn),
        2 => (0..6usize, 1..6000u32, any::<bool>()).prop_map(|(proc, pages, file)| Op::Map { proc, pages, file }),
        6 => (0..6usize, 0..4usize, 0..6000u32, 1..3000u32, any::<bool>())
            .prop_map(|(proc, map, start, len, write)| Op::Touch { proc, map, start, len, write }),
        1 => (0..6usize, 0..4usize).prop_map(|(proc, map)| Op::PageOut { proc, map }),
        1 => (0..6usize, 0..4usize).prop_map(|(proc, map)| Op::Cold { proc, map }),
        1 => (0..6usize, 0..4usize).prop_map(|(proc, map)| Op::WillNeed { proc, map }),
        1 => (0..6usize, 0..4usize).prop_map(|(proc, map)| Op::Unmap { proc, map }),
        1 => (0..6usize).prop_map(|proc| Op::Exit { proc }),
        1 => (1..500u64).prop_map(|ms| Op::Advance { ms }),
    ]
}

/// `op()` plus mlock / munlock / write-ahead (swap cache).
fn op_ext() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => op(),
        2 => (0..6usize, 0..4usize, 0..3u8).prop_map(|(proc, map, which)| Op::Lock { proc, map, which }),
    ]
}

struct Model {
    procs: Vec<(Pid, Vec<(PageIdx, u32)>)>,
}

fn run_ops(k: &mut Kernel, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut m = Model { procs: Vec::new() };
    let mut now = 0u64;
    for op in ops {
        match *op {
            Op::Spawn => {
                let pid = k.spawn("p", 900, 2);
                m.procs.push((pid, vec![]));
            }
            Op::Map { proc, pages, file } => {
                if let Some((pid, maps)) = m.procs.get_mut(proc) {
                    if k.process(*pid).unwrap().alive {
                        let kind = if file {
                            PageKind::File
                        } else {
                            PageKind::NativeAnon
                        };
                        let src = ContentSource {
                            base: 0,
                            len: 64,
                            seed: pages as u64,
                        };
                        let first = k.mmap(*pid, pages, kind, file, src).unwrap();
                        maps.push((first, pages));
                    }
                }
            }
            Op::Touch {
                proc,
                map,
                start,
                len,
                write,
            } => {
                if let Some((pid, maps)) = m.procs.get(proc) {
                    if let Some(&(first, pages)) = maps.get(map) {
                        let s = start % pages;
                        let n = len.min(pages - s);
                        match k.access_range(now, Actor::AppMain(*pid), first + s, n, write) {
                            Ok(st) => now += st.ns,
                            Err(kernel::KernelError::Killed(_)) | Err(kernel::KernelError::NotMapped(_)) => {}
                            Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
                        }
                    }
                }
            }
            Op::PageOut { proc, map }
            | Op::Cold { proc, map }
            | Op::WillNeed { proc, map }
            | Op::Lock { proc, map, .. } => {
                if let Some((pid, maps)) = m.procs.get(proc) {
                    if let Some(&(first, pages)) = maps.get(map) {
                        let advice = match op {
                            Op::PageOut { .. } => Advice::PageOut,
                            Op::Cold { .. } => Advice::Cold,
                            Op::Lock { which: 0, .. } => Advice::Mlock,
                            Op::Lock { which: 1, .. } => Advice::Munlock,
                            Op::Lock { .. } => Advice::WriteAhead,
                            _ => Advice::WillNeed,
                        };
                        if k.process(*pid).unwrap().alive {
                            now += k.madvise(now, Actor::AppMain(*pid), first, pages, advice).ns;
                        }
                    }
                }
            }
            Op::Unmap { proc, map } => {
                if let Some((pid, maps)) = m.procs.get_mut(proc) {
                    if map < maps.len() {
                        let (first, _) = maps.remove(map);
                        let _ = k.munmap(*pid, first);
                    }
                }
            }
            Op::Exit { proc } => {
                if let Some((pid, maps)) = m.procs.get_mut(proc) {
                    k.exit(*pid);
                    maps.clear();
                }
            }
            Op::Advance { ms } => {
                now += ms * 1_000_000;
                k.advance_to(now);
            }
        }
        // OOM-killed processes lose their mappings.
        for pid in k.take_oom_kills() {
            if let Some((_, maps)) = m.procs.iter_mut().find(|(p, _)| *p == pid) {
                maps.clear();
            }
        }
        k.check_invariants().map_err(TestCaseError::fail)?;
    }
    prop_assert_eq!(k.integrity.checksum_mismatches, 0);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn pages_are_conserved_with_flash_swap(ops in prop::collection::vec(op(), 1..60)) {
        let mut k = kernel_with(16_384);
        run_ops(&mut k, &ops)?;
    }

    #[test]
    fn pages_are_conserved_without_swap(ops in prop::collection::vec(op(), 1..40)) {
        let mut k = kernel_with(0);
        run_ops(&mut k, &ops)?;
    }

    #[test]
    fn pages_are_conserved_with_mlock_and_swap_cache(ops in prop::collection::vec(op_ext(), 1..60)) {
        let mut k = kernel_with_hooks(16_384, swap_cache_hooks());
        run_ops(&mut k, &ops)?;
    }

    #[test]
    fn pages_are_conserved_with_mlock_and_tiny_swap(ops in prop::collection::vec(op_ext(), 1..40)) {
        let mut k = kernel_with_hooks(512, swap_cache_hooks());
        run_ops(&mut k, &ops)?;
    }

    #[test]
    fn pages_are_conserved_with_zram_chunks_and_swap_cache(ops in prop::collection::vec(op_ext(), 1..40)) {
        let z = kernel::zram::Zram::with_planner(
            kernel::zram::ZramConfig::new(32 << 20, content::Codec::Lz4),
            content::CostTable::builtin(),
            Box::new(kernel::zram::FixedPlanner { chunk_bytes: 16_384, codec: None }),
        );
        let mut k = kernel_with_backends(vec![Box::new(z)], swap_cache_hooks());
        run_ops(&mut k, &ops)?;
    }

    #[test]
    fn pages_are_conserved_with_region_placement_holding_free_frames(
        ops in prop::collection::vec(op_ext(), 1..60)
    ) {
        let mut k = kernel_with_hooks(16_384, region_hooks());
        run_ops(&mut k, &ops)?;
    }

    #[test]
    fn pages_are_conserved_with_region_placement_and_tiny_swap(ops in prop::collection::vec(op_ext(), 1..40)) {
        let mut k = kernel_with_hooks(512, region_hooks());
        run_ops(&mut k, &ops)?;
    }

    #[test]
    fn pages_are_conserved_with_tiny_swap(ops in prop::collection::vec(op(), 1..40)) {
        let mut k = kernel_with(512);
        run_ops(&mut k, &ops)?;
    }
}

/// Memory pressure swaps pages out and faults them back with identical content.
#[test]
fn pressure_swaps_out_and_back_with_intact_contents() {
    let mut k = kernel_with(65_536);
    let pid = k.spawn("big", 900, 2);
    let managed = k.buddy().nr_pages();
    let pages = managed * 3 / 2;
    let first = k
        .mmap(
            pid,
            pages,
            PageKind::NativeAnon,
            false,
            ContentSource {
                base: 0,
                len: 64,
                seed: 9,
            },
        )
        .unwrap();
    let mut now = 0;
    for round in 0..2 {
        now += k
            .access_range(now, Actor::AppMain(pid), first, pages, round == 0)
            .unwrap()
            .ns;
        k.advance_to(now);
    }
    assert!(
        k.vmstat.pswpout > (managed / 2) as u64,
        "pressure must swap out: {:?}",
        k.vmstat
    );
    assert!(k.vmstat.pswpin > 0);
    assert_eq!(k.integrity.checksum_mismatches, 0);
    assert!(k.integrity.pages_swapped_in >= k.vmstat.pswpin);
    k.check_invariants().unwrap();
    // Watermarks hold after kswapd has run.
    k.advance_to(now + 10_000_000_000);
    assert!(k.free_pages() >= k.params.watermarks.min);
    k.exit(pid);
    k.check_invariants().unwrap();
    assert_eq!(k.meminfo().swapped, 0);
}

/// Without swap, anonymous memory beyond DRAM ends in an OOM kill, never a lost page.
#[test]
fn no_swap_overcommit_oom_kills() {
    let mut k = kernel_with(0);
    let pid = k.spawn("hog", 900, 2);
    let pages = k.buddy().nr_pages() * 2;
    let first = k
        .mmap(
            pid,
            pages,
            PageKind::NativeAnon,
            false,
            ContentSource {
                base: 0,
                len: 64,
                seed: 1,
            },
        )
        .unwrap();
    let r = k.access_range(0, Actor::AppMain(pid), first, pages, true);
    assert!(
        matches!(r, Err(kernel::KernelError::Killed(p)) if p == pid),
        "{r:?}"
    );
    assert_eq!(k.take_oom_kills(), vec![pid]);
    assert_eq!(k.vmstat.oom_kill, 1);
    k.check_invariants().unwrap();
}

/// File pages are dropped under pressure and re-read from flash on the next touch, counted as
/// workingset refaults.
#[test]
fn file_pages_are_dropped_and_refault() {
    let mut k = kernel_with(0);
    let pid = k.spawn("reader", 900, 2);
    let pages = k.buddy().nr_pages() * 3 / 2;
    let first = k
        .mmap(
            pid,
            pages,
            PageKind::File,
            false,
            ContentSource {
                base: 0,
                len: 64,
                seed: 2,
            },
        )
        .unwrap();
    let mut now = 0;
    for _ in 0..2 {
        now += k
            .access_range(now, Actor::AppMain(pid), first, pages, false)
            .unwrap()
            .ns;
    }
    assert!(k.vmstat.workingset_refault_file > 0);
    assert!(k.flash.bytes_read >= 2 * pages as u64 * 4096 - k.buddy().nr_pages() as u64 * 4096);
    k.check_invariants().unwrap();
}

/// Recently used pages survive reclaim; untouched ones go first (LRU order).
#[test]
fn reclaim_prefers_cold_pages() {
    let mut k = kernel_with(65_536);
    let a = k.spawn("a", 900, 2);
    let managed = k.buddy().nr_pages();
    let n = managed / 2;
    let src = ContentSource {
        base: 0,
        len: 64,
        seed: 3,
    };
    let hot = k.mmap(a, n / 4, PageKind::NativeAnon, false, src).unwrap();
    let cold = k.mmap(a, n, PageKind::NativeAnon, false, src).unwrap();
    let mut now = k.access_range(0, Actor::AppMain(a), hot, n / 4, true).unwrap().ns;
    now += k.access_range(now, Actor::AppMain(a), cold, n, true).unwrap().ns;
    // Keep the hot set hot while another allocation forces reclaim.
    let b = k.spawn("b", 900, 2);
    let filler = k.mmap(b, managed / 2, PageKind::NativeAnon, false, src).unwrap();
    for chunk in 0..8 {
        now += k
            .access_range(now, Actor::AppMain(a), hot, n / 4, false)
            .unwrap()
            .ns;
        let step = managed / 16;
        now += k
            .access_range(now, Actor::AppMain(b), filler + chunk * step, step, true)
            .unwrap()
            .ns;
        k.advance_to(now);
    }
    // Let the flash writes in flight complete (their frames are freed then).
    k.advance_to(now + 1_000_000_000);
    assert_eq!(k.writeback_pages(), 0);
    let swapped = |first: u32, len: u32| {
        (first..first + len)
            .filter(|&i| k.page(i).unwrap().state == PageState::Swapped)
            .count() as f64
            / len as f64
    };
    let (h, c) = (swapped(hot, n / 4), swapped(cold, n));
    assert!(c > 0.2, "cold pages should be swapped: {c}");
    assert!(
        h < c / 4.0,
        "hot pages should mostly stay resident: hot {h} vs cold {c}"
    );
}

/// A placement policy's held frames count as free: meminfo, watermarks and the invariants see
/// them, and they are handed out again.
#[test]
fn held_free_frames_count_as_free() {
    let mut k = kernel_with_hooks(16_384, region_hooks());
    let free0 = k.free_pages();
    let pid = k.spawn("app", 900, 2);
    let first = k
        .mmap(
            pid,
            200,
            PageKind::NativeAnon,
            false,
            ContentSource {
                base: 0,
                len: 64,
                seed: 4,
            },
        )
        .unwrap();
    k.access_range(0, Actor::AppMain(pid), first, 200, true).unwrap();
    let buddy_free = k.buddy().nr_free_pages();
    k.discard(first, 200);
    let mi = k.meminfo();
    assert_eq!(mi.held_free, 200);
    assert_eq!(
        k.buddy().nr_free_pages(),
        buddy_free,
        "held, not returned to the buddy allocator"
    );
    assert_eq!(mi.free, buddy_free + 200);
    k.check_invariants().unwrap();
    // Touching again reuses the held frames.
    k.access_range(0, Actor::AppMain(pid), first, 200, true).unwrap();
    assert_eq!(k.meminfo().held_free, 0);
    assert_eq!(k.buddy().nr_free_pages(), buddy_free);
    k.exit(pid);
    k.check_invariants().unwrap();
    assert_eq!(k.free_pages(), free0);
}

/// Watermarks follow Linux's formula.
#[test]
fn watermarks_follow_linux() {
    let w = kernel::Watermarks::linux(1_000_000, 27386, 10);
    assert_eq!(w.min, 6846);
    // tmp = max(6846/4, 1_000_000*10/10000 = 1000) = 1711
    assert_eq!(w.low, 6846 + 1711);
    assert_eq!(w.high, 6846 + 2 * 1711);
}

/// Swap-out to flash: frames stay allocated until the writes complete; direct reclaim waits for
/// them; a touch during writeback is a swap-cache hit; every page is still in exactly one place.
#[test]
fn flash_writeback_holds_frames_until_completion() {
    let mut k = kernel_with(65_536);
    let a = k.spawn("a", 900, 2);
    let managed = k.buddy().nr_pages();
    let src = ContentSource {
        base: 0,
        len: 64,
        seed: 5,
    };
    let n = 4096;
    let first = k.mmap(a, n, PageKind::NativeAnon, false, src).unwrap();
    let now = k.access_range(0, Actor::AppMain(a), first, n, true).unwrap().ns;
    let free0 = k.free_pages();
    k.madvise(now, Actor::AppMain(a), first, n, Advice::PageOut);
    // Submitted, not freed: the pages are under writeback and keep their frames.
    assert_eq!(k.writeback_pages(), n as u64);
    assert_eq!(k.free_pages(), free0);
    k.check_invariants().unwrap();
    // A touch before completion finds the page in the swap cache (no I/O, no swap-in).
    let s = k.access(now, Actor::AppMain(a), first, false).unwrap();
    assert!(s.ns > 0 && k.vmstat.pswpin == 0);
    assert_eq!(k.page(first).unwrap().state, PageState::Resident);
    k.check_invariants().unwrap();
    // Completion frees the rest.
    k.advance_to(now + 2_000_000_000);
    assert_eq!(k.writeback_pages(), 0);
    assert_eq!(k.free_pages(), free0 + n as u64 - 1);
    k.check_invariants().unwrap();
    // Under pressure, direct reclaim throttles on writeback instead of OOM-killing.
    let b = k.spawn("b", 900, 2);
    let hog = k.mmap(b, managed, PageKind::NativeAnon, false, src).unwrap();
    let t = k
        .access_range(now, Actor::AppMain(b), hog, managed, true)
        .unwrap()
        .ns;
    assert!(
        k.vmstat.reclaim_throttle_ns > 0,
        "reclaim waited for writeback: {:?}",
        k.vmstat
    );
    assert_eq!(k.vmstat.oom_kill, 0);
    assert!(t > 0);
    k.check_invariants().unwrap();
    // Every swapped page comes back with its bytes.
    k.advance_to(now + t + 5_000_000_000);
    k.access_range(now + t, Actor::AppMain(a), first, n, false)
        .unwrap();
    assert_eq!(k.integrity.checksum_mismatches, 0);
    k.check_invariants().unwrap();
}

/// Writes submitted out of simulated-time order complete in time order: a page-out at t = 0
/// issued after one at t = 5 s finishes first, and a completion pass at 1 s frees exactly its
/// pages (the writeback queue is kept sorted by completion time, `writeback.rs`).
#[test]
fn writeback_completes_in_time_order_when_submitted_out_of_order() {
    let mut k = kernel_with(65_536);
    let a = k.spawn("a", 900, 2);
    let src = ContentSource {
        base: 0,
        len: 64,
        seed: 9,
    };
    let n = 64;
    let late = k.mmap(a, n, PageKind::NativeAnon, false, src).unwrap();
    let early = k.mmap(a, n, PageKind::NativeAnon, false, src).unwrap();
    k.access_range(0, Actor::AppMain(a), late, n, true).unwrap();
    k.access_range(0, Actor::AppMain(a), early, n, true).unwrap();
    let free0 = k.free_pages();
    k.madvise(5_000_000_000, Actor::AppMain(a), late, n, Advice::PageOut);
    k.madvise(0, Actor::AppMain(a), early, n, Advice::PageOut);
    assert_eq!(k.writeback_pages(), 2 * n as u64);
    k.advance_to(1_000_000_000);
    assert_eq!(k.writeback_pages(), n as u64, "the t = 0 writes completed by 1 s");
    assert_eq!(k.free_pages(), free0 + n as u64);
    for i in 0..n {
        assert_eq!(k.page(early + i).unwrap().state, PageState::Swapped);
        assert_eq!(k.page(late + i).unwrap().state, PageState::Resident);
    }
    k.check_invariants().unwrap();
    k.advance_to(10_000_000_000);
    assert_eq!(k.writeback_pages(), 0);
    assert_eq!(k.free_pages(), free0 + 2 * n as u64);
    k.check_invariants().unwrap();
}
