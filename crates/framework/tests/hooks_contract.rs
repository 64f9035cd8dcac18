//! Contract tests of the framework's policy seams: every lifecycle hook and policy timers are
//! reached at their documented simulated times with a non-stock implementation, the launch-start
//! stall lands on the launch's critical path, and kernel work queued through the facade is applied;
//! app demand that goes through the same day (I/O buffers, file writes) reaches the kernel.

use content::synth::SynthMix;
use content::ContentStore;
use engine::{Actor, Nanos, Stall, NS_PER_MS, NS_PER_SEC};
use framework::sim::{AppView, LaunchKind, PolicyKernel};
use framework::{
    AccessSets, AppModel, FrameworkHooks, JavaModel, SimConfig, SimOutput, Simulation, StackHooks, UserAction,
};
use hotlaunch_framework as framework;
use kernel::hooks::KernelHooks;
use kernel::types::{Advice, PageIdx};
use kernel::zram::{Zram, ZramConfig};
use kernel::Kernel;
use runtime::gen::GraphSpec;
use std::cell::RefCell;
use std::rc::Rc;

/// Small fixed access sets over an app of `java + native + file` pages.
struct Sets {
    java: u32,
    native: u32,
    file: u32,
}

impl AccessSets for Sets {
    fn contexts(&self) -> usize {
        1
    }
    fn launch_set(&mut self, _context: usize, _n: u32) -> Vec<u32> {
        // A few Java pages, native pages and launch files.
        let mut v: Vec<u32> = (0..8).collect();
        v.extend(self.java..self.java + 64);
        v.extend(self.java + self.native..self.java + self.native + self.file.min(32));
        v
    }
    fn foreground_ws(&self) -> &[u32] {
        &[]
    }
    fn b1(&self, _context: usize) -> &[u32] {
        &[]
    }
    fn b2(&self) -> &[u32] {
        &[]
    }
}

fn app(name: &str, base: u32, len: u32, device: &device::DeviceProfile, seed: u64) -> AppModel {
    let (java, native, file) = (1024u32, 2048u32, 512u32);
    let spec = GraphSpec {
        bytes: java as u64 * 4096,
        ..GraphSpec::default()
    };
    let bp = spec.blueprint(&mut engine::RngStreams::new(seed).stream("heap", 0));
    AppModel {
        name: name.into(),
        java_pages: java,
        native_pages: native,
        file_pages: file,
        start_anon_fraction: 1.0,
        growth: NS_PER_SEC,
        cold_init: 100 * NS_PER_MS,
        hot_resume: 20 * NS_PER_MS,
        threads: 8,
        content_base: base,
        content_len: len,
        access: Box::new(Sets { java, native, file }),
        java: JavaModel {
            blueprint: std::sync::Arc::new(bp).into(),
            config: runtime::HeapConfig::for_dram_mb(device.memory.dram_mb),
            params: runtime::JavaParams::default(),
        },
        io_buffer_scale: 1.0,
        data_pages: 0,
        fg_write_pages_per_s: 0.0,
        bg_write_pages_per_s: 0.0,
        ui_pages: 0,
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Call {
    LaunchStart(usize, LaunchKind, Nanos),
    LaunchEnd(usize, LaunchKind, usize),
    Foreground(usize),
    Background(usize, Nanos),
    TransitionEnd(usize, Nanos),
    Killed(usize),
    Timer(u64, Nanos),
}

/// Records every call; hot launches stall 7 ms at their start; leaving the foreground schedules a
/// timer 1 s later that pages out the app's native range through the facade.
struct Recorder {
    log: Rc<RefCell<Vec<Call>>>,
    native: Rc<RefCell<Vec<(PageIdx, u32)>>>,
    java_ranges_seen: Rc<RefCell<usize>>,
}

impl FrameworkHooks for Recorder {
    fn on_launch_start(&mut self, k: &mut PolicyKernel, app: &AppView, kind: LaunchKind) -> Stall {
        self.log
            .borrow_mut()
            .push(Call::LaunchStart(app.app, kind, k.now()));
        assert_eq!(k.actor(), Actor::AppMain(app.pid));
        k.cx().charge(3_000);
        if kind == LaunchKind::Hot {
            Stall {
                ns: 7 * NS_PER_MS,
                psi_ns: 0,
            }
        } else {
            Stall::ZERO
        }
    }
    fn on_launch_end(&mut self, _k: &mut PolicyKernel, app: &AppView, kind: LaunchKind, touched: &[PageIdx]) {
        *self.java_ranges_seen.borrow_mut() += app.java_ranges.len();
        self.log
            .borrow_mut()
            .push(Call::LaunchEnd(app.app, kind, touched.len()));
    }
    fn on_foreground(&mut self, _k: &mut PolicyKernel, app: &AppView) {
        self.log.borrow_mut().push(Call::Foreground(app.app));
    }
    fn on_background(&mut self, k: &mut PolicyKernel, app: &AppView) {
        self.log.borrow_mut().push(Call::Background(app.app, k.now()));
        self.native.borrow_mut()[app.app] = (app.native_first, app.native_pages);
        let at = k.now() + NS_PER_SEC;
        k.cx().schedule(at, app.app as u64);
    }
    fn on_transition_end(&mut self, k: &mut PolicyKernel, app: &AppView) {
        self.log.borrow_mut().push(Call::TransitionEnd(app.app, k.now()));
    }
    fn on_killed(&mut self, _k: &mut PolicyKernel, app: usize) {
        self.log.borrow_mut().push(Call::Killed(app));
    }
    fn on_timer(&mut self, k: &mut PolicyKernel, token: u64) {
        self.log.borrow_mut().push(Call::Timer(token, k.now()));
        let (first, n) = self.native.borrow()[token as usize];
        k.madvise(first, n, Advice::PageOut);
    }
}

fn run(hooks: Box<dyn FrameworkHooks>) -> SimOutput {
    run_with(hooks, framework::stock_runtime())
}

fn run_with(hooks: Box<dyn FrameworkHooks>, runtime: framework::RuntimeHooksFactory) -> SimOutput {
    run_cfg(hooks, runtime, |_, _| {}, KernelHooks::default())
}

fn run_cfg(
    hooks: Box<dyn FrameworkHooks>,
    runtime: framework::RuntimeHooksFactory,
    tweak: impl FnOnce(&mut SimConfig, &mut [AppModel]),
    kernel_hooks: KernelHooks,
) -> SimOutput {
    let device = device::DeviceProfile::builtin("pixel3").unwrap();
    let mut contents = ContentStore::new();
    let range = contents.append_synthetic(&SynthMix::default(), 512, 1);
    let (base, len) = (range.start, range.end - range.start);
    let mut cfg = ZramConfig::from_profile(&device);
    cfg.disksize_bytes = 512 << 20;
    let zram = Zram::new(cfg, content::CostTable::builtin());
    let k = Kernel::new(&device, contents, vec![Box::new(zram)], kernel_hooks).unwrap();
    let mut apps = vec![app("a", base, len, &device, 1), app("b", base, len, &device, 2)];
    let s = NS_PER_SEC;
    let actions = vec![
        UserAction::Launch {
            at: 0,
            app: 0,
            context: 0,
        },
        UserAction::Launch {
            at: 20 * s,
            app: 1,
            context: 0,
        },
        UserAction::Launch {
            at: 40 * s,
            app: 0,
            context: 0,
        },
        UserAction::Home { at: 60 * s },
        UserAction::Kill { at: 80 * s, app: 1 },
    ];
    let mut sc = SimConfig::defaults(5);
    sc.sample_every = 10 * s;
    tweak(&mut sc, &mut apps);
    let sim = Simulation::new(
        k,
        device,
        sc,
        apps,
        actions,
        90 * s,
        StackHooks {
            framework: hooks,
            runtime,
        },
    )
    .unwrap();
    sim.run(|_, _| {})
}

#[test]
fn every_framework_hook_fires_at_its_documented_time() {
    let log = Rc::new(RefCell::new(Vec::new()));
    let java_ranges_seen = Rc::new(RefCell::new(0));
    // The runtime hooks of app 1 ask for a timer 2 s after it leaves the foreground: it reaches the
    // policy's framework `on_timer` like the framework's own timers.
    struct TimerArt(usize);
    impl runtime::RuntimeHooks for TimerArt {
        fn on_state_change(
            &mut self,
            cx: &mut engine::HookCx,
            _heap: &runtime::Heap,
            foreground: bool,
        ) -> Option<(Nanos, runtime::GcKind)> {
            if !foreground && self.0 == 1 {
                cx.schedule(cx.now + 2 * NS_PER_SEC, 100);
            }
            runtime::StockArt.on_state_change(cx, _heap, foreground)
        }
    }
    let out = run_with(
        Box::new(Recorder {
            log: log.clone(),
            native: Rc::new(RefCell::new(vec![(0, 0); 101])),
            java_ranges_seen: java_ranges_seen.clone(),
        }),
        Box::new(|app| Box::new(TimerArt(app))),
    );
    let log = log.borrow();
    let s = NS_PER_SEC;
    // Launch starts: cold launches after process creation, the hot launch at the user's action.
    let starts: Vec<_> = log
        .iter()
        .filter_map(|c| match c {
            Call::LaunchStart(a, k, t) => Some((*a, *k, *t)),
            _ => None,
        })
        .collect();
    assert_eq!(starts.len(), 3, "{log:?}");
    assert_eq!((starts[0].0, starts[0].1), (0, LaunchKind::Cold));
    assert!(
        starts[0].2 > 0 && starts[0].2 < s,
        "after process creation: {:?}",
        starts[0]
    );
    assert_eq!(starts[2], (0, LaunchKind::Hot, 40 * s));
    // Every launch ends with its touched pages (cold launches too), then the app is foreground.
    for (i, c) in log.iter().enumerate() {
        if let Call::LaunchEnd(a, _, touched) = c {
            assert!(*touched > 0, "{c:?}");
            assert_eq!(log[i + 1], Call::Foreground(*a));
        }
    }
    assert!(
        *java_ranges_seen.borrow() > 0,
        "the app view carries the Java heap's ranges"
    );
    // Leaving the foreground, the transition end 5 s later, the policy's timer 1 s later.
    assert!(log.contains(&Call::Background(0, 20 * s)));
    assert!(log.contains(&Call::TransitionEnd(0, 25 * s)));
    assert!(log.contains(&Call::Timer(0, 21 * s)));
    assert!(log.contains(&Call::Background(1, 40 * s)));
    assert!(log.contains(&Call::Timer(1, 41 * s)));
    assert!(log.contains(&Call::Background(0, 60 * s)));
    assert!(log.contains(&Call::Killed(1)));
    assert!(
        log.contains(&Call::Timer(100, 42 * s)),
        "runtime hooks' timers fire too: {log:?}"
    );
    // The queued PAGEOUT was applied; the policy's CPU was charged.
    assert!(
        out.kernel.vmstat.madvise_pageout_pages >= 2 * 2048,
        "{}",
        out.kernel.vmstat.madvise_pageout_pages
    );
    assert_eq!(out.kernel.cpu.by_category(engine::Category::Policy), 3 * 3_000);
}

#[test]
fn launch_start_stall_is_on_the_launch_path() {
    let stock = run(Box::new(framework::sim::StockFramework));
    struct Slow;
    impl FrameworkHooks for Slow {
        fn on_launch_start(&mut self, _k: &mut PolicyKernel, _app: &AppView, kind: LaunchKind) -> Stall {
            match kind {
                LaunchKind::Hot => Stall {
                    ns: 50 * NS_PER_MS,
                    psi_ns: 0,
                },
                LaunchKind::Cold => Stall::ZERO,
            }
        }
    }
    let slow = run(Box::new(Slow));
    assert_eq!(stock.hot_us.len(), 1);
    assert_eq!(slow.hot_us.len(), 1);
    let (a, b) = (stock.hot_us.max(), slow.hot_us.max());
    assert!(
        b >= a + 49_000 && b <= a + 51_000 + a / 10,
        "stock {a} µs, with a 50 ms start stall {b} µs"
    );
}

/// Holds every freed user frame for its process (released at exit): held pages show up in the
/// time series.
#[derive(Default)]
struct HoldFreed {
    held: Vec<(kernel::types::Pid, kernel::types::Pfn)>,
}

impl kernel::hooks::PlacementHook for HoldFreed {
    fn alloc(
        &mut self,
        _: &mut engine::HookCx,
        buddy: &mut kernel::buddy::BuddyAllocator,
        order: u8,
        mt: kernel::types::MigrateType,
        _: kernel::hooks::AllocPurpose,
    ) -> Option<kernel::types::Pfn> {
        buddy
            .alloc(order, mt)
            .or_else(|| self.held.pop().map(|(_, p)| p).filter(|_| order == 0))
    }
    fn free(
        &mut self,
        _: &mut engine::HookCx,
        buddy: &mut kernel::buddy::BuddyAllocator,
        pfn: kernel::types::Pfn,
        order: u8,
        purpose: kernel::hooks::AllocPurpose,
    ) {
        match (order, purpose) {
            (0, kernel::hooks::AllocPurpose::User { pid, .. }) => self.held.push((pid, pfn)),
            _ => buddy.free(pfn, order),
        }
    }
    fn held_free_pages(&self) -> u64 {
        self.held.len() as u64
    }
    fn process_exit(
        &mut self,
        _: &mut engine::HookCx,
        buddy: &mut kernel::buddy::BuddyAllocator,
        pid: kernel::types::Pid,
    ) {
        self.held.retain(|&(p, f)| {
            if p == pid {
                buddy.free(f, 0);
            }
            p != pid
        });
    }
}

#[test]
fn io_buffer_demand_allocates_per_launch_and_held_pages_are_sampled() {
    let runtime: framework::RuntimeHooksFactory = framework::stock_runtime();
    let demand = framework::sim::IoBufferDemand {
        per_launch: 2.5,
        mb: 3.0,
        live: 2,
        spread_s: 0.0,
        home_window: false,
    };
    let hooks = KernelHooks {
        placement: Box::new(HoldFreed::default()),
        ..KernelHooks::default()
    };
    let out = run_cfg(
        Box::new(framework::sim::StockFramework),
        runtime,
        |c, _| c.io_buffers = Some(demand),
        hooks,
    );
    // Three launches at 2.5 buffers each: 2 + 3 + 2 (the fraction carries over).
    let io = &out.kernel.io_buffers;
    assert_eq!(io.allocations, 7);
    let pages: u64 = io.blocks_by_order.iter().enumerate().map(|(o, n)| n << o).sum();
    assert_eq!(pages, 7 * 768);
    assert_eq!(io.bytes, 7 * (3 << 20));
    // Every buffer was released: no kernel frames left but the processes' own.
    assert!(
        out.samples.iter().any(|s| s.held_free_pages > 0),
        "held pages are sampled"
    );
    out.kernel.check_invariants().unwrap();
    // Without demand, nothing is allocated (stock).
    let none = run_with(
        Box::new(framework::sim::StockFramework),
        framework::stock_runtime(),
    );
    assert_eq!(none.kernel.io_buffers.allocations, 0);
    assert!(none.samples.iter().all(|s| s.held_free_pages == 0));
}

/// Runs the three-launch day with `spread_s` and returns the buffers allocated.
/// The three-launch day with an I/O-buffer demand: (allocations, bytes).
fn io_run(spread_s: f64, home_window: bool) -> (u64, u64) {
    let demand = framework::sim::IoBufferDemand {
        per_launch: 2.5,
        mb: 3.0,
        live: 2,
        spread_s,
        home_window,
    };
    let out = run_cfg(
        Box::new(framework::sim::StockFramework),
        framework::stock_runtime(),
        |c, _| c.io_buffers = Some(demand),
        KernelHooks::default(),
    );
    out.kernel.check_invariants().unwrap();
    (out.kernel.io_buffers.allocations, out.kernel.io_buffers.bytes)
}

fn io_allocations_with_spread(spread_s: f64) -> u64 {
    io_run(spread_s, false).0
}

#[test]
fn io_buffers_spread_over_the_foreground_and_stop_when_the_app_leaves() {
    // Launches at 0, 20 and 40 s (each ends the previous one's foreground) with 2, 3 and 2
    // buffers. Over 30 s: buffers at +0 and +15 s (2 of 2), +0, +10, +20 s (the third is due after
    // the next launch: 2 of 3), +0 and +15 s before Home at 60 s (2 of 2).
    assert_eq!(io_allocations_with_spread(30.0), 6);
    // Over 5 s every buffer falls inside its launch's foreground; over an hour only the first.
    assert_eq!(io_allocations_with_spread(5.0), 7);
    assert_eq!(io_allocations_with_spread(3600.0), 3);
}

#[test]
fn home_allocates_the_launchers_window_buffers_when_asked() {
    // The three-launch day goes Home at 60 s: with `home_window` the launcher's BufferQueue (3
    // screen-sized RGBA_8888 buffers of the Pixel 3's 1080 x 2160 panel) is allocated then, on
    // top of the apps' 7 buffers; without it Home allocates nothing.
    let with = |home_window: bool| io_run(0.0, home_window);
    let screen = 1080 * 2160 * 4;
    assert_eq!(with(false), (7, 7 * (3 << 20)));
    assert_eq!(with(true), (10, 7 * (3 << 20) + 3 * screen));
}

#[test]
fn policy_metrics_reach_the_output_and_stock_reports_none() {
    struct Reports;
    impl FrameworkHooks for Reports {
        fn metrics(&self, out: &mut std::collections::BTreeMap<String, f64>) {
            out.insert("x.launches_seen".into(), 3.0);
        }
    }
    let out = run(Box::new(Reports));
    assert_eq!(out.policy_metrics.get("x.launches_seen"), Some(&3.0));
    let stock = run(Box::new(framework::sim::StockFramework));
    assert!(stock.policy_metrics.is_empty());
    // No app of this run churns: no churn rounds are recorded.
    assert!(stock.churn_rounds.is_empty());
}

#[test]
fn launch_split_parts_sum_to_the_latency_and_place_a_hook_stall() {
    let stock = run(Box::new(framework::sim::StockFramework));
    for l in &stock.launch_log {
        let s = &l.split;
        assert_eq!(s.sum() + s.other_ns, l.end - l.t, "{l:?}");
        assert!(s.app_ns > 0, "{l:?}");
    }
    // A launch-start stall without CPU is `other` (it is not the app's work nor a fault).
    struct Slow;
    impl FrameworkHooks for Slow {
        fn on_launch_start(&mut self, _k: &mut PolicyKernel, _app: &AppView, kind: LaunchKind) -> Stall {
            match kind {
                LaunchKind::Hot => Stall {
                    ns: 50 * NS_PER_MS,
                    psi_ns: 0,
                },
                LaunchKind::Cold => Stall::ZERO,
            }
        }
    }
    let slow = run(Box::new(Slow));
    let hot = |o: &SimOutput| o.launch_log.iter().find(|l| l.hot).map(|l| l.split).unwrap();
    let (a, b) = (hot(&stock), hot(&slow));
    assert!(
        b.other_ns >= a.other_ns + 50 * NS_PER_MS,
        "stock {a:?}, slow {b:?}"
    );
    assert_eq!(a.app_ns, b.app_ns);
}

/// The three-launch day with app 0 writing `data_pages` data pages at `fg`/`bg` pages/s.
fn run_writes(data_pages: u32, fg: f64, bg: f64) -> SimOutput {
    run_cfg(
        Box::new(framework::sim::StockFramework),
        framework::stock_runtime(),
        |_, apps| {
            apps[0].data_pages = data_pages;
            apps[0].fg_write_pages_per_s = fg;
            apps[0].bg_write_pages_per_s = bg;
        },
        KernelHooks::default(),
    )
}

#[test]
fn app_file_writes_reach_flash_through_the_flusher_and_zero_rate_writes_nothing() {
    // App 0 is in the foreground for ~40 of the 90 s: 10 pages/s dirty up to 64 pages, which
    // the flusher writes back 30 s later; the day ends before later writes expire.
    let out = run_writes(64, 10.0, 0.0);
    let written = out.kernel.flash.bytes_written;
    let flushed = out.kernel.vmstat.flusher_written_pages;
    assert!(flushed > 0 && flushed <= 2 * 64, "{flushed}");
    assert_eq!(written, flushed * 4096 + out.kernel.vmstat.pgpgout_file * 4096);
    out.kernel.check_invariants().unwrap();
    // Same data files, no rate: nothing written.
    let none = run_writes(64, 0.0, 0.0);
    assert_eq!(none.kernel.flash.bytes_written, 0);
    assert_eq!(none.kernel.vmstat.flusher_written_pages, 0);
    // ~400 writes to 1024 data pages (80% to the hot 204): each page read at most once and
    // alone (a one-page pread, then a whole-page write), so at most ~204 + 80 pages; a fault's
    // 32-page read-around would read nearly all 1024.
    let big = run_writes(1024, 10.0, 0.0);
    let none = run_writes(1024, 0.0, 0.0);
    let extra = (big.kernel.flash.bytes_read - none.kernel.flash.bytes_read) / 4096;
    assert!(extra > 0 && extra <= 400, "{extra} pages read");
    // Deterministic.
    assert_eq!(run_writes(64, 10.0, 0.0).kernel.flash.bytes_written, written);
}

fn run_ui(ui_pages: u32) -> SimOutput {
    let tweak = move |sc: &mut SimConfig, apps: &mut [AppModel]| {
        sc.invariant_check_every = 10 * NS_PER_SEC;
        for a in apps {
            a.ui_pages = ui_pages;
        }
    };
    run_cfg(
        Box::new(framework::sim::StockFramework),
        framework::stock_runtime(),
        tweak,
        KernelHooks::default(),
    )
}

#[test]
fn hidden_ui_frees_its_pages_and_the_next_first_frame_recreates_them() {
    const UI: u32 = 512;
    let (off, on) = (run_ui(0), run_ui(UI));
    let s = NS_PER_SEC;
    let anon_at = |o: &SimOutput, t: Nanos| o.samples.iter().find(|x| x.t == t).unwrap().anon_pages;
    // App 0 hidden at 25 s (5 s after app 1's launch), shown again at 40 s (app 1 hidden at 45 s),
    // Home at 60 s hides it again (65 s), app 1 is killed at 80 s.
    for (t, hidden) in [(10, 0), (30, 1), (50, 1), (70, 2), (90, 1)] {
        assert_eq!(
            anon_at(&off, t * s) - anon_at(&on, t * s),
            hidden * UI as u64,
            "{hidden} hidden UIs at {t} s"
        );
    }
    assert_eq!((off.ui_released_pages, on.ui_released_pages), (0, 3 * UI as u64));
    // Nothing was swapped or lost; the kernel's and heaps' invariants held throughout.
    for o in [&off, &on] {
        assert_eq!(o.kernel.integrity.checksum_mismatches, 0);
        assert!(
            o.invariant_checks.first_violation.is_none(),
            "{:?}",
            o.invariant_checks
        );
        assert!(o.invariant_checks.done > 0);
    }
    // The hot launch writes the UI pages again: at least a minor fault each on its main thread.
    let fault_us = device::DeviceProfile::builtin("pixel3")
        .unwrap()
        .cpu
        .minor_fault_ns
        / 1000;
    assert_eq!((off.hot_us.len(), on.hot_us.len()), (1, 1));
    let (a, b) = (off.hot_us.max(), on.hot_us.max());
    assert!(
        b >= a + UI as u64 * fault_us,
        "hot launch {a} µs, with the UI re-created {b} µs"
    );
}

/// ActivityManager keeps `max_cached - max_cached / 2` cached apps plus the previous app: with a
/// limit of 0 the previous app survives each switch, and only at Home (60 s), when both apps are
/// in the background, is the older one killed ("cached #1").
#[test]
fn the_cached_process_limit_spares_the_previous_app() {
    assert_eq!(framework::sim::cached_process_limit(32), 16);
    assert_eq!(framework::sim::cached_process_limit(3), 2);
    let limited = |max_cached: usize| {
        let tweak = move |sc: &mut SimConfig, _: &mut [AppModel]| sc.max_cached = max_cached;
        let o = run_cfg(
            Box::new(framework::sim::StockFramework),
            framework::stock_runtime(),
            tweak,
            KernelHooks::default(),
        );
        o.kills.get("cached_limit").copied().unwrap_or(0)
    };
    assert_eq!(limited(0), 1);
    assert_eq!(limited(32), 0);
}
