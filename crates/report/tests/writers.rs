//! Writers on a synthetic two-policy report: JSON round trip and stability, required keys, CSV
//! shape, HTML self-containment; writes an example report to `<target>/report-example/`.

use hotlaunch_report::format::{PER_APP_COLUMNS, SUMMARY_ROWS, TIMESERIES_COLUMNS};
use hotlaunch_report::sample::synthetic_report;
use hotlaunch_report::*;
use std::path::PathBuf;

const SAMPLES: usize = 400;

fn report() -> RunReport {
    synthetic_report(42, SAMPLES)
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("report-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `<target dir>/report-example` (CARGO_TARGET_TMPDIR is `<target dir>/tmp`).
fn example_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("report-example")
}

#[test]
fn synthetic_report_is_well_formed() {
    let r = report();
    assert_eq!(r.schema_version, SCHEMA_VERSION);
    assert_eq!(r.tool, "hotlaunch");
    assert_eq!(r.policies.len(), 2);
    for p in &r.policies {
        let ts = &p.timeseries;
        assert_eq!(ts.len(), SAMPLES);
        for len in [
            ts.cached_apps.len(),
            ts.free_mb.len(),
            ts.anon_mb.len(),
            ts.file_mb.len(),
            ts.swapped_mb.len(),
            ts.zram_mb.len(),
            ts.kernel_mb.len(),
            ts.psi_some_ms.len(),
        ] {
            assert_eq!(len, SAMPLES);
        }
        assert!(p.hot_launch_cdf.len() <= MAX_CDF_POINTS && p.hot_launch_cdf.len() >= 2);
        assert_eq!(p.unusable_index.len(), 11);
        assert!(p.hot_launch_ms.count > 0 && p.hot_launch_ms.p50 <= p.hot_launch_ms.p99);
    }
    assert_eq!(synthetic_report(42, SAMPLES), r, "deterministic in the seed");
    assert_ne!(synthetic_report(43, SAMPLES), r);
}

#[test]
fn json_round_trips_and_is_byte_stable() {
    let r = report();
    let s = to_json_string(&r);
    assert!(s.ends_with("}\n"));
    assert_eq!(from_json_str(&s).unwrap(), r);

    let dir = scratch("json");
    write_json(&r, dir.join("a.json")).unwrap();
    write_json(&report(), dir.join("b.json")).unwrap();
    let a = std::fs::read(dir.join("a.json")).unwrap();
    let b = std::fs::read(dir.join("b.json")).unwrap();
    assert_eq!(a, b);
    assert_eq!(a, s.as_bytes());
    // Round trip through the file and back out again gives the same bytes.
    let again = from_json_str(std::str::from_utf8(&a).unwrap()).unwrap();
    assert_eq!(to_json_string(&again).as_bytes(), &a[..]);
}

#[test]
fn json_has_required_keys() {
    let v: serde_json::Value = serde_json::from_str(&to_json_string(&report())).unwrap();
    for k in [
        "schema_version",
        "tool",
        "tool_version",
        "scenario",
        "device",
        "seed",
        "simulated_seconds",
    ] {
        assert!(v.get(k).is_some(), "missing top-level key {k}");
    }
    assert_eq!(v["schema_version"], 1);
    let policies = v["policies"].as_array().unwrap();
    assert_eq!(policies.len(), 2);
    let required: &[(&str, &[&str])] = &[
        ("policy", &[]),
        ("hot_launch_ms", &["count", "p50", "p90", "p99", "mean"]),
        ("cold_launch_ms", &["count", "p50", "p90", "p99", "mean"]),
        ("launches", &["hot", "cold"]),
        ("cached_apps", &["max", "mean"]),
        ("kills", &["total", "by_reason"]),
        ("cpu_ms", &["by_category", "by_actor"]),
        ("energy_j", &[]),
        ("flash", &["bytes_read", "bytes_written"]),
        (
            "zram",
            &[
                "orig_data_size",
                "compr_data_size",
                "mem_used_total",
                "mem_limit",
                "mem_used_max",
                "same_pages",
                "pages_compacted",
                "huge_pages",
                "huge_pages_since",
            ],
        ),
        ("integrity", &["pages_swapped_in", "checksum_mismatches"]),
        ("per_app", &[]),
        ("hot_launch_cdf", &[]),
        ("unusable_index", &[]),
        ("psi", &["some_ms", "full_ms"]),
        ("vmstat", &[]),
        (
            "timeseries",
            &[
                "t_s",
                "cached_apps",
                "free_mb",
                "anon_mb",
                "file_mb",
                "swapped_mb",
                "zram_mb",
                "kernel_mb",
                "psi_some_ms",
            ],
        ),
    ];
    for p in policies {
        for (k, sub) in required {
            let o = p.get(*k).unwrap_or_else(|| panic!("missing policy key {k}"));
            for s in *sub {
                assert!(o.get(*s).is_some(), "missing {k}.{s}");
            }
        }
        let app = &p["per_app"][0];
        for k in [
            "app",
            "launches_hot",
            "launches_cold",
            "launches_interrupted",
            "kills",
            "hot_launch_ms",
            "cold_launch_ms",
        ] {
            assert!(app.get(k).is_some(), "missing per_app key {k}");
        }
        assert!(
            p["hot_launch_cdf"][0].as_array().unwrap().len() == 2,
            "CDF points are [ms, fraction]"
        );
    }
}

#[test]
fn csv_files_have_headers_and_rows() {
    let r = report();
    let dir = scratch("csv");
    let written = write_csv(&r, &dir).unwrap();
    // timeseries × 2, gcs × 2, per_app, summary.
    assert_eq!(written.len(), 6);

    for p in &r.policies {
        let s = std::fs::read_to_string(dir.join(format!("timeseries_{}.csv", p.policy))).unwrap();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(
            lines[0],
            "t_s,cached_apps,free_mb,anon_mb,file_mb,swapped_mb,zram_mb,kernel_mb,psi_some_ms,\
             ui_0,ui_1,ui_2,ui_3,ui_4,ui_5,ui_6,ui_7,ui_8,ui_9,ui_10,\
             zram_orig_mb,zram_compr_mb,zram_same_pages,zram_huge_pages,policy_cpu_ms"
        );
        assert_eq!(lines.len(), 1 + SAMPLES);
        assert!(lines
            .iter()
            .all(|l| l.split(',').count() == TIMESERIES_COLUMNS.len()));
        assert!(lines[1].starts_with("0,"));
    }

    for p in &r.policies {
        let s = std::fs::read_to_string(dir.join(format!("gcs_{}.csv", p.policy))).unwrap();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(
            lines[0],
            "t_s,app,state,cause,kind,compacting,objects_visited,mb_copied,pages_touched,cpu_ms,fault_stall_ms,pause_ms"
        );
        assert_eq!(lines.len(), 1 + p.gcs.len());
        assert!(lines.iter().all(|l| l.split(',').count() == 12));
    }

    let s = std::fs::read_to_string(dir.join("per_app.csv")).unwrap();
    let lines: Vec<&str> = s.lines().collect();
    assert!(lines[0].starts_with("policy,app,launches_hot,launches_cold,launches_interrupted,kills,"));
    let apps: usize = r.policies.iter().map(|p| p.per_app.len()).sum();
    assert_eq!(lines.len(), 1 + apps);
    assert!(lines
        .iter()
        .all(|l| l.split(',').count() == 1 + PER_APP_COLUMNS.len()));

    let s = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    let lines: Vec<&str> = s.lines().collect();
    assert!(lines[0].starts_with("policy,hot_p50_ms,hot_p90_ms,hot_p99_ms,"));
    assert_eq!(lines.len(), 1 + r.policies.len());
    assert!(lines[1].starts_with("android,"));
    assert!(lines[2].starts_with("android-swap,"));
    assert!(lines
        .iter()
        .all(|l| l.split(',').count() == 1 + SUMMARY_ROWS.len()));
}

#[test]
fn csv_quotes_odd_names() {
    let mut r = report();
    r.policies[0].per_app[0].app = "a,\"b\"".into();
    let s = hotlaunch_report::csv::per_app_csv(&r);
    assert!(s.lines().nth(1).unwrap().starts_with("android,\"a,\"\"b\"\"\","));
    assert_eq!(hotlaunch_report::csv::file_safe("my policy/x"), "my_policy_x");
}

#[test]
fn summary_table_has_a_column_per_policy() {
    let r = report();
    let mut out = Vec::new();
    print_summary(&r, &mut out).unwrap();
    let s = String::from_utf8(out).unwrap();
    println!("{s}");
    let lines: Vec<&str> = s.lines().collect();
    assert!(lines[0].contains("scenario synthetic"));
    assert!(lines[1].contains("android") && lines[1].contains("android-swap"));
    for label in [
        "hot launch p50",
        "hot launch p99",
        "cold launch p50",
        "launches hot",
        "cached apps max",
    ] {
        let row = lines.iter().find(|l| l.starts_with(label)).unwrap();
        assert_eq!(
            row.split_whitespace()
                .filter(|w| w.parse::<f64>().is_ok())
                .count(),
            2,
            "{row}"
        );
    }
    // Aligned: every table row has the same width as the header rule.
    let width = lines[2].len();
    assert!(lines[2].chars().all(|c| c == '-'));
    assert!(lines[3..].iter().all(|l| l.len() <= width));
    assert!(!s.contains("INTEGRITY FAILURE"));

    let mut bad = r.clone();
    bad.policies[1].integrity.checksum_mismatches = 3;
    assert!(summary_string(&bad).contains("INTEGRITY FAILURE: policy android-swap: 3 checksum mismatches"));
}

#[test]
fn html_is_self_contained_with_one_svg_per_plot() {
    let r = report();
    let html = to_html_string(&r).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.ends_with("</html>\n"));
    // CDF, cached apps, CPU, memory, kills, unusable index at the end and over time.
    assert_eq!(html.matches("<svg").count(), 7);
    assert_eq!(html.matches("</svg>").count(), 7);
    assert!(html.contains("GC objects visited per collection, by app state"));
    assert!(html.contains("I/O buffers (ION-style allocations)") && html.contains("order 8: 30"));
    let without_xmlns = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(!without_xmlns.contains("http://") && !without_xmlns.contains("https://"));
    for forbidden in ["<script", "<link", "<img", "@import", "url("] {
        assert!(!html.contains(forbidden), "{forbidden}");
    }
    for p in &r.policies {
        assert!(html.contains(&p.policy));
    }
    for title in [
        "Hot-launch latency CDF",
        "Cached apps over time",
        "CPU time by category",
        "Kills by reason",
    ] {
        assert!(html.contains(title));
    }
    assert_eq!(to_html_string(&report()).unwrap(), html, "byte-stable");
}

#[test]
fn html_escapes_names() {
    let mut r = report();
    r.policies[0].policy = "<b>&x".into();
    let html = to_html_string(&r).unwrap();
    assert!(!html.contains("<b>&x"));
    assert!(html.contains("&lt;b&gt;&amp;x"));
}

#[test]
fn degenerate_reports_render() {
    // No policies; one policy with no data at all.
    let empty = RunReport::new("empty", "dev", 1);
    let html = to_html_string(&empty).unwrap();
    assert_eq!(html.matches("<svg").count(), 7);
    let mut one = RunReport::new("one", "dev", 1);
    one.policies.push(PolicyResult {
        policy: "android".into(),
        ..Default::default()
    });
    to_html_string(&one).unwrap();
    write_csv(&one, scratch("degenerate")).unwrap();
    assert_eq!(from_json_str(&to_json_string(&one)).unwrap(), one);
}

#[test]
fn write_example_report() {
    let dir = example_dir();
    let written = write_all(&report(), &dir).unwrap();
    assert!(written.contains(&dir.join("index.html")));
    assert!(written.contains(&dir.join("report.json")));
    println!("example report: {}", dir.join("index.html").display());
}

#[test]
fn file_stems_never_collide() {
    use hotlaunch_report::csv::file_stems;
    // Names that are already safe keep their stem (existing file names do not move).
    assert_eq!(file_stems(["android", "fleet(D=3)"])[0], "android");
    let s = file_stems(["a/b", "a_b", "a b", "a_b"]);
    assert_eq!(s[1], "a_b");
    let mut u = s.clone();
    u.sort();
    u.dedup();
    assert_eq!(u.len(), 4, "{s:?}");
}

#[test]
fn atomic_write_replaces_and_leaves_no_temporary() {
    let dir = std::env::temp_dir().join(format!("hotlaunch-atomic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("r.json");
    hotlaunch_report::write_atomic(&p, "one").unwrap();
    hotlaunch_report::write_atomic(&p, "two").unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    assert!(hotlaunch_report::check_writable_file(&dir).is_err());
    assert!(hotlaunch_report::check_writable_file(&p.join("x")).is_err());
}
