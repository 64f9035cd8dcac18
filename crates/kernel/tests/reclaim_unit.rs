//! Contract test of `PlacementHook::reclaim_unit` (region-granular file reclaim) with a small
//! non-stock placement: the unit of a file victim is its aligned 4-frame block. The kernel must
//! drop the clean inactive file pages of the block, move the others (dirty, mlocked) through
//! `migrate_page` + `alloc` with their contents, and so free every frame of the block.

mod support;

use engine::{Actor, HookCx};
use hotlaunch_kernel as kernel;
use kernel::buddy::BuddyAllocator;
use kernel::hooks::*;
use kernel::mm::ContentSource;
use kernel::types::*;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

const SRC: ContentSource = ContentSource {
    base: 0,
    len: 64,
    seed: 7,
};

#[derive(Default)]
struct Log {
    /// Frames of the test's file pages: a unit is named only for a block made of them.
    ours: BTreeSet<Pfn>,
    /// The one unit named: (victim frame, block base).
    unit: Option<(Pfn, Pfn)>,
    asked: Vec<Pfn>,
    freed_after_unit: BTreeSet<Pfn>,
}

struct QuadUnits(Rc<RefCell<Log>>);

impl PlacementHook for QuadUnits {
    fn alloc(
        &mut self,
        _cx: &mut HookCx,
        buddy: &mut BuddyAllocator,
        order: u8,
        mt: MigrateType,
        _purpose: AllocPurpose,
    ) -> Option<Pfn> {
        // Never hand out a frame of the block being emptied (the victim's frame is free by then).
        let base = self.0.borrow().unit.map(|u| u.1);
        let mut skipped = Vec::new();
        let got = loop {
            let p = buddy.alloc(order, mt)?;
            if order == 0 && base.is_some_and(|b| p & !3 == b) {
                skipped.push(p);
                continue;
            }
            break p;
        };
        for p in skipped {
            buddy.free(p, 0);
        }
        Some(got)
    }

    fn free(&mut self, _cx: &mut HookCx, buddy: &mut BuddyAllocator, pfn: Pfn, order: u8, _p: AllocPurpose) {
        let mut l = self.0.borrow_mut();
        if l.unit.is_some() && order == 0 {
            l.freed_after_unit.insert(pfn);
        }
        buddy.free(pfn, order)
    }

    fn migrate_page(&mut self, _cx: &mut HookCx, pfn: Pfn, _purpose: AllocPurpose) -> bool {
        self.0.borrow_mut().asked.push(pfn);
        true
    }

    fn reclaim_unit(&mut self, _cx: &mut HookCx, pfn: Pfn, purpose: AllocPurpose, out: &mut Vec<Pfn>) {
        assert!(matches!(
            purpose,
            AllocPurpose::User {
                kind: PageKind::File,
                ..
            }
        ));
        let mut l = self.0.borrow_mut();
        let base = pfn & !3;
        if l.unit.is_some() || !(base..base + 4).all(|f| l.ours.contains(&f)) {
            return;
        }
        l.unit = Some((pfn, base));
        out.extend((base..base + 4).filter(|&f| f != pfn));
    }
}

#[test]
fn a_reclaim_unit_drops_clean_inactive_file_pages_and_moves_the_others() {
    let log = Rc::new(RefCell::new(Log::default()));
    let hooks = KernelHooks {
        placement: Box::new(QuadUnits(log.clone())),
        ..KernelHooks::default()
    };
    // No swap: only file pages can be reclaimed.
    let mut k = support::kernel_with(Vec::new(), hooks);
    let pid = k.spawn("files", 900, 1);
    let n = 256;
    let file = k.mmap(pid, n, PageKind::File, false, SRC).unwrap();
    k.access_range(0, Actor::AppMain(pid), file, n, false).unwrap();
    // Every 4th page dirty, every 4th (offset 2) mlocked: those must move, not go.
    for j in (1..n).step_by(4) {
        k.access(0, Actor::AppMain(pid), file + j, true).unwrap();
    }
    let locked: Vec<u32> = (2..n).step_by(4).collect();
    for &j in &locked {
        k.madvise(0, Actor::AppMain(pid), file + j, 1, Advice::Mlock);
    }
    let before: Vec<(Pfn, u32)> = (file..file + n)
        .map(|i| (k.page(i).unwrap().loc, k.page(i).unwrap().content))
        .collect();
    log.borrow_mut().ours = before.iter().map(|b| b.0).collect();
    // Anonymous pressure (unreclaimable without swap) forces file reclaim.
    let filler = k.spawn("filler", 0, 1);
    let managed = k.buddy().nr_pages();
    let anon = k.mmap(filler, managed, PageKind::NativeAnon, false, SRC).unwrap();
    let mut now = 1_000;
    for j in 0..managed {
        if log.borrow().unit.is_some() {
            break;
        }
        match k.access(now, Actor::AppMain(filler), anon + j, true) {
            Ok(s) => now += s.ns,
            Err(_) => break,
        }
    }
    let l = log.borrow();
    let (victim, base) = l.unit.expect("reclaim named a unit for a file victim");
    let page_in = |f: Pfn| before.iter().position(|b| b.0 == f).unwrap() as u32;
    let mut must_move = BTreeSet::new();
    for f in base..base + 4 {
        let j = page_in(f);
        let (dirty, mlocked) = (j % 4 == 1, j % 4 == 2);
        if f != victim && (dirty || mlocked) {
            must_move.insert(f);
        }
        assert!(l.freed_after_unit.contains(&f), "frame {f} of the unit was freed");
    }
    let asked: BTreeSet<Pfn> = l.asked.iter().copied().filter(|f| f & !3 == base).collect();
    assert_eq!(
        asked, must_move,
        "exactly the dirty and mlocked siblings are migrated"
    );
    for f in base..base + 4 {
        let j = page_in(f);
        let p = k.page(file + j).unwrap();
        if j % 4 == 2 {
            assert_eq!(p.state, PageState::Resident, "an mlocked page stays resident");
            assert_ne!(p.loc & !3, base, "moved out of the unit");
            assert_eq!(p.content, before[j as usize].1, "content travels with the page");
        }
    }
    drop(l);
    k.check_invariants().unwrap();
}
