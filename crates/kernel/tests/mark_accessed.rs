//! `mark_page_accessed` (Linux mm/swap.c): a `read()` of a file page sets `PG_referenced`
//! (`flags::REFERENCED`) on its first read and activates it on the next (not a re-read of the
//! same position), without the PTE young bit (a `read()` maps nothing), so a page read once is
//! reclaimed at the inactive tail while a page read twice is on the active list; before Linux
//! 4.7 a `write()` marks the page too. A page mapped by a CPU access only gets the young bit.

mod support;

use engine::Actor;
use hotlaunch_kernel as kernel;
use kernel::dirty::PageWrite;
use kernel::hooks::KernelHooks;
use kernel::types::*;
use kernel::Kernel;

fn kernel_of(release: &str) -> Kernel {
    let mut d = support::small_device();
    d.android.kernel_release = Some(release.into());
    Kernel::new(&d, support::contents(), Vec::new(), KernelHooks::default()).unwrap()
}

/// A process with a 64-page data file (not executable, not in memory).
fn data_file(k: &mut Kernel) -> (Pid, PageIdx) {
    let pid = k.spawn("app", 0, 1);
    let f = k.mmap(pid, 64, PageKind::File, false, support::SRC).unwrap();
    (pid, f)
}

fn lru_of(k: &Kernel, idx: PageIdx) -> (LruList, bool, bool) {
    let p = k.page(idx).unwrap();
    (p.lru, p.has(flags::REFERENCED), p.has(flags::ACCESSED))
}

#[test]
fn a_second_read_activates_a_file_page() {
    let mut k = kernel_of("4.9");
    let (pid, f) = data_file(&mut k);
    let a = Actor::AppMain(pid);
    let act0 = k.vmstat.pgactivate;
    k.read_file_page(0, a, f + 3).unwrap();
    assert_eq!(
        lru_of(&k, f + 3),
        (LruList::InactiveFile, true, false),
        "read in: inactive, referenced, no PTE young bit"
    );
    // Re-reading the position the last read ended at is not marked (`ra->prev_pos`).
    k.read_file_page(0, a, f + 3).unwrap();
    assert_eq!(lru_of(&k, f + 3), (LruList::InactiveFile, true, false));
    k.read_file_page(0, a, f + 9).unwrap();
    k.read_file_page(0, a, f + 3).unwrap();
    assert_eq!(
        lru_of(&k, f + 3),
        (LruList::ActiveFile, false, false),
        "inactive + referenced -> active, unreferenced"
    );
    assert_eq!(k.vmstat.pgactivate, act0 + 1);
    k.read_file_page(0, a, f + 9).unwrap();
    k.read_file_page(0, a, f + 3).unwrap();
    assert_eq!(
        lru_of(&k, f + 3),
        (LruList::ActiveFile, true, false),
        "active -> active, referenced"
    );
    // A CPU access through a mapping sets the young bit only.
    k.access(0, a, f + 20, false).unwrap();
    k.access(0, a, f + 20, false).unwrap();
    assert_eq!(lru_of(&k, f + 20), (LruList::InactiveFile, false, true));
    k.check_invariants().unwrap();
}

#[test]
fn a_write_marks_its_page_accessed_only_before_4_7() {
    for (release, marked) in [("3.18", true), ("4.9", false)] {
        let mut k = kernel_of(release);
        assert_eq!(k.params.write_marks_accessed, marked);
        let (pid, f) = data_file(&mut k);
        let a = Actor::AppMain(pid);
        k.write_file_page(0, a, f + 5, PageWrite::Whole).unwrap();
        assert_eq!(
            lru_of(&k, f + 5),
            (LruList::InactiveFile, marked, false),
            "{release}"
        );
        k.write_file_page(0, a, f + 5, PageWrite::Whole).unwrap();
        let list = if marked {
            LruList::ActiveFile
        } else {
            LruList::InactiveFile
        };
        assert_eq!(lru_of(&k, f + 5).0, list, "{release}");
        k.check_invariants().unwrap();
    }
}

/// Pages read once and pages read twice, then anon pressure until `evict` of them are gone:
/// how many of each are still resident.
#[test]
fn reclaim_takes_pages_read_once_before_pages_read_twice() {
    let mut k = kernel_of("4.9");
    k.params.swappiness = 0; // file pages only: no swap device anyway
    let pid = k.spawn("reader", 900, 1);
    let n = 2000;
    let f = k.mmap(pid, n, PageKind::File, false, support::SRC).unwrap();
    let a = Actor::AppMain(pid);
    let mut now = 0;
    // Even pages are read twice (the second time after other reads), odd pages once.
    for i in 0..n {
        now += k.read_file_page(now, a, f + i).unwrap().ns;
    }
    for i in (0..n).step_by(2) {
        now += k.read_file_page(now, a, f + i).unwrap().ns;
    }
    let filler = k.spawn("filler", 0, 1);
    let managed = k.buddy().nr_pages();
    let anon = k
        .mmap(filler, managed, PageKind::NativeAnon, false, support::SRC)
        .unwrap();
    let resident = |k: &Kernel, odd: u32| {
        (odd..n)
            .step_by(2)
            .filter(|&i| k.page(f + i).unwrap().state == PageState::Resident)
            .count()
    };
    for j in 0..managed {
        if resident(&k, 1) + resident(&k, 0) <= n as usize / 2 + 100 {
            break;
        }
        match k.access(now, Actor::AppMain(filler), anon + j, true) {
            Ok(s) => now += s.ns,
            Err(_) => break,
        }
    }
    k.check_invariants().unwrap();
    let (once, twice) = (resident(&k, 1), resident(&k, 0));
    assert!(
        once < 100 && twice > 900,
        "read once {once} / read twice {twice} of 1000 still resident"
    );
}

/// Why `page_check_references`' `referenced_ptes > 1` is not modelled (`mark_accessed.rs`): the
/// `VM_EXEC` rule after it already activates a referenced page of an executable file mapping
/// on its first scan, and every mapped file page of the model is in one (app data is read with
/// `pread`, never mapped); a referenced page of a non-executable mapping gets one more round.
#[test]
fn a_referenced_executable_file_page_is_activated_on_its_first_scan() {
    use kernel::hooks::{stock_inactive_verdict, Verdict};
    let mut k = kernel_of("4.9");
    let pid = k.spawn("app", 0, 1);
    let a = Actor::AppMain(pid);
    let code = k.mmap(pid, 8, PageKind::File, true, support::SRC).unwrap();
    let data = k.mmap(pid, 8, PageKind::File, false, support::SRC).unwrap();
    k.access(0, a, code, false).unwrap();
    k.access(0, a, data, false).unwrap();
    assert_eq!(stock_inactive_verdict(&k.page_view(code)), Verdict::Activate);
    assert_eq!(stock_inactive_verdict(&k.page_view(data)), Verdict::Keep);
}
