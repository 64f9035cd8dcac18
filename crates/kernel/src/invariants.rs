//! Accounting invariants checked by tests after random operation sequences: page states vs
//! counters, LRU list links and lengths, pages under writeback, swap handles vs backends, and
//! frame conservation.

use crate::types::*;
use crate::Kernel;

impl Kernel {
    /// Fault injection for integrity tests: damage the stored copy of swapped-out page `idx` in
    /// its backend ([`crate::swap::SwapBackend::corrupt`]). Returns whether anything was damaged
    /// (false if the page is not swapped out or its backend holds no bytes for it).
    pub fn corrupt_swapped_page(&mut self, idx: PageIdx) -> bool {
        match self.pt.pages.get(idx as usize) {
            Some(p) if p.state == PageState::Swapped => self.backends[p.swap_dev as usize].corrupt(p.loc),
            _ => false,
        }
    }

    /// Check every accounting invariant; used by tests after random operation sequences.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.buddy.check_invariants()?;
        let mut counts = [0u64; NR_PAGE_STATES];
        let mut per_dev = vec![0u64; self.backends.len()];
        // Pages under writeback per process (resident, off the LRU lists).
        let mut wb_per_pid = vec![0u64; self.procs.len()];
        // Swapped-out pages per process (its `counters.swap`).
        let mut swap_per_pid = vec![0u64; self.procs.len()];
        for (vid, vma) in self.vmas.iter().enumerate() {
            let Some(vma) = vma else { continue };
            let proc = &self.procs[vma.pid as usize];
            if !proc.alive || !proc.vmas.contains(&vid) {
                return Err(format!("vma {vid} of dead or foreign process {}", vma.pid));
            }
            for idx in vma.first..vma.first + vma.pages {
                let p = &self.pt.pages[idx as usize];
                counts[p.state as usize] += 1;
                if p.pid != vma.pid {
                    return Err(format!("page {idx} pid {} in vma of {}", p.pid, vma.pid));
                }
                match p.state {
                    PageState::Resident => {
                        if self.frame_owner[p.loc as usize] != idx {
                            return Err(format!(
                                "page {idx} resident in frame {} owned by {}",
                                p.loc, self.frame_owner[p.loc as usize]
                            ));
                        }
                        if p.has(flags::WRITEBACK) {
                            // Under writeback: swap-cached, clean anon, off the LRU lists.
                            if p.lru != LruList::None || !p.has(flags::SWAPCACHE) {
                                return Err(format!(
                                    "page {idx} under writeback on an LRU list or without a copy"
                                ));
                            }
                            wb_per_pid[p.pid as usize] += 1;
                        } else if p.lru == LruList::None {
                            return Err(format!("resident page {idx} on no LRU list"));
                        }
                        if p.has(flags::MLOCKED) != (p.lru == LruList::Unevictable) {
                            return Err(format!("page {idx}: mlocked and unevictable list disagree"));
                        }
                        if p.has(flags::SWAPCACHE) {
                            let dev = p.swap_dev as usize;
                            per_dev[dev] += 1;
                            if self.handle_owner[dev].get(p.shadow as usize) != Some(&idx) {
                                return Err(format!("swap-cached page {idx} handle {} not owned", p.shadow));
                            }
                            if p.has(flags::DIRTY) || !p.kind.is_anon() {
                                return Err(format!("swap-cached page {idx} is dirty or not anon"));
                            }
                        }
                    }
                    PageState::Swapped => {
                        per_dev[p.swap_dev as usize] += 1;
                        swap_per_pid[p.pid as usize] += 1;
                        if self.handle_owner[p.swap_dev as usize].get(p.loc as usize) != Some(&idx) {
                            return Err(format!("swapped page {idx} handle {} not owned", p.loc));
                        }
                        if p.lru != LruList::None {
                            return Err(format!("swapped page {idx} on an LRU list"));
                        }
                    }
                    PageState::Freed => return Err(format!("freed page {idx} inside a live vma")),
                    _ => {
                        if p.lru != LruList::None {
                            return Err(format!("non-resident page {idx} on an LRU list"));
                        }
                    }
                }
            }
        }
        if counts != self.state_counts {
            return Err(format!(
                "state counts {:?} != recount {:?}",
                self.state_counts, counts
            ));
        }
        for (d, b) in self.backends.iter().enumerate() {
            if b.usage().stored_pages != per_dev[d] {
                return Err(format!(
                    "backend {d} stores {} pages, page table says {}",
                    b.usage().stored_pages,
                    per_dev[d]
                ));
            }
        }
        for proc in self.procs.iter().filter(|p| p.alive) {
            let mut resident = 0u64;
            for l in LruList::ALL {
                let mut n = 0u32;
                let mut prev = NIL;
                let stamped = self.pt.stamps_enabled();
                for i in proc.lru.iter(&self.pt.pages, l) {
                    if self.pt.pages[i as usize].pid != proc.pid {
                        return Err(format!(
                            "lru {} of pid {} holds page {i} of another process",
                            l.name(),
                            proc.pid
                        ));
                    }
                    // Node-LRU stamps grow from tail to head (the merge relies on it).
                    if stamped && prev != NIL && self.pt.stamp[i as usize] < self.pt.stamp[prev as usize] {
                        return Err(format!(
                            "lru {} of pid {}: page {i} is newer than page {prev} nearer the tail",
                            l.name(),
                            proc.pid
                        ));
                    }
                    n += 1;
                    prev = i;
                }
                if n != proc.lru.len[l as usize] {
                    return Err(format!(
                        "lru {} of pid {}: len {} but {n} linked",
                        l.name(),
                        proc.pid,
                        proc.lru.len[l as usize]
                    ));
                }
                resident += n as u64;
            }
            if swap_per_pid[proc.pid as usize] != proc.counters.swap {
                return Err(format!(
                    "pid {}: {} pages swapped out, its swap counter says {}",
                    proc.pid, swap_per_pid[proc.pid as usize], proc.counters.swap
                ));
            }
            resident += wb_per_pid[proc.pid as usize];
            if resident != proc.rss() {
                return Err(format!(
                    "pid {}: rss {} but {resident} pages on LRUs or under writeback",
                    proc.pid,
                    proc.rss()
                ));
            }
        }
        let wb: u64 = wb_per_pid.iter().sum();
        if wb != self.writeback_pages {
            return Err(format!(
                "{wb} pages under writeback, counter says {}",
                self.writeback_pages
            ));
        }
        // Frame conservation: free (buddy + held by placement) + user + zram + kernel = managed.
        let used = counts[PageState::Resident as usize] + self.zram_frames.len() as u64 + self.kernel_frames;
        if used + self.free_pages() != self.buddy.nr_pages() as u64 {
            return Err(format!(
                "frames: {} used + {} free ({} held by placement) != {} managed",
                used,
                self.free_pages(),
                self.hooks.placement.held_free_pages(),
                self.buddy.nr_pages()
            ));
        }
        Ok(())
    }
}
