//! Transparent huge pages for the simulator's big arrays (a host-side speed-up; results cannot
//! depend on it).
//!
//! The simulator's hot loops index multi-megabyte tables at random: the kernel model's page table
//! and frame arrays, the heap's object records and mark bitmaps, the blueprints. With 4 KiB host
//! pages nearly every such access also misses the TLB. Hosts commonly run THP in `madvise` mode
//! (`/sys/kernel/mm/transparent_hugepage/enabled` = `[madvise]`), where only regions marked
//! `MADV_HUGEPAGE` get 2 MiB pages. This allocator is the system one, plus that mark on every
//! block of at least [`HUGE_MIN`] bytes (glibc serves those with their own `mmap`, see
//! `tune_malloc` in `main.rs`, so the mark covers only that block and ends with it); a block
//! growing past that size moves to its own mapping (glibc would grow it in its arena). Under
//! `always` the mark changes nothing, under `never` it is ignored; a failing `madvise` is ignored
//! too (it is only advice).

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks at least this large are marked: smaller ones cannot hold an aligned 2 MiB page.
pub const HUGE_MIN: usize = 2 << 20;

/// The system allocator, marking big blocks `MADV_HUGEPAGE` (see the module docs).
pub struct HugeAlloc;

#[cfg(target_os = "linux")]
fn advise(ptr: *mut u8, size: usize) {
    extern "C" {
        fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
    }
    const MADV_HUGEPAGE: i32 = 14;
    if ptr.is_null() || size < HUGE_MIN {
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
        if layout.size() < HUGE_MIN && new_size >= HUGE_MIN {
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
        let small = HUGE_MIN / 2 + 12;
        let layout = Layout::from_size_align(small, 8).unwrap();
        // SAFETY: sizes are non-zero, every pointer is used with the layout it was given.
        unsafe {
            let p = a.alloc(layout);
            assert!(!p.is_null());
            for i in 0..small {
                *p.add(i) = (i % 251) as u8;
            }
            let big = HUGE_MIN + 4096 * 3 + 5;
            let q = a.realloc(p, layout, big);
            assert!(!q.is_null());
            assert!((0..small).all(|i| *q.add(i) == (i % 251) as u8));
            *q.add(big - 1) = 7;
            let bigger = 3 * HUGE_MIN;
            let r = a.realloc(q, Layout::from_size_align(big, 8).unwrap(), bigger);
            assert!((0..small).all(|i| *r.add(i) == (i % 251) as u8));
            assert_eq!(*r.add(big - 1), 7);
            let s = a.realloc(r, Layout::from_size_align(bigger, 8).unwrap(), 100);
            assert!((0..100).all(|i| *s.add(i) == (i % 251) as u8));
            a.dealloc(s, Layout::from_size_align(100, 8).unwrap());
            let z = a.alloc_zeroed(Layout::from_size_align(HUGE_MIN, 16).unwrap());
            assert!((0..HUGE_MIN).step_by(4093).all(|i| *z.add(i) == 0));
            a.dealloc(z, Layout::from_size_align(HUGE_MIN, 16).unwrap());
        }
    }
}
