//! Where a new anonymous page starts with the node LRU by page age (`node_lru_by_page_age`):
//! Linux before 5.9 puts it on the active anon list (`do_anonymous_page` →
//! `lru_cache_add_active_or_unevictable`), so reclaim ages it (clearing its accessed bit) before
//! it can be swapped; 5.9 ("mm/vmscan: protect the workingset on anonymous LRU") starts it on the
//! inactive list. The per-process models keep the inactive start.

mod support;

use engine::Actor;
use hotlaunch_kernel as kernel;
use kernel::hooks::KernelHooks;
use kernel::types::*;
use kernel::Kernel;

/// A kernel of `release` (global LRU; by page age or not) with one process that touched 100 new
/// anon pages: its (inactive, active) anon list lengths.
fn new_anon_lists(release: &str, by_page_age: bool) -> (u32, u32) {
    let mut d = support::small_device();
    d.android.kernel_release = Some(release.into());
    d.android.per_app_memcg = Some(false);
    d.android.node_lru_by_page_age = Some(by_page_age);
    let mut k = Kernel::new(&d, support::contents(), Vec::new(), KernelHooks::default()).unwrap();
    let pid = k.spawn("app", 0, 1);
    let a = k
        .mmap(pid, 100, PageKind::NativeAnon, false, support::SRC)
        .unwrap();
    k.access_range(0, Actor::AppMain(pid), a, 100, true).unwrap();
    k.check_invariants().unwrap();
    let len = k.process(pid).unwrap().lru.len;
    (
        len[LruList::InactiveAnon as usize],
        len[LruList::ActiveAnon as usize],
    )
}

#[test]
fn new_anon_pages_start_active_on_a_4_9_node_lru() {
    assert_eq!(new_anon_lists("4.9", true), (0, 100));
    assert_eq!(new_anon_lists("3.18", true), (0, 100));
}

#[test]
fn new_anon_pages_start_inactive_from_5_9_and_in_the_process_order_model() {
    assert_eq!(new_anon_lists("5.10", true), (100, 0));
    assert_eq!(new_anon_lists("4.9", false), (100, 0));
}
