//! I/O buffers allocated the way Android's ION system heap does
//! (`drivers/staging/android/ion/ion_system_heap.c`, ISMM'15 Fig. 1): a buffer is built from
//! blocks of order 8, 4 and 0 (1 MiB, 64 KiB, 4 KiB: the IOMMU page sizes), largest first.
//! `alloc_largest_available` tries the orders not above `max_order` that fit the remaining size;
//! after each block `max_order` becomes that block's order, so once a buffer falls back to a
//! smaller order it never goes back up. Blocks are unmovable and freed together.
//!
//! What each attempt may do depends on the kernel's `gfp` flags ([`IonGfp`]):
//! - **Linux 3.4** (Android 4.2, ISMM'15's Nexus 10): every order is allocated with
//!   `GFP_HIGHUSER | __GFP_ZERO | __GFP_COMP | __GFP_NOWARN | __GFP_NORETRY`. `GFP_HIGHUSER`
//!   carries `__GFP_WAIT`, so a high-order attempt the free lists cannot serve goes through
//!   `__alloc_pages_slowpath`: wake kswapd, async direct compaction, one round of direct reclaim,
//!   and (no retry: `__GFP_NORETRY`) a last sync compaction before failing (3.4
//!   `mm/page_alloc.c`). Compaction is skipped when deferred or not suitable (see
//!   [`crate::compaction`]).
//! - **Linux 3.10 and later**: orders above 4 use
//!   `(GFP_HIGHUSER | __GFP_ZERO | __GFP_NOWARN | __GFP_NORETRY | __GFP_NO_KSWAPD) & ~__GFP_WAIT`
//!   (4.x: `& ~__GFP_RECLAIM`): free lists only, no kswapd, no compaction, no reclaim. Orders 4
//!   and 0 use `GFP_HIGHUSER | __GFP_ZERO | __GFP_NOWARN`: the full slow path (order 4 is above
//!   `PAGE_ALLOC_COSTLY_ORDER`, so one reclaim/compaction round, no retry loop).
//!
//! Clearing (both releases): off the allocation's latency, when a buffer is freed. Android's 3.4
//! tree already has ION page pools (`drivers/gpu/ion/ion_system_heap.c`: uncached buffers come
//! from `ion_page_pool_alloc`, and `free_buffer_page` memsets each page before
//! `ion_page_pool_free`; 3.10+: `ion_heap_buffer_zero` in `ion_system_heap_free`), so a pooled
//! page is handed out already clear. ISMM'15 Fig. 11 agrees: RG medians of 0.27-0.53 ms for
//! ~11 MB buffers are below what clearing 11 MB takes at DRAM bandwidth (~2 ms here).
//!
//! Costs (charged to the allocating actor, on the buffer's latency): per block one `alloc_pages`
//! call served from the free lists plus ION's bookkeeping for it (a `page_info` from kmalloc, a
//! list and scatterlist entry), [`ION_BLOCK_NS_HOST`]; per page of each block the allocator's
//! `struct page` preparation (3.4 `prep_new_page` runs `check_new_page` on every page of the
//! block, and `__GFP_COMP` makes `prep_compound_page` write every tail page),
//! [`ION_PAGE_NS_HOST`]; both scaled by the device's `speed_factor`; plus every stall of the slow
//! path (compaction scans and migrations, direct reclaim). So an 11 MB buffer of 1 MiB blocks
//! costs ~11 block calls and 2,816 page preparations, the same buffer of 4 KiB pages 2,816 of
//! each. The IOMMU mapping of each block (ISMM'15 Fig. 14: IOMMU work scales with the number of
//! allocation units; done when the buffer is mapped, not inside `ion_alloc`, so not on Fig. 11's
//! allocation time) is charged as CPU only, one minor fault of the device (`minor_fault_ns`) per
//! block. On free, the kernel pays the clearing per page at half a page copy
//! (`page_copy_ns / 2`, estimate: clearing writes the page, a copy reads and writes it, and both
//! are DRAM-bandwidth bound).
//!
//! Simplified: ION's page pools are not modelled except for where clearing happens (freed,
//! cleared blocks go straight back to the buddy allocator, as the ISMM'15 Fig. 1 heap does); order-0 pages use the normal user-page slow path
//! with its retries (3.4's `__GFP_NORETRY` would fail them after one reclaim round instead).

use crate::alloc::{HighOrderGfp, Take};
use crate::hooks::AllocPurpose;
use crate::types::*;
use crate::{IoBuffer, Kernel, KernelError, OWNER_KERNEL};
use engine::{Actor, Category, Nanos, Stall};
use serde::Serialize;

/// Host cost of one ION block allocation from the free lists, ns (estimate: a Linux order-0
/// `alloc_pages` takes ~94 ns on one core (LLFree, USENIX ATC'23, their intro); ION adds a
/// kmalloc'd `page_info` (a slab fast path is ~10 ns) and its list and scatterlist entries).
pub const ION_BLOCK_NS_HOST: f64 = 110.0;
/// Host cost of preparing one `struct page` of an allocated block, ns (estimate: the flag checks
/// and tail-page writes of `prep_new_page` / `prep_compound_page`, a sequential walk of `struct
/// page`s as the compaction scanner's, [`crate::compaction`]).
pub const ION_PAGE_NS_HOST: f64 = 10.0;

/// The ION system heap's orders (`orders[] = {8, 4, 0}`).
pub const ION_ORDERS: [u8; 3] = [8, 4, 0];

/// Which `gfp` flags the ION system heap passes per order; decided by the kernel release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum IonGfp {
    /// Linux 3.4 (Android 4.x): every order `__GFP_NORETRY` with `__GFP_WAIT` (compaction and
    /// one reclaim round on high-order attempts).
    Linux34,
    /// Linux 3.10 and later: order 8 from the free lists only; orders 4 and 0 the full slow path.
    Linux310,
}

impl IonGfp {
    /// The heap of a kernel release `major.minor` (3.4 and older: [`IonGfp::Linux34`]).
    pub fn for_kernel(major: u32, minor: u32) -> Self {
        if (major, minor) < (3, 10) {
            IonGfp::Linux34
        } else {
            IonGfp::Linux310
        }
    }

    /// What an attempt at `order` may do.
    pub(crate) fn gfp(self, order: u8) -> HighOrderGfp {
        match (self, order > 4) {
            (IonGfp::Linux310, true) => HighOrderGfp::ATOMIC_NO_KSWAPD,
            // 3.4 __GFP_NORETRY and 3.10 low_order_gfp_flags at a costly order: kswapd, async
            // compaction, one direct reclaim round, sync compaction, fail.
            _ => HighOrderGfp::NORETRY,
        }
    }
}

/// I/O-buffer allocations over a run (ISMM'15 Fig. 10 order mix and Fig. 11 latency).
#[derive(Debug, Clone, Default, Serialize)]
pub struct IoBufferStats {
    /// Buffers allocated.
    pub allocations: u64,
    /// Bytes requested over all buffers.
    pub bytes: u64,
    /// Blocks handed out per buddy order (ION uses orders 8, 4 and 0).
    pub blocks_by_order: [u64; NR_ORDERS],
    /// Attempts per order the allocator could not serve (the buffer fell back to a lower order).
    pub failed_by_order: [u64; NR_ORDERS],
    /// Direct compactions run inside I/O-buffer allocations, and their CPU time (ns).
    pub compact_stalls: u64,
    pub compact_ns: Nanos,
    /// Buffers whose allocation ran at least one direct compaction (not in the JSON report).
    #[serde(skip)]
    pub compacted_buffers: u64,
    /// Latency of each allocation, ns, in order.
    pub latencies_ns: Vec<Nanos>,
    /// Free pages in blocks of order >= 8 (whole IOMMU megabyte pages) when each allocation
    /// started, in order: whether the buddy allocator could serve the buffer without falling
    /// back, before any compaction. Diagnostic (not in the JSON report).
    #[serde(skip)]
    pub megablock_free_pages: Vec<u64>,
}

impl Kernel {
    /// Time to clear one page (estimate: half a page copy, see the module docs).
    fn page_clear_ns(&self) -> Nanos {
        (self.params.page_copy_ns / 2).max(1)
    }

    /// Allocate an I/O buffer of `bytes` the way the ION system heap does (module docs).
    pub fn alloc_io_buffer(&mut self, now: Nanos, actor: Actor, bytes: u64) -> Result<IoBuffer, KernelError> {
        self.last_now = self.last_now.max(now);
        let pages = bytes.div_ceil(PAGE_SIZE);
        let mut remaining = pages;
        let mut buf = IoBuffer::default();
        let mut stall = Stall::ZERO;
        let ion = self.params.ion_gfp;
        let (stalls0, compact0) = (self.vmstat.compact_stall, self.direct_compact_ns);
        let mut max_idx = 0;
        let counts = self.buddy.free_block_counts();
        let megablock_free: u64 = (8..NR_ORDERS).map(|o| counts[o] << o).sum();
        while remaining > 0 {
            let mut got = None;
            for (i, &order) in ION_ORDERS.iter().enumerate().skip(max_idx) {
                if remaining < 1 << order {
                    continue;
                }
                let pfn = if order == 0 {
                    Some(self.alloc_io_page(now + stall.ns, actor, &mut stall)?)
                } else {
                    self.alloc_high_order(
                        now + stall.ns,
                        actor,
                        order,
                        Take::Frames(MigrateType::Unmovable, AllocPurpose::IoBuffer),
                        ion.gfp(order),
                        &mut stall,
                    )
                };
                match pfn {
                    Some(pfn) => {
                        got = Some((i, pfn, order));
                        break;
                    }
                    None => self.io_buffers.failed_by_order[order as usize] += 1,
                }
            }
            let (i, pfn, order) = got.expect("order 0 either succeeds or returns an error");
            buf.blocks.push((pfn, order));
            remaining -= 1 << order;
            max_idx = i;
        }
        let alloc_ns = self.io_blocks_cost(&buf.blocks);
        let iommu_ns = buf.blocks.len() as u64 * self.params.minor_fault_ns;
        self.cpu.charge(actor, Category::Fault, alloc_ns + iommu_ns);
        buf.latency_ns = stall.ns + alloc_ns;
        let compact_ns = self.direct_compact_ns - compact0;
        let stalls = self.vmstat.compact_stall - stalls0;
        let st = &mut self.io_buffers;
        st.allocations += 1;
        st.bytes += bytes;
        st.compact_stalls += stalls;
        st.compacted_buffers += u64::from(stalls > 0);
        st.compact_ns += compact_ns;
        for &(_, order) in &buf.blocks {
            st.blocks_by_order[order as usize] += 1;
        }
        st.latencies_ns.push(buf.latency_ns);
        st.megablock_free_pages.push(megablock_free);
        Ok(buf)
    }

    /// CPU of handing out `blocks` (pfn, order) from the free lists: a call per block and a
    /// `struct page` preparation per page (module docs).
    pub fn io_blocks_cost(&self, blocks: &[(Pfn, u8)]) -> Nanos {
        let f = self.params.cpu_factor;
        let pages: u64 = blocks.iter().map(|&(_, o)| 1u64 << o).sum();
        (blocks.len() as f64 * ION_BLOCK_NS_HOST * f + pages as f64 * ION_PAGE_NS_HOST * f).round() as Nanos
    }

    pub(crate) fn alloc_io_page(
        &mut self,
        now: Nanos,
        actor: Actor,
        stall: &mut Stall,
    ) -> Result<Pfn, KernelError> {
        let pfn = self.alloc_frame_slowpath(now, actor, AllocPurpose::IoBuffer, stall)?;
        self.frame_owner[pfn as usize] = OWNER_KERNEL;
        self.kernel_frames += 1;
        Ok(pfn)
    }

    /// Free an I/O buffer's blocks, cleared first on the kernel's account (module docs).
    pub fn free_io_buffer(&mut self, buf: IoBuffer) {
        let pages: u64 = buf.blocks.iter().map(|&(_, o)| 1u64 << o).sum();
        let cpu = pages * self.page_clear_ns();
        self.cpu.charge(Actor::Kernel, Category::Fault, cpu);
        for (pfn, order) in buf.blocks {
            self.free_kernel_frames(pfn, order, AllocPurpose::IoBuffer);
        }
    }
}
