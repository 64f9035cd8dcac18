//! Mechanism tests of the `memsaver` policy on a small hand-driven kernel: the H stack rules
//! (§3.5), what the swap moment keeps (H(c) ∪ B1), no retention page-out without a
//! matching-context H, spare page bits across swap-out and swap-in, and bad parameters.

use content::{ContentStore, SynthMix};
use device::DeviceProfile;
use engine::{Actor, Nanos, NS_PER_SEC};
use framework::sim::{AppState as FwState, AppView, LaunchKind};
use framework::FrameworkHooks;
use hotlaunch_policy::memsaver::{
    h_bit, Collect, Config, HEntry, Keep, MemSaver, State, Stats, B1_BIT, H_BITS,
};
use hotlaunch_policy::{resolve_params, ParamValue, Policy, Probe, SwapDevices, SwapOverrides};
use kernel::mm::ContentSource;
use kernel::types::*;
use kernel::Kernel;

fn device() -> DeviceProfile {
    let mut d = DeviceProfile::builtin("pixel3").unwrap();
    d.memory.dram_mb = 128;
    d.memory.kernel_reserve_mb = 32;
    d.memory.system_reserve_mb = 8;
    d.kernel.min_free_kbytes = Some(1024);
    d
}

fn kernel() -> Kernel {
    let mut c = ContentStore::new();
    c.append_synthetic(&SynthMix::default(), 64, 3);
    let d = device();
    let b =
        hotlaunch_policy::android::stock_backends(&d, SwapOverrides::default(), SwapDevices::Zram).unwrap();
    Kernel::new(&d, c, b, Default::default()).unwrap()
}

const SRC: ContentSource = ContentSource {
    base: 0,
    len: 64,
    seed: 7,
};
const ANON: u32 = 64;
const FILE: u32 = 32;

/// A kernel with one app process (64 native anon + 32 file pages, all resident) and the policy's
/// framework hooks built with `params`.
struct Rig {
    k: Kernel,
    hooks: Box<dyn FrameworkHooks>,
    view: AppView,
    now: Nanos,
    stats: Probe<Stats>,
}

impl Rig {
    fn new(params: &[(&str, ParamValue)]) -> Rig {
        let mut k = kernel();
        let pid = k.spawn("app", 0, 2);
        let nf = k.mmap(pid, ANON, PageKind::NativeAnon, false, SRC).unwrap();
        let ff = k.mmap(pid, FILE, PageKind::File, true, SRC).unwrap();
        k.access_range(0, Actor::AppMain(pid), nf, ANON, true).unwrap();
        k.access_range(0, Actor::AppMain(pid), ff, FILE, false).unwrap();
        let stats = Probe::new(Stats::default());
        let p = MemSaver::with_probe(stats.clone());
        let given: Vec<(String, ParamValue)> =
            params.iter().map(|(a, b)| (a.to_string(), b.clone())).collect();
        let params = resolve_params(&p, &given).unwrap();
        let parts = p.build(&device(), SwapOverrides::default(), &params).unwrap();
        let view = AppView {
            app: 0,
            pid,
            now: 0,
            state: FwState::Foreground,
            context: 0,
            native_first: nf,
            native_pages: ANON,
            file_first: ff,
            file_pages: FILE,
            java_ranges: Vec::new(),
        };
        Rig {
            k,
            hooks: parts.framework_hooks,
            view,
            now: NS_PER_SEC,
            stats,
        }
    }

    /// Run one hook at `self.now`, apply its queued work, then fire due timers up to `until`.
    fn hook<R>(
        &mut self,
        f: impl FnOnce(&mut dyn FrameworkHooks, &mut kernel::facade::PolicyKernel, &AppView) -> R,
    ) -> R {
        let mut v = self.view.clone();
        v.now = self.now;
        let r = f(
            self.hooks.as_mut(),
            &mut self.k.policy_kernel(self.now, Actor::Kernel),
            &v,
        );
        self.k.apply_policy_cmds();
        r
    }

    fn advance(&mut self, secs: f64) {
        let until = self.now + (secs * NS_PER_SEC as f64) as Nanos;
        loop {
            let mut ts: Vec<(Nanos, u64)> = self.k.timers.drain().collect();
            ts.sort();
            let Some(&(at, tok)) = ts.iter().find(|(at, _)| *at <= until) else {
                for t in ts {
                    self.k.timers.schedule(t.0, t.1);
                }
                break;
            };
            for &(a, t) in ts.iter().filter(|&&x| x != (at, tok)) {
                self.k.timers.schedule(a, t);
            }
            self.now = at.max(self.now);
            self.hook(|h, k, _| h.on_timer(k, tok));
        }
        self.now = until;
    }

    fn touch(&mut self, pages: &[PageIdx]) -> Vec<PageIdx> {
        for &p in pages {
            self.k
                .access(self.now, Actor::AppMain(self.view.pid), p, false)
                .unwrap();
        }
        pages.to_vec()
    }

    fn state(&self, idx: PageIdx) -> PageState {
        self.k.page(idx).unwrap().state
    }

    fn bits(&self, idx: PageIdx) -> u8 {
        self.k.page(idx).unwrap().policy_bits
    }

    fn all(&self) -> Vec<PageIdx> {
        (self.view.native_first..self.view.native_first + ANON)
            .chain(self.view.file_first..self.view.file_first + FILE)
            .collect()
    }

    /// Foreground → background in `ctx`; `b1` touched during the transition; run to its end.
    fn background(&mut self, ctx: usize, b1: &[PageIdx]) {
        self.view.context = ctx;
        self.hook(|h, k, v| h.on_background(k, v));
        self.advance(2.5);
        self.touch(b1);
        self.advance(3.0);
    }

    /// A hot launch in `ctx` touching `set`.
    fn hot_launch(&mut self, ctx: usize, set: &[PageIdx]) {
        self.view.context = ctx;
        self.hook(|h, k, v| h.on_launch_start(k, v, LaunchKind::Hot));
        let touched = self.touch(set);
        self.now += 100_000_000;
        self.hook(|h, k, v| h.on_launch_end(k, v, LaunchKind::Hot, &touched));
        self.hook(|h, k, v| h.on_foreground(k, v));
    }
}

#[test]
fn detection_pages_out_all_anon_then_h_and_b1_are_kept() {
    let mut r = Rig::new(&[]); // pages = anon+file, keep = h+b1
    let nf = r.view.native_first;
    let ff = r.view.file_first;
    // First background in context 0: no H of context 0, so no retention page-out; the only
    // page-out is the detection one (every anon page, no file page) before the collecting launch.
    let b1: Vec<PageIdx> = (nf..nf + 8).chain(ff..ff + 4).collect();
    r.background(0, &b1);
    let s = r.stats.with(|s| s.pageouts.clone());
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].kind, "detect");
    for p in nf..nf + ANON {
        assert_eq!(
            r.state(p),
            PageState::Swapped,
            "anon page {p} paged out for detection"
        );
    }
    for p in ff..ff + FILE {
        assert_eq!(r.state(p), PageState::Resident, "no file page dropped without H");
    }
    // The collecting launch: its faults are its H (anon 20..40, file 0..4 inside the scope).
    let h: Vec<PageIdx> = (nf + 20..nf + 40).chain(ff..ff + 4).collect();
    r.hot_launch(0, &h);
    assert_eq!(r.stats.with(|s| s.collections), 1);
    for &p in &h {
        assert_ne!(r.bits(p) & H_BITS, 0, "page {p} recorded in H");
    }
    // Use, background again in context 0: H(0) ∪ B1 stays, everything else goes.
    r.advance(20.0);
    let b1b: Vec<PageIdx> = (nf + 50..nf + 55).collect();
    let mut all_anon: Vec<PageIdx> = (nf..nf + ANON).collect();
    r.touch(&all_anon);
    all_anon.clear();
    r.background(0, &b1b);
    let last = r.stats.with(|s| *s.pageouts.last().unwrap());
    assert_eq!(last.kind, "retain");
    for p in r.all() {
        let keep = r.bits(p) & (H_BITS | B1_BIT) != 0;
        if keep {
            assert_eq!(
                r.state(p),
                PageState::Resident,
                "page {p} in H ∪ B1 never paged out"
            );
        } else {
            assert_ne!(
                r.state(p),
                PageState::Resident,
                "page {p} outside H ∪ B1 paged out"
            );
        }
    }
    assert!(last.reduction() > 0.3, "{last:?}");
    // The next launch in context 0 does not collect (H(0) is on top of a non-full stack).
    r.hot_launch(0, &h);
    assert_eq!(r.stats.with(|s| (s.collections, s.skipped)), (1, 1));
}

#[test]
fn anon_only_keeps_file_pages() {
    let mut r = Rig::new(&[("pages", ParamValue::Str("anon".into()))]);
    let (nf, ff) = (r.view.native_first, r.view.file_first);
    r.background(0, &[]);
    let h: Vec<PageIdx> = (nf..nf + 10).collect();
    r.hot_launch(0, &h);
    r.background(0, &[]);
    for p in ff..ff + FILE {
        assert_eq!(r.state(p), PageState::Resident);
    }
    for p in nf + 10..nf + ANON {
        assert_eq!(r.state(p), PageState::Swapped);
    }
}

#[test]
fn keep_none_pages_nothing_out() {
    let mut r = Rig::new(&[("keep", ParamValue::Str("none".into()))]);
    r.background(0, &[]);
    for p in r.all() {
        assert_eq!(r.state(p), PageState::Resident);
    }
}

fn cfg(depth: u8, collect: Collect) -> Config {
    Config {
        depth,
        transition: 5 * NS_PER_SEC,
        swap_delay: 0,
        file: true,
        keep: Keep::HB1,
        collect,
        lru_f_window: 10 * NS_PER_SEC,
        pte_scan_ns: 22.0,
        region_pages: 512,
    }
}

/// Collect into `st` as the hooks do: plan, evict or take a free bit, push.
fn collect(st: &mut State, ctx: usize) -> bool {
    let Some(replace) = st.plan_collection(0, ctx) else {
        return false;
    };
    let bit = match replace {
        Some(i) => st.app(0).stack.remove(i).bit,
        None => st.free_bit(0).unwrap(),
    };
    st.push_h(0, HEntry { context: ctx, bit });
    true
}

#[test]
fn h_stack_is_an_lru_of_at_most_depth_sets() {
    let mut st = State::new(cfg(3, Collect::Paper), Probe::new(Stats::default()));
    assert!(collect(&mut st, 0)); // no H of 0
    assert!(!collect(&mut st, 0), "H(0) on top: skip");
    assert!(collect(&mut st, 1));
    assert!(collect(&mut st, 2));
    // Stack (top first): 2, 1, 0 — full; H(0) is at the bottom: refresh it.
    let ctxs = |st: &State| st.apps[0].stack.iter().map(|e| e.context).collect::<Vec<_>>();
    assert_eq!(ctxs(&st), vec![2, 1, 0]);
    assert!(!collect(&mut st, 1), "H(1) in the middle: skip");
    assert!(collect(&mut st, 0));
    assert_eq!(ctxs(&st), vec![0, 2, 1]);
    // A fourth context evicts the bottom (context 1).
    assert!(collect(&mut st, 3));
    assert_eq!(ctxs(&st), vec![3, 0, 2]);
    assert!(st.matching(0, 1).is_none());
    // Three distinct bits, all among bits 1..=3.
    let bits: Vec<u8> = st.apps[0].stack.iter().map(|e| e.bit).collect();
    assert_eq!(bits.iter().fold(0, |m, b| m | b), h_bit(0) | h_bit(1) | h_bit(2));
    // `every` collects always but never keeps more than `depth` sets.
    let mut st = State::new(cfg(2, Collect::Every), Probe::new(Stats::default()));
    for _ in 0..5 {
        assert!(collect(&mut st, 0));
    }
    assert_eq!(st.apps[0].stack.len(), 2);
    assert_eq!(st.all_matching_bits(0, 0), h_bit(0) | h_bit(1));
}

#[test]
fn spare_page_bits_survive_swap_out_and_swap_in() {
    let mut k = kernel();
    let pid = k.spawn("app", 0, 2);
    let first = k.mmap(pid, 16, PageKind::NativeAnon, false, SRC).unwrap();
    k.access_range(0, Actor::AppMain(pid), first, 16, true).unwrap();
    {
        let mut pk = k.policy_kernel(1, Actor::Kernel);
        for i in 0..16 {
            *pk.policy_bits_mut(first + i) = B1_BIT | h_bit((i % 3) as u8);
        }
        pk.madvise(first, 16, Advice::PageOut);
    }
    k.apply_policy_cmds();
    for i in 0..16 {
        let v = k.page(first + i).unwrap();
        assert_eq!(v.state, PageState::Swapped);
        assert_eq!(v.policy_bits, B1_BIT | h_bit((i % 3) as u8));
    }
    k.access_range(2, Actor::AppMain(pid), first, 16, false).unwrap();
    for i in 0..16 {
        let v = k.page(first + i).unwrap();
        assert_eq!(v.state, PageState::Resident);
        assert_eq!(v.policy_bits, B1_BIT | h_bit((i % 3) as u8));
    }
}

#[test]
fn bad_parameters_are_one_line_errors() {
    let p = MemSaver::default();
    for (k, v) in [
        ("depth", ParamValue::Int(0)),
        ("depth", ParamValue::Int(4)),
        ("transition_s", ParamValue::Float(-1.0)),
        ("keep", ParamValue::Str("everything".into())),
        ("no_such_key", ParamValue::Int(1)),
    ] {
        let e = resolve_params(&p, &[(k.to_string(), v)]).unwrap_err().to_string();
        assert!(!e.contains('\n') && e.contains(k), "{k}: {e}");
    }
}

#[test]
fn no_retention_page_out_without_a_matching_context_h() {
    let mut r = Rig::new(&[]); // pages = anon+file
    let (nf, ff) = (r.view.native_first, r.view.file_first);
    // H of context 1 only.
    r.background(1, &[]);
    let h: Vec<PageIdx> = (nf..nf + 10).chain(ff..ff + 4).collect();
    r.hot_launch(1, &h);
    assert!(r.stats.with(|s| s.collections) == 1 && r.bits(nf) & H_BITS != 0);
    r.touch(&r.all());
    // Background in context 0: H(1) must not be used. The only page-out is the detection one
    // (every anon page) before the launch that will collect H(0); no file page is dropped.
    r.background(0, &[]);
    let last = r.stats.with(|s| *s.pageouts.last().unwrap());
    assert_eq!(last.kind, "detect", "{last:?}");
    assert_eq!(last.context, 0);
    for p in ff..ff + FILE {
        assert_eq!(r.state(p), PageState::Resident, "file page {p} kept without H(0)");
    }
    assert!(r.stats.with(|s| s.pageouts.iter().all(|p| p.kind != "retain")));
    // With detection off the table (keep = h+b1, but the next launch in 0 would not collect
    // because H(0) now tops the stack) the retention page-out uses H(0), not H(1).
    let h0: Vec<PageIdx> = (nf + 30..nf + 40).collect();
    r.hot_launch(0, &h0);
    r.touch(&r.all());
    r.background(0, &[]);
    let last = r.stats.with(|s| *s.pageouts.last().unwrap());
    assert_eq!(last.kind, "retain");
    for p in nf..nf + 10 {
        assert_eq!(
            r.state(p),
            PageState::Swapped,
            "page {p} only in H(1): paged out in context 0"
        );
    }
    for &p in &h0 {
        assert_eq!(r.state(p), PageState::Resident, "page {p} in H(0) kept");
    }
}

#[test]
fn pages_in_h_of_the_context_and_b1_are_never_paged_out() {
    // Three contexts fill the stack (top first: 2, 1, 0); then every background in a context
    // whose H is not at the bottom is a retention page-out that must keep exactly H(c) ∪ B1,
    // whatever the H's stack position, while pages only in other contexts' H's go.
    let mut r = Rig::new(&[]); // pages = anon+file, keep = h+b1
    let (nf, ff) = (r.view.native_first, r.view.file_first);
    let sets: [Vec<PageIdx>; 3] = [
        (nf..nf + 12).chain(ff..ff + 3).collect(),
        (nf + 20..nf + 32).chain(ff + 10..ff + 12).collect(),
        (nf + 40..nf + 52).collect(),
    ];
    for (c, h) in sets.iter().enumerate() {
        // A file page touched in the transition puts the file region in the scope index, so
        // the collecting launch's file pages are detected too (§3.2).
        r.background(c, &[ff + 30]);
        r.hot_launch(c, h);
    }
    assert_eq!(r.stats.with(|s| s.collections), 3);
    let mut retains = 0;
    for (round, c) in [1usize, 2, 1, 2].into_iter().enumerate() {
        r.touch(&r.all());
        let b1: Vec<PageIdx> = (nf + 56 + round as u32..nf + 60).chain([ff + 20]).collect();
        r.background(c, &b1);
        let last = r.stats.with(|s| *s.pageouts.last().unwrap());
        assert_eq!(last.kind, "retain", "context {c}: {last:?}");
        retains += 1;
        for p in r.all() {
            let in_h = sets[c].contains(&p);
            let in_b1 = b1.contains(&p);
            if in_h || in_b1 {
                assert_eq!(
                    r.state(p),
                    PageState::Resident,
                    "context {c}: page {p} in H(c) ∪ B1 kept"
                );
            } else {
                assert_ne!(
                    r.state(p),
                    PageState::Resident,
                    "context {c}: page {p} outside H(c) ∪ B1 paged out"
                );
            }
        }
        // The next launch in c skips collection (its H is not at the bottom).
        r.hot_launch(c, &sets[c]);
    }
    assert_eq!(retains, 4);
    assert_eq!(
        r.stats.with(|s| s.collections),
        3,
        "no collection while H(c) is not at the bottom"
    );
    // A fourth context evicts the bottom H (context 0): its bit is cleared on every page.
    r.background(3, &[]);
    r.hot_launch(3, &sets[0][..4]);
    let bits_in_use: u8 = r.all().iter().fold(0, |m, &p| m | r.bits(p));
    assert_eq!(bits_in_use & H_BITS, H_BITS, "three H's in use");
    for &p in &sets[0][4..] {
        assert_eq!(
            r.bits(p) & H_BITS,
            0,
            "page {p} only in the evicted H(0): its bit cleared"
        );
    }
}
