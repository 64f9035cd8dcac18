//! Contract tests of the kernel's policy seams: for each seam a small non-stock implementation
//! proves the kernel reaches it and that it has its documented effect (see `hooks.rs`).

mod support;

use engine::{Actor, Category, HookCx};
use hotlaunch_kernel as kernel;
use kernel::hooks::*;
use kernel::swap::{
    BackendEnv, BackendUsage, FlashSwap, IoCost, Loaded, SwapBackend, SwapError, SwapOutPage,
};
use kernel::types::*;
use kernel::Kernel;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

use support::{flash, kernel_with, resident_proc, state, SRC};

/// A swap backend that records the tag of every page stored (flash underneath).
struct TagRecorder {
    inner: FlashSwap,
    tags: Rc<RefCell<Vec<(PageIdx, u8)>>>,
}

impl SwapBackend for TagRecorder {
    fn name(&self) -> &'static str {
        "tagrec"
    }
    fn synchronous(&self) -> bool {
        false
    }
    fn store(
        &mut self,
        env: &mut BackendEnv,
        pages: &[SwapOutPage],
        handles: &mut Vec<SwapHandle>,
    ) -> Result<IoCost, SwapError> {
        self.tags
            .borrow_mut()
            .extend(pages.iter().map(|p| (p.page, p.tag)));
        self.inner.store(env, pages, handles)
    }
    fn load(&mut self, env: &mut BackendEnv, handle: SwapHandle) -> Loaded {
        self.inner.load(env, handle)
    }
    fn free(&mut self, handle: SwapHandle) {
        self.inner.free(handle)
    }
    fn usage(&self) -> BackendUsage {
        self.inner.usage()
    }
}

// ------------------------------------------------------------------ shrinker

/// Hands out exactly `want_pages` pages of its pool per call, and records them.
struct PoolShrinker {
    pool: Rc<RefCell<Vec<PageIdx>>>,
    given: Rc<RefCell<Vec<PageIdx>>>,
    passes: Rc<RefCell<Vec<ScanControl>>>,
}

impl Shrinker for PoolShrinker {
    fn shrink(&mut self, cx: &mut HookCx, sc: &ScanControl, want: u64, out: &mut Vec<PageIdx>) {
        cx.charge(100);
        self.passes.borrow_mut().push(*sc);
        let mut pool = self.pool.borrow_mut();
        for _ in 0..want {
            let Some(p) = pool.pop() else { break };
            out.push(p);
            self.given.borrow_mut().push(p);
        }
    }
}

#[test]
fn shrinker_frees_exactly_what_it_returns() {
    let pool = Rc::new(RefCell::new(Vec::new()));
    let given = Rc::new(RefCell::new(Vec::new()));
    let passes = Rc::new(RefCell::new(Vec::new()));
    let hooks = KernelHooks {
        shrinkers: vec![Box::new(PoolShrinker {
            pool: pool.clone(),
            given: given.clone(),
            passes: passes.clone(),
        })],
        ..KernelHooks::default()
    };
    let mut k = kernel_with(flash(65_536), hooks);
    let managed = k.buddy().nr_pages();
    let mut now = 0;
    let (_, victim) = resident_proc(&mut k, "victim", 900, managed / 2, &mut now);
    // The pool: every other page of the victim, in a scattered order.
    pool.borrow_mut()
        .extend((0..managed / 2).filter(|i| i % 2 == 0).map(|i| victim + i));
    // A second process needs more than the free memory: reclaim must run.
    let (_, filler) = resident_proc(&mut k, "filler", 900, managed / 2, &mut now);
    k.advance_to(now + 1_000_000_000);
    let given: BTreeSet<PageIdx> = given.borrow().iter().copied().collect();
    assert!(!given.is_empty(), "the shrinker must be asked");
    let out: BTreeSet<PageIdx> = (victim..victim + managed / 2)
        .chain(filler..filler + managed / 2)
        .filter(|&i| state(&k, i) != PageState::Resident)
        .collect();
    assert_eq!(
        out, given,
        "exactly the pages the shrinker returned are reclaimed"
    );
    assert_eq!(k.vmstat.pswpout, given.len() as u64);
    let passes = passes.borrow();
    assert!(passes.iter().any(|sc| sc.kswapd));
    assert!(passes.windows(2).all(|w| w[0].pass < w[1].pass), "pass increases");
    assert!(k.cpu.by_category(Category::Policy) >= 100 * passes.len() as u64);
    k.check_invariants().unwrap();
}

// ------------------------------------------------------------------ victim order and views

struct ForegroundLast {
    seen: Rc<RefCell<Vec<ProcView>>>,
}

impl ReclaimHook for ForegroundLast {
    fn lruvec_order(&mut self, _cx: &mut HookCx, _sc: &ScanControl, procs: &[ProcView], out: &mut Vec<Pid>) {
        *self.seen.borrow_mut() = procs.to_vec();
        out.extend(procs.iter().filter(|p| !p.foreground).map(|p| p.pid));
    }
}

#[test]
fn victim_selection_sees_process_views_and_decides_the_order() {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let hooks = KernelHooks {
        reclaim: Box::new(ForegroundLast { seen: seen.clone() }),
        ..KernelHooks::default()
    };
    let mut k = kernel_with(flash(65_536), hooks);
    let managed = k.buddy().nr_pages();
    let mut now = 0;
    let (fg, fg_first) = resident_proc(&mut k, "fg", 0, managed / 3, &mut now);
    let (bg, bg_first) = resident_proc(&mut k, "bg", 900, managed / 3, &mut now);
    let (_, _) = resident_proc(&mut k, "bg2", 900, managed / 3, &mut now);
    k.advance_to(now + 1_000_000_000);
    let views = seen.borrow();
    let v = views.iter().find(|p| p.pid == fg).unwrap();
    assert!(v.foreground && v.adj == 0 && v.alive && v.rss > 0);
    assert!(!views.iter().find(|p| p.pid == bg).unwrap().foreground);
    // The foreground process is never scanned: all its pages stay resident.
    assert!((fg_first..fg_first + managed / 3).all(|i| state(&k, i) == PageState::Resident));
    assert!((bg_first..bg_first + managed / 3).any(|i| state(&k, i) == PageState::Swapped));
    k.check_invariants().unwrap();
}

// ------------------------------------------------------------------ swap_tag on PAGEOUT

struct TagByParity {
    asked: Rc<RefCell<Vec<PageIdx>>>,
}

impl ReclaimHook for TagByParity {
    fn swap_tag(&mut self, _cx: &mut HookCx, page: &PageView) -> u8 {
        self.asked.borrow_mut().push(page.idx);
        1 + (page.idx % 2) as u8
    }
}

#[test]
fn swap_tag_is_asked_on_madvise_pageout_and_reaches_the_backend() {
    let asked = Rc::new(RefCell::new(Vec::new()));
    let tags = Rc::new(RefCell::new(Vec::new()));
    let hooks = KernelHooks {
        reclaim: Box::new(TagByParity { asked: asked.clone() }),
        ..KernelHooks::default()
    };
    let backend = TagRecorder {
        inner: FlashSwap::new(4096),
        tags: tags.clone(),
    };
    let mut k = kernel_with(vec![Box::new(backend)], hooks);
    let mut now = 0;
    let (pid, first) = resident_proc(&mut k, "app", 900, 100, &mut now);
    k.madvise(now, Actor::AppMain(pid), first, 100, Advice::PageOut);
    let want: Vec<PageIdx> = (first..first + 100).collect();
    assert_eq!(*asked.borrow(), want);
    let got = tags.borrow();
    assert_eq!(got.len(), 100);
    assert!(got.iter().all(|&(p, t)| t == 1 + (p % 2) as u8));
    k.check_invariants().unwrap();
}

// ------------------------------------------------------------------ mlock

#[test]
fn mlocked_pages_are_never_reclaimed_and_count_as_mlocked() {
    let mut k = kernel_with(flash(65_536), KernelHooks::default());
    let managed = k.buddy().nr_pages();
    let mut now = 0;
    let (pid, locked) = resident_proc(&mut k, "sys", -900, managed / 4, &mut now);
    k.madvise(now, Actor::AppMain(pid), locked, managed / 4, Advice::Mlock);
    assert_eq!(k.meminfo().mlocked, (managed / 4) as u64);
    // PAGEOUT of an mlocked range does nothing.
    k.madvise(now, Actor::AppMain(pid), locked, managed / 4, Advice::PageOut);
    // Pressure far beyond memory.
    let (hog, hog_first) = resident_proc(&mut k, "hog", 900, managed, &mut now);
    now += k
        .access_range(now, Actor::AppMain(hog), hog_first, managed, false)
        .unwrap()
        .ns;
    k.advance_to(now + 1_000_000_000);
    assert!(k.vmstat.pswpout > 0);
    assert!((locked..locked + managed / 4).all(|i| state(&k, i) == PageState::Resident));
    k.check_invariants().unwrap();
    // munlock: the pages are ordinary again and a PAGEOUT reclaims them.
    k.madvise(now, Actor::AppMain(pid), locked, managed / 4, Advice::Munlock);
    assert_eq!(k.meminfo().mlocked, 0);
    k.madvise(now, Actor::AppMain(pid), locked, managed / 4, Advice::PageOut);
    // The flash writes complete later; the frames are freed then.
    k.advance_to(now + 3_000_000_000);
    assert!((locked..locked + managed / 4).all(|i| state(&k, i) == PageState::Swapped));
    k.check_invariants().unwrap();
}

// ------------------------------------------------------------------ idle tracking and facade

#[test]
fn idle_bits_are_cleared_by_access_and_untouched_by_reclaim() {
    let mut k = kernel_with(flash(65_536), KernelHooks::default());
    let managed = k.buddy().nr_pages();
    let mut now = 0;
    let (pid, first) = resident_proc(&mut k, "app", 900, 1000, &mut now);
    {
        let mut pk = k.policy_kernel(now, Actor::Kernel);
        pk.mark_idle(first, 1000);
        assert!((first..first + 1000).all(|i| pk.is_idle(i)));
    }
    // Touch the first half (a hit) and page out + fault back a quarter of the rest.
    now += k
        .access_range(now, Actor::AppMain(pid), first, 500, false)
        .unwrap()
        .ns;
    k.madvise(now, Actor::AppMain(pid), first + 500, 250, Advice::PageOut);
    // Reclaim pressure scans (and clears the accessed bit of) the rest.
    let (_, _) = resident_proc(&mut k, "hog", 900, managed, &mut now);
    k.advance_to(now + 1_000_000_000);
    now += k
        .access_range(now, Actor::AppMain(pid), first + 500, 100, false)
        .unwrap()
        .ns;
    let pk = k.policy_kernel(now, Actor::Kernel);
    assert!(
        (first..first + 600).all(|i| !pk.is_idle(i)),
        "accessed pages are not idle"
    );
    assert!(
        (first + 600..first + 1000).all(|i| pk.is_idle(i)),
        "reclaim keeps idle bits"
    );
    k.check_invariants().unwrap();
}

#[test]
fn facade_queues_hook_reaching_operations_and_applies_them_in_order() {
    let mut k = kernel_with(flash(65_536), KernelHooks::default());
    let mut now = 0;
    let (pid, first) = resident_proc(&mut k, "app", 900, 256, &mut now);
    {
        let mut pk = k.policy_kernel(now, Actor::AppMain(pid));
        assert_eq!(pk.vmas(pid), vec![(first, 256, PageKind::NativeAnon)]);
        let pv = pk.process(pid).unwrap();
        assert_eq!((pv.rss, pv.swap, pv.foreground), (256, 0, false));
        *pk.policy_bits_mut(first) = 0x5a;
        pk.set_protected(first, 4, true);
        pk.madvise(first, 128, Advice::PageOut);
        pk.mlock(first + 128, 128);
        pk.munlock(first + 200, 56);
        pk.compact_process(pid);
        pk.cx().charge(1234);
        pk.cx().schedule(now + 5, 42);
        // Nothing happened yet.
        assert_eq!(pk.page(first).unwrap().state, PageState::Resident);
        assert!(pk.page(first).unwrap().protected());
        assert_eq!(pk.page(first).unwrap().policy_bits, 0x5a);
    }
    assert_eq!(k.pending_policy_cmds(), 4);
    let stall = k.apply_policy_cmds();
    assert!(stall.ns > 0, "PAGEOUT and migration cost the caller");
    assert_eq!(k.pending_policy_cmds(), 0);
    k.advance_to(now + 1_000_000_000);
    assert!((first..first + 128).all(|i| state(&k, i) == PageState::Swapped));
    assert_eq!(k.meminfo().mlocked, 72);
    assert!(k.vmstat.pgmigrate_success >= 128);
    assert_eq!(k.cpu.by_category(Category::Policy), 1234);
    assert_eq!(k.timers.drain().collect::<Vec<_>>(), vec![(now + 5, 42)]);
    k.check_invariants().unwrap();
}

// ------------------------------------------------------------------ swap cache

struct KeepCopies {
    asked: Rc<RefCell<u64>>,
}

impl FaultHook for KeepCopies {
    fn keep_swap_copy(&mut self, _cx: &mut HookCx, _page: &PageView) -> bool {
        *self.asked.borrow_mut() += 1;
        true
    }
}

#[test]
fn write_ahead_then_reclaim_needs_no_io_and_a_write_drops_the_copy() {
    let asked = Rc::new(RefCell::new(0));
    let hooks = KernelHooks {
        fault: Box::new(KeepCopies { asked: asked.clone() }),
        ..KernelHooks::default()
    };
    let mut k = kernel_with(flash(65_536), hooks);
    let mut now = 0;
    let (pid, first) = resident_proc(&mut k, "app", 900, 256, &mut now);
    let a = Actor::AppMain(pid);
    let written0 = k.flash.bytes_written;
    k.madvise(now, a, first, 256, Advice::WriteAhead);
    assert_eq!(k.flash.bytes_written - written0, 256 * 4096, "one copy per page");
    assert!((first..first + 256).all(|i| state(&k, i) == PageState::Resident));
    assert!((first..first + 256).all(|i| k.page(i).unwrap().has(flags::SWAPCACHE)));
    assert_eq!(k.backends()[0].usage().stored_pages, 256);
    k.check_invariants().unwrap();
    // A second write-ahead stores nothing new.
    k.madvise(now, a, first, 256, Advice::WriteAhead);
    assert_eq!(k.flash.bytes_written - written0, 256 * 4096);
    // Reclaim: unmap only, no write, no compression.
    let (written1, cpu1) = (k.flash.bytes_written, k.cpu.by_category(Category::Compress));
    k.madvise(now, a, first, 256, Advice::PageOut);
    assert_eq!(k.flash.bytes_written, written1);
    assert_eq!(k.cpu.by_category(Category::Compress), cpu1);
    assert!((first..first + 256).all(|i| state(&k, i) == PageState::Swapped));
    assert_eq!(k.backends()[0].usage().stored_pages, 256);
    k.check_invariants().unwrap();
    // A read fault keeps the copy (hook says so): swap-cached again, still stored.
    now += k.access(now, a, first, false).unwrap().ns;
    assert!(*asked.borrow() >= 1);
    assert!(k.page(first).unwrap().has(flags::SWAPCACHE));
    assert_eq!(k.backends()[0].usage().stored_pages, 256);
    k.check_invariants().unwrap();
    // A write drops the copy and frees the slot.
    now += k.access(now, a, first, true).unwrap().ns;
    assert!(!k.page(first).unwrap().has(flags::SWAPCACHE));
    assert_eq!(k.backends()[0].usage().stored_pages, 255);
    // A write fault on a swapped page never keeps its copy.
    let before = *asked.borrow();
    k.access(now, a, first + 255, true).unwrap();
    assert!(!k.page(first + 255).unwrap().has(flags::SWAPCACHE));
    assert!(*asked.borrow() >= before);
    k.check_invariants().unwrap();
    k.exit(pid);
    assert_eq!(k.backends()[0].usage().stored_pages, 0);
    k.check_invariants().unwrap();
}

// ------------------------------------------------------------------ faults on zram

fn zram(chunk_bytes: u32) -> Vec<Box<dyn SwapBackend>> {
    use content::{Codec, CostTable};
    use kernel::zram::{FixedPlanner, Zram, ZramConfig};
    let planner = FixedPlanner {
        chunk_bytes,
        codec: None,
    };
    let z = Zram::with_planner(
        ZramConfig::new(64 << 20, Codec::Lz4),
        CostTable::builtin(),
        Box::new(planner),
    );
    vec![Box::new(z)]
}

fn kernel_cpu(k: &Kernel) -> u64 {
    k.cpu
        .by_actor_kind()
        .iter()
        .find(|(n, _)| *n == "kernel")
        .unwrap()
        .1
}

struct NextPages {
    calls: Rc<RefCell<Vec<PageIdx>>>,
    loaded: Rc<RefCell<Vec<PageIdx>>>,
}

impl FaultHook for NextPages {
    fn after_major_fault(&mut self, _cx: &mut HookCx, fault: &PageView, out: &mut Vec<PageIdx>) {
        self.calls.borrow_mut().push(fault.idx);
        // The faulting page itself is resident already: asked for, not loaded.
        out.extend(fault.idx..=fault.idx + 8);
    }

    fn preloaded(&mut self, _cx: &mut HookCx, pages: &[PageIdx]) {
        self.loaded.borrow_mut().extend_from_slice(pages);
    }
}

/// Swap out 64 pages of a new process; returns (pid, first page, now).
fn swapped_proc(k: &mut Kernel) -> (Pid, PageIdx, u64) {
    let mut now = 0;
    let (pid, first) = resident_proc(k, "app", 900, 64, &mut now);
    k.madvise(now, Actor::AppMain(pid), first, 64, Advice::PageOut);
    assert!((first..first + 64).all(|i| state(k, i) == PageState::Swapped));
    (pid, first, now + 1_000_000)
}

#[test]
fn fault_hook_on_zram_is_called_and_its_pages_arrive_off_the_critical_path() {
    let calls = Rc::new(RefCell::new(Vec::new()));
    let loaded = Rc::new(RefCell::new(Vec::new()));
    let hooks = KernelHooks {
        fault: Box::new(NextPages {
            calls: calls.clone(),
            loaded: loaded.clone(),
        }),
        ..KernelHooks::default()
    };
    let mut k = kernel_with(zram(4096), hooks);
    let mut stock = kernel_with(zram(4096), KernelHooks::default());
    let (pid, first, now) = swapped_proc(&mut k);
    let (spid, sfirst, snow) = swapped_proc(&mut stock);
    let kcpu = kernel_cpu(&k);
    let stall = k.access(now, Actor::AppMain(pid), first, false).unwrap();
    let stock_stall = stock.access(snow, Actor::AppMain(spid), sfirst, false).unwrap();
    assert_eq!(
        *calls.borrow(),
        vec![first],
        "called once, for the task's fault only"
    );
    assert_eq!(stall, stock_stall, "prefetching does not lengthen the fault");
    assert!(kernel_cpu(&k) > kcpu, "the prefetch is kernel work");
    assert!((first + 1..=first + 8).all(|i| state(&k, i) == PageState::Resident));
    assert_eq!(state(&k, first + 9), PageState::Swapped);
    assert_eq!(
        *loaded.borrow(),
        (first + 1..=first + 8).collect::<Vec<_>>(),
        "only the pages actually loaded are reported"
    );
    // The prefetched pages are now hits: no fault, no stall, no codec call.
    let majors = k.vmstat.pgmajfault;
    let dec = k.cpu.by_category(Category::Decompress);
    let s = k
        .access_range(now, Actor::AppMain(pid), first + 1, 8, false)
        .unwrap();
    assert_eq!((s.ns, k.vmstat.pgmajfault), (0, majors));
    assert_eq!(k.cpu.by_category(Category::Decompress), dec);
    k.check_invariants().unwrap();
}

#[test]
fn a_multi_page_zram_chunk_is_decompressed_once_for_all_its_pages() {
    let mut k = kernel_with(zram(16_384), KernelHooks::default());
    let (pid, first, now) = swapped_proc(&mut k);
    let a = Actor::AppMain(pid);
    let d0 = k.cpu.by_category(Category::Decompress);
    k.access(now, a, first, false).unwrap();
    let d1 = k.cpu.by_category(Category::Decompress);
    assert!(d1 > d0);
    // The chunk-mates came in with the faulting page and keep their copy (swap cache).
    for i in first + 1..first + 4 {
        assert_eq!(state(&k, i), PageState::Resident);
        assert!(k.page(i).unwrap().has(flags::SWAPCACHE));
    }
    assert_eq!(state(&k, first + 4), PageState::Swapped, "next chunk untouched");
    let majors = k.vmstat.pgmajfault;
    let s = k.access_range(now, a, first + 1, 3, false).unwrap();
    assert_eq!(s.ns, 0);
    assert_eq!(k.vmstat.pgmajfault, majors);
    assert_eq!(
        k.cpu.by_category(Category::Decompress),
        d1,
        "no second decompression"
    );
    assert_eq!(k.integrity.checksum_mismatches, 0);
    k.check_invariants().unwrap();
    // Reclaiming the clean chunk-mates again costs no compression.
    let c = k.cpu.by_category(Category::Compress);
    k.madvise(now, a, first + 1, 3, Advice::PageOut);
    assert_eq!(k.cpu.by_category(Category::Compress), c);
    assert!((first + 1..first + 4).all(|i| state(&k, i) == PageState::Swapped));
    k.check_invariants().unwrap();
    k.exit(pid);
    assert_eq!(k.backends()[0].usage().stored_pages, 0);
    k.check_invariants().unwrap();
}

// ------------------------------------------------------------------ placement

struct RecordPurposes {
    seen: Rc<RefCell<Vec<(AllocPurpose, engine::Actor)>>>,
}

impl PlacementHook for RecordPurposes {
    fn alloc(
        &mut self,
        cx: &mut HookCx,
        buddy: &mut kernel::buddy::BuddyAllocator,
        order: u8,
        mt: MigrateType,
        purpose: AllocPurpose,
    ) -> Option<Pfn> {
        self.seen.borrow_mut().push((purpose, cx.actor));
        buddy.alloc(order, mt)
    }
}

#[test]
fn placement_sees_page_kind_process_class_and_kernel_purposes_and_can_migrate_a_process() {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let hooks = KernelHooks {
        placement: Box::new(RecordPurposes { seen: seen.clone() }),
        ..KernelHooks::default()
    };
    let mut k = kernel_with(flash(4096), hooks);
    let pid = k.spawn("persistent", -800, 1);
    k.set_proc_class(pid, ProcClass::Persistent);
    let anon = k.mmap(pid, 4, PageKind::JavaHeap, false, SRC).unwrap();
    let file = k.mmap(pid, 4, PageKind::File, false, SRC).unwrap();
    k.access(0, Actor::AppMain(pid), anon, true).unwrap();
    k.access(0, Actor::AppMain(pid), file, false).unwrap();
    let (gpu, _) = k.alloc_kernel_as(0, Actor::Kernel, 2, AllocPurpose::Gpu);
    let (vm, _) = k.alloc_kernel_as(0, Actor::Kernel, 0, AllocPurpose::Vmalloc);
    {
        let s = seen.borrow();
        let has = |p: AllocPurpose| s.iter().any(|&(q, _)| q == p);
        let class = ProcClass::Persistent;
        assert!(has(AllocPurpose::User {
            pid,
            kind: PageKind::JavaHeap,
            class
        }));
        assert!(has(AllocPurpose::User {
            pid,
            kind: PageKind::File,
            class
        }));
        assert!(has(AllocPurpose::Gpu) && has(AllocPurpose::Vmalloc));
    }
    k.free_kernel_as(gpu.unwrap(), 2, AllocPurpose::Gpu);
    k.free_kernel_as(vm.unwrap(), 0, AllocPurpose::Vmalloc);
    // Migration: one placement call per resident page, on the caller; CPU charged to it.
    seen.borrow_mut().clear();
    let resident = k.process(pid).unwrap().rss();
    let caller = Actor::AppMain(pid);
    let stall = k.migrate_process(1_000, caller, pid);
    assert_eq!(seen.borrow().len() as u64, resident);
    assert!(seen.borrow().iter().all(|&(_, a)| a == caller));
    assert!(stall.ns > 0);
    assert_eq!(k.vmstat.pgmigrate_success, resident);
    k.check_invariants().unwrap();
}

/// Moves only pages in even frames (a placement that migrates part of a process).
struct EvenFramesMove {
    asked: Rc<RefCell<u64>>,
}

impl PlacementHook for EvenFramesMove {
    fn migrate_page(&mut self, _cx: &mut engine::HookCx, pfn: Pfn, _purpose: AllocPurpose) -> bool {
        *self.asked.borrow_mut() += 1;
        pfn.is_multiple_of(2)
    }
}

#[test]
fn migration_moves_only_the_pages_the_placement_lets_move() {
    let asked = Rc::new(RefCell::new(0));
    let hooks = KernelHooks {
        placement: Box::new(EvenFramesMove { asked: asked.clone() }),
        ..KernelHooks::default()
    };
    let mut k = kernel_with(flash(4096), hooks);
    let pid = k.spawn("app", 900, 1);
    let first = k.mmap(pid, 64, PageKind::NativeAnon, false, SRC).unwrap();
    k.access_range(0, Actor::AppMain(pid), first, 64, true).unwrap();
    let before: Vec<Pfn> = (first..first + 64).map(|i| k.page(i).unwrap().loc).collect();
    let sums: Vec<u64> = (first..first + 64)
        .map(|i| k.page(i).unwrap().content as u64)
        .collect();
    let even = before.iter().filter(|&&p| p % 2 == 0).count() as u64;
    k.migrate_process(1_000, Actor::Kernel, pid);
    assert_eq!(*asked.borrow(), 64, "asked once per resident page");
    assert_eq!(k.vmstat.pgmigrate_success, even);
    for (i, idx) in (first..first + 64).enumerate() {
        let now = k.page(idx).unwrap().loc;
        assert_eq!(
            now == before[i],
            !before[i].is_multiple_of(2),
            "page {i}: only even frames move"
        );
        assert_eq!(
            k.page(idx).unwrap().content as u64,
            sums[i],
            "content travels with the page"
        );
    }
    k.check_invariants().unwrap();
}

// ------------------------------------------------------------------ zram maintenance and planning

#[test]
fn zram_idle_ageing_and_writeback_are_reachable_during_a_run() {
    use kernel::swap::{SwapMaintenance, WritebackMode};
    let mut k = kernel_with(zram(4096), KernelHooks::default());
    let (pid, first, now) = swapped_proc(&mut k);
    let pool0 = k.meminfo().backend_frames;
    assert!(pool0 > 0);
    // Age: mark everything idle, touch one page (its chunk is no longer idle), write back idle.
    {
        let mut pk = k.policy_kernel(now, Actor::Kernel);
        pk.swap_maintenance(0, SwapMaintenance::MarkIdle);
    }
    k.apply_policy_cmds();
    k.access(now, Actor::AppMain(pid), first, false).unwrap();
    let written = k.flash.bytes_written;
    let op = SwapMaintenance::Writeback {
        mode: WritebackMode::Idle,
        max_pages: 1_000,
    };
    k.swap_maintenance(now, Actor::Kernel, 0, op);
    let bd = |k: &Kernel, key: &str| k.backends()[0].stats().iter().find(|(n, _)| *n == key).unwrap().1;
    // Every idle page stored in a chunk (same-filled pages have none) was written back.
    let wb = bd(&k, "bd_writes");
    assert!(wb > 32 && wb <= 63, "{wb}");
    assert_eq!(k.flash.bytes_written - written, wb * 4096);
    assert!(k.meminfo().backend_frames < pool0, "the pool shrank");
    k.check_invariants().unwrap();
    // Written-back pages fault in from flash, intact.
    let reads = k.flash.bytes_read;
    k.access_range(now, Actor::AppMain(pid), first + 1, 63, false)
        .unwrap();
    assert_eq!(k.flash.bytes_read - reads, wb * 4096);
    assert_eq!(k.integrity.checksum_mismatches, 0);
    k.check_invariants().unwrap();
}

struct ByParity;
impl ReclaimHook for ByParity {
    fn swap_tag(&mut self, _cx: &mut HookCx, page: &PageView) -> u8 {
        (page.idx % 2) as u8
    }
}

struct GroupedPlanner;
impl kernel::zram::ChunkPlanner for GroupedPlanner {
    fn plan(&mut self, pages: &[SwapOutPage], codec: content::Codec, out: &mut Vec<kernel::zram::ChunkPlan>) {
        // Four pages per chunk, never mixing tags.
        let mut i = 0;
        while i < pages.len() {
            let mut n = 1;
            while n < 4 && i + n < pages.len() && pages[i + n].tag == pages[i].tag {
                n += 1;
            }
            out.push(kernel::zram::ChunkPlan::pages(n as u16, codec));
            i += n;
        }
    }
    fn group_by_tag(&self) -> bool {
        true
    }
}

#[test]
fn a_chunk_planner_can_group_non_adjacent_pages_of_one_class() {
    use content::{Codec, CostTable};
    use kernel::zram::{Zram, ZramConfig};
    let z = Zram::with_planner(
        ZramConfig::new(64 << 20, Codec::Lz4),
        CostTable::builtin(),
        Box::new(GroupedPlanner),
    );
    let hooks = KernelHooks {
        reclaim: Box::new(ByParity),
        ..KernelHooks::default()
    };
    let mut k = kernel_with(vec![Box::new(z)], hooks);
    let (pid, first, now) = swapped_proc(&mut k);
    // Align on an even page so the chunk is (first, first+2, first+4, first+6).
    let base = first + first % 2;
    k.access(now, Actor::AppMain(pid), base, false).unwrap();
    let resident: Vec<PageIdx> = (first..first + 64)
        .filter(|&i| state(&k, i) == PageState::Resident)
        .collect();
    assert_eq!(resident.len(), 4, "{resident:?}");
    assert!(
        resident.iter().all(|&i| i % 2 == base % 2),
        "one class per chunk: {resident:?}"
    );
    assert_eq!(k.integrity.checksum_mismatches, 0);
    k.check_invariants().unwrap();
}

// ------------------------------------------------------------------ I/O-buffer metrics

#[test]
fn io_buffer_allocations_are_recorded_with_their_order_mix_and_latency() {
    let mut k = kernel_with(flash(1024), KernelHooks::default());
    // The ION flags of Linux 3.4, whatever the test device runs.
    k.params.ion_gfp = kernel::ion::IonGfp::Linux34;
    let a = k.alloc_io_buffer(0, engine::Actor::Kernel, 11 << 20).unwrap();
    let b = k.alloc_io_buffer(1_000, engine::Actor::Kernel, 70 << 10).unwrap();
    let st = &k.io_buffers.clone();
    assert_eq!(st.allocations, 2);
    assert_eq!(st.latencies_ns, vec![a.latency_ns, b.latency_ns]);
    assert!(a.latency_ns > 0);
    // Cost: a call per block and a page preparation per page (pages come from the ION pool
    // already clear; the IOMMU mapping is CPU only); no stall on a fresh machine.
    assert_eq!(a.latency_ns, k.io_blocks_cost(&a.blocks));

    // Every block handed out is counted at its order, and they add up to the bytes asked for.
    let pages: u64 = st.blocks_by_order.iter().enumerate().map(|(o, n)| n << o).sum();
    assert_eq!(pages, (11 << 20) / 4096 + (70u64 << 10).div_ceil(4096));
    assert!(
        st.blocks_by_order[8] > 0,
        "a fresh machine serves large blocks: {:?}",
        st.blocks_by_order
    );
    assert_eq!(
        st.blocks_by_order.iter().sum::<u64>() as usize,
        a.blocks.len() + b.blocks.len()
    );
    // The clearing is paid on free, by the kernel, per page at half a page copy.
    let before = k.cpu.total();
    k.free_io_buffer(a);
    assert_eq!(
        k.cpu.total() - before,
        ((11 << 20) / 4096) * (k.params.page_copy_ns / 2).max(1)
    );
}

#[test]
fn only_stock_hooks_take_the_stock_fast_path() {
    use kernel::hooks::{FaultHook, ReclaimHook, StockReadahead, StockReclaim};
    struct Custom;
    impl FaultHook for Custom {}
    impl ReclaimHook for Custom {}
    // A policy's hook is always asked (its defaults included); only stock skips the calls.
    assert!(FaultHook::is_stock(&StockReadahead) && ReclaimHook::is_stock(&StockReclaim));
    assert!(!FaultHook::is_stock(&Custom) && !ReclaimHook::is_stock(&Custom));
}
