//! Marvin's kernel part (MK) and framework part: runtime-driven reclamation through a shrinker
//! that walks background apps' reclamation tables, an LRU that leaves anonymous memory to the
//! runtime (Marvin replaces kernel swap for the Java heap), swap-cache retention of restored
//! objects, and the eager restore when an app comes back to the foreground.

use super::state::*;
use crate::Shared;
use engine::{HookCx, Stall};
use framework::sim::{AppView, LaunchKind, PolicyKernel};
use framework::FrameworkHooks;
use kernel::hooks::{
    stock_inactive_verdict, FaultHook, PageRange, PageView, ReclaimHook, ScanControl, Shrinker, Verdict,
};
use kernel::types::{Advice, PageKind};
use std::collections::BTreeMap;

/// MK's reclamation (§5.2, §6.2): when the kernel needs memory it takes clean saved objects of
/// background apps (in victim order; never the foreground app) and drops their pages. They have a
/// clean copy in the swap file, so no I/O happens: the kernel zaps each object's page range (the
/// artifact's `madvise(obj, pages, MADV_DONTNEED)` per object), no LRU scan or rmap walk.
pub struct TableShrinker(pub Shared<Global>);

/// How many table entries ahead the shrinker fetches object states.
const STATES_AHEAD: usize = 16;

impl Shrinker for TableShrinker {
    fn shrink_ranges(
        &mut self,
        cx: &mut HookCx,
        _sc: &ScanControl,
        want_pages: u64,
        out: &mut Vec<PageRange>,
    ) {
        self.0.with(|g| {
            let mut got = 0u64;
            let mut scanned = 0u64;
            for app in g.victims() {
                if got >= want_pages {
                    break;
                }
                let mut t = app.borrow_mut();
                let t = &mut *t;
                for i in 0..t.table.len() {
                    if got >= want_pages {
                        break;
                    }
                    scanned += 1;
                    if let Some(a) = t.table.get(i + STATES_AHEAD) {
                        // Fetch a later entry's state ahead (no effect on results).
                        runtime::gc::prefetch(&t.st, a.obj as usize);
                    }
                    let e = t.table[i];
                    let s = t.state_mut(e.obj);
                    // Neither dirty nor already reclaimed (the RTE lock and its re-check).
                    if *s & (SAVED | DIRTY | RECLAIMED) != SAVED {
                        continue;
                    }
                    *s |= RECLAIMED;
                    out.push(PageRange {
                        first: e.first,
                        pages: e.pages,
                    });
                    got += e.pages as u64;
                    t.c.reclaimed_bytes += e.size as u64;
                }
            }
            cx.charge(g.rte_scan_ns * scanned);
            if got > 0 {
                g.reclaims.push(ReclaimEvent {
                    t: cx.now,
                    pages: got,
                });
                g.reclaimed_pages += got;
            }
        });
    }
}

/// The kernel's LRU keeps anonymous pages resident: Marvin's kernel does not swap the Java heap
/// (the runtime does, object by object) and the prototype has no other swap. File pages are
/// reclaimed as stock.
pub struct NoAnonSwap;

impl ReclaimHook for NoAnonSwap {
    fn inactive_verdict(&mut self, _cx: &mut HookCx, _sc: &ScanControl, page: &PageView) -> Verdict {
        if page.kind == PageKind::File {
            stock_inactive_verdict(page)
        } else {
            Verdict::Activate
        }
    }
}

/// An object read back from the swap file keeps its record there (the swap file is only
/// rewritten by compaction): the restored page is clean and can be dropped again without I/O.
pub struct KeepCheckpoint;

impl FaultHook for KeepCheckpoint {
    fn keep_swap_copy(&mut self, _cx: &mut HookCx, _page: &PageView) -> bool {
        true
    }
}

/// Framework part: lifecycle bookkeeping and the eager restore (§6.2).
pub struct Lifecycle(pub Shared<Global>);

impl FrameworkHooks for Lifecycle {
    fn on_launch_start(&mut self, k: &mut PolicyKernel, app: &AppView, kind: LaunchKind) -> Stall {
        if kind != LaunchKind::Hot {
            return Stall::ZERO;
        }
        // Restore every reclaimed object before the first frame: read it back from the swap file
        // (queued WILLNEED: the kernel's flash reads, on the launch's critical path).
        let (ranges, entries, stall) = self.0.with(|g| {
            let mut ranges = Vec::new();
            let mut entries = 0u64;
            if !g.eager_restore {
                if let Some(a) = g.app(app.app) {
                    a.borrow_mut().foreground = true;
                }
                return (ranges, entries, 0);
            }
            if let Some(a) = g.app(app.app) {
                let mut t = a.borrow_mut();
                let t = &mut *t;
                // The app is the foreground app from now on: never a reclaim victim.
                t.foreground = true;
                for i in 0..t.table.len() {
                    let e = t.table[i];
                    entries += 1;
                    let s = t.state_mut(e.obj);
                    if *s & RECLAIMED != 0 {
                        *s &= !RECLAIMED;
                        ranges.push((e.first, e.pages));
                        t.c.restored_bytes += e.size as u64;
                    }
                }
            }
            let bytes: u64 = ranges.iter().map(|&(_, n)| n as u64 * 4096).sum();
            if g.restores.len() <= app.app {
                g.restores.resize(app.app + 1, Vec::new());
            }
            g.restores[app.app].push(bytes);
            if let Some(a) = g.app(app.app) {
                a.borrow_mut().c.eager_restore_ns += g.restore_ns(bytes);
            }
            (ranges, entries * g.rte_scan_ns, g.restore_ns(bytes))
        });
        k.cx().charge(entries);
        for (first, n) in ranges {
            k.madvise(first, n, Advice::WillNeed);
        }
        Stall {
            ns: stall,
            psi_ns: stall,
        }
    }

    fn on_background(&mut self, k: &mut PolicyKernel, app: &AppView) {
        let now = k.now();
        self.0.with(|g| {
            if let Some(a) = g.app(app.app) {
                let mut t = a.borrow_mut();
                t.foreground = false;
                t.bg_since = now;
                t.pid = Some(app.pid);
            }
        });
    }

    fn on_foreground(&mut self, _k: &mut PolicyKernel, app: &AppView) {
        self.0.with(|g| {
            if let Some(a) = g.app(app.app) {
                a.borrow_mut().foreground = true;
            }
        });
    }

    fn on_killed(&mut self, _k: &mut PolicyKernel, app: usize) {
        self.0.with(|g| g.detach(app));
    }

    fn metrics(&self, out: &mut BTreeMap<String, f64>) {
        self.0.with(|g| metrics(g, out));
    }
}
