//! A heap recipe: the objects of an app's long-lived Java heap (class, size, reference slots,
//! roots) in allocation order, independent of any running heap.
//!
//! Three sources make one: the generators ([`crate::gen::GraphSpec`], the papers' synthetic apps
//! [`crate::gen::SyntheticSpec`]) and HPROF dumps ([`crate::hprof::Dump`]). Two consumers use it:
//! [`Blueprint::instantiate_quiet`] loads it into a [`Heap`] at once without touching pages (the
//! benchmarks, `inspect`), and [`crate::app::JavaApp`] allocates it object by object through the
//! runtime as the app builds its footprint (so GCs trigger, pages are touched and faults happen as
//! in the app).
//!
//! The blueprint also defines the app's *logical* heap layout: object `i` occupies bytes
//! `[start(i), start(i+1))` of a contiguous logical space, in allocation order. The app access
//! model speaks in logical Java-heap pages; [`Blueprint::objects_in`] turns a logical byte range
//! into the objects (and the byte ranges inside them) it covers, and the runtime maps those to the
//! pages where the objects *currently* are. Moving objects therefore moves the accesses.
//!
//! Objects are ordered so every object comes after at least one object that references it (or is a
//! root): depth-first from the roots, as the collector copies them ([`copy_order`]), so allocating
//! them in order and linking each as it is allocated keeps every allocated object reachable.

use crate::backing::PageBacking;
use crate::heap::{ClassId, ClassInfo, ClassKind, Heap, HeapError, ObjId, NULL, OBJECT_ALIGNMENT};
use crate::prefix::{Column, Prefix, PrefixBuilder};
use engine::Nanos;

/// How many objects ahead [`Blueprint::build`] fetches an object's class, size and slot offsets
/// ([`MID_AHEAD`]: its slots, once their offsets are in the cache; [`NEAR_AHEAD`]: its targets'
/// positions, once its slots are).
const FAR_AHEAD: usize = 18;
const MID_AHEAD: usize = 11;
const NEAR_AHEAD: usize = 5;

/// Most bytes a blueprint's objects may total (its offsets are 32-bit counts of 8-byte units).
pub const MAX_TOTAL_BYTES: u64 = u32::MAX as u64 * OBJECT_ALIGNMENT as u64;

/// The recipe of a heap (see module docs). Object indices are allocation order.
///
/// The per-object columns are stored compactly ([`crate::prefix`]: offsets as 8- or 16-bit
/// differences within blocks, class ids in the narrowest width; reference slots as varints of
/// the difference from their source, [`Slots`]): blueprints were a quarter of the default day's
/// peak memory (issue 14). Read them through the accessors.
#[derive(Debug, Clone, Default)]
pub struct Blueprint {
    pub classes: Vec<ClassInfo>,
    /// Class of each object (index into `classes`).
    class: Column,
    /// Reference slots (CSR) up to each object's last non-null one, encoded ([`Slots`]):
    /// object `i`'s are the bytes `refs[ref_start[i]..ref_start[i+1]]`, each slot a blueprint
    /// index or [`NULL`]; its remaining slots, up to [`Self::nslots`], are null. Generated object
    /// arrays are mostly empty slots, which were 40% of a blueprint's bytes (issue 14).
    ref_start: Prefix,
    refs: Vec<u8>,
    /// Running total of the objects' reference slots (null ones included; `n + 1` entries):
    /// object `i` has `slot_total[i+1] - slot_total[i]`.
    slot_total: Prefix,
    /// Root objects (blueprint indices, distinct).
    pub roots: Vec<u32>,
    /// Logical offset of each object in [`OBJECT_ALIGNMENT`] units (`n + 1` entries; the last is
    /// the total). Sizes are differences of consecutive starts.
    start: Prefix,
    /// Whether each object is a root (bitset, for the allocator).
    is_root: Vec<u64>,
}

impl Blueprint {
    /// Build from per-object class/size/slots in the given order (`order[k]` = source index of
    /// the `k`-th object to allocate); references are source indices.
    pub fn from_parts(
        classes: Vec<ClassInfo>,
        class: &[ClassId],
        size: &[u32],
        ref_start: &[u32],
        refs: &[u32],
        roots: &[u32],
        order: &[u32],
    ) -> Self {
        let slots_of = |o: usize| {
            let slots = &refs[ref_start[o] as usize..ref_start[o + 1] as usize];
            let used = slots.iter().rposition(|&t| t != NULL).map_or(0, |k| k + 1);
            (slots.len() as u64, &slots[..used])
        };
        Self::build(classes, class, size, roots, order, slots_of, |_| (), |_| &[])
    }

    /// [`Self::from_parts`] with each object's slots given as their count `nslots[o]` and the
    /// leading ones `used[used_start[o]..used_start[o + 1]]` (the rest are null): the same
    /// blueprint as `from_parts` with those slots padded with nulls, without building the padding
    /// (generated object arrays are mostly empty slots).
    #[allow(clippy::too_many_arguments)]
    pub fn from_used_parts(
        classes: Vec<ClassInfo>,
        class: &[ClassId],
        size: &[u32],
        nslots: &[u32],
        used_start: &[u32],
        used: &[u32],
        roots: &[u32],
        order: &[u32],
    ) -> Self {
        let stored = |o: usize| &used[used_start[o] as usize..used_start[o + 1] as usize];
        let slots_of = |o: usize| {
            let slots = stored(o);
            debug_assert!(slots.len() <= nslots[o] as usize);
            // Trailing nulls are not stored (as `from_parts` trims them).
            let n = slots.iter().rposition(|&t| t != NULL).map_or(0, |k| k + 1);
            (nslots[o] as u64, &slots[..n])
        };
        let fetch = |o: usize| {
            crate::gc::prefetch(nslots, o);
            crate::gc::prefetch(used_start, o);
        };
        Self::build(classes, class, size, roots, order, slots_of, fetch, stored)
    }

    /// The blueprint of the objects in `order`, `slots_of(o)` giving source object `o`'s number
    /// of slots and its slots up to its last non-null one. A few objects ahead of `o`'s turn,
    /// `fetch(o)` may prefetch where its slots are stored (without reading anything), and later
    /// `peek(o)` may return its slots (or none) so they and then their targets' positions are
    /// fetched too: `order` is a depth-first permutation, so every source read is a cache miss
    /// otherwise (no effect on results).
    #[allow(clippy::too_many_arguments)]
    fn build<'a>(
        classes: Vec<ClassInfo>,
        class: &[ClassId],
        size: &[u32],
        roots: &[u32],
        order: &[u32],
        slots_of: impl Fn(usize) -> (u64, &'a [u32]),
        fetch: impl Fn(usize),
        peek: impl Fn(usize) -> &'a [u32],
    ) -> Self {
        let n = order.len();
        let mut pos = vec![NULL; class.len()];
        for (k, &o) in order.iter().enumerate() {
            pos[o as usize] = k as u32;
        }
        let mut class_of = Vec::with_capacity(n);
        let mut starts = PrefixBuilder::with_capacity(n + 1);
        let mut ref_starts = PrefixBuilder::with_capacity(n + 1);
        let mut slot_total = PrefixBuilder::with_capacity(n + 1);
        let mut bp_refs = Vec::new();
        let (mut off, mut nslots) = (0u64, 0u64);
        for (src, &o) in order.iter().enumerate() {
            if let Some(&a) = order.get(src + FAR_AHEAD) {
                crate::gc::prefetch(class, a as usize);
                crate::gc::prefetch(size, a as usize);
                fetch(a as usize);
            }
            if let Some(&a) = order.get(src + MID_AHEAD) {
                crate::gc::prefetch(peek(a as usize), 0);
            }
            if let Some(&a) = order.get(src + NEAR_AHEAD) {
                for &t in peek(a as usize) {
                    crate::gc::prefetch(&pos, t as usize);
                }
            }
            let (src, o) = (src as u32, o as usize);
            class_of.push(class[o]);
            starts.push(off);
            off += (Heap::aligned(size[o]) / OBJECT_ALIGNMENT) as u64;
            assert!(
                off <= u32::MAX as u64,
                "a blueprint's objects total at most MAX_TOTAL_BYTES (HPROF parsing checks)"
            );
            ref_starts.push(bp_refs.len() as u64);
            slot_total.push(nslots);
            let (count, slots) = slots_of(o);
            nslots += count;
            for &t in slots {
                encode_slot(&mut bp_refs, src, if t == NULL { NULL } else { pos[t as usize] });
            }
        }
        starts.push(off);
        ref_starts.push(bp_refs.len() as u64);
        slot_total.push(nslots);
        let mut bp = Blueprint {
            classes,
            class: Column::new(&class_of),
            ref_start: ref_starts.finish(),
            refs: bp_refs,
            slot_total: slot_total.finish(),
            start: starts.finish(),
            ..Default::default()
        };
        let mut roots: Vec<u32> = roots
            .iter()
            .map(|&r| pos[r as usize])
            .filter(|&r| r != NULL)
            .collect();
        roots.sort_unstable();
        roots.dedup();
        bp.is_root = vec![0; n.div_ceil(64)];
        for &r in &roots {
            bp.is_root[r as usize / 64] |= 1 << (r % 64);
        }
        bp.roots = roots;
        bp
    }

    pub fn len(&self) -> usize {
        self.class.len()
    }

    /// Class of object `i` (index into [`Self::classes`]).
    #[inline]
    pub fn class(&self, i: usize) -> ClassId {
        self.class.get(i)
    }

    pub fn is_empty(&self) -> bool {
        self.class.is_empty()
    }

    /// Total bytes of all objects.
    pub fn total_bytes(&self) -> u64 {
        self.start.len().checked_sub(1).map_or(0, |i| self.start(i))
    }

    #[inline]
    fn bytes(units: u64) -> u64 {
        units * OBJECT_ALIGNMENT as u64
    }

    /// Logical byte offset of object `i` (`i == len()`: the total).
    #[inline]
    pub fn start(&self, i: usize) -> u64 {
        Self::bytes(self.start.get(i))
    }

    /// Hint the CPU to load what [`Self::size`] and [`Self::class`] of object `i` read, in two
    /// steps some work apart: `near` false fetches the size's block, `near` true the entries (it
    /// reads the block). No effect on results; `i` must be an object.
    #[inline]
    pub fn prefetch_object(&self, i: usize, near: bool) {
        if near {
            self.start.prefetch_entry(i);
            self.start.prefetch_entry(i + 1);
        } else {
            self.start.prefetch_block(i);
            self.start.prefetch_block(i + 1);
            self.class.prefetch(i);
        }
    }

    /// Size of object `i` in bytes (aligned as [`Heap::aligned`]).
    #[inline]
    pub fn size(&self, i: usize) -> u32 {
        ((self.start.get(i + 1) - self.start.get(i)) * OBJECT_ALIGNMENT as u64) as u32
    }

    /// Whether object `i` is a root.
    #[inline]
    pub fn is_root(&self, i: usize) -> bool {
        self.is_root[i / 64] >> (i % 64) & 1 != 0
    }

    /// Number of reference slots of object `i`.
    #[inline]
    pub fn nslots(&self, i: usize) -> u32 {
        (self.slot_total.get(i + 1) - self.slot_total.get(i)) as u32
    }

    /// Reference slots of object `i` up to its last non-null one (the rest are null).
    #[inline]
    pub fn slots(&self, i: u32) -> Slots<'_> {
        let k = i as usize;
        Slots {
            bytes: &self.refs[self.ref_start.get(k) as usize..self.ref_start.get(k + 1) as usize],
            src: i,
        }
    }

    /// Number of reference slots of object `i` up to its last non-null one (stored slots).
    #[inline]
    pub fn nused(&self, i: u32) -> u32 {
        self.slots(i).len() as u32
    }

    /// Number of objects whose logical start is below `bytes` (the objects to allocate to build
    /// that many bytes of the footprint).
    pub fn objects_below(&self, bytes: u64) -> usize {
        self.start.partition_point(self.len(), |s| Self::bytes(s) < bytes)
    }

    /// Objects overlapping logical bytes `[lo, hi)`, each with the byte range inside the object
    /// `(object, offset, len)`, appended to `out`.
    pub fn objects_in(&self, lo: u64, hi: u64, out: &mut Vec<(u32, u32, u32)>) {
        self.objects_in_from(self.object_at(lo), lo, hi, out)
    }

    /// Index of the last object starting at or before logical byte `b` (0 if none).
    pub fn object_at(&self, b: u64) -> usize {
        self.start
            .partition_point(self.len(), |s| Self::bytes(s) <= b)
            .saturating_sub(1)
    }

    /// [`Self::objects_in`] with the search started at object `first` (at or before the object
    /// holding `lo`, e.g. from [`Self::object_at`]).
    pub fn objects_in_from(&self, first: usize, lo: u64, hi: u64, out: &mut Vec<(u32, u32, u32)>) {
        if hi <= lo || self.is_empty() {
            return;
        }
        let mut i = first;
        // Each object's end is the next one's start: one lookup per object.
        let mut s = self.start(i.min(self.len()));
        while i < self.len() && s < hi {
            let e = self.start(i + 1);
            let a = lo.max(s);
            let b = hi.min(e);
            if b > a {
                out.push((i as u32, (a - s) as u32, (b - a) as u32));
            }
            s = e;
            i += 1;
        }
    }

    /// Register the blueprint's classes in `heap` (by name); returns the heap class of each.
    pub fn register_classes(&self, heap: &mut Heap) -> Vec<ClassId> {
        self.classes
            .iter()
            .map(|c| heap.class_named(&c.name, c.kind))
            .collect()
    }

    /// Load every object into `heap` at once without touching pages or triggering GCs; returns the
    /// heap id of each blueprint object.
    pub fn instantiate_quiet<B: PageBacking + ?Sized>(
        &self,
        heap: &mut Heap,
        now: Nanos,
        backing: &mut B,
    ) -> Result<Vec<ObjId>, HeapError> {
        let hclass = self.register_classes(heap);
        let mut ids = Vec::with_capacity(self.len());
        for i in 0..self.len() {
            ids.push(heap.alloc_quiet(
                now,
                hclass[self.class(i) as usize],
                self.size(i),
                self.nslots(i),
                self.nused(i as u32),
                backing,
            )?);
        }
        for i in 0..self.len() {
            for (k, t) in self.slots(i as u32).enumerate() {
                if t != NULL {
                    heap.set_ref_raw(ids[i], k as u32, ids[t as usize]);
                }
            }
        }
        for &r in &self.roots {
            heap.add_root(ids[r as usize]);
        }
        Ok(ids)
    }
}

/// A blueprint object's stored reference slots, decoded in order ([`Blueprint::slots`]).
///
/// Each slot is a LEB128 varint (7 bits a byte, high bit set on all but the last byte) of 0 for
/// [`NULL`], else 1 + the zigzag-encoded difference between the target's index and the source's:
/// objects are in depth-first copy order, so most targets sit near their source and take one or
/// two bytes rather than four (blueprint reference slots were 7% of the default day's peak
/// memory; issue 14).
#[derive(Debug, Clone)]
pub struct Slots<'a> {
    bytes: &'a [u8],
    src: u32,
}

impl Iterator for Slots<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        let (&b0, rest) = self.bytes.split_first()?;
        self.bytes = rest;
        let mut v = (b0 & 0x7f) as u64;
        if b0 & 0x80 != 0 {
            let mut shift = 7;
            loop {
                let (&b, rest) = self.bytes.split_first().expect("a slot's last byte");
                self.bytes = rest;
                v |= ((b & 0x7f) as u64) << shift;
                shift += 7;
                if b & 0x80 == 0 {
                    break;
                }
            }
        }
        if v == 0 {
            return Some(NULL);
        }
        let z = v - 1;
        let d = (z >> 1) as i64 ^ -((z & 1) as i64);
        Some((self.src as i64 + d) as u32)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.bytes.iter().filter(|&&b| b & 0x80 == 0).count();
        (n, Some(n))
    }
}

impl ExactSizeIterator for Slots<'_> {}

/// Append slot target `t` (a blueprint index or [`NULL`]) of object `src` in the [`Slots`]
/// encoding.
fn encode_slot(out: &mut Vec<u8>, src: u32, t: u32) {
    let mut v = if t == NULL {
        0
    } else {
        let d = t as i64 - src as i64;
        ((d << 1) ^ (d >> 63)) as u64 + 1
    };
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The *late links* of a blueprint's objects, found while they are allocated in order: the slots
/// of earlier objects that point to a later one can only be stored once it exists. Object `s`'s
/// forward slots are queued when it is allocated ([`Self::allocated`]) and handed out when their
/// target is ([`Self::next_for`]), by source then slot. Only the slots pointing past the built
/// prefix are held: a per-blueprint reverse index of every forward slot was a sixth of the
/// blueprints' memory (issue 14).
///
/// The queue is a radix heap: targets are asked for in increasing order and every queued target
/// is past the last one asked for, so bucket `b` holds the slots whose target first differs from
/// that last target at bit `b - 1` (bucket 0: equal). Slots of one target always share a bucket
/// and are moved in order, so they come out in the order queued, which is (source, slot) order.
/// A binary heap here was 5% of the default day's CPU (issue 14).
#[derive(Debug, Clone)]
pub struct LateLinks {
    /// The last target asked for.
    last: u32,
    /// `(target, source, slot)` by bucket, each in the order queued.
    buckets: [Vec<(u32, u32, u32)>; 33],
    /// Slots of bucket 0 already handed out.
    head: usize,
}

impl Default for LateLinks {
    fn default() -> Self {
        Self {
            last: 0,
            buckets: std::array::from_fn(|_| Vec::new()),
            head: 0,
        }
    }
}

impl LateLinks {
    #[inline]
    fn bucket(&self, t: u32) -> usize {
        (32 - (t ^ self.last).leading_zeros()) as usize
    }

    /// Object `s` was allocated: queue its slots pointing to later objects.
    pub fn allocated(&mut self, bp: &Blueprint, s: u32) {
        for (k, t) in bp.slots(s).enumerate() {
            if t != NULL && t > s {
                self.queue(t, s, k as u32);
            }
        }
    }

    /// Queue slot `k` of object `s`, pointing to the later object `t` ([`Self::allocated`] for
    /// one slot; an allocated object's forward slots must be queued in slot order).
    #[inline]
    pub fn queue(&mut self, t: u32, s: u32, k: u32) {
        debug_assert!(
            t > s && t >= self.last,
            "targets are queued past the last one asked for"
        );
        let b = self.bucket(t);
        self.buckets[b].push((t, s, k));
    }

    /// The next queued slot `(source, slot)` pointing to `t`, once every object before `t` was
    /// [`Self::allocated`] (then the queue holds all of them). `t` never decreases between calls.
    pub fn next_for(&mut self, t: u32) -> Option<(u32, u32)> {
        if t != self.last {
            debug_assert!(
                t > self.last && self.head == self.buckets[0].len(),
                "targets are asked for in increasing order, each drained"
            );
            self.buckets[0].clear();
            self.head = 0;
            // Slots in buckets above `h` keep their bucket; those below `h` would target
            // objects before `t` (none are left): re-bucket `h` against `t`.
            let h = self.bucket(t);
            self.last = t;
            let mut moved = std::mem::take(&mut self.buckets[h]);
            for &x in &moved {
                let b = self.bucket(x.0);
                self.buckets[b].push(x);
            }
            // All moved below `h`: keep the allocation for later slots of this bucket.
            moved.clear();
            self.buckets[h] = moved;
        }
        let &(_, s, k) = self.buckets[0].get(self.head)?;
        self.head += 1;
        Some((s, k))
    }
}

/// The order a depth-first collector copies objects in: the roots first, in the given order; then,
/// popping a LIFO stack, each object's not-yet-seen referents in slot order (each placed when first
/// seen). Objects unreachable from `starts` come last, in index order. `slots(o)` lists `o`'s
/// references (`NULL` allowed).
pub fn copy_order<'a>(n: usize, starts: &[u32], slots: impl Fn(u32) -> &'a [u32]) -> Vec<u32> {
    copy_order_fetching(n, starts, slots, |_| ())
}

/// [`copy_order`] calling `fetch(o)` when `o` is pushed on the stack, long before it is popped
/// (its siblings' subtrees come first), to prefetch where its slots are stored without reading
/// anything (no effect on the order: depth-first over a random graph, every read is a cache
/// miss otherwise).
pub fn copy_order_fetching<'a>(
    n: usize,
    starts: &[u32],
    slots: impl Fn(u32) -> &'a [u32],
    fetch: impl Fn(u32),
) -> Vec<u32> {
    let mut seen = vec![false; n];
    let mut out = Vec::with_capacity(n);
    let mut stack: Vec<u32> = Vec::new();
    for &r in starts {
        if !seen[r as usize] {
            seen[r as usize] = true;
            out.push(r);
            stack.push(r);
        }
    }
    while let Some(o) = stack.pop() {
        let before = stack.len();
        for &c in slots(o) {
            if c != NULL && !seen[c as usize] {
                seen[c as usize] = true;
                out.push(c);
                stack.push(c);
                fetch(c);
            }
        }
        // The next object popped, if `o` pushed none: its slots (their offsets were fetched
        // when it was pushed).
        if stack.len() == before {
            if let Some(&t) = stack.last() {
                crate::gc::prefetch(slots(t), 0);
            }
        }
    }
    for (o, s) in seen.iter().enumerate() {
        if !s {
            out.push(o as u32);
        }
    }
    out
}

/// Class info helper.
pub fn class(name: &str, kind: ClassKind) -> ClassInfo {
    ClassInfo {
        name: name.to_string(),
        kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::GraphSpec;
    use engine::SimRng;
    use rand::SeedableRng;

    /// Slots round-trip through the varint encoding whatever the distance and direction to the
    /// target (one byte near the source, up to five across the whole index range), with nulls.
    #[test]
    fn slots_round_trip_near_far_and_null() {
        for src in [0u32, 1, 63, 64, 1000, 1 << 20, u32::MAX - 1] {
            let targets: Vec<u32> = [
                NULL,
                src,
                src.wrapping_add(1),
                src.wrapping_sub(1),
                src.saturating_add(64),
                src.saturating_sub(65),
                0,
                u32::MAX - 1,
                src / 2,
                NULL,
            ]
            .to_vec();
            let mut bytes = Vec::new();
            for &t in &targets {
                encode_slot(&mut bytes, src, t);
            }
            let slots = Slots { bytes: &bytes, src };
            assert_eq!(slots.len(), targets.len(), "source {src}");
            assert_eq!(slots.collect::<Vec<_>>(), targets, "source {src}");
        }
        // Near targets and nulls take one byte each.
        let mut bytes = Vec::new();
        for t in [NULL, 500, 531, 469] {
            encode_slot(&mut bytes, 500, t);
        }
        assert_eq!(bytes.len(), 4);
    }

    /// `from_used_parts` (slots given up to their stored prefix, capacity apart) builds the same
    /// blueprint as `from_parts` with those slots padded with nulls, in a non-identity order with
    /// roots, empty objects, trailing and inner nulls.
    #[test]
    fn from_used_parts_matches_padded_from_parts() {
        let classes = vec![
            class("a", ClassKind::Instance),
            class("b", ClassKind::ObjectArray),
        ];
        let class_of: Vec<ClassId> = vec![0, 1, 1, 0, 1, 0];
        let size = vec![24, 64, 40, 16, 1000, 8];
        let nslots = vec![3u32, 12, 6, 0, 200, 1];
        // Stored slots: a prefix of each object's slots (inner and trailing nulls allowed).
        let used: Vec<Vec<u32>> = vec![
            vec![1, NULL, 2],
            vec![0, 5, 4],
            vec![NULL, 3, NULL],
            vec![],
            vec![2, 1],
            vec![NULL],
        ];
        let mut used_start = vec![0u32];
        let mut flat = Vec::new();
        let mut full_start = vec![0u32];
        let mut full = Vec::new();
        for (o, u) in used.iter().enumerate() {
            flat.extend_from_slice(u);
            used_start.push(flat.len() as u32);
            full.extend_from_slice(u);
            full.extend(std::iter::repeat_n(NULL, nslots[o] as usize - u.len()));
            full_start.push(full.len() as u32);
        }
        let roots = [4u32, 0];
        let order = [4u32, 2, 1, 0, 5, 3];
        let a = Blueprint::from_parts(
            classes.clone(),
            &class_of,
            &size,
            &full_start,
            &full,
            &roots,
            &order,
        );
        let b = Blueprint::from_used_parts(
            classes,
            &class_of,
            &size,
            &nslots,
            &used_start,
            &flat,
            &roots,
            &order,
        );
        assert_eq!(a.len(), b.len());
        assert_eq!(a.roots, b.roots);
        assert_eq!(a.total_bytes(), b.total_bytes());
        for i in 0..a.len() {
            assert_eq!(a.class(i), b.class(i), "object {i}");
            assert_eq!(a.size(i), b.size(i), "object {i}");
            assert_eq!(a.nslots(i), b.nslots(i), "object {i}");
            assert_eq!(a.is_root(i), b.is_root(i), "object {i}");
            let (sa, sb): (Vec<u32>, Vec<u32>) = (a.slots(i as u32).collect(), b.slots(i as u32).collect());
            assert_eq!(sa, sb, "object {i}");
        }
        assert_eq!(a.refs, b.refs);
    }

    /// The radix queue hands out exactly the earlier slots pointing to each object, by source then
    /// slot, on a generated heap (many late links, targets spread over all bit widths).
    #[test]
    fn late_links_come_out_by_target_then_source_then_slot() {
        let spec = GraphSpec {
            bytes: 2 << 20,
            ..Default::default()
        };
        let bp = spec.blueprint(&mut SimRng::seed_from_u64(7));
        let mut want = Vec::new();
        for s in 0..bp.len() as u32 {
            for (k, t) in bp.slots(s).enumerate() {
                if t != NULL && t > s {
                    want.push((t, s, k as u32));
                }
            }
        }
        want.sort_unstable();
        assert!(want.len() > 1000, "{} late links", want.len());
        let mut late = LateLinks::default();
        let mut got = Vec::new();
        for i in 0..bp.len() as u32 {
            late.allocated(&bp, i);
            while let Some((s, k)) = late.next_for(i) {
                got.push((i, s, k));
            }
        }
        assert_eq!(got, want);
    }
}
