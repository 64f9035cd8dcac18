//! Contract and mechanism tests of the range seam of shrinkers (`Shrinker::shrink_ranges`): the
//! kernel zaps each named range like `madvise(MADV_DONTNEED)` — swap-cached pages dropped with no
//! I/O at `zap_page_ns` each plus `zap_range_ns` per range — and keeps the data of any other
//! resident page of a range (reclaimed as an LRU victim).

mod support;

use engine::{Actor, Category, HookCx};
use hotlaunch_kernel as kernel;
use kernel::hooks::*;
use kernel::types::*;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

use support::{flash, kernel_with, resident_proc, state};

/// Hands out ranges of its pool until the pass's want is covered, and records them.
struct RangePool {
    pool: Rc<RefCell<Vec<PageRange>>>,
    given: Rc<RefCell<Vec<PageRange>>>,
}

impl Shrinker for RangePool {
    fn shrink_ranges(&mut self, cx: &mut HookCx, _sc: &ScanControl, want: u64, out: &mut Vec<PageRange>) {
        cx.charge(100);
        let mut pool = self.pool.borrow_mut();
        let mut got = 0u64;
        while got < want {
            let Some(r) = pool.pop() else { break };
            got += r.pages as u64;
            out.push(r);
            self.given.borrow_mut().push(r);
        }
    }
}

/// Ranges of 1..=3 pages, one every 4 pages, over `[first, first + n)`.
fn ranges_over(first: PageIdx, n: u32) -> Vec<PageRange> {
    (0..n / 4)
        .map(|i| PageRange {
            first: first + 4 * i,
            pages: 1 + i % 3,
        })
        .collect()
}

#[test]
fn a_range_shrinker_zaps_its_swap_cached_pages_per_page_and_per_range() {
    let pool = Rc::new(RefCell::new(Vec::new()));
    let given = Rc::new(RefCell::new(Vec::new()));
    let hooks = KernelHooks {
        shrinkers: vec![Box::new(RangePool {
            pool: pool.clone(),
            given: given.clone(),
        })],
        ..KernelHooks::default()
    };
    let mut k = kernel_with(flash(65_536), hooks);
    let managed = k.buddy().nr_pages();
    let mut now = 0;
    let (pid, victim) = resident_proc(&mut k, "victim", 900, managed / 2, &mut now);
    // Clean copies of every victim page (swap cache), as a runtime's ahead-of-time swap.
    k.madvise(now, Actor::AppMain(pid), victim, managed / 2, Advice::WriteAhead);
    assert!((victim..victim + managed / 2).all(|i| k.page(i).unwrap().has(flags::SWAPCACHE)));
    *pool.borrow_mut() = ranges_over(victim, managed / 2);
    let (written, pswpout, reclaim_cpu) = (
        k.flash.bytes_written,
        k.vmstat.pswpout,
        k.cpu.by_category(Category::Reclaim),
    );
    // A second process needs more than the free memory: reclaim must run.
    let (_, filler) = resident_proc(&mut k, "filler", 900, managed / 2, &mut now);
    k.advance_to(now + 1_000_000_000);
    let given = given.borrow();
    assert!(!given.is_empty(), "the shrinker must be asked");
    let named: BTreeSet<PageIdx> = given.iter().flat_map(|r| r.first..r.first + r.pages).collect();
    let out: BTreeSet<PageIdx> = (victim..victim + managed / 2)
        .chain(filler..filler + managed / 2)
        .filter(|&i| state(&k, i) != PageState::Resident)
        .collect();
    assert_eq!(out, named, "exactly the named pages are dropped");
    assert!(named.iter().all(|&i| state(&k, i) == PageState::Swapped));
    // No I/O: the copies were already on the backend.
    assert_eq!((k.flash.bytes_written, k.vmstat.pswpout), (written, pswpout));
    // Cost: per page plus per range, on the reclaimer's Reclaim CPU.
    let p = &k.params;
    let expect = named.len() as u64 * p.zap_page_ns + given.len() as u64 * p.zap_range_ns;
    assert_eq!(k.vmstat.shrinker_zap_pages, named.len() as u64);
    assert_eq!(k.vmstat.shrinker_zap_ranges, given.len() as u64);
    assert_eq!(k.vmstat.shrinker_zap_ns, expect);
    assert!(k.cpu.by_category(Category::Reclaim) - reclaim_cpu >= expect);
    k.check_invariants().unwrap();
}

/// Gives the ranges in its cell once (the first call after they are set), then nothing.
struct Once(Rc<RefCell<Vec<PageRange>>>);

impl Shrinker for Once {
    fn shrink_ranges(&mut self, _cx: &mut HookCx, _sc: &ScanControl, _want: u64, out: &mut Vec<PageRange>) {
        out.append(&mut self.0.borrow_mut());
    }
}

#[test]
fn a_zap_keeps_pages_without_a_copy_and_charges_only_ranges_it_dropped() {
    let cell = Rc::new(RefCell::new(Vec::new()));
    let hooks = KernelHooks {
        shrinkers: vec![Box::new(Once(cell.clone()))],
        ..KernelHooks::default()
    };
    let mut k = kernel_with(flash(65_536), hooks);
    let managed = k.buddy().nr_pages();
    let mut now = 0;
    let (pid, first) = resident_proc(&mut k, "victim", 900, 64, &mut now);
    // Pages 0..8 get copies; the ranges are [0, 4) (copies), [6, 10) (two with a copy, two
    // without) and [20, 24) (no copy).
    k.madvise(now, Actor::AppMain(pid), first, 8, Advice::WriteAhead);
    *cell.borrow_mut() = vec![
        PageRange { first, pages: 4 },
        PageRange {
            first: first + 6,
            pages: 4,
        },
        PageRange {
            first: first + 20,
            pages: 4,
        },
    ];
    resident_proc(&mut k, "filler", 900, managed, &mut now);
    k.advance_to(now + 1_000_000_000);
    assert!(cell.borrow().is_empty(), "the shrinker must be asked");
    // Six swap-cached pages zapped, in two ranges; the third range had none to zap.
    let p = &k.params;
    assert_eq!(k.vmstat.shrinker_zap_pages, 6);
    assert_eq!(k.vmstat.shrinker_zap_ranges, 2);
    assert_eq!(k.vmstat.shrinker_zap_ns, 6 * p.zap_page_ns + 2 * p.zap_range_ns);
    // Pages without a copy left memory through swap-out (their data kept): reading them back
    // matches their checksums.
    let now = now + 1_000_000_000;
    for i in [first + 8, first + 9, first + 20] {
        assert_ne!(state(&k, i), PageState::Resident, "page {i}");
        k.access(now, Actor::AppMain(pid), i, false).unwrap();
    }
    assert_eq!(k.integrity.checksum_mismatches, 0);
    assert!(k.integrity.pages_swapped_in >= 3);
    k.check_invariants().unwrap();
}
