//! Pressure stall information for memory (`/proc/pressure/memory`), as cumulative totals,
//! aggregated over CPUs as Linux does.
//!
//! Linux (kernel/sched/psi.c, 4.20+ and the Android common kernels' 4.9/4.14 backports) keeps a
//! state per CPU: `test_state` counts `PSI_MEM_SOME` while a task of that CPU is in a memory
//! stall (`tasks[NR_MEMSTALL]`) and `PSI_MEM_FULL` while, in addition, no task of that CPU runs
//! (`tasks[NR_MEMSTALL] && !tasks[NR_RUNNING]`); `PSI_NONIDLE` while any task is running or
//! stalled. Each aggregation (`collect_percpu_times`, with `get_recent_times` giving every CPU's
//! state and non-idle time since the last one) adds to the system total
//! `Σ_cpu state_time_cpu × nonidle_cpu / Σ_cpu nonidle_cpu`. lmkd's PSI triggers make the kernel
//! aggregate every `window / UPDATES_PER_WINDOW` (100 ms for its 1 s window) while active.
//!
//! Modelled: fixed [`PSI_PERIOD`] aggregation periods; one model task per CPU (a phone has 8
//! cores, the model rarely has more than a handful of busy tasks at once), so a CPU's state is its
//! task's: SOME while the task stalls, FULL while it stalls *sleeping* (I/O waits, writeback
//! throttling) — a task running in a memory stall (reclaim, compaction, zram decompression)
//! is on the runqueue, so its CPU is not FULL (≤ 5.15; 5.16's `NR_MEMSTALL_RUNNING` counts it,
//! [`Psi::full_counts_running`]). A task is non-idle while it stalls, and the foreground task
//! ([`Kernel::set_foreground_task`]: the UI of the app in front, with its RenderThread and
//! SurfaceFlinger taken as one busy CPU) for the whole time it is in front. So a stall of the
//! only non-idle task counts fully, and a background app's stall while the foreground app runs
//! counts `stall × stall / (stall + foreground time)`.
//!
//! Simplified, and the direction of the error: other tasks' running time (background ticks'
//! minor faults, GC and kswapd CPU outside stalls, system_server) is not non-idle time, which
//! overstates the weight of the stalls that are recorded; the foreground UI is taken as busy even
//! while the user only reads (no frames), which understates background stalls then; no two
//! model tasks share a CPU (Linux's per-CPU FULL would be rarer with more tasks than cores);
//! the periods are aligned to multiples of [`PSI_PERIOD`] rather than started by state changes.
//! Stalls are recorded when the simulation computes them, which may be ahead of other events:
//! each period's contribution is recomputed as records arrive (within [`PSI_HORIZON`] periods)
//! but never lowered (lmkd reads growth), so a late record that adds non-idle time to a counted
//! period overstates it slightly; lmkd sees a launch's stalls when the launch is computed.

use crate::types::Pid;
use crate::Kernel;
use engine::{Actor, Nanos};
use serde::Serialize;
use std::collections::VecDeque;

/// Aggregation period: lmkd's 1 s trigger window / `UPDATES_PER_WINDOW` (10).
pub const PSI_PERIOD: Nanos = 100_000_000;
/// Periods kept open for records that arrive late (60 s); older ones are final.
pub const PSI_HORIZON: u64 = 600;

/// One task's (one CPU's) stall time within a period.
#[derive(Debug, Clone, Copy)]
struct Cpu {
    task: Actor,
    /// Stalled while running (reclaim, compaction, decompression): SOME.
    run: Nanos,
    /// Stalled while sleeping (I/O, throttling): SOME and FULL.
    sleep: Nanos,
}

#[derive(Debug, Clone, Default)]
struct Period {
    cpus: Vec<Cpu>,
    /// This period's current contributions to the totals.
    some: u64,
    full: u64,
}

/// The periods still open, by key (`time / PSI_PERIOD`): a dense run from `base` to the newest
/// (a key never recorded is an empty period, which counts for nothing), so a record finds its
/// period by index. A record older than [`PSI_HORIZON`] periods behind the newest gets a fresh
/// period of its own (`stale`) that the next [`Periods::prune`] drops: it counts once and is final.
#[derive(Debug, Clone, Default)]
struct Periods {
    base: u64,
    open: VecDeque<Period>,
    stale: Option<(u64, Period)>,
}

impl Periods {
    fn newest(&self) -> Option<u64> {
        (!self.open.is_empty()).then(|| self.base + self.open.len() as u64 - 1)
    }

    /// Period `key`, created empty if it is not open.
    fn entry(&mut self, key: u64) -> &mut Period {
        let Some(newest) = self.newest() else {
            self.base = key;
            self.open.push_back(Period::default());
            return &mut self.open[0];
        };
        if key < newest.saturating_sub(PSI_HORIZON) {
            return &mut self.stale.insert((key, Period::default())).1;
        }
        if key > newest.saturating_add(PSI_HORIZON) {
            // Every open period is past the horizon of this one: the next prune drops them all.
            self.open.clear();
            self.base = key;
        }
        while key < self.base {
            self.open.push_front(Period::default());
            self.base -= 1;
        }
        let i = (key - self.base) as usize;
        if i >= self.open.len() {
            self.open.resize_with(i + 1, Period::default);
        }
        &mut self.open[i]
    }

    /// Period `key`, which [`Self::entry`] gave since the last prune.
    fn get_mut(&mut self, key: u64) -> &mut Period {
        match &mut self.stale {
            Some((k, p)) if *k == key => p,
            _ => &mut self.open[(key - self.base) as usize],
        }
    }

    /// Close the periods older than `keep`.
    fn prune(&mut self, keep: u64) {
        self.stale = None;
        while self.base < keep && self.open.len() > 1 {
            self.open.pop_front();
            self.base += 1;
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Psi {
    pub some_total_ns: u64,
    pub full_total_ns: u64,
    /// Count a task's running stall (reclaim) as FULL on its CPU too (Linux ≥ 5.16,
    /// `NR_MEMSTALL_RUNNING`); false for the ≤ 5.15 kernels of every modelled phone.
    #[serde(skip)]
    pub full_counts_running: bool,
    #[serde(skip)]
    periods: Periods,
    /// Foreground changes `(from, task)`, in time order.
    #[serde(skip)]
    fg: Vec<(Nanos, Option<Actor>)>,
    /// Scratch for the foreground shares of the period being aggregated (host memory only).
    #[serde(skip)]
    fg_scratch: Vec<(Actor, Nanos)>,
}

impl Psi {
    /// Record a memory stall of `task` starting at `start`: `run` ns stalled while running, then
    /// `sleep` ns stalled while sleeping.
    pub fn record(&mut self, start: Nanos, run: Nanos, sleep: Nanos, task: Actor) {
        let mid = start + run;
        self.add(start, mid, task, true);
        self.add(mid, mid + sleep, task, false);
    }

    /// From `now`, `task` is the foreground (continuously non-idle) task; `None`: nothing is.
    pub fn set_foreground(&mut self, now: Nanos, task: Option<Actor>) {
        // A change at or before the last one replaces it (the newest call wins).
        while self.fg.last().is_some_and(|&(t, _)| t >= now) {
            self.fg.pop();
        }
        if self.fg.last().is_none_or(|&(_, t)| t != task) {
            self.fg.push((now, task));
        }
    }

    /// `task` ended at `now`: if it was in front, nothing is from then on.
    pub fn task_exited(&mut self, now: Nanos, task: Actor) {
        if self.fg.last().is_some_and(|&(_, t)| t == Some(task)) {
            self.set_foreground(now, None);
        }
    }

    fn add(&mut self, mut from: Nanos, to: Nanos, task: Actor, running: bool) {
        while from < to {
            let key = from / PSI_PERIOD;
            let end = ((key + 1) * PSI_PERIOD).min(to);
            let p = self.periods.entry(key);
            let i = match p.cpus.iter().position(|c| c.task == task) {
                Some(i) => i,
                None => {
                    p.cpus.push(Cpu {
                        task,
                        run: 0,
                        sleep: 0,
                    });
                    p.cpus.len() - 1
                }
            };
            if running {
                p.cpus[i].run += end - from;
            } else {
                p.cpus[i].sleep += end - from;
            }
            self.reaggregate(key);
            from = end;
        }
        self.prune();
    }

    /// Foreground time per task within `[a, b)`.
    fn fg_within(&self, a: Nanos, b: Nanos, out: &mut Vec<(Actor, Nanos)>) {
        let first = self.fg.partition_point(|&(t, _)| t <= a).saturating_sub(1);
        out.clear();
        for (i, &(t, who)) in self.fg.iter().enumerate().skip(first) {
            if t >= b {
                break;
            }
            let Some(task) = who else { continue };
            let until = self.fg.get(i + 1).map_or(Nanos::MAX, |&(n, _)| n);
            let ns = until.min(b).saturating_sub(t.max(a));
            match out.iter_mut().find(|(w, _)| *w == task) {
                Some(e) => e.1 += ns,
                None => out.push((task, ns)),
            }
        }
    }

    /// Recompute period `key`'s `Σ state × nonidle / Σ nonidle` and move the totals by the change.
    fn reaggregate(&mut self, key: u64) {
        let mut fg = std::mem::take(&mut self.fg_scratch);
        self.fg_within(key * PSI_PERIOD, (key + 1) * PSI_PERIOD, &mut fg);
        let p = self.periods.get_mut(key);
        let (mut some, mut full, mut nonidle) = (0u128, 0u128, 0u128);
        for c in &p.cpus {
            let stall = (c.run + c.sleep).min(PSI_PERIOD);
            let in_front = fg.iter().find(|(w, _)| *w == c.task).map_or(0, |e| e.1);
            let n = stall.max(in_front) as u128;
            let f = if self.full_counts_running {
                stall
            } else {
                c.sleep.min(stall)
            };
            some += stall as u128 * n;
            full += f as u128 * n;
            nonidle += n;
        }
        // Foreground tasks that did not stall in this period are non-idle all the same.
        nonidle += fg
            .iter()
            .filter(|(w, _)| !p.cpus.iter().any(|c| c.task == *w))
            .map(|e| e.1 as u128)
            .sum::<u128>();
        let nonidle = nonidle.max(1);
        let p = self.periods.get_mut(key);
        // Totals only grow (lmkd reads their growth): a record that lowers a period's weighted
        // value (more non-idle time) leaves what was counted.
        let (some, full) = ((some / nonidle) as u64, (full / nonidle) as u64);
        let (some, full) = (some.max(p.some), full.max(p.full));
        self.some_total_ns = self.some_total_ns - p.some + some;
        self.full_total_ns = self.full_total_ns - p.full + full;
        p.some = some;
        p.full = full;
        self.fg_scratch = fg;
    }

    /// Periods older than [`PSI_HORIZON`] behind the newest are final.
    fn prune(&mut self) {
        let Some(newest) = self.periods.newest() else {
            return;
        };
        let keep = newest.saturating_sub(PSI_HORIZON);
        self.periods.prune(keep);
        let from = keep * PSI_PERIOD;
        let first = self.fg.partition_point(|&(t, _)| t <= from).saturating_sub(1);
        if first > 0 {
            self.fg.drain(..first);
        }
    }
}

impl Kernel {
    /// From `now`, the main thread of `pid` is the foreground task (continuously non-idle for
    /// PSI's aggregation); `None` when no app is in front (home screen, screen off).
    pub fn set_foreground_task(&mut self, now: Nanos, pid: Option<Pid>) {
        self.psi.set_foreground(now, pid.map(Actor::AppMain));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `Periods` behaves as an ordered map of periods pruned to the horizon behind its newest
        /// key (what it replaced): every record finds the period a map would give it, late,
        /// stale and far-future keys included.
        #[test]
        fn periods_act_as_a_map_pruned_to_the_horizon(steps in proptest::collection::vec(-1_500i64..1_500, 1..200)) {
            let mut map: std::collections::BTreeMap<u64, u64> = Default::default();
            let mut dense = Periods::default();
            let mut at = 5_000i64;
            for (n, step) in steps.into_iter().enumerate() {
                // Mostly near the newest, sometimes far behind (stale) or far ahead (a jump).
                at = (at + step).max(0);
                let key = at as u64;
                let m = map.entry(key).or_default();
                *m += n as u64 + 1;
                let p = dense.entry(key);
                p.some += n as u64 + 1;
                prop_assert_eq!(dense.get_mut(key).some, *m);
                let newest = *map.keys().next_back().unwrap();
                prop_assert_eq!(dense.newest(), Some(newest));
                let keep = newest.saturating_sub(PSI_HORIZON);
                map.retain(|&k, _| k >= keep);
                dense.prune(keep);
                for (&k, &v) in &map {
                    prop_assert_eq!(dense.get_mut(k).some, v);
                }
            }
        }
    }

    const MS: Nanos = 1_000_000;

    #[test]
    fn one_period_weights_by_nonidle_share() {
        let mut p = Psi::default();
        p.set_foreground(0, Some(Actor::AppMain(1)));
        // A background sleep stall of 50 ms while the foreground runs the whole 100 ms period.
        p.record(0, 0, 50 * MS, Actor::AppMain(2));
        let want = (50 * MS) * (50 * MS) / (150 * MS);
        assert_eq!((p.some_total_ns, p.full_total_ns), (want, want));
    }
}
