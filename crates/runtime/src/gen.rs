//! Heap generators: object-size distributions, reference graphs with a depth-from-roots structure,
//! and the papers' synthetic apps.
//!
//! **Size distributions** ([`SizeDist`]) are piecewise log-uniform over byte buckets with per-bucket
//! object-count probabilities. The papers publish their distributions only as figures:
//! - [`SizeDist::commercial_apps`]: Fleet Fig. 7 shows that, for popular commercial apps, the large
//!   majority of objects are far smaller than a 4 KiB page and the apps' CDFs look alike. Since
//!   Android 8 bitmap pixels live in the native heap (developer.android.com, "Managing bitmap
//!   memory"), so few large arrays remain in the Java heap: most bytes are strings and small
//!   arrays (Perfetto's Java heap-dump docs: `java.lang.String`, `long[]`, `int[]`, `Object[]` top
//!   the bytes by class). Fleet's artifact counts 837,001 objects visited per background GC for
//!   Facebook and 1,480,438 for TikTok (Fig. 12) whose Java heaps are 17.6% (Facebook, Fig. 13n)
//!   of a ~250–350 MB footprint, i.e. roughly 50–120 B per object. Our buckets (estimate shaped
//!   after the figure, mean ≈ 110 B, median ≈ 45 B): 16–32 B 34.5%, 32–64 B 35.5%, 64–128 B 18%,
//!   128–256 B 8%, 256 B–1 KiB 3%, 1–4 KiB 0.5%, 4–64 KiB 0.08%, 64 KiB–1 MiB 0.003% (objects of
//!   4 KiB and more still hold ~25% of the bytes).
//! - [`SizeDist::bimodal_by_bytes`]: Marvin Fig. 1 plots the CDF of object sizes and of the heap share of
//!   objects of that size or smaller; the text says most objects are not page sized and describes
//!   the heap as bimodal (many small objects, most bytes in large arrays). Our buckets put 98.5% of
//!   objects below 1 KiB but ~60% of bytes in objects of 4 KiB and more.
//!
//! **Reference graphs** ([`GraphSpec`]): each object gets a BFS depth from a profile of per-depth
//! object fractions (depth 0 = roots); every object at depth `d ≥ 1` has a parent at depth `d−1`
//! (so its shortest distance from the roots is exactly `d`), plus random extra references to
//! objects at depth `≤ d+1` (which keep every object's depth unchanged). By default the extra
//! references go to uniformly random objects at those depths; [`GraphSpec::local_refs`] and
//! [`GraphSpec::shared_refs`] send shares of them to the source's tree neighbours (parent, siblings,
//! children) and to a pool of [`SHARED_POOL`] shared depth-1 objects instead. The default profile makes
//! depth ≤ 1 ("NRO with D = 2" in Fleet's sense) about 10% of the objects, as Fleet §4.2 measured
//! (NRO ≈ 10.4% of the heap). Objects are allocated in the order the collector's trace copies
//! them — the roots, then depth-first from a LIFO mark stack, each object's referents in slot order
//! ([`crate::gc`]) — so the heap starts with the layout a compacting GC leaves; optionally
//! shuffled.
//!
//! **Synthetic apps** ([`SyntheticSpec`]): Fleet §7.1's apps (from the Marvin
//! project) that fill 180 MB with 512 B or 2048 B objects, and Marvin §8.3's apps with a 220 MB
//! heap of 4 KiB arrays (or an even mix by bytes of 4 KiB and 1 MiB arrays) that delete and
//! reallocate 20 MB of arrays every 5 s. Objects hang off `Object[1024]` holder arrays held by
//! roots ([`SyntheticSpec::blueprint`]); an app runs as a [`crate::app::JavaApp`] built from that
//! blueprint, whose churn replaces the arrays. Marvin's apps need more than the 192 MiB
//! growth limit, so they run as `largeHeap` apps (growth limit = heap size, 512 MiB).

use crate::backing::PageBacking;
use crate::blueprint::{class, copy_order_fetching, Blueprint};
use crate::heap::{ClassId, ClassKind, Heap, HeapError, ObjId, ARRAY_HEADER, NULL};
use engine::{Nanos, SimRng, NS_PER_SEC};
use rand::seq::SliceRandom;
use rand::Rng;

/// A piecewise log-uniform size distribution: `(lo, hi, probability)` buckets, sizes in bytes.
#[derive(Debug, Clone)]
pub struct SizeDist {
    pub buckets: Vec<(u32, u32, f64)>,
}

impl SizeDist {
    /// Shaped after Fleet Fig. 7 (see module docs; an estimate read off a figure).
    pub fn commercial_apps() -> Self {
        Self {
            buckets: vec![
                (16, 32, 0.345),
                (32, 64, 0.355),
                (64, 128, 0.18),
                (128, 256, 0.08),
                (256, 1024, 0.03),
                (1024, 4096, 0.005),
                (4096, 65536, 0.0008),
                (65536, 1 << 20, 0.000_03),
            ],
        }
    }

    /// Shaped after Marvin Fig. 1 (bimodal by bytes; see module docs).
    pub fn bimodal_by_bytes() -> Self {
        Self {
            buckets: vec![
                (16, 32, 0.28),
                (32, 64, 0.32),
                (64, 256, 0.27),
                (256, 1024, 0.115),
                (1024, 4096, 0.008),
                (4096, 8192, 0.005),
                (8192, 1 << 20, 0.002),
            ],
        }
    }

    /// A single fixed size.
    pub fn fixed(size: u32) -> Self {
        Self {
            buckets: vec![(size, size, 1.0)],
        }
    }

    pub fn sample(&self, rng: &mut SimRng) -> u32 {
        self.sampler().sample(rng)
    }

    /// [`Self::sample`] with the per-bucket logarithms and the total computed once (a heap
    /// generator draws millions of sizes: issue 14).
    pub fn sampler(&self) -> SizeSampler {
        SizeSampler {
            total: self.buckets.iter().map(|b| b.2).sum(),
            buckets: self
                .buckets
                .iter()
                .map(|&(lo, hi, p)| (lo, hi, p, (lo as f64).ln(), (hi as f64).ln()))
                .collect(),
        }
    }

    /// Mean size (numerical, for sizing heaps).
    pub fn mean(&self) -> f64 {
        let total: f64 = self.buckets.iter().map(|b| b.2).sum();
        self.buckets
            .iter()
            .map(|&(lo, hi, p)| {
                let m = if lo >= hi {
                    lo as f64
                } else {
                    (hi - lo) as f64 / ((hi as f64).ln() - (lo as f64).ln())
                };
                m * p / total
            })
            .sum()
    }
}

/// A [`SizeDist`] ready to sample: `(lo, hi, probability, ln lo, ln hi)` buckets.
#[derive(Debug, Clone)]
pub struct SizeSampler {
    total: f64,
    buckets: Vec<(u32, u32, f64, f64, f64)>,
}

impl SizeSampler {
    pub fn sample(&self, rng: &mut SimRng) -> u32 {
        let mut x = rng.gen::<f64>() * self.total;
        let last = self.buckets.len() - 1;
        for (i, &(lo, hi, p, l, h)) in self.buckets.iter().enumerate() {
            if x < p || i == last {
                if lo >= hi {
                    return lo;
                }
                return ((l + rng.gen::<f64>() * (h - l)).exp() as u32).clamp(lo, hi);
            }
            x -= p;
        }
        unreachable!("size distribution has buckets")
    }
}

/// Size of the pool of shared objects targeted by [`GraphSpec::shared_refs`].
pub const SHARED_POOL: usize = 256;

/// A generated heap's shape.
#[derive(Debug, Clone)]
pub struct GraphSpec {
    /// Total bytes of objects to generate.
    pub bytes: u64,
    pub sizes: SizeDist,
    /// Fraction of objects at each depth (depth 0 = roots); the rest of the objects go to the last
    /// depth. Normalised.
    pub depth_profile: Vec<f64>,
    /// Mean number of extra (non-tree) references per object that has reference fields.
    pub extra_refs_mean: f64,
    /// Fraction of the extra references that stay in the source's own structure: they point to
    /// its tree parent, a sibling or a child (back pointers, sibling links, entries of the same
    /// map), which the depth-first layout places a few objects away.
    pub local_refs: f64,
    /// Fraction of the extra references to a few hundred widely shared objects at depth 1 (class
    /// objects, interned strings, singletons). The rest of the extra references (`1 − local −
    /// shared`) go to a uniformly random object at depth `≤ d+1` anywhere in the heap.
    pub shared_refs: f64,
    /// Objects at least this large are primitive arrays (no references) with probability
    /// `prim_array_prob`, else object arrays.
    pub array_threshold: u32,
    pub prim_array_prob: f64,
    /// Shuffle the allocation order instead of depth-first from the roots.
    pub shuffle: bool,
}

impl Default for GraphSpec {
    fn default() -> Self {
        Self {
            bytes: 64 << 20,
            sizes: SizeDist::commercial_apps(),
            depth_profile: vec![0.01, 0.09, 0.15, 0.2, 0.2, 0.15, 0.1, 0.06, 0.04],
            extra_refs_mean: 1.0,
            local_refs: 0.0,
            shared_refs: 0.0,
            array_threshold: 256,
            prim_array_prob: 0.8,
            shuffle: false,
        }
    }
}

/// Generate a heap (objects, references, roots) into `heap` without touching pages (the result is
/// as if freshly loaded: pages are untouched until used). Returns the allocated ids in allocation
/// order.
pub fn generate<B: PageBacking + ?Sized>(
    heap: &mut Heap,
    spec: &GraphSpec,
    rng: &mut SimRng,
    now: Nanos,
    backing: &mut B,
) -> Result<Vec<ObjId>, HeapError> {
    spec.blueprint(rng).instantiate_quiet(heap, now, backing)
}

impl GraphSpec {
    /// The heap recipe of this spec (see the module docs for the graph and the layout).
    pub fn blueprint(&self, rng: &mut SimRng) -> Blueprint {
        generate_blueprint(self, rng)
    }
}

fn generate_blueprint(spec: &GraphSpec, rng: &mut SimRng) -> Blueprint {
    let (c_inst, c_prim, c_objarr): (ClassId, ClassId, ClassId) = (0, 1, 2);
    let class_table = vec![
        class("gen.Instance", ClassKind::Instance),
        class("byte[]", ClassKind::PrimitiveArray(1)),
        class("java.lang.Object[]", ClassKind::ObjectArray),
    ];
    // 1. Sizes, kinds and slot capacities.
    let mut sizes: Vec<u32> = Vec::new();
    let mut classes: Vec<ClassId> = Vec::new();
    let mut cap: Vec<u32> = Vec::new();
    let mut total = 0u64;
    let sizer = spec.sizes.sampler();
    while total < spec.bytes {
        let s = Heap::aligned(sizer.sample(rng));
        let (c, k) = if s >= spec.array_threshold {
            if rng.gen::<f64>() < spec.prim_array_prob {
                (c_prim, 0)
            } else {
                (c_objarr, (s - ARRAY_HEADER) / 4)
            }
        } else {
            (c_inst, rng.gen_range(0..=((s - 8) / 4).min(6)))
        };
        sizes.push(s);
        classes.push(c);
        cap.push(k);
        total += s as u64;
    }
    let n = sizes.len();
    // 2. Depths.
    let psum: f64 = spec.depth_profile.iter().sum();
    let mut depth = vec![0u8; n];
    let mut levels: Vec<Vec<u32>> = vec![Vec::new(); spec.depth_profile.len().max(1)];
    {
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.shuffle(rng);
        let mut acc = 0.0;
        let mut start = 0usize;
        for (d, p) in spec.depth_profile.iter().enumerate() {
            acc += p / psum;
            let end = if d + 1 == spec.depth_profile.len() {
                n
            } else {
                ((acc * n as f64) as usize).min(n)
            };
            let end = end.max(start + usize::from(d == 0 && start < n));
            for &o in &order[start..end] {
                depth[o as usize] = d as u8;
                levels[d].push(o);
            }
            start = end;
        }
    }
    // Objects that can hold references (parents); give a parent slot if none at a level.
    let mut edges: Vec<(u32, u32)> = Vec::with_capacity(n * 2);
    let mut used = vec![0u32; n];
    for d in 1..levels.len() {
        if levels[d].is_empty() {
            continue;
        }
        let parents: Vec<u32> = levels[d - 1]
            .iter()
            .copied()
            .filter(|&p| cap[p as usize] > 0)
            .collect();
        let parents = if parents.is_empty() {
            levels[d - 1].clone()
        } else {
            parents
        };
        if parents.is_empty() {
            // No level above: these become roots.
            continue;
        }
        for &o in &levels[d] {
            let p = parents[rng.gen_range(0..parents.len())];
            edges.push((p, o));
            used[p as usize] += 1;
        }
    }
    // Tree neighbourhoods and the shared pool, for local and shared extra references.
    let skewed = spec.local_refs > 0.0 || spec.shared_refs > 0.0;
    let (parent, kids_at, kids) = if skewed {
        let mut parent = vec![NULL; n];
        let mut kids_at = vec![0u32; n + 1];
        for &(p, o) in &edges {
            parent[o as usize] = p;
            kids_at[p as usize + 1] += 1;
        }
        for i in 0..n {
            kids_at[i + 1] += kids_at[i];
        }
        let mut fill = kids_at.clone();
        let mut kids = vec![0u32; edges.len()];
        for &(p, o) in &edges {
            kids[fill[p as usize] as usize] = o;
            fill[p as usize] += 1;
        }
        (parent, kids_at, kids)
    } else {
        (Vec::new(), Vec::new(), Vec::new())
    };
    let shared_pool =
        &levels[1.min(levels.len() - 1)][..levels[1.min(levels.len() - 1)].len().min(SHARED_POOL)];
    let children = |o: u32| &kids[kids_at[o as usize] as usize..kids_at[o as usize + 1] as usize];
    // Extra references to depth <= d+1.
    if spec.extra_refs_mean > 0.0 {
        for o in 0..n as u32 {
            if cap[o as usize] == 0 {
                continue;
            }
            let d = depth[o as usize] as usize;
            let mut k = 0;
            // Geometric number of extra refs with the given mean.
            let q = spec.extra_refs_mean / (1.0 + spec.extra_refs_mean);
            while rng.gen::<f64>() < q && k < 8 {
                k += 1;
            }
            for _ in 0..k {
                if skewed {
                    let x = rng.gen::<f64>();
                    let t = if x < spec.local_refs {
                        // Parent, a sibling (another child of the parent) or a child: all at depth
                        // <= d+1.
                        let p = parent[o as usize];
                        let sibs = if p == NULL { &[][..] } else { children(p) };
                        let own = children(o);
                        let m = usize::from(p != NULL) + sibs.len() + own.len();
                        match rng.gen_range(0..m.max(1)) {
                            _ if m == 0 => NULL,
                            0 if p != NULL => p,
                            i => {
                                let i = i - usize::from(p != NULL);
                                if i < sibs.len() {
                                    sibs[i]
                                } else {
                                    own[i - sibs.len()]
                                }
                            }
                        }
                    } else if x < spec.local_refs + spec.shared_refs && !shared_pool.is_empty() {
                        shared_pool[rng.gen_range(0..shared_pool.len())]
                    } else {
                        NULL
                    };
                    if t != NULL {
                        edges.push((o, t));
                        used[o as usize] += 1;
                        continue;
                    }
                }
                let td = rng.gen_range(0..=(d + 1).min(levels.len() - 1));
                if levels[td].is_empty() {
                    continue;
                }
                let t = levels[td][rng.gen_range(0..levels[td].len())];
                edges.push((o, t));
                used[o as usize] += 1;
            }
        }
    }
    // Slot counts; grow sizes of instances whose slots do not fit.
    for o in 0..n {
        let k = cap[o].max(used[o]);
        cap[o] = k;
        let need = if classes[o] == c_inst {
            8 + 4 * k
        } else {
            ARRAY_HEADER + 4 * k
        };
        if sizes[o] < need {
            sizes[o] = Heap::aligned(need);
            if classes[o] == c_prim {
                classes[o] = c_objarr;
            }
        }
    }
    // CSR of edges by source, slot order = sorted target order: bucketed by source, then each
    // source's few targets sorted (the same as sorting all the pairs, in linear time: issue 14).
    let mut ref_start = vec![0u32; n + 1];
    for &(s, _) in &edges {
        ref_start[s as usize + 1] += 1;
    }
    for i in 0..n {
        ref_start[i + 1] += ref_start[i];
    }
    let mut targets = vec![0u32; edges.len()];
    {
        let mut fill = ref_start.clone();
        for &(s, t) in &edges {
            targets[fill[s as usize] as usize] = t;
            fill[s as usize] += 1;
        }
    }
    drop(edges);
    let targets_of = |o: usize| ref_start[o] as usize..ref_start[o + 1] as usize;
    for o in 0..n {
        targets[targets_of(o)].sort_unstable();
    }
    // Roots: depth 0, and objects without a parent (empty level above).
    let mut roots: Vec<u32> = levels[0].clone();
    for o in 0..n {
        if depth[o] > 0 && levels[depth[o] as usize - 1].is_empty() {
            roots.push(o as u32);
        }
    }
    // 3. Allocation order.
    let order: Vec<u32> = if spec.shuffle {
        let mut v: Vec<u32> = (0..n as u32).collect();
        v.shuffle(rng);
        v
    } else {
        // The order the collector copies them in (`gc::collect`).
        copy_order_fetching(
            n,
            &roots,
            |o| &targets[targets_of(o as usize)],
            |o| crate::gc::prefetch(&ref_start, o as usize),
        )
    };
    // Every object gets its slot capacity; slots beyond its edges stay null (not built: generated
    // object arrays are mostly empty slots).
    Blueprint::from_used_parts(
        class_table,
        &classes,
        &sizes,
        &cap,
        &ref_start,
        &targets,
        &roots,
        &order,
    )
}

/// One of the papers' synthetic apps.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntheticSpec {
    pub name: String,
    /// Bytes of data objects to hold.
    pub footprint: u64,
    /// `(object size in bytes, share of the footprint in bytes)`; shares sum to 1.
    pub mix: Vec<(u32, f64)>,
    /// Bytes deleted and reallocated per churn round (0 = none).
    pub churn_bytes: u64,
    pub churn_period: Nanos,
    /// Runs with `android:largeHeap` (growth limit = heap size).
    pub large_heap: bool,
}

impl SyntheticSpec {
    /// Fleet §7.1: fill 180 MB with objects of `size` bytes (512 or 2048), then idle.
    pub fn idle_uniform(size: u32) -> Self {
        Self {
            name: format!("fleet-{size}B"),
            footprint: 180_000_000,
            mix: vec![(size, 1.0)],
            churn_bytes: 0,
            churn_period: 0,
            large_heap: false,
        }
    }

    /// Marvin §8.3: 220 MB of 4 KiB arrays; delete and reallocate 20 MB every 5 s.
    pub fn churning_4k_arrays() -> Self {
        Self {
            name: "marvin-4K".into(),
            footprint: 220_000_000,
            mix: vec![(4096 + ARRAY_HEADER, 1.0)],
            churn_bytes: 20_000_000,
            churn_period: 5 * NS_PER_SEC,
            large_heap: true,
        }
    }

    /// Marvin's artifact (marvin-code `AllocatorActivity`, `ARRAY_SIZE = 4076`): `byte[4076]`, so
    /// an array with its header fits one 4 KiB page.
    pub fn churning_4076_arrays() -> Self {
        Self {
            name: "marvin-4076".into(),
            mix: vec![(4076 + ARRAY_HEADER, 1.0)],
            ..Self::churning_4k_arrays()
        }
    }

    /// The artifact's mix (`MixAllocatorActivity`): `byte[4076]` and 1 MiB arrays, even by bytes.
    pub fn churning_4076_1m_arrays() -> Self {
        Self {
            name: "marvin-4076-1m".into(),
            mix: vec![(4076 + ARRAY_HEADER, 0.5), ((1 << 20) + ARRAY_HEADER, 0.5)],
            ..Self::churning_4k_arrays()
        }
    }

    /// Marvin §8.3: an even mix (by bytes) of 4 KiB and 1 MiB arrays.
    pub fn churning_4k_1m_arrays() -> Self {
        Self {
            name: "marvin-4K-1M".into(),
            mix: vec![(4096 + ARRAY_HEADER, 0.5), ((1 << 20) + ARRAY_HEADER, 0.5)],
            ..Self::churning_4k_arrays()
        }
    }

    /// The app's heap recipe: `Object[1024]` holders (roots), each followed by the arrays it
    /// holds, sizes in `mix` order (the order the app allocates them).
    pub fn blueprint(&self) -> Blueprint {
        let classes = vec![
            class("byte[]", ClassKind::PrimitiveArray(1)),
            class("java.lang.Object[]", ClassKind::ObjectArray),
        ];
        let mut class_of = Vec::new();
        let mut size = Vec::new();
        let mut ref_start = vec![0u32];
        let mut refs = Vec::new();
        let mut roots = Vec::new();
        let mut holder = NULL;
        let mut slot = 0;
        for &(osize, share) in &self.mix {
            let count = ((self.footprint as f64 * share) / osize as f64).round() as u64;
            for _ in 0..count {
                if holder == NULL || slot == HOLDER_SLOTS {
                    holder = class_of.len() as u32;
                    roots.push(holder);
                    class_of.push(1);
                    size.push(ARRAY_HEADER + 4 * HOLDER_SLOTS);
                    refs.extend(std::iter::repeat_n(NULL, HOLDER_SLOTS as usize));
                    ref_start.push(refs.len() as u32);
                    slot = 0;
                }
                let id = class_of.len() as u32;
                refs[(ref_start[holder as usize] + slot) as usize] = id;
                slot += 1;
                class_of.push(0);
                size.push(osize);
                ref_start.push(refs.len() as u32);
            }
        }
        let order: Vec<u32> = (0..class_of.len() as u32).collect();
        Blueprint::from_parts(classes, &class_of, &size, &ref_start, &refs, &roots, &order)
    }

    /// The heap configuration the app runs with on a Pixel-3-class device.
    pub fn heap_config(&self) -> crate::HeapConfig {
        let mut c = crate::HeapConfig::pixel3();
        if self.large_heap {
            c.growth_limit = c.capacity;
        }
        c
    }
}

/// Holder array length (`Object[1024]`).
pub const HOLDER_SLOTS: u32 = 1024;
