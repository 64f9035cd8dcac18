//! File read-around and `mmap_miss` (Linux mm/filemap.c `do_sync_mmap_readahead`,
//! `filemap_map_pages`): a fault reads its `read_ahead_kb` window while read-around pays off;
//! a mapping whose faults miss `MMAP_LOTSAMISS` more times than its read-around pages are used
//! gets single-page reads until hits bring the count down again.

mod support;

use engine::Actor;
use hotlaunch_kernel as kernel;
use kernel::hooks::KernelHooks;
use kernel::types::*;
use kernel::{FAULT_AROUND_PAGES, MMAP_LOTSAMISS};

fn file_mapping(pages: u32) -> (kernel::Kernel, Actor, PageIdx, u32) {
    let mut k = support::kernel_with(Vec::new(), KernelHooks::default());
    let pid = k.spawn("app", 0, 2);
    let first = k.mmap(pid, pages, PageKind::File, false, support::SRC).unwrap();
    let ra = k.params.read_ahead_pages;
    assert!(ra > FAULT_AROUND_PAGES, "pixel3 reads 128 KiB around a fault");
    (k, Actor::AppMain(pid), first, ra)
}

#[test]
fn sequential_use_keeps_read_around() {
    let (mut k, actor, first, ra) = file_mapping(200 * 32);
    let windows = 2 * MMAP_LOTSAMISS as u32;
    for q in 0..windows * ra {
        k.access(0, actor, first + q, false).unwrap();
    }
    assert_eq!(k.vmstat.pgmajfault, windows as u64, "one fault per window");
    assert_eq!(
        k.vmstat.pgpgin_file,
        (windows * ra) as u64,
        "every page read was used"
    );
}

#[test]
fn sparse_faults_stop_read_around_until_hits_return() {
    let (mut k, actor, first, ra) = file_mapping(200 * 32);
    let lots = MMAP_LOTSAMISS as u32;
    // One page per window, its neighbours never used: every fault is a miss.
    for w in 0..lots {
        k.access(0, actor, first + w * ra, false).unwrap();
    }
    assert_eq!(
        k.vmstat.pgpgin_file,
        (lots * ra) as u64,
        "read-around while misses <= limit"
    );
    for w in lots..lots + 20 {
        k.access(0, actor, first + w * ra, false).unwrap();
    }
    assert_eq!(
        k.vmstat.pgpgin_file,
        (lots * ra + 20) as u64,
        "past MMAP_LOTSAMISS a fault reads its page only"
    );
    // Using read-around pages brought in earlier counts as hits (fault-around maps 16 at once).
    for w in 0..4 {
        k.access(0, actor, first + w * ra + 1, false).unwrap();
        k.access(0, actor, first + w * ra + FAULT_AROUND_PAGES + 1, false)
            .unwrap();
    }
    let before = k.vmstat.pgpgin_file;
    let w = lots + 20;
    k.access(0, actor, first + w * ra, false).unwrap();
    assert_eq!(
        k.vmstat.pgpgin_file - before,
        ra as u64,
        "enough hits: read-around again"
    );
    assert_eq!(
        k.vmstat.pgmajfault,
        (lots + 21) as u64,
        "hits are not major faults"
    );
}

#[test]
fn cached_neighbours_of_a_major_fault_count_as_hits() {
    let (mut k, actor, first, ra) = file_mapping(200 * 32);
    let lots = MMAP_LOTSAMISS as u32;
    let used = 8 * ra;
    // A sequentially used region: resident and mapped.
    for q in 0..used {
        k.access(0, actor, first + q, false).unwrap();
    }
    // Sparse faults elsewhere push the count past the limit.
    for w in 8..8 + lots + 20 {
        k.access(0, actor, first + w * ra, false).unwrap();
    }
    // One page dropped from each fault-around window of the used region; its fault maps the
    // window's 15 cached (already mapped) pages first, each a hit in 4.9's filemap_map_pages.
    for q in (0..used).step_by(FAULT_AROUND_PAGES as usize) {
        k.madvise(0, actor, first + q, 1, Advice::PageOut);
    }
    for q in (0..used).step_by(FAULT_AROUND_PAGES as usize) {
        k.access(0, actor, first + q, false).unwrap();
    }
    let before = k.vmstat.pgpgin_file;
    k.access(0, actor, first + (8 + lots + 20) * ra, false).unwrap();
    assert_eq!(
        k.vmstat.pgpgin_file - before,
        ra as u64,
        "mapped cached neighbours brought read-around back"
    );
}
