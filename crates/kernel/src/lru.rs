//! A process's LRU lists (Linux `struct lruvec`): five queues of page indices, tail (reclaimed
//! first) at the front, head (most recently added) at the back.
//!
//! Linux links `struct page`s into intrusive doubly linked lists (`page->lru`). A list's order is
//! fully determined by the order of its insertions at the head and the tail among the pages
//! still on it, so each list here is a queue of entries with lazy deletion instead: putting a
//! page at the head pushes an entry at the back, at the tail pushes one at the front; removing a
//! page only marks it off its list (`Page::lru = None`), leaving a stale entry that walks skip.
//! Same order, same results as the linked list, but a walk from the tail reads a contiguous
//! array whose next entries are known ahead ([`LruVec::next_to_scan`]) rather than chasing
//! `prev` pointers, one dependent cache miss per page; and moving a page touches no neighbour.
//!
//! An entry is live when its page is on this list (`Page::lru`) of this process (`Page::pid`)
//! and the page's `Page::lru_slot` is the entry's position: positions count pushes (wrapping
//! u32; a queue never spans 2^32 entries), so of several entries for one page only the latest
//! matches. A queue is compacted (stale entries dropped, positions renumbered) when it holds
//! more than 1.5 times its live entries plus [`COMPACT_SLACK`]: amortised O(1) per operation,
//! and memory about 1.5 × 4 bytes per listed page plus slack.

use crate::mm::{Page, PageTable};
use crate::types::*;
use std::collections::VecDeque;

/// How many entries ahead of the tail a walk prefetches page entries: enough to cover a DRAM
/// latency with the work of a few scanned pages (16 measured faster than 8 and 32 on the replay).
pub const WALK_PREFETCH_AHEAD: usize = 16;

/// Stale entries a queue may hold beyond its live ones before compaction.
const COMPACT_SLACK: usize = 64;

/// One list: entries from tail (front) to head (back).
#[derive(Debug, Clone, Default)]
struct LruQueue {
    q: VecDeque<PageIdx>,
    /// Position of the front entry (`q[i]` is at `front + i`, wrapping).
    front: u32,
}

/// Five LRU lists of one process (Linux `struct lruvec`).
#[derive(Debug, Clone)]
pub struct LruVec {
    lists: [LruQueue; NR_LRU_LISTS],
    /// Pages on each list.
    pub len: [u32; NR_LRU_LISTS],
    /// The process whose pages these lists hold.
    owner: Pid,
}

impl LruVec {
    /// Empty lists for process `owner`.
    pub fn new(owner: Pid) -> Self {
        Self {
            lists: Default::default(),
            len: [0; NR_LRU_LISTS],
            owner,
        }
    }

    pub fn anon(&self) -> u32 {
        self.len[LruList::InactiveAnon as usize] + self.len[LruList::ActiveAnon as usize]
    }

    pub fn file(&self) -> u32 {
        self.len[LruList::InactiveFile as usize] + self.len[LruList::ActiveFile as usize]
    }

    pub fn total(&self) -> u32 {
        self.len.iter().sum()
    }

    /// The page at the tail of `list` (the next to be scanned), dropping stale entries before it.
    #[inline]
    pub fn tail(&mut self, pages: &[Page], list: LruList) -> Option<PageIdx> {
        let l = &mut self.lists[list as usize];
        while let Some(&idx) = l.q.front() {
            if live(&pages[idx as usize], self.owner, list, l.front) {
                return Some(idx);
            }
            l.q.pop_front();
            l.front = l.front.wrapping_add(1);
        }
        None
    }

    /// A walk of up to `n` pages from the tail of `list` is about to start: hint the CPU to load
    /// the entries of its first pages (no effect on results).
    #[inline]
    pub fn start_walk(&self, pages: &[Page], list: LruList, n: u64) {
        let ahead = WALK_PREFETCH_AHEAD.min(n as usize);
        for &idx in self.lists[list as usize].q.iter().take(ahead) {
            engine::prefetch(pages, idx as usize);
        }
    }

    /// The next page of a walk ([`Self::tail`]), with the entry [`WALK_PREFETCH_AHEAD`] further
    /// on prefetched (live or stale: no effect on results).
    #[inline]
    pub fn next_to_scan(&mut self, pages: &[Page], list: LruList) -> Option<PageIdx> {
        let idx = self.tail(pages, list)?;
        if let Some(&ahead) = self.lists[list as usize].q.get(WALK_PREFETCH_AHEAD) {
            engine::prefetch(pages, ahead as usize);
        }
        Some(idx)
    }

    /// The pages of `list` from tail to head.
    pub fn iter<'a>(&'a self, pages: &'a [Page], list: LruList) -> impl Iterator<Item = PageIdx> + 'a {
        let (l, owner) = (&self.lists[list as usize], self.owner);
        l.q.iter()
            .enumerate()
            .filter(move |&(i, &idx)| live(&pages[idx as usize], owner, list, l.front.wrapping_add(i as u32)))
            .map(|(_, &idx)| idx)
    }

    /// Entries held for `list`, live and stale (for tests of the compaction bound).
    pub fn entries(&self, list: LruList) -> usize {
        self.lists[list as usize].q.len()
    }
}

/// Whether the entry at position `pos` of `owner`'s `list` is page `p`'s current one. The owner
/// matters: a page index unmapped and mapped again by another process may land at the same
/// position of the other process's list.
#[inline(always)]
fn live(p: &Page, owner: Pid, list: LruList, pos: u32) -> bool {
    p.lru == list && p.lru_slot == pos && p.pid == owner
}

impl LruQueue {
    /// Push `idx` at the head (back) or the tail (front); returns its position.
    fn push(
        &mut self,
        pages: &mut [Page],
        owner: Pid,
        list: LruList,
        idx: PageIdx,
        live_after: u32,
        head: bool,
    ) -> u32 {
        self.compact_if_due(pages, owner, list, live_after);
        if head {
            self.q.push_back(idx);
            self.front.wrapping_add(self.q.len() as u32 - 1)
        } else {
            self.front = self.front.wrapping_sub(1);
            self.q.push_front(idx);
            self.front
        }
    }

    /// Drop stale entries and renumber the live ones when the queue (with the entry about
    /// to be pushed) would exceed 1.5 times `live_after` plus the slack.
    fn compact_if_due(&mut self, pages: &mut [Page], owner: Pid, list: LruList, live_after: u32) {
        let n = live_after as usize;
        if self.q.len() < n + n / 2 + COMPACT_SLACK {
            return;
        }
        // New positions follow the old ones (wrapping), so a page already renumbered is never
        // mistaken for one of its stale entries further on.
        let front = self.front;
        let new_front = front.wrapping_add(self.q.len() as u32);
        let mut pos = new_front;
        let mut i = 0u32;
        self.q.retain(|&idx| {
            let p = &mut pages[idx as usize];
            let keep = live(p, owner, list, front.wrapping_add(i));
            i += 1;
            if keep {
                p.lru_slot = pos;
                pos = pos.wrapping_add(1);
            }
            keep
        });
        self.front = new_front;
        // `retain` keeps the capacity: give back what the stale entries took.
        if self.q.capacity() > 2 * self.q.len() + COMPACT_SLACK {
            self.q.shrink_to(self.q.len() + self.q.len() / 2 + COMPACT_SLACK);
        }
    }
}

// ----- list operations on the page table's entries -----

impl PageTable {
    /// Add `idx` at the head (most recent end) of `list` in `lru`.
    #[inline]
    pub fn lru_add_head(&mut self, lru: &mut LruVec, idx: PageIdx, list: LruList) {
        self.lru_add(lru, idx, list, true);
    }

    /// Add `idx` at the tail (reclaimed first) of `list`.
    #[inline]
    pub fn lru_add_tail(&mut self, lru: &mut LruVec, idx: PageIdx, list: LruList) {
        self.lru_add(lru, idx, list, false);
    }

    #[inline(always)]
    fn lru_add(&mut self, lru: &mut LruVec, idx: PageIdx, list: LruList, head: bool) {
        self.epoch += 1;
        let l = list as usize;
        lru.len[l] += 1;
        let pos = lru.lists[l].push(&mut self.pages, lru.owner, list, idx, lru.len[l], head);
        let p = &mut self.pages[idx as usize];
        p.lru = list;
        p.lru_slot = pos;
        if self.stamps_enabled() {
            // Node-LRU age: a head gets the next stamp, a tail is older than every head.
            self.stamp[idx as usize] = if head { self.next_stamp() } else { 0 };
        }
    }

    /// Remove `idx` from whatever list it is on (its entry goes stale).
    #[inline]
    pub fn lru_del(&mut self, lru: &mut LruVec, idx: PageIdx) {
        self.epoch += 1;
        let p = &mut self.pages[idx as usize];
        if p.lru == LruList::None {
            return;
        }
        lru.len[p.lru as usize] -= 1;
        p.lru = LruList::None;
    }

    /// Move `idx` to the head of `list`.
    #[inline]
    pub fn lru_move_head(&mut self, lru: &mut LruVec, idx: PageIdx, list: LruList) {
        self.lru_del(lru, idx);
        self.lru_add_head(lru, idx, list);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn order_follows_head_and_tail_insertions() {
        let mut t = PageTable::default();
        let mut lru = LruVec::new(1);
        let first = t.map(1, 4, PageKind::NativeAnon, PageState::Untouched, false);
        for i in 0..4 {
            t.lru_add_head(&mut lru, first + i, LruList::InactiveAnon);
        }
        assert_eq!(lru.tail(&t.pages, LruList::InactiveAnon), Some(first));
        t.lru_del(&mut lru, first + 2);
        t.lru_add_tail(&mut lru, first + 2, LruList::InactiveAnon);
        let order: Vec<u32> = lru
            .iter(&t.pages, LruList::InactiveAnon)
            .map(|i| i - first)
            .collect();
        assert_eq!(order, vec![2, 0, 1, 3]);
        assert_eq!(lru.len[0], 4);
    }

    #[test]
    fn a_page_index_mapped_again_by_another_process_leaves_the_first_list() {
        let mut t = PageTable::default();
        let (mut p1, mut p2) = (LruVec::new(1), LruVec::new(2));
        let idx = t.map(1, 1, PageKind::NativeAnon, PageState::Resident, false);
        t.lru_add_head(&mut p1, idx, LruList::InactiveAnon);
        t.lru_del(&mut p1, idx);
        t.unmap(idx, 1);
        assert_eq!(t.map(2, 1, PageKind::NativeAnon, PageState::Resident, false), idx);
        // Same list kind, same position 0 in the other process's queue.
        t.lru_add_head(&mut p2, idx, LruList::InactiveAnon);
        assert_eq!(p1.iter(&t.pages, LruList::InactiveAnon).count(), 0);
        assert_eq!(p1.tail(&t.pages, LruList::InactiveAnon), None);
        assert_eq!(p2.tail(&t.pages, LruList::InactiveAnon), Some(idx));
    }

    /// A doubly linked list model (`Vec` of indices) the queues must match op for op.
    fn model_apply(m: &mut [Vec<PageIdx>], op: u8, list: usize, idx: PageIdx) {
        for l in m.iter_mut() {
            l.retain(|&i| i != idx);
        }
        match op {
            0 => m[list].push(idx),
            1 => m[list].insert(0, idx),
            _ => {}
        }
    }

    proptest! {
        /// Any sequence of head/tail insertions, moves, removals and unmap/remap keeps each
        /// list's order that of a linked list, its length, and the compaction bound; walks from
        /// the tail (with `tail`) see the same order.
        #[test]
        fn queues_match_a_linked_list(
            ops in prop::collection::vec((0u8..5, 0usize..2, 0u32..48), 0..2000),
        ) {
            let mut t = PageTable::default();
            let mut lru = LruVec::new(1);
            let first = t.map(1, 48, PageKind::NativeAnon, PageState::Resident, false);
            let mut model: Vec<Vec<PageIdx>> = vec![Vec::new(); 2];
            let lists = [LruList::InactiveAnon, LruList::ActiveAnon];
            for &(op, l, c) in &ops {
                let idx = first + c;
                let on = t.pages[idx as usize].lru != LruList::None;
                match op {
                    0 => { t.lru_move_head(&mut lru, idx, lists[l]); model_apply(&mut model, 0, l, idx); }
                    1 => {
                        t.lru_del(&mut lru, idx);
                        t.lru_add_tail(&mut lru, idx, lists[l]);
                        model_apply(&mut model, 1, l, idx);
                    }
                    2 => { t.lru_del(&mut lru, idx); model_apply(&mut model, 2, l, idx); }
                    3 if on => {
                        // Scan the tail of the page's list: rotate it to the other list's head.
                        let cur = t.pages[idx as usize].lru as usize;
                        let tail = lru.tail(&t.pages, lists[cur]).unwrap();
                        prop_assert_eq!(Some(&tail), model[cur].first());
                        t.lru_move_head(&mut lru, tail, lists[1 - cur]);
                        model_apply(&mut model, 0, 1 - cur, tail);
                    }
                    _ => {
                        // Unmap one page's range and map it again: every list forgets it.
                        if !on {
                            t.unmap(idx, 1);
                            prop_assert_eq!(t.map(1, 1, PageKind::NativeAnon, PageState::Resident, false), idx);
                        }
                    }
                }
                for (i, &list) in lists.iter().enumerate() {
                    let seen: Vec<PageIdx> = lru.iter(&t.pages, list).collect();
                    prop_assert_eq!(&seen, &model[i]);
                    prop_assert_eq!(lru.len[list as usize] as usize, model[i].len());
                }
                // Right after a push, the pushed list holds at most 1.5 times its pages plus slack.
                if op <= 1 {
                    prop_assert!(lru.entries(lists[l]) <= model[l].len() * 3 / 2 + COMPACT_SLACK);
                }
            }
        }
    }
}
