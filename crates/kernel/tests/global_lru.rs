//! Reclaim with one global LRU (`[android] per_app_memcg = false`, the AOSP default on phones
//! that are not low-RAM devices) takes the pages of the app used longest ago first; with per-app
//! lruvecs every app loses pages in proportion to its lists. With `node_lru_by_page_age` the
//! node's lists are ordered by when each page was last put at a list head, whatever its process.

mod support;

use engine::Actor;
use hotlaunch_kernel as kernel;
use kernel::mm::ContentSource;
use kernel::types::*;
use kernel::Kernel;

const SRC: ContentSource = ContentSource {
    base: 0,
    len: 64,
    seed: 7,
};

/// Pages of `n` starting at `first` still resident.
fn resident(k: &Kernel, first: PageIdx, n: u32) -> u32 {
    (first..first + n)
        .filter(|&i| k.page(i).unwrap().state == PageState::Resident)
        .count() as u32
}

/// Two cached apps with the same file pages, "old" (adj 990) and "recent" (adj 910); an anon
/// filler (no swap) forces file reclaim until `evict` of their pages are gone. Returns the pages
/// each lost (old, recent).
fn lost(per_app_memcg: bool, evict: u32) -> (u32, u32) {
    lost_with(per_app_memcg, Default::default(), evict)
}

/// [`lost`] with the given kernel hooks.
fn lost_with(per_app_memcg: bool, hooks: kernel::hooks::KernelHooks, evict: u32) -> (u32, u32) {
    lost_procs(
        per_app_memcg,
        false,
        [("old", 990), ("recent", 910)],
        hooks,
        evict,
    )
}

/// [`lost`] for two processes (name, adj) whose file pages are read in this order, with the
/// node's LRU ordered by page age or not.
fn lost_procs(
    per_app_memcg: bool,
    by_page_age: bool,
    procs: [(&str, i16); 2],
    hooks: kernel::hooks::KernelHooks,
    evict: u32,
) -> (u32, u32) {
    let mut d = support::small_device();
    d.android.per_app_memcg = Some(per_app_memcg);
    d.android.node_lru_by_page_age = Some(by_page_age);
    let mut k = Kernel::new(&d, support::contents(), Vec::new(), hooks).unwrap();
    let n = 3000;
    let mut maps = Vec::new();
    for (name, adj) in procs {
        let pid = k.spawn(name, adj, 1);
        let f = k.mmap(pid, n, PageKind::File, false, SRC).unwrap();
        k.access_range(0, Actor::AppMain(pid), f, n, false).unwrap();
        maps.push(f);
    }
    let filler = k.spawn("filler", 0, 1);
    let managed = k.buddy().nr_pages();
    let anon = k.mmap(filler, managed, PageKind::NativeAnon, false, SRC).unwrap();
    let mut now = 1_000;
    for j in 0..managed {
        let gone = 2 * n - resident(&k, maps[0], n) - resident(&k, maps[1], n);
        if gone >= evict {
            break;
        }
        match k.access(now, Actor::AppMain(filler), anon + j, true) {
            Ok(s) => now += s.ns,
            Err(_) => break,
        }
    }
    k.check_invariants().unwrap();
    (n - resident(&k, maps[0], n), n - resident(&k, maps[1], n))
}

#[test]
fn a_global_lru_reclaims_the_app_used_longest_ago_first() {
    let (old, recent) = lost(false, 2000);
    assert!(old + recent >= 2000, "pressure evicted {old} + {recent}");
    assert!(
        recent * 10 <= old,
        "global LRU: the recently used app keeps its pages (old lost {old}, recent {recent})"
    );
}

#[test]
fn per_app_lruvecs_share_reclaim_between_apps() {
    let (old, recent) = lost(true, 2000);
    assert!(old + recent >= 2000, "pressure evicted {old} + {recent}");
    assert!(
        recent * 2 >= old && old * 2 >= recent,
        "per-app lruvecs: both apps lose pages (old lost {old}, recent {recent})"
    );
}

/// Spares the app the global LRU would take first: a hook with lists of its own across processes.
struct OldLast;
impl kernel::hooks::ReclaimHook for OldLast {
    fn orders_across_processes(&self) -> bool {
        true
    }
    fn lruvec_order(
        &mut self,
        _cx: &mut engine::HookCx,
        _sc: &kernel::hooks::ScanControl,
        procs: &[kernel::hooks::ProcView],
        out: &mut Vec<Pid>,
    ) {
        // Every process but "old" (pid of the highest adj), so its pages must survive.
        let old = procs.iter().max_by_key(|p| p.adj).map(|p| p.pid);
        out.extend(procs.iter().map(|p| p.pid).filter(|&p| Some(p) != old));
    }
}

#[test]
fn a_hook_with_its_own_lists_orders_reclaim_on_a_global_lru_too() {
    let hooks = kernel::hooks::KernelHooks {
        reclaim: Box::new(OldLast),
        ..Default::default()
    };
    let (old, recent) = lost_with(false, hooks, 2000);
    assert!(
        recent >= 2000,
        "the hook's order was followed: recent lost {recent}"
    );
    assert_eq!(
        old, 0,
        "the app the hook spares keeps every page (a global LRU would take it first)"
    );
}

/// A system process's file pages read long ago and never used since.
fn old_system_and_recent_app(by_page_age: bool) -> (u32, u32) {
    let procs = [("system_server", -900), ("recent", 910)];
    lost_procs(false, by_page_age, procs, Default::default(), 2000)
}

#[test]
fn a_node_lru_by_page_age_reclaims_old_system_pages_before_a_recent_apps() {
    let (system, recent) = old_system_and_recent_app(true);
    assert!(system + recent >= 2000, "pressure evicted {system} + {recent}");
    assert!(
        recent * 10 <= system,
        "node LRU by page age: the system process's older pages go first (system lost \
         {system}, recent app {recent})"
    );
}

#[test]
fn the_process_order_spares_system_processes_whatever_the_page_age() {
    let (system, recent) = old_system_and_recent_app(false);
    assert!(system + recent >= 2000, "pressure evicted {system} + {recent}");
    assert!(
        system * 10 <= recent,
        "oom_score_adj order: system processes last (system lost {system}, recent app {recent})"
    );
}
