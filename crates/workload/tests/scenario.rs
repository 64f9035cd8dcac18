//! Scenario files: built-ins resolve, errors are one line naming file and key, the parser
//! never panics.

use hotlaunch_workload::scenario::{self, ResolvedScenario, Scenario, ScenarioError, SwapMode, WorkloadSpec};
use hotlaunch_workload::user::Action;
use proptest::prelude::*;

fn resolve_text(text: &str) -> Result<ResolvedScenario, ScenarioError> {
    Scenario::from_toml_str(text, "s.toml")?.resolve()
}

fn err(text: &str) -> String {
    let e = resolve_text(text).unwrap_err().to_string();
    assert!(!e.contains('\n'), "{e}");
    assert!(e.starts_with("scenario s.toml"), "{e}");
    e
}

const BASE: &str = r#"
name = "t"
seed = 3
device = "pixel3"
swap = "zram"
[apps]
names = ["YouTube", "Twitter"]
[workload]
kind = "script"
[[workload.events]]
launch = "YouTube"
context = "shorts"
use_s = 30
[[workload.events]]
home = true
wait_s = 5
[[workload.events]]
launch = "twitter"
use_s = 10
"#;

#[test]
fn builtins_resolve() {
    for n in scenario::builtin_names() {
        let r = scenario::resolve(n).unwrap_or_else(|e| panic!("{e}"));
        assert!(!r.timeline.events.is_empty(), "{n}");
        assert!(
            r.timeline.events.windows(2).all(|w| w[0].at_ns <= w[1].at_ns),
            "{n}: not time-ordered"
        );
        assert!(r.timeline.end_ns >= r.timeline.events.last().unwrap().at_ns);
        for e in &r.timeline.events {
            match e.action {
                Action::Launch { app, context } => {
                    assert!(app < r.apps.len() && context < r.apps[app].contexts.len())
                }
                Action::Alloc { app, .. } | Action::Kill { app } => assert!(app < r.apps.len()),
                Action::Home => {}
            }
        }
    }
}

#[test]
fn default_is_a_day_of_20_apps() {
    let r = scenario::resolve("default").unwrap();
    assert_eq!(r.device.name, "pixel3");
    assert_eq!(r.device.memory.dram_mb, 4096);
    assert_eq!(r.apps.len(), 20);
    assert_eq!(r.timeline.launches(), 300);
    let hours = r.timeline.end_ns as f64 / 3.6e12;
    assert!((8.0..30.0).contains(&hours), "{hours} h");
    let used: std::collections::BTreeSet<usize> = r
        .timeline
        .events
        .iter()
        .filter_map(|e| {
            if let Action::Launch { app, .. } = e.action {
                Some(app)
            } else {
                None
            }
        })
        .collect();
    assert!(used.len() >= 15, "only {} apps used", used.len());
    assert_eq!(r.swap, Some(SwapMode::Zram));
}

#[test]
fn same_seed_same_timeline_and_seed_matters() {
    let a = scenario::resolve("default").unwrap();
    let b = scenario::resolve("default").unwrap();
    assert_eq!(a.timeline, b.timeline);
    let mut s = Scenario::builtin("default").unwrap();
    s.seed = 2;
    assert_ne!(s.resolve().unwrap().timeline, a.timeline);
}

#[test]
fn paper_scenarios_have_their_protocols() {
    let r = scenario::resolve("fleet-fig2-twitter").unwrap();
    assert_eq!(r.timeline.launches(), 40);
    assert_eq!(
        r.timeline
            .events
            .iter()
            .filter(|e| matches!(e.action, Action::Kill { .. }))
            .count(),
        20
    );
    let r = scenario::resolve("fleet-3.1-instagram-swap").unwrap();
    let ig = r.app_index("Instagram").unwrap();
    let launches: Vec<usize> = r
        .timeline
        .events
        .iter()
        .filter_map(|e| {
            if let Action::Launch { app, .. } = e.action {
                Some(app)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(launches.iter().filter(|&&a| a == ig).count(), 21);
    assert_eq!(launches.len(), 21 + 20 * 10);
    assert_eq!(r.variants.len(), 2);
    // Fleet §3.1 "with swap": the 2 GB flash partition with zram off, as the artifact's
    // configure-flash-swap.sh sets the phone up (specs/fleet.md).
    assert_eq!(r.variants[1].swap, Some(SwapMode::Flash));
    // 30 s between launches.
    let l: Vec<u64> = r
        .timeline
        .events
        .iter()
        .filter(|e| matches!(e.action, Action::Launch { .. }))
        .map(|e| e.at_ns)
        .collect();
    assert!(l.windows(2).all(|w| w[1] - w[0] == 30_000_000_000));
    let r = scenario::resolve("marvin-fig3-alloc").unwrap();
    let allocs: Vec<f64> = r
        .timeline
        .events
        .iter()
        .filter_map(|e| {
            if let Action::Alloc { mb, .. } = e.action {
                Some(mb)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(allocs, vec![512.0, 512.0]);
    let r = scenario::resolve("ariadne-fig2-zram").unwrap();
    assert_eq!(r.device.name, "pixel7");
    assert_eq!(r.timeline.launches(), 5 * (1 + 5 * 10));
    let r = scenario::resolve("ismm15-livelab").unwrap();
    assert_eq!((r.apps.len(), r.timeline.launches()), (22, 1000));
}

#[test]
fn script_events_resolve() {
    let r = resolve_text(BASE).unwrap();
    assert_eq!(r.seed, 3);
    let ev = &r.timeline.events;
    assert_eq!(ev[0].action, Action::Launch { app: 0, context: 1 });
    assert_eq!(ev[1].action, Action::Home);
    assert_eq!(ev[1].at_ns, 30_000_000_000);
    assert_eq!(ev[2].action, Action::Launch { app: 1, context: 0 });
    assert_eq!(ev[2].at_ns, 35_000_000_000);
    assert!(matches!(r.workload, WorkloadSpec::Script { .. }));
}

#[test]
fn bad_inputs_give_one_line_errors() {
    let e = err(&BASE.replace("seed = 3", "seed = 3\ncolour = 1"));
    assert!(
        e.contains("line 4") && e.contains("key colour") && e.contains("unknown field"),
        "{e}"
    );
    let e = err(&BASE.replace("kind = \"script\"", "kind = \"script\"\nlaunches = 5"));
    assert!(
        e.contains("key workload.launches") && e.contains("kind = \"script\""),
        "{e}"
    );
    let e = err(&BASE.replace("kind = \"script\"", "kind = \"random\""));
    assert!(e.contains("key workload.kind") && e.contains("livelab"), "{e}");
    let e = err(&BASE.replace("[\"YouTube\", \"Twitter\"]", "[\"YouTube\", \"Twiter\"]"));
    assert!(
        e.contains("key apps.names[1]") && e.contains("Twiter") && e.contains("known:"),
        "{e}"
    );
    let e = err(&BASE.replace("launch = \"twitter\"", "launch = \"Reddit\""));
    assert!(
        e.contains("line 18") && e.contains("key workload.events[2].launch") && e.contains("Reddit"),
        "{e}"
    );
    let e = err(&BASE.replace("context = \"shorts\"", "context = \"music\""));
    assert!(
        e.contains("key workload.events[0].context") && e.contains("video, shorts"),
        "{e}"
    );
    let e = err(&BASE.replace("device = \"pixel3\"", "device = \"pixel9\""));
    assert!(e.contains("key device") && e.contains("pixel9"), "{e}");
    let e = err(&BASE.replace("swap = \"zram\"", "swap = \"disk\""));
    assert!(e.contains("key swap") && e.contains("zram+flash"), "{e}");
    let e = err(&BASE.replace("home = true", "home = true\nlaunch = \"YouTube\""));
    assert!(
        e.contains("workload.events[1]") && e.contains("exactly one"),
        "{e}"
    );
    let e = err(&BASE.replace(
        "[[workload.events]]\nhome = true",
        "[[workload.events]]\nhome = true\nbogus = 1",
    ));
    assert!(e.contains("key workload.events[1].bogus"), "{e}");
    let e = err(&BASE.replace("use_s = 30", "use_s = -1"));
    assert!(e.contains("key workload.events[0].use_s"), "{e}");
    let e = err(&BASE.replace("[apps]", "[[variants]]\nname = \"a\"\nswap = \"x\"\n[apps]"));
    assert!(e.contains("key variants[0].swap"), "{e}");
    let e = err("name = \"x\"\ndevice = \"pixel3\"\n[apps]\nnames = [\"YouTube\"]\n");
    assert!(e.contains("workload") && e.contains("missing"), "{e}");
    let livelab = BASE.replace("kind = \"script\"", "kind = \"livelab\"");
    let e = err(livelab.split("[[workload").next().unwrap());
    assert!(e.contains("key workload.launches"), "{e}");
}

#[test]
fn device_too_small_is_rejected_with_file_and_key() {
    let dir = std::env::temp_dir().join(format!("hotlaunch-scn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dev = device::builtin_toml("pixel3").unwrap();
    let small = dev
        .lines()
        .map(|l| {
            if l.starts_with("system_reserve_mb") {
                "system_reserve_mb = 5000".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(dir.join("tiny.toml"), small).unwrap();
    std::fs::write(dir.join("scn.toml"), BASE.replace("\"pixel3\"", "\"tiny.toml\"")).unwrap();
    let e = Scenario::load(&dir.join("scn.toml"))
        .unwrap()
        .resolve()
        .unwrap_err()
        .to_string();
    assert!(!e.contains('\n'));
    assert!(
        e.contains("scn.toml")
            && e.contains("key device")
            && e.contains("tiny.toml")
            && e.contains("memory."),
        "{e}"
    );
    // Relative app paths resolve against the scenario's directory too.
    std::fs::write(
        dir.join("myapp.toml"),
        apps::builtin_toml("Twitter")
            .unwrap()
            .replace("\"Twitter\"", "\"MyApp\""),
    )
    .unwrap();
    std::fs::write(
        dir.join("scn2.toml"),
        BASE.replace("\"Twitter\"]", "\"myapp.toml\"]")
            .replace("launch = \"twitter\"", "launch = \"MyApp\""),
    )
    .unwrap();
    let r = Scenario::load(&dir.join("scn2.toml")).unwrap().resolve().unwrap();
    assert_eq!(r.apps[1].name, "MyApp");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn duplicate_apps_become_instances() {
    let r = resolve_text(&BASE.replace(
        "[\"YouTube\", \"Twitter\"]",
        "[\"YouTube\", \"Twitter\", \"Twitter\"]",
    ))
    .unwrap();
    assert_eq!(r.apps[2].name, "Twitter#2");
    assert_eq!(r.app_index("twitter#2"), Some(2));
}

#[test]
fn unknown_builtin_lists_names() {
    let e = Scenario::resolve_name("nope").unwrap_err().to_string();
    assert!(e.contains("default") && e.contains("fleet-fig2-twitter"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]
    #[test]
    fn random_text_never_panics(s in "\\PC{0,300}") {
        if let Err(e) = resolve_text(&s) {
            prop_assert!(!e.to_string().contains('\n'));
        }
    }

    #[test]
    fn mutations_never_panic(which in 0usize..6, pos in 0usize..4000, len in 0usize..16, ins in "[ -~\\n]{0,14}") {
        let names = scenario::builtin_names();
        let t = scenario::builtin_toml(names[which % names.len()]).unwrap();
        let mut pos = pos.min(t.len());
        while !t.is_char_boundary(pos) { pos -= 1; }
        let mut end = (pos + len).min(t.len());
        while !t.is_char_boundary(end) { end -= 1; }
        let m = format!("{}{}{}", &t[..pos], ins, &t[end..]);
        match Scenario::from_toml_str(&m, "m.toml") {
            Ok(mut s) => {
                // Keep generated workloads small enough for a property test.
                if let WorkloadSpec::LiveLab { launches, .. } = &mut s.workload { *launches = (*launches).min(2000); }
                if let Err(e) = s.resolve() { prop_assert!(!e.to_string().contains('\n')); }
            }
            Err(e) => {
                let s = e.to_string();
                prop_assert!(!s.contains('\n'));
                prop_assert!(s.starts_with("scenario m.toml"));
            }
        }
    }
}

#[test]
fn android_lmkd_kills_parses_and_rejects_non_booleans() {
    assert!(
        resolve_text(BASE).unwrap().device.stock().lmkd_kills,
        "on by default"
    );
    let r = resolve_text(&format!("{BASE}\n[android]\nlmkd_kills = false\n")).unwrap();
    assert!(!r.device.stock().lmkd_kills);
    // The scenario's key overrides only that key: the release's lmkd mode stays.
    assert_eq!(r.device.stock().lmkd, device::LmkdMode::Psi);
    for bad in ["\"no\"", "0", "[false]"] {
        let e = err(&format!("{BASE}\n[android]\nlmkd_kills = {bad}\n"));
        assert!(
            !e.contains('\n') && e.contains("android.lmkd_kills") && e.contains("line "),
            "{e}"
        );
    }
}

#[test]
fn android_overrides_and_all_in_dram_variants() {
    // A scenario's [android] table overrides the device's release-decided features.
    let text =
        format!("{BASE}\n[android]\nlmkd = \"lowmemorykiller\"\nforeground_heap_growth_multiplier = 2.0\n");
    let r = resolve_text(&text).unwrap();
    assert_eq!(r.device.stock().lmkd, device::LmkdMode::InKernel);
    assert_eq!(r.device.stock().foreground_heap_growth_multiplier, 2.0);
    let e = err(&format!(
        "{BASE}\n[android]\nforeground_heap_growth_multiplier = 0.9\n"
    ));
    assert!(
        e.contains("android.foreground_heap_growth_multiplier") && e.contains("line "),
        "{e}"
    );
    let e = err(&format!("{BASE}\n[android]\nandroid_release = \"Q\"\n"));
    assert!(e.contains("android.android_release"), "{e}");
    // all_in_dram: no swap key, or "none".
    let v = "\n[[variants]]\nname = \"dram\"\nall_in_dram = true\n";
    let r = resolve_text(&format!("{BASE}{v}")).unwrap();
    assert!(r.variants[0].all_in_dram);
    let e = err(&format!("{BASE}{v}swap = \"zram\"\n"));
    assert!(e.contains("variants[0].swap"), "{e}");
}

#[test]
fn variant_lmk_minfree_takes_six_page_counts() {
    // Marvin's swap-file baseline: the in-kernel killer's thresholds set to zero.
    let v = "\n[[variants]]\nname = \"swap-file\"\nlmk_minfree = [0, 0, 0, 0, 0, 0]\n";
    let r = resolve_text(&format!("{BASE}{v}")).unwrap();
    assert_eq!(r.variants[0].lmk_minfree, Some([0; 6]));
    let r = resolve_text(&format!("{BASE}\n[[variants]]\nname = \"stock\"\n")).unwrap();
    assert_eq!(r.variants[0].lmk_minfree, None);
    let e = err(&format!(
        "{BASE}\n[[variants]]\nname = \"w\"\nlmk_minfree = [0, 0]\n"
    ));
    assert!(
        e.contains("variants[0].lmk_minfree") && e.contains("six page counts") && e.contains("line "),
        "{e}"
    );
    let e = err(&format!(
        "{BASE}\n[[variants]]\nname = \"w\"\nlmk_minfree = [-1, 0, 0, 0, 0, 0]\n"
    ));
    assert!(!e.contains('\n') && e.contains("lmk_minfree"), "{e}");
}

#[test]
fn java_tables_apply_to_every_app_and_are_checked() {
    // Off by default: no app gets linked allocation.
    let r = resolve_text(BASE).unwrap();
    assert!(r.apps.iter().all(|a| a.java.linked.is_none()));
    let r = resolve_text(&format!("{BASE}\n[java.linked]\nshare = 0.25\n")).unwrap();
    for a in &r.apps {
        let l = a.java.linked.expect("the scenario's [java.linked] applies");
        assert_eq!(l.share, 0.25);
        assert_eq!(l.bg_death_per_gc, apps::LinkedSection::default().bg_death_per_gc);
    }
    let e = err(&format!("{BASE}\n[java.linked]\nfg_death_per_gc = 0\n"));
    assert!(
        e.contains("java.linked.fg_death_per_gc") && e.contains("line "),
        "{e}"
    );
    let e = err(&format!("{BASE}\n[java.linked]\nshar = 0.1\n"));
    assert!(e.contains("shar"), "{e}");
    let r = resolve_text(&format!("{BASE}\n[java.launch_bias]\nnear_root_share = 0.4\n")).unwrap();
    assert!(r
        .apps
        .iter()
        .all(|a| a.java.launch_bias.is_some_and(|b| b.near_root_share == 0.4)));
    let e = err(&format!(
        "{BASE}\n[java.launch_bias]\nnear_root_share = 0.9\nyoung_share = 0.2\n"
    ));
    assert!(e.contains("java.launch_bias.young_share"), "{e}");
}

#[test]
fn fleet_scenarios_turn_the_java_workload_behaviours_on_and_others_keep_them_off() {
    for name in scenario::builtin_names() {
        let r = Scenario::builtin(name).unwrap().resolve().unwrap();
        let on = ["fleet-7.2-hotlaunch", "fleet-7.1-gc", "fleet-7.1-commercial"].contains(&name);
        for a in &r.apps {
            assert_eq!(a.java.linked.is_some(), on, "{name}: {}", a.name);
            assert_eq!(a.java.launch_bias.is_some(), on, "{name}: {}", a.name);
        }
    }
}

#[test]
fn io_buffer_spread_is_parsed_and_checked() {
    let io = |extra: &str| format!("{BASE}\n[io_buffers]\nper_launch = 13.3\nmb = 11.0\n{extra}");
    let r = resolve_text(&io("spread_s = 12\nlive = 14\n")).unwrap();
    let b = r.io_buffers.unwrap();
    assert_eq!((b.spread_s, b.live), (12.0, 14));
    assert_eq!(resolve_text(&io("")).unwrap().io_buffers.unwrap().spread_s, 0.0);
    assert!(!b.home_window, "off unless asked");
    assert!(
        resolve_text(&io("home_window = true\n"))
            .unwrap()
            .io_buffers
            .unwrap()
            .home_window
    );
    let e = err(&io("home_window = 1\n"));
    assert!(e.contains("home_window"), "{e}");
    let e = err(&io("spread_s = -1\n"));
    assert!(e.contains("io_buffers.spread_s") && e.contains("line "), "{e}");
    let b = scenario::builtin_toml("ismm15-livelab").unwrap();
    let s = Scenario::from_toml_str(b, "ismm15-livelab")
        .unwrap()
        .resolve()
        .unwrap();
    assert!(
        s.io_buffers.unwrap().spread_s > 0.0,
        "the paper's demand is spread"
    );
}
