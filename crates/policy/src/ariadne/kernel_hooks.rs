//! Ariadne's kernel hooks: HotnessOrg reclaim (order, verdicts, swap tags), the AdaptiveComp
//! chunk planner and PreDecomp after swap-in faults.

use super::state::{Class, State};
use crate::Shared;
use content::Codec;
use engine::HookCx;
use kernel::hooks::{
    stock_inactive_verdict, FaultHook, PageView, ProcView, ReclaimHook, ScanControl, Verdict,
};
use kernel::swap::SwapOutPage;
use kernel::types::{flags, PageIdx, Pid};
use kernel::zram::{ChunkPlan, ChunkPlanner, MAX_CHUNK_PAGES};

/// Start of a reclaim cycle (Linux `DEF_PRIORITY`): the allowed class falls back to cold.
const DEF_PRIORITY: u32 = 12;
/// A pass at this priority or lower scans most of every list; finding nothing of the allowed
/// class there means that class is exhausted.
const EXHAUSTED_PRIORITY: u32 = 2;

/// HotnessOrg: cold pages of all apps first (app LRU order), then warm, then hot (AL only);
/// the foreground app last.
pub(crate) struct HotnessReclaim(pub Shared<State>);

impl ReclaimHook for HotnessReclaim {
    // HotnessOrg's lists span every app (cold of all apps first), whatever the kernel's own LRU
    // structure: its order is asked on a global-LRU device too.
    fn orders_across_processes(&self) -> bool {
        true
    }

    fn lruvec_order(&mut self, cx: &mut HookCx, sc: &ScanControl, procs: &[ProcView], out: &mut Vec<Pid>) {
        let org = self.0.with(|s| s.cfg.hotness_org);
        if !org {
            // Ablation: stock round-robin.
            if !procs.is_empty() {
                let start = (sc.pass as usize) % procs.len();
                out.extend(procs[start..].iter().chain(&procs[..start]).map(|p| p.pid));
            }
            return;
        }
        self.0.with(|s| {
            // Class control from the previous pass.
            let top = if s.cfg.exclude_hot {
                Class::Warm
            } else {
                Class::Hot
            };
            if sc.priority >= DEF_PRIORITY {
                s.tier = Class::Cold;
            } else if let Some((prio, got)) = s.prev_pass {
                if prio <= EXHAUSTED_PRIORITY && got == 0 && s.tier < top {
                    s.tier = Class::from_u8(s.tier as u8 + 1);
                    s.stats.with(|st| st.escalations += 1);
                }
            }
            s.prev_pass = Some((sc.priority, 0));
            s.pass_reclaimed = 0;
            // App LRU: background apps least recently used first, then other processes, the
            // foreground app only when the allowed class is the highest.
            let mut apps: Vec<(u64, Pid)> = s
                .apps
                .iter()
                .filter(|a| a.pid != 0 && Some(a.pid) != s.fg)
                .map(|a| (a.last_used, a.pid))
                .collect();
            apps.sort_unstable();
            let alive = |pid: Pid| procs.iter().any(|p| p.pid == pid);
            out.extend(apps.iter().map(|&(_, p)| p).filter(|&p| alive(p)));
            let known = |pid: Pid| s.apps.iter().any(|a| a.pid == pid) || Some(pid) == s.fg;
            out.extend(procs.iter().map(|p| p.pid).filter(|&p| !known(p)));
            if let Some(fg) = s.fg {
                if s.tier == top && alive(fg) {
                    out.push(fg);
                }
            }
        });
        cx.charge(procs.len() as u64 * 20);
    }

    fn inactive_verdict(&mut self, _cx: &mut HookCx, sc: &ScanControl, page: &PageView) -> Verdict {
        if !page.kind.is_anon() {
            return stock_inactive_verdict(page);
        }
        self.0.with(|s| {
            let accessed = page.has(flags::ACCESSED);
            let mut c = s.class(page.idx, page.pid);
            if accessed {
                s.note_use(page.idx, page.pid);
                if c == Class::Cold {
                    // A touched cold page moves to the warm list.
                    s.set_class(page.idx, page.pid, Class::Warm);
                    c = Class::Warm;
                }
            }
            if !s.cfg.hotness_org {
                return stock_inactive_verdict(page);
            }
            let allowed = match c {
                Class::Cold => true,
                Class::Warm => s.tier >= Class::Warm,
                Class::Hot => !s.cfg.exclude_hot && s.tier >= Class::Hot,
            };
            if allowed && (!accessed || sc.priority <= EXHAUSTED_PRIORITY && c == Class::Cold) {
                s.pass_reclaimed += 1;
                if let Some((p, _)) = s.prev_pass {
                    s.prev_pass = Some((p, s.pass_reclaimed));
                }
                Verdict::Reclaim
            } else {
                Verdict::Activate
            }
        })
    }

    fn swap_tag(&mut self, _cx: &mut HookCx, page: &PageView) -> u8 {
        self.0.with(|s| {
            let c = s.class(page.idx, page.pid);
            s.note_store(page.idx, c);
            if c == Class::Hot && s.tier < Class::Hot {
                s.stats.with(|st| st.hot_stored_early += 1);
            }
            s.stats.with(|st| st.stored_by_class[c as usize] += 1);
            c as u8
        })
    }
}

/// PreDecomp: after a swap-in fault, load the next page(s) in zpool order off the critical path.
pub(crate) struct HotnessFault(pub Shared<State>);

impl FaultHook for HotnessFault {
    fn after_major_fault(&mut self, cx: &mut HookCx, fault: &PageView, out: &mut Vec<PageIdx>) {
        let predecomp = self.0.with(|s| {
            if s.launching == Some(fault.pid) {
                s.launch_faults.push(fault.idx);
            }
            s.fault_pid = fault.pid;
            if !s.cfg.predecomp {
                return false;
            }
            let mut p = fault.idx;
            for _ in 0..s.cfg.predecomp_pages {
                let Some(n) = s.next_in_zpool(p) else { break };
                out.push(n);
                p = n;
            }
            true
        });
        if predecomp {
            cx.charge(50);
        }
    }

    fn preloaded(&mut self, _cx: &mut HookCx, pages: &[PageIdx]) {
        self.0.with(|s| {
            let pid = s.fault_pid;
            for &n in pages {
                s.push_pre(n, pid);
            }
        });
    }
}

/// AdaptiveComp: chunk size by swap tag (`sizes[class]`, cold/warm/hot); runs of one class are
/// contiguous because the planner asks zram to group the batch by tag.
#[derive(Debug, Clone, Copy)]
pub struct AdaptivePlanner {
    /// Chunk bytes for tags 0 (cold), 1 (warm), 2 (hot).
    pub sizes: [u32; 3],
    /// `None`: the device codec.
    pub codec: Option<Codec>,
}

impl ChunkPlanner for AdaptivePlanner {
    fn plan(&mut self, pages: &[SwapOutPage], device_codec: Codec, out: &mut Vec<ChunkPlan>) {
        let codec = self.codec.unwrap_or(device_codec);
        let mut i = 0;
        while i < pages.len() {
            let tag = pages[i].tag.min(2);
            let mut j = i + 1;
            while j < pages.len() && pages[j].tag.min(2) == tag {
                j += 1;
            }
            let size = self.sizes[tag as usize] as usize;
            if size < content::PAGE_SIZE {
                out.extend((i..j).map(|_| ChunkPlan::sub_page(size as u32, codec)));
            } else {
                let per = (size / content::PAGE_SIZE).clamp(1, MAX_CHUNK_PAGES as usize);
                let mut left = j - i;
                while left > 0 {
                    let n = left.min(per);
                    out.push(ChunkPlan::pages(n as u16, codec));
                    left -= n;
                }
            }
            i = j;
        }
    }

    fn group_by_tag(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ariadne::state::{Cfg, Stats};
    use engine::{Actor, CpuLedger, Timers};
    use kernel::types::{PageKind, PageState};

    fn cfg(exclude_hot: bool) -> Cfg {
        Cfg {
            small: 1024,
            medium: 2048,
            large: 16384,
            exclude_hot,
            hotness_org: true,
            adaptive_comp: true,
            predecomp: true,
            predecomp_pages: 1,
            predecomp_buffer: 4,
            writeback: false,
            writeback_at: 0.9,
            writeback_period: 1,
            writeback_max_pages: 1,
            hot_list_pages: 100,
            lru_op_ns: 0,
        }
    }

    fn page(idx: PageIdx, pid: Pid) -> PageView {
        PageView {
            idx,
            pid,
            kind: PageKind::JavaHeap,
            state: PageState::Resident,
            flags: 0,
            policy_bits: 0,
        }
    }

    fn sc(priority: u32, pass: u64) -> ScanControl {
        ScanControl {
            priority,
            kswapd: true,
            pass,
            nr_to_reclaim: 32,
        }
    }

    fn proc(pid: Pid, foreground: bool) -> ProcView {
        ProcView {
            pid,
            adj: if foreground { 0 } else { 900 },
            foreground,
            rss: 100,
            swap: 0,
            alive: true,
        }
    }

    /// Pages 0..3 of pid 7: 0 hot, 1 warm, 2 cold; pid 9 is the foreground app.
    fn setup(exclude_hot: bool) -> (HotnessReclaim, Shared<State>) {
        let s = Shared::new(State::new(
            cfg(exclude_hot),
            crate::Probe::new(Stats::default()),
            1000,
        ));
        s.with(|st| {
            st.set_class(0, 7, Class::Hot);
            st.set_class(1, 7, Class::Warm);
            st.app(0).pid = 7;
            st.app(1).pid = 9;
            st.fg = Some(9);
        });
        (HotnessReclaim(s.clone()), s)
    }

    /// Run one pass: order and the verdicts of pages 0..3.
    fn pass(h: &mut HotnessReclaim, prio: u32, n: u64) -> (Vec<Pid>, [Verdict; 3]) {
        let (mut cpu, mut timers) = (CpuLedger::default(), Timers::default());
        let mut cx = HookCx::new(0, Actor::Kswapd, &mut cpu, &mut timers);
        let mut order = Vec::new();
        h.lruvec_order(
            &mut cx,
            &sc(prio, n),
            &[proc(7, false), proc(9, true)],
            &mut order,
        );
        let v = [0, 1, 2].map(|i| h.inactive_verdict(&mut cx, &sc(prio, n), &page(i, 7)));
        (order, v)
    }

    #[test]
    fn cold_first_then_warm_then_hot_foreground_last() {
        let (mut h, s) = setup(false);
        let (order, v) = pass(&mut h, 12, 0);
        assert_eq!(
            order,
            vec![7],
            "the foreground app is spared while the class is low"
        );
        assert_eq!(v, [Verdict::Activate, Verdict::Activate, Verdict::Reclaim]);
        // The cold page went (it is warm now); a low-priority pass finds nothing of the class,
        // so the next one may take warm pages.
        s.with(|st| st.set_class(2, 7, Class::Warm));
        let (_, v) = pass(&mut h, 2, 1);
        assert_eq!(v, [Verdict::Activate; 3]);
        let (_, v) = pass(&mut h, 1, 2);
        assert_eq!(v, [Verdict::Activate, Verdict::Reclaim, Verdict::Reclaim]);
        s.with(|st| {
            st.set_class(1, 7, Class::Hot);
            st.set_class(2, 7, Class::Hot)
        });
        let (_, v) = pass(&mut h, 1, 3);
        assert_eq!(v, [Verdict::Activate; 3], "still warm: hot pages stay");
        let (order, v) = pass(&mut h, 0, 4);
        assert_eq!(order, vec![7, 9], "foreground scanned only at the last class");
        assert_eq!(v, [Verdict::Reclaim; 3], "AL: hot pages are the last resort");
        // A new reclaim cycle starts from cold again.
        let (_, v) = pass(&mut h, 12, 5);
        assert_eq!(v, [Verdict::Activate; 3]);
    }

    #[test]
    fn ehl_never_reclaims_hot_pages() {
        let (mut h, s) = setup(true);
        s.with(|st| st.set_class(2, 7, Class::Hot));
        st_all_hot(&s);
        for (n, prio) in [12, 2, 1, 0, 0, 0, 0].into_iter().enumerate() {
            let (_, v) = pass(&mut h, prio, n as u64);
            assert_eq!(v, [Verdict::Activate; 3]);
        }
    }

    fn st_all_hot(s: &Shared<State>) {
        s.with(|st| (0..3).for_each(|i| st.set_class(i, 7, Class::Hot)));
    }

    #[test]
    fn touched_cold_page_becomes_warm() {
        let (mut h, s) = setup(false);
        let (mut cpu, mut timers) = (CpuLedger::default(), Timers::default());
        let mut cx = HookCx::new(0, Actor::Kswapd, &mut cpu, &mut timers);
        let mut p = page(2, 7);
        p.flags = flags::ACCESSED;
        assert_eq!(h.inactive_verdict(&mut cx, &sc(12, 0), &p), Verdict::Activate);
        assert_eq!(s.with(|st| st.class(2, 7)), Class::Warm);
        // Another pid's page at the same index reads as cold (index reused).
        assert_eq!(s.with(|st| st.class(2, 8)), Class::Cold);
    }

    #[test]
    fn predecomp_loads_the_next_page_of_the_same_list() {
        let (mut h, s) = setup(false);
        let (mut cpu, mut timers) = (CpuLedger::default(), Timers::default());
        let mut cx = HookCx::new(0, Actor::Kswapd, &mut cpu, &mut timers);
        // Swap-out order: cold 2, hot 0, cold 5, warm 1, cold 6.
        for i in [2, 0, 5, 1, 6] {
            h.swap_tag(&mut cx, &page(i, 7));
        }
        let mut f = HotnessFault(s.clone());
        let mut out = Vec::new();
        f.after_major_fault(&mut cx, &page(2, 7), &mut out);
        assert_eq!(out, vec![5], "next cold page in zpool order");
        f.preloaded(&mut cx, &out);
        out.clear();
        f.after_major_fault(&mut cx, &page(0, 7), &mut out);
        assert!(out.is_empty(), "no hot page stored after page 0");
        s.with(|st| {
            assert!(st.is_pre(5, 7));
            st.note_use(5, 7);
            assert!(!st.is_pre(5, 7));
            st.stats.with(|x| {
                assert_eq!(x.predecomp_loaded, 1);
                assert_eq!(x.predecomp_hits, 1);
                assert_eq!(x.stored_by_class, [3, 1, 1]);
            });
        });
    }

    #[test]
    fn predecomp_hits_follow_the_fifo_in_touch_order() {
        use crate::ariadne::state::{demand_stream, predecomp_used};
        // Faults 10, 20, 30; each pre-decompressed its zpool neighbour 11, 21, 31.
        let faults = [10, 20, 30];
        let pre = [(1, 11), (2, 21), (3, 31)];
        // 11 used right after its fault; 21 never; 31 used after fault 30.
        let used = predecomp_used(&faults, &pre, &[10, 11, 20, 30, 31], 1);
        assert_eq!(used, vec![true, false, true]);
        // A FIFO of one page: 11 was pushed out by 21 before it was used.
        let used = predecomp_used(&faults, &pre, &[10, 20, 11, 30], 1);
        assert_eq!(used, vec![false, false, false]);
        // With room for two it is still there.
        let used = predecomp_used(&faults, &pre, &[10, 20, 11, 30], 2);
        assert_eq!(used, vec![true, false, false]);
        // Touched before it was loaded: resident already, not a hit.
        assert_eq!(predecomp_used(&faults, &pre, &[21, 10, 20], 8), vec![false; 3]);
        // The demand stream puts used pre-loads after the fault that triggered them.
        let used = [true, false, true];
        assert_eq!(demand_stream(&faults, &pre, &used), vec![10, 11, 20, 30, 31]);
    }
}
