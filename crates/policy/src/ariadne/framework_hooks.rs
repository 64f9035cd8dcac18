//! Ariadne's framework hooks: the hot list from each launch's touched pages (HotnessOrg's
//! hotness initialisation and update), the app LRU, hot-list coverage/accuracy and swap-in
//! locality metrics, and the periodic compressed writeback.

use super::state::{demand_stream, locality, predecomp_used, Class, State};
use crate::Shared;
use engine::Stall;
use framework::sim::{AppView, LaunchKind, PolicyKernel};
use framework::FrameworkHooks;
use kernel::swap::{SwapMaintenance, WritebackMode};
use kernel::types::{PageIdx, PageState};

/// Timer token of the writeback period.
const WRITEBACK: u64 = 1;
/// Locality window (swap-ins), artifact `locality_check.py`.
const WINDOW: usize = 256;

pub(crate) struct Lifecycle(pub Shared<State>);

/// |a ∩ b| of two sorted, deduplicated lists.
fn common(a: &[PageIdx], b: &[PageIdx]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// A metric value for the JSON (0 for "not measured": JSON has no NaN).
fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

/// Share of `pages` (the app's anon pages still mapped) that are resident now: the artifact's
/// accuracy test. A page swapped out and not swapped back in by now is "cold" (mispredicted);
/// a resident one was never swapped out or was brought back at TTID, TTFD or later. Freed pages
/// left the artifact's log: not counted. `None` when no page is still mapped.
fn resident_share(k: &PolicyKernel, pid: kernel::types::Pid, pages: &[PageIdx]) -> Option<f64> {
    let (mut used, mut live) = (0u64, 0u64);
    for &i in pages {
        match k.page(i) {
            Some(v) if v.pid == pid && v.kind.is_anon() => match v.state {
                PageState::Resident => {
                    used += 1;
                    live += 1;
                }
                PageState::Swapped => live += 1,
                _ => {}
            },
            _ => {}
        }
    }
    (live > 0).then(|| used as f64 / live as f64)
}

/// Sorted runs `(first, pages)` of a page list.
fn runs(pages: &[PageIdx]) -> Vec<(PageIdx, u32)> {
    let mut v = pages.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut out: Vec<(PageIdx, u32)> = Vec::new();
    for p in v {
        match out.last_mut() {
            Some((f, n)) if *f + *n == p => *n += 1,
            _ => out.push((p, 1)),
        }
    }
    out
}

impl FrameworkHooks for Lifecycle {
    fn metrics(&self, out: &mut std::collections::BTreeMap<String, f64>) {
        let x = self.0.with(|s| s.stats.with(|x| x.clone()));
        {
            for (k, v) in [
                ("relaunches", x.relaunches as f64),
                ("hot_list_coverage", finite(x.coverage())),
                ("hot_list_accuracy", finite(x.accuracy())),
                ("hot_list_pages_mean", x.mean_sizes().0),
                ("relaunch_touched_pages_mean", x.mean_sizes().1),
                ("relaunch_ttid_swapins_mean", x.mean_sizes().2),
                ("hot_data_similarity", finite(x.similarity().0)),
                ("swapin_p2", x.p2()),
                ("predecomp_loaded", x.predecomp_loaded as f64),
                ("predecomp_hits", x.predecomp_hits as f64),
                ("predecomp_wasted", x.predecomp_wasted as f64),
                ("stored_cold", x.stored_by_class[0] as f64),
                ("stored_warm", x.stored_by_class[1] as f64),
                ("stored_hot", x.stored_by_class[2] as f64),
                ("writebacks", x.writebacks as f64),
                ("escalations", x.escalations as f64),
            ] {
                out.insert(k.to_string(), v);
            }
        }
    }

    fn on_launch_start(&mut self, _k: &mut PolicyKernel, app: &AppView, _kind: LaunchKind) -> Stall {
        self.0.with(|s| {
            let e = s.app(app.app);
            e.pid = app.pid;
            s.fg = Some(app.pid);
            s.launching = Some(app.pid);
            s.launch_faults.clear();
            s.launch_pre.clear();
        });
        Stall::ZERO
    }

    fn on_launch_end(&mut self, k: &mut PolicyKernel, app: &AppView, kind: LaunchKind, touched: &[PageIdx]) {
        let pid = app.pid;
        // The launch's anonymous pages, first touch order.
        let mut anon: Vec<PageIdx> = touched
            .iter()
            .copied()
            .filter(|&i| k.page(i).is_some_and(|v| v.kind.is_anon() && v.pid == pid))
            .collect();
        let mut sorted = anon.clone();
        sorted.sort_unstable();
        sorted.dedup();
        let (moves, ehl, unlock, lock) = self.0.with(|s| {
            // PreDecomp of this launch: hits replayed on the touch order.
            let pre = std::mem::take(&mut s.launch_pre);
            let used = predecomp_used(&s.launch_faults, &pre, touched, s.cfg.predecomp_buffer);
            let hits = used.iter().filter(|&&u| u).count() as u64;
            for &(_, i) in &pre {
                s.clear_pre(i, pid);
            }
            s.stats.with(|st| {
                st.predecomp_hits += hits;
                st.predecomp_wasted += pre.len() as u64 - hits;
            });
            // Loads from before the launch still in the FIFO.
            for &i in touched {
                s.note_use(i, pid);
            }
            let stream = demand_stream(&s.launch_faults, &pre, &used);
            // First-touch order, deduplicated, capped at the profiled hot-list size.
            let mut seen = sorted.clone();
            anon.retain(|i| match seen.binary_search(i) {
                Ok(p) => {
                    seen.remove(p);
                    true
                }
                Err(_) => false,
            });
            // A relaunch's pages past the profiled cap were touched too: a touched cold page is
            // warm (§4.2 "Promotion"; artifact `compression_scale_identify.py`: access-log
            // entries after the hot window are scale 1, medium chunks). Left cold they would be
            // grouped into large chunks, written back, and the next relaunch would read them
            // from flash. A first launch's extra pages are new data: cold (§4.2 initialisation).
            let beyond = anon.split_off(anon.len().min(s.cfg.hot_list_pages));
            let mut promoted = 0u64;
            for &i in beyond.iter().filter(|_| kind == LaunchKind::Hot) {
                if s.class(i, pid) == Class::Cold {
                    s.set_class(i, pid, Class::Warm);
                    promoted += 1;
                }
            }
            let old = std::mem::take(&mut s.app(app.app).hot);
            let scored = s.app(app.app).hot_from_relaunch;
            let hot = kind == LaunchKind::Hot;
            // Fig. 5: this relaunch's whole launch set against the previous relaunch's.
            let prev = std::mem::take(&mut s.app(app.app).launch_set);
            if hot && s.app(app.app).launch_set_hot && !prev.is_empty() && !sorted.is_empty() {
                let sim = common(&prev, &sorted) as f64 / sorted.len() as f64;
                s.stats.with(|st| {
                    st.pairs += 1;
                    st.similarity_sum += sim;
                });
                s.app(app.app).pending_reuse = prev;
            }
            if hot && scored && !old.is_empty() && !sorted.is_empty() {
                let mut h = old.clone();
                h.sort_unstable();
                let both = common(&h, &sorted) as f64;
                let (ov_t, ov_h) = (both / sorted.len() as f64, both / h.len() as f64);
                // TTID swap-ins: the pages this relaunch brought back from swap before its first
                // frame (demand faults and the pre-loads it used), the app's anon pages only.
                let mut ttid: Vec<PageIdx> = stream
                    .iter()
                    .copied()
                    .filter(|&i| k.page(i).is_some_and(|v| v.kind.is_anon() && v.pid == pid))
                    .collect();
                ttid.sort_unstable();
                ttid.dedup();
                let cov = (!ttid.is_empty()).then(|| common(&h, &ttid) as f64 / ttid.len() as f64);
                let win: Vec<(f64, f64)> = stream
                    .chunks(WINDOW)
                    .filter(|w| w.len() >= 16)
                    .map(|w| locality(s, w))
                    .collect();
                s.stats.with(|st| {
                    st.relaunches += 1;
                    st.overlap_touched_sum += ov_t;
                    st.overlap_list_sum += ov_h;
                    st.hot_pages_sum += h.len() as u64;
                    st.touched_pages_sum += sorted.len() as u64;
                    st.ttid_swapins_sum += ttid.len() as u64;
                    if let Some(c) = cov {
                        st.coverage_n += 1;
                        st.coverage_sum += c;
                    }
                    for (p2, p4) in win {
                        st.windows += 1;
                        st.p2_sum += p2;
                        st.p4_sum += p4;
                    }
                });
                // Accuracy is decided when the app leaves the foreground (TTFD and later use).
                s.app(app.app).pending_accuracy = h;
            }
            // Hotness update: the old hot list becomes warm, this launch's pages hot.
            let mut moves = promoted;
            for &i in &old {
                if s.class(i, pid) == Class::Hot {
                    s.set_class(i, pid, Class::Warm);
                    moves += 1;
                }
            }
            for &i in &anon {
                s.set_class(i, pid, Class::Hot);
            }
            moves += anon.len() as u64;
            let lock = runs(&anon);
            let unlock = runs(&old);
            let e = s.app(app.app);
            e.hot = anon;
            e.hot_from_relaunch = kind == LaunchKind::Hot;
            e.launch_set = sorted;
            e.launch_set_hot = kind == LaunchKind::Hot;
            e.pid = pid;
            s.launching = None;
            s.launch_faults.clear();
            (moves * s.cfg.lru_op_ns, s.cfg.exclude_hot, unlock, lock)
        });
        k.cx().charge(moves);
        if ehl {
            // EHL: the hot list stays uncompressed in DRAM, whichever path would page it out
            // (reclaim or the framework's cached-app compaction): it is kept on the unevictable
            // list until it stops being hot.
            for (first, n) in unlock {
                k.munlock(first, n);
            }
            for (first, n) in lock {
                k.mlock(first, n);
            }
        }
    }

    fn on_foreground(&mut self, k: &mut PolicyKernel, app: &AppView) {
        let now = k.now();
        let start = self.0.with(|s| {
            s.fg = Some(app.pid);
            s.app(app.app).last_used = now;
            let first = s.cfg.writeback && s.zram_capacity_pages > 0 && !s.writeback_armed;
            s.writeback_armed = true;
            first.then_some(s.cfg.writeback_period)
        });
        if let Some(p) = start {
            k.cx().schedule(now + p, WRITEBACK);
        }
    }

    fn on_background(&mut self, k: &mut PolicyKernel, app: &AppView) {
        let now = k.now();
        let (list, prev) = self.0.with(|s| {
            if s.fg == Some(app.pid) {
                s.fg = None;
            }
            let e = s.app(app.app);
            e.last_used = now;
            (
                std::mem::take(&mut e.pending_accuracy),
                std::mem::take(&mut e.pending_reuse),
            )
        });
        let acc = resident_share(k, app.pid, &list);
        let reused = resident_share(k, app.pid, &prev);
        self.0.with(|s| {
            s.stats.with(|st| {
                if let Some(a) = acc {
                    st.accuracy_n += 1;
                    st.accuracy_sum += a;
                }
                if let Some(r) = reused {
                    st.reused_n += 1;
                    st.reused_sum += r;
                }
            })
        });
    }

    fn on_killed(&mut self, _k: &mut PolicyKernel, app: usize) {
        self.0.with(|s| {
            let pid = s.app(app).pid;
            if s.fg == Some(pid) {
                s.fg = None;
            }
            let e = s.app(app);
            e.pid = 0;
            e.hot.clear();
            e.hot_from_relaunch = false;
            e.launch_set.clear();
            e.launch_set_hot = false;
            e.pending_accuracy.clear();
            e.pending_reuse.clear();
        });
    }

    fn on_timer(&mut self, k: &mut PolicyKernel, token: u64) {
        if token != WRITEBACK {
            return;
        }
        let now = k.now();
        let swapped = k.meminfo().swapped;
        let (due, period, max) = self.0.with(|s| {
            let due = swapped as f64 >= s.cfg.writeback_at * s.zram_capacity_pages as f64;
            if due {
                s.stats.with(|st| st.writebacks += 1);
            }
            (due, s.cfg.writeback_period, s.cfg.writeback_max_pages)
        });
        if due {
            // Cold chunks not loaded since the last marking (a whole period) go to flash
            // compressed, multi-page ones first. Only cold-list data: §4.1's placement is hot in
            // DRAM, warm in zpool, cold on flash (warm chunks stay in zpool).
            k.swap_maintenance(
                0,
                SwapMaintenance::Writeback {
                    mode: WritebackMode::IdleTagBelow(Class::Warm as u8),
                    max_pages: max,
                },
            );
        }
        k.swap_maintenance(0, SwapMaintenance::MarkIdle);
        k.cx().charge(1_000);
        k.cx().schedule(now + period, WRITEBACK);
    }
}
