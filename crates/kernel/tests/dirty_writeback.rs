//! The flusher: a written file page is written back once, `dirty_expire` after it was dirtied,
//! at a `dirty_writeback` wake-up; it stays resident and clean, and the bytes count as written.

mod support;

use engine::Actor;
use hotlaunch_kernel as kernel;
use kernel::dirty::{PageWrite, DIRTY_EXPIRE_NS, DIRTY_WRITEBACK_NS};
use kernel::hooks::KernelHooks;
use kernel::mm::ContentSource;
use kernel::types::*;

const SRC: ContentSource = ContentSource {
    base: 0,
    len: 64,
    seed: 7,
};

#[test]
fn dirtied_file_page_is_written_back_once_after_expiry() {
    let mut k = support::kernel_with(Vec::new(), KernelHooks::default());
    let pid = k.spawn("app", 0, 2);
    let first = k.mmap(pid, 64, PageKind::File, false, SRC).unwrap();
    let actor = Actor::AppMain(pid);
    // Read in (clean), then write two adjacent pages and one apart at t = 1 s.
    k.access_range(0, actor, first, 64, false).unwrap();
    k.advance_to(1_000_000_000);
    let (w0, n0) = (k.flash.bytes_written, k.flash.writes);
    let t = 1_000_000_000;
    for idx in [first + 3, first + 4, first + 40] {
        k.access(t, actor, idx, true).unwrap();
    }
    // Written twice more before expiry: still one writeback.
    k.access(t + 10_000_000_000, actor, first + 3, true).unwrap();
    assert!(k.page(first + 3).unwrap().has(flags::DIRTY));
    // Not before dirty_expire (the wake-up at 30 s sees pages dirtied 29 s ago).
    k.advance_to(t + DIRTY_EXPIRE_NS - 1);
    assert_eq!(k.flash.bytes_written, w0, "nothing written before expiry");
    // The first wake-up at or after 31 s (35 s) writes them.
    k.advance_to(t + DIRTY_EXPIRE_NS + DIRTY_WRITEBACK_NS);
    assert_eq!(k.flash.bytes_written - w0, 3 * 4096);
    assert_eq!(k.flash.writes - n0, 2, "adjacent pages merged into one request");
    assert_eq!(k.vmstat.flusher_written_pages, 3);
    for idx in [first + 3, first + 4, first + 40] {
        let p = k.page(idx).unwrap();
        assert_eq!(p.state, PageState::Resident, "stays resident");
        assert!(!p.has(flags::DIRTY), "clean after writeback");
    }
    // No second writeback without a new write.
    k.advance_to(t + 10 * DIRTY_EXPIRE_NS);
    assert_eq!(k.flash.bytes_written - w0, 3 * 4096);
    // A new write is written back again.
    let t2 = t + 10 * DIRTY_EXPIRE_NS;
    k.access(t2, actor, first + 40, true).unwrap();
    k.advance_to(t2 + DIRTY_EXPIRE_NS + DIRTY_WRITEBACK_NS);
    assert_eq!(k.flash.bytes_written - w0, 4 * 4096);
    assert_eq!(k.dirty_queued(), 0);
}

#[test]
fn anonymous_writes_are_not_flushed() {
    let mut k = support::kernel_with(Vec::new(), KernelHooks::default());
    let pid = k.spawn("app", 0, 2);
    let first = k.mmap(pid, 16, PageKind::NativeAnon, false, SRC).unwrap();
    k.access_range(0, Actor::AppMain(pid), first, 16, true).unwrap();
    k.advance_to(10 * DIRTY_EXPIRE_NS);
    assert_eq!(k.flash.bytes_written, 0);
    assert_eq!(k.dirty_queued(), 0);
}

/// A kernel with one 64-page file mapping not in memory: (kernel, pid, first page).
fn file_mapping() -> (kernel::Kernel, u32, PageIdx) {
    let mut k = support::kernel_with(Vec::new(), KernelHooks::default());
    let pid = k.spawn("app", 0, 2);
    let first = k.mmap(pid, 64, PageKind::File, false, SRC).unwrap();
    (k, pid, first)
}

#[test]
fn whole_page_write_of_an_uncached_page_reads_nothing_and_is_written_back() {
    let (mut k, pid, first) = file_mapping();
    let actor = Actor::AppMain(pid);
    k.write_file_page(0, actor, first + 5, PageWrite::Whole).unwrap();
    assert_eq!(
        k.flash.bytes_read, 0,
        "write_begin of a fully overwritten page reads nothing"
    );
    let p = k.page(first + 5).unwrap();
    assert_eq!(p.state, PageState::Resident);
    assert!(p.has(flags::DIRTY));
    assert!(
        !p.has(flags::ACCESSED),
        "a write() does not mark the page accessed"
    );
    for q in [first + 4, first + 6] {
        assert_eq!(
            k.page(q).unwrap().state,
            PageState::Dropped,
            "no readahead around a write"
        );
    }
    assert_eq!((k.vmstat.pgmajfault, k.vmstat.pgpgin_file), (0, 0));
    k.advance_to(DIRTY_EXPIRE_NS + DIRTY_WRITEBACK_NS);
    assert_eq!(k.flash.bytes_written, 4096);
    assert_eq!(k.vmstat.flusher_written_pages, 1);
}

#[test]
fn partial_write_and_small_read_read_one_page_where_a_fault_reads_around() {
    let (mut k, pid, first) = file_mapping();
    let actor = Actor::AppMain(pid);
    k.write_file_page(0, actor, first + 5, PageWrite::Partial)
        .unwrap();
    assert_eq!(
        k.flash.bytes_read, 4096,
        "__block_write_begin reads that page only"
    );
    assert!(k.page(first + 5).unwrap().has(flags::DIRTY));
    assert_eq!(k.page(first + 6).unwrap().state, PageState::Dropped);
    k.read_file_page(0, actor, first + 40).unwrap();
    assert_eq!(
        k.flash.bytes_read,
        2 * 4096,
        "a small random read() reads that page only"
    );
    assert!(!k.page(first + 40).unwrap().has(flags::DIRTY));
    // Resident: no read, the write just dirties it.
    k.write_file_page(0, actor, first + 40, PageWrite::Partial)
        .unwrap();
    assert_eq!(k.flash.bytes_read, 2 * 4096);
    assert!(k.page(first + 40).unwrap().has(flags::DIRTY));
    // A fault on another page of the mapping reads its whole read-around window.
    k.access(0, actor, first + 20, false).unwrap();
    assert!(k.flash.bytes_read > 3 * 4096, "{}", k.flash.bytes_read);
    assert_eq!(k.vmstat.pgmajfault, 1, "only the fault counts as a major fault");
    // Both written pages reach flash once.
    k.advance_to(DIRTY_EXPIRE_NS + DIRTY_WRITEBACK_NS);
    assert_eq!(k.vmstat.flusher_written_pages, 2);
}

#[test]
fn write_fault_on_an_uncached_file_page_is_queued_for_the_flusher() {
    let (mut k, pid, first) = file_mapping();
    k.access(0, Actor::AppMain(pid), first + 3, true).unwrap();
    assert_eq!(k.dirty_queued(), 1);
    k.advance_to(DIRTY_EXPIRE_NS + DIRTY_WRITEBACK_NS);
    assert_eq!(k.vmstat.flusher_written_pages, 1);
}
