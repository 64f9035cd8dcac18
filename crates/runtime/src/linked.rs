//! Medium-lived objects linked into the live graph by mutator reference stores: the part of an
//! app's allocation that survives a few collections (caches, message queues, a background
//! service's buffers) rather than dying at once like [`crate::app::JavaApp::alloc_garbage`]'s
//! chunks.
//!
//! What is modelled: a share [`LinkedParams::share`] of the app's short-lived allocation bytes
//! becomes objects of [`LinkedParams::object_bytes`] each, stored by the mutator into a slot of a
//! *holder* (`Object[HOLDER_SLOTS]` arrays allocated on demand, each at depth [`HOLDER_DEPTH`]
//! below a root through a chain of one-slot arrays) through the write barrier — so a policy's card table or remembered set sees the store, and a holder allocated in
//! the foreground is an old object written in the background. Each object lives for a sampled
//! number of collections of its heap (any GC, counted by [`crate::Runtime::history`]), then its
//! slot is cleared (another barrier store) and it is garbage. Lifetimes are geometric: every GC
//! an object sees, it dies with probability [`LinkedParams::fg_death_per_gc`] (allocated in the
//! foreground) or [`LinkedParams::bg_death_per_gc`] (in the background).
//!
//! Sources: Fleet (ASPLOS'24) Fig. 5 (Twitter, background with a GC every 15 s): more than 40% of
//! foreground objects survive 15 GCs, most background objects die "within the first several GCs".
//! The defaults read that figure: FGO die with probability 0.05 per GC (0.95^15 = 46% survive
//! 15 GCs), BGO with 0.5 (12.5% survive 3 GCs). The share and the size are estimates: no paper
//! publishes them (the size is about the mean of Fleet Fig. 7's commercial-app objects, ~110 B).
//!
//! Simplified: linked objects are leaves (no outgoing references); holders are never freed (they
//! grow to the peak live population); a lifetime expires at the app's next allocation after its
//! last GC, not at the GC itself (the framework allocates every tick).

use crate::backing::PageBacking;
use crate::heap::{ClassId, ClassKind, HeapError, ObjId, ARRAY_HEADER, NULL};
use crate::hooks::RuntimeHooks;
use crate::{Runtime, StepCost};
use engine::{CpuLedger, Nanos, SimRng};
use rand::Rng;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Reference slots per holder array (one 4 KiB page of references).
pub const HOLDER_SLOTS: u32 = 1024;

/// BFS depth of a holder below its root (the root is depth 0): linked objects sit one deeper, as
/// an app's caches and queues hang below its singletons rather than next to the roots.
pub const HOLDER_DEPTH: u32 = 3;

/// Most recently linked objects remembered ([`Linked::young_at_switch`] keeps those since the last GC).
pub const RECENT: usize = 16384;

/// Longest sampled lifetime, in GCs (a death probability near 0 would otherwise overflow).
const MAX_LIFETIME_GCS: u64 = 1 << 20;

/// Linked-allocation behaviour (see module docs for sources).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LinkedParams {
    /// Fraction of the short-lived allocation bytes that are linked objects instead. [0, 1].
    pub share: f64,
    /// Size of one linked object, bytes.
    pub object_bytes: u32,
    /// Probability that a foreground-allocated object dies at each GC it sees. (0, 1].
    pub fg_death_per_gc: f64,
    /// Probability that a background-allocated object dies at each GC it sees. (0, 1].
    pub bg_death_per_gc: f64,
}

impl Default for LinkedParams {
    fn default() -> Self {
        Self {
            share: 0.0,
            object_bytes: 112,
            fg_death_per_gc: 0.05,
            bg_death_per_gc: 0.5,
        }
    }
}

/// GCs an object survives when it dies with probability `p` at each (geometric; `u` uniform in
/// (0, 1]).
pub fn lifetime_gcs(p: f64, u: f64) -> u64 {
    if p >= 1.0 {
        return 0;
    }
    let k = (u.ln() / (1.0 - p).ln()).floor();
    if k.is_finite() && k >= 0.0 {
        (k as u64).min(MAX_LIFETIME_GCS)
    } else {
        MAX_LIFETIME_GCS
    }
}

/// One heap's linked objects: holders, free slots and the live objects by death time.
#[derive(Debug, Default)]
pub struct Linked {
    holders: Vec<ObjId>,
    free: Vec<(u32, u32)>,
    /// (GC count at which the object is unlinked, holder, slot).
    live: BinaryHeap<Reverse<(u64, u32, u32)>>,
    carry: f64,
    class: Option<(ClassId, ClassId)>,
    /// The last [`RECENT`] objects linked, oldest first: (holder, slot, object, GCs of the heap
    /// when it was linked).
    recent: std::collections::VecDeque<(u32, u32, ObjId, u64)>,
    /// The objects of `recent` linked since the last GC when the app last left the foreground
    /// (its foreground-young objects, Fleet §4.2: allocated since the last GC).
    young: Vec<(u32, u32, ObjId)>,
    /// Linked objects allocated so far.
    pub allocated: u64,
    /// Linked objects unlinked so far.
    pub unlinked: u64,
}

impl Linked {
    /// The holder arrays, in allocation order.
    pub fn holders(&self) -> &[ObjId] {
        &self.holders
    }

    /// Objects currently linked.
    pub fn live(&self) -> usize {
        self.live.len()
    }

    /// The app left the foreground after `gcs` GCs: remember the objects linked since the last.
    pub fn mark_switch(&mut self, gcs: u64) {
        self.young.clear();
        self.young.extend(
            self.recent
                .iter()
                .filter(|r| r.3 == gcs)
                .map(|&(h, s, o, _)| (h, s, o)),
        );
    }

    /// The objects linked since the last GC before the app left the foreground, still linked, oldest
    /// first (slots reused since are skipped).
    pub fn young_at_switch(&self, heap: &crate::heap::Heap) -> impl Iterator<Item = ObjId> + '_ {
        let holders = &self.holders;
        let refs: Vec<ObjId> = self
            .young
            .iter()
            .filter(|&&(h, s, o)| heap.refs_of(holders[h as usize])[s as usize] == o)
            .map(|&(_, _, o)| o)
            .collect();
        refs.into_iter()
    }

    /// Unlink every object whose lifetime is over, then allocate and link `bytes` worth of new
    /// objects (fractions carry over) on the main thread at `now`.
    #[allow(clippy::too_many_arguments)]
    pub fn step(
        &mut self,
        p: &LinkedParams,
        rt: &mut Runtime<dyn RuntimeHooks>,
        rng: &mut SimRng,
        now: Nanos,
        bytes: f64,
        backing: &mut dyn PageBacking,
        ledger: &mut CpuLedger,
    ) -> Result<StepCost, HeapError> {
        let mut cost = StepCost::default();
        let gcs = rt.history.len() as u64;
        while let Some(&Reverse((death, h, s))) = self.live.peek() {
            if death > gcs {
                break;
            }
            self.live.pop();
            let t = now + cost.main_stall.ns;
            cost.main_stall
                .add(rt.write_ref(t, self.holders[h as usize], s, NULL, backing));
            self.free.push((h, s));
            self.unlinked += 1;
        }
        let (holder_class, obj_class) = *self.class.get_or_insert_with(|| {
            (
                rt.heap.class_named("java.lang.Object[]", ClassKind::ObjectArray),
                rt.heap.class_named("app.LinkedObject", ClassKind::Instance),
            )
        });
        self.carry += bytes;
        let size = p.object_bytes.max(1);
        while self.carry >= size as f64 {
            self.carry -= size as f64;
            if self.free.is_empty() {
                // A chain root → link → link → holder, each linked as soon as it exists (so a
                // GC its successor's allocation triggers keeps it).
                let mut prev = NULL;
                let mut hid = NULL;
                for k in 0..=HOLDER_DEPTH {
                    let n = if k == HOLDER_DEPTH { HOLDER_SLOTS } else { 1 };
                    let t = now + cost.main_stall.ns;
                    let (id, c) = rt.alloc(t, holder_class, ARRAY_HEADER + 4 * n, n, backing, ledger)?;
                    cost.merge(c);
                    if prev == NULL {
                        rt.heap.add_root(id);
                    } else {
                        let t = now + cost.main_stall.ns;
                        cost.main_stall.add(rt.write_ref(t, prev, 0, id, backing));
                    }
                    prev = id;
                    hid = id;
                }
                let h = self.holders.len() as u32;
                self.holders.push(hid);
                self.free.extend((0..HOLDER_SLOTS).rev().map(|s| (h, s)));
            }
            let t = now + cost.main_stall.ns;
            let (id, c) = rt.alloc(t, obj_class, size, 0, backing, ledger)?;
            cost.merge(c);
            // A random free slot: stores spread over the holders' cards as a real app's do.
            let k = rng.gen_range(0..self.free.len());
            let (h, s) = self.free.swap_remove(k);
            let t = now + cost.main_stall.ns;
            cost.main_stall
                .add(rt.write_ref(t, self.holders[h as usize], s, id, backing));
            let death_p = if rt.heap.foreground {
                p.fg_death_per_gc
            } else {
                p.bg_death_per_gc
            };
            let life = lifetime_gcs(death_p, 1.0 - rng.gen::<f64>());
            // Allocated after GC number `gcs_now`; alive through `life` more GCs.
            let gcs_now = rt.history.len() as u64;
            self.live.push(Reverse((gcs_now + life, h, s)));
            if self.recent.len() == RECENT {
                self.recent.pop_front();
            }
            self.recent.push_back((h, s, id, gcs_now));
            self.allocated += 1;
        }
        Ok(cost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometric_lifetimes_match_fleet_fig5_reading() {
        let mut rng = <SimRng as rand::SeedableRng>::seed_from_u64(7);
        let n = 20_000;
        let frac = |p: f64, k: u64, rng: &mut SimRng| {
            (0..n)
                .filter(|_| lifetime_gcs(p, 1.0 - rng.gen::<f64>()) >= k)
                .count() as f64
                / n as f64
        };
        let d = LinkedParams::default();
        let fgo15 = frac(d.fg_death_per_gc, 15, &mut rng);
        let bgo3 = frac(d.bg_death_per_gc, 3, &mut rng);
        assert!((0.42..0.50).contains(&fgo15), "FGO surviving 15 GCs: {fgo15}");
        assert!((0.10..0.15).contains(&bgo3), "BGO surviving 3 GCs: {bgo3}");
        assert_eq!(lifetime_gcs(1.0, 0.3), 0);
        assert_eq!(lifetime_gcs(1e-300, 0.5), MAX_LIFETIME_GCS);
    }
}
