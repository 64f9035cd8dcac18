//! zsmalloc-style memory accounting: size classes, zspages, fullness groups.
//!
//! What is modelled (Linux `mm/zsmalloc.c`, 6.x, 4 KiB pages, 64-bit):
//! - `zs_malloc(size)` adds the 8-byte handle (`ZS_HANDLE_SIZE`) and picks class
//!   `idx = ceil((size − 32) / 16)` (0 if size ≤ 32), capped at 254: class sizes are
//!   `32 + 16·idx` (`ZS_MIN_ALLOC_SIZE` 32, `ZS_SIZE_CLASS_DELTA` 16, 255 classes).
//! - Each class has a zspage of `pages_per_zspage` pages (1..=`max_chain`, default 8 =
//!   `CONFIG_ZSMALLOC_CHAIN_SIZE`) chosen by `calculate_zspage_chain_size`: power-of-two sizes
//!   take 1 page, otherwise the chain length with the least tail waste
//!   (`(i·4096) mod size`, first minimum wins); `objs_per_zspage = pages·4096 / size`.
//! - Classes are created from the largest down; a class merges into the previous (larger) one
//!   when both have the same `pages_per_zspage` and `objs_per_zspage` (`can_merge`).
//! - `huge_class_size`: the size of the first class (from the top) with more than one page and
//!   more than one object per zspage, minus `ZS_HANDLE_SIZE − 1` (3625 with chain 8, 3257 with
//!   chain 4). zram stores a page whose compressed size is ≥ this raw (4096 B, class 4096).
//! - Allocation takes the first zspage of the fullest non-full fullness group (`find_get_zspage`
//!   scans ZS_INUSE_RATIO_99 … 0, `list_first_entry`), else allocates a new zspage; a zspage
//!   whose last object is freed is released. A zspage changes list only when its fullness group
//!   changes (`fix_fullness_group`), and then goes to the head of its new group's list
//!   (`insert_zspage`: `list_add`), so within a group the most recently moved zspage is used
//!   first and a free that leaves the group unchanged moves nothing. `pages_allocated` (zs_get_total_pages) is what zram reports as
//!   `mem_used_total`, so allocator tail waste and fragmentation are included.
//! - `compact()` migrates objects from the sparsest zspages into the fullest ones (as
//!   `__zs_compact` does) and counts released pages (`pages_compacted`).
//!
//! Simplified: object placement inside a zspage is not tracked (only in-use counts). The fullness
//! lists are intrusive doubly linked lists through dense zspage ids, in the kernel's order. The zram slot table and the handle cache are kernel metadata outside zs pages and are
//! not in `mem_used_total` (as in Linux).

pub const PAGE: usize = 4096;
pub const ZS_MIN_ALLOC_SIZE: usize = 32;
pub const ZS_SIZE_CLASS_DELTA: usize = 16;
pub const ZS_HANDLE_SIZE: usize = 8;
pub const ZS_SIZE_CLASSES: usize = (PAGE - ZS_MIN_ALLOC_SIZE).div_ceil(ZS_SIZE_CLASS_DELTA) + 1;
/// Fullness groups: 0 (empty), 1..=10 (ratio/10 + 1), 11 (full).
const NR_FULLNESS: usize = 12;
const FULL: usize = 11;

/// Geometry of one (merged) class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassInfo {
    /// Object size (bytes) of the class (the largest size merged into it).
    pub size: usize,
    pub pages_per_zspage: usize,
    pub objs_per_zspage: usize,
}

/// `calculate_zspage_chain_size`.
pub fn chain_size(class_size: usize, max_chain: usize) -> usize {
    if class_size.is_power_of_two() {
        return 1;
    }
    let mut best = (usize::MAX, 1);
    for i in 1..=max_chain {
        let waste = (i * PAGE) % class_size;
        if waste < best.0 {
            best = (waste, i);
        }
    }
    best.1
}

/// `get_size_class_index` for an allocation of `size` bytes *including* the handle.
pub fn size_class_index(size: usize) -> usize {
    let idx = if size > ZS_MIN_ALLOC_SIZE {
        (size - ZS_MIN_ALLOC_SIZE).div_ceil(ZS_SIZE_CLASS_DELTA)
    } else {
        0
    };
    idx.min(ZS_SIZE_CLASSES - 1)
}

/// The class table of a pool.
#[derive(Debug, Clone)]
pub struct SizeClasses {
    /// For each of the 255 indices, the merged class id.
    pub index_to_class: Vec<u8>,
    pub classes: Vec<ClassInfo>,
    pub huge_class_size: usize,
}

impl SizeClasses {
    pub fn new(max_chain: usize) -> Self {
        let mut index_to_class = vec![0u8; ZS_SIZE_CLASSES];
        let mut classes: Vec<ClassInfo> = Vec::new();
        let mut huge_class_size = 0;
        for i in (0..ZS_SIZE_CLASSES).rev() {
            let size = (ZS_MIN_ALLOC_SIZE + i * ZS_SIZE_CLASS_DELTA).min(PAGE);
            let pages = chain_size(size, max_chain);
            let objs = pages * PAGE / size;
            if pages != 1 && objs != 1 && huge_class_size == 0 {
                huge_class_size = size - (ZS_HANDLE_SIZE - 1);
            }
            if let Some(prev) = classes.last() {
                if prev.pages_per_zspage == pages && prev.objs_per_zspage == objs {
                    index_to_class[i] = (classes.len() - 1) as u8;
                    continue;
                }
            }
            classes.push(ClassInfo {
                size,
                pages_per_zspage: pages,
                objs_per_zspage: objs,
            });
            index_to_class[i] = (classes.len() - 1) as u8;
        }
        Self {
            index_to_class,
            classes,
            huge_class_size,
        }
    }

    /// The class an object of `size` bytes (zs_malloc argument, handle not included) lands in.
    pub fn class_for(&self, size: usize) -> u8 {
        self.index_to_class[size_class_index(size + ZS_HANDLE_SIZE)]
    }
}

/// No zspage (list end).
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Zspage {
    inuse: u32,
    /// Fullness group; its list links (`NONE` at the ends and while released).
    group: u8,
    prev: u32,
    next: u32,
}

#[derive(Debug, Clone)]
struct ClassState {
    zspages: Vec<Zspage>,
    released: Vec<u32>,
    /// First zspage of each fullness group's list (`class->fullness_list[g]`).
    heads: [u32; NR_FULLNESS],
    live_objs: u64,
    live_zspages: u64,
}

impl Default for ClassState {
    fn default() -> Self {
        Self {
            zspages: Vec::new(),
            released: Vec::new(),
            heads: [NONE; NR_FULLNESS],
            live_objs: 0,
            live_zspages: 0,
        }
    }
}

/// Where an object lives: (class id, zspage id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjLoc {
    pub class: u8,
    pub zspage: u32,
}

/// A zsmalloc pool (accounting only).
#[derive(Debug, Clone)]
pub struct ZsPool {
    pub classes: SizeClasses,
    state: Vec<ClassState>,
    pages_allocated: u64,
    pub pages_compacted: u64,
}

impl ZsPool {
    pub fn new(max_chain: usize) -> Self {
        let classes = SizeClasses::new(max_chain);
        let state = (0..classes.classes.len())
            .map(|_| ClassState::default())
            .collect();
        Self {
            classes,
            state,
            pages_allocated: 0,
            pages_compacted: 0,
        }
    }

    pub fn huge_class_size(&self) -> usize {
        self.classes.huge_class_size
    }

    /// Pages held by zspages (`zs_get_total_pages`).
    pub fn pages_allocated(&self) -> u64 {
        self.pages_allocated
    }

    fn fullness(info: &ClassInfo, inuse: u32) -> usize {
        if inuse == 0 {
            0
        } else if inuse as usize == info.objs_per_zspage {
            FULL
        } else {
            (100 * inuse as usize / info.objs_per_zspage) / 10 + 1
        }
    }

    /// `remove_zspage`: `list_del` from its group's list.
    fn unlink(st: &mut ClassState, z: u32) {
        let Zspage {
            group, prev, next, ..
        } = st.zspages[z as usize];
        if prev == NONE {
            st.heads[group as usize] = next;
        } else {
            st.zspages[prev as usize].next = next;
        }
        if next != NONE {
            st.zspages[next as usize].prev = prev;
        }
    }

    /// `insert_zspage`: `list_add` at the head of `group`'s list.
    fn link(st: &mut ClassState, z: u32, group: usize) {
        let head = st.heads[group];
        let zp = &mut st.zspages[z as usize];
        zp.group = group as u8;
        zp.prev = NONE;
        zp.next = head;
        if head != NONE {
            st.zspages[head as usize].prev = z;
        }
        st.heads[group] = z;
    }

    /// `fix_fullness_group`: move `z` only if its group changed.
    fn fix_fullness(info: &ClassInfo, st: &mut ClassState, z: u32) {
        let g = Self::fullness(info, st.zspages[z as usize].inuse);
        if g != st.zspages[z as usize].group as usize {
            Self::unlink(st, z);
            Self::link(st, z, g);
        }
    }

    /// `zs_malloc(size)`: `size` is the object size without the handle (1..=4096).
    pub fn alloc(&mut self, size: usize) -> ObjLoc {
        debug_assert!(size > 0 && size <= PAGE);
        let class = self.classes.class_for(size);
        let info = self.classes.classes[class as usize];
        let st = &mut self.state[class as usize];
        // Fullest non-full group first (`find_get_zspage`: the head of its list).
        let found = (1..FULL).rev().map(|g| st.heads[g]).find(|&z| z != NONE);
        let z = match found {
            Some(z) => {
                st.zspages[z as usize].inuse += 1;
                Self::fix_fullness(&info, st, z);
                z
            }
            None => {
                let fresh = Zspage {
                    inuse: 1,
                    group: 0,
                    prev: NONE,
                    next: NONE,
                };
                let z = match st.released.pop() {
                    Some(z) => {
                        st.zspages[z as usize] = fresh;
                        z
                    }
                    None => {
                        st.zspages.push(fresh);
                        (st.zspages.len() - 1) as u32
                    }
                };
                st.live_zspages += 1;
                self.pages_allocated += info.pages_per_zspage as u64;
                let g = Self::fullness(&info, 1);
                Self::link(st, z, g);
                z
            }
        };
        st.live_objs += 1;
        ObjLoc { class, zspage: z }
    }

    /// `zs_free`.
    pub fn free(&mut self, loc: ObjLoc) {
        let info = self.classes.classes[loc.class as usize];
        let st = &mut self.state[loc.class as usize];
        let z = loc.zspage;
        debug_assert!(
            st.zspages[z as usize].inuse > 0,
            "free of an object in an empty zspage"
        );
        st.zspages[z as usize].inuse -= 1;
        st.live_objs -= 1;
        if st.zspages[z as usize].inuse == 0 {
            // `free_zspage`: off its list and released.
            Self::unlink(st, z);
            st.zspages[z as usize].prev = NONE;
            st.zspages[z as usize].next = NONE;
            st.released.push(z);
            st.live_zspages -= 1;
            self.pages_allocated -= info.pages_per_zspage as u64;
        } else {
            Self::fix_fullness(&info, st, z);
        }
    }

    /// Pages that a perfect packing of the live objects would need.
    pub fn pages_if_compacted(&self) -> u64 {
        self.state
            .iter()
            .zip(&self.classes.classes)
            .map(|(st, info)| {
                st.live_objs.div_ceil(info.objs_per_zspage as u64) * info.pages_per_zspage as u64
            })
            .sum()
    }

    /// Compaction: accounts the pages a full compaction releases. Returns pages freed.
    ///
    /// Object locations are not tracked individually, so this only updates the counters; callers
    /// keep `ObjLoc`s valid by never freeing through a compacted pool (zram rebuilds its locations
    /// via [`ZsPool::relocate_all`]).
    pub fn compactable_pages(&self) -> u64 {
        self.pages_allocated - self.pages_if_compacted()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_geometry_matches_hand_computed_values() {
        let c = SizeClasses::new(8);
        assert_eq!(ZS_SIZE_CLASSES, 255);
        // huge_class_size with chain 8: first class from the top with >1 page and >1 object is
        // 3632 (8 pages, 9 objects: 32768 − 9·3632 = 80 waste); 3632 − 7 = 3625.
        assert_eq!(c.huge_class_size, 3625);
        assert_eq!(SizeClasses::new(4).huge_class_size, 3264 - 7);
        // A 100-byte object + 8-byte handle = 108 → idx ceil(76/16)=5 → class size 112.
        let cl = c.classes[c.class_for(100) as usize];
        assert_eq!(chain_size(112, 8), 7); // 7·4096 = 28672 = 256·112: zero waste
        assert_eq!(cl.pages_per_zspage, 7);
        assert_eq!(cl.objs_per_zspage, 256);
        // 4096-byte objects: class 4096, one page, one object.
        let huge = c.classes[c.class_for(4096) as usize];
        assert_eq!(
            (huge.size, huge.pages_per_zspage, huge.objs_per_zspage),
            (4096, 1, 1)
        );
        // 24 bytes + 8 = 32: the smallest class, 1 page (power of two), 128 objects.
        let small = c.classes[c.class_for(24) as usize];
        assert_eq!(
            (small.size, small.pages_per_zspage, small.objs_per_zspage),
            (32, 1, 128)
        );
        // Classes above huge_class_size all merge into the 4096 one? No: they merge among
        // themselves only when (pages, objs) agree: all are (1, 1), so they are one class.
        assert_eq!(c.class_for(3700), c.class_for(4000));
        assert_eq!(c.class_for(3700), c.class_for(4096));
    }

    #[test]
    fn pages_allocated_follow_zspages() {
        let mut p = ZsPool::new(8);
        // 257 objects of class 112 (256 per 7-page zspage) → 2 zspages = 14 pages.
        let locs: Vec<_> = (0..257).map(|_| p.alloc(100)).collect();
        assert_eq!(p.pages_allocated(), 14);
        p.free(locs[256]);
        assert_eq!(p.pages_allocated(), 7);
        for l in &locs[..256] {
            p.free(*l);
        }
        assert_eq!(p.pages_allocated(), 0);
        // Huge objects: one page each.
        let h: Vec<_> = (0..3).map(|_| p.alloc(4096)).collect();
        assert_eq!(p.pages_allocated(), 3);
        h.into_iter().for_each(|l| p.free(l));
        assert_eq!(p.pages_allocated(), 0);
    }

    #[test]
    fn a_free_that_keeps_the_fullness_group_moves_nothing() {
        // Linux `fix_fullness_group`: a zspage changes list only when its group changes, and
        // `find_get_zspage` takes the head of the fullest non-full group.
        let mut p = ZsPool::new(8);
        // Class 112: 256 objects per zspage. Two full zspages a and b.
        let locs: Vec<_> = (0..512).map(|_| p.alloc(100)).collect();
        let (a, b) = (locs[0].zspage, locs[256].zspage);
        assert_ne!(a, b);
        p.free(locs[0]); // a: 255/256 -> ratio 99, group 10 (moved: was full)
        p.free(locs[256]); // b: group 10, now its head
        p.free(locs[1]); // a: 254/256 -> still ratio 99: stays behind b
        assert_eq!(p.alloc(100).zspage, b);
        assert_eq!(p.alloc(100).zspage, a); // b is full again: a is the group's head
    }
}
