//! Software prefetch for the simulator's hot loops over dense arrays (the collector's trace,
//! zram's slot and chunk tables, …): a cache hint only, never a change to any result.

/// Hint the CPU to load `v[i]` into cache; a no-op off x86-64. Never changes a result: it only
/// hides memory latency (ART's mark stack prefetches the same way). `i` may be out of bounds: a
/// prefetch never faults, and the address is computed with wrapping arithmetic.
#[inline(always)]
pub fn prefetch<T>(v: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch has no architectural effect, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            v.as_ptr().wrapping_add(i).cast::<i8>(),
        )
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, i);
}
