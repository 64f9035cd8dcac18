//! Exact elision of repeated page touches ([`TouchBatch`] with [`PageBacking::touch_epoch`]):
//! touching through a batch that skips repeats of runs that changed nothing leaves the kernel in
//! exactly the state a batch passing every run leaves it in (page table, vmstat, CPU, PSI),
//! whatever kernel events (faults, reclaim under pressure, `MADV_COLD`/`PAGEOUT`, discard,
//! page_idle marks, unmaps) come in between.

use content::{ContentStore, SynthMix};
use device::DeviceProfile;
use engine::{Actor, Nanos, Stall};
use kernel::hooks::KernelHooks;
use kernel::swap::{FlashSwap, SwapBackend};
use kernel::types::{flags, Advice, PageIdx, PageKind, Pid};
use kernel::Kernel;
use proptest::prelude::*;
use runtime::backing::TouchBatch;
use runtime::PageBacking;

/// A Pixel 3 cut to 96 MB of DRAM, so a few thousand touched pages reach memory pressure.
fn kernel() -> Kernel {
    let mut d = DeviceProfile::builtin("pixel3").unwrap();
    d.memory.dram_mb = 96;
    d.memory.kernel_reserve_mb = 32;
    d.memory.system_reserve_mb = 8;
    d.kernel.min_free_kbytes = Some(1024);
    let mut c = ContentStore::new();
    c.append_synthetic(&SynthMix::default(), 64, 3);
    let backends: Vec<Box<dyn SwapBackend>> = vec![Box::new(FlashSwap::new(40_000))];
    Kernel::new(&d, c, backends, KernelHooks::default()).unwrap()
}

/// The kernel without a touch epoch: every run reaches `Kernel::access`.
struct NoElide<'a>(&'a mut Kernel);

impl PageBacking for NoElide<'_> {
    fn map_heap(&mut self, pid: Pid, pages: u32) -> Result<PageIdx, String> {
        self.0.map_heap(pid, pages)
    }
    fn unmap(&mut self, pid: Pid, first: PageIdx, pages: u32) {
        PageBacking::unmap(self.0, pid, first, pages)
    }
    fn touch(&mut self, now: Nanos, actor: Actor, first: PageIdx, n: u32, write: bool) -> Stall {
        PageBacking::touch(self.0, now, actor, first, n, write)
    }
    fn advise(&mut self, now: Nanos, actor: Actor, first: PageIdx, n: u32, advice: Advice) -> Stall {
        PageBacking::advise(self.0, now, actor, first, n, advice)
    }
    fn release(&mut self, now: Nanos, actor: Actor, first: PageIdx, n: u32) {
        PageBacking::release(self.0, now, actor, first, n)
    }
}
#[derive(Debug, Clone)]
enum Op {
    /// A batch touch of `n` pages at `off` in the small hot window of mapping `map`.
    Touch {
        map: usize,
        off: u32,
        n: u32,
        write: bool,
    },
    /// A GC copy loop: read page `src` of the Java heap, write page `dst` of the native mapping,
    /// `times` times over.
    Copy {
        src: u32,
        dst: u32,
        times: u32,
    },
    Flush,
    /// Touch `n` pages of the big mapping from `off` directly (faults, pressure, reclaim).
    Pressure {
        off: u32,
        n: u32,
    },
    Advise {
        map: usize,
        off: u32,
        n: u32,
        pageout: bool,
    },
    Discard {
        map: usize,
        off: u32,
        n: u32,
    },
    Idle {
        map: usize,
        off: u32,
        n: u32,
    },
    /// A `write()` to a page of the file mapping.
    FileWrite {
        off: u32,
    },
    /// Unmap mapping `map` (later touches of it fail).
    Unmap {
        map: usize,
    },
}

/// Mappings: 0 Java heap (hot window), 1 native anon (hot window), 2 file, 3 big anon.
const HOT: u32 = 4;
const BIG: u32 = 16_000;

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => (0..2usize, 0..HOT, 1..3u32, any::<bool>())
            .prop_map(|(map, off, n, write)| Op::Touch { map, off, n, write }),
        4 => (0..HOT, 1..3u32, any::<bool>())
            .prop_map(|(off, n, write)| Op::Touch { map: 2, off, n, write }),
        16 => (0..HOT, 0..HOT, 1..4u32).prop_map(|(src, dst, times)| Op::Copy { src, dst, times }),
        1 => Just(Op::Flush),
        1 => (0..BIG, 1..4000u32).prop_map(|(off, n)| Op::Pressure { off, n }),
        1 => (0..3usize, 0..HOT, 1..8u32, any::<bool>())
            .prop_map(|(map, off, n, pageout)| Op::Advise { map, off, n, pageout }),
        1 => (0..3usize, 0..HOT, 1..8u32).prop_map(|(map, off, n)| Op::Discard { map, off, n }),
        1 => (0..3usize, 0..HOT, 1..8u32).prop_map(|(map, off, n)| Op::Idle { map, off, n }),
        1 => (0..HOT).prop_map(|off| Op::FileWrite { off }),
        1 => (0..2usize).prop_map(|map| Op::Unmap { map: map * 2 }),
    ]
}

/// Run `ops` on a fresh kernel, touching through the kernel itself (`elide`) or [`NoElide`];
/// returns the kernel's observable state.
fn run(ops: &[Op], elide: bool) -> String {
    let mut k = kernel();
    let pid = k.spawn("app", 0, 2);
    let maps = [
        (k.mmap_default(pid, HOT, PageKind::JavaHeap).unwrap(), HOT),
        (k.mmap_default(pid, HOT, PageKind::NativeAnon).unwrap(), HOT),
        (k.mmap_default(pid, HOT * 4, PageKind::File).unwrap(), HOT),
        (k.mmap_default(pid, BIG, PageKind::NativeAnon).unwrap(), BIG),
    ];
    let mut batch = TouchBatch::new(0, Actor::AppGc(pid));
    let mut now: Nanos = 0;
    let mut trace = String::new();
    for op in ops {
        now += 1_000_000;
        // A kernel event: the batch hands over its counted repeats first (the contract of
        // `TouchBatch`: the backing changes only through the batch between syncs).
        let event = !matches!(op, Op::Touch { .. } | Op::Copy { .. });
        if event {
            if elide {
                batch.sync(&mut k);
            } else {
                batch.sync(&mut NoElide(&mut k));
            }
        }
        match *op {
            Op::Touch { map, off, n, write } => {
                let (first, len) = maps[map];
                let n = n.min(len - off);
                if elide {
                    batch.touch(&mut k, first + off, n, write);
                } else {
                    batch.touch(&mut NoElide(&mut k), first + off, n, write);
                }
            }
            Op::Copy { src, dst, times } => {
                for _ in 0..times {
                    if elide {
                        // One object copied: `touch_copy` must touch exactly what the two
                        // touches of the other run do.
                        batch.touch_copy(&mut k, (maps[0].0 + src, 1), (maps[1].0 + dst, 1));
                    } else {
                        batch.touch(&mut NoElide(&mut k), maps[0].0 + src, 1, false);
                        batch.touch(&mut NoElide(&mut k), maps[1].0 + dst, 1, true);
                    }
                }
            }
            Op::Flush => {
                if elide {
                    batch.flush(&mut k);
                } else {
                    batch.flush(&mut NoElide(&mut k));
                }
            }
            Op::Pressure { off, n } => {
                let (first, len) = maps[3];
                let n = n.min(len - off);
                let _ = k.access_range(now, Actor::AppMain(pid), first + off, n, true);
            }
            Op::Advise { map, off, n, pageout } => {
                let (first, len) = maps[map];
                let advice = if pageout { Advice::PageOut } else { Advice::Cold };
                k.madvise(now, Actor::Kernel, first + off, n.min(len - off), advice);
            }
            Op::Discard { map, off, n } => {
                let (first, len) = maps[map];
                k.discard(first + off, n.min(len - off));
            }
            Op::Idle { map, off, n } => {
                let (first, len) = maps[map];
                k.policy_kernel(now, Actor::Kernel)
                    .mark_idle(first + off, n.min(len - off));
            }
            Op::FileWrite { off } => {
                let _ = k.write_file_page(
                    now,
                    Actor::AppMain(pid),
                    maps[2].0 + off,
                    kernel::dirty::PageWrite::Partial,
                );
            }
            Op::Unmap { map } => {
                let _ = k.munmap(pid, maps[map].0);
            }
        }
        if event {
            k.complete_writeback(now);
        }
        // The hot pages after every step (a difference may be undone by later steps).
        for &(first, len) in &maps[..3] {
            for i in first..first + len {
                trace.push_str(&format!("{:?}\n", k.page(i)));
            }
        }
    }
    if elide {
        batch.flush(&mut k);
    } else {
        batch.flush(&mut NoElide(&mut k));
    }
    let end = maps[3].0 + BIG;
    let pages: Vec<String> = (0..end).map(|i| format!("{:?}", k.page(i))).collect();
    format!(
        "batch {} {:?}\nvmstat {:?}\ncpu {:?}\npsi {:?}\nmeminfo {:?}\ncounts {:?}\npages {pages:?}\n{trace}",
        batch.pages,
        batch.stall,
        k.vmstat,
        k.cpu,
        k.psi,
        k.meminfo(),
        k.state_counts()
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn elision_leaves_the_kernel_as_touching_every_run(ops in prop::collection::vec(op(), 1..120)) {
        let with = run(&ops, true);
        let without = run(&ops, false);
        prop_assert!(with == without, "state differs:\n{}", first_diff(&with, &without));
    }
}

fn first_diff(a: &str, b: &str) -> String {
    let at = a
        .bytes()
        .zip(b.bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let from = at.saturating_sub(200);
    format!(
        "with:    …{}\nwithout: …{}",
        &a[from..(at + 200).min(a.len())],
        &b[from..(at + 200).min(b.len())]
    )
}

/// Elision does happen: a GC-like copy loop alternating a source-page read and a destination-
/// page write passes only the first two runs to the kernel, and counts all of them, whether each
/// object's two touches are made one by one or in one [`TouchBatch::touch_copy`].
#[test]
fn alternating_copy_loop_is_elided_and_counted() {
    copy_loop_is_elided(|b, k, first| {
        b.touch(k, first, 1, false);
        b.touch(k, first + 4, 1, true);
    });
    copy_loop_is_elided(|b, k, first| b.touch_copy(k, (first, 1), (first + 4, 1)));
}

/// 101 objects copied from page 0 to page 4 of a fresh heap mapping by `copy`.
fn copy_loop_is_elided(copy: impl Fn(&mut TouchBatch, &mut Kernel, PageIdx)) {
    let mut k = kernel();
    let pid = k.spawn("app", 0, 2);
    let first = k.mmap_default(pid, 8, PageKind::JavaHeap).unwrap();
    let mut batch = TouchBatch::new(0, Actor::AppGc(pid));
    // Fault both pages in first (faults change the epoch: not remembered).
    copy(&mut batch, &mut k, first);
    batch.flush(&mut k);
    let (faults, epoch, before) = (k.vmstat.pgfault, k.touch_epoch(), k.vmstat.page_accesses);
    for _ in 0..100 {
        copy(&mut batch, &mut k, first);
    }
    batch.flush(&mut k);
    assert_eq!(k.vmstat.page_accesses - before, 200);
    assert_eq!(batch.pages, 202);
    assert_eq!(k.vmstat.pgfault, faults);
    assert_eq!(k.touch_epoch(), epoch);
}

/// A reclaim-style deactivation (`MADV_COLD`: the page moves to the inactive tail with ACCESSED
/// cleared) between two touches changes the epoch (the LRU move bumps it), so the second touch
/// reaches the kernel and sets ACCESSED again. Fails without the bump in `PageTable`'s LRU moves.
#[test]
fn deactivation_between_touches_is_not_elided() {
    let mut k = kernel();
    let pid = k.spawn("app", 0, 2);
    let first = k.mmap_default(pid, 8, PageKind::JavaHeap).unwrap();
    let mut batch = TouchBatch::new(0, Actor::AppGc(pid));
    // Fault the pages in (not remembered: faults change the epoch).
    batch.touch(&mut k, first, 2, true);
    batch.touch(&mut k, first + 5, 1, false);
    batch.flush(&mut k);
    // A clean write run, remembered by the batch; a repeat of it is elided.
    batch.touch(&mut k, first, 2, true);
    batch.flush(&mut k);
    let accesses = k.vmstat.page_accesses;
    batch.touch(&mut k, first + 5, 1, false);
    batch.touch(&mut k, first, 1, false);
    batch.flush(&mut k);
    assert_eq!(k.vmstat.page_accesses, accesses + 2);
    k.madvise(0, Actor::Kernel, first, 1, Advice::Cold);
    assert!(!k.page(first).unwrap().has(flags::ACCESSED));
    batch.touch(&mut k, first, 1, false);
    batch.flush(&mut k);
    assert!(
        k.page(first).unwrap().has(flags::ACCESSED),
        "the touch after MADV_COLD was elided"
    );
}

/// The batch keeps the epoch its last touch left and elides repeats without asking the
/// backing: a kernel change behind its back (here `MADV_COLD` without [`TouchBatch::sync`]) is
/// caught when the counted repeats are handed over, instead of silently skipping the touch that
/// should set ACCESSED again.
#[test]
#[should_panic(expected = "the backing changed outside the batch")]
fn change_behind_the_batch_is_caught() {
    let mut k = kernel();
    let pid = k.spawn("app", 0, 2);
    let first = k.mmap_default(pid, 8, PageKind::JavaHeap).unwrap();
    let mut batch = TouchBatch::new(0, Actor::AppGc(pid));
    // Fault both pages in (not remembered).
    batch.touch(&mut k, first, 1, true);
    batch.touch(&mut k, first + 4, 1, false);
    batch.flush(&mut k);
    // Clean runs, remembered; the write stays pending.
    batch.touch(&mut k, first, 1, true);
    batch.touch(&mut k, first + 4, 1, false);
    batch.touch(&mut k, first, 1, true);
    k.madvise(0, Actor::Kernel, first, 1, Advice::Cold);
    // Elided at the stale epoch, caught at the hand-over.
    batch.touch(&mut k, first + 4, 1, false);
    batch.flush(&mut k);
}
