//! `mark_page_accessed`: how a `read()` of a file page (and, before Linux 4.7, a `write()`)
//! ages it on the LRU, as opposed to a CPU access through a mapping, which only sets the PTE
//! young bit (`flags::ACCESSED`, sampled by reclaim).
//!
//! Linux 4.9 mm/swap.c `mark_page_accessed`: an inactive page with `PG_referenced`
//! (`flags::REFERENCED`) is activated (`activate_page` → `__activate_page`: moved to the head of
//! the active list, `PGACTIVATE`, `update_page_reclaim_stat(lruvec, file, 1)`: one page scanned
//! and rotated for 4.9's `get_scan_count`, `scan_balance.rs`) and its `PG_referenced` cleared,
//! and `workingset_activation` ages the non-resident clock (`inactive_age`); any other page
//! without `PG_referenced` gets it (an unevictable page too; an active page with it is left as
//! is); `PG_idle` is cleared. The same rule from 2.6.x to 6.x (folios, `folio_mark_accessed`);
//! from 5.8 (1431d4d11abb) the activation adds no reclaim cost (`__activate_page` only counts
//! `PGACTIVATE`), so it is a model fix for every release (multi-gen LRU is not modelled).
//!
//! Who calls it (v4.9 mm/filemap.c): `do_generic_file_read` (`read()`/`pread()` →
//! `generic_file_read_iter`) for each page it copies from, after reading it in if it was not
//! cached: [`crate::Kernel::read_file_page`], the model's only syscall read (SQLite's `pread`s of
//! app data pages). Not for a re-read of the position the file's last read ended at
//! ("When a sequential read accesses a page several times, only mark it as accessed the first
//! time": `prev_index != index || offset != prev_offset`, from `ra->prev_pos`, per open file):
//! here a read of the same page as the mapping's previous `read()` (a whole-page read leaves
//! `prev_pos` at that page's start). `grab_cache_page_write_begin` (the `write()` path) looked
//! the page up with `FGP_ACCESSED` (3.16's 2457aec63745; before it `generic_perform_write`
//! called `mark_page_accessed`) until 4.7's bbddabe2e436 "mm: filemap: only do access
//! activations on reads": `KernelParams::write_marks_accessed` on releases before 4.7.
//! Page faults do not call it: `filemap_fault` finds the page with `find_get_page` (no
//! `FGP_ACCESSED`) and `filemap_map_pages` (fault-around) maps cached pages as they are; the
//! fault's PTE is young, which is `flags::ACCESSED` here. Not modelled: `do_read_cache_page`
//! (file-system metadata) and `zap_pte_range`'s `mark_page_accessed` of a file page whose PTE is
//! young when a process unmaps it (mm/memory.c): the model frees a process's file pages with it
//! (`Kernel::exit`, one owner per page), so there is no page cache left to age.
//!
//! `page_check_references` (v4.9 mm/vmscan.c) activates a mapped file page on its first scan
//! at the inactive tail if `referenced_ptes > 1` (several processes' PTEs young). Not modelled,
//! because it can change no verdict here: the test that follows it activates every referenced
//! page of a `VM_EXEC` mapping on its first scan too ("Activate file-backed executable pages
//! after first usage"), and every mapped file page of the model is in one (each app's code
//! mapping, APK, oat, libraries, resources and its copy of the framework's files, and
//! system_server's files are mapped executable), while app data pages are read with `pread`,
//! never mapped (no PTE: `referenced_ptes` is 0 and only `PG_referenced` counts, which then
//! gives `PAGEREF_RECLAIM_CLEAN`). What one owner per page costs instead: a framework page
//! touched by several apps is several copies, each aged by its own app's accesses, where Linux
//! has one page young if any app touched it; and the non-executable shared files (resources,
//! boot images, fonts) get the executable rule, so a referenced one is kept active by
//! `shrink_active_list` where Linux deactivates it.

use crate::types::*;
use crate::Kernel;

impl Kernel {
    /// `mark_page_accessed` on resident file page `idx` (see the module doc).
    pub(crate) fn mark_page_accessed(&mut self, idx: PageIdx) {
        let p = self.pt.pages[idx as usize];
        debug_assert!(p.state == PageState::Resident && !p.kind.is_anon());
        if p.lru == LruList::InactiveFile && p.has(flags::REFERENCED) {
            let lru = &mut self.procs[p.pid as usize].lru;
            self.pt.lru_move_head(lru, idx, LruList::ActiveFile);
            self.pt.pages[idx as usize].flags &= !flags::REFERENCED;
            self.vmstat.pgactivate += 1;
            self.note_reclaim_stat(false, 1, 1);
            self.nonresident_age = self.nonresident_age.wrapping_add(1);
        } else if !p.has(flags::REFERENCED) {
            self.pt.epoch += 1;
            self.pt.pages[idx as usize].flags |= flags::REFERENCED;
        }
        self.pt.pages[idx as usize].flags &= !flags::IDLE;
    }

    /// A `read()` of file page `idx` on its mapping `vma_id`: [`Self::mark_page_accessed`]
    /// unless the mapping's previous read was of the same page (`ra->prev_pos`).
    pub(crate) fn read_marks_accessed(&mut self, vma_id: usize, idx: PageIdx) {
        let prev = std::mem::replace(&mut self.read_prev[vma_id], idx);
        if prev != idx {
            self.mark_page_accessed(idx);
        }
    }
}
