//! lmkd, Android's low-memory killer daemon (AOSP system/memory/lmkd).
//!
//! Two strategies, as in lmkd.cpp:
//! - **PSI** (`mp_event_psi`, the default): PSI monitors fire when memory stall time grows by
//!   `psi_partial_stall_ms` ("some", medium level) or `psi_complete_stall_ms` ("full", critical)
//!   within a 1 s window; lmkd then decides, in this order (first match wins): PRESSURE_AFTER_KILL,
//!   NOT_RESPONDING, LOW_SWAP_AND_THRASHING, LOW_MEM_AND_SWAP, LOW_MEM_AND_THRASHING,
//!   DIRECT_RECL_AND_THRASHING, LOW_FILECACHE_AFTER_THRASHING, LOW_MEM. Thrashing is the percentage
//!   of the file LRU refaulted since the last reset (every 1 s, the previous window carried over,
//!   halved per window passed); thrashing kills spare perceptible apps (adj ≤ 200) unless below the
//!   min watermark or thrashing at `3 × limit`; each thrashing kill cuts the limit by
//!   `thrashing_limit_decay_pct`. After an event lmkd keeps polling (every 100 ms; 10 ms while
//!   killing or with swap low) for 1 s.
//! - **minfree** (the legacy `mp_event_common` table): kill from the first slot whose minfree both
//!   free memory and file cache are below, with that slot's adj as the minimum.
//! - **lowmemorykiller**: no userspace killing; the in-kernel driver of kernels without PSI
//!   ([`crate::lowmemorykiller`]) kills at reclaim time from the same minfree/adj table.
//!
//! - **kill path off** (`LmkdConfig::kills` false, the Fleet artifact's evaluation builds): lmkd
//!   samples PSI and counts events but never kills; the in-kernel driver still does.
//!
//! Victim (`find_and_kill_process`): scan adj from 1000 down to the minimum; within a level the
//! oldest-inserted process, or the largest RSS when `kill_heaviest_task` or at adj ≤ 200.
//!
//! Simplified: the simulation samples PSI totals at the poll period instead of receiving kernel
//! events (so a trigger can fire up to one period late); `swap_util_max` (default 100 = off) and
//! DIRECT_RECL_STUCK are not modelled; a kill frees memory at once (no pidfd wait), so the next
//! decision waits `kill_timeout_ms`.

use crate::adj::*;
use crate::lowmemorykiller::LowMemoryKiller;
pub use device::LmkdMode;
use engine::{Nanos, NS_PER_MS, NS_PER_SEC};
use serde::Serialize;
use std::collections::VecDeque;

/// lmkd's kill reasons (enum kill_reasons in lmkd.cpp), plus the framework's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum KillReason {
    PressureAfterKill,
    NotResponding,
    LowSwapAndThrashing,
    LowMemAndSwap,
    LowMemAndThrashing,
    DirectReclAndThrashing,
    LowFilecacheAfterThrashing,
    LowMem,
    /// Legacy minfree table.
    Minfree,
    /// The in-kernel lowmemorykiller driver (kernels without PSI).
    LowMemoryKiller,
    /// The kernel's OOM killer (lmkd was too late).
    KernelOom,
    /// ActivityManager's cached-process limit (`max_cached_processes`).
    CachedLimit,
    /// Force-stopped by the user (a scenario action).
    User,
    /// The app's Java heap hit its growth limit even after a blocking GC (an uncaught
    /// `OutOfMemoryError` ends the process).
    JavaOom,
}

impl KillReason {
    pub fn name(self) -> &'static str {
        match self {
            KillReason::PressureAfterKill => "pressure_after_kill",
            KillReason::NotResponding => "not_responding",
            KillReason::LowSwapAndThrashing => "low_swap_and_thrashing",
            KillReason::LowMemAndSwap => "low_mem_and_swap",
            KillReason::LowMemAndThrashing => "low_mem_and_thrashing",
            KillReason::DirectReclAndThrashing => "direct_recl_and_thrashing",
            KillReason::LowFilecacheAfterThrashing => "low_filecache_after_thrashing",
            KillReason::LowMem => "low_mem",
            KillReason::Minfree => "minfree",
            KillReason::LowMemoryKiller => "lowmemorykiller",
            KillReason::KernelOom => "kernel_oom",
            KillReason::CachedLimit => "cached_limit",
            KillReason::User => "user",
            KillReason::JavaOom => "java_oom",
        }
    }
}

/// Strategy and tunables (`ro.lmk.*` properties).
#[derive(Debug, Clone, Serialize)]
pub struct LmkdConfig {
    /// PSI lmkd, minfree lmkd or the in-kernel driver (device release, `android.lmkd`).
    pub mode: LmkdMode,
    /// ro.lmk.psi_partial_stall_ms (70; 200 on low-RAM devices).
    pub psi_partial_stall_ms: u64,
    /// ro.lmk.psi_complete_stall_ms (700).
    pub psi_complete_stall_ms: u64,
    /// ro.lmk.thrashing_limit (100; 30 on low-RAM devices).
    pub thrashing_limit_pct: u64,
    /// ro.lmk.thrashing_limit_decay (10).
    pub thrashing_limit_decay_pct: u64,
    /// ro.lmk.swap_free_low_percentage (10).
    pub swap_free_low_percentage: u64,
    /// ro.lmk.filecache_min_kb (Pixel: 153600, REFERENCE.md).
    pub filecache_min_kb: u64,
    /// ro.lmk.stall_limit_critical (100; Pixel 40, unverified).
    pub stall_limit_critical: f64,
    /// Whether the LOW_MEM rule exists in this lmkd release (device `android.lmkd_low_mem`).
    pub low_mem_kill: bool,
    /// ro.lmk.lowmem_min_oom_score (PREVIOUS_APP_ADJ + 1).
    pub lowmem_min_oom_score: i16,
    /// ro.lmk.kill_heaviest_task (false).
    pub kill_heaviest_task: bool,
    /// ro.lmk.kill_timeout_ms (100).
    pub kill_timeout_ms: u64,
    /// Legacy table: (adj, minfree pages).
    pub minfree: Vec<(i16, u64)>,
    /// Whether userspace lmkd kills (device `android.lmkd_kills`); false: it still samples PSI
    /// and counts events, but never kills (the Fleet artifact's `mp_event_common` returns at
    /// once). The in-kernel driver is not lmkd and is unaffected.
    #[serde(skip_serializing_if = "is_true")]
    pub kills: bool,
}

fn is_true(b: &bool) -> bool {
    *b
}

impl LmkdConfig {
    /// AOSP defaults for a device with `total_pages` of RAM; `low_ram` selects the low-RAM values.
    pub fn aosp(low_ram: bool) -> Self {
        // Legacy minfree "high" table in KB for slots {0, 100, 200, 250, 900, 950}; 64-bit kernels
        // scale the last two by 3/2 and 7/4 (REFERENCE.md).
        let kb = [73728u64, 92160, 110592, 129024, 147456 * 3 / 2, 184320 * 7 / 4];
        let adj = [0i16, 100, 200, 250, 900, 950];
        LmkdConfig {
            mode: LmkdMode::Psi,
            psi_partial_stall_ms: if low_ram { 200 } else { 70 },
            psi_complete_stall_ms: 700,
            thrashing_limit_pct: if low_ram { 30 } else { 100 },
            thrashing_limit_decay_pct: 10,
            swap_free_low_percentage: 10,
            filecache_min_kb: 153_600,
            stall_limit_critical: 100.0,
            low_mem_kill: true,
            lowmem_min_oom_score: PREVIOUS_APP_ADJ + 1,
            kill_heaviest_task: false,
            kill_timeout_ms: 100,
            minfree: adj.iter().zip(kb).map(|(&a, k)| (a, k / 4)).collect(),
            kills: true,
        }
    }
}

/// What lmkd reads from /proc at a poll.
#[derive(Debug, Clone, Copy, Default)]
pub struct MemSnapshot {
    pub free_pages: u64,
    pub wmark_min: u64,
    pub wmark_low: u64,
    pub wmark_high: u64,
    pub file_lru_pages: u64,
    pub swap_total_pages: u64,
    pub swap_free_pages: u64,
    pub workingset_refault_file: u64,
    pub pgscan_direct: u64,
    pub pgscan_kswapd: u64,
    pub psi_some_total_ns: u64,
    pub psi_full_total_ns: u64,
}

/// A killable process as lmkd sees it (from its adj slots).
#[derive(Debug, Clone, Copy)]
pub struct Candidate {
    pub pid: u32,
    pub adj: i16,
    pub rss_pages: u64,
    /// Order of insertion into lmkd's lists (older = smaller).
    pub seq: u64,
}

/// A kill lmkd decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kill {
    pub pid: u32,
    pub reason: KillReason,
    pub min_adj: i16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Wmark {
    Min,
    Low,
    High,
    None,
}

/// lmkd state.
#[derive(Debug, Clone)]
pub struct Lmkd {
    pub cfg: LmkdConfig,
    /// (time, some total, full total) samples for the PSI windows.
    samples: VecDeque<(Nanos, u64, u64)>,
    poll_until: Nanos,
    last_kill: Option<Nanos>,
    killing: bool,
    last_event: Option<Nanos>,
    // Thrashing bookkeeping (mp_event_psi statics).
    init_ws_refault: u64,
    base_file_lru: u64,
    thrashing_reset: Nanos,
    prev_thrash_growth: u64,
    thrashing_limit: u64,
    prev_workingset_refault: u64,
    init_pgscan_direct: u64,
    init_pgscan_kswapd: u64,
    check_filecache: bool,
    pub polls: u64,
    pub events: u64,
    /// The in-kernel driver, in `LmkdMode::InKernel`.
    in_kernel: Option<LowMemoryKiller>,
    /// Whether the in-kernel driver saw reclaim at its last check (it is then checked often).
    reclaiming: bool,
}

/// Length of the PSI trigger window (PSI_WINDOW_SIZE_MS).
pub const PSI_WINDOW: Nanos = NS_PER_SEC;
/// How long lmkd polls after an event (PSI_POLL_PERIOD_... duration).
const POLL_DURATION: Nanos = NS_PER_SEC;
const THRASHING_RESET_INTERVAL: Nanos = NS_PER_SEC;

impl Lmkd {
    pub fn new(cfg: LmkdConfig) -> Self {
        let limit = cfg.thrashing_limit_pct;
        let in_kernel = (cfg.mode == LmkdMode::InKernel).then(|| LowMemoryKiller::new(cfg.minfree.clone()));
        Lmkd {
            in_kernel,
            reclaiming: false,
            cfg,
            // PSI totals are zero at boot.
            samples: VecDeque::from([(0, 0, 0)]),
            poll_until: 0,
            last_kill: None,
            killing: false,
            last_event: None,
            init_ws_refault: 0,
            base_file_lru: 0,
            thrashing_reset: 0,
            prev_thrash_growth: 0,
            thrashing_limit: limit,
            prev_workingset_refault: 0,
            init_pgscan_direct: 0,
            init_pgscan_kswapd: 0,
            check_filecache: false,
            polls: 0,
            events: 0,
        }
    }

    /// The period at which the simulation should call [`Lmkd::poll`] now.
    pub fn poll_period(&self, swap_low: bool) -> Nanos {
        if self.killing || swap_low || self.reclaiming {
            10 * NS_PER_MS
        } else {
            100 * NS_PER_MS
        }
    }

    /// Growth of (some, full) stall over the last `window`.
    fn growth(&self, now: Nanos, window: Nanos, snap: &MemSnapshot) -> (u64, u64) {
        let since = now.saturating_sub(window);
        let base = self
            .samples
            .iter()
            .find(|s| s.0 >= since)
            .or(self.samples.front());
        match base {
            // PSI totals never decrease (kernel psi.rs); saturate anyway so a model slip can
            // never read as a huge stall.
            Some(&(_, some, full)) => (
                snap.psi_some_total_ns.saturating_sub(some),
                snap.psi_full_total_ns.saturating_sub(full),
            ),
            None => (0, 0),
        }
    }

    fn wmark(snap: &MemSnapshot) -> Wmark {
        if snap.free_pages < snap.wmark_min {
            Wmark::Min
        } else if snap.free_pages < snap.wmark_low {
            Wmark::Low
        } else if snap.free_pages < snap.wmark_high {
            Wmark::High
        } else {
            Wmark::None
        }
    }

    /// One lmkd wake-up at `now`: returns the kill it decides, if any. The caller performs the
    /// kill and should then call again after `poll_period`.
    pub fn poll(&mut self, now: Nanos, snap: &MemSnapshot, candidates: &[Candidate]) -> Option<Kill> {
        self.samples
            .push_back((now, snap.psi_some_total_ns, snap.psi_full_total_ns));
        while self.samples.front().is_some_and(|s| s.0 + 10 * NS_PER_SEC < now) {
            self.samples.pop_front();
        }
        if let Some(lmk) = &mut self.in_kernel {
            let before = lmk.scans;
            let kill = lmk.scan(snap, candidates);
            self.reclaiming = lmk.scans > before;
            self.polls += 1;
            if kill.is_some() {
                self.last_kill = Some(now);
            }
            return kill;
        }
        if self.cfg.mode == LmkdMode::Minfree {
            if !self.cfg.kills {
                return None;
            }
            return self.poll_minfree(now, snap, candidates);
        }
        // PSI monitors: at most one event per window per level.
        let (some, full) = self.growth(now, PSI_WINDOW, snap);
        let critical_event = full >= self.cfg.psi_complete_stall_ms * NS_PER_MS;
        let medium_event = some >= self.cfg.psi_partial_stall_ms * NS_PER_MS;
        let event = (critical_event || medium_event) && self.last_event.is_none_or(|t| now >= t + PSI_WINDOW);
        if event {
            self.last_event = Some(now);
            self.events += 1;
            self.poll_until = now + POLL_DURATION;
        }
        // The kill path off: the event arrived, the handler returns (Fleet's `disable_kill`).
        if !self.cfg.kills || (!event && now >= self.poll_until) {
            return None;
        }
        self.polls += 1;
        if self
            .last_kill
            .is_some_and(|t| now < t + self.cfg.kill_timeout_ms * NS_PER_MS)
        {
            return None;
        }
        self.decide_psi(now, snap, candidates, event && critical_event)
    }

    fn decide_psi(
        &mut self,
        now: Nanos,
        snap: &MemSnapshot,
        cands: &[Candidate],
        critical: bool,
    ) -> Option<Kill> {
        let file_lru = snap.file_lru_pages;
        let mut cycle_after_kill = false;
        if self.killing {
            self.killing = false;
            cycle_after_kill = true;
            self.base_file_lru = file_lru;
            self.init_ws_refault = snap.workingset_refault_file;
            self.thrashing_reset = now;
            self.prev_thrash_growth = 0;
        }
        let swap_low_threshold = snap.swap_total_pages * self.cfg.swap_free_low_percentage / 100;
        let swap_is_low = self.cfg.swap_free_low_percentage > 0 && snap.swap_free_pages < swap_low_threshold;
        // Reclaim state.
        let direct = snap.pgscan_direct > self.init_pgscan_direct;
        if direct {
            self.init_pgscan_direct = snap.pgscan_direct;
            self.init_pgscan_kswapd = snap.pgscan_kswapd;
        } else if snap.pgscan_kswapd > self.init_pgscan_kswapd {
            self.init_pgscan_kswapd = snap.pgscan_kswapd;
        } else if snap.workingset_refault_file == self.prev_workingset_refault && !critical {
            // Not thrashing and not reclaiming: no kill.
            return None;
        }
        self.prev_workingset_refault = snap.workingset_refault_file;
        let mut thrashing = 0u64;
        let since = now.saturating_sub(self.thrashing_reset);
        if since > THRASHING_RESET_INTERVAL {
            self.prev_thrash_growth =
                (snap.workingset_refault_file - self.init_ws_refault) * 100 / (self.base_file_lru + 1);
            let windows = since / THRASHING_RESET_INTERVAL;
            if windows > 1 || self.prev_thrash_growth < self.thrashing_limit {
                self.prev_thrash_growth >>= windows.min(63);
            }
            self.base_file_lru = file_lru;
            self.init_ws_refault = snap.workingset_refault_file;
            self.thrashing_reset = now;
            self.thrashing_limit = self.cfg.thrashing_limit_pct;
        } else {
            thrashing =
                (snap.workingset_refault_file - self.init_ws_refault) * 100 / (self.base_file_lru + 1);
        }
        thrashing += self.prev_thrash_growth;
        let wmark = Self::wmark(snap);
        let (_, full10) = self.growth(now, 10 * NS_PER_SEC, snap);
        let critical_stall = full10 as f64 / (10 * NS_PER_SEC) as f64 * 100.0 > self.cfg.stall_limit_critical;
        let thrashing_critical = self.cfg.thrashing_limit_pct * 3;
        let mut min_adj: i16 = 0;
        let mut cut_limit = false;
        let reason = if cycle_after_kill && wmark < Wmark::Low {
            Some(KillReason::PressureAfterKill)
        } else if critical {
            Some(KillReason::NotResponding)
        } else if swap_is_low && thrashing > self.cfg.thrashing_limit_pct {
            if wmark > Wmark::Min && thrashing < thrashing_critical {
                min_adj = PERCEPTIBLE_APP_ADJ + 1;
            }
            self.check_filecache = true;
            Some(KillReason::LowSwapAndThrashing)
        } else if swap_is_low && wmark < Wmark::None {
            if wmark > Wmark::Min && thrashing < thrashing_critical {
                min_adj = PERCEPTIBLE_APP_ADJ + 1;
            }
            Some(KillReason::LowMemAndSwap)
        } else if wmark < Wmark::None && thrashing > self.thrashing_limit {
            cut_limit = true;
            if thrashing < thrashing_critical {
                min_adj = PERCEPTIBLE_APP_ADJ + 1;
            }
            self.check_filecache = true;
            Some(KillReason::LowMemAndThrashing)
        } else if direct && thrashing > self.thrashing_limit {
            cut_limit = true;
            if thrashing < thrashing_critical {
                min_adj = PERCEPTIBLE_APP_ADJ + 1;
            }
            self.check_filecache = true;
            Some(KillReason::DirectReclAndThrashing)
        } else if self.check_filecache {
            if file_lru * 4 < self.cfg.filecache_min_kb {
                min_adj = PERCEPTIBLE_APP_ADJ + 1;
                Some(KillReason::LowFilecacheAfterThrashing)
            } else {
                self.check_filecache = false;
                None
            }
        } else {
            None
        };
        let reason = match reason {
            Some(r) => r,
            None if self.cfg.low_mem_kill && wmark < Wmark::None => {
                min_adj = self.cfg.lowmem_min_oom_score;
                KillReason::LowMem
            }
            None => return None,
        };
        if critical_stall {
            min_adj = 0;
        }
        let victim = self.pick_victim(cands, min_adj)?;
        self.killing = true;
        self.last_kill = Some(now);
        if cut_limit {
            self.thrashing_limit = self.thrashing_limit * (100 - self.cfg.thrashing_limit_decay_pct) / 100;
        }
        Some(Kill {
            pid: victim,
            reason,
            min_adj,
        })
    }

    fn poll_minfree(&mut self, now: Nanos, snap: &MemSnapshot, cands: &[Candidate]) -> Option<Kill> {
        if self
            .last_kill
            .is_some_and(|t| now < t + self.cfg.kill_timeout_ms * NS_PER_MS)
        {
            return None;
        }
        self.polls += 1;
        let free = snap.free_pages.saturating_sub(snap.wmark_high);
        let file = snap.file_lru_pages;
        let slot = self
            .cfg
            .minfree
            .iter()
            .find(|&&(_, minfree)| free < minfree && file < minfree)?;
        let victim = self.pick_victim(cands, slot.0)?;
        self.last_kill = Some(now);
        Some(Kill {
            pid: victim,
            reason: KillReason::Minfree,
            min_adj: slot.0,
        })
    }

    /// `find_and_kill_process`: highest adj first; oldest within a level, or heaviest.
    pub fn pick_victim(&self, cands: &[Candidate], min_adj: i16) -> Option<u32> {
        let max_adj = cands.iter().filter(|c| c.adj >= min_adj).map(|c| c.adj).max()?;
        let level = cands.iter().filter(|c| c.adj == max_adj);
        let heaviest = self.cfg.kill_heaviest_task || max_adj <= PERCEPTIBLE_APP_ADJ;
        let v = if heaviest {
            level.max_by(|a, b| a.rss_pages.cmp(&b.rss_pages).then(b.seq.cmp(&a.seq)))
        } else {
            level.min_by_key(|c| c.seq)
        };
        v.map(|c| c.pid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap() -> MemSnapshot {
        MemSnapshot {
            free_pages: 100_000,
            wmark_min: 2_000,
            wmark_low: 4_000,
            wmark_high: 6_000,
            file_lru_pages: 100_000,
            swap_total_pages: 100_000,
            swap_free_pages: 100_000,
            ..Default::default()
        }
    }

    fn cands() -> Vec<Candidate> {
        vec![
            Candidate {
                pid: 1,
                adj: 0,
                rss_pages: 50_000,
                seq: 0,
            },
            Candidate {
                pid: 2,
                adj: 900,
                rss_pages: 10_000,
                seq: 1,
            },
            Candidate {
                pid: 3,
                adj: 910,
                rss_pages: 5_000,
                seq: 2,
            },
            Candidate {
                pid: 4,
                adj: 910,
                rss_pages: 9_000,
                seq: 3,
            },
            Candidate {
                pid: 5,
                adj: 700,
                rss_pages: 20_000,
                seq: 4,
            },
        ]
    }

    #[test]
    fn victim_is_highest_adj_then_oldest() {
        let l = Lmkd::new(LmkdConfig::aosp(false));
        assert_eq!(l.pick_victim(&cands(), 0), Some(3));
        assert_eq!(l.pick_victim(&cands(), 950), None);
        let mut cfg = LmkdConfig::aosp(false);
        cfg.kill_heaviest_task = true;
        assert_eq!(Lmkd::new(cfg).pick_victim(&cands(), 0), Some(4));
        // At adj <= 200 the heaviest is chosen.
        let only_fg = [
            Candidate {
                pid: 1,
                adj: 0,
                rss_pages: 5,
                seq: 0,
            },
            Candidate {
                pid: 9,
                adj: 0,
                rss_pages: 50,
                seq: 1,
            },
        ];
        assert_eq!(l.pick_victim(&only_fg, 0), Some(9));
    }

    #[test]
    fn no_pressure_no_kill() {
        let mut l = Lmkd::new(LmkdConfig::aosp(false));
        let s = snap();
        for t in 0..50 {
            assert_eq!(l.poll(t * 100 * NS_PER_MS, &s, &cands()), None);
        }
        assert_eq!(l.events, 0);
    }

    #[test]
    fn low_mem_kills_cached_only_after_a_psi_event() {
        let mut l = Lmkd::new(LmkdConfig::aosp(false));
        let mut s = snap();
        s.free_pages = 5_000; // below high
        s.pgscan_kswapd = 10;
        // No stall growth yet: no event, no kill.
        assert_eq!(l.poll(0, &s, &cands()), None);
        // 100 ms of "some" stall within the window: medium event -> LOW_MEM, min adj 701.
        s.psi_some_total_ns = 100 * NS_PER_MS;
        s.pgscan_kswapd = 20;
        let k = l.poll(100 * NS_PER_MS, &s, &cands()).expect("kill");
        assert_eq!(k.reason, KillReason::LowMem);
        assert_eq!(k.min_adj, 701);
        assert_eq!(k.pid, 3);
        // Within kill_timeout_ms: no second kill.
        assert_eq!(l.poll(150 * NS_PER_MS, &s, &cands()), None);
    }

    #[test]
    fn swap_low_and_low_memory_kills_with_reason() {
        let mut l = Lmkd::new(LmkdConfig::aosp(false));
        let mut s = snap();
        s.free_pages = 3_000; // below low
        s.swap_free_pages = 5_000; // < 10%
        s.pgscan_direct = 5;
        s.psi_some_total_ns = 80 * NS_PER_MS;
        let k = l.poll(NS_PER_MS, &s, &cands()).expect("kill");
        assert_eq!(k.reason, KillReason::LowMemAndSwap);
        assert_eq!(k.min_adj, PERCEPTIBLE_APP_ADJ + 1);
    }

    #[test]
    fn critical_full_stall_is_not_responding() {
        let mut l = Lmkd::new(LmkdConfig::aosp(false));
        let mut s = snap();
        l.poll(0, &s, &cands());
        s.psi_some_total_ns = 800 * NS_PER_MS;
        s.psi_full_total_ns = 750 * NS_PER_MS;
        s.pgscan_direct = 1;
        let k = l.poll(900 * NS_PER_MS, &s, &cands()).expect("kill");
        assert_eq!(k.reason, KillReason::NotResponding);
    }

    #[test]
    fn minfree_table_kills_from_the_matching_slot() {
        let mut cfg = LmkdConfig::aosp(false);
        cfg.mode = LmkdMode::Minfree;
        let mut l = Lmkd::new(cfg);
        let mut s = snap();
        // 30k pages (120 MB) above high: the first slot whose minfree exceeds it is adj 250 (126 MB).
        s.free_pages = 6_000 + 30_000;
        s.file_lru_pages = 30_000;
        let k = l.poll(0, &s, &cands()).expect("kill");
        assert_eq!(k.reason, KillReason::Minfree);
        assert_eq!(k.min_adj, 250);
        assert_eq!(k.pid, 3);
    }

    /// `kills = false` (the Fleet artifact's lmkd): the PSI and minfree pressures that kill above
    /// still raise events but kill nothing; the in-kernel driver is not lmkd and still kills.
    #[test]
    fn kill_path_off_silences_userspace_lmkd_only() {
        let off = |mode| {
            let mut cfg = LmkdConfig::aosp(false);
            cfg.mode = mode;
            cfg.kills = false;
            Lmkd::new(cfg)
        };
        let mut psi = off(LmkdMode::Psi);
        let mut s = snap();
        psi.poll(0, &s, &cands());
        s.psi_some_total_ns = 800 * NS_PER_MS;
        s.psi_full_total_ns = 750 * NS_PER_MS;
        s.pgscan_direct = 1;
        assert_eq!(psi.poll(900 * NS_PER_MS, &s, &cands()), None);
        assert_eq!(psi.events, 1, "the PSI event still arrives");
        let mut minfree = off(LmkdMode::Minfree);
        let mut s = snap();
        s.free_pages = 6_000 + 30_000;
        s.file_lru_pages = 30_000;
        assert_eq!(minfree.poll(0, &s, &cands()), None);
        let mut driver = off(LmkdMode::InKernel);
        s.pgscan_kswapd = 1;
        assert!(
            driver.poll(0, &s, &cands()).is_some(),
            "the in-kernel driver kills"
        );
    }
}
