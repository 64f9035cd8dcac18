//! Fleet's framework and kernel sides: HOT_RUNTIME (launch pages protected, refreshed while the
//! app stays in the background, released `T_F` after it returns) and the reclaim verdict that
//! honours the protection until nothing else is left (Fleet §5.1, §5.3.2).

use super::{token, untoken, State, T_HOT, T_STOP};
use crate::Shared;
use engine::HookCx;
use framework::sim::{AppView, PolicyKernel};
use framework::FrameworkHooks;
use kernel::hooks::{stock_inactive_verdict, PageView, ReclaimHook, ScanControl, Verdict};
use kernel::types::Pid;

/// Framework part: applies and releases the HOT_RUNTIME protection.
pub struct Lifecycle(pub Shared<State>);

impl Lifecycle {
    /// Clear the protected bit of every range `pid` holds (Fleet stopped, or a new episode).
    fn release(&self, k: &mut PolicyKernel, pid: Pid) {
        let ranges = self.0.with(|s| {
            s.procs
                .get_mut(&pid)
                .map(|p| std::mem::take(&mut p.protected))
                .unwrap_or_default()
        });
        for (f, n) in ranges {
            k.set_protected(f, n, false);
        }
    }
}

impl FrameworkHooks for Lifecycle {
    fn metrics(&self, out: &mut std::collections::BTreeMap<String, f64>) {
        self.0.with(|s| {
            let x = &s.stats;
            let per_gc = |v: u64| {
                if x.bgcs == 0 {
                    0.0
                } else {
                    v as f64 / x.bgcs as f64
                }
            };
            let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
            let heap: u64 = x.class_bytes[1..].iter().sum();
            let seen: u64 = x.launch_seen[1..].iter().sum();
            let pct = |v: u64, t: u64| 100.0 * v as f64 / t.max(1) as f64;
            for (k, v) in [
                ("groupings", x.groupings as f64),
                ("groupings_cancelled", x.groupings_cancelled as f64),
                ("bgcs", x.bgcs as f64),
                ("bgc_objects_visited_per_gc", per_gc(x.bgc_visits)),
                ("bgc_pages_touched_per_gc", per_gc(x.bgc_pages_touched)),
                ("launch_mib_grouped", mib(x.class_bytes[1])),
                ("ws_mib_grouped", mib(x.class_bytes[2])),
                ("cold_mib_grouped", mib(x.class_bytes[3])),
                ("card_marks", x.card_marks as f64),
                ("dirty_cards_max", x.dirty_cards_max as f64),
                ("card_roots", x.card_roots as f64),
                ("pages_cold_hinted", x.pages_cold_hinted as f64),
                ("pages_hot_hinted", x.pages_hot_hinted as f64),
                ("protected_kept", x.protected_kept as f64),
                ("protected_reclaimed", x.protected_reclaimed as f64),
                // Fig. 6a (row 8): NRO/FYO share of the grouped heap and of launch re-accesses.
                ("protected_seen", x.protected_seen as f64),
                ("nro_heap_pct", pct(x.nro_bytes, heap)),
                ("fyo_heap_pct", pct(x.fyo_bytes, heap)),
                ("nro_fyo_heap_pct", pct(x.union_bytes, heap)),
                ("nro_fyo_coverage_pct", pct(x.launch_seen_union, seen)),
            ] {
                out.insert(k.to_string(), v);
            }
        });
    }

    fn on_background(&mut self, k: &mut PolicyKernel, app: &AppView) {
        // A new background episode: the previous one's protection ends (its regions move at the
        // next grouping GC).
        self.release(k, app.pid);
        self.0.with(|s| {
            if let Some(p) = s.procs.get_mut(&app.pid) {
                p.active = false;
            }
        });
    }

    fn on_killed(&mut self, _k: &mut PolicyKernel, _app: usize) {
        // The process's memory is gone with its page flags; forget nothing keyed by app index
        // (state is keyed by pid, which is not reused within a run).
    }

    fn on_timer(&mut self, k: &mut PolicyKernel, t: u64) {
        let Some((kind, episode, pid)) = untoken(t) else {
            return;
        };
        let (cfg, cur) = self
            .0
            .with(|s| (s.cfg, s.procs.get(&pid).map(|p| (p.episode & 0xFFFF, p.active))));
        let (Some(cfg), Some((cur_episode, active))) = (cfg, cur) else {
            return;
        };
        if cur_episode != episode {
            return; // a timer of an older episode
        }
        let alive = k.process(pid).is_some_and(|p| p.alive);
        if kind == T_STOP || !alive || !active {
            self.release(k, pid);
            self.0.with(|s| {
                if let Some(p) = s.procs.get_mut(&pid) {
                    p.active = false;
                    p.launch.clear();
                }
            });
            return;
        }
        if kind == T_HOT {
            self.release(k, pid);
            let launch = self
                .0
                .with(|s| s.procs.get(&pid).map(|p| p.launch.clone()).unwrap_or_default());
            let pages: u64 = launch.iter().map(|r| u64::from(r.1)).sum();
            for &(f, n) in &launch {
                k.set_protected(f, n, true);
            }
            k.cx().charge((pages as f64 * cfg.hint_ns) as u64);
            let now = k.now();
            self.0.with(|s| {
                s.stats.pages_hot_hinted += pages;
                if let Some(p) = s.procs.get_mut(&pid) {
                    p.protected = launch;
                }
            });
            // Refreshed periodically while the app stays in the background.
            k.cx().schedule(now + cfg.hot_refresh, token(T_HOT, episode, pid));
        }
    }
}

/// Kernel part: a protected (launch) page at the inactive tail is activated instead of reclaimed,
/// unless reclaim has reached its last-resort priority.
pub struct FleetReclaim(pub Shared<State>);

impl ReclaimHook for FleetReclaim {
    fn inactive_verdict(&mut self, _cx: &mut HookCx, sc: &ScanControl, page: &PageView) -> Verdict {
        let v = stock_inactive_verdict(page);
        if page.protected() {
            self.0.with(|s| s.stats.protected_seen += 1);
        }
        if !page.protected() || v != Verdict::Reclaim {
            return v;
        }
        self.0.with(|s| {
            let yield_at = s.cfg.map_or(0, |c| c.hot_yield_priority);
            if sc.priority > yield_at {
                s.stats.protected_kept += 1;
                Verdict::Activate
            } else {
                s.stats.protected_reclaimed += 1;
                Verdict::Reclaim
            }
        })
    }
}
