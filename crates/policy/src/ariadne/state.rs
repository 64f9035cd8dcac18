//! Ariadne's shared state: configuration, the per-page hotness classes, the zpool order used by
//! PreDecomp, the app LRU and the run's metrics.

use super::check_sizes;
use crate::{Params, Probe};
use engine::Nanos;
use kernel::types::{PageIdx, Pid};
use std::collections::VecDeque;

/// Hotness class of an anonymous page (also its zram swap tag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Class {
    Cold = 0,
    Warm = 1,
    Hot = 2,
}

impl Class {
    pub fn from_u8(v: u8) -> Class {
        match v {
            2 => Class::Hot,
            1 => Class::Warm,
            _ => Class::Cold,
        }
    }
}

/// Resolved parameters.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cfg {
    pub small: u32,
    pub medium: u32,
    pub large: u32,
    pub exclude_hot: bool,
    pub hotness_org: bool,
    pub adaptive_comp: bool,
    pub predecomp: bool,
    pub predecomp_pages: usize,
    pub predecomp_buffer: usize,
    pub writeback: bool,
    pub writeback_at: f64,
    pub writeback_period: Nanos,
    pub writeback_max_pages: u64,
    pub hot_list_pages: usize,
    pub lru_op_ns: Nanos,
}

impl Cfg {
    pub fn from_params(p: &Params) -> Result<Cfg, String> {
        let [small, medium, large] =
            check_sizes(p).map_err(|(k, want)| format!("ariadne.{k} = {}: expected {want}", p.int(k)))?;
        Ok(Cfg {
            small,
            medium,
            large,
            exclude_hot: p.bool("exclude_hot"),
            hotness_org: p.bool("hotness_org"),
            adaptive_comp: p.bool("adaptive_comp"),
            predecomp: p.bool("predecomp"),
            predecomp_pages: p.int("predecomp_pages") as usize,
            predecomp_buffer: p.int("predecomp_buffer") as usize,
            writeback: p.bool("writeback"),
            writeback_at: p.float("writeback_at"),
            writeback_period: (p.float("writeback_period_s") * 1e9) as Nanos,
            writeback_max_pages: p.int("writeback_max_mib") as u64 * 256,
            hot_list_pages: p.int("hot_list_pages") as usize,
            lru_op_ns: p.float("lru_op_ns").round() as Nanos,
        })
    }
}

/// What a run measured (read by `reproduce ariadne` through [`super::Ariadne::stats`]).
///
/// Hot-list coverage and accuracy follow the artifact's `get_cov_acc.py` (spec §2.5), which
/// scores the hot list on a trace of the *stock* kernel: the relaunch's TTID swap-ins are the
/// pages the relaunch faulted back from swap before its first frame. Under EHL the hot list is
/// never swapped out, so these two are only meaningful in a run whose reclaim is stock (all four
/// mechanisms off, `reproduce ariadne`'s `zram-trace` run).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Relaunches whose hot list was made by the previous relaunch (a relaunch after the cold
    /// launch is not scored).
    pub relaunches: u64,
    /// Coverage: Σ per scored relaunch with swap-ins |hot list ∩ TTID swap-ins| / |TTID
    /// swap-ins|, and the number of such relaunches.
    pub coverage_sum: f64,
    pub coverage_n: u64,
    /// TTID swap-ins (distinct anon pages) summed over the scored relaunches.
    pub ttid_swapins_sum: u64,
    /// Accuracy: Σ per scored hot list, evaluated when the app leaves the foreground after the
    /// relaunch (its TTID, TTFD and later use): |pages resident (never swapped out, or swapped
    /// back in)| / |pages still mapped|; and the number of lists scored.
    pub accuracy_sum: f64,
    pub accuracy_n: u64,
    /// Launch-set overlap (not the artifact's metrics): Σ |hot list ∩ touched| / |touched| and
    /// Σ |hot list ∩ touched| / |hot list|.
    pub overlap_touched_sum: f64,
    pub overlap_list_sum: f64,
    /// Σ per relaunch: hot-list pages, anon pages the relaunch touched (the list is capped at
    /// `hot_list_pages`).
    pub hot_pages_sum: u64,
    pub touched_pages_sum: u64,
    /// Fig. 5 over consecutive relaunches k, k+1 of an app (whole launch sets, uncapped):
    /// Σ |A_k ∩ A_k+1| / |A_k+1| (hot-data similarity) over `pairs`; reused data = share of A_k
    /// used again in relaunch k+1 or its execution (hot ∪ warm of k+1), evaluated like accuracy
    /// when the app leaves the foreground: Σ over `reused_n` pairs.
    pub similarity_sum: f64,
    pub pairs: u64,
    pub reused_sum: f64,
    pub reused_n: u64,
    /// Pages pre-decompressed, used before leaving the FIFO, pushed out unused.
    pub predecomp_loaded: u64,
    pub predecomp_hits: u64,
    pub predecomp_wasted: u64,
    /// Anon pages handed to zram per class (cold, warm, hot).
    pub stored_by_class: [u64; 3],
    /// Hot pages stored while reclaim's allowed class was below hot (madvise / compaction paths).
    pub hot_stored_early: u64,
    /// Locality windows of relaunch swap-in faults: count, Σ P(2 consecutive), Σ P(4).
    pub windows: u64,
    pub p2_sum: f64,
    pub p4_sum: f64,
    /// Writeback requests issued.
    pub writebacks: u64,
    /// Reclaim passes whose allowed class was raised.
    pub escalations: u64,
}

fn mean(sum: f64, n: u64) -> f64 {
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}

impl Stats {
    /// Artifact coverage (NaN when no scored relaunch swapped anything in).
    pub fn coverage(&self) -> f64 {
        mean(self.coverage_sum, self.coverage_n)
    }
    /// Artifact accuracy (NaN when no hot list was scored).
    pub fn accuracy(&self) -> f64 {
        mean(self.accuracy_sum, self.accuracy_n)
    }
    /// Launch-set overlap: share of the relaunch's touched anon pages in the hot list, share of
    /// the hot list the relaunch touched.
    pub fn overlap(&self) -> (f64, f64) {
        (
            mean(self.overlap_touched_sum, self.relaunches),
            mean(self.overlap_list_sum, self.relaunches),
        )
    }
    /// Mean hot-list size, anon pages touched and TTID swap-ins per scored relaunch.
    pub fn mean_sizes(&self) -> (f64, f64, f64) {
        let n = self.relaunches.max(1) as f64;
        (
            self.hot_pages_sum as f64 / n,
            self.touched_pages_sum as f64 / n,
            self.ttid_swapins_sum as f64 / n,
        )
    }
    /// Fig. 5: hot-data similarity and reused fraction (NaN without a pair).
    pub fn similarity(&self) -> (f64, f64) {
        (
            mean(self.similarity_sum, self.pairs),
            mean(self.reused_sum, self.reused_n),
        )
    }
    pub fn predecomp_hit_rate(&self) -> f64 {
        self.predecomp_hits as f64 / self.predecomp_loaded.max(1) as f64
    }
    pub fn p2(&self) -> f64 {
        self.p2_sum / self.windows.max(1) as f64
    }
    pub fn p4(&self) -> f64 {
        self.p4_sum / self.windows.max(1) as f64
    }
}

const NONE: u32 = u32::MAX;
/// Bit in a page's entry: pre-decompressed and not used yet.
const PRE: u32 = 1 << 2;

pub(crate) struct State {
    pub cfg: Cfg,
    pub stats: Probe<Stats>,
    /// Per page: `pid << 3 | PRE | class`; an entry of another pid reads as cold (page reused).
    page: Vec<u32>,
    /// Per page: the next page stored with the same class (zpool order), `NONE` if unknown.
    next: Vec<u32>,
    last_stored: [u32; 3],
    /// Per app: pid and hot list (the last launch's touched anon pages).
    pub apps: Vec<AppEntry>,
    pub fg: Option<Pid>,
    /// Reclaim: allowed class, and the previous pass (priority, pages reclaimed).
    pub tier: Class,
    pub prev_pass: Option<(u32, u64)>,
    pub pass_reclaimed: u64,
    pub fifo: VecDeque<PageIdx>,
    /// Swap-in faults of the app being launched (locality), `None` outside launches.
    pub launching: Option<Pid>,
    pub launch_faults: Vec<PageIdx>,
    /// Pages pre-decompressed during the launch: (faults of the launch so far, page); their hits
    /// are decided at the launch's end ([`predecomp_used`]).
    pub launch_pre: Vec<(u32, PageIdx)>,
    /// Owner of the last major fault (the pages `preloaded` reports are its neighbours).
    pub fault_pid: Pid,
    pub zram_capacity_pages: u64,
    pub writeback_armed: bool,
}

#[derive(Default, Clone)]
pub(crate) struct AppEntry {
    pub pid: Pid,
    pub hot: Vec<PageIdx>,
    /// `hot` was made by a relaunch (not the cold launch's start footprint): only such lists are
    /// scored (the artifact's hot round uses the previous round's relaunch log).
    pub hot_from_relaunch: bool,
    /// Last time it left or entered the foreground (app LRU).
    pub last_used: Nanos,
    /// The last launch's anon pages, whole (uncapped), sorted; and whether it was a relaunch
    /// (Fig. 5 pairs consecutive relaunches).
    pub launch_set: Vec<PageIdx>,
    pub launch_set_hot: bool,
    /// The hot list a relaunch was scored against and the previous relaunch's whole launch set,
    /// until the app leaves the foreground (accuracy and reuse count use after the relaunch too).
    pub pending_accuracy: Vec<PageIdx>,
    pub pending_reuse: Vec<PageIdx>,
}

impl State {
    pub fn new(cfg: Cfg, stats: Probe<Stats>, zram_capacity_pages: u64) -> Self {
        Self {
            cfg,
            stats,
            page: Vec::new(),
            next: Vec::new(),
            last_stored: [NONE; 3],
            apps: Vec::new(),
            fg: None,
            tier: Class::Cold,
            prev_pass: None,
            pass_reclaimed: 0,
            fifo: VecDeque::new(),
            launching: None,
            launch_faults: Vec::new(),
            launch_pre: Vec::new(),
            fault_pid: 0,
            zram_capacity_pages,
            writeback_armed: false,
        }
    }

    fn slot(v: &mut Vec<u32>, idx: PageIdx, fill: u32) -> &mut u32 {
        let i = idx as usize;
        if i >= v.len() {
            v.resize((i + 1).next_power_of_two(), fill);
        }
        &mut v[i]
    }

    pub fn class(&self, idx: PageIdx, pid: Pid) -> Class {
        match self.page.get(idx as usize) {
            Some(&e) if e != 0 && e >> 3 == pid => Class::from_u8((e & 3) as u8),
            _ => Class::Cold,
        }
    }

    pub fn set_class(&mut self, idx: PageIdx, pid: Pid, c: Class) {
        let e = Self::slot(&mut self.page, idx, 0);
        let pre = if *e != 0 && *e >> 3 == pid { *e & PRE } else { 0 };
        *e = pid << 3 | pre | c as u32;
    }

    pub fn is_pre(&self, idx: PageIdx, pid: Pid) -> bool {
        matches!(self.page.get(idx as usize), Some(&e) if e >> 3 == pid && e & PRE != 0)
    }

    fn set_pre(&mut self, idx: PageIdx, pid: Pid, on: bool) {
        let c = self.class(idx, pid);
        let e = Self::slot(&mut self.page, idx, 0);
        *e = pid << 3 | if on { PRE } else { 0 } | c as u32;
    }

    /// Forget that a page was pre-decompressed (its load was accounted for).
    pub fn clear_pre(&mut self, idx: PageIdx, pid: Pid) {
        if self.is_pre(idx, pid) {
            self.set_pre(idx, pid, false);
        }
    }

    /// A pre-decompressed page was used: count the hit once.
    pub fn note_use(&mut self, idx: PageIdx, pid: Pid) {
        if self.is_pre(idx, pid) {
            self.set_pre(idx, pid, false);
            self.stats.with(|s| s.predecomp_hits += 1);
        }
    }

    /// Record a store of `idx` with class `c` (zpool order).
    pub fn note_store(&mut self, idx: PageIdx, c: Class) {
        let prev = self.last_stored[c as usize];
        if prev != NONE {
            *Self::slot(&mut self.next, prev, NONE) = idx;
        }
        *Self::slot(&mut self.next, idx, NONE) = NONE;
        self.last_stored[c as usize] = idx;
    }

    pub fn next_in_zpool(&self, idx: PageIdx) -> Option<PageIdx> {
        self.next.get(idx as usize).copied().filter(|&n| n != NONE)
    }

    /// A page was pre-decompressed: into the FIFO (the oldest unused one leaves it). During a
    /// launch of `pid` the FIFO is replayed at the launch's end instead: the kernel does not
    /// tell a policy when a resident page is used, the launch's touch order does.
    pub fn push_pre(&mut self, idx: PageIdx, pid: Pid) {
        self.set_pre(idx, pid, true);
        if self.launching == Some(pid) {
            self.launch_pre.push((self.launch_faults.len() as u32, idx));
            self.stats.with(|s| s.predecomp_loaded += 1);
            return;
        }
        self.fifo.push_back(idx);
        let mut wasted = 0;
        while self.fifo.len() > self.cfg.predecomp_buffer {
            let old = self.fifo.pop_front().expect("non-empty");
            if let Some(&e) = self.page.get(old as usize) {
                if e & PRE != 0 {
                    wasted += 1;
                    self.page[old as usize] = e & !PRE;
                }
            }
        }
        self.stats.with(|s| {
            s.predecomp_loaded += 1;
            s.predecomp_wasted += wasted;
        });
    }

    pub fn app(&mut self, app: usize) -> &mut AppEntry {
        if app >= self.apps.len() {
            self.apps.resize(app + 1, AppEntry::default());
        }
        &mut self.apps[app]
    }
}

/// P(2) and P(4) of one window of swap-in pages: the share of pages whose next 1 (3) pages in
/// zpool order are in the window too (spec §2.4, artifact `locality_check.py`).
pub(crate) fn locality(s: &State, window: &[PageIdx]) -> (f64, f64) {
    let mut sorted: Vec<PageIdx> = window.to_vec();
    sorted.sort_unstable();
    let has = |p: PageIdx| sorted.binary_search(&p).is_ok();
    let (mut two, mut four) = (0usize, 0usize);
    for &p in window {
        let mut run = 1;
        let mut q = p;
        while run < 4 {
            match s.next_in_zpool(q) {
                Some(n) if has(n) => {
                    run += 1;
                    q = n;
                }
                _ => break,
            }
        }
        two += (run >= 2) as usize;
        four += (run >= 4) as usize;
    }
    let n = window.len().max(1) as f64;
    (two as f64 / n, four as f64 / n)
}

/// PreDecomp during a launch, replayed on the launch's first-touch order: the load `pre[s]`,
/// made after the launch's `pre[s].0`-th fault, is a hit if the launch touched the page after
/// that fault and before `buffer` later loads pushed it out of the FIFO. Returns, per load,
/// whether it was used.
pub(crate) fn predecomp_used(
    faults: &[PageIdx],
    pre: &[(u32, PageIdx)],
    touched: &[PageIdx],
    buffer: usize,
) -> Vec<bool> {
    use std::collections::HashMap;
    let mut fault_at: HashMap<PageIdx, u32> = HashMap::with_capacity(faults.len());
    for (i, &p) in faults.iter().enumerate() {
        fault_at.entry(p).or_insert(i as u32 + 1);
    }
    let mut load_at: HashMap<PageIdx, usize> = HashMap::with_capacity(pre.len());
    for (s, &(_, p)) in pre.iter().enumerate() {
        load_at.entry(p).or_insert(s);
    }
    let mut used = vec![false; pre.len()];
    // Faults seen so far in touch order (a faulting page is touched when its fault completes).
    let mut clock = 0u32;
    for &p in touched {
        if let Some(&c) = fault_at.get(&p) {
            clock = clock.max(c);
        }
        if let Some(&s) = load_at.get(&p) {
            let pushed = pre.partition_point(|&(g, _)| g <= clock);
            if pre[s].0 <= clock && pushed <= s + buffer {
                used[s] = true;
            }
        }
    }
    used
}

/// The launch's demand swap-in stream: each fault followed by the pre-decompressed pages it
/// triggered that the launch used (without PreDecomp those would have faulted right there).
pub(crate) fn demand_stream(faults: &[PageIdx], pre: &[(u32, PageIdx)], used: &[bool]) -> Vec<PageIdx> {
    let mut out = Vec::with_capacity(faults.len() + pre.len());
    let mut j = 0;
    for (i, &f) in faults.iter().enumerate() {
        out.push(f);
        while j < pre.len() && pre[j].0 as usize <= i + 1 {
            if used[j] {
                out.push(pre[j].1);
            }
            j += 1;
        }
    }
    out
}
