//! The flusher: a written file page is written back once, `dirty_expire` after it was dirtied,
//! at a `dirty_writeback` wake-up; it stays resident and clean, and the bytes count as written.

mod support;

use engine::Actor;
use hotlaunch_kernel as kernel;
use kernel::dirty::{DIRTY_EXPIRE_NS, DIRTY_WRITEBACK_NS};
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
