//! Fault paths: page access, anonymous zero fill, swap-in (with readahead through the
//! [`crate::hooks::FaultHook`]) and file read-around, plus the resident-page bookkeeping they share
//! (`make_resident`, rss counters, workingset refault detection).
//!
//! Modelled: minor faults on untouched anonymous pages (zeroing + mapping cost), major faults
//! that wait for the backend (flash I/O or zram decompression), swap readahead of
//! `2^page-cluster` slots on asynchronous devices, file read-around of `read_ahead_kb`, refault
//! distance activation: every page added to the page cache with a shadow entry is a refault,
//! read-around pages included (`add_to_page_cache_lru` → `workingset_refault`), and a file
//! refault's distance is compared with the active file list before Linux 5.9 and with active
//! anon + file from 5.9 on (`KernelParams::refault_anon_challenge`, from `kernel_release`). Read-around stops while it does not pay off (`mmap_miss`, Linux 4.9
//! mm/filemap.c `do_sync_mmap_readahead` / `filemap_map_pages`, mm/memory.c `do_fault_around`):
//! a read fault on a file mapping first maps the cached pages of its aligned 64 KiB fault-around
//! window, each counting a hit (`mmap_miss--`; in 4.8–4.9 also pages the process had mapped
//! already, as the count precedes the PTE check), then, if its page is not cached, counts a
//! miss; past `MMAP_LOTSAMISS` (100) net misses it reads its page only, so an app touching single
//! pages of evicted, otherwise uncached code no longer reads 128 KiB for each. The first touch
//! of a page read-around brought in is such a read fault (Linux: a minor fault).
//! Simplified: frames for a whole readahead window are allocated before the read is issued; a
//! fault never blocks on another thread's in-flight read; the window is aligned on its size
//! (Linux centres it on the fault); no `PG_readahead` mark (async readahead, which Linux skips in
//! fault-around); the first touch of a read-around page costs no minor-fault CPU.
//! Counter granularity: Linux keeps `mmap_miss` per open file (`file->f_ra`): an app's base.apk,
//! .odex/.vdex/.art and each native library have their own, and the zygote's preloaded files
//! (boot.art/boot.oat, framework jars) one shared by every app forked from it, never reset.
//! The model keeps one per mapping: an app's code mapping (`file_mb`: APK, oat, libraries,
//! resources, with no file boundaries) has one for all its files, reset at each cold launch as
//! Linux's per-process files are, and the framework's shared files are part of it. So misses
//! in sparsely used files switch read-around off for the app's densely used files too (Linux:
//! per file; read-around stops sooner here, under-estimating read pages), and hits in dense
//! files switch it back on for the sparse ones (over-estimating); which dominates depends on
//! the layout and is not known. The data mapping (`data_mb`, read by `read()`) has its own.

use crate::swap::{self, BackendEnv, SwapBackend};
use crate::types::*;
use crate::{hook_cx, Kernel, KernelError, Scratch};
use engine::{Actor, Category, Nanos, Stall};

impl Kernel {
    /// Hint the CPU to load page `idx`'s page-table entry before an [`Self::access`] of it (no
    /// effect on results; any `idx` is allowed).
    #[inline(always)]
    pub fn prefetch_page(&self, idx: PageIdx) {
        self.pt.prefetch(idx);
    }

    /// Hint the CPU to load what a swap-in of page `idx` reads at random, if it is swapped out:
    /// the device's slot ([`crate::swap::SwapBackend::prefetch`]) and the slot's owner entry.
    /// Reads the page's entry (prefetch it first). No effect on results; any `idx` is allowed.
    #[inline]
    pub fn prefetch_swap_in(&self, idx: PageIdx) {
        if let Some(p) = self.pt.pages.get(idx as usize) {
            if p.state == PageState::Swapped {
                let dev = p.swap_dev as usize;
                self.backends[dev].prefetch(p.loc);
                engine::prefetch(&self.handle_owner[dev], p.loc as usize);
            }
        }
    }

    /// Touch page `idx` on behalf of `actor` at `now`. Returns the stall on the actor's critical
    /// path (zero for a resident page).
    #[inline]
    pub fn access(
        &mut self,
        now: Nanos,
        actor: Actor,
        idx: PageIdx,
        write: bool,
    ) -> Result<Stall, KernelError> {
        self.vmstat.page_accesses += 1;
        if self.access_log.is_some() {
            self.log_access(now, idx);
        }
        let Some(p) = self.pt.pages.get_mut(idx as usize) else {
            // Not a resident hit: a run containing it is never elided (see `touch_epoch`).
            self.pt.epoch += 1;
            return Err(KernelError::NotMapped(idx));
        };
        if p.state == PageState::Resident {
            if p.flags & flags::WRITEBACK != 0 {
                return Ok(self.writeback_hit(now, actor, idx, write));
            }
            let unmapped = p.flags & flags::UNMAPPED != 0;
            // An access also ends the page's idle period (page_idle).
            p.flags = (p.flags | flags::ACCESSED | if write { flags::DIRTY } else { 0 }) & !flags::IDLE;
            let swapcache = p.flags & flags::SWAPCACHE != 0;
            if unmapped {
                self.fault_around(idx);
            }
            if write {
                if swapcache {
                    self.drop_swap_copy(idx);
                }
                self.note_file_dirtied(now, idx);
            }
            return Ok(Stall::ZERO);
        }
        let r = self.fault(now, actor, idx, write);
        if r.is_ok() {
            self.pt.pages[idx as usize].flags &= !flags::IDLE;
        }
        r
    }

    /// The page-state epoch, or `None` while the access stream is recorded ([`Self::access_log`]
    /// must see every access). Callers may skip repeating a run of accesses that changed nothing
    /// (same epoch before and after it, zero stall) as long as the epoch is unchanged, and count
    /// the repeat with [`Self::count_repeated_accesses`]: it would have done exactly that.
    ///
    /// Why a repeat is a no-op. Say a run of accesses left the epoch unchanged and stalled
    /// nothing: each of its pages was resident (a fault, `fault()`, bumps; an unmapped index
    /// bumps), not under writeback (`writeback_hit` cancels it: an LRU add, which bumps), not
    /// UNMAPPED (`fault_around` bumps) and, for a write, not swap-cached (`drop_swap_copy`
    /// bumps). So after it each page is resident with ACCESSED set and IDLE clear, and for a
    /// write DIRTY set, SWAPCACHE clear and, for a file page, DIRTY_QUEUED set (by
    /// `note_file_dirtied`). Every kernel path that could undo one of these bumps the epoch:
    /// leaving Resident (`free_resident_frame`, unmapping, discard's LRU removal), clearing
    /// ACCESSED (reclaim scans and `MADV_COLD` move the page on the LRU; `start_writeback`,
    /// prefetches are faults), setting IDLE (`mark_idle`), setting UNMAPPED or SWAPCACHE
    /// (faults, `store_copies`), WRITEBACK (`start_writeback`), clearing DIRTY or DIRTY_QUEUED
    /// (`store_copies`, the flusher). Other resident hits in between only set ACCESSED/DIRTY
    /// and clear IDLE, which keeps all of this true. With the epoch unchanged, a repeat of a page
    /// of the run (a read of a page the run wrote included) therefore finds the page resident,
    /// not under writeback, not UNMAPPED, its flags already ORed in and IDLE already clear, no
    /// swap copy to drop and `note_file_dirtied` returning at once: it only counts the access
    /// and stalls nothing.
    #[inline]
    pub fn touch_epoch(&self) -> Option<u64> {
        if self.access_log.is_some() {
            None
        } else {
            Some(self.pt.epoch)
        }
    }

    /// Count `n` page accesses that [`Self::touch_epoch`] showed to be repeats of accesses that
    /// changed nothing (all they would have done).
    #[inline]
    pub fn count_repeated_accesses(&mut self, n: u64) {
        self.vmstat.page_accesses += n;
    }

    /// Touch `n` consecutive pages; stops at the first error.
    pub fn access_range(
        &mut self,
        now: Nanos,
        actor: Actor,
        first: PageIdx,
        n: u32,
        write: bool,
    ) -> Result<Stall, KernelError> {
        let mut total = Stall::ZERO;
        for idx in first..first + n {
            let s = self.access(now + total.ns, actor, idx, write)?;
            total.add(s);
        }
        Ok(total)
    }

    /// A touch of a page under writeback: its PTE is a swap entry but the page is still in the
    /// swap cache (a minor fault, `do_swap_page` finding it there). Reclaim of it ends.
    #[cold]
    fn writeback_hit(&mut self, now: Nanos, actor: Actor, idx: PageIdx, write: bool) -> Stall {
        self.last_now = self.last_now.max(now);
        self.vmstat.pgfault += 1;
        self.writeback_cancel(idx);
        let pid = self.pt.pages[idx as usize].pid;
        self.procs[pid as usize].counters.minor_faults += 1;
        let p = &mut self.pt.pages[idx as usize];
        p.flags = (p.flags | flags::ACCESSED | if write { flags::DIRTY } else { 0 }) & !flags::IDLE;
        if write {
            self.drop_swap_copy(idx);
        }
        let cost = self.params.minor_fault_ns;
        self.cpu.charge(actor, Category::Fault, cost);
        Stall { ns: cost, psi_ns: 0 }
    }

    #[cold]
    pub(crate) fn fault(
        &mut self,
        now: Nanos,
        actor: Actor,
        idx: PageIdx,
        write: bool,
    ) -> Result<Stall, KernelError> {
        let p = self.pt.pages[idx as usize];
        self.pt.epoch += 1;
        self.vmstat.pgfault += 1;
        self.last_now = self.last_now.max(now);
        match p.state {
            PageState::Untouched => self.fault_anon_zero(now, actor, idx),
            PageState::Swapped => self.swap_in(now, actor, idx, write),
            PageState::Dropped => self.file_fill(now, actor, idx, write, Fill::ReadAround),
            PageState::Freed => Err(KernelError::NotMapped(idx)),
            PageState::Resident => Ok(Stall::ZERO),
        }
    }

    pub(crate) fn fault_anon_zero(
        &mut self,
        now: Nanos,
        actor: Actor,
        idx: PageIdx,
    ) -> Result<Stall, KernelError> {
        let (pid, kind) = (self.pt.pages[idx as usize].pid, self.pt.pages[idx as usize].kind);
        let mut stall = Stall::ZERO;
        let pfn = self.alloc_user_frame(now, actor, pid, kind, &mut stall)?;
        if self.pt.pages[idx as usize].state != PageState::Untouched {
            // The process was OOM-killed while we reclaimed.
            self.free_user_frame(pid, kind, pfn);
            return Err(KernelError::Killed(pid));
        }
        let cost = self.params.minor_fault_ns + self.params.page_copy_ns;
        self.cpu.charge(actor, Category::Fault, cost);
        stall.ns += cost;
        self.make_resident(idx, pfn, PageState::Untouched, self.params.new_anon_active);
        let page = &mut self.pt.pages[idx as usize];
        // A fresh anonymous page has no backing copy: it is dirty whether read or written.
        page.flags |= flags::ACCESSED | flags::DIRTY;
        self.procs[pid as usize].counters.minor_faults += 1;
        Ok(stall)
    }

    /// Map `idx` to frame `pfn` and put it on an LRU list.
    pub(crate) fn make_resident(&mut self, idx: PageIdx, pfn: Pfn, from: PageState, activate: bool) {
        let p = &mut self.pt.pages[idx as usize];
        let (pid, kind) = (p.pid, p.kind);
        p.state = PageState::Resident;
        p.loc = pfn;
        self.frame_owner[pfn as usize] = idx;
        self.state_counts[from as usize] -= 1;
        self.state_counts[PageState::Resident as usize] += 1;
        let anon = kind.is_anon();
        let list = if p.has(flags::MLOCKED) {
            LruList::Unevictable
        } else if activate {
            LruList::active(anon)
        } else {
            LruList::inactive(anon)
        };
        self.note_reclaim_stat(anon, 1, u64::from(list == LruList::active(anon)));
        let proc = &mut self.procs[pid as usize];
        self.pt.lru_add_head(&mut proc.lru, idx, list);
        if anon {
            proc.counters.rss_anon += 1;
        } else {
            proc.counters.rss_file += 1;
        }
    }

    /// Release the frame of a resident page that is already off its LRU list.
    pub(crate) fn free_resident_frame(&mut self, idx: PageIdx) {
        self.pt.epoch += 1;
        let p = self.pt.pages[idx as usize];
        debug_assert_eq!(p.state, PageState::Resident);
        debug_assert_eq!(p.lru, LruList::None);
        self.free_user_frame(p.pid, p.kind, p.loc);
        self.uncount_resident(p.pid, p.kind);
    }

    pub(crate) fn note_state_change(&mut self, from: PageState, to: PageState) {
        self.state_counts[from as usize] -= 1;
        self.state_counts[to as usize] += 1;
    }

    pub(crate) fn uncount_resident(&mut self, pid: Pid, kind: PageKind) {
        let c = &mut self.procs[pid as usize].counters;
        if kind.is_anon() {
            c.rss_anon -= 1;
        } else {
            c.rss_file -= 1;
        }
    }

    /// Workingset refault check (Linux `workingset_refault`): activate a refaulting page whose
    /// refault distance fits in the workingset ([`Self::refault_workingset`]).
    pub(crate) fn refault_should_activate(&self, shadow: u32, workingset: u64) -> bool {
        if shadow == 0 {
            return false;
        }
        let distance = self.nonresident_age.wrapping_sub(shadow - 1);
        (distance as u64) <= workingset
    }

    /// The lists a refault distance is compared with: active file and active anon (Linux >= 5.9,
    /// 34e58cac "mm: workingset: let cache workingset challenge anon"), or for a file refault on
    /// an older kernel the active file list only (4.9 `workingset_refault`: `refault_distance
    /// <= active_file`). Simplified: 5.9's inactive lists of the other type are not added, and
    /// anon refaults use the 5.9 rule on every release (older kernels have no anon shadows).
    pub(crate) fn refault_workingset(&self, file: bool) -> u64 {
        let anon = !file || self.params.refault_anon_challenge;
        self.procs
            .iter()
            .filter(|p| p.alive)
            .map(|p| {
                let a = if anon {
                    p.lru.len[LruList::ActiveAnon as usize]
                } else {
                    0
                };
                (a + p.lru.len[LruList::ActiveFile as usize]) as u64
            })
            .sum()
    }

    pub(crate) fn backend_env(&mut self, now: Nanos) -> (BackendEnv<'_>, &mut Vec<Box<dyn SwapBackend>>) {
        (
            BackendEnv {
                now,
                contents: &self.contents,
                cpu_factor: self.params.cpu_factor,
                flash: &mut self.flash,
            },
            &mut self.backends,
        )
    }

    pub(crate) fn swap_in(
        &mut self,
        now: Nanos,
        actor: Actor,
        idx: PageIdx,
        write: bool,
    ) -> Result<Stall, KernelError> {
        let mut s = self.take_scratch();
        let r = self.swap_in_with(&mut s, now, actor, idx, write);
        self.put_scratch(s);
        r
    }

    fn swap_in_with(
        &mut self,
        s: &mut Scratch,
        now: Nanos,
        actor: Actor,
        idx: PageIdx,
        write: bool,
    ) -> Result<Stall, KernelError> {
        let fault_page = self.pt.pages[idx as usize];
        let (pid, dev, kind) = (fault_page.pid, fault_page.swap_dev as usize, fault_page.kind);
        // Readahead candidates: pages stored next to the faulting one (none for zram).
        let Scratch {
            handles,
            pages: list,
            cands,
            keep,
            loaded,
            ..
        } = s;
        let window = (1usize << self.params.page_cluster).saturating_sub(1);
        let stock_hook = self.hooks.fault.is_stock();
        list.push(idx);
        let sync = self.backends[dev].synchronous();
        if sync {
            // No readahead on a synchronous device, but a fault on a page of a multi-page chunk
            // decompresses the whole chunk: its still-swapped chunk-mates come in with it (one
            // decompression) and keep their copies (swap cache), so later touches are hits.
            self.backends[dev].neighbours(fault_page.loc, crate::zram::MAX_CHUNK_PAGES as usize, handles);
            list.extend(handles.iter().map(|&h| self.handle_owner[dev][h as usize]));
        } else if window > 0 {
            self.backends[dev].neighbours(fault_page.loc, window, handles);
            cands.extend(handles.iter().map(|&h| self.handle_owner[dev][h as usize]));
            if stock_hook {
                list.extend_from_slice(cands);
            } else {
                let mut cx = hook_cx!(self, now, actor);
                self.hooks.fault.swap_readahead(&mut cx, idx, cands, list);
            }
        }
        if list.len() > 1 {
            // Keep the faulting page (first) and the readahead pages still swapped on this device.
            let pages = &self.pt.pages;
            let mut first = true;
            list.retain(|&q| {
                let p = &pages[q as usize];
                std::mem::take(&mut first)
                    || (q != idx && p.state == PageState::Swapped && p.swap_dev as usize == dev)
            });
        }

        let mut stall = Stall::ZERO;
        // Frames first (may reclaim, may OOM-kill); pages may change state meanwhile.
        for (i, &q) in list.iter().enumerate() {
            match self.alloc_user_frame(now + stall.ns, actor, pid, kind, &mut stall) {
                Ok(pfn) => keep.push((q, pfn)),
                Err(e) if i == 0 => return Err(e),
                Err(_) => break,
            }
        }
        // Drop pages that changed state while we reclaimed (e.g. the process was killed).
        let mut j = 0;
        while j < keep.len() {
            let (q, pfn) = keep[j];
            let p = &self.pt.pages[q as usize];
            if p.state == PageState::Swapped && p.swap_dev as usize == dev {
                j += 1;
            } else {
                keep.swap_remove(j);
                self.free_user_frame(pid, kind, pfn);
            }
        }
        if keep.first().map(|k| k.0) != Some(idx) {
            for &(_, pfn) in keep.iter() {
                self.free_user_frame(pid, kind, pfn);
            }
            return Err(KernelError::Killed(pid));
        }
        handles.clear();
        handles.extend(keep.iter().map(|&(q, _)| self.pt.pages[q as usize].loc));
        {
            let t = now + stall.ns;
            let (mut env, backends) = self.backend_env(t);
            backends[dev].load_batch(&mut env, handles, loaded);
        }
        if !matches!(actor, Actor::Kernel) {
            self.note_swapin(pid, dev, handles[0]);
        }
        let mut io = swap::IoCost::default();
        for (i, &(q, pfn)) in keep.iter().enumerate() {
            let l = loaded[i];
            io.add(&l.cost);
            let content = self.pt.pages[q as usize].content;
            self.integrity.pages_swapped_in += 1;
            if l.checksum != self.contents.checksum(content) {
                self.integrity.checksum_mismatches += 1;
            }
            let h = handles[i];
            // Chunk-mates keep their copy (swap cache); a read may keep it; a write fault never.
            let keep_copy = (sync && q != idx)
                || !(stock_hook || q == idx && write) && {
                    let view = self.page_view(q);
                    let mut cx = hook_cx!(self, now + stall.ns, actor);
                    self.hooks.fault.keep_swap_copy(&mut cx, &view)
                };
            if !keep_copy {
                self.backends[dev].free(h);
                self.handle_owner[dev][h as usize] = NIL;
            }
            // A readahead page or chunk-mate may be another process's (slots are shared).
            let owner = self.pt.pages[q as usize].pid;
            self.procs[owner as usize].counters.swap -= 1;
            let shadow = self.pt.pages[q as usize].shadow;
            let activate = q == idx && self.refault_should_activate(shadow, self.refault_workingset(false));
            if q == idx {
                self.vmstat.workingset_refault_anon += 1;
                if activate {
                    self.vmstat.workingset_activate_anon += 1;
                }
            } else {
                self.vmstat.swapin_readahead_pages += 1;
            }
            let active = activate || q == idx && self.params.new_anon_active;
            self.make_resident(q, pfn, PageState::Swapped, active);
            let page = &mut self.pt.pages[q as usize];
            if keep_copy {
                page.shadow = h;
                page.flags |= flags::SWAPCACHE;
            } else {
                page.shadow = 0;
                // The swap slot was freed, so the page must be written again if reclaimed.
                page.flags |= flags::DIRTY;
            }
            if q == idx {
                page.flags |= flags::ACCESSED | if write { flags::DIRTY } else { 0 };
                if write {
                    self.note_file_dirtied(now, idx);
                }
            }
        }
        self.vmstat.pswpin += keep.len() as u64;
        self.vmstat.pgmajfault += 1;
        self.procs[pid as usize].counters.major_faults += 1;
        self.anon_cost += 1;
        let overhead =
            self.params.major_fault_overhead_ns + self.params.minor_fault_ns * (keep.len() as u64 - 1);
        for (cat, ns) in io.cpu() {
            self.cpu.charge(actor, cat, ns);
        }
        self.cpu.charge(actor, Category::Fault, overhead);
        let own = overhead + io.cpu_total() + io.wait_ns;
        if matches!(actor, Actor::AppMain(_)) {
            self.vmstat.app_read_wait_ns += io.wait_ns;
        }
        let start = now + stall.ns;
        stall.ns += own;
        stall.psi_ns += own;
        self.psi.record(start, own - io.wait_ns, io.wait_ns, actor);
        self.sync_backend_frames();
        if !stock_hook && !matches!(actor, Actor::Kernel) {
            self.after_major_fault(now + stall.ns, actor, idx);
        }
        Ok(stall)
    }

    /// Ask the fault hook which pages to load after a task's major swap fault on `idx`, and load
    /// them as kernel work at `now` (off the faulting thread: CPU to `Actor::Kernel`, no stall
    /// for the task). Loaded pages are not marked accessed. The kernel's own loads (prefetches)
    /// do not ask again.
    fn after_major_fault(&mut self, now: Nanos, actor: Actor, idx: PageIdx) {
        let view = self.page_view(idx);
        let mut extra = Vec::new();
        let mut cx = hook_cx!(self, now, actor);
        self.hooks.fault.after_major_fault(&mut cx, &view, &mut extra);
        // Keep only the pages actually loaded (not those already resident, e.g. chunk-mates).
        extra.retain(|&q| {
            let swapped = self
                .pt
                .pages
                .get(q as usize)
                .is_some_and(|p| p.state == PageState::Swapped);
            let ok = swapped && self.swap_in(now, Actor::Kernel, q, false).is_ok();
            if ok {
                self.pt.pages[q as usize].flags &= !flags::ACCESSED;
            }
            ok
        });
        if !extra.is_empty() {
            let mut cx = hook_cx!(self, now, Actor::Kernel);
            self.hooks.fault.preloaded(&mut cx, &extra);
        }
    }

    /// Bring file page `idx` (not in memory) into the page cache: a fault reads it with its
    /// read-around window ([`Fill::ReadAround`]); a small `read()` and a `write()` covering it
    /// partly read only that page ([`Fill::OnePage`]), a `write()` covering it whole reads
    /// nothing ([`Fill::NoRead`]) (see [`crate::dirty`]). `write` dirties the page (and queues it for the flusher).
    pub(crate) fn file_fill(
        &mut self,
        now: Nanos,
        actor: Actor,
        idx: PageIdx,
        write: bool,
        fill: Fill,
    ) -> Result<Stall, KernelError> {
        let p = self.pt.pages[idx as usize];
        let (pid, kind) = (p.pid, p.kind);
        let vma_id = self.vma_id_of(idx).ok_or(KernelError::NotMapped(idx))?;
        let vma = self.vmas[vma_id].ok_or(KernelError::NotMapped(idx))?;
        let ra = if fill == Fill::ReadAround {
            if !write {
                // do_read_fault maps the cached pages around before filemap_fault reads.
                self.fault_around(idx);
            }
            self.read_around_pages(vma_id)
        } else {
            1
        };
        // Read-around window aligned on the read-ahead size, clipped to the mapping.
        let start = (vma.first + ((idx - vma.first) / ra) * ra).max(vma.first);
        let end = (start + ra).min(vma.first + vma.pages);
        let mut stall = Stall::ZERO;
        let mut pages = Vec::with_capacity(ra as usize);
        pages.push(idx);
        pages.extend(
            (start..end).filter(|&q| q != idx && self.pt.pages[q as usize].state == PageState::Dropped),
        );
        let mut got = Vec::with_capacity(pages.len());
        for (i, &q) in pages.iter().enumerate() {
            match self.alloc_user_frame(now + stall.ns, actor, pid, kind, &mut stall) {
                Ok(pfn) => got.push((q, pfn)),
                Err(e) if i == 0 => return Err(e),
                Err(_) => break,
            }
        }
        if self.pt.pages[idx as usize].state != PageState::Dropped {
            for (_, pfn) in got {
                self.free_user_frame(pid, kind, pfn);
            }
            return Err(KernelError::Killed(pid));
        }
        let (wait, cpu) = if fill == Fill::NoRead {
            // The whole page is overwritten (the copy's CPU, like write()'s, is not modelled).
            (0, 0)
        } else {
            let bytes = got.len() as u64 * PAGE_SIZE;
            self.vmstat.pgpgin_file += got.len() as u64;
            if fill == Fill::OnePage {
                self.vmstat.pgpgin_file_syscall += got.len() as u64;
            }
            (
                self.flash.read(now + stall.ns, bytes),
                self.params.major_fault_overhead_ns,
            )
        };
        let mut workingset = None;
        for &(q, pfn) in &got {
            // Every page added to the page cache is checked against its shadow
            // (`add_to_page_cache_lru` → `workingset_refault`), whether read, read around or
            // written: a read-around page that had been evicted is a refault too.
            let shadow = self.pt.pages[q as usize].shadow;
            let refault = shadow != 0;
            let activate = refault
                && self.refault_should_activate(
                    shadow,
                    *workingset.get_or_insert_with(|| self.refault_workingset(true)),
                );
            if refault {
                self.vmstat.workingset_refault_file += 1;
                self.file_cost += 1;
                if activate {
                    self.vmstat.workingset_activate_file += 1;
                }
            }
            if self.pt.pages[q as usize].state != PageState::Dropped {
                self.free_user_frame(pid, kind, pfn);
                continue;
            }
            self.make_resident(q, pfn, PageState::Dropped, activate);
            let page = &mut self.pt.pages[q as usize];
            page.shadow = 0;
            if q == idx {
                page.flags &= !flags::UNMAPPED;
            } else {
                page.flags |= flags::UNMAPPED;
            }
            if q == idx {
                // A fault maps the page (PTE young); a read() or write() maps nothing (its
                // caller marks the page accessed, `mark_accessed.rs`).
                page.flags |= if fill == Fill::ReadAround {
                    flags::ACCESSED
                } else {
                    0
                } | if write { flags::DIRTY } else { 0 };
            }
        }
        if write {
            self.note_file_dirtied(now, idx);
        }
        if fill == Fill::ReadAround {
            self.vmstat.pgmajfault += 1;
            self.procs[pid as usize].counters.major_faults += 1;
        }
        self.cpu.charge(actor, Category::Fault, cpu);
        let start = now + stall.ns;
        let own = cpu + wait;
        if matches!(actor, Actor::AppMain(_)) {
            self.vmstat.app_read_wait_ns += wait;
        }
        stall.ns += own;
        // Only refaults of evicted file pages count as memory pressure, not first reads.
        if p.shadow != 0 && fill != Fill::NoRead {
            stall.psi_ns += own;
            self.psi.record(start, cpu, wait, actor);
        }
        Ok(stall)
    }
}

/// `MMAP_LOTSAMISS` (mm/filemap.c): a file whose faults missed this many more times than they
/// hit gets no more read-around.
pub const MMAP_LOTSAMISS: u16 = 100;

/// `fault_around_bytes` (mm/memory.c, default 64 KiB) in pages.
pub const FAULT_AROUND_PAGES: u32 = 16;

impl Kernel {
    /// Pages a fault on mapping `vma_id` reads (`do_sync_mmap_readahead`): the fault counts as
    /// a miss (`mmap_miss++`, capped at ten times the limit); past `MMAP_LOTSAMISS` only the
    /// faulting page is read (`page_cache_read`), else the `read_ahead_kb` window.
    fn read_around_pages(&mut self, vma_id: usize) -> u32 {
        let ra = self.params.read_ahead_pages;
        if ra <= 1 {
            return ra.max(1);
        }
        let miss = &mut self.mmap_miss[vma_id];
        if *miss < MMAP_LOTSAMISS * 10 {
            *miss += 1;
        }
        if *miss > MMAP_LOTSAMISS {
            1
        } else {
            ra
        }
    }

    /// `do_fault_around` (a read fault on a file mapping: the first touch of a page read-around
    /// brought in, or a major fault before its read) maps the cached pages of the aligned
    /// `fault_around_bytes` window, and `filemap_map_pages` counts each as a read-around hit
    /// (`mmap_miss--`). In 4.8–4.9 the count comes before the PTE check (Kirill Shutemov's
    /// "mm: postpone page table allocation until we have page to map", 4.8), so cached pages
    /// the process had already mapped count too.
    fn fault_around(&mut self, idx: PageIdx) {
        let Some(v) = self.vma_id_of(idx) else { return };
        let Some(vma) = self.vmas[v] else { return };
        let start = vma.first + (idx - vma.first) / FAULT_AROUND_PAGES * FAULT_AROUND_PAGES;
        let end = (start + FAULT_AROUND_PAGES).min(vma.first + vma.pages);
        self.pt.epoch += 1;
        let mut hits = 0u16;
        for q in start..end {
            let p = &mut self.pt.pages[q as usize];
            if p.state == PageState::Resident {
                p.flags &= !flags::UNMAPPED;
                hits += 1;
            }
        }
        self.mmap_miss[v] = self.mmap_miss[v].saturating_sub(hits);
    }
}

/// How [`Kernel::file_fill`] brings a file page into the page cache.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Fill {
    /// A page fault: the page and its `read_ahead_kb` read-around window (`filemap_fault`).
    ReadAround,
    /// A partial-page `write()` (`__block_write_begin` reads the blocks the write does not
    /// cover; no readahead) or a small random `read()` (`ondemand_readahead`: "standalone,
    /// small random read", read as is): that page only.
    OnePage,
    /// A whole-page `write()`: no read (the page is allocated and overwritten).
    NoRead,
}
