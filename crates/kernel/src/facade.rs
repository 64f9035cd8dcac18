//! The kernel as framework-level policy code sees it: [`PolicyKernel`].
//!
//! A framework hook (app launched, app moved to the background, a policy timer) gets a
//! `PolicyKernel` instead of `&mut Kernel`. Reads and per-page state writes (policy bits, idle
//! bits, protected bits) happen at once and reach no hook. Everything that could reach a hook
//! (madvise may reclaim, and reclaim calls the reclaim hooks of the same policy) is QUEUED as a
//! [`KernelCmd`] and applied by [`Kernel::apply_policy_cmds`] right after the framework hook
//! returns, at the hook's `now` and charged to its actor. So a policy may keep one state behind an
//! `Rc<RefCell<_>>` for all its layers without a re-entrant borrow.

use crate::hooks::{PageView, ProcView};
use crate::swap::SwapMaintenance;
use crate::types::*;
use crate::{hook_cx, Kernel, MemInfo, Watermarks};
use engine::{Actor, HookCx, Nanos, Stall};

/// A kernel operation queued by policy code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelCmd {
    /// `madvise(first, n, advice)` (PAGEOUT, COLD, WILLNEED, MLOCK, MUNLOCK, WRITE_AHEAD).
    Madvise {
        first: PageIdx,
        n: u32,
        advice: Advice,
    },
    Mlock {
        first: PageIdx,
        n: u32,
    },
    Munlock {
        first: PageIdx,
        n: u32,
    },
    /// Migrate the process's resident frames through the placement hook
    /// ([`Kernel::migrate_process`]), e.g. into the process's own region.
    CompactProcess {
        pid: Pid,
    },
    /// Maintenance of swap device `dev` ([`Kernel::swap_maintenance`]).
    SwapMaintenance {
        dev: u8,
        op: SwapMaintenance,
    },
}

/// A command with the time and actor it was queued by.
#[derive(Debug, Clone, Copy)]
pub(crate) struct QueuedCmd {
    now: Nanos,
    actor: Actor,
    cmd: KernelCmd,
}

/// Narrow view of the kernel for policy code at `now` on behalf of `actor`.
pub struct PolicyKernel<'a> {
    k: &'a mut Kernel,
    now: Nanos,
    actor: Actor,
}

impl Kernel {
    /// The facade for policy code acting at `now` as `actor`.
    pub fn policy_kernel(&mut self, now: Nanos, actor: Actor) -> PolicyKernel<'_> {
        PolicyKernel { k: self, now, actor }
    }

    /// Apply the commands queued through facades, in order; returns the total stall of their
    /// actors (PAGEOUT/WRITE_AHEAD CPU, migration copies).
    pub fn apply_policy_cmds(&mut self) -> Stall {
        let mut total = Stall::ZERO;
        let cmds = std::mem::take(&mut self.policy_cmds);
        for q in &cmds {
            let s = match q.cmd {
                KernelCmd::Madvise { first, n, advice } => self.madvise(q.now, q.actor, first, n, advice),
                KernelCmd::Mlock { first, n } => self.madvise(q.now, q.actor, first, n, Advice::Mlock),
                KernelCmd::Munlock { first, n } => self.madvise(q.now, q.actor, first, n, Advice::Munlock),
                KernelCmd::CompactProcess { pid } => self.migrate_process(q.now, q.actor, pid),
                KernelCmd::SwapMaintenance { dev, op } => self.swap_maintenance(q.now, q.actor, dev, op),
            };
            total.add(s);
        }
        // Keep the buffer's capacity unless commands were queued while applying (none can be).
        if self.policy_cmds.is_empty() {
            self.policy_cmds = cmds;
            self.policy_cmds.clear();
        }
        total
    }

    /// Commands queued and not applied yet.
    pub fn pending_policy_cmds(&self) -> usize {
        self.policy_cmds.len()
    }
}

impl PolicyKernel<'_> {
    /// A hook context on the kernel's CPU ledger and timers (charges go to `policy`).
    pub fn cx(&mut self) -> HookCx<'_> {
        let k = &mut *self.k;
        hook_cx!(k, self.now, self.actor)
    }

    pub fn now(&self) -> Nanos {
        self.now
    }

    pub fn actor(&self) -> Actor {
        self.actor
    }

    // ----- reads (no hook reached)

    /// A mapped page (`None` for an index out of range or unmapped).
    pub fn page(&self, idx: PageIdx) -> Option<PageView> {
        let p = self.k.pt.pages.get(idx as usize)?;
        (p.state != PageState::Freed).then(|| self.k.page_view(idx))
    }

    pub fn process(&self, pid: Pid) -> Option<ProcView> {
        self.k.procs.get(pid as usize).map(|p| p.view())
    }

    /// The process's mappings as (first page, pages, kind), in mapping order.
    pub fn vmas(&self, pid: Pid) -> Vec<(PageIdx, u32, PageKind)> {
        let Some(p) = self.k.procs.get(pid as usize) else {
            return Vec::new();
        };
        p.vmas
            .iter()
            .filter_map(|&v| self.k.vmas[v].as_ref())
            .map(|v| (v.first, v.pages, v.kind))
            .collect()
    }

    pub fn meminfo(&self) -> MemInfo {
        self.k.meminfo()
    }

    pub fn free_pages(&self) -> u64 {
        self.k.free_pages()
    }

    pub fn watermarks(&self) -> Watermarks {
        self.k.params.watermarks
    }

    // ----- per-page state writes (no hook reached)

    /// The page's policy byte (spare PTE bits). Panics on an index out of range.
    pub fn policy_bits_mut(&mut self, idx: PageIdx) -> &mut u8 {
        &mut self.k.pt.pages[idx as usize].policy_bits
    }

    /// `/sys/kernel/mm/page_idle`: mark `[first, first+n)` idle; the next access clears it.
    pub fn mark_idle(&mut self, first: PageIdx, n: u32) {
        // The next access of these pages clears IDLE: it is no repeat of an earlier one.
        self.k.pt.epoch += 1;
        for p in self.range_mut(first, n) {
            p.flags |= flags::IDLE;
        }
    }

    /// Not accessed since it was last marked idle.
    pub fn is_idle(&self, idx: PageIdx) -> bool {
        self.k
            .pt
            .pages
            .get(idx as usize)
            .is_some_and(|p| p.has(flags::IDLE))
    }

    /// Set or clear the protected bit on `[first, first+n)` (honoured by the policy's own hooks).
    pub fn set_protected(&mut self, first: PageIdx, n: u32, on: bool) {
        for p in self.range_mut(first, n) {
            if on {
                p.flags |= flags::PROTECTED;
            } else {
                p.flags &= !flags::PROTECTED;
            }
        }
    }

    fn range_mut(&mut self, first: PageIdx, n: u32) -> impl Iterator<Item = &mut crate::mm::Page> {
        let pages = &mut self.k.pt.pages;
        let end = (first as usize + n as usize).min(pages.len());
        let start = (first as usize).min(end);
        pages[start..end]
            .iter_mut()
            .filter(|p| p.state != PageState::Freed)
    }

    // ----- queued (applied by `Kernel::apply_policy_cmds` at `now`, charged to `actor`)

    fn push(&mut self, cmd: KernelCmd) {
        let (now, actor) = (self.now, self.actor);
        self.k.policy_cmds.push(QueuedCmd { now, actor, cmd });
    }

    pub fn madvise(&mut self, first: PageIdx, n: u32, advice: Advice) {
        self.push(KernelCmd::Madvise { first, n, advice });
    }

    pub fn mlock(&mut self, first: PageIdx, n: u32) {
        self.push(KernelCmd::Mlock { first, n });
    }

    pub fn munlock(&mut self, first: PageIdx, n: u32) {
        self.push(KernelCmd::Munlock { first, n });
    }

    pub fn compact_process(&mut self, pid: Pid) {
        self.push(KernelCmd::CompactProcess { pid });
    }

    pub fn swap_maintenance(&mut self, dev: u8, op: SwapMaintenance) {
        self.push(KernelCmd::SwapMaintenance { dev, op });
    }
}
