use apps::{builtin_names, AppError, AppProfile};
use hotlaunch_apps as apps;
use proptest::prelude::*;

#[test]
fn all_builtins_load_and_validate() {
    let names = builtin_names();
    assert!(names.len() >= 22, "{} profiles", names.len());
    for n in &names {
        let p = AppProfile::builtin(n).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&p.name, n);
        assert!(p.footprint.anon_mb_steady >= p.footprint.anon_mb_start);
        let m = p.synth_mix();
        assert!((m.zero + m.same_filled + m.object + m.text + m.incompressible - 1.0).abs() < 0.011);
    }
    // Paper facts.
    let yt = AppProfile::builtin("youtube").unwrap();
    assert_eq!(
        (yt.footprint.anon_mb_start, yt.footprint.anon_mb_steady),
        (177.0, 358.0)
    );
    assert_eq!(yt.contexts, vec!["video", "shorts"]);
    let tw = AppProfile::builtin("TWITTER").unwrap();
    assert_eq!(tw.launch.hot_launch_ms, 273.0);
    assert_eq!(
        AppProfile::builtin("CandyCrush")
            .unwrap()
            .footprint
            .java_heap_share,
        0.04
    );
    assert_eq!(
        AppProfile::builtin("BangDream").unwrap().footprint.anon_mb_steady,
        821.0
    );
}

#[test]
fn every_builtin_value_has_a_source_comment() {
    for n in builtin_names() {
        let text = apps::builtin_toml(n).unwrap();
        for line in text.lines() {
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') || t.starts_with('[') {
                continue;
            }
            let comment = t.split_once('#').map(|(_, c)| c.trim()).unwrap_or("");
            assert!(comment.len() > 5, "{n}: value without source: {t}");
        }
    }
}

#[test]
fn unknown_builtin_lists_names() {
    let e = AppProfile::builtin("NoSuchApp").unwrap_err().to_string();
    assert!(
        e.contains("NoSuchApp") && e.contains("YouTube") && e.contains("Twitter"),
        "{e}"
    );
    let e = AppProfile::resolve("/nonexistent/x.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a readable file"), "{e}");
    assert!(!e.contains('\n'));
}

fn twitter_text() -> String {
    apps::builtin_toml("Twitter").unwrap().to_string()
}

fn err_of(text: &str) -> String {
    let e = AppProfile::from_toml_str(text, "t.toml").unwrap_err();
    let s = e.to_string();
    assert!(!s.contains('\n'), "{s}");
    s
}

#[test]
fn errors_name_file_and_key() {
    let t = twitter_text();
    let e = err_of(&t.replace("anon_mb_steady = 273", "anon_mb_steady = 100"));
    assert!(
        e.starts_with("app profile t.toml, line 11: key footprint.anon_mb_steady: expected ≥"),
        "{e}"
    );
    let e = err_of(&t.replace("b1_covers_b2 = 0.95", "b1_covers_b2 = 1.5"));
    assert!(
        e.contains("key access.b1_covers_b2: expected a number in [0, 1], got 1.5"),
        "{e}"
    );
    let e = err_of(&t.replace("threads = 90", "threads = 90\ncolour = 1"));
    assert!(e.contains("key colour") && e.contains("unknown field"), "{e}");
    let e = err_of(&t.replace("[launch]", "[launch]\nwarm_launch_ms = 3"));
    assert!(e.contains("key launch.warm_launch_ms"), "{e}");
    let e = err_of(&t.replace("hot_launch_ms = 273", ""));
    assert!(e.contains("launch.hot_launch_ms") && e.contains("missing"), "{e}");
    let e = err_of(&t.replace("foreground_ws_fraction = 0.75", "foreground_ws_fraction = 0.36"));
    assert!(e.contains("key access.foreground_ws_fraction: expected ≥"), "{e}");
    let e = err_of(&t.replace("incompressible = 0.1", "incompressible = 0.5"));
    assert!(e.contains("compressibility") && e.contains("summing to 1"), "{e}");
    let e = err_of(&t.replace("contexts = [\"search\", \"tweet\"]", "contexts = []"));
    assert!(e.contains("key contexts"), "{e}");
    let e = err_of(&t.replace("cross_context_overlap = 0.6", "cross_context_overlap = 0.9"));
    assert!(e.contains("key access.cross_context_overlap"), "{e}");
    let e = err_of(&t.replace("anon_mb_start = 182", "anon_mb_start = nan"));
    assert!(e.contains("footprint.anon_mb_start"), "{e}");
    let e = err_of("name = ");
    assert!(e.starts_with("app profile t.toml"), "{e}");
    let e = err_of(&t.replace("threads = 90", "threads = 90\nio_buffer_scale = -2"));
    assert!(
        e.contains("key io_buffer_scale: expected a number in (0, 100], got -2"),
        "{e}"
    );
}

#[test]
fn io_buffer_scale_defaults_to_one_and_is_read() {
    let t = twitter_text();
    assert_eq!(
        AppProfile::from_toml_str(&t, "t.toml").unwrap().io_buffer_scale,
        1.0
    );
    let p = AppProfile::from_toml_str(
        &t.replace("threads = 90", "threads = 90\nio_buffer_scale = 2.5"),
        "t.toml",
    )
    .unwrap();
    assert_eq!(p.io_buffer_scale, 2.5);
}

#[test]
fn growth_is_linear_then_flat() {
    let p = AppProfile::builtin("YouTube").unwrap();
    assert_eq!(p.anon_mb_at(0.0), 177.0);
    assert!((p.anon_mb_at(150.0) - (177.0 + 181.0 / 2.0)).abs() < 1e-9);
    assert_eq!(p.anon_mb_at(1e9), 358.0);
    assert_eq!(p.anon_mb_at(f64::NAN), 358.0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]
    #[test]
    fn random_text_never_panics(s in "\\PC{0,300}") {
        if let Err(e) = AppProfile::from_toml_str(&s, "fuzz.toml") {
            prop_assert!(!e.to_string().contains('\n'));
        }
    }

    #[test]
    fn mutations_never_panic(pos in 0usize..3000, len in 0usize..20, ins in "[ -~\\n]{0,12}") {
        let t = twitter_text();
        let mut pos = pos.min(t.len());
        while !t.is_char_boundary(pos) { pos -= 1; }
        let mut end = (pos + len).min(t.len());
        while !t.is_char_boundary(end) { end -= 1; }
        let m = format!("{}{}{}", &t[..pos], ins, &t[end..]);
        match AppProfile::from_toml_str(&m, "mut.toml") {
            Ok(p) => { prop_assert!(apps::AccessModel::for_profile(&p, 1).is_ok()); }
            Err(e) => {
                let s = e.to_string();
                prop_assert!(!s.contains('\n'));
                prop_assert!(s.starts_with("app profile mut.toml"));
                let _: AppError = e;
            }
        }
    }

    #[test]
    fn numeric_mutations_never_panic(idx in 0usize..30, val in prop_oneof![Just(-1.0f64), Just(0.0), Just(1e12), Just(0.5), Just(1.0), Just(2.0), Just(1e-9)]) {
        let t = twitter_text();
        let lines: Vec<&str> = t.lines().collect();
        let numeric: Vec<usize> = (0..lines.len()).filter(|&i| {
            lines[i].split('=').nth(1).map(|v| v.trim().chars().next().map(|c| c.is_ascii_digit()).unwrap_or(false)).unwrap_or(false)
        }).collect();
        let i = numeric[idx % numeric.len()];
        let key = lines[i].split('=').next().unwrap();
        let mut out: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
        out[i] = format!("{key}= {val:?}");
        let m = out.join("\n");
        match AppProfile::from_toml_str(&m, "num.toml") {
            Ok(p) => {
                let model = apps::AccessModel::for_profile(&p, 7);
                prop_assert!(model.is_ok(), "{:?}", model.err());
                let model = model.unwrap();
                let n = model.layout().total();
                prop_assert!(model.launch_set(0, 1).iter().all(|&x| x < n));
            }
            Err(e) => prop_assert!(!e.to_string().contains('\n')),
        }
    }
}

#[test]
fn java_section_defaults_validation_and_hprof_paths() {
    let base = apps::builtin_toml("Twitter").unwrap();
    let p = AppProfile::from_toml_str(base, "t.toml").unwrap();
    assert_eq!(p.java, apps::JavaSection::default());
    assert!(p.java.hprof_path().is_none());
    // Bad values name the section and key.
    for (extra, key) in [
        ("[java]\nfg_alloc_mb_per_s = -1\n", "java.fg_alloc_mb_per_s"),
        ("[java]\nchurn_period_s = 0\n", "java.churn_period_s"),
        ("[java.linked]\nshare = 1.5\n", "java.linked.share"),
        (
            "[java.linked]\nbg_death_per_gc = 0\n",
            "java.linked.bg_death_per_gc",
        ),
        ("[java.linked]\nobject_bytes = 8\n", "java.linked.object_bytes"),
        ("[java.linked]\nsharee = 0.1\n", "sharee"),
        (
            "[java.launch_bias]\nyoung_share = 0.6\n",
            "java.launch_bias.young_share",
        ),
        ("[java]\nheap = \"\"\n", "java.heap"),
        ("[java]\nheapp = \"generated\"\n", "heapp"),
    ] {
        let e = AppProfile::from_toml_str(&format!("{base}\n{extra}"), "t.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains(key) && e.contains("t.toml"), "{extra}: {e}");
    }
    // A relative HPROF path is taken relative to the profile file.
    let dir = std::env::temp_dir().join(format!("hl-java-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("app.toml");
    std::fs::write(&file, format!("{base}\n[java]\nheap = \"dumps/app.hprof\"\n")).unwrap();
    // A dump that does not exist is reported at its key, as written (a misspelt built-in heap).
    let e = AppProfile::load(&file).unwrap_err().to_string();
    assert!(
        e.contains("java.heap") && e.contains("\"dumps/app.hprof\""),
        "{e}"
    );
    std::fs::create_dir_all(dir.join("dumps")).unwrap();
    std::fs::write(dir.join("dumps/app.hprof"), b"").unwrap();
    let p = AppProfile::load(&file).unwrap();
    assert_eq!(p.java.hprof_path().unwrap(), dir.join("dumps/app.hprof"));
    let p = AppProfile::resolve(file.to_str().unwrap()).unwrap();
    assert_eq!(p.java.hprof_path().unwrap(), dir.join("dumps/app.hprof"));
    std::fs::remove_dir_all(&dir).ok();
    // The synthetic apps' heaps are built-in kinds.
    for n in ["Fleet512", "Fleet2048", "Marvin4K", "Marvin4K1M"] {
        assert!(AppProfile::builtin(n).unwrap().java.hprof_path().is_none(), "{n}");
    }
}

/// Fleet's synthetic apps are Marvin's MemoryWaster `AllocatorActivity` (Fleet artifact
/// start-washington.sh), which keeps deleting and recreating its first 2 buckets (marvin-code
/// `RecreateSomeRunnable`): 20 MB, 1 s + 5 s sleeps per round, the same buckets every round.
#[test]
fn fleet_synthetic_apps_churn_as_marvins_allocator_activity() {
    for n in ["Fleet512", "Fleet2048"] {
        let j = AppProfile::builtin(n).unwrap().java;
        assert_eq!(j.churn_mb, 20.0, "{n}");
        assert_eq!(j.churn_period_s, 6.0, "{n}");
        assert!(j.churn_same, "{n}");
    }
}

#[test]
fn heap_growth_multipliers_are_at_least_one() {
    let mut p = AppProfile::builtin("Twitter").unwrap();
    p.java.foreground_heap_growth_multiplier = Some(2.0);
    p.java.background_heap_growth_multiplier = Some(1.0);
    p.validate().unwrap();
    p.java.foreground_heap_growth_multiplier = Some(0.5);
    let e = p.validate().unwrap_err().to_string();
    assert!(
        !e.contains('\n') && e.contains("java.foreground_heap_growth_multiplier"),
        "{e}"
    );
    p.java.foreground_heap_growth_multiplier = None;
    p.java.background_heap_growth_multiplier = Some(f64::NAN);
    let e = p.validate().unwrap_err().to_string();
    assert!(e.contains("java.background_heap_growth_multiplier"), "{e}");
}

#[test]
fn writes_section_is_read_and_range_checked() {
    let t = twitter_text();
    let p = AppProfile::from_toml_str(&t, "t.toml").unwrap();
    assert!(p.writes.fg_kb_per_s > 0.0 && p.writes.data_pages() > 0);
    let e = err_of(&t.replace("fg_kb_per_s = 32", "fg_kb_per_s = -1"));
    assert!(
        e.starts_with("app profile t.toml, line ")
            && e.contains("key writes.fg_kb_per_s: expected a number in [0, 100000], got -1"),
        "{e}"
    );
    assert!(!e.contains('\n'));
    let e = err_of(&t.replace("bg_kb_per_s = 1", "bg_kb_per_s = inf"));
    assert!(e.contains("key writes.bg_kb_per_s"), "{e}");
    let e = err_of(&t.replace("data_mb = 4", "data_mb = 0"));
    assert!(
        e.contains("key writes.data_mb: expected at least one page"),
        "{e}"
    );
    let e = err_of(&t.replace("data_mb = 4", "data_mb = 4\nfsync = true"));
    assert!(e.contains("fsync"), "{e}");
    // Absent section: no writes.
    let start = t.find("[writes]").unwrap();
    let end = t.find("[compressibility]").unwrap();
    let none = format!("{}{}", &t[..start], &t[end..]);
    let p = AppProfile::from_toml_str(&none, "t.toml").unwrap();
    assert_eq!(p.writes, apps::WriteSection::default());
}

#[test]
fn ui_section_derives_the_pages_released_when_the_ui_is_hidden() {
    let mut pixel3 = device::DeviceProfile::builtin("pixel3").unwrap();
    assert_eq!(
        AppProfile::builtin("Instagram").unwrap().ui_hidden_pages(&pixel3),
        0,
        "off by default"
    );
    pixel3.android.ui_trim = Some(true);
    let load = |name: &str| AppProfile::builtin(name).unwrap();
    // One 1080 x 2160 RGBA_8888 screen; 3 window buffers; GPU cache 12 screens, half kept.
    let screen = 1080 * 2160 * 4u64;
    let pages = |bytes: u64| bytes.div_ceil(4096) as u32;
    // Social app (fill 0.8 of the cache): window buffers + (0.8 x 12 - 6) screens of GPU cache.
    assert_eq!(
        load("Instagram").ui_hidden_pages(&pixel3),
        pages(3 * screen + 36 * screen / 10)
    );
    // A game renders through its own GL context: window buffers only.
    assert_eq!(load("AngryBirds").ui_hidden_pages(&pixel3), pages(3 * screen));
    // Switched off by the profile, by the device (a scenario's `[android]`), or no display.
    let t = twitter_text();
    let off = AppProfile::from_toml_str(&format!("{t}\n[ui]\ntrim = false\n"), "t.toml").unwrap();
    assert_eq!(off.ui_hidden_pages(&pixel3), 0);
    let twitter = AppProfile::from_toml_str(&t, "t.toml").unwrap();
    assert!(twitter.ui_hidden_pages(&pixel3) > 0);
    let mut d = pixel3.clone();
    d.android.ui_trim = Some(false);
    assert_eq!(twitter.ui_hidden_pages(&d), 0);
    let mut d = pixel3.clone();
    d.display = None;
    assert_eq!(twitter.ui_hidden_pages(&d), 0);
    // An explicit fill replaces the category's; out of range is a one-line error.
    let full = AppProfile::from_toml_str(&format!("{t}\n[ui]\ngpu_cache_fill = 1.0\n"), "t.toml").unwrap();
    assert_eq!(full.ui_hidden_pages(&pixel3), pages(9 * screen));
    let e = err_of(&format!("{t}\n[ui]\ngpu_cache_fill = 1.5\n"));
    assert!(
        e.contains("key ui.gpu_cache_fill: expected a fraction in [0, 1], got 1.5"),
        "{e}"
    );
}
