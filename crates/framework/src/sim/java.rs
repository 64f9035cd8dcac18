//! Glue to each app's managed runtime (`runtime::JavaApp`): runtime steps on the app's threads,
//! the GCs the runtime schedules, churn, and GC totals when a heap is retired.

use super::*;

impl Simulation {
    /// Run `f` on `app`'s Java heap with the kernel as its page backing (runtime CPU goes to the
    /// kernel's ledger), then schedule the GC the runtime asked for, if any. `None` if the app
    /// has no running process.
    pub(super) fn with_java<R>(
        &mut self,
        app: usize,
        now: Nanos,
        f: impl FnOnce(&mut JavaApp, &mut Kernel, &mut engine::CpuLedger) -> R,
    ) -> Option<R> {
        let state = self.rt[app].state;
        let japp = self.rt[app].java.as_mut()?;
        let gcs_before = japp.rt.history.len();
        let mut ledger = engine::CpuLedger::default();
        let out = f(japp, &mut self.k, &mut ledger);
        self.k.cpu.absorb(&ledger);
        // Timers the app's runtime hooks asked for go to the same queue as the kernel's.
        for (at, token) in japp.rt.timers.drain() {
            self.k.timers.schedule(at, token);
        }
        self.gcs
            .extend(japp.rt.history[gcs_before..].iter().map(|g| GcRecord {
                t: g.start,
                app: app as u32,
                state,
                cause: g.cause,
                sticky: g.sticky,
                compacting: g.compacting,
                visits: g.visits,
                bytes_copied: g.bytes_copied,
                pages_touched: g.pages_touched,
                cpu_ns: g.cpu_ns,
                stall_ns: g.stall_ns,
                pause_ns: g.pause_ns,
            }));
        if let Some(due) = japp.pending_gc() {
            let inc = self.rt[app].lmkd_seq;
            if self.rt[app].gc_due != Some(due) {
                self.rt[app].gc_due = Some(due);
                self.q.push(due.max(now), Ev::JavaGc { app, inc });
            }
        }
        Some(out)
    }

    /// A main-thread step of the app's Java code at `t`: returns when it ends, or `None` if the
    /// app is not running or died meanwhile (an OOM kill during the step, or its heap is exhausted:
    /// the app crashes with an `OutOfMemoryError`).
    pub(super) fn java_step(
        &mut self,
        app: usize,
        t: Nanos,
        f: impl FnOnce(
            &mut JavaApp,
            &mut Kernel,
            &mut engine::CpuLedger,
        ) -> Result<runtime::StepCost, runtime::HeapError>,
    ) -> Option<Nanos> {
        let pid = self.rt[app].pid?;
        match self.with_java(app, t, f)? {
            Ok(c) if self.alive(pid) => Some(t + c.main_stall.ns),
            Ok(_) => {
                self.collect_oom_kills(t);
                None
            }
            Err(_) => {
                self.collect_oom_kills(t);
                self.kill(t, app, KillReason::JavaOom);
                None
            }
        }
    }

    /// A GC the runtime scheduled (stock: the collector transition 5 s after going to the
    /// background) runs on the app's GC thread.
    pub(super) fn java_gc(&mut self, t: Nanos, app: usize, inc: u64) {
        if self.rt[app].lmkd_seq != inc || self.rt[app].pid.is_none() {
            return;
        }
        self.rt[app].gc_due = None;
        let bg = self.rt[app].state != AppState::Foreground;
        let ran = self.with_java(app, t, |j, k, l| j.tick(t, k, l));
        if let Some(Some(_)) = ran {
            if bg {
                self.gc.background_collections += 1;
            }
        }
        self.collect_oom_kills(t);
    }

    /// A churn round of the app's Java code (in every app state).
    pub(super) fn churn(&mut self, t: Nanos, app: usize, inc: u64) {
        if self.rt[app].lmkd_seq != inc || self.rt[app].pid.is_none() {
            return;
        }
        let bg = self.rt[app].state != AppState::Foreground;
        let before = self.rt[app].java.as_ref().map_or(0, |j| j.rt.history.len());
        let ok = self.java_step(app, t, |j, k, l| j.churn(t, k, l).map(|x| x.0));
        if let Some(end) = ok {
            self.churn_rounds.push(ChurnRound {
                app: app as u32,
                start: t,
                end,
            });
        }
        let Some(j) = self.rt[app].java.as_ref() else {
            return;
        };
        if bg {
            self.gc.background_collections += (j.rt.history.len() - before) as u64;
        }
        let next = j.next_churn();
        if ok.is_some() && next != Nanos::MAX {
            self.q.push(next, Ev::Churn { app, inc });
        }
    }

    /// Drop `app`'s Java heap (its process is gone or the run ended), adding its GCs to the totals.
    pub(super) fn retire_java(&mut self, app: usize) {
        let Some(j) = self.rt[app].java.take() else { return };
        let g = &mut self.gc;
        for st in &j.rt.history {
            g.collections += 1;
            if st.sticky {
                g.sticky += 1;
            } else {
                g.full += 1;
            }
            g.visits += st.visits;
            g.bytes_copied += st.bytes_copied;
            g.bytes_freed += st.freed_bytes;
            g.cpu_ns += st.cpu_ns;
            g.fault_stall_ns += st.stall_ns;
        }
        self.rt[app].gc_due = None;
    }
}
