//! Built-in profiles parse and validate; bad inputs give one-line errors naming file and key.

use hotlaunch_device::{builtin_names, builtin_toml, DeviceError, DeviceProfile, LmkdMode, ZramCodec};

fn pixel3_text() -> &'static str {
    builtin_toml("pixel3").unwrap()
}

/// Parses `text` as `bad.toml`, expecting an error whose message names the file and `key`.
fn expect_err(text: &str, key: &str) -> String {
    let err = DeviceProfile::from_toml_str(text, "bad.toml").expect_err("must be rejected");
    let msg = err.to_string();
    assert!(!msg.contains('\n'), "multi-line error: {msg}");
    assert!(msg.contains("bad.toml"), "no file name in: {msg}");
    assert!(msg.contains(key), "no key {key} in: {msg}");
    msg
}

/// pixel3 with the line `key = ...` (in its section) replaced by `key = value`.
fn with_value(key: &str, value: &str) -> String {
    let mut found = false;
    let out: Vec<String> = pixel3_text()
        .lines()
        .map(|l| {
            if l.split('=').next().map(str::trim) == Some(key) && !found {
                found = true;
                format!("{key} = {value}")
            } else {
                l.to_string()
            }
        })
        .collect();
    assert!(found, "{key} not in pixel3.toml");
    out.join("\n")
}

fn without_line(key: &str) -> String {
    pixel3_text()
        .lines()
        .filter(|l| l.split('=').next().map(str::trim) != Some(key))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_builtin_parses_and_validates() {
    assert_eq!(
        builtin_names(),
        [
            "pixel3",
            "pixelxl",
            "pixel7",
            "oneplus9pro",
            "nexus10",
            "pixel8pro",
            "a03core"
        ]
    );
    for name in builtin_names() {
        let p = DeviceProfile::builtin(name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.name, *name);
        p.validate().unwrap();
        assert!(p.managed_pages() < p.total_pages());
        assert!(p.min_free_kbytes() >= 128);
        assert!(p.page_copy_ns() > 0);
        // Every value in a built-in profile carries a source comment.
        for line in builtin_toml(name).unwrap().lines() {
            let t = line.trim();
            if t.contains('=') && !t.starts_with('#') {
                assert!(t.contains("  # "), "{name}: value without a source comment: {t}");
            }
        }
    }
}

#[test]
fn paper_facts() {
    let p3 = DeviceProfile::builtin("pixel3").unwrap();
    assert_eq!(p3.memory.dram_mb, 4096);
    assert_eq!(p3.memory.dram_bandwidth_mb_s, 9182.7);
    assert_eq!(p3.swap.flash_swap_mb, 2048);
    assert_eq!(p3.kernel.swappiness, 100);
    assert_eq!(p3.kernel.page_cluster, 0);
    // Fleet §3.2: a random 4 KiB swap read runs at 20.3 MB/s.
    let rate = 4096.0 * 1000.0 / p3.flash_read_ns(4096) as f64;
    assert!((rate - 20.3).abs() < 0.2, "effective 4 KiB read rate {rate} MB/s");
    // 4096 B at 9182.7 MB/s = 446 ns.
    assert_eq!(p3.page_copy_ns(), 446);
    // Kernel formula: int_sqrt((4096 - 440) MiB in KiB * 16).
    assert_eq!(p3.min_free_kbytes(), 7739);

    let p7 = DeviceProfile::builtin("pixel7").unwrap();
    assert_eq!(p7.memory.dram_mb, 12288);
    assert_eq!(p7.swap.zram_disksize_mb, 3072);
    assert_eq!(p7.swap.zram_codec, ZramCodec::Lz4);
    assert_eq!(p7.min_free_kbytes(), 27386);
    assert_eq!(p7.flash.read_bandwidth_mb_s, 2100.0);
    assert_eq!(DeviceProfile::builtin("pixelxl").unwrap().memory.dram_mb, 4096);
    assert_eq!(
        DeviceProfile::builtin("oneplus9pro").unwrap().memory.dram_mb,
        12288
    );
    let n10 = DeviceProfile::builtin("nexus10").unwrap();
    assert_eq!((n10.memory.dram_mb, n10.cpu.cores), (2048, 2));
    // The formula values quoted in the profile comments and the README.
    // The comparison phones (12 GB and 2 GB).
    let p8 = DeviceProfile::builtin("pixel8pro").unwrap();
    assert_eq!((p8.memory.dram_mb, p8.cpu.cores), (12288, 9));
    assert_eq!(p8.min_free_kbytes(), 27386);
    let go = DeviceProfile::builtin("a03core").unwrap();
    assert_eq!(go.memory.dram_mb, 2048);
    let f = go.stock();
    assert!(!f.app_compaction && !f.lmkd_low_mem);
    assert!(p8.stock().app_compaction, "Android 14");
    for (name, kb) in [
        ("pixelxl", 7802),
        ("oneplus9pro", 13719),
        ("nexus10", 5576),
        ("a03core", 5427),
    ] {
        assert_eq!(
            DeviceProfile::builtin(name).unwrap().min_free_kbytes(),
            kb,
            "{name}"
        );
    }
}

#[test]
fn derived_helpers() {
    let p = DeviceProfile::builtin("pixel7").unwrap();
    assert_eq!(p.total_pages(), 12288 * 256);
    assert_eq!(p.managed_pages(), (12288 - 600) * 256);
    // 80 us + 1 MiB at 2100 MB/s (499322 ns).
    assert_eq!(p.flash_read_ns(1 << 20), 80_000 + 499_322);
    assert_eq!(p.flash_write_ns(0), 40_000);
    assert_eq!(p.scale_host_ns(1000), 2000);
}

#[test]
fn builtin_unknown_lists_names() {
    let msg = DeviceProfile::builtin("pixel9").unwrap_err().to_string();
    assert!(
        msg.contains("pixel9") && msg.contains("pixel3, pixelxl, pixel7, oneplus9pro, nexus10"),
        "{msg}"
    );
    let msg = DeviceProfile::resolve("/nonexistent/dir/x.toml")
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("x.toml") && msg.contains("pixel3") && !msg.contains('\n'),
        "{msg}"
    );
}

#[test]
fn resolve_and_load_files() {
    assert_eq!(DeviceProfile::resolve("nexus10").unwrap().name, "nexus10");
    let dir = std::env::temp_dir().join(format!("hotlaunch-device-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mine.toml");
    std::fs::write(&path, with_value("dram_mb", "0")).unwrap();
    let msg = DeviceProfile::load(&path).unwrap_err().to_string();
    assert!(
        msg.contains("mine.toml") && msg.contains("memory.dram_mb"),
        "{msg}"
    );
    std::fs::write(&path, pixel3_text()).unwrap();
    assert_eq!(
        DeviceProfile::resolve(path.to_str().unwrap()).unwrap().name,
        "pixel3"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn malformed_toml() {
    let msg = expect_err("name = \"x\"\n[memory\ndram_mb = 1\n", "line 2");
    assert!(matches!(
        DeviceProfile::from_toml_str("name = ", "bad.toml").unwrap_err(),
        DeviceError::Parse { .. }
    ));
    assert!(msg.starts_with("device profile bad.toml"), "{msg}");
}

#[test]
fn unknown_key_in_each_section() {
    for (after, key) in [
        ("description = ", "colour"),
        ("dram_mb = ", "memory.dram_gb"),
        ("swappiness = ", "kernel.vfs_cache_pressure"),
        ("cores = ", "cpu.big_cores"),
        ("read_latency_us = ", "flash.queue_depth"),
        ("flash_swap_mb = ", "swap.zram_writeback"),
    ] {
        let field = key.rsplit('.').next().unwrap();
        let text: String = pixel3_text()
            .lines()
            .flat_map(|l| {
                if l.starts_with(after) {
                    vec![l.to_string(), format!("{field} = 1")]
                } else {
                    vec![l.to_string()]
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let msg = expect_err(&text, key);
        assert!(msg.contains("line "), "{msg}");
    }
    // An unknown table.
    expect_err(&format!("{}\n[gpu]\ncores = 1\n", pixel3_text()), "gpu");
}

#[test]
fn missing_keys() {
    for key in [
        "memory.dram_mb",
        "kernel.swappiness",
        "cpu.speed_factor",
        "flash.read_bandwidth_mb_s",
        "swap.zram_codec",
    ] {
        let field = key.split('.').nth(1).unwrap();
        expect_err(&without_line(field), key);
    }
    expect_err(&without_line("name"), "name");
    // A whole missing table.
    let text: String = pixel3_text().replace("[cpu]", "[cpux]");
    expect_err(&text, "cpux");
    let no_cpu: String = pixel3_text().split("[cpu]").next().unwrap().to_string()
        + "[flash]"
        + pixel3_text().split("[flash]").nth(1).unwrap();
    expect_err(&no_cpu, "cpu");
}

#[test]
fn zero_and_negative_sizes() {
    let msg = expect_err(&with_value("dram_mb", "0"), "memory.dram_mb");
    assert!(
        msg.contains("expected a positive size in MB") && msg.contains("got 0"),
        "{msg}"
    );
    expect_err(&with_value("dram_mb", "-4096"), "memory.dram_mb");
    expect_err(
        &with_value("dram_bandwidth_mb_s", "0"),
        "memory.dram_bandwidth_mb_s",
    );
    expect_err(
        &with_value("dram_bandwidth_mb_s", "-1.5"),
        "memory.dram_bandwidth_mb_s",
    );
    expect_err(
        &with_value("dram_bandwidth_mb_s", "nan"),
        "memory.dram_bandwidth_mb_s",
    );
    expect_err(&with_value("read_latency_us", "0"), "flash.read_latency_us");
    expect_err(
        &with_value("write_bandwidth_mb_s", "-200"),
        "flash.write_bandwidth_mb_s",
    );
    expect_err(&with_value("cores", "0"), "cpu.cores");
    expect_err(&with_value("minor_fault_ns", "-1"), "cpu.minor_fault_ns");
    expect_err(&with_value("flash_swap_mb", "-2048"), "swap.flash_swap_mb");
    expect_err(&with_value("speed_factor", "0"), "cpu.speed_factor");
    expect_err(&with_value("dram_mb", "\"4 GB\""), "memory.dram_mb");
    expect_err(&with_value("dram_mb", "4096.5"), "memory.dram_mb");
}

#[test]
fn ranges() {
    expect_err(&with_value("swappiness", "201"), "kernel.swappiness");
    expect_err(&with_value("page_cluster", "11"), "kernel.page_cluster");
    let msg = expect_err(&with_value("pageblock_order", "11"), "kernel.pageblock_order");
    assert!(msg.contains("expected 9 or 10, got 11"), "{msg}");
    expect_err(
        &with_value("watermark_scale_factor", "0"),
        "kernel.watermark_scale_factor",
    );
    expect_err(
        &with_value("zram_disksize_mb", "1000000"),
        "swap.zram_disksize_mb",
    );
    // Range-zap costs: positive ns up to 10^8, required.
    let msg = expect_err(&with_value("zap_page_ns", "0"), "cpu.zap_page_ns");
    assert!(msg.contains("got 0"), "{msg}");
    expect_err(&with_value("zap_range_ns", "100000001"), "cpu.zap_range_ns");
    expect_err(&with_value("zap_range_ns", "-5"), "cpu.zap_range_ns");
    expect_err(&without_line("zap_page_ns"), "zap_page_ns");
    // Defaulted keys take the Linux defaults.
    let p = DeviceProfile::from_toml_str(&without_line("watermark_scale_factor"), "ok.toml").unwrap();
    assert_eq!(
        (p.kernel.watermark_scale_factor, p.kernel.read_ahead_kb),
        (10, 128)
    );
}

#[test]
fn reserve_must_fit_in_dram() {
    let msg = expect_err(&with_value("dram_mb", "1440"), "memory.kernel_reserve_mb");
    assert!(msg.contains("1440"), "{msg}");
    expect_err(
        &with_value("system_reserve_mb", "3656"),
        "memory.kernel_reserve_mb",
    );
    assert!(DeviceProfile::from_toml_str(&with_value("system_reserve_mb", "3655"), "ok.toml").is_ok());
}

#[test]
fn unknown_codec() {
    let msg = expect_err(&with_value("zram_codec", "\"lz5\""), "swap.zram_codec");
    assert!(
        msg.contains("lzo-rle") && msg.contains("zstd") && msg.contains("line "),
        "{msg}"
    );
    expect_err(&with_value("zram_codec", "4"), "swap.zram_codec");
    for codec in ["lzo-rle", "lzo", "lz4", "zstd"] {
        let p = DeviceProfile::from_toml_str(&with_value("zram_codec", &format!("\"{codec}\"")), "ok.toml")
            .unwrap();
        assert_eq!(p.swap.zram_codec.as_str(), codec);
    }
}

#[test]
fn validation_error_has_line() {
    let msg = expect_err(&with_value("cores", "0"), "cpu.cores");
    let line = pixel3_text()
        .lines()
        .position(|l| l.starts_with("cores"))
        .unwrap()
        + 1;
    assert!(msg.contains(&format!("line {line}")), "{msg}");
}

/// Prints representative messages (`cargo test -p hotlaunch-device show_messages -- --nocapture`).
#[test]
fn show_messages() {
    let cases = [
        with_value("dram_mb", "0"),
        with_value("dram_mb", "-4096"),
        with_value("zram_codec", "\"lz5\""),
        with_value("system_reserve_mb", "3656"),
        without_line("swappiness"),
        pixel3_text().replace("swappiness = 100", "swappiness = 100\nvfs_cache_pressure = 50"),
        "name = \"x\"\n[memory\n".to_string(),
        "name = \"x\"\nname = \"y\"\n".to_string(),
        String::new(),
    ];
    for text in cases {
        eprintln!(
            "{}",
            DeviceProfile::from_toml_str(&text, "pixel3.toml").unwrap_err()
        );
    }
}

#[test]
fn releases_are_checked_and_decide_the_stock_features() {
    let msg = expect_err(
        &with_value("android_release", "\"10.5\""),
        "android.android_release",
    );
    assert!(msg.contains("known release"), "{msg}");
    assert!(msg.contains("line "), "{msg}");
    expect_err(
        &with_value("kernel_release", "\"4.20\""),
        "android.kernel_release",
    );
    let text = format!("{}\nlmkd = \"vmpressure\"\n", pixel3_text());
    expect_err(&text, "android.lmkd");
    let text = format!("{}\nforeground_heap_growth_multiplier = 0.5\n", pixel3_text());
    let msg = expect_err(&text, "android.foreground_heap_growth_multiplier");
    assert!(msg.contains("from 1 to 100"), "{msg}");
    expect_err(&with_value("system_file_mb", "5000"), "memory.system_file_mb");

    let stock = |name: &str| DeviceProfile::builtin(name).unwrap().stock();
    // Fleet's Pixel 3 (Android 10, 4.9 with the PSI backport): PSI lmkd, no compaction.
    let p3 = stock("pixel3");
    assert_eq!(p3.lmkd, LmkdMode::Psi);
    assert!(!p3.app_compaction && !p3.lmkd_low_mem);
    assert_eq!(p3.foreground_heap_growth_multiplier, 3.0);
    // Marvin's Pixel XL (7.1 / 3.18) and ISMM'15's Nexus 10 (4.2 / 3.4): the kernel driver.
    let xl = stock("pixelxl");
    assert_eq!(xl.lmkd, LmkdMode::InKernel);
    assert_eq!(xl.foreground_heap_growth_multiplier, 2.0);
    // Android 7.1 puts apps in /acct only (libprocessgroup without USE_MEMCG): one global LRU.
    assert!(!xl.per_app_memcg && !p3.per_app_memcg);
    // The node LRU by page age is opt-in (`[android] node_lru_by_page_age`), and a scenario's
    // `[android]` key overrides the profile's.
    assert!(!xl.node_lru_by_page_age && !p3.node_lru_by_page_age);
    let mut d = DeviceProfile::builtin("pixel3").unwrap();
    d.android.merge(&hotlaunch_device::AndroidProfile {
        node_lru_by_page_age: Some(true),
        ..Default::default()
    });
    assert!(d.stock().node_lru_by_page_age && !d.stock().per_app_memcg);
    // 64-bit: the cached slots are 147456 × 3/2 and 184320 × 7/4 KiB.
    assert_eq!(xl.minfree[4], (900, 147456 * 3 / 2 / 4));
    assert_eq!(xl.minfree[5], (950, 184320 * 7 / 4 / 4));
    let n10 = stock("nexus10");
    assert_eq!(n10.lmkd, LmkdMode::InKernel);
    assert_eq!(n10.foreground_heap_growth_multiplier, 1.0);
    assert_eq!(n10.minfree[5], (950, 122880 / 4));
    // Dalvik (4.2) keeps freed heap pages until its 5 s idle trim; every ART release and a
    // profile without a release free them at each GC.
    assert_eq!(n10.heap_trim_delay_ms, Some(5_000));
    assert_eq!(xl.heap_trim_delay_ms, None);
    assert_eq!(p3.heap_trim_delay_ms, None);
    // Ariadne's Pixel 7 (14 / 5.10): compaction and LOW_MEM; MemSaver's OnePlus (11): neither.
    let p7 = stock("pixel7");
    assert!(p7.app_compaction && p7.lmkd_low_mem && p7.lmkd == LmkdMode::Psi);
    let op = stock("oneplus9pro");
    assert!(!op.app_compaction && !op.lmkd_low_mem && op.lmkd == LmkdMode::Psi);
    // An explicit key overrides the release.
    let mut d = DeviceProfile::builtin("pixelxl").unwrap();
    d.android.lmkd = Some("psi".into());
    d.android.background_heap_growth_multiplier = Some(1.5);
    assert_eq!(d.stock().lmkd, LmkdMode::Psi);
    assert_eq!(d.stock().background_heap_growth_multiplier, 1.5);
}

#[test]
fn display_sizes_window_buffers_and_gpu_caches() {
    for name in builtin_names() {
        let d = DeviceProfile::builtin(name).unwrap();
        assert!(d.display.is_some(), "{name} has no [display]");
    }
    let p = DeviceProfile::builtin("pixel3").unwrap();
    let d = p.display.unwrap();
    assert_eq!((d.width_px, d.height_px), (1080, 2160));
    // Triple-buffered RGBA_8888 window; HWUI cache 12 screens, half kept in the background.
    assert_eq!(d.window_buffer_bytes(), 3 * 1080 * 2160 * 4);
    assert_eq!(d.gpu_cache_bytes(), 12 * 1080 * 2160 * 4);
    assert_eq!(d.gpu_background_bytes(), 6 * 1080 * 2160 * 4);
    assert_eq!(d.ui_hidden_release_bytes(0.4), d.window_buffer_bytes());
    assert_eq!(d.ui_hidden_release_bytes(1.0), 9 * 1080 * 2160 * 4);
    assert!(!p.stock().ui_trim, "off by default (apps README)");
    let e = expect_err(&with_value("width_px", "0"), "display.width_px");
    assert!(e.contains("a pixel count from 1 to 16384"), "{e}");
    let e = expect_err(&with_value("height_px", "-3"), "height_px");
    assert!(!e.contains('\n'));
    // Optional section: without it nothing is sized by the screen.
    let text: String = pixel3_text()
        .lines()
        .filter(|l| !l.starts_with("[display]") && !l.starts_with("width_px") && !l.starts_with("height_px"))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        DeviceProfile::from_toml_str(&text, "p.toml").unwrap().display,
        None
    );
}
