//! The page-access model: which pages of an app's page space each phase touches.
//!
//! **Page space.** [`AppLayout`] numbers the app's pages at its steady footprint:
//! `[0, java)` Java heap, `[java, java + native)` native anonymous memory, then the file-backed
//! pages. All sets are offsets (`u32`) into this space. Early in an app's life its footprint is
//! smaller ([`crate::AppProfile::anon_mb_at`]); touching a page not yet allocated is a first
//! touch (an allocation), which is the simulator's business, not this module's.
//!
//! **Runs.** Each region (Java, native, file) is cut into runs of adjacent pages whose lengths
//! are geometric with continuation probability `adjacency` (mean `1 / (1 − adjacency)`), and the
//! runs are shuffled once per app (a seeded "structure"). Every set is a union of runs; a launch
//! set is returned in *access order*: runs in random order, pages ascending inside a run, so the
//! probability that the next access is the next page is `adjacency` (Ariadne Table 3 measures
//! exactly this: P(2 consecutive) 0.61–0.86; geometric runs then give P(4 consecutive) ≈
//! adjacency³, e.g. 0.64 vs the paper's 0.72 for YouTube, 0.23 vs 0.33 for BangDream).
//!
//! **Launch sets** (MemSaver §2.2, §3.4; Ariadne Insight 1). A hot launch of context `c` touches
//! `L = launch_set_fraction × pages` pages: a stable core (a part `S` shared by all contexts —
//! the app's own UI, logo, state — and a part `K_c` specific to the context) plus a varying part
//! of `v = (1 − α) L` pages drawn afresh for each launch from a pool `P` of `k · v` pages. Two
//! launches of one context then overlap by `α + (1 − α) / k` (the core plus the chance overlap of
//! two draws), which is set to `same_context_overlap` (MemSaver: ~75–80%); two contexts overlap
//! by `|S| / L + (1 − α) / k`, set to `cross_context_overlap`. `k` is 4, 3 or 2, the largest for
//! which the cores and the pool fit in the foreground working set (k = 2 needs the least room).
//! A fraction `file_launch_share` of each launch set is file pages; the anonymous rest is split
//! Java : native as in the layout.
//!
//! **File pages touched by launches are clustered.** ART's profile-guided compilation lays out
//! the code a launch needs together (`art/dexlayout/dexlayout.cc` sorts code items into the
//! sections of `LayoutType` in `art/libdexfile/dex/dex_file_layout.h`: hot, startup-only,
//! sometimes-used, used-once, unused), so the file pages of the launch
//! structure (`S`, every `K_c`, `P`) are the first runs of the file region, in shuffled order
//! among themselves, and the rest of the file pages come after them. File read-around
//! (`read_ahead_kb`) then reads neighbours that launches need, instead of reading 32 pages around
//! each scattered 4-page run (8× more flash reads than pages used). Simplified: one hot section
//! for all the app's files; native libraries, which have no such layout, are not told apart.
//!
//! **Foreground working set** = `S ∪ all K_c ∪ P` plus further runs up to
//! `foreground_ws_fraction × pages`, taken so that the set's Java/native/file shares follow the
//! layout. It contains every launch set.
//!
//! **B1 and B2** (MemSaver §3.3). B2, the stable background working set, has
//! `b2_fraction × pages` pages: a share `b1_covers_b2` of them lies in the foreground working set
//! and in *every* context's B1, the rest outside all B1s. B1 of context `c`
//! (`b1_fraction × pages`) is that covered part of B2, then `K_c`, `S`, then other foreground
//! pages — the transition state keeps doing what the foreground did (MemSaver §3.1). Both follow
//! the layout's Java/native/file shares.
//!
//! Deterministic: the structure is a pure function of (profile, layout, seed); launch set
//! `(c, n)` is a pure function of (structure, c, n), independent of the order of calls.

use engine::{splitmix64, SimRng};
use rand::{Rng, SeedableRng};
use serde::Serialize;

use crate::{AppError, AppProfile};

/// The page space of one app at its steady footprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AppLayout {
    /// Java-heap pages: offsets `[0, java_pages)`.
    pub java_pages: u32,
    /// Native anonymous pages: offsets `[java_pages, java_pages + native_pages)`.
    pub native_pages: u32,
    /// File-backed pages: the last `file_pages` offsets.
    pub file_pages: u32,
}

/// A region of the page space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Region {
    /// Java (ART) heap.
    Java,
    /// Native anonymous memory.
    Native,
    /// File-backed pages.
    File,
}

impl AppLayout {
    /// The layout of the profile's steady footprint: anonymous pages split by
    /// `java_heap_share`, then `file_mb` of file pages.
    pub fn from_profile(p: &AppProfile) -> Self {
        let anon = p.anon_pages_steady();
        let java = ((anon as f64) * p.footprint.java_heap_share).round() as u32;
        AppLayout {
            java_pages: java.min(anon),
            native_pages: anon - java.min(anon),
            file_pages: p.file_pages(),
        }
    }

    /// Total pages.
    pub fn total(&self) -> u32 {
        self.java_pages
            .saturating_add(self.native_pages)
            .saturating_add(self.file_pages)
    }

    /// Anonymous (Java + native) pages.
    pub fn anon_pages(&self) -> u32 {
        self.java_pages + self.native_pages
    }

    /// The region an offset belongs to (`None` past the end).
    pub fn region_of(&self, offset: u32) -> Option<Region> {
        if offset < self.java_pages {
            Some(Region::Java)
        } else if offset < self.java_pages + self.native_pages {
            Some(Region::Native)
        } else if offset < self.total() {
            Some(Region::File)
        } else {
            None
        }
    }

    fn bounds(&self) -> [(u32, u32); 3] {
        let j = self.java_pages;
        let n = j + self.native_pages;
        [(0, j), (j, n), (n, n + self.file_pages)]
    }

    fn sizes(&self) -> [u32; 3] {
        [self.java_pages, self.native_pages, self.file_pages]
    }
}

/// Why an access model cannot be built: the profile key at fault and what it needs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlanError {
    pub key: &'static str,
    pub expected: String,
    pub got: String,
}

/// Set sizes (pages) chosen for a profile and layout.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// Pool factor `k` (pool = k × varying part).
    pub k: f64,
    /// Stable fraction of a launch set (shared + context core).
    pub alpha: f64,
    /// Fraction of a launch set shared by all contexts.
    pub sigma: f64,
    /// Launch-set pages per region (Java, native, file).
    pub launch: [u32; 3],
    /// Shared-core pages per region.
    pub shared: [u32; 3],
    /// Context-core pages per region (each context).
    pub context: [u32; 3],
    /// Varying pages per launch per region.
    pub varying: [u32; 3],
    /// Pool pages per region.
    pub pool: [u32; 3],
    /// Foreground working-set target per region.
    pub ws: [u32; 3],
    /// B1 pages per region.
    pub b1: [u32; 3],
    /// B2 pages per region.
    pub b2: [u32; 3],
    /// Pages of B2 that lie in every B1, per region.
    pub b2_covered: [u32; 3],
}

fn split3(total: u32, weights: [f64; 3]) -> [u32; 3] {
    let sum: f64 = weights.iter().sum();
    if sum <= 0.0 || total == 0 {
        return [0, 0, 0];
    }
    let a = ((total as f64) * weights[0] / sum).round() as u32;
    let b = ((total as f64) * weights[1] / sum).round() as u32;
    let a = a.min(total);
    let b = b.min(total - a);
    [a, b, total - a - b]
}

fn scale3(x: [u32; 3], f: f64) -> [u32; 3] {
    x.map(|v| ((v as f64) * f).round() as u32)
}

/// Chooses the set sizes; fails when the launch structure does not fit.
pub(crate) fn plan(p: &AppProfile, layout: &AppLayout) -> Result<Plan, PlanError> {
    let a = &p.access;
    let n_ctx = p.contexts.len().max(1) as f64;
    let total = layout.total();
    let sizes = layout.sizes();
    let tf = total as f64;
    let l_total = (tf * a.launch_set_fraction).round() as u32;
    let l_file = ((l_total as f64) * a.file_launch_share).round() as u32;
    let l_anon = l_total - l_file.min(l_total);
    let l_ja = split3(
        l_anon,
        [layout.java_pages as f64, layout.native_pages as f64, 0.0],
    );
    let launch = [l_ja[0], l_ja[1], l_file.min(l_total)];
    let o = a.same_context_overlap;
    let mut candidates: Vec<f64> = [4.0, 3.0, 2.0]
        .into_iter()
        .filter(|k| 1.0 / k < o - 0.02)
        .collect();
    if candidates.is_empty() {
        candidates.push(2.0 / o.max(0.01));
    }
    let ws_layout = split3(
        (tf * a.foreground_ws_fraction).round() as u32,
        sizes.map(|s| s as f64),
    );
    let mut best_need = f64::INFINITY;
    let mut region_fail: Option<usize> = None;
    for &k in &candidates {
        let alpha = ((o - 1.0 / k) / (1.0 - 1.0 / k)).clamp(0.0, 1.0);
        let sigma = if n_ctx <= 1.0 {
            alpha
        } else {
            (a.cross_context_overlap - (1.0 - alpha) / k).clamp(0.0, alpha)
        };
        let shared = scale3(launch, sigma);
        let core = scale3(launch, alpha);
        let context = [0, 1, 2].map(|r| core[r].saturating_sub(shared[r]));
        let varying = [0, 1, 2].map(|r| launch[r] - core[r].min(launch[r]));
        let pool = scale3(varying, k);
        let used = [0, 1, 2].map(|r| shared[r] as u64 + n_ctx as u64 * context[r] as u64 + pool[r] as u64);
        let need: u64 = used.iter().sum();
        best_need = best_need.min(need as f64);
        if let Some(r) = (0..3).find(|&r| used[r] > sizes[r] as u64) {
            region_fail.get_or_insert(r);
            continue;
        }
        if need as f64 > tf * a.foreground_ws_fraction + 0.5 {
            continue;
        }
        // Working set per region: proportional to the layout, except that a region whose
        // launch structure needs more takes it from the other regions' slack (total unchanged).
        let over: u64 = (0..3)
            .map(|r| (used[r]).saturating_sub(ws_layout[r] as u64))
            .sum();
        let slack: [u64; 3] = [0, 1, 2].map(|r| (ws_layout[r] as u64).saturating_sub(used[r]));
        let slack_sum: u64 = slack.iter().sum();
        let ws = [0, 1, 2].map(|r| {
            if used[r] >= ws_layout[r] as u64 {
                (used[r] as u32).min(sizes[r])
            } else {
                let cut = if slack_sum == 0 {
                    0
                } else {
                    (over * slack[r]).div_ceil(slack_sum)
                };
                ((ws_layout[r] as u64).saturating_sub(cut).max(used[r]) as u32).min(sizes[r])
            }
        });
        let b1 = split3((tf * a.b1_fraction).round() as u32, sizes.map(|s| s as f64));
        let b2 = split3((tf * a.b2_fraction).round() as u32, sizes.map(|s| s as f64));
        let b2_covered = [0, 1, 2].map(|r| {
            (((b2[r] as f64) * a.b1_covers_b2).round() as u32)
                .min(b1[r])
                .min(ws[r])
        });
        return Ok(Plan {
            k,
            alpha,
            sigma,
            launch,
            shared,
            context,
            varying,
            pool,
            ws,
            b1,
            b2,
            b2_covered,
        });
    }
    if let Some(r) = region_fail {
        let names = ["Java-heap", "native", "file"];
        let key = if r == 2 {
            "file_launch_share"
        } else {
            "launch_set_fraction"
        };
        let got = if r == 2 {
            a.file_launch_share
        } else {
            a.launch_set_fraction
        };
        return Err(PlanError {
            key,
            expected: format!(
                "a value for which the launch sets' {} pages (cores of {} contexts + varying pool) fit in the app's {} {} pages",
                names[r], n_ctx, sizes[r], names[r]
            ),
            got: got.to_string(),
        });
    }
    Err(PlanError {
        key: "foreground_ws_fraction",
        expected: format!(
            "≥ {:.3} (the launch sets' cores of {} contexts and varying pool must fit in the foreground working set)",
            (best_need / tf.max(1.0)).min(1.0),
            n_ctx
        ),
        got: a.foreground_ws_fraction.to_string(),
    })
}

/// A run of adjacent pages `[start, start + len)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    start: u32,
    len: u32,
}

/// Hands out runs from a shuffled list, splitting the last one to hit an exact page count.
struct Cursor {
    runs: Vec<Run>,
    pos: usize,
}

impl Cursor {
    fn take(&mut self, mut pages: u32) -> Vec<Run> {
        let mut out = Vec::new();
        while pages > 0 && self.pos < self.runs.len() {
            let r = self.runs[self.pos];
            if r.len <= pages {
                out.push(r);
                pages -= r.len;
                self.pos += 1;
            } else {
                out.push(Run {
                    start: r.start,
                    len: pages,
                });
                self.runs[self.pos] = Run {
                    start: r.start + pages,
                    len: r.len - pages,
                };
                pages = 0;
            }
        }
        out
    }

    fn rest(&self) -> Vec<Run> {
        self.runs[self.pos..].to_vec()
    }
}

fn shuffle<T>(v: &mut [T], rng: &mut SimRng) {
    for i in (1..v.len()).rev() {
        let j = rng.gen_range(0..=i);
        v.swap(i, j);
    }
}

/// Cuts `[lo, hi)` into runs with geometric lengths (continuation probability `adjacency`).
fn cut_runs(lo: u32, hi: u32, adjacency: f64, rng: &mut SimRng) -> Vec<Run> {
    let mut out = Vec::new();
    let mut s = lo;
    while s < hi {
        let mut len = 1u32;
        while s + len < hi && rng.gen::<f64>() < adjacency {
            len += 1;
        }
        out.push(Run { start: s, len });
        s += len;
    }
    out
}

/// Takes up to `target` pages from `sources` in order, skipping pages already marked (and
/// marking the ones taken). Returns runs.
fn fill(target: u32, sources: &[&[Run]], mark: &mut [bool]) -> Vec<Run> {
    let mut out = Vec::new();
    let mut left = target;
    for src in sources {
        for r in src.iter() {
            if left == 0 {
                return out;
            }
            let mut p = r.start;
            let end = r.start + r.len;
            while p < end && left > 0 {
                if mark[p as usize] {
                    p += 1;
                    continue;
                }
                let s = p;
                while p < end && left > 0 && !mark[p as usize] {
                    mark[p as usize] = true;
                    p += 1;
                    left -= 1;
                }
                out.push(Run { start: s, len: p - s });
            }
        }
    }
    out
}

fn flatten(runs: &[Run]) -> Vec<u32> {
    let mut out = Vec::with_capacity(runs.iter().map(|r| r.len as usize).sum());
    for r in runs {
        out.extend(r.start..r.start + r.len);
    }
    out
}

fn pages(runs: &[Run]) -> u32 {
    runs.iter().map(|r| r.len).sum()
}

/// The generated access structure of one app instance. Cheap to query; build once per app
/// process (e.g. at its cold launch) with a seed from the simulation's RNG streams.
#[derive(Debug, Clone)]
pub struct AccessModel {
    layout: AppLayout,
    seed: u64,
    plan: Plan,
    n_contexts: usize,
    /// Shared core runs (all regions).
    shared: Vec<Run>,
    /// Context core runs per context.
    context: Vec<Vec<Run>>,
    /// Varying pool runs per region.
    pool: [Vec<Run>; 3],
    ws: Vec<u32>,
    b1: Vec<Vec<u32>>,
    b2: Vec<u32>,
}

/// [`plan`] with its error as a one-line profile error.
fn checked_plan(profile: &AppProfile, layout: &AppLayout) -> Result<Plan, AppError> {
    plan(profile, layout).map_err(|e| AppError::Invalid {
        origin: profile.name.clone(),
        line: None,
        key: format!("access.{}", e.key),
        expected: e.expected,
        got: e.got,
    })
}

impl AccessModel {
    /// Builds the structure for `profile` on `layout` (normally [`AppLayout::from_profile`]).
    /// Fails (one-line error naming the profile key) when the launch structure does not fit.
    pub fn new(profile: &AppProfile, layout: AppLayout, seed: u64) -> Result<Self, AppError> {
        let plan = checked_plan(profile, &layout)?;
        let n_ctx = profile.contexts.len().max(1);
        let mut rng = SimRng::seed_from_u64(splitmix64(seed ^ 0x0a11_5eed_0000_0001));
        let mut shared = Vec::new();
        let mut context = vec![Vec::new(); n_ctx];
        let mut pool: [Vec<Run>; 3] = Default::default();
        let mut ws_runs: [Vec<Run>; 3] = Default::default();
        let mut cold_runs: [Vec<Run>; 3] = Default::default();
        let mut shared_r: [Vec<Run>; 3] = Default::default();
        let mut context_r: Vec<[Vec<Run>; 3]> = vec![Default::default(); n_ctx];
        for (r, &(lo, hi)) in layout.bounds().iter().enumerate() {
            let mut runs = cut_runs(lo, hi, profile.access.adjacency, &mut rng);
            if r == 2 {
                // File pages: the launch structure (cores + pool) comes from the start of the
                // files, the rest after it, each part in shuffled run order (see module docs).
                let hot = plan.shared[r] + n_ctx as u32 * plan.context[r] + plan.pool[r];
                let mut acc = 0u32;
                let k = runs
                    .iter()
                    .position(|x| {
                        acc += x.len;
                        acc >= hot
                    })
                    .map_or(runs.len(), |i| i + 1);
                let (head, tail) = runs.split_at_mut(k);
                shuffle(head, &mut rng);
                shuffle(tail, &mut rng);
            } else {
                shuffle(&mut runs, &mut rng);
            }
            let mut cur = Cursor { runs, pos: 0 };
            let s = cur.take(plan.shared[r]);
            let ks: Vec<Vec<Run>> = (0..n_ctx).map(|_| cur.take(plan.context[r])).collect();
            let p = cur.take(plan.pool[r]);
            let used = pages(&s) + ks.iter().map(|k| pages(k)).sum::<u32>() + pages(&p);
            let x = cur.take(plan.ws[r].saturating_sub(used));
            ws_runs[r] = s
                .iter()
                .chain(ks.iter().flatten())
                .chain(p.iter())
                .chain(x.iter())
                .copied()
                .collect();
            cold_runs[r] = cur.rest();
            shared.extend_from_slice(&s);
            shared_r[r] = s;
            for (c, k) in ks.into_iter().enumerate() {
                context[c].extend_from_slice(&k);
                context_r[c][r] = k;
            }
            pool[r] = p;
        }
        // Foreground working set, in a shuffled run order.
        let mut all_ws: Vec<Run> = ws_runs.iter().flatten().copied().collect();
        shuffle(&mut all_ws, &mut rng);
        let ws = flatten(&all_ws);
        // B2's covered part: random foreground runs, per region.
        let total = layout.total() as usize;
        let mut b2_cov: [Vec<Run>; 3] = Default::default();
        let mut others: [Vec<Run>; 3] = Default::default();
        for r in 0..3 {
            let mut w = ws_runs[r].clone();
            shuffle(&mut w, &mut rng);
            let mut mark = vec![false; total];
            b2_cov[r] = fill(plan.b2_covered[r], &[&w], &mut mark);
            let mut o = w;
            shuffle(&mut o, &mut rng);
            others[r] = o;
        }
        // B1 per context.
        let mut in_any_b1 = vec![false; total];
        let mut b1 = Vec::with_capacity(n_ctx);
        for ctx_runs in &context_r {
            let mut runs = Vec::new();
            for r in 0..3 {
                let mut mark = vec![false; total];
                let srcs: [&[Run]; 5] = [&b2_cov[r], &ctx_runs[r], &shared_r[r], &others[r], &cold_runs[r]];
                runs.extend(fill(plan.b1[r], &srcs, &mut mark));
            }
            let set = flatten(&runs);
            for &p in &set {
                in_any_b1[p as usize] = true;
            }
            b1.push(set);
        }
        // B2: covered part + pages outside every B1 (cold first, then other foreground pages).
        let mut b2_runs = Vec::new();
        for r in 0..3 {
            b2_runs.extend_from_slice(&b2_cov[r]);
            let mut mark = in_any_b1.clone();
            for run in &b2_cov[r] {
                for p in run.start..run.start + run.len {
                    mark[p as usize] = true;
                }
            }
            let rest = plan.b2[r].saturating_sub(pages(&b2_cov[r]));
            b2_runs.extend(fill(rest, &[&cold_runs[r], &others[r]], &mut mark));
        }
        let b2 = flatten(&b2_runs);
        Ok(AccessModel {
            layout,
            seed,
            plan,
            n_contexts: n_ctx,
            shared,
            context,
            pool,
            ws,
            b1,
            b2,
        })
    }

    /// Checks that [`AccessModel::new`] would succeed for `profile` on `layout`, without building
    /// anything (the structure of an app that is never launched need not exist).
    pub fn check(profile: &AppProfile, layout: &AppLayout) -> Result<(), AppError> {
        checked_plan(profile, layout).map(|_| ())
    }

    /// Builds the model for the profile's steady layout.
    pub fn for_profile(profile: &AppProfile, seed: u64) -> Result<Self, AppError> {
        Self::new(profile, AppLayout::from_profile(profile), seed)
    }

    /// The layout the offsets refer to.
    pub fn layout(&self) -> &AppLayout {
        &self.layout
    }

    /// The chosen set sizes and structure parameters.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Number of contexts (context indices are taken modulo this).
    pub fn contexts(&self) -> usize {
        self.n_contexts
    }

    /// The pages touched by hot launch number `launch_no` (any counter the caller keeps, e.g. the
    /// app's launch count) in context `context` (index into the profile's `contexts`, taken
    /// modulo their number), in access order. The launch completes at its last access (first
    /// frame). A pure function of (model, context, launch_no).
    pub fn launch_set(&self, context: usize, launch_no: u64) -> Vec<u32> {
        let c = context % self.n_contexts;
        let mut rng = SimRng::seed_from_u64(splitmix64(
            self.seed ^ splitmix64((c as u64) << 40 ^ launch_no ^ 0x1a0c_0000_0000_0000),
        ));
        let mut runs: Vec<Run> = Vec::with_capacity(self.shared.len() + self.context[c].len() + 64);
        runs.extend_from_slice(&self.shared);
        runs.extend_from_slice(&self.context[c]);
        for r in 0..3 {
            let mut idx: Vec<usize> = (0..self.pool[r].len()).collect();
            let mut left = self.plan.varying[r];
            let mut i = 0;
            while left > 0 && i < idx.len() {
                let j = rng.gen_range(i..idx.len());
                idx.swap(i, j);
                let run = self.pool[r][idx[i]];
                let len = run.len.min(left);
                runs.push(Run {
                    start: run.start,
                    len,
                });
                left -= len;
                i += 1;
            }
        }
        shuffle(&mut runs, &mut rng);
        flatten(&runs)
    }

    /// The foreground working set (pages touched while the app is in the foreground; contains
    /// every launch set), in a fixed shuffled run order.
    pub fn foreground_ws(&self) -> &[u32] {
        &self.ws
    }

    /// B1 of `context` (modulo the number of contexts): pages touched during the ~5 s
    /// transition state after the app leaves the foreground.
    pub fn b1(&self, context: usize) -> &[u32] {
        &self.b1[context % self.n_contexts]
    }

    /// B2: the stable background working set.
    pub fn b2(&self) -> &[u32] {
        &self.b2
    }
}
