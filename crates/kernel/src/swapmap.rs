//! Swap slot allocation shared by every swap device (Linux `mm/swapfile.c`).
//!
//! Linux hands out swap slots from the device's `swap_map` with `scan_swap_map_slots`; on a
//! non-rotational device (flash, and zram, which sets `QUEUE_FLAG_NONROT`) it allocates from
//! clusters of `SWAPFILE_CLUSTER` = 256 slots (`scan_swap_map_try_ssd_cluster`, since 3.12): the
//! allocating CPU keeps a current cluster and takes its free slots in increasing order; when that
//! cluster is used up it takes the head of the `free_clusters` list (clusters with no slot in
//! use; a cluster whose last slot is freed goes to the tail); with no free cluster left it falls
//! back to a linear scan for the next free slot from `cluster_next`. So the pages of one reclaim
//! batch get adjacent slots: on flash their bios merge into one request, and on zram a relaunch
//! that faults them back in touches consecutive slots (Ariadne §3, Table 3).
//!
//! Simplified: one CPU (one current cluster); no discard list, no per-cpu swap slot cache
//! (`swap_slots.c` caches 64 slots per CPU, taken from the same clusters), no `SWAP_HAS_CACHE`.

use std::collections::VecDeque;

/// Slots per cluster (Linux `SWAPFILE_CLUSTER`).
pub const SWAPFILE_CLUSTER: u32 = 256;

/// The slot map of one swap device.
#[derive(Debug, Clone)]
pub struct SwapMap {
    used: Vec<bool>,
    /// Slots in use per cluster.
    cluster_used: Vec<u16>,
    /// Clusters with no slot in use, in the order they became free (head = next to take).
    free_clusters: VecDeque<u32>,
    in_free_list: Vec<bool>,
    /// Current cluster and the next offset to try in it.
    cur: Option<(u32, u32)>,
    /// Fallback scan cursor (`si->cluster_next`).
    cluster_next: u32,
    nr_used: u32,
}

impl SwapMap {
    pub fn new(capacity: u32) -> Self {
        let clusters = capacity.div_ceil(SWAPFILE_CLUSTER);
        Self {
            used: vec![false; capacity as usize],
            cluster_used: vec![0; clusters as usize],
            free_clusters: (0..clusters).collect(),
            in_free_list: vec![true; clusters as usize],
            cur: None,
            cluster_next: 0,
            nr_used: 0,
        }
    }

    pub fn capacity(&self) -> u32 {
        self.used.len() as u32
    }

    pub fn used(&self) -> u32 {
        self.nr_used
    }

    pub fn is_used(&self, slot: u32) -> bool {
        self.used.get(slot as usize).copied().unwrap_or(false)
    }

    fn take(&mut self, slot: u32) -> u32 {
        self.used[slot as usize] = true;
        let c = slot / SWAPFILE_CLUSTER;
        self.cluster_used[c as usize] += 1;
        if self.in_free_list[c as usize] {
            // Only the fallback scan can land here; Linux then takes the cluster off the list.
            self.in_free_list[c as usize] = false;
            self.free_clusters.retain(|&x| x != c);
        }
        self.nr_used += 1;
        self.cluster_next = slot + 1;
        slot
    }

    /// Allocate one slot, or `None` when the device is full.
    pub fn alloc(&mut self) -> Option<u32> {
        if self.nr_used >= self.capacity() {
            return None;
        }
        let cap = self.capacity();
        loop {
            if let Some((c, next)) = self.cur {
                let end = ((c + 1) * SWAPFILE_CLUSTER).min(cap);
                if let Some(s) = (next..end).find(|&s| !self.used[s as usize]) {
                    self.cur = Some((c, s + 1));
                    return Some(self.take(s));
                }
                self.cur = None;
            }
            match self.free_clusters.pop_front() {
                Some(c) => {
                    self.in_free_list[c as usize] = false;
                    self.cur = Some((c, c * SWAPFILE_CLUSTER));
                }
                None => break,
            }
        }
        // No free cluster: linear scan from cluster_next, wrapping once.
        let start = self.cluster_next.min(cap);
        let s = (start..cap).chain(0..start).find(|&s| !self.used[s as usize])?;
        Some(self.take(s))
    }

    /// Release `slot`; a cluster left empty goes to the tail of the free-cluster list.
    pub fn free(&mut self, slot: u32) {
        debug_assert!(self.used[slot as usize], "double free of swap slot {slot}");
        self.used[slot as usize] = false;
        self.nr_used -= 1;
        let c = slot / SWAPFILE_CLUSTER;
        self.cluster_used[c as usize] -= 1;
        let is_cur = self.cur.is_some_and(|(x, _)| x == c);
        if self.cluster_used[c as usize] == 0 && !is_cur && !self.in_free_list[c as usize] {
            self.in_free_list[c as usize] = true;
            self.free_clusters.push_back(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_gets_adjacent_slots_and_freed_clusters_are_reused_whole() {
        let mut m = SwapMap::new(4 * SWAPFILE_CLUSTER);
        let a: Vec<u32> = (0..32).map(|_| m.alloc().unwrap()).collect();
        assert_eq!(a, (0..32).collect::<Vec<_>>());
        // Scatter frees inside the current cluster: later batches still go forward in it.
        for s in (0..32).step_by(2) {
            m.free(s);
        }
        let b: Vec<u32> = (0..4).map(|_| m.alloc().unwrap()).collect();
        assert_eq!(b, vec![32, 33, 34, 35]);
        // Fill the rest of cluster 0: the next slot comes from a fresh cluster, not a hole.
        while m.alloc().unwrap() < SWAPFILE_CLUSTER - 1 {}
        assert_eq!(m.alloc(), Some(SWAPFILE_CLUSTER));
    }

    #[test]
    fn full_device_falls_back_to_scanning_and_reports_full() {
        let mut m = SwapMap::new(2 * SWAPFILE_CLUSTER);
        for _ in 0..2 * SWAPFILE_CLUSTER {
            m.alloc().unwrap();
        }
        assert_eq!(m.alloc(), None);
        m.free(7);
        m.free(300);
        let mut got = vec![m.alloc().unwrap(), m.alloc().unwrap()];
        got.sort();
        assert_eq!(got, vec![7, 300]);
        assert_eq!(m.used(), 2 * SWAPFILE_CLUSTER);
    }
}
