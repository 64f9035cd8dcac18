//! Workingset refault detection of file pages (Linux mm/workingset.c `workingset_refault`,
//! called by `add_to_page_cache_lru` for every page added with a shadow entry): read-around
//! pages that had been evicted are refaults too, and a file refault's distance is compared with
//! the active file list on 4.x kernels, with active anon + file from 5.9 (34e58cac "mm:
//! workingset: let cache workingset challenge anon").

mod support;

use engine::Actor;
use hotlaunch_kernel as kernel;
use kernel::hooks::KernelHooks;
use kernel::types::*;
use kernel::Kernel;

/// A kernel of `release` with a large active anon list and no active file page, and the first
/// page of a file mapping whose read-around window was read in and then evicted.
fn evicted_window(release: &str) -> (Kernel, Actor, PageIdx, u32) {
    let mut d = support::small_device();
    d.android.kernel_release = Some(release.into());
    let mut k = Kernel::new(
        &d,
        support::contents(),
        support::flash(32768),
        KernelHooks::default(),
    )
    .unwrap();
    let mut now = 0;
    // Touched anon pages that reclaim scans are referenced: it activates them.
    support::resident_proc(&mut k, "a", 900, 14_000, &mut now);
    support::resident_proc(&mut k, "b", 900, 6_000, &mut now);
    let pid = k.spawn("f", 0, 1);
    let first = k.mmap(pid, 64, PageKind::File, false, support::SRC).unwrap();
    let actor = Actor::AppMain(pid);
    k.access(now, actor, first, false).unwrap();
    let ra = k.params.read_ahead_pages;
    k.madvise(now, actor, first, ra, Advice::PageOut);
    assert_eq!(k.vmstat.workingset_refault_file, 0, "no file refault yet");
    (k, actor, first, ra)
}

#[test]
fn evicted_read_around_pages_are_refaults() {
    let (mut k, actor, first, ra) = evicted_window("4.9");
    k.access(0, actor, first, false).unwrap();
    assert_eq!(k.vmstat.pgpgin_file, 2 * ra as u64, "the window was read again");
    assert_eq!(
        k.vmstat.workingset_refault_file, ra as u64,
        "every page with a shadow"
    );
}

#[test]
fn file_refault_distance_follows_the_kernel_release() {
    let mut activated = Vec::new();
    for release in ["4.9", "5.10"] {
        let (mut k, actor, first, ra) = evicted_window(release);
        let (active_anon, active_file) = k.processes().iter().fold((0, 0), |(a, f), p| {
            (
                a + p.lru.len[LruList::ActiveAnon as usize],
                f + p.lru.len[LruList::ActiveFile as usize],
            )
        });
        assert!(
            active_anon > 2 * ra,
            "{release}: reclaim activated anon ({active_anon})"
        );
        assert_eq!(active_file, 0, "{release}: no active file page");
        k.access(0, actor, first, false).unwrap();
        activated.push(k.vmstat.workingset_activate_file);
    }
    assert_eq!(
        activated[0], 0,
        "4.9: distances exceed the empty active file list"
    );
    assert_eq!(activated[1], 32, "5.10: active anon counts in the workingset");
}
