//! The command line on good and bad input: bad input exits non-zero with one line naming the
//! file and the key, and never panics.

mod cmdline;
use cmdline::hotlaunch;

fn bad_device(name: &str, edit: impl Fn(String) -> String) -> std::path::PathBuf {
    let text = device::builtin_toml("pixel3").unwrap().to_string();
    let dir = std::env::temp_dir().join(format!("hotlaunch-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, edit(text)).unwrap();
    path
}

/// A scenario file next to `device` that uses it.
fn scenario_for(device: &std::path::Path) -> std::path::PathBuf {
    let text = workload::scenario::builtin_toml("fleet-fig2-twitter")
        .unwrap()
        .replacen(
            "device = \"pixel3\"",
            &format!("device = \"{}\"", device.file_name().unwrap().to_str().unwrap()),
            1,
        );
    let path = device.with_extension("scenario.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn assert_clean_error(path: &std::path::Path, key: &str) {
    let sc = scenario_for(path);
    let (code, _, err) = hotlaunch(&["run", sc.to_str().unwrap()]);
    assert_ne!(code, 0, "must fail");
    assert_ne!(code, 101, "must not panic: {err}");
    let err = err.trim_end();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    let file = path.file_name().unwrap().to_str().unwrap();
    assert!(err.contains(file), "names the file: {err}");
    assert!(err.contains(key), "names the key {key}: {err}");
}

fn replace_line(text: String, key: &str, new: &str) -> String {
    text.lines()
        .map(|l| {
            if l.trim_start().starts_with(key) {
                new.to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn unknown_key_is_rejected() {
    let p = bad_device("unknown.toml", |t| {
        t.replacen("[memory]", "[memory]\ndram_gigs = 4", 1)
    });
    assert_clean_error(&p, "dram_gigs");
}

#[test]
fn malformed_toml_is_rejected() {
    let p = bad_device("malformed.toml", |t| t.replacen("[memory]", "[memory\n", 1));
    let (code, _, err) = hotlaunch(&["run", scenario_for(&p).to_str().unwrap()]);
    assert!(code != 0 && code != 101, "{err}");
    assert!(err.contains("malformed.toml"), "{err}");
}

#[test]
fn zero_and_negative_sizes_are_rejected() {
    let p = bad_device("zero.toml", |t| replace_line(t, "dram_mb", "dram_mb = 0"));
    assert_clean_error(&p, "dram_mb");
    let p = bad_device("negative.toml", |t| replace_line(t, "dram_mb", "dram_mb = -4096"));
    assert_clean_error(&p, "dram_mb");
}

#[test]
fn device_smaller_than_its_reserve_is_rejected() {
    let p = bad_device("tiny.toml", |t| replace_line(t, "dram_mb", "dram_mb = 512"));
    assert_clean_error(&p, "reserve");
}

#[test]
fn unknown_builtin_device_is_rejected() {
    let dir = std::env::temp_dir().join(format!("hotlaunch-cli-dev-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pixel99-scenario.toml");
    let text = workload::scenario::builtin_toml("fleet-fig2-twitter")
        .unwrap()
        .replacen("device = \"pixel3\"", "device = \"pixel99\"", 1);
    std::fs::write(&path, text).unwrap();
    let (code, _, err) = hotlaunch(&["run", path.to_str().unwrap()]);
    assert!(code != 0 && code != 101, "{err}");
    assert!(err.contains("pixel99"), "{err}");
}

#[test]
fn run_writes_json() {
    let dir = std::env::temp_dir().join(format!("hotlaunch-cli-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("out.json");
    let report = dir.join("report");
    let (code, out, err) = hotlaunch(&[
        "run",
        "fleet-fig2-twitter",
        "--json",
        json.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("hot launch p50"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["schema_version"], 1);
    for key in [
        "hot_launch_ms",
        "cold_launch_ms",
        "launches",
        "cached_apps",
        "kills",
        "cpu_ms",
        "energy_j",
        "flash",
        "zram",
        "integrity",
    ] {
        assert!(!v["policies"][0][key].is_null(), "missing {key}");
    }
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(html.contains("<svg"));
}

#[test]
fn unknown_policy_scenario_and_key_are_rejected() {
    let (code, _, err) = hotlaunch(&["run", "--policy", "nosuch"]);
    assert!(code != 0 && code != 101, "{err}");
    assert!(err.contains("nosuch") && err.contains("android"), "{err}");
    let (code, _, err) = hotlaunch(&["run", "no-such-scenario"]);
    assert!(code != 0 && code != 101, "{err}");
    assert!(err.contains("no-such-scenario"), "{err}");
    let dir = std::env::temp_dir().join(format!("hotlaunch-cli-sc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.toml");
    let text = workload::scenario::builtin_toml("fleet-fig2-twitter")
        .unwrap()
        .replacen("seed = 1", "seed = 1\nspeed = 3", 1);
    std::fs::write(&path, text).unwrap();
    let (code, _, err) = hotlaunch(&["run", path.to_str().unwrap()]);
    assert!(code != 0 && code != 101, "{err}");
    assert!(err.contains("bad.toml") && err.contains("speed"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

/// `bench --quick` (the smoke version of the benchmark command) prints its rates and writes them
/// as JSON; an unknown policy for the end-to-end part is refused before anything runs.
#[test]
fn bench_quick_prints_and_writes_its_rates() {
    let dir = std::env::temp_dir().join(format!("hotlaunch-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("bench.json");
    let (code, out, err) = hotlaunch(&[
        "bench",
        "--quick",
        "--events",
        "20000",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("page_events_per_sec:") && out.contains("gc_object_visits_per_sec:"),
        "{out}"
    );
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(v["page_events_per_sec"].as_f64().unwrap() > 0.0);
    assert!(v["gc_object_visits_per_sec"].as_f64().unwrap() > 0.0);
    assert!(
        v["default_day"].as_array().unwrap().is_empty(),
        "--quick skips the default day"
    );
    let (code, _, err) = hotlaunch(&["bench", "--events", "1000", "--policy", "nosuch"]);
    assert_ne!(code, 0);
    assert!(err.contains("nosuch") && err.lines().count() <= 2, "{err}");
}
