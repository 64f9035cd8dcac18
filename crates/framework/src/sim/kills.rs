//! Process death and the cached-app list: OOM kills, lmkd polls, the cached-process limit,
//! `oom_score_adj` ranks.

use super::*;

impl Simulation {
    pub(super) fn collect_oom_kills(&mut self, now: Nanos) {
        for pid in self.k.take_oom_kills() {
            if let Some(app) = self.rt.iter().position(|r| r.pid == Some(pid)) {
                self.mark_dead(now, app, KillReason::KernelOom);
            }
        }
    }

    /// Bookkeeping after a process died (the kernel already freed its memory).
    pub(super) fn mark_dead(&mut self, now: Nanos, app: usize, reason: KillReason) {
        if reason != KillReason::User && self.cached_at_first_kill.is_none() {
            self.cached_at_first_kill = Some(self.cached_count());
        }
        self.retire_java(app);
        let r = &mut self.rt[app];
        r.pid = None;
        r.state = AppState::NotRunning;
        r.built = 0;
        r.ui_hidden = false;
        r.gen += 1;
        if self.foreground == Some(app) {
            self.foreground = None;
        }
        *self.kills.entry(reason.name()).or_insert(0) += 1;
        self.kill_log.push(KillRecord {
            t: now,
            app: app as u32,
            reason: reason.name(),
        });
        self.per_app[app].kills += 1;
        self.framework_hook(now, Actor::Kernel, |h, k| h.on_killed(k, app));
    }

    pub(super) fn kill(&mut self, now: Nanos, app: usize, reason: KillReason) {
        if let Some(pid) = self.rt[app].pid {
            self.k
                .cpu
                .charge(Actor::Lmkd, Category::Lifecycle, 200 * engine::NS_PER_US);
            self.k.exit(pid);
            self.mark_dead(now, app, reason);
        }
    }

    pub(super) fn set_adj(&mut self, app: usize, adj: i16) {
        if let Some(pid) = self.rt[app].pid {
            self.k.set_oom_score_adj(pid, adj);
        }
    }

    /// Apps alive and not in the foreground.
    pub(super) fn cached_count(&self) -> u32 {
        self.rt
            .iter()
            .filter(|r| r.pid.is_some() && r.state != AppState::Foreground)
            .count() as u32
    }

    /// Re-rank cached apps in LRU order (most recently used gets the lowest cached adj) and
    /// enforce the cached-process limit.
    pub(super) fn update_cached(&mut self, now: Nanos) {
        self.cached_peak = self.cached_peak.max(self.cached_count());
        let alive = self.rt.iter().filter(|r| r.pid.is_some()).count() as u32;
        self.alive_peak = self.alive_peak.max(alive);
        let mut cached: Vec<usize> = (0..self.rt.len())
            .filter(|&a| self.rt[a].state == AppState::Background)
            .collect();
        cached.sort_by(|&a, &b| self.rt[b].last_fg.cmp(&self.rt[a].last_fg).then(a.cmp(&b)));
        for (rank, &a) in cached.iter().enumerate() {
            self.set_adj(a, cached_adj(rank));
        }
        // OomAdjuster (Android 10 `updateOomAdjLockedInner`): past `cachedProcessLimit` =
        // CUR_MAX_CACHED_PROCESSES - CUR_MAX_EMPTY_PROCESSES (`computeEmptyProcessLimit`: half)
        // cached activity processes, the least recent is killed ("cached #N"). The previous app
        // (`mPreviousProcess`: PREVIOUS_APP_ADJ, PROCESS_STATE_LAST_ACTIVITY) is not a cached
        // process, so it is not counted.
        let limit = cached_process_limit(self.cfg.max_cached) + 1;
        while cached.len() > limit {
            let a = cached.pop().expect("nonempty");
            self.kill(now, a, KillReason::CachedLimit);
        }
    }

    pub(super) fn snapshot(&self) -> MemSnapshot {
        let k = &self.k;
        let wm = k.params.watermarks;
        let (mut total, mut stored) = (0, 0);
        for b in k.backends() {
            let u = b.usage();
            total += u.capacity_pages;
            stored += u.stored_pages;
        }
        let file_lru = k
            .processes()
            .iter()
            .filter(|p| p.alive)
            .map(|p| p.lru.file() as u64)
            .sum();
        MemSnapshot {
            free_pages: k.free_pages(),
            wmark_min: wm.min,
            wmark_low: wm.low,
            wmark_high: wm.high,
            file_lru_pages: file_lru,
            swap_total_pages: total,
            swap_free_pages: total - stored,
            workingset_refault_file: k.vmstat.workingset_refault_file,
            pgscan_direct: k.vmstat.pgscan_direct,
            pgscan_kswapd: k.vmstat.pgscan_kswapd,
            psi_some_total_ns: k.psi.some_total_ns,
            psi_full_total_ns: k.psi.full_total_ns,
        }
    }

    pub(super) fn lmkd_poll(&mut self, t: Nanos) {
        let snap = self.snapshot();
        let cands: Vec<Candidate> = (0..self.rt.len())
            .filter_map(|a| {
                let r = &self.rt[a];
                let pid = r.pid?;
                let p = self.k.process(pid)?;
                Some(Candidate {
                    pid,
                    adj: p.oom_score_adj,
                    rss_pages: p.rss() + p.counters.swap,
                    seq: r.lmkd_seq,
                })
            })
            .collect();
        if let Some(kill) = self.lmkd.poll(t, &snap, &cands) {
            if let Some(app) = self.rt.iter().position(|r| r.pid == Some(kill.pid)) {
                self.kill(t, app, kill.reason);
            }
        }
        let swap_low = snap.swap_total_pages > 0 && snap.swap_free_pages * 10 < snap.swap_total_pages;
        let next = t + self.lmkd.poll_period(swap_low);
        if next <= self.end {
            self.q.push(next, Ev::LmkdPoll);
        }
    }
}

/// ActivityManager's limit on cached activity processes for `CUR_MAX_CACHED_PROCESSES` =
/// `max_cached`: what is left after the empty-process share (`computeEmptyProcessLimit`:
/// `max_cached / 2`), 16 for the default 32.
pub fn cached_process_limit(max_cached: usize) -> usize {
    max_cached - max_cached / 2
}
