//! Heap invariants, checked periodically by long (soak) runs and by tests: object counts and
//! bytes agree with the per-object records, roots and reference slots of live objects point to
//! live objects (no dangling reference survives a collection), and every object a region lists
//! is alive and lies inside the region's used part.

use crate::heap::{oflags, Heap, RegionState, NULL, REGION_SIZE};

impl Heap {
    /// Check the heap's invariants; the first violation found, as one line.
    pub fn check_invariants(&self) -> Result<(), String> {
        // A bitmap of live ids first: the reference check then probes 1 bit per slot.
        let mut bits = vec![0u64; self.recs.len().div_ceil(64)];
        let (mut live, mut bytes) = (0u64, 0u64);
        for (o, r) in self.recs.iter().enumerate() {
            if r.flags & oflags::ALIVE != 0 {
                bits[o / 64] |= 1 << (o % 64);
                live += 1;
                bytes += r.size as u64;
            }
        }
        let alive = |o: u32| bits.get(o as usize / 64).is_some_and(|w| w >> (o % 64) & 1 != 0);
        for (o, r) in self.recs.iter().enumerate() {
            if r.flags & oflags::ALIVE == 0 {
                continue;
            }
            let slots = self
                .refs
                .get(r.ref_start as usize..(r.ref_start + r.ref_len) as usize);
            let Some(slots) = slots else {
                return Err(format!(
                    "heap {}: object {o} has slots outside the slot table",
                    self.pid
                ));
            };
            if r.flags & oflags::TAIL != 0
                && (r.ref_start == 0 || self.refs[r.ref_start as usize - 1] < r.ref_len + 2)
            {
                return Err(format!(
                    "heap {}: object {o}'s unstored null tail has no slot count before its slots",
                    self.pid
                ));
            }
            if let Some(d) = slots.iter().find(|&&d| d != NULL && !alive(d)) {
                return Err(format!(
                    "heap {}: live object {o} refers to dead object {d}",
                    self.pid
                ));
            }
        }
        if live != self.live_objects {
            return Err(format!(
                "heap {}: {live} live objects, live_objects says {}",
                self.pid, self.live_objects
            ));
        }
        if bytes != self.bytes_allocated {
            return Err(format!(
                "heap {}: {bytes} bytes in live objects, bytes_allocated says {}",
                self.pid, self.bytes_allocated
            ));
        }
        if let Some(r) = self.roots.iter().find(|&&r| !alive(r)) {
            return Err(format!("heap {}: root {r} is not a live object", self.pid));
        }
        for (i, reg) in self.regions.iter().enumerate() {
            let start = i as u64 * REGION_SIZE as u64;
            // A used region lists exactly its live objects (between collections; the stock trace
            // relies on it). A free region's list is empty.
            let mut listed = 0u64;
            for &o in &reg.objs {
                let Some(r) = self.recs.get(o as usize).filter(|_| alive(o)) else {
                    return Err(format!(
                        "heap {}: region {i} lists object {o}, which is not alive",
                        self.pid
                    ));
                };
                let (a, end) = (r.addr as u64, r.addr as u64 + r.size as u64);
                if r.flags & oflags::LARGE != 0 || a < start || end > start + reg.top as u64 {
                    return Err(format!(
                        "heap {}: object {o} at [{a}, {end}) outside region {i}'s used part",
                        self.pid
                    ));
                }
                listed += r.size as u64;
            }
            // A used region's live bytes are its listed objects' (bump allocation and copies add
            // each object's size, a collection's reclaim sets them from marking).
            if reg.state == RegionState::Used && listed != reg.live_bytes as u64 {
                return Err(format!(
                    "heap {}: region {i} lists objects of {listed} bytes, its live bytes say {}",
                    self.pid, reg.live_bytes
                ));
            }
        }
        Ok(())
    }
}
