//! Address spaces: the global dense page table, mappings (VMAs), processes and their LRU lists.
//!
//! Every virtual page of every process is one [`Page`] in a single dense `Vec` indexed by
//! [`PageIdx`]. A mapping (VMA) owns a contiguous range of indices handed out by a first-fit
//! [`RangeAllocator`] (freed ranges are reused), so a process's pages are `first..first+len` and no
//! per-page heap allocation ever happens. LRU lists are queues of page indices with lazy deletion
//! (`lru.rs`), one set of five lists per process (a memcg `lruvec`: Android puts each app in
//! its own memory cgroup).
//!
//! Node-LRU age stamps (`PageTable::stamp`, only kept when [`PageTable::enable_stamps`] was
//! called): a global counter value written each time a page is put at the head of a list (0 at
//! the tail), so every list is sorted by stamp from tail to head and the node's one LRU list of
//! a kind (a kernel without per-app memcgs) is the merge of the processes' lists by stamp
//! (`reclaim.rs`, `shrink_global_by_age`). A dense `Vec<u32>` beside the pages, not a page field.
//!
//! Simplified vs Linux: a page belongs to exactly one process (no shared anonymous or page-cache
//! pages between processes); file pages are the process's own view of its mapped files.

use crate::types::*;
use content::ContentId;
use serde::Serialize;
use std::collections::BTreeMap;

/// One virtual page (28 bytes; 1 M pages per 4 GB of mapped memory ≈ 28 MB).
#[derive(Debug, Clone, Copy)]
pub struct Page {
    /// Frame if resident, swap handle if swapped; unused otherwise.
    pub loc: u32,
    pub content: ContentId,
    /// Position of the page's entry in its LRU list's queue (meaningful while `lru` is not
    /// `None`; see `lru.rs`).
    pub lru_slot: u32,
    pub pid: Pid,
    /// Workingset shadow: the eviction clock when the page was last reclaimed (for refault
    /// distance). While resident with [`flags::SWAPCACHE`], the swap handle of its clean copy.
    pub shadow: u32,
    pub state: PageState,
    pub kind: PageKind,
    pub lru: LruList,
    /// [`flags`] bits.
    pub flags: u16,
    /// Which swap backend holds the page when `state == Swapped`.
    pub swap_dev: u8,
    /// Spare bits for policies (MemSaver keeps its hot-launch history here, as in spare PTE bits).
    pub policy_bits: u8,
}

impl Page {
    const FREED: Page = Page {
        loc: NIL,
        content: 0,
        lru_slot: 0,
        pid: NIL,
        shadow: 0,
        state: PageState::Freed,
        kind: PageKind::NativeAnon,
        lru: LruList::None,
        flags: 0,
        swap_dev: 0,
        policy_bits: 0,
    };

    #[inline]
    pub fn has(&self, f: u16) -> bool {
        self.flags & f != 0
    }
}

/// Where the bytes of a mapping's pages come from: content ids `base..base+len` of the kernel's
/// content store, picked per page by a seeded hash of the page offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ContentSource {
    pub base: ContentId,
    pub len: u32,
    pub seed: u64,
}

impl ContentSource {
    #[inline]
    pub fn content_of(&self, offset: u32) -> ContentId {
        if self.len == 0 {
            return self.base;
        }
        self.base + (engine::splitmix64(self.seed ^ offset as u64) % self.len as u64) as u32
    }
}

/// A mapping: `pages` consecutive page indices starting at `first`.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Vma {
    pub pid: Pid,
    pub first: PageIdx,
    pub pages: u32,
    pub kind: PageKind,
    pub exec: bool,
    pub source: ContentSource,
}

pub use crate::lru::LruVec;

/// Per-process memory counters (pages).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct ProcCounters {
    pub rss_anon: u64,
    pub rss_file: u64,
    pub swap: u64,
    pub major_faults: u64,
    pub minor_faults: u64,
}

/// A process as the kernel sees it.
#[derive(Debug, Clone)]
pub struct Process {
    pub pid: Pid,
    pub name: String,
    pub oom_score_adj: i16,
    pub alive: bool,
    pub vmas: Vec<usize>,
    pub lru: LruVec,
    pub counters: ProcCounters,
    /// Unmovable kernel memory charged to the process (stacks, page tables): (pfn, order).
    pub kernel_allocs: Vec<(Pfn, u8)>,
    /// Where the contents of mappings made without an explicit source come from
    /// ([`crate::Kernel::mmap_default`]).
    pub content: Option<ContentSource>,
    /// What kind of process it is (set by the framework; carried by user-page allocations).
    pub class: ProcClass,
}

impl Process {
    pub fn rss(&self) -> u64 {
        self.counters.rss_anon + self.counters.rss_file
    }

    /// What a policy may know about this process.
    pub fn view(&self) -> crate::hooks::ProcView {
        crate::hooks::ProcView {
            pid: self.pid,
            adj: self.oom_score_adj,
            foreground: self.oom_score_adj <= 0,
            rss: self.rss(),
            swap: self.counters.swap,
            alive: self.alive,
        }
    }
}

/// First-fit allocator of page-index ranges with coalescing of freed ranges.
#[derive(Debug, Clone, Default)]
pub struct RangeAllocator {
    /// start -> len of free ranges.
    free: BTreeMap<u32, u32>,
    /// One past the highest index ever handed out.
    end: u32,
}

impl RangeAllocator {
    /// Returns the start of a range of `len` indices.
    pub fn alloc(&mut self, len: u32) -> u32 {
        let found = self.free.iter().find(|(_, &l)| l >= len).map(|(&s, &l)| (s, l));
        if let Some((s, l)) = found {
            self.free.remove(&s);
            if l > len {
                self.free.insert(s + len, l - len);
            }
            return s;
        }
        // Extend at the end, merging a free range that touches the end.
        if let Some((&s, &l)) = self.free.iter().next_back() {
            if s + l == self.end {
                self.free.remove(&s);
                self.end = s + len;
                return s;
            }
        }
        let s = self.end;
        self.end += len;
        s
    }

    pub fn free(&mut self, start: u32, len: u32) {
        let mut s = start;
        let mut l = len;
        if let Some((&ps, &pl)) = self.free.range(..start).next_back() {
            if ps + pl == start {
                self.free.remove(&ps);
                s = ps;
                l += pl;
            }
        }
        if let Some(&nl) = self.free.get(&(start + len)) {
            self.free.remove(&(start + len));
            l += nl;
        }
        self.free.insert(s, l);
    }

    pub fn end(&self) -> u32 {
        self.end
    }
}

/// The global page table.
#[derive(Debug, Default)]
pub struct PageTable {
    pub pages: Vec<Page>,
    pub ranges: RangeAllocator,
    /// Node-LRU age stamp per page slot (empty unless stamps are enabled; see the module doc).
    pub stamp: Vec<u32>,
    /// The last stamp handed out.
    pub clock: u32,
    stamps_on: bool,
    /// Page-state epoch: bumped by every event that can change what an access of a resident page
    /// does (see [`crate::Kernel::touch_epoch`]); here by mapping, unmapping and every LRU list
    /// move, the other kernel paths bump it where they write page flags or state.
    pub epoch: u64,
}

impl PageTable {
    /// Hint the CPU to load page `idx`'s entry (no effect on results; any `idx` is allowed).
    #[inline(always)]
    pub fn prefetch(&self, idx: PageIdx) {
        engine::prefetch(&self.pages, idx as usize);
    }

    /// Keep node-LRU age stamps from now on (pages already on lists keep stamp 0).
    pub fn enable_stamps(&mut self) {
        self.stamps_on = true;
        self.stamp.resize(self.pages.len(), 0);
    }

    /// An empty page table, keeping node-LRU age stamps if `stamps`.
    pub fn with_stamps(stamps: bool) -> Self {
        let mut t = Self::default();
        if stamps {
            t.enable_stamps();
        }
        t
    }

    /// Whether node-LRU age stamps are kept.
    pub fn stamps_enabled(&self) -> bool {
        self.stamps_on
    }

    /// The next stamp for a page put at a list head. Before the counter would wrap, every stamp is
    /// halved (a monotone map: each list stays sorted; pages never re-stamped since may tie).
    #[inline]
    pub(crate) fn next_stamp(&mut self) -> u32 {
        if self.clock == u32::MAX {
            for s in &mut self.stamp {
                *s >>= 1;
            }
            self.clock >>= 1;
        }
        self.clock += 1;
        self.clock
    }

    /// Reserve `len` page slots, initialised to `state` for `pid`.
    pub fn map(&mut self, pid: Pid, len: u32, kind: PageKind, state: PageState, exec: bool) -> PageIdx {
        self.epoch += 1;
        let first = self.ranges.alloc(len);
        let end = (first + len) as usize;
        if self.pages.len() < end {
            self.pages.resize(end, Page::FREED);
            if self.stamps_on {
                self.stamp.resize(end, 0);
            }
        }
        let init = Page {
            pid,
            kind,
            state,
            flags: if exec { flags::EXEC } else { 0 },
            ..Page::FREED
        };
        for p in &mut self.pages[first as usize..end] {
            *p = init;
        }
        first
    }

    pub fn unmap(&mut self, first: PageIdx, len: u32) {
        self.epoch += 1;
        for p in &mut self.pages[first as usize..(first + len) as usize] {
            *p = Page::FREED;
        }
        self.ranges.free(first, len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_allocator_reuses_and_coalesces() {
        let mut r = RangeAllocator::default();
        let a = r.alloc(10);
        let b = r.alloc(5);
        let c = r.alloc(7);
        assert_eq!((a, b, c), (0, 10, 15));
        r.free(b, 5);
        assert_eq!(r.alloc(3), 10);
        r.free(10, 3);
        r.free(a, 10);
        // 0..15 is free again as one range.
        assert_eq!(r.alloc(15), 0);
        r.free(c, 7);
        // The tail range merges with the end.
        assert_eq!(r.alloc(20), 15);
    }
}
