//! Contract tests of composition: each claimed seam comes from the part that claims it, an
//! exclusive seam claimed twice is an error naming both parts and the seam (before anything
//! runs), framework hooks of several parts are all called in order, and a [`Composed`] policy
//! hands each part its own parameters.
//!
//! Which hook object ends up where is observed through `Drop` (a hook dropped by `compose` was
//! not taken), so these tests do not depend on the hook traits' method signatures, except the
//! framework chain test, which calls the CURRENT `FrameworkHooks` methods (adapt it with
//! `ChainedFramework`).

use std::cell::RefCell;
use std::rc::Rc;

use device::DeviceProfile;
use engine::Stall;
use framework::sim::{AppView, LaunchKind, PolicyKernel};
use framework::FrameworkHooks;
use hotlaunch_policy::android::Android;
use hotlaunch_policy::testing::Knobs;
use hotlaunch_policy::{
    compose, resolve_params, Composed, ParamValue, Params, Part, Policy, PolicyParts, Seams,
};
use kernel::hooks::{FaultHook, KernelHooks, PlacementHook, ReclaimHook};
use kernel::types::PageIdx;
use kernel::Kernel;

type Log = Rc<RefCell<Vec<String>>>;

/// A hook of every kind that logs its own drop.
struct Tracked(Log, String);
impl Drop for Tracked {
    fn drop(&mut self) {
        self.0.borrow_mut().push(format!("drop {}", self.1));
    }
}
impl ReclaimHook for Tracked {}
impl FaultHook for Tracked {}
impl PlacementHook for Tracked {}
impl FrameworkHooks for Tracked {}

/// Parts named `name` whose every hook is tracked, claiming `claims`.
fn part(log: &Log, name: &str, claims: Seams) -> PolicyParts {
    let t = |seam: &str| Tracked(log.clone(), format!("{name}.{seam}"));
    let rt = t("runtime");
    let mut stock = framework::stock_runtime();
    PolicyParts {
        backends: Vec::new(),
        kernel_hooks: KernelHooks {
            reclaim: Box::new(t("reclaim")),
            shrinkers: Vec::new(),
            fault: Box::new(t("fault")),
            placement: Box::new(t("placement")),
        },
        framework_hooks: Box::new(t("framework")),
        runtime_hooks: Box::new(move |app| {
            let _keep = &rt;
            stock(app)
        }),
        claims,
    }
}

fn drained(log: &Log) -> Vec<String> {
    let mut v = std::mem::take(&mut *log.borrow_mut());
    v.sort();
    v
}

#[test]
fn each_seam_comes_from_its_claimant_and_the_rest_is_dropped() {
    let log: Log = Rc::default();
    let composed = compose(
        "mix",
        vec![
            ("a", part(&log, "a", Seams::RECLAIM | Seams::FRAMEWORK)),
            ("b", part(&log, "b", Seams::FAULT | Seams::RUNTIME)),
            ("c", part(&log, "c", Seams::PLACEMENT)),
        ],
    )
    .unwrap();
    assert_eq!(
        composed.claims,
        Seams::RECLAIM | Seams::FRAMEWORK | Seams::FAULT | Seams::RUNTIME | Seams::PLACEMENT
    );
    // Everything not claimed was dropped by compose...
    let mut expect_dropped: Vec<String> = [
        "a.fault",
        "a.placement",
        "a.runtime",
        "b.reclaim",
        "b.placement",
        "b.framework",
        "c.reclaim",
        "c.fault",
        "c.framework",
        "c.runtime",
    ]
    .iter()
    .map(|s| format!("drop {s}"))
    .collect();
    expect_dropped.sort();
    assert_eq!(drained(&log), expect_dropped);
    // ...and the claimed hooks live in the composed parts.
    drop(composed);
    let mut kept: Vec<String> = ["a.reclaim", "a.framework", "b.fault", "b.runtime", "c.placement"]
        .iter()
        .map(|s| format!("drop {s}"))
        .collect();
    kept.sort();
    assert_eq!(drained(&log), kept);
}

#[test]
fn an_exclusive_seam_claimed_twice_is_an_error_naming_both_parts() {
    for (seam, name) in Seams::ALL {
        let log: Log = Rc::default();
        let r = compose(
            "mix",
            vec![
                ("first", part(&log, "x", seam)),
                ("none", part(&log, "y", Seams::NONE)),
                ("second", part(&log, "z", seam | Seams::FRAMEWORK)),
            ],
        );
        if Seams::EXCLUSIVE.contains(seam) {
            let e = r.err().expect("conflict");
            assert_eq!(
                e,
                format!("policy mix: parts `first` and `second` both claim the exclusive seam `{name}`")
            );
        } else {
            assert!(r.is_ok(), "{name} is chainable");
        }
    }
    assert!(!Seams::EXCLUSIVE.contains(Seams::FRAMEWORK));
}

#[test]
fn unclaimed_seams_are_stock_and_no_part_means_no_swap() {
    let device = DeviceProfile::builtin("pixel3").unwrap();
    let stock = compose("empty", Vec::new()).unwrap();
    assert_eq!(stock.claims, Seams::NONE);
    assert!(stock.backends.is_empty());
    let android = Android { flash_swap: true }
        .build(&device, Default::default(), &Params::default())
        .unwrap();
    assert_eq!(android.claims, Seams::SWAP_BACKENDS);
    let n = android.backends.len();
    let c = compose("only-android", vec![("android-swap", android)]).unwrap();
    assert_eq!(c.backends.len(), n);
    assert_eq!(n, 2, "zram + flash");
}

/// Records every framework callback as `<name>:<method>`.
struct Recorder(Log, &'static str);
// One override per trait method.
impl FrameworkHooks for Recorder {
    fn on_launch_start(&mut self, _k: &mut PolicyKernel, _app: &AppView, kind: LaunchKind) -> Stall {
        self.0
            .borrow_mut()
            .push(format!("{}:launch_start({kind:?})", self.1));
        Stall { ns: 5, psi_ns: 0 }
    }
    fn on_launch_end(
        &mut self,
        _k: &mut PolicyKernel,
        _app: &AppView,
        kind: LaunchKind,
        touched: &[PageIdx],
    ) {
        self.0
            .borrow_mut()
            .push(format!("{}:launch_end({kind:?},{})", self.1, touched.len()));
    }
    fn on_foreground(&mut self, _k: &mut PolicyKernel, _app: &AppView) {
        self.0.borrow_mut().push(format!("{}:foreground", self.1));
    }
    fn on_background(&mut self, _k: &mut PolicyKernel, _app: &AppView) {
        self.0.borrow_mut().push(format!("{}:background", self.1));
    }
    fn on_transition_end(&mut self, _k: &mut PolicyKernel, _app: &AppView) {
        self.0.borrow_mut().push(format!("{}:transition_end", self.1));
    }
    fn on_killed(&mut self, _k: &mut PolicyKernel, app: usize) {
        self.0.borrow_mut().push(format!("{}:killed({app})", self.1));
    }
    fn on_timer(&mut self, _k: &mut PolicyKernel, token: u64) {
        self.0.borrow_mut().push(format!("{}:timer({token})", self.1));
    }
}

#[test]
fn chained_framework_calls_every_part() {
    let log: Log = Rc::default();
    let mut parts = Vec::new();
    for name in ["one", "two", "three"] {
        let mut p = PolicyParts::stock(Vec::new());
        p.framework_hooks = Box::new(Recorder(log.clone(), name));
        p.claims = if name == "two" {
            Seams::NONE
        } else {
            Seams::FRAMEWORK
        };
        parts.push((name, p));
    }
    let mut c = compose("chain", parts).unwrap();
    let device = DeviceProfile::builtin("pixel3").unwrap();
    let mut contents = content::ContentStore::new();
    contents.append_synthetic(&content::SynthMix::default(), 16, 1);
    let mut k = Kernel::new(&device, contents, Vec::new(), KernelHooks::default()).unwrap();
    let view = AppView {
        app: 0,
        pid: 1,
        now: 0,
        state: framework::sim::AppState::Foreground,
        context: 0,
        native_first: 0,
        native_pages: 0,
        file_first: 0,
        file_pages: 0,
        java_ranges: Vec::new(),
    };
    let h = &mut c.framework_hooks;
    let k = &mut k.policy_kernel(0, engine::Actor::Kernel);
    let stall = h.on_launch_start(k, &view, LaunchKind::Hot);
    assert_eq!(stall.ns, 10, "the two claiming parts' stalls add up");
    h.on_launch_end(k, &view, LaunchKind::Cold, &[1, 2]);
    h.on_foreground(k, &view);
    h.on_background(k, &view);
    h.on_transition_end(k, &view);
    h.on_killed(k, 7);
    h.on_timer(k, 9);
    let got = log.borrow().clone();
    let want: Vec<String> = [
        "launch_start(Hot)",
        "launch_end(Cold,2)",
        "foreground",
        "background",
        "transition_end",
        "killed(7)",
        "timer(9)",
    ]
    .iter()
    .flat_map(|m| ["one", "three"].map(|p| format!("{p}:{m}")))
    .collect();
    assert_eq!(
        got, want,
        "every claiming part, in part order, for every method; `two` did not claim"
    );
}

#[test]
fn a_composed_policy_namespaces_and_hands_down_parameters() {
    let device = DeviceProfile::builtin("pixel3").unwrap();
    let c = Composed {
        name: "test-unified",
        description: "test",
        parts: vec![
            Part::all(Box::new(Android { flash_swap: false })),
            Part::all(Box::new(Knobs)),
        ],
    };
    let names: Vec<String> = c.params().into_iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        [
            "test-knobs.on",
            "test-knobs.D",
            "test-knobs.ratio",
            "test-knobs.tag",
            "test-knobs.codec"
        ]
    );
    let p = resolve_params(&c, &[("test-knobs.D".into(), ParamValue::Int(3))]).unwrap();
    assert_eq!(p.label("test-unified"), "test-unified(test-knobs.D=3)");
    assert_eq!(p.sub("test-knobs").int("D"), 3);
    let e = resolve_params(&c, &[("D".into(), ParamValue::Int(3))]).unwrap_err();
    assert_eq!(e.key, "D");
    // Knobs builds stock Android too: both claim the swap devices.
    let e = c.build(&device, Default::default(), &p).err().expect("conflict");
    assert_eq!(
        e,
        "policy test-unified: parts `android` and `test-knobs` both claim the exclusive seam `swap-backends`"
    );
    let alone = Composed {
        name: "test-alone",
        description: "test",
        parts: vec![Part::all(Box::new(Knobs))],
    };
    let p = resolve_params(
        &alone,
        &[("test-knobs.codec".into(), ParamValue::Str("zstd".into()))],
    )
    .unwrap();
    let built = alone.build(&device, Default::default(), &p).unwrap();
    assert_eq!(built.claims, Seams::SWAP_BACKENDS);
    assert_eq!(built.backends.len(), 1, "zram");
}

#[test]
fn shrinkers_of_every_claiming_part_are_registered_in_order() {
    struct Named(&'static str, Log);
    impl kernel::hooks::Shrinker for Named {
        fn shrink(
            &mut self,
            _cx: &mut engine::HookCx,
            _sc: &kernel::hooks::ScanControl,
            _want: u64,
            _out: &mut Vec<PageIdx>,
        ) {
            self.1.borrow_mut().push(self.0.to_string());
        }
    }
    let log: Log = Rc::default();
    let mut parts = Vec::new();
    for (name, claims) in [("a", Seams::SHRINKER), ("b", Seams::NONE), ("c", Seams::SHRINKER)] {
        let mut p = PolicyParts::stock(Vec::new());
        p.kernel_hooks.shrinkers.push(Box::new(Named(name, log.clone())));
        p.claims = claims;
        parts.push((name, p));
    }
    let mut c = compose("chain", parts).unwrap();
    assert!(!Seams::EXCLUSIVE.intersects(Seams::SHRINKER));
    let (mut cpu, mut timers) = (engine::CpuLedger::default(), engine::Timers::default());
    let mut cx = engine::HookCx::new(0, engine::Actor::Kswapd, &mut cpu, &mut timers);
    let sc = kernel::hooks::ScanControl {
        priority: 12,
        kswapd: true,
        pass: 0,
        nr_to_reclaim: 32,
    };
    for s in &mut c.kernel_hooks.shrinkers {
        s.shrink(&mut cx, &sc, 32, &mut Vec::new());
    }
    assert_eq!(*log.borrow(), vec!["a".to_string(), "c".to_string()]);
}

#[test]
fn parts_give_only_the_seams_taken_and_fallbacks_yield_to_earlier_parts() {
    let device = DeviceProfile::builtin("pixel3").unwrap();
    // Both build stock swap devices; the second only as a fallback: no conflict, one zram.
    let c = Composed {
        name: "test-fallback",
        description: "test",
        parts: vec![
            Part::all(Box::new(Android { flash_swap: false })),
            Part::taking(Box::new(Knobs), Seams::NONE).or_else(Seams::SWAP_BACKENDS),
        ],
    };
    let p = resolve_params(&c, &[]).unwrap();
    let built = c.build(&device, Default::default(), &p).unwrap();
    assert_eq!(built.claims, Seams::SWAP_BACKENDS);
    assert_eq!(built.backends.len(), 1);
    // The fallback supplies the seam when the earlier part does not (it is switched off), and a
    // composition with no swap part at all still gets stock zram.
    let c = Composed {
        name: "test-optional",
        description: "test",
        parts: vec![
            Part::all(Box::new(Android { flash_swap: true })).optional(),
            Part::taking(Box::new(Knobs), Seams::NONE).or_else(Seams::SWAP_BACKENDS),
        ],
    };
    let names: Vec<String> = c.params().into_iter().map(|s| s.name).collect();
    assert_eq!(names[0], "android-swap.enabled");
    let on = resolve_params(&c, &[]).unwrap();
    assert_eq!(
        c.build(&device, Default::default(), &on).unwrap().backends.len(),
        2,
        "zram + flash"
    );
    let off = resolve_params(&c, &[("android-swap.enabled".into(), ParamValue::Bool(false))]).unwrap();
    let built = c.build(&device, Default::default(), &off).unwrap();
    assert_eq!(
        (built.claims, built.backends.len()),
        (Seams::SWAP_BACKENDS, 1),
        "Knobs' zram"
    );
    let none = Composed {
        name: "test-none",
        description: "test",
        parts: vec![Part::taking(Box::new(Knobs), Seams::NONE)],
    };
    let p = resolve_params(&none, &[]).unwrap();
    let built = none.build(&device, Default::default(), &p).unwrap();
    assert_eq!(
        (built.claims, built.backends.len()),
        (Seams::NONE, 1),
        "stock zram filled in"
    );
}

#[test]
fn a_composition_can_change_a_parts_parameter_default_and_an_override_still_wins() {
    let c = Composed {
        name: "test-unified",
        description: "test",
        parts: vec![Part::all(Box::new(Knobs)).default_param(
            "D",
            ParamValue::Int(5),
            "test: measured in the composition",
        )],
    };
    let spec = c.params().into_iter().find(|s| s.name == "test-knobs.D").unwrap();
    assert_eq!(spec.default, ParamValue::Int(5));
    assert_eq!(spec.source, "test: measured in the composition");
    let p = resolve_params(&c, &[]).unwrap();
    assert_eq!(p.sub("test-knobs").int("D"), 5);
    let p = resolve_params(&c, &[("test-knobs.D".into(), ParamValue::Int(2))]).unwrap();
    assert_eq!(p.sub("test-knobs").int("D"), 2);
}
