//! The probe of the ISMM'15 runs: a wrapper around a policy's placement hook that records the
//! buddy free lists around every process exit (row 4) and the pages allocated per purpose
//! (the unmovable demand that rows 1 and 2 explain themselves with).

use kernel::buddy::BuddyAllocator;
use kernel::hooks::{AllocPurpose, PlacementHook};
use kernel::types::{MigrateType, Pfn, Pid, NIL, NR_ORDERS};
use policy::{Params, Policy, PolicyParts, Shared, SwapOverrides};

/// The free-list change a process exit made: pages freed per buddy order (net).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ExitDiff {
    pub t: u64,
    pub diff: [i64; NR_ORDERS],
    /// Free blocks per order just before the exit's first free.
    pub before: [u64; NR_ORDERS],
    /// The exit's file pages, and (large exits with file pages only) the diff had they stayed
    /// allocated: Linux keeps a dead process's file pages in the page cache, to be reclaimed
    /// page by page (ISMM'15 Table 1), where this model frees them with the process.
    pub file_pages: u64,
    pub diff_without_file: Option<[i64; NR_ORDERS]>,
}

impl ExitDiff {
    pub fn pages(&self) -> i64 {
        pages_of(&self.diff)
    }
    /// Pages of positive net gain at orders in `range`.
    pub fn gained(&self, range: std::ops::RangeInclusive<usize>) -> i64 {
        gained_of(&self.diff, range)
    }
}

/// Net pages of a free-list diff.
pub(crate) fn pages_of(diff: &[i64; NR_ORDERS]) -> i64 {
    diff.iter().enumerate().map(|(o, n)| n << o).sum()
}

/// Pages of positive net gain of a free-list diff at orders in `range`.
pub(crate) fn gained_of(diff: &[i64; NR_ORDERS], range: std::ops::RangeInclusive<usize>) -> i64 {
    range.map(|o| diff[o].max(0) << o).sum()
}

/// Allocation kinds tallied by the probe: user pages, per-process kernel memory (stacks, page
/// tables), other kernel memory (slab, vmalloc, GPU), I/O buffers, zram.
pub(crate) const PURPOSES: [&str; 5] = [
    "user",
    "stacks+page tables",
    "slab+vmalloc+GPU",
    "I/O buffers",
    "zram",
];

fn purpose_index(p: AllocPurpose) -> usize {
    match p {
        AllocPurpose::User { .. } => 0,
        AllocPurpose::KernelForProcess(_) => 1,
        AllocPurpose::Kernel | AllocPurpose::Vmalloc | AllocPurpose::Gpu => 2,
        AllocPurpose::IoBuffer => 3,
        AllocPurpose::Zram => 4,
    }
}

/// What the probe records over a run.
#[derive(Debug, Default)]
pub(crate) struct ProbeLog {
    pub exits: Vec<ExitDiff>,
    /// Pages allocated per [`PURPOSES`] entry (cumulative).
    pub alloc_pages: [u64; PURPOSES.len()],
    /// I/O-buffer blocks of order 8 taken from their own (unmovable) free lists, and taken by
    /// falling back to another type's.
    pub ion8_own: u64,
    pub ion8_fallback: u64,
}

/// Delegates to the policy's placement and records the free lists around each process exit:
/// a snapshot at the first free after any allocation, the diff at `process_exit`.
pub(crate) struct ExitProbe {
    inner: Box<dyn PlacementHook>,
    log: Shared<ProbeLog>,
    snap: [u64; NR_ORDERS],
    freeing: Pid,
    /// File frames the exiting process has freed so far.
    file_frees: Vec<(Pfn, u8)>,
}

/// Exits freeing at least this many pages (50 MB, row 4's large apps) get the counterfactual.
pub(crate) const LARGE_EXIT_PAGES: i64 = 12_800;

impl PlacementHook for ExitProbe {
    fn alloc(
        &mut self,
        cx: &mut engine::HookCx,
        buddy: &mut BuddyAllocator,
        order: u8,
        mt: MigrateType,
        purpose: AllocPurpose,
    ) -> Option<Pfn> {
        self.freeing = NIL;
        let steals = buddy.stats().fallback_steals;
        let pfn = self.inner.alloc(cx, buddy, order, mt, purpose);
        if pfn.is_some() {
            let fell_back = buddy.stats().fallback_steals != steals;
            self.log.with(|l| {
                l.alloc_pages[purpose_index(purpose)] += 1 << order;
                if purpose == AllocPurpose::IoBuffer && order == 8 {
                    *if fell_back {
                        &mut l.ion8_fallback
                    } else {
                        &mut l.ion8_own
                    } += 1;
                }
            });
        }
        pfn
    }
    fn free(
        &mut self,
        cx: &mut engine::HookCx,
        buddy: &mut BuddyAllocator,
        pfn: Pfn,
        order: u8,
        purpose: AllocPurpose,
    ) {
        let pid = match purpose {
            AllocPurpose::User { pid, .. } | AllocPurpose::KernelForProcess(pid) => pid,
            _ => NIL,
        };
        if pid != self.freeing {
            self.snap = buddy.free_block_counts();
            self.freeing = pid;
            self.file_frees.clear();
        }
        if let AllocPurpose::User {
            kind: kernel::types::PageKind::File,
            ..
        } = purpose
        {
            self.file_frees.push((pfn, order));
        }
        self.inner.free(cx, buddy, pfn, order, purpose)
    }
    fn held_free_pages(&self) -> u64 {
        self.inner.held_free_pages()
    }
    fn block_wanted(
        &mut self,
        cx: &mut engine::HookCx,
        buddy: &BuddyAllocator,
        purpose: AllocPurpose,
    ) -> Option<u8> {
        self.inner.block_wanted(cx, buddy, purpose)
    }
    fn migrate_page(&mut self, cx: &mut engine::HookCx, pfn: Pfn, purpose: AllocPurpose) -> bool {
        self.inner.migrate_page(cx, pfn, purpose)
    }
    fn reclaim_unit(&mut self, cx: &mut engine::HookCx, pfn: Pfn, purpose: AllocPurpose, out: &mut Vec<Pfn>) {
        self.inner.reclaim_unit(cx, pfn, purpose, out)
    }
    fn process_exit(&mut self, cx: &mut engine::HookCx, buddy: &mut BuddyAllocator, pid: Pid) {
        self.inner.process_exit(cx, buddy, pid);
        if self.freeing == pid {
            let now = buddy.free_block_counts();
            let diff = std::array::from_fn(|o| now[o] as i64 - self.snap[o] as i64);
            let (t, before) = (cx.now, self.snap);
            let file_pages = self.file_frees.iter().map(|&(_, o)| 1u64 << o).sum();
            let diff_without_file = (pages_of(&diff) >= LARGE_EXIT_PAGES && file_pages > 0).then(|| {
                // Take the file frames back out of a copy (those a region policy kept are
                // not free in the buddy allocator and stay as they are).
                let mut b = buddy.clone();
                for &(pfn, o) in &self.file_frees {
                    b.alloc_exact(pfn, o);
                }
                let kept = b.free_block_counts();
                std::array::from_fn(|o| kept[o] as i64 - self.snap[o] as i64)
            });
            self.log.with(|l| {
                l.exits.push(ExitDiff {
                    t,
                    diff,
                    before,
                    file_pages,
                    diff_without_file,
                })
            });
        }
        self.freeing = NIL;
    }
}

/// A policy with an [`ExitProbe`] around its placement.
pub(crate) struct Probed<'a> {
    pub inner: &'a dyn Policy,
    pub log: Shared<ProbeLog>,
}

impl Policy for Probed<'_> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn description(&self) -> &'static str {
        self.inner.description()
    }
    fn params(&self) -> Vec<policy::ParamSpec> {
        self.inner.params()
    }
    fn build(
        &self,
        device: &device::DeviceProfile,
        swap: SwapOverrides,
        params: &Params,
    ) -> Result<PolicyParts, String> {
        let mut parts = self.inner.build(device, swap, params)?;
        let inner = std::mem::replace(
            &mut parts.kernel_hooks.placement,
            Box::new(kernel::hooks::BuddyPlacement),
        );
        parts.kernel_hooks.placement = Box::new(ExitProbe {
            inner,
            log: self.log.clone(),
            snap: [0; NR_ORDERS],
            freeing: NIL,
            file_frees: Vec::new(),
        });
        Ok(parts)
    }
}
