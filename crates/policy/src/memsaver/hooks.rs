//! MemSaver's framework hooks: the phases, B1 two-scan, the scope index, H collection at hot
//! launches and the page-out at the swap moment (see the module doc of [`super`]).

use super::*;
use engine::Stall;
use framework::sim::{AppView, LaunchKind, PolicyKernel};
use framework::FrameworkHooks;
use kernel::types::{flags, Advice, PageKind, PageState};

/// Timer kinds (low 4 bits of a token; then the app index, then its generation).
const T_TRANSITION: u64 = 1;
const T_SWAP: u64 = 2;
const T_MEASURE: u64 = 3;
const T_LRU_F: u64 = 4;

fn token(kind: u64, app: usize, gen: u32) -> u64 {
    kind | ((app as u64 & 0xF_FFFF) << 4) | ((gen as u64) << 24)
}

fn untoken(t: u64) -> (u64, usize, u32) {
    (t & 0xF, ((t >> 4) & 0xF_FFFF) as usize, (t >> 24) as u32)
}

/// The framework part of the policy.
pub(super) struct Lifecycle(pub(super) Shared<State>);

/// Charge `ptes` PTE visits to the hook's actor; returns the time they take.
fn charge_scan(k: &mut PolicyKernel, st: &State, ptes: u64) -> Nanos {
    let ns = (ptes as f64 * st.cfg.pte_scan_ns).round() as Nanos;
    if ns > 0 {
        k.cx().charge(ns);
    }
    st.stats.with(|s| s.ptes_scanned += ptes);
    ns
}

/// The process's mapped ranges (first, pages, kind).
fn ranges(k: &PolicyKernel, pid: Pid) -> Vec<(PageIdx, u32, PageKind)> {
    k.vmas(pid)
}

fn is_anon(kind: PageKind) -> bool {
    kind != PageKind::File
}

/// Idle-page tracking, scan 1: mark every page of `pid` idle. Returns the PTEs visited.
fn mark_all_idle(k: &mut PolicyKernel, pid: Pid) -> u64 {
    let mut n = 0;
    for (first, pages, _) in ranges(k, pid) {
        k.mark_idle(first, pages);
        n += pages as u64;
    }
    n
}

/// Queue `madvise(PAGEOUT)` over `[first, first+n)` if non-empty.
fn flush_run(k: &mut PolicyKernel, run: &mut Option<(PageIdx, u32)>) {
    if let Some((first, n)) = run.take() {
        k.madvise(first, n, Advice::PageOut);
    }
}

impl Lifecycle {
    /// Transition end: B1 two-scan read-out (bit 0) and the scope index ("transfer collection").
    fn transition_end(&mut self, k: &mut PolicyKernel, app: usize) {
        let now = k.now();
        self.0.with(|st| {
            let (pid, gen) = {
                let a = st.app(app);
                a.phase = Phase::Background;
                (a.pid, a.gen)
            };
            let region = st.cfg.region_pages.max(1);
            let mut scope: Vec<PageIdx> = Vec::new();
            let mut ptes = 0u64;
            for (first, pages, kind) in ranges(k, pid) {
                for idx in first..first + pages {
                    let Some(v) = k.page(idx) else { continue };
                    let touched = !v.has(flags::IDLE);
                    let bits = k.policy_bits_mut(idx);
                    if touched {
                        *bits |= B1_BIT;
                    } else {
                        *bits &= !B1_BIT;
                    }
                    if touched && kind == PageKind::File {
                        // The 2 MiB-aligned region of the VMA holding this page.
                        let r = first + (idx - first) / region * region;
                        if scope.last() != Some(&r) {
                            scope.push(r);
                        }
                    }
                }
                ptes += pages as u64;
            }
            st.app(app).scope = scope;
            if st.cfg.swap_delay == 0 {
                charge_scan(k, st, ptes);
                self.swap(k, st, app);
            } else {
                // Start the B2 (stable-state) window: scan 1 again.
                ptes += mark_all_idle(k, pid);
                charge_scan(k, st, ptes);
                let at = now + st.cfg.swap_delay;
                k.cx().schedule(at, token(T_SWAP, app, gen));
            }
        });
    }

    /// The swap moment: keep what the mode keeps, page out the rest (§3.5).
    fn swap(&self, k: &mut PolicyKernel, st: &mut State, app: usize) {
        let cfg = st.cfg;
        let (pid, ctx, gen) = {
            let a = st.app(app);
            (a.pid, a.bg_context, a.gen)
        };
        let observed_b2 = cfg.swap_delay > 0;
        // The bits that keep a page, and whether this moment pages out anything at all.
        let mut kind = "retain";
        let mut keep_bits: u8 = 0;
        let mut keep_touched = false; // pages touched since the last idle marking
        let mut anon_only_all = false; // detection: every anon page goes
        match cfg.keep {
            Keep::None => kind = "none",
            Keep::LruB => keep_touched = true,
            Keep::LruF => {
                keep_bits = LRU_F_BIT | B1_BIT;
                keep_touched = observed_b2;
            }
            _ => {
                if st.plan_collection(app, ctx).is_some() {
                    kind = "detect";
                    anon_only_all = true;
                } else if let Some(m) = st.matching(app, ctx) {
                    keep_bits = match cfg.keep {
                        Keep::AllHB1 => st.all_matching_bits(app, ctx) | B1_BIT,
                        Keep::HB2 => m.bit,
                        _ => m.bit | B1_BIT,
                    };
                    keep_touched = matches!(cfg.keep, Keep::HB1B2 | Keep::HB2);
                } else {
                    kind = "skip";
                }
            }
        }
        let page_out = kind == "retain" || kind == "detect";
        let mut rec = PageOutRec {
            t: k.now(),
            app,
            context: ctx,
            kind,
            ..PageOutRec::default()
        };
        let mut ptes = 0u64;
        let mut run: Option<(PageIdx, u32)> = None;
        for (first, pages, vkind) in ranges(k, pid) {
            ptes += pages as u64;
            let anon = is_anon(vkind);
            for idx in first..first + pages {
                let Some(v) = k.page(idx) else {
                    flush_run(k, &mut run);
                    continue;
                };
                let touched = !v.has(flags::IDLE);
                if observed_b2 && touched {
                    rec.b2 += 1;
                    rec.b2_in_b1 += (v.policy_bits & B1_BIT != 0) as u64;
                }
                if v.state != PageState::Resident {
                    flush_run(k, &mut run);
                    continue;
                }
                if anon {
                    rec.anon_before += 1;
                } else {
                    rec.file_before += 1;
                }
                let kept = if anon_only_all {
                    !anon
                } else {
                    (v.policy_bits & keep_bits != 0) || (keep_touched && touched) || (!anon && !cfg.file)
                };
                if kept {
                    rec.kept_h += (v.policy_bits & keep_bits & H_BITS != 0) as u64;
                    rec.kept_b1 += (v.policy_bits & keep_bits & B1_BIT != 0) as u64;
                }
                if page_out && !kept {
                    match &mut run {
                        Some((f, n)) if *f + *n == idx => *n += 1,
                        _ => {
                            flush_run(k, &mut run);
                            run = Some((idx, 1));
                        }
                    }
                } else {
                    flush_run(k, &mut run);
                }
            }
            flush_run(k, &mut run);
        }
        charge_scan(k, st, ptes);
        let a = st.app(app);
        a.last_swap = kind;
        st.stats.with(|s| s.pageouts.push(rec));
        // Measure the RSS once the queued page-out has been applied (same time, next event).
        let now = k.now();
        k.cx().schedule(now, token(T_MEASURE, app, gen));
    }

    /// Resident (anon, file) pages of `pid`.
    fn rss(k: &PolicyKernel, pid: Pid) -> (u64, u64) {
        let (mut a, mut f) = (0, 0);
        for (first, pages, kind) in ranges(k, pid) {
            let n = (first..first + pages)
                .filter(|&i| k.page(i).is_some_and(|v| v.state == PageState::Resident))
                .count() as u64;
            if is_anon(kind) {
                a += n;
            } else {
                f += n;
            }
        }
        (a, f)
    }

    /// LRU-foreground window tick: fold the last window's accesses into bit 7, start a new one.
    fn lru_f_tick(k: &mut PolicyKernel, pid: Pid) -> u64 {
        let mut ptes = 0;
        for (first, pages, _) in ranges(k, pid) {
            for idx in first..first + pages {
                if k.page(idx).is_none() {
                    continue;
                }
                let touched = !k.is_idle(idx);
                let b = k.policy_bits_mut(idx);
                if touched {
                    *b |= LRU_F_BIT;
                } else {
                    *b &= !LRU_F_BIT;
                }
            }
            k.mark_idle(first, pages);
            ptes += 2 * pages as u64;
        }
        ptes
    }
}

impl FrameworkHooks for Lifecycle {
    fn metrics(&self, out: &mut std::collections::BTreeMap<String, f64>) {
        self.0.with(|st| {
            st.stats.with(|x| {
                for (k, v) in [
                    ("h_collections", x.collections as f64),
                    ("h_collections_skipped", x.skipped as f64),
                    ("pageout_moments", x.pageouts.len() as f64),
                    ("ptes_scanned", x.ptes_scanned as f64),
                    ("ptes_scanned_on_launch_path", x.ptes_scanned_launch as f64),
                ] {
                    out.insert(k.to_string(), v);
                }
            })
        });
    }

    fn on_launch_start(&mut self, k: &mut PolicyKernel, app: &AppView, kind: LaunchKind) -> Stall {
        let now = k.now();
        self.0.with(|st| {
            let cfg = st.cfg;
            {
                let a = st.app(app.app);
                if a.pid != app.pid {
                    // A new process: its PTEs (and their bits) are new.
                    let gen = a.gen;
                    *a = AppState {
                        gen,
                        ..AppState::default()
                    };
                    a.pid = app.pid;
                }
                a.gen = a.gen.wrapping_add(1);
                a.phase = Phase::Foreground;
                a.launch_start = now;
                a.collecting = None;
            }
            if kind != LaunchKind::Hot || !cfg.keep.needs_h() {
                return Stall::ZERO;
            }
            let Some(replace) = st.plan_collection(app.app, app.context) else {
                st.stats.with(|s| s.skipped += 1);
                return Stall::ZERO;
            };
            let bit = match replace {
                Some(i) => {
                    // Evict the bottom entry: clear its bit in every PTE of the app.
                    let e = st.app(app.app).stack.remove(i);
                    let mut ptes = 0;
                    for (first, pages, _) in ranges(k, app.pid) {
                        for idx in first..first + pages {
                            if k.page(idx).is_some() {
                                *k.policy_bits_mut(idx) &= !e.bit;
                            }
                        }
                        ptes += pages as u64;
                    }
                    charge_scan(k, st, ptes);
                    e.bit
                }
                None => match st.free_bit(app.app) {
                    Some(b) => b,
                    None => return Stall::ZERO,
                },
            };
            st.app(app.app).collecting = Some(HEntry {
                context: app.context,
                bit,
            });
            st.stats.with(|s| s.collections += 1);
            // File pages: scan 1 of the scoped two-scan, on the launch path (§3.2: ~1 ms).
            let scope = std::mem::take(&mut st.app(app.app).scope);
            let region = cfg.region_pages.max(1);
            let mut ptes = 0u64;
            for (first, pages, vkind) in ranges(k, app.pid) {
                if vkind != PageKind::File {
                    continue;
                }
                for &r in scope.iter().filter(|&&r| r >= first && r < first + pages) {
                    let n = region.min(first + pages - r);
                    k.mark_idle(r, n);
                    ptes += n as u64;
                }
            }
            st.app(app.app).scope = scope;
            st.stats.with(|s| s.ptes_scanned_launch += ptes);
            let ns = charge_scan(k, st, ptes);
            Stall { ns, psi_ns: 0 }
        })
    }

    fn on_launch_end(&mut self, k: &mut PolicyKernel, app: &AppView, kind: LaunchKind, touched: &[PageIdx]) {
        let now = k.now();
        self.0.with(|st| {
            let cfg = st.cfg;
            let (start, collecting, after) = {
                let a = st.app(app.app);
                let r = (a.launch_start, a.collecting.take(), a.last_swap);
                a.last_swap = "";
                r
            };
            if kind != LaunchKind::Hot {
                return;
            }
            let rec = LaunchRec {
                t: start,
                app: app.app,
                context: app.context,
                collecting: collecting.is_some(),
                after,
                ms: (now.saturating_sub(start)) as f64 / 1e6,
            };
            st.stats.with(|s| s.launches.push(rec));
            let Some(e) = collecting else { return };
            let record = st.stats.with(|s| s.record_sets);
            let mut set: Vec<PageIdx> = Vec::new();
            // Anonymous pages: the faults of the launch (all anon pages were paged out before).
            let mut ptes = 0u64;
            for &idx in touched {
                let Some(v) = k.page(idx) else { continue };
                if v.pid != app.pid || !is_anon(v.kind) {
                    continue;
                }
                *k.policy_bits_mut(idx) |= e.bit;
                ptes += 1;
                if record {
                    set.push(idx);
                }
            }
            // File pages: scan 2 of the scoped two-scan.
            let region = cfg.region_pages.max(1);
            let scope = std::mem::take(&mut st.app(app.app).scope);
            for (first, pages, vkind) in ranges(k, app.pid) {
                if vkind != PageKind::File {
                    continue;
                }
                for &r in scope.iter().filter(|&&r| r >= first && r < first + pages) {
                    let n = region.min(first + pages - r);
                    for idx in r..r + n {
                        if k.page(idx).is_some() && !k.is_idle(idx) {
                            *k.policy_bits_mut(idx) |= e.bit;
                            if record {
                                set.push(idx);
                            }
                        }
                    }
                    ptes += n as u64;
                }
            }
            st.app(app.app).scope = scope;
            charge_scan(k, st, ptes);
            st.push_h(app.app, e);
            if record {
                set.sort_unstable();
                set.dedup();
                st.stats.with(|s| s.h_sets.push((app.app, e.context, set)));
            }
        });
    }

    fn on_foreground(&mut self, k: &mut PolicyKernel, app: &AppView) {
        let now = k.now();
        self.0.with(|st| {
            let gen = {
                let a = st.app(app.app);
                a.pid = app.pid;
                a.phase = Phase::Foreground;
                a.gen
            };
            if st.cfg.keep == Keep::LruF {
                let ptes = Self::lru_f_tick(k, app.pid);
                charge_scan(k, st, ptes);
                k.cx()
                    .schedule(now + st.cfg.lru_f_window, token(T_LRU_F, app.app, gen));
            }
        });
    }

    fn on_background(&mut self, k: &mut PolicyKernel, app: &AppView) {
        let now = k.now();
        self.0.with(|st| {
            let gen = {
                let a = st.app(app.app);
                a.pid = app.pid;
                a.phase = Phase::Transition;
                a.gen = a.gen.wrapping_add(1);
                a.bg_context = app.context;
                a.gen
            };
            let mut ptes = 0;
            if st.cfg.keep == Keep::LruF {
                // Fold the current foreground window into bit 7 (it holds the previous one).
                for (first, pages, _) in ranges(k, app.pid) {
                    for idx in first..first + pages {
                        if k.page(idx).is_some() && !k.is_idle(idx) {
                            *k.policy_bits_mut(idx) |= LRU_F_BIT;
                        }
                    }
                    ptes += pages as u64;
                }
            }
            // B1 two-scan, scan 1: everything idle at the start of the transition.
            ptes += mark_all_idle(k, app.pid);
            charge_scan(k, st, ptes);
            k.cx()
                .schedule(now + st.cfg.transition, token(T_TRANSITION, app.app, gen));
        });
    }

    fn on_killed(&mut self, _k: &mut PolicyKernel, app: usize) {
        self.0.with(|st| {
            let a = st.app(app);
            let gen = a.gen.wrapping_add(1);
            *a = AppState {
                gen,
                ..AppState::default()
            };
        });
    }

    fn on_timer(&mut self, k: &mut PolicyKernel, t: u64) {
        let (kind, app, gen) = untoken(t);
        let (phase, cur, pid) = self.0.with(|st| {
            let a = st.app(app);
            (a.phase, a.gen, a.pid)
        });
        if gen != cur {
            return;
        }
        match (kind, phase) {
            (T_TRANSITION, Phase::Transition) => self.transition_end(k, app),
            (T_SWAP, Phase::Background) => self.0.with(|st| self.swap(k, st, app)),
            (T_MEASURE, _) => {
                // Observation for the metrics (not a mechanism step: not charged).
                let (a, f) = Self::rss(k, pid);
                self.0.with(|st| {
                    st.stats.with(|s| {
                        if let Some(r) = s.pageouts.iter_mut().rev().find(|r| r.app == app) {
                            r.anon_after = a;
                            r.file_after = f;
                        }
                    });
                });
            }
            (T_LRU_F, Phase::Foreground) => {
                self.0.with(|st| {
                    let ptes = Self::lru_f_tick(k, pid);
                    charge_scan(k, st, ptes);
                    let at = k.now() + st.cfg.lru_f_window;
                    k.cx().schedule(at, token(T_LRU_F, app, gen));
                });
            }
            _ => {}
        }
    }
}
