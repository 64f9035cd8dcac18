//! Background and emergency reclaim drivers: kswapd (`balance_pgdat` in steps), direct reclaim
//! on the allocating thread, kcompactd, and the kernel OOM killer. The LRU walk itself is in
//! `reclaim.rs`.
//!
//! Modelled: kswapd wakes below the low watermark and reclaims to the high one, lowering its
//! priority while short of its target and giving up after `MAX_RECLAIM_RETRIES` fruitless passes
//! at priority 0; direct reclaim runs priorities 12..0 until `SWAP_CLUSTER_MAX` pages; the OOM
//! killer follows `oom_badness`. Simplified: kswapd advances its own clock by the work it did.

use crate::{Kernel, DEF_PRIORITY, KSWAPD_STEP_PAGES, MAX_RECLAIM_RETRIES, SWAP_CLUSTER_MAX};
use engine::{Actor, Category, Nanos, Stall};

#[derive(Debug, Clone, Default)]
pub(crate) struct Kswapd {
    pub awake: bool,
    pub clock: Nanos,
    pub priority: u32,
    pub failures: u32,
    /// When the current run started (valid while `awake`).
    pub woke_at: Nanos,
    /// Every finished run `[wake, sleep)` in simulated ns (observation only, for traces).
    pub runs: Vec<(Nanos, Nanos)>,
}

impl Kernel {
    pub(crate) fn wake_kswapd(&mut self, now: Nanos) {
        if !self.kswapd.awake {
            self.kswapd.awake = true;
            self.kswapd.clock = self.kswapd.clock.max(now);
            self.kswapd.failures = 0;
            self.kswapd.woke_at = self.kswapd.clock;
            self.vmstat.kswapd_wakeups += 1;
        }
    }

    /// kswapd's runs so far, `(wake, sleep)` in simulated ns, the current one (if awake) closed at
    /// kswapd's clock. Observation only (Perfetto export).
    pub fn kswapd_runs(&self) -> Vec<(Nanos, Nanos)> {
        let mut r = self.kswapd.runs.clone();
        if self.kswapd.awake {
            r.push((self.kswapd.woke_at, self.kswapd.clock));
        }
        r
    }

    /// Run background kernel work (kswapd, kcompactd, the dirty-page flusher) up to simulated time `t`.
    pub fn advance_to(&mut self, t: Nanos) {
        self.last_now = self.last_now.max(t);
        self.complete_writeback(t);
        self.flush_dirty(t);
        while self.kswapd.awake && self.kswapd.clock < t {
            self.kswapd_step();
        }
        if let Some(order) = self.kcompactd_order.take() {
            let cost = self.compact(order, false);
            self.cpu.charge(Actor::Kcompactd, Category::Compaction, cost);
        }
    }

    /// One step of kswapd's `balance_pgdat`: reclaim up to `KSWAPD_STEP_PAGES` at the current
    /// priority, lowering the priority while short of the target.
    pub(crate) fn kswapd_step(&mut self) {
        let wm = self.params.watermarks;
        let now = self.kswapd.clock;
        self.complete_writeback(now);
        if self.free_pages() >= wm.high {
            // kswapd_try_to_sleep: balanced, it clears compaction's skip marks if a direct
            // compaction completed meanwhile.
            self.buddy.reset_isolation_suitable_if_flushed();
            self.kswapd.awake = false;
            self.kswapd.priority = DEF_PRIORITY;
            self.kswapd.runs.push((self.kswapd.woke_at, self.kswapd.clock));
            return;
        }
        // Enough pages are under writeback to reach the high watermark: wait for them rather
        // than take more (3.18 `congestion_wait(BLK_RW_ASYNC, HZ/10)`; see `writeback.rs`).
        if self.free_pages() + self.writeback_pages >= wm.high {
            let need = wm.high - self.free_pages();
            if let Some(wait) = self.writeback_wait(now, need) {
                let wait = wait.max(1_000);
                self.vmstat.reclaim_throttle_ns += wait;
                // balance_pgdat runs under psi_memstall_enter: kswapd sleeps in a memory stall.
                self.psi.record(now, 0, wait, Actor::Kswapd);
                self.kswapd.clock += wait;
                return;
            }
        }
        let target = KSWAPD_STEP_PAGES
            .min(wm.high.saturating_sub(self.free_pages() + self.writeback_pages))
            .max(1);
        let out = self.shrink_node(now, Actor::Kswapd, target, self.kswapd.priority, true);
        let cost = (out.cpu_ns + out.io_wait_ns).max(1_000);
        self.psi
            .record(now, out.cpu_ns.max(1_000), out.io_wait_ns, Actor::Kswapd);
        self.kswapd.clock += cost;
        // Pages put under writeback count as progress: they are freed when their writes end.
        if out.reclaimed + out.writeback < target {
            if self.kswapd.priority == 0 {
                self.kswapd.failures += 1;
                if self.kswapd.failures >= MAX_RECLAIM_RETRIES {
                    // kswapd gives up; direct reclaim and the OOM killer take over.
                    self.kswapd.awake = false;
                    self.kswapd.priority = DEF_PRIORITY;
                    self.kswapd.runs.push((self.kswapd.woke_at, self.kswapd.clock));
                }
            } else {
                self.kswapd.priority -= 1;
            }
        } else {
            self.kswapd.failures = 0;
        }
    }

    /// Direct reclaim on the allocating thread: priorities 12..0 until `SWAP_CLUSTER_MAX` pages.
    pub(crate) fn direct_reclaim(&mut self, now: Nanos, actor: Actor, stall: &mut Stall) -> u64 {
        self.vmstat.allocstall += 1;
        let mut reclaimed = 0;
        let mut cpu = 0;
        // Of `cpu`, the time spent sleeping (I/O, throttling) rather than running reclaim.
        let mut slept = 0;
        let want = SWAP_CLUSTER_MAX as u64;
        let mut taken = 0;
        self.complete_writeback(now);
        for prio in (0..=DEF_PRIORITY).rev() {
            let out = self.shrink_node(now + cpu, actor, want - taken, prio, false);
            reclaimed += out.reclaimed;
            taken += out.reclaimed + out.writeback;
            cpu += out.cpu_ns + out.io_wait_ns;
            slept += out.io_wait_ns;
            if taken >= want {
                break;
            }
        }
        // Pages under writeback are not free yet: throttle until enough writes complete
        // (`reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK)`, at most HZ/10; see `writeback.rs`).
        if reclaimed < want {
            if let Some(wait) = self.writeback_wait(now + cpu, want - reclaimed) {
                cpu += wait;
                slept += wait;
                self.vmstat.reclaim_throttle_ns += wait;
                reclaimed += self.complete_writeback(now + cpu);
            }
        }
        stall.ns += cpu;
        stall.psi_ns += cpu;
        self.psi.record(now, cpu - slept, slept, actor);
        reclaimed
    }

    /// The kernel OOM killer (`oom_badness`): kill the process with the largest
    /// rss + swap + page tables, adjusted by `oom_score_adj`. Returns false if none is killable.
    pub(crate) fn oom_kill(&mut self) -> bool {
        let total = self.buddy.nr_pages() as i64;
        let victim = self
            .procs
            .iter()
            .filter(|p| p.alive && p.oom_score_adj > -1000)
            .map(|p| {
                let pts = (p.rss() + p.counters.swap) as i64 + p.kernel_allocs.len() as i64;
                (pts + p.oom_score_adj as i64 * total / 1000, p.pid)
            })
            .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
            .map(|(_, pid)| pid);
        match victim {
            Some(pid) => {
                self.vmstat.oom_kill += 1;
                self.exit(pid);
                self.oom_killed.push(pid);
                true
            }
            None => false,
        }
    }
}
