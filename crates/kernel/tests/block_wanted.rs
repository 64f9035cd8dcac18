//! Contract test of `PlacementHook::block_wanted` with a small non-stock placement: the pages of
//! one process come from 16-page chunks (order 4) taken from the buddy allocator, one page from
//! the buddy allocator only when no chunk can be had. When the free lists hold no order-4 block,
//! the kernel must work for one (direct compaction, reclaim) before `alloc`, charge it to the
//! faulting task, and ask at most once per allocation, so a hopeless request falls back at once.

mod support;

use engine::{Actor, Category, HookCx};
use hotlaunch_kernel as kernel;
use kernel::buddy::BuddyAllocator;
use kernel::hooks::*;
use kernel::mm::ContentSource;
use kernel::types::*;
use kernel::Kernel;
use std::cell::RefCell;
use std::rc::Rc;

const CHUNK: u8 = 4;
const SRC: ContentSource = ContentSource {
    base: 0,
    len: 64,
    seed: 7,
};

#[derive(Default)]
struct Log {
    /// The process whose pages come from chunks.
    target: Option<Pid>,
    /// Set by the test: on the next `alloc`, hold every free block of order >= CHUNK (so only
    /// the kernel's effort can make one).
    pin: bool,
    /// Frames held back from the buddy allocator (counted as free through `held_free_pages`).
    held: Vec<Pfn>,
    /// Unused frames of the current chunk.
    chunk_free: Vec<Pfn>,
    chunks: u64,
    fallbacks: u64,
    asked: u64,
}

struct Chunks(Rc<RefCell<Log>>);

impl PlacementHook for Chunks {
    fn alloc(
        &mut self,
        _cx: &mut HookCx,
        buddy: &mut BuddyAllocator,
        order: u8,
        mt: MigrateType,
        purpose: AllocPurpose,
    ) -> Option<Pfn> {
        let mut l = self.0.borrow_mut();
        if std::mem::take(&mut l.pin) {
            while buddy.free_block_counts()[CHUNK as usize..].iter().any(|&n| n > 0) {
                let b = buddy.alloc(CHUNK, MigrateType::Movable).expect("a free block");
                l.held.extend(b..b + (1 << CHUNK));
            }
        }
        let ours = matches!(purpose, AllocPurpose::User { pid, .. } if Some(pid) == l.target);
        if order != 0 || !ours {
            // Held frames are counted as free, so they must be handed out when asked.
            return buddy
                .alloc(order, mt)
                .or_else(|| if order == 0 { l.held.pop() } else { None });
        }
        if l.chunk_free.is_empty() {
            if let Some(b) = buddy.alloc(CHUNK, MigrateType::Movable) {
                l.chunks += 1;
                l.chunk_free.extend((b..b + (1 << CHUNK)).rev());
            }
        }
        if let Some(p) = l.chunk_free.pop() {
            return Some(p);
        }
        l.fallbacks += 1;
        buddy.alloc(0, mt).or_else(|| l.held.pop())
    }

    fn held_free_pages(&self) -> u64 {
        let l = self.0.borrow();
        (l.held.len() + l.chunk_free.len()) as u64
    }

    fn block_wanted(
        &mut self,
        _cx: &mut HookCx,
        _buddy: &BuddyAllocator,
        purpose: AllocPurpose,
    ) -> Option<u8> {
        let mut l = self.0.borrow_mut();
        let ours = matches!(purpose, AllocPurpose::User { pid, .. } if Some(pid) == l.target);
        if !ours || !l.chunk_free.is_empty() {
            return None;
        }
        l.asked += 1;
        Some(CHUNK)
    }
}

/// A small kernel with no swap and the chunk placement.
fn kernel() -> (Kernel, Rc<RefCell<Log>>) {
    kernel_on(None)
}

/// [`kernel`] on a given kernel release (`None`: the device's).
fn kernel_on(release: Option<&str>) -> (Kernel, Rc<RefCell<Log>>) {
    let log = Rc::new(RefCell::new(Log::default()));
    let hooks = KernelHooks {
        placement: Box::new(Chunks(log.clone())),
        ..KernelHooks::default()
    };
    let mut d = support::small_device();
    if let Some(r) = release {
        d.android.kernel_release = Some(r.into());
    }
    let k = Kernel::new(&d, support::contents(), Vec::new(), hooks).unwrap();
    (k, log)
}

/// Fill most of memory with two processes' anonymous pages, interleaved frame by frame, and make
/// the remaining large free blocks held: every free block is then below order CHUNK. Returns
/// (the process whose exit leaves order-0 holes, the time reached).
fn fragment(k: &mut Kernel, log: &Rc<RefCell<Log>>) -> (Pid, u64) {
    let (a, b) = (k.spawn("a", 0, 1), k.spawn("b", 0, 1));
    let n = 4096;
    let pa = k.mmap(a, n, PageKind::NativeAnon, false, SRC).unwrap();
    let pb = k.mmap(b, n, PageKind::NativeAnon, false, SRC).unwrap();
    let mut now = 1_000;
    for j in 0..n {
        now += k.access(now, Actor::AppMain(a), pa + j, true).unwrap().ns;
        now += k.access(now, Actor::AppMain(b), pb + j, true).unwrap().ns;
    }
    log.borrow_mut().pin = true;
    (b, now)
}

/// On Linux 3.4 (no compaction skip hints). From 3.7 the set-up's failed compaction leaves every
/// pageblock marked and the holes b leaves are not looked at until the marks are cleared: see
/// [`stale_skip_hints_hide_the_holes_until_cleared`].
#[test]
fn a_wanted_block_is_compacted_for_before_the_placement_falls_back() {
    let (mut k, log) = kernel_on(Some("3.4"));
    let (b, mut now) = fragment(&mut k, &log);
    let t = k.spawn("target", 0, 1);
    log.borrow_mut().target = Some(t);
    let pt = k.mmap(t, 64, PageKind::NativeAnon, false, SRC).unwrap();
    // First page: the pin takes effect inside this `alloc` (after `block_wanted`), so touch one
    // page first, which falls back, then free b's frames.
    now += k.access(now, Actor::AppMain(t), pt, true).unwrap().ns;
    assert_eq!(
        log.borrow().fallbacks,
        1,
        "set-up: no order-4 block while pinning"
    );
    k.exit(b);
    let free = k.buddy().free_block_counts();
    assert!(
        free[CHUNK as usize..].iter().all(|&n| n == 0),
        "set-up: fragmented {free:?}"
    );
    assert!(free[0] > 1000, "set-up: many order-0 holes {free:?}");
    let (stalls, cpu) = (k.vmstat.compact_stall, k.cpu.by_category(Category::Compaction));
    let s = k.access(now, Actor::AppMain(t), pt + 1, true).unwrap();
    let l = log.borrow();
    assert_eq!(l.asked, 2, "asked once per allocation that needs a chunk");
    assert_eq!(
        l.chunks, 1,
        "the kernel compacted an order-4 block for the placement"
    );
    assert_eq!(l.fallbacks, 1, "no fallback once a block could be made");
    assert!(k.vmstat.compact_stall > stalls, "direct compaction ran");
    let charged = k.cpu.by_category(Category::Compaction) - cpu;
    assert!(
        charged > 0 && s.ns >= charged,
        "charged as compaction and stalled the faulting task"
    );
    drop(l);
    // The chunk serves the next 15 pages without asking again.
    for j in 2..17 {
        now += k.access(now, Actor::AppMain(t), pt + j, true).unwrap().ns;
    }
    assert_eq!(log.borrow().asked, 2);
    k.check_invariants().unwrap();
}

#[test]
fn a_hopeless_wanted_block_falls_back_after_one_bounded_effort() {
    let (mut k, log) = kernel();
    // No holes: b stays, so neither compaction nor reclaim (no swap, no file pages) can help.
    let (_b, mut now) = fragment(&mut k, &log);
    let t = k.spawn("target", 0, 1);
    log.borrow_mut().target = Some(t);
    let pt = k.mmap(t, 8, PageKind::NativeAnon, false, SRC).unwrap();
    let stalls = k.vmstat.allocstall;
    for j in 0..8 {
        now += k.access(now, Actor::AppMain(t), pt + j, true).unwrap().ns;
    }
    let l = log.borrow();
    assert_eq!(
        (l.asked, l.fallbacks, l.chunks),
        (8, 8, 0),
        "one ask and one fallback per page"
    );
    // Each hopeless ask costs at most one round of direct reclaim (none while free memory is
    // above high + gap + 2 << order: `compaction_ready` aborts it, as Linux 3.3+ does).
    let rounds = k.vmstat.allocstall - stalls;
    assert!(
        rounds <= 8,
        "at most one reclaim round per hopeless ask: {rounds}"
    );
    drop(l);
    k.check_invariants().unwrap();
}

/// Linux 3.7+ (`PB_migrate_skip`): the set-up's compaction, which found nothing to isolate in
/// pinned memory, marked the pageblocks; after b exits, the next compaction passes them by and
/// the placement falls back, as a 4.9 kernel does until kswapd sleeps or compaction restarts.
#[test]
fn stale_skip_hints_hide_the_holes_until_cleared() {
    let (mut k, log) = kernel_on(Some("4.9"));
    let (b, mut now) = fragment(&mut k, &log);
    let t = k.spawn("target", 0, 1);
    log.borrow_mut().target = Some(t);
    let pt = k.mmap(t, 64, PageKind::NativeAnon, false, SRC).unwrap();
    now += k.access(now, Actor::AppMain(t), pt, true).unwrap().ns;
    assert!(k.buddy().skip_hints());
    let marked = k.buddy().skipped_pageblocks();
    assert!(marked > 0, "the failed set-up compaction marked pageblocks");
    k.exit(b);
    k.access(now, Actor::AppMain(t), pt + 1, true).unwrap();
    let l = log.borrow();
    assert_eq!(
        (l.asked, l.chunks, l.fallbacks),
        (2, 0, 2),
        "marked pageblocks were passed by"
    );
    drop(l);
    k.check_invariants().unwrap();
}
