//! Transparent huge pages for the simulator's big arrays (a host-side speed-up; results cannot
//! depend on it).
//!
//! The simulator's hot loops index multi-megabyte tables at random: the kernel model's page table
//! and frame arrays, the heap's object records and mark bitmaps, the blueprints. With 4 KiB host
//! pages nearly every such access also misses the TLB. Hosts commonly run THP in `madvise` mode
//! (`/sys/kernel/mm/transparent_hugepage/enabled` = `[madvise]`), where only regions marked
//! `MADV_HUGEPAGE` get 2 MiB pages. This allocator is the system one, plus that mark on every
//! block of at least [`DEFAULT_MIN`] bytes (glibc serves those with their own `mmap`, see
//! `tune_malloc` in `main.rs`, so the mark covers only that block and ends with it); a block
//! growing past that size moves to its own mapping (glibc would grow it in its arena). Under
//! `always` the mark changes nothing, under `never` it is ignored; a failing `madvise` is ignored
//! too (it is only advice).
//!
//! The threshold trades CPU for resident memory: a huge page is resident whole even where the
//! block touches a few of its 4 KiB pages. Measured on the default day (android, same-host pairs):
//! marking from 2 MiB saves ~3% CPU and adds ~20 MB of peak RSS (587 -> 601-609 MB); from 16 MiB
//! (the default: the kernel model's tables and the largest heaps) it saves ~3.5% and adds ~8 MB
//! (588 -> 594-597 MB); from 64 MiB nothing changes. `HOTLAUNCH_THP=N` sets the threshold in MiB
//! (`0`: no marking).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Blocks at least this large are marked (`usize::MAX`: none; set by [`configure`]).
static THRESHOLD: AtomicUsize = AtomicUsize::new(DEFAULT_MIN);

/// The default threshold (see the module docs for the measurement behind it).
pub const DEFAULT_MIN: usize = 16 << 20;

/// The current threshold in bytes.
pub fn threshold() -> usize {
    THRESHOLD.load(Ordering::Relaxed)
}

/// Read `HOTLAUNCH_THP`: `0` marks nothing (the system allocator's behaviour), `N` marks blocks
/// of at least N MiB (at least 2). Call first thing in `main`, before other threads start.
pub fn configure() {
    if let Some(v) = std::env::var("HOTLAUNCH_THP")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        let t = if v == 0 {
            usize::MAX
        } else {
            (v << 20).max(HUGE_MIN)
        };
        THRESHOLD.store(t, Ordering::Relaxed);
    }
}

/// The smallest threshold: smaller blocks cannot hold an aligned 2 MiB page.
pub const HUGE_MIN: usize = 2 << 20;

/// The system allocator, marking big blocks `MADV_HUGEPAGE` (see the module docs).
pub struct HugeAlloc;

#[cfg(target_os = "linux")]
fn advise(ptr: *mut u8, size: usize) {
    extern "C" {
        fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
    }
    const MADV_HUGEPAGE: i32 = 14;
    if ptr.is_null() || size < threshold() {
        return;
    }
    // madvise wants a page-aligned start; the block's own mapping starts at or before it.
    let start = ptr as usize & !4095;
    let len = ptr as usize + size - start;
    // SAFETY: advice on the block's own (mapped) pages; it changes no memory contents.
    unsafe {
        madvise(start as *mut std::ffi::c_void, len, MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_ptr: *mut u8, _size: usize) {}

// SAFETY: every call is forwarded to `System` unchanged; `advise` only adds advice on the
// returned block.
unsafe impl GlobalAlloc for HugeAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        advise(p, layout.size());
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        advise(p, layout.size());
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let t = threshold();
        if layout.size() < t && new_size >= t {
            // A vector growing past the mark: glibc would grow a small block in its arena, in
            // 4 KiB pages. Move it to a block of its own (an `mmap`, marked before its pages are
            // first touched) instead; later growth `mremap`s that block, which keeps the mark.
            let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
            let p = self.alloc(new_layout);
            if !p.is_null() {
                std::ptr::copy_nonoverlapping(ptr, p, layout.size());
                System.dealloc(ptr, layout);
            }
            return p;
        }
        let p = System.realloc(ptr, layout, new_size);
        advise(p, new_size);
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Growing a block past the mark (moved to its own mapping), further (`mremap`ed) and back
    /// below it keeps its contents, whatever path each step takes.
    #[test]
    fn realloc_across_the_mark_keeps_contents() {
        let a = HugeAlloc;
        let mark = threshold();
        let small = mark / 2 + 12;
        let layout = Layout::from_size_align(small, 8).unwrap();
        // SAFETY: sizes are non-zero, every pointer is used with the layout it was given.
        unsafe {
            let p = a.alloc(layout);
            assert!(!p.is_null());
            for i in 0..small {
                *p.add(i) = (i % 251) as u8;
            }
            let big = mark + 4096 * 3 + 5;
            let q = a.realloc(p, layout, big);
            assert!(!q.is_null());
            assert!((0..small).all(|i| *q.add(i) == (i % 251) as u8));
            *q.add(big - 1) = 7;
            let bigger = 3 * mark;
            let r = a.realloc(q, Layout::from_size_align(big, 8).unwrap(), bigger);
            assert!((0..small).all(|i| *r.add(i) == (i % 251) as u8));
            assert_eq!(*r.add(big - 1), 7);
            let s = a.realloc(r, Layout::from_size_align(bigger, 8).unwrap(), 100);
            assert!((0..100).all(|i| *s.add(i) == (i % 251) as u8));
            a.dealloc(s, Layout::from_size_align(100, 8).unwrap());
            let z = a.alloc_zeroed(Layout::from_size_align(mark, 16).unwrap());
            assert!((0..mark).step_by(4093).all(|i| *z.add(i) == 0));
            a.dealloc(z, Layout::from_size_align(mark, 16).unwrap());
        }
    }
}
