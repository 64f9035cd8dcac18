//! `[era."<release>"]` tables: selection by the device's Android release, validation, sources.

use hotlaunch_apps as apps;

use apps::{era, AccessModel, AppLayout, AppProfile, Region};

fn err_of(text: &str) -> String {
    let e = AppProfile::from_toml_str(text, "t.toml").unwrap_err();
    let s = e.to_string();
    assert!(!s.contains('\n'), "{s}");
    s
}

fn twitter_text() -> String {
    apps::builtin_toml("Twitter").unwrap().to_string()
}

#[test]
fn release_of_builtin_devices() {
    let rel = |n: &str| era::release_of_device(&device::DeviceProfile::builtin(n).unwrap());
    assert_eq!(rel("pixel3"), Some("10"));
    assert_eq!(rel("pixel7"), Some("14"));
    assert_eq!(rel("oneplus9pro"), Some("11"));
    assert_eq!(rel("nexus10"), Some("4.2"));
    assert_eq!(rel("pixelxl"), Some("7.1"));
    for r in ["10", "14", "11", "4.2", "7.1"] {
        assert!(apps::ANDROID_RELEASES.contains(&r));
    }
}

#[test]
fn for_release_applies_only_that_table() {
    let tiktok = AppProfile::builtin("TikTok").unwrap();
    assert_eq!(
        tiktok.for_release(Some("14")),
        tiktok,
        "no Android 14 table: base sizes"
    );
    let t = AppProfile::builtin("Twitter").unwrap();
    assert_eq!(t.for_release(None), t);
    // Ariadne's five apps have an Android 14 (Pixel 7) table: launch set and DRAM relaunch time
    // from the artifact; the footprint stays the base (Ariadne Table 1).
    let p7 = t.for_release(Some("14"));
    assert_eq!(
        Some(p7.access.launch_set_fraction),
        t.era["14"].access.launch_set_fraction
    );
    assert!(p7.access.launch_set_fraction < t.access.launch_set_fraction);
    assert_eq!(p7.launch.hot_launch_ms, 130.0);
    assert_eq!(p7.footprint, t.footprint);
    assert!(p7.validate().is_ok());
    let p3 = t.for_release(Some("10"));
    let ov = &t.era["10"].footprint;
    assert_eq!(Some(p3.footprint.anon_mb_start), ov.anon_mb_start);
    assert_eq!(Some(p3.footprint.java_heap_share), ov.java_heap_share);
    assert_eq!(
        p3.launch, t.launch,
        "keys the table does not set keep the base value"
    );
    assert_eq!(p3.contexts, t.contexts);
    assert!(p3.validate().is_ok());
    assert_eq!(t.era_for(Some("10")), Some("10"));
    assert_eq!(t.era_for(Some("14")), Some("14"));
    assert_eq!(tiktok.era_for(Some("14")), None);
}

/// Every commercial app has Android 10 (Pixel 3), 7.1 (Pixel XL) and 4.2 (Nexus 10) sizes, smaller than the base
/// (Pixel 7) ones, and Fleet's phone holds ~10 of them: background PSS of the order of 150–250 MB.
#[test]
fn era_sizes_follow_the_phone_generations() {
    let mut n10 = 0;
    for n in apps::builtin_names() {
        let p = AppProfile::builtin(n).unwrap();
        if p.era.is_empty() {
            continue;
        }
        let (a, b, c) = (&p, p.for_release(Some("10")), p.for_release(Some("4.2")));
        let d = p.for_release(Some("7.1"));
        for (newer, older) in [(a, &b), (&b, &d), (&d, &c)] {
            assert!(
                older.footprint.anon_mb_start <= newer.footprint.anon_mb_start,
                "{n}"
            );
            assert!(
                older.footprint.anon_mb_steady <= newer.footprint.anon_mb_steady,
                "{n}"
            );
        }
        let pss = b.footprint.anon_mb_start + 0.5 * b.footprint.file_mb;
        assert!((60.0..=450.0).contains(&pss), "{n}: Android 10 PSS {pss}"); // Firefox: ~425
                                                                             // ISMM'15 Fig. 3: a cached app of about 110 MB on the Nexus 10.
        let old = c.footprint.anon_mb_start + c.footprint.file_mb;
        assert!((30.0..=260.0).contains(&old), "{n}: Android 4.2 size {old}");
        n10 += 1;
    }
    assert!(n10 >= 20, "{n10} apps with era tables");
}

#[test]
fn era_errors_are_one_line_with_key_and_line() {
    let t = twitter_text();
    let e = err_of(&t.replace("[era.\"4.2\".footprint]", "[era.\"4.9\".footprint]"));
    assert!(e.contains("key era.4.9") && e.contains("Android release"), "{e}");
    // Negative footprint inside an era table.
    let at = t.find("[era.\"10\".footprint]").unwrap();
    let line_of_start = t[..at].lines().count() + 2;
    let bad = format!(
        "{}{}",
        &t[..at],
        t[at..].replacen("anon_mb_start = 120", "anon_mb_start = -5", 1)
    );
    let e = err_of(&bad);
    assert!(
        e.contains(&format!(
            "line {line_of_start}: key era.10.footprint.anon_mb_start: expected a number in (0"
        )),
        "{e}"
    );
    // Unknown key in an era table.
    let e = err_of(&t.replace("[era.\"10\".footprint]", "[era.\"10\".footprint]\nthreads = 3"));
    assert!(e.contains("era.10.footprint") && e.contains("threads"), "{e}");
    // Only size keys may be overridden.
    let e = err_of(&format!("{t}\n[era.\"11\".access]\nadjacency = 0.5\n"));
    assert!(e.contains("adjacency"), "{e}");
}

/// The file pages of every launch set lie in the app's startup section: the first pages of the
/// file region (ART dexlayout), so read-around reads pages launches use.
#[test]
fn launch_file_pages_are_clustered_at_the_start_of_the_files() {
    for n in ["YouTube", "Facebook", "Firefox", "CandyCrush"] {
        let p = AppProfile::builtin(n).unwrap().for_release(Some("10"));
        let m = AccessModel::for_profile(&p, 11).unwrap();
        let lay: AppLayout = *m.layout();
        let first = lay.java_pages + lay.native_pages;
        let plan = m.plan();
        let hot = plan.shared[2] + p.contexts.len() as u32 * plan.context[2] + plan.pool[2];
        for i in 0..10 {
            let l = m.launch_set(i % 2, i as u64);
            let file: Vec<u32> = l
                .iter()
                .copied()
                .filter(|&x| lay.region_of(x) == Some(Region::File))
                .collect();
            assert!(!file.is_empty());
            // The hot section ends within one run (< 64 pages) after `hot` pages.
            assert!(file.iter().all(|&x| x - first < hot + 64), "{n}");
        }
        assert!(
            hot < lay.file_pages,
            "{n}: the startup section is part of the files"
        );
    }
}

/// Fleet artifact (Pixel 3, Android 10), Fig. 13n: Java heap / TOTAL PSS (`dumpsys meminfo` App
/// Summary) per app (`evaluation/exp-hot-launch/exp-hot-launch.ipynb`, `X_heap_size`, measured
/// with `check-heap.sh`).
const FIG13N_JAVA_SHARE: [(&str, f64); 11] = [
    ("Twitter", 0.259),
    ("Facebook", 0.176),
    ("Instagram", 0.196),
    ("YouTube", 0.254),
    ("Spotify", 0.186),
    ("Twitch", 0.183),
    ("AmazonShop", 0.146),
    ("GoogleMaps", 0.075),
    ("Chrome", 0.091),
    ("Firefox", 0.083),
    ("AngryBirds", 0.071),
];

/// Each Android 10 profile of a Fig. 13n app has that Java share of its whole (anon + file)
/// memory: its `java_heap_share` is of the anonymous memory only, so the TOML converts it.
#[test]
fn pixel3_java_shares_match_fleet_fig13n() {
    for (n, share) in FIG13N_JAVA_SHARE {
        let f = AppProfile::builtin(n).unwrap().for_release(Some("10")).footprint;
        let of_total = f.java_heap_share * f.anon_mb_steady / (f.anon_mb_steady + f.file_mb);
        assert!(
            (of_total - share).abs() <= 0.01,
            "{n}: Java / total {of_total:.3} vs Fig. 13n {share}"
        );
    }
}
