//! Swap cache: resident anon pages that also keep a clean copy on a swap backend.
//!
//! A page enters the swap cache when a swap-in keeps the backend copy
//! ([`crate::hooks::FaultHook::keep_swap_copy`]) or when a policy writes it ahead of time
//! (`Advice::WriteAhead`, e.g. ahead-of-time swap of an app about to go to the background).
//! Reclaiming such a page is an unmap without I/O or compression; a write (or `MADV_DONTNEED`,
//! unmap, exit) frees the copy. The handle lives in `Page::shadow` (unused while resident), the
//! backend in `swap_dev`, and the backend counts the copy as stored.
//!
//! Also here: [`Kernel::swap_maintenance`], device maintenance during a run (zram idle ageing and
//! writeback), reachable from policy code through the facade.
//!
//! Simplified: the copy stays until written or reclaimed (Linux also drops swap cache when swap
//! is more than half full); a write-ahead to flash does not delay the caller (asynchronous I/O).

use crate::hook_cx;
use crate::swap::{SwapMaintenance, SwapOutPage};
use crate::types::*;
use crate::{Kernel, SWAP_CLUSTER_MAX};
use engine::{Actor, Nanos, Stall};

impl Kernel {
    /// Free the backend copy of a swap-cached resident page (it was written, or is going away).
    pub(crate) fn drop_swap_copy(&mut self, idx: PageIdx) {
        self.pt.epoch += 1;
        let p = &mut self.pt.pages[idx as usize];
        let (dev, h) = (p.swap_dev as usize, p.shadow);
        p.flags &= !flags::SWAPCACHE;
        p.shadow = 0;
        self.backends[dev].free(h);
        self.handle_owner[dev][h as usize] = NIL;
        self.sync_backend_frames();
    }

    /// Reclaim a swap-cached page already taken off its LRU list: the frame is freed and the page
    /// points at its backend copy. No I/O, no compression.
    pub(crate) fn unmap_swap_cached(&mut self, idx: PageIdx) {
        let p = self.pt.pages[idx as usize];
        debug_assert!(p.has(flags::SWAPCACHE) && !p.has(flags::DIRTY));
        self.free_resident_frame(idx);
        let shadow = self.shadow_now();
        let page = &mut self.pt.pages[idx as usize];
        page.state = PageState::Swapped;
        page.loc = p.shadow;
        page.shadow = shadow;
        page.flags &= !(flags::ACCESSED | flags::REFERENCED | flags::SWAPCACHE);
        self.note_state_change(PageState::Resident, PageState::Swapped);
        self.procs[p.pid as usize].counters.swap += 1;
        self.nonresident_age = self.nonresident_age.wrapping_add(1);
    }

    /// `Advice::WriteAhead` over `[first, end)`: store a clean copy of every resident anon page
    /// without one, in batches, on the first backend with room; the pages stay mapped. Returns the
    /// CPU spent on the caller (compression; charged to `actor`).
    pub(crate) fn write_ahead_range(
        &mut self,
        now: Nanos,
        actor: Actor,
        first: PageIdx,
        end: PageIdx,
    ) -> Nanos {
        let mut batch: Vec<SwapOutPage> = Vec::with_capacity(SWAP_CLUSTER_MAX);
        let mut cpu = 0;
        let mut idx = first;
        while idx < end {
            batch.clear();
            while idx < end && batch.len() < SWAP_CLUSTER_MAX {
                let p = self.pt.pages[idx as usize];
                if p.state == PageState::Resident && p.kind.is_anon() && !p.has(flags::SWAPCACHE) {
                    let view = self.page_view(idx);
                    let mut cx = hook_cx!(self, now + cpu, actor);
                    let tag = self.hooks.reclaim.swap_tag(&mut cx, &view);
                    batch.push(SwapOutPage {
                        page: idx,
                        pid: p.pid,
                        content: p.content,
                        tag,
                    });
                }
                idx += 1;
            }
            if batch.is_empty() {
                continue;
            }
            match self.store_copies(now + cpu, &batch) {
                Some(cost) => {
                    for (cat, ns) in cost.cpu() {
                        self.cpu.charge(actor, cat, ns);
                    }
                    cpu += cost.cpu_total();
                }
                None => break,
            }
        }
        self.sync_backend_frames();
        cpu
    }

    /// Store `batch` on the first backend that takes it and mark the pages swap-cached.
    fn store_copies(&mut self, now: Nanos, batch: &[SwapOutPage]) -> Option<crate::swap::IoCost> {
        let mut handles = Vec::with_capacity(batch.len());
        for dev in 0..self.backends.len() {
            handles.clear();
            let result = {
                let (mut env, backends) = self.backend_env(now);
                backends[dev].store(&mut env, batch, &mut handles)
            };
            let Ok(cost) = result else { continue };
            self.pt.epoch += 1;
            for (sp, &h) in batch.iter().zip(handles.iter()) {
                let owner = &mut self.handle_owner[dev];
                if owner.len() <= h as usize {
                    owner.resize(h as usize + 1, NIL);
                }
                owner[h as usize] = sp.page;
                let page = &mut self.pt.pages[sp.page as usize];
                page.flags = (page.flags | flags::SWAPCACHE) & !flags::DIRTY;
                page.shadow = h;
                page.swap_dev = dev as u8;
            }
            self.vmstat.pswpout += batch.len() as u64;
            return Some(cost);
        }
        None
    }

    /// Run a maintenance operation on swap device `dev` at `now` for `actor` (zram idle ageing,
    /// writeback to the backing device). The CPU (decompression for a raw writeback) is charged
    /// to `actor` and returned as its stall; the writes are asynchronous. The pool memory freed
    /// goes back to the allocator at once.
    pub fn swap_maintenance(&mut self, now: Nanos, actor: Actor, dev: u8, op: SwapMaintenance) -> Stall {
        self.last_now = self.last_now.max(now);
        if dev as usize >= self.backends.len() {
            return Stall::ZERO;
        }
        self.pt.epoch += 1;
        let cost = {
            let (mut env, backends) = self.backend_env(now);
            backends[dev as usize].maintain(&mut env, op)
        };
        for (cat, ns) in cost.cpu() {
            self.cpu.charge(actor, cat, ns);
        }
        self.sync_backend_frames();
        Stall {
            ns: cost.cpu_total(),
            psi_ns: 0,
        }
    }
}
