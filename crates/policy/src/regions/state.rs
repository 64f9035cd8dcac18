//! Region domains: the regions (naturally aligned 2^N-page buddy blocks) each domain owns, the
//! quick-fit free pages inside them, and the domain-compaction planner (ISMM'15 §4.1, §4.1.1).
//!
//! Dense arrays indexed by region number (`pfn >> N`) and domain id; the per-page paths touch one
//! region record and one bit, with no heap allocation.

use kernel::buddy::BuddyAllocator;
use kernel::types::{MigrateType, Pfn, Pid, NIL};

/// Fixed special domains (§4.1.2, §4.2, §4.3); per-process domains follow them.
pub const SHARED: u32 = 0;
pub const SERVICE: u32 = 1;
pub const CACHE: u32 = 2;
pub const VMALLOC: u32 = 3;
pub const SPECIAL: u32 = 4;
/// Names of the special domains, in id order.
pub const SPECIAL_NAMES: [&str; SPECIAL as usize] = ["shared", "service", "cache", "vmalloc"];

/// One region: which domain holds it and which of its pages are in use (bit set = used).
#[derive(Clone, Copy)]
pub struct Region {
    pub domain: u32,
    pub used: u16,
    /// Index of this region in its domain's `regions`.
    pub pos: u32,
    /// Marked as a compaction source: its pages move out and no page is allocated into it.
    pub evac: bool,
    pub bits: [u64; 4],
}

impl Region {
    const NONE: Region = Region {
        domain: NIL,
        used: 0,
        pos: 0,
        evac: false,
        bits: [0; 4],
    };
}

/// A region domain: its regions and the region pages are taken from first.
#[derive(Default, Clone)]
pub struct Domain {
    pub regions: Vec<u32>,
    /// Parallel to `regions`: the region's fill key ([`State::key`]: used pages + 1 if it can
    /// take a page, else 0), so the fullest-region search reads one dense array instead of
    /// every region record.
    pub keys: Vec<u16>,
    /// The region allocations go to (`NIL`: pick the fullest partly used one).
    pub cur: u32,
    /// Unused pages inside this domain's regions.
    pub free: u64,
    pub live: bool,
    /// Regions come from unmovable pageblocks (vmalloc domain) instead of movable ones.
    pub unmovable: bool,
}

/// Counters of the mechanism (reported by the reproduce group and tests).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    pub regions_taken: u64,
    pub regions_returned: u64,
    /// Order-0 pages served from the buddy allocator directly because no region could be taken.
    pub stray_pages: u64,
    /// New regions asked for through the kernel's `block_wanted` seam (parameter
    /// `region_effort`): the kernel compacts and reclaims for one when the free lists lack it.
    pub regions_wanted: u64,
    /// Pages taken from another domain's region because the buddy allocator was empty.
    pub stolen_pages: u64,
    pub compactions: u64,
    /// Regions visited by the compaction planner (its list walk).
    pub regions_walked: u64,
    pub pages_to_move: u64,
    /// Cache-domain regions named as a file-reclaim unit (§4.2) / of those, emptied and returned.
    pub reclaim_units: u64,
    pub reclaim_units_freed: u64,
}

pub struct State {
    pub order: u8,
    pub size: u32,
    pub regions: Vec<Region>,
    pub domains: Vec<Domain>,
    /// pid -> domain id (`NIL`: none yet).
    pub pid_domain: Vec<u32>,
    /// Freed per-process domain ids, reused.
    pub spare: Vec<u32>,
    /// Unused pages inside all regions (held free, counted as free by the kernel).
    pub held: u64,
    /// The next `alloc` is a migration target (set by `migrate_page`).
    pub migrating: bool,
    /// Regions marked as compaction sources (cleared at the next ordinary allocation).
    pub evac: Vec<u32>,
    /// The region of the last file-reclaim unit (`NIL`: none), to count it when it empties.
    pub unit_region: u32,
    pub counters: Counters,
}

impl State {
    pub fn new(order: u8) -> Self {
        let mut domains = vec![Domain::default(); SPECIAL as usize];
        for d in &mut domains {
            d.live = true;
            d.cur = NIL;
        }
        domains[VMALLOC as usize].unmovable = true;
        Self {
            order,
            size: 1 << order,
            regions: Vec::new(),
            domains,
            pid_domain: Vec::new(),
            spare: Vec::new(),
            held: 0,
            migrating: false,
            evac: Vec::new(),
            unit_region: NIL,
            counters: Counters::default(),
        }
    }

    fn ensure_regions(&mut self, buddy: &BuddyAllocator) {
        let n = (buddy.nr_pages() >> self.order) as usize + 1;
        if self.regions.len() < n {
            self.regions.resize(n, Region::NONE);
        }
    }

    /// The domain of `pid` (a new per-process one at its first page).
    pub fn process_domain(&mut self, pid: Pid) -> u32 {
        let p = pid as usize;
        if self.pid_domain.len() <= p {
            self.pid_domain.resize(p + 1, NIL);
        }
        if self.pid_domain[p] == NIL {
            let id = match self.spare.pop() {
                Some(id) => id,
                None => {
                    self.domains.push(Domain::default());
                    self.domains.len() as u32 - 1
                }
            };
            let d = &mut self.domains[id as usize];
            *d = Domain::default();
            d.live = true;
            d.cur = NIL;
            self.pid_domain[p] = id;
        }
        self.pid_domain[p]
    }

    /// Domains currently holding regions.
    pub fn domains_in_use(&self) -> usize {
        self.domains.iter().filter(|d| !d.regions.is_empty()).count()
    }

    /// Take one page for domain `d`: its current region, else its fullest partly used region,
    /// else a new region from the buddy allocator. `None` if none of these has a page.
    pub fn alloc_in(&mut self, buddy: &mut BuddyAllocator, d: u32, may_grow: bool) -> Option<Pfn> {
        let mut r = self.region_with_room(buddy, d);
        if r == NIL {
            if !may_grow {
                return None;
            }
            r = self.take_region(buddy, d)?;
        }
        self.domains[d as usize].cur = r;
        Some(self.take_page(r))
    }

    /// Whether the next page of domain `d` needs a new region (no region of `d` has room).
    pub fn needs_region(&mut self, buddy: &BuddyAllocator, d: u32) -> bool {
        self.region_with_room(buddy, d) == NIL
    }

    /// The region `d`'s next page comes from without growing: its current region, else its
    /// fullest partly used one (`NIL`: none).
    fn region_with_room(&mut self, buddy: &BuddyAllocator, d: u32) -> u32 {
        self.ensure_regions(buddy);
        let r = self.domains[d as usize].cur;
        if r == NIL || self.regions[r as usize].used as u32 >= self.size || self.regions[r as usize].evac {
            self.fullest_partial(d)
        } else {
            r
        }
    }

    /// The partly used, non-evacuating region of `d` with the most pages in use (the first such
    /// on the domain's list).
    fn fullest_partial(&self, d: u32) -> u32 {
        let dom = &self.domains[d as usize];
        if dom.free == 0 {
            return NIL;
        }
        let best = dom.keys.iter().copied().max().unwrap_or(0);
        if best == 0 {
            return NIL;
        }
        let i = dom.keys.iter().position(|&k| k == best).expect("max is present");
        dom.regions[i]
    }

    /// Fill key of region `r` for [`Self::fullest_partial`]: `used + 1` when a page may be
    /// taken from it (not full, not a compaction source), else 0.
    fn key(&self, r: u32) -> u16 {
        let reg = &self.regions[r as usize];
        if (reg.used as u32) < self.size && !reg.evac {
            reg.used + 1
        } else {
            0
        }
    }

    /// Refresh region `r`'s entry in its domain's `keys` after its `used` or `evac` changed.
    fn sync_key(&mut self, r: u32) {
        let reg = self.regions[r as usize];
        if reg.domain == NIL {
            return;
        }
        let k = self.key(r);
        self.domains[reg.domain as usize].keys[reg.pos as usize] = k;
    }

    fn take_region(&mut self, buddy: &mut BuddyAllocator, d: u32) -> Option<u32> {
        let mt = if self.domains[d as usize].unmovable {
            MigrateType::Unmovable
        } else {
            MigrateType::Movable
        };
        let base = buddy.alloc(self.order, mt)?;
        let r = base >> self.order;
        let dom = &mut self.domains[d as usize];
        self.regions[r as usize] = Region {
            domain: d,
            used: 0,
            pos: dom.regions.len() as u32,
            evac: false,
            bits: [0; 4],
        };
        dom.regions.push(r);
        dom.keys.push(0);
        dom.free += self.size as u64;
        self.held += self.size as u64;
        self.counters.regions_taken += 1;
        self.sync_key(r);
        Some(r)
    }

    /// Quick fit: the lowest free page of region `r` (which has one).
    fn take_page(&mut self, r: u32) -> Pfn {
        let reg = &mut self.regions[r as usize];
        let words = (self.size as usize).div_ceil(64);
        let mut off = 0;
        for w in 0..words {
            let free = !reg.bits[w]
                & if self.size >= 64 {
                    u64::MAX
                } else {
                    (1u64 << self.size) - 1
                };
            if free != 0 {
                off = w as u32 * 64 + free.trailing_zeros();
                break;
            }
        }
        reg.bits[(off / 64) as usize] |= 1 << (off % 64);
        reg.used += 1;
        self.domains[reg.domain as usize].free -= 1;
        self.held -= 1;
        self.sync_key(r);
        (r << self.order) + off
    }

    /// Whether `pfn` is a used page of a region (vs a page the buddy allocator handed out).
    pub fn in_region(&self, pfn: Pfn) -> bool {
        let r = (pfn >> self.order) as usize;
        let off = pfn & (self.size - 1);
        self.regions
            .get(r)
            .is_some_and(|reg| reg.domain != NIL && reg.bits[(off / 64) as usize] & (1 << (off % 64)) != 0)
    }

    /// Give a region page back; an emptied region goes back to the buddy allocator whole.
    pub fn free_page(&mut self, buddy: &mut BuddyAllocator, pfn: Pfn) {
        let r = pfn >> self.order;
        let off = pfn & (self.size - 1);
        let reg = &mut self.regions[r as usize];
        reg.bits[(off / 64) as usize] &= !(1 << (off % 64));
        reg.used -= 1;
        let d = reg.domain;
        self.domains[d as usize].free += 1;
        self.held += 1;
        self.sync_key(r);
        if self.regions[r as usize].used == 0 {
            self.return_region(buddy, r);
        }
    }

    fn return_region(&mut self, buddy: &mut BuddyAllocator, r: u32) {
        let reg = self.regions[r as usize];
        let dom = &mut self.domains[reg.domain as usize];
        let last = *dom.regions.last().expect("region listed in its domain");
        dom.regions.swap_remove(reg.pos as usize);
        dom.keys.swap_remove(reg.pos as usize);
        if last != r {
            self.regions[last as usize].pos = reg.pos;
        }
        if dom.cur == r {
            dom.cur = NIL;
        }
        dom.free -= self.size as u64;
        self.held -= self.size as u64;
        self.regions[r as usize] = Region::NONE;
        buddy.free(r << self.order, self.order);
        self.counters.regions_returned += 1;
        if r == self.unit_region {
            self.unit_region = NIL;
            self.counters.reclaim_units_freed += 1;
        }
        if dom.regions.is_empty() && !dom.live {
            let d = reg.domain;
            self.spare.push(d);
        }
    }

    /// A page from any region with a free page (the buddy allocator is empty; the kernel counts
    /// held pages as free, so it may ask for them).
    pub fn steal(&mut self) -> Option<Pfn> {
        let d = (0..self.domains.len()).find(|&d| self.domains[d].free > 0)? as u32;
        let r = self.domains[d as usize]
            .regions
            .iter()
            .copied()
            .find(|&r| (self.regions[r as usize].used as u32) < self.size)?;
        self.counters.stolen_pages += 1;
        Some(self.take_page(r))
    }

    /// The owner of domain `d` exited: a region still holding pages of others stays until it
    /// empties; the domain id is reused once it has none.
    pub fn retire(&mut self, pid: Pid) {
        let Some(&d) = self.pid_domain.get(pid as usize) else {
            return;
        };
        if d == NIL {
            return;
        }
        self.pid_domain[pid as usize] = NIL;
        if d < SPECIAL {
            return;
        }
        let dom = &mut self.domains[d as usize];
        dom.live = false;
        dom.cur = NIL;
        if dom.regions.is_empty() {
            self.spare.push(d);
        }
    }

    /// Domain compaction plan (§4.1.1): keep the fewest fullest regions that can hold all used
    /// pages, mark the others (the emptiest) as sources. Returns the pages to move.
    pub fn plan_compaction(&mut self, d: u32) -> u64 {
        let dom = &self.domains[d as usize];
        let n = dom.regions.len();
        self.counters.regions_walked += n as u64;
        if n < 2 {
            return 0;
        }
        let used: u64 = dom
            .regions
            .iter()
            .map(|&r| self.regions[r as usize].used as u64)
            .sum();
        let keep = used.div_ceil(self.size as u64).max(1) as usize;
        if keep >= n {
            return 0;
        }
        let mut by_use: Vec<(u16, u32)> = dom
            .regions
            .iter()
            .map(|&r| (self.regions[r as usize].used, r))
            .collect();
        by_use.sort_unstable();
        let mut moving = 0;
        for &(u, r) in &by_use[..n - keep] {
            self.regions[r as usize].evac = true;
            self.sync_key(r);
            self.evac.push(r);
            moving += u as u64;
        }
        self.counters.compactions += 1;
        self.counters.pages_to_move += moving;
        moving
    }

    /// Region-granular file reclaim (§4.2): reclaim drops the page in `victim`; the region's other
    /// used frames go to `out` and the region becomes a source (no page is allocated or migrated
    /// into it), so it empties and goes back to the buddy allocator whole.
    pub fn reclaim_unit(&mut self, victim: Pfn, out: &mut Vec<Pfn>) {
        let r = victim >> self.order;
        self.clear_evac();
        self.regions[r as usize].evac = true;
        self.sync_key(r);
        self.evac.push(r);
        let reg = &self.regions[r as usize];
        for off in 0..self.size {
            let pfn = (r << self.order) + off;
            if pfn != victim && reg.bits[(off / 64) as usize] & (1 << (off % 64)) != 0 {
                out.push(pfn);
            }
        }
        self.unit_region = r;
        self.counters.reclaim_units += 1;
    }

    pub fn clear_evac(&mut self) {
        for r in std::mem::take(&mut self.evac) {
            self.regions[r as usize].evac = false;
            self.sync_key(r);
        }
    }

    /// Whether `pfn` lies in a region marked as a compaction source.
    pub fn is_evac(&self, pfn: Pfn) -> bool {
        self.regions
            .get((pfn >> self.order) as usize)
            .is_some_and(|r| r.domain != NIL && r.evac)
    }

    /// Domain of the region holding `pfn`.
    pub fn domain_of(&self, pfn: Pfn) -> u32 {
        self.regions
            .get((pfn >> self.order) as usize)
            .map_or(NIL, |r| r.domain)
    }

    /// Every page a region holds free, for the conservation checks of the tests.
    pub fn held_frames(&self) -> Vec<Pfn> {
        let mut v = Vec::new();
        for dom in &self.domains {
            for &r in &dom.regions {
                let reg = &self.regions[r as usize];
                for off in 0..self.size {
                    if reg.bits[(off / 64) as usize] & (1 << (off % 64)) == 0 {
                        v.push((r << self.order) + off);
                    }
                }
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fullest-region search on the dense `keys` picks what a walk over the region records
    /// picks (the first region on the list with the most used pages that can take one), through
    /// random allocations, frees, compaction marks and reclaim units.
    #[test]
    fn keys_track_regions_and_pick_the_first_fullest() {
        let mut buddy = BuddyAllocator::new(1 << 14, 9);
        let mut st = State::new(5);
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let naive = |st: &State, d: u32| {
            let mut best = (NIL, 0u16);
            for &r in &st.domains[d as usize].regions {
                let reg = &st.regions[r as usize];
                if (reg.used as u32) < st.size && !reg.evac && (best.0 == NIL || reg.used > best.1) {
                    best = (r, reg.used);
                }
            }
            best.0
        };
        let doms: Vec<u32> = (0..6).map(|p| st.process_domain(p)).chain([CACHE]).collect();
        let mut live: Vec<Pfn> = Vec::new();
        for step in 0..20_000 {
            match rnd(100) {
                0..=54 => {
                    let d = doms[rnd(doms.len() as u64) as usize];
                    if let Some(p) = st.alloc_in(&mut buddy, d, rnd(4) != 0) {
                        live.push(p);
                    }
                }
                55..=94 if !live.is_empty() => {
                    let p = live.swap_remove(rnd(live.len() as u64) as usize);
                    st.free_page(&mut buddy, p);
                }
                95..=97 => {
                    st.clear_evac();
                    st.plan_compaction(doms[rnd(doms.len() as u64) as usize]);
                }
                _ => {
                    if let Some(&p) = live.iter().find(|&&p| st.domain_of(p) == CACHE) {
                        let mut out = Vec::new();
                        st.reclaim_unit(p, &mut out);
                    }
                }
            }
            for &d in &doms {
                let dom = &st.domains[d as usize];
                assert_eq!(dom.keys.len(), dom.regions.len());
                for (i, &r) in dom.regions.iter().enumerate() {
                    assert_eq!(dom.keys[i], st.key(r), "step {step}: key of region {r}");
                }
                assert_eq!(st.fullest_partial(d), naive(&st, d), "step {step}: domain {d}");
            }
        }
        assert!(st.counters.regions_returned > 0 && st.counters.compactions > 0);
    }
}
