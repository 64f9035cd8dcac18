//! Linux 4.9's `get_scan_count` with the node LRU by page age (`KernelParams::scan_balance_49`,
//! on for a pre-5.8 `kernel_release`): while the node's inactive file list is not low, reclaim
//! scans file pages only (SCAN_FILE), where the 5.8+ cost model splits the scan by swappiness
//! and recent reclaim cost from the start.

mod support;

use engine::Actor;
use hotlaunch_kernel as kernel;
use kernel::hooks::KernelHooks;
use kernel::types::*;
use kernel::Kernel;

fn node_lru_kernel(release: &str, per_app_memcg: bool) -> Kernel {
    let mut d = support::small_device();
    d.android.kernel_release = Some(release.into());
    d.android.per_app_memcg = Some(per_app_memcg);
    d.android.node_lru_by_page_age = Some(true);
    Kernel::new(
        &d,
        support::contents(),
        support::flash(1 << 16),
        KernelHooks::default(),
    )
    .unwrap()
}

/// An app reads 3000 file pages once (all inactive); a filler touches new anon pages until
/// 1000 of the file pages are evicted. Returns (anon pages swapped out, file pages evicted).
fn file_then_anon(scan_balance_49: bool) -> (u64, u32) {
    let mut k = node_lru_kernel("4.9", false);
    k.params.scan_balance_49 = scan_balance_49;
    let n = 3000;
    let reader = k.spawn("reader", 900, 1);
    let f = k.mmap(reader, n, PageKind::File, false, support::SRC).unwrap();
    k.access_range(0, Actor::AppMain(reader), f, n, false).unwrap();
    let filler = k.spawn("filler", 0, 1);
    let managed = k.buddy().nr_pages();
    let anon = k
        .mmap(filler, managed, PageKind::NativeAnon, false, support::SRC)
        .unwrap();
    let mut now = 1_000;
    let gone = |k: &Kernel| {
        (f..f + n)
            .filter(|&i| k.page(i).unwrap().state != PageState::Resident)
            .count() as u32
    };
    for j in 0..managed {
        if gone(&k) >= 1000 {
            break;
        }
        now += k.access(now, Actor::AppMain(filler), anon + j, true).unwrap().ns;
    }
    k.check_invariants().unwrap();
    (k.vmstat.pswpout, gone(&k))
}

#[test]
fn a_large_inactive_file_list_is_scanned_alone_on_4_9() {
    let (swapped, evicted) = file_then_anon(true);
    assert!(evicted >= 1000);
    assert_eq!(swapped, 0, "4.9's SCAN_FILE leaves anon alone");
    let (swapped, _) = file_then_anon(false);
    assert!(swapped > 0, "the cost model scans anon too: {swapped}");
}

#[test]
fn the_4_9_balance_is_derived_from_the_release() {
    assert!(node_lru_kernel("4.9", false).params.scan_balance_49);
    assert!(node_lru_kernel("3.18", false).params.scan_balance_49);
    assert!(node_lru_kernel("5.4", false).params.scan_balance_49);
    assert!(!node_lru_kernel("5.10", false).params.scan_balance_49);
    assert!(!node_lru_kernel("4.9", true).params.scan_balance_49);
    // `inactive_file_is_low` is `inactive < active` before 4.7.
    assert!(node_lru_kernel("3.18", false).params.file_ratio_one);
    assert!(!node_lru_kernel("4.9", false).params.file_ratio_one);
    assert!(!node_lru_kernel("3.18", true).params.file_ratio_one);
}
