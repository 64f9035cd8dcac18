//! Reference slots: the CSR slot array, objects whose null tail is not stored
//! ([`oflags::TAIL`], see the [`super`] docs), stores that need more room, compaction.

use super::*;

impl Heap {
    /// Stored reference slots of an object: all of them, or a prefix whose remaining slots (up to
    /// [`Self::nrefs`]) are null.
    #[inline]
    pub fn refs_of(&self, o: ObjId) -> &[ObjId] {
        self.refs_in(&self.recs[o as usize])
    }

    /// Number of reference slots of an object (stored or not).
    pub fn nrefs(&self, o: ObjId) -> u32 {
        let r = &self.recs[o as usize];
        if r.flags & oflags::TAIL != 0 {
            self.refs[r.ref_start as usize - 1]
        } else {
            r.ref_len
        }
    }

    /// Reference `slot` of object `o` (null in an unstored tail).
    pub fn ref_at(&self, o: ObjId, slot: u32) -> ObjId {
        debug_assert!(slot < self.nrefs(o));
        self.refs_of(o).get(slot as usize).copied().unwrap_or(NULL)
    }

    /// Stored reference slots of the object with record `r` (see [`Self::refs_of`]).
    #[inline(always)]
    pub fn refs_in(&self, r: &ObjRec) -> &[ObjId] {
        let s = r.ref_start as usize;
        &self.refs[s..s + r.ref_len as usize]
    }

    /// Store a reference without touching pages or running barriers (heap construction).
    pub fn set_ref_raw(&mut self, src: ObjId, slot: u32, dst: ObjId) {
        self.graph_clock += 1;
        debug_assert!(slot < self.nrefs(src));
        if slot >= self.recs[src as usize].ref_len {
            if dst == NULL {
                // Unstored slots are null already.
                return;
            }
            self.store_more_refs(src, slot);
        }
        let s = self.recs[src as usize].ref_start + slot;
        self.refs[s as usize] = dst;
    }

    /// Compact the reference-slot array when more than half of it belongs to dead objects.
    pub(crate) fn maybe_compact_refs(&mut self) {
        if self.dead_ref_slots * 2 <= self.refs.len() as u64 || self.refs.len() < 1 << 16 {
            return;
        }
        self.compact_refs();
    }

    /// Drop dead objects' slots from the reference-slot array.
    fn compact_refs(&mut self) {
        let mut out: Vec<ObjId> = Vec::with_capacity(self.refs.len() - self.dead_ref_slots as usize);
        for r in self.recs.iter_mut() {
            if r.flags & oflags::ALIVE != 0 {
                let s = r.ref_start as usize;
                if r.flags & oflags::TAIL != 0 {
                    out.push(self.refs[s - 1]);
                }
                r.ref_start = out.len() as u32;
                out.extend_from_slice(&self.refs[s..s + r.ref_len as usize]);
            } else {
                r.ref_start = out.len() as u32;
            }
        }
        self.refs = out;
        self.dead_ref_slots = 0;
    }

    /// Make room to store slot `slot` of `src`, beyond its stored prefix: its slots move to the
    /// end of the array, stored up to `slot` and at least twice as many as before (objects
    /// filled one slot at a time move a logarithmic number of times), up to its slot count.
    fn store_more_refs(&mut self, src: ObjId, slot: u32) {
        let n = self.nrefs(src);
        assert!(slot < n, "reference slot {slot} of object {src} with {n} slots");
        let r = self.recs[src as usize];
        let len = (slot + 1).max(r.ref_len.saturating_mul(2)).min(n);
        // As at allocation: a one-slot tail is stored rather than counted.
        let tail = len.saturating_add(1) < n;
        let len = if tail { len } else { n };
        if tail {
            self.refs.push(n);
        }
        let start = self.refs.len();
        let old = r.ref_start as usize;
        self.refs.extend_from_within(old..old + r.ref_len as usize);
        self.refs.resize(start + len as usize, NULL);
        self.dead_ref_slots += r.ref_len as u64 + 1;
        let r = &mut self.recs[src as usize];
        r.ref_start = start as u32;
        r.ref_len = len;
        if !tail {
            r.flags &= !oflags::TAIL;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backing::NullBacking;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        /// Allocate with `nrefs` slots of which `used` are stored.
        Alloc {
            nrefs: u32,
            used: u32,
        },
        /// Store into the `o`-th live object (modulo), slot `k` (modulo), the `d`-th live object or
        /// null.
        Store {
            o: usize,
            k: u32,
            d: Option<usize>,
        },
        Free {
            o: usize,
        },
        Compact,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0u32..40, 0u32..44).prop_map(|(nrefs, used)| Op::Alloc { nrefs, used }),
            6 => (any::<usize>(), any::<u32>(), proptest::option::of(any::<usize>()))
                .prop_map(|(o, k, d)| Op::Store { o, k, d }),
            1 => any::<usize>().prop_map(|o| Op::Free { o }),
            1 => Just(Op::Compact),
        ]
    }

    proptest! {
        /// Whatever the stores, frees and compactions, every live object reads back the slots a
        /// plain model holds (unstored tails read null), and the dead-slot count stays exact.
        #[test]
        fn slots_read_back_what_was_stored(ops in proptest::collection::vec(op(), 1..200)) {
            let mut heap = Heap::new(1, HeapConfig::default());
            let mut b = NullBacking::default();
            let c = heap.add_class("A[]", ClassKind::ObjectArray);
            let mut live: Vec<(ObjId, Vec<ObjId>)> = Vec::new();
            for op in ops {
                match op {
                    Op::Alloc { nrefs, used } => {
                        let id = heap.alloc_quiet(0, c, 16 + 4 * nrefs, nrefs, used, &mut b).unwrap();
                        live.push((id, vec![NULL; nrefs as usize]));
                    }
                    Op::Store { o, k, d } if !live.is_empty() => {
                        let i = o % live.len();
                        let n = live[i].1.len() as u32;
                        if n == 0 {
                            continue;
                        }
                        let dst = d.map_or(NULL, |d| live[d % live.len()].0);
                        heap.set_ref_raw(live[i].0, k % n, dst);
                        live[i].1[(k % n) as usize] = dst;
                    }
                    Op::Free { o } if !live.is_empty() => {
                        let (id, _) = live.swap_remove(o % live.len());
                        heap.free_object(id);
                    }
                    Op::Compact => heap.compact_refs(),
                    _ => {}
                }
                let mut kept = 0;
                for (id, want) in &live {
                    let r = heap.rec(*id);
                    prop_assert_eq!(heap.nrefs(*id) as usize, want.len());
                    prop_assert_eq!(r.has_refs(), !want.is_empty());
                    let mut got = heap.refs_of(*id).to_vec();
                    prop_assert!(got.len() <= want.len());
                    got.resize(want.len(), NULL);
                    prop_assert_eq!(&got, want);
                    for (k, &w) in want.iter().enumerate() {
                        prop_assert_eq!(heap.ref_at(*id, k as u32), w);
                    }
                    kept += r.ref_len as u64 + (r.flags & oflags::TAIL != 0) as u64;
                }
                prop_assert_eq!(heap.refs.len() as u64 - heap.dead_ref_slots, kept);
            }
        }
    }
}
