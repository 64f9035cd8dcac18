//! `hotlaunch compare`: identical output with 1 and 2 worker threads, one JSON entry per policy
//! with per-seed values and paired differences, scenario variants kept as extra rows, clean
//! errors. Runs on the small `fleet-fig2-twitter` scenario shrunk by `--quick`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn hotlaunch(args: &[&str], jobs: &str) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hotlaunch"))
        .args(args)
        .env("HOTLAUNCH_JOBS", jobs)
        .output()
        .expect("run hotlaunch");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A quick two-seed comparison of the small scenario (arguments follow).
const QUICK2: &[&str] = &["compare", "fleet-fig2-twitter", "--quick", "--seeds", "2"];

fn compare_into(d: &Path, jobs: &str, extra: &[&str]) -> String {
    let json = d.join("out.json");
    let report = d.join("report");
    let mut args = QUICK2.to_vec();
    args.extend_from_slice(&[
        "--json",
        json.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    args.extend_from_slice(extra);
    let (code, out, err) = hotlaunch(&args, jobs);
    assert_eq!(code, 0, "{err}");
    out
}

#[test]
fn output_is_identical_with_one_and_two_threads() {
    let (a, b) = (dir("compare-jobs1"), dir("compare-jobs2"));
    let out1 = compare_into(&a, "1", &[]);
    let out2 = compare_into(&b, "2", &[]);
    // stdout names the output files: compare it with the directories' names made equal.
    assert_eq!(
        out1.replace("compare-jobs1", "X"),
        out2.replace("compare-jobs2", "X")
    );
    for f in ["out.json", "report/compare.json", "report/index.html"] {
        let (x, y) = (
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
        );
        assert!(x == y, "{f} differs between HOTLAUNCH_JOBS=1 and 2");
    }

    // One entry per policy, in `hotlaunch list` order, each figure with per-seed values.
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(a.join("out.json")).unwrap()).unwrap();
    let labels: Vec<&str> = v["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, policy::names());
    assert_eq!(v["baseline"], "android");
    let seeds = v["seeds"].as_array().unwrap();
    assert_eq!(seeds.len(), 2);
    assert_eq!(seeds[0], 1, "seed 0 is the scenario's");
    for p in v["policies"].as_array().unwrap() {
        let hot = &p["figures"]["hot_p90_ms"];
        assert_eq!(hot["per_seed"].as_array().unwrap().len(), 2);
        assert!(hot["mean"].as_f64().unwrap() > 0.0);
        assert!(hot["ci95"].as_array().unwrap().len() == 2);
        // The baseline has no difference from itself; every other row has one.
        assert_eq!(p["label"] == "android", hot.get("vs_baseline").is_none());
    }
    let html = std::fs::read_to_string(a.join("report/index.html")).unwrap();
    assert!(html.contains("<title>Pareto: hot launch p90 vs mean cached apps</title>"));
}

/// The `policies` entry labelled `label` of a compare JSON.
fn row<'a>(v: &'a serde_json::Value, label: &str) -> &'a serde_json::Value {
    v["policies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["label"] == label)
        .unwrap_or_else(|| panic!("no row {label}"))
}

#[test]
fn a_shared_row_has_the_figures_of_its_own_runs() {
    // `unified` is MemSaver alone by default: beside `memsaver` it shares memsaver's runs.
    let d = dir("compare-shared");
    let (shared, own) = (d.join("shared.json"), d.join("own.json"));
    let run = |policies: &str, json: &Path| {
        let report = d.join(policies);
        let a = [QUICK2, &["--policies", policies, "--json"]].concat();
        let a = [
            &a[..],
            &[json.to_str().unwrap(), "--report", report.to_str().unwrap()],
        ]
        .concat();
        let (code, _out, err) = hotlaunch(&a, "2");
        assert_eq!(code, 0, "{err}");
        err
    };
    let err = run("memsaver,unified", &shared);
    assert!(err.contains("row \"unified\" builds the same hooks"), "{err}");
    assert!(
        err.contains("compare: 2 runs (1 rows x 2 seeds; 1 row(s) sharing them)"),
        "{err}"
    );
    // Alone, `unified` runs itself.
    let err = run("unified", &own);
    assert!(
        err.contains("compare: 2 runs (1 rows x 2 seeds; 0 row(s)"),
        "{err}"
    );

    let read =
        |p: &Path| -> serde_json::Value { serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap() };
    let (a, b) = (read(&shared), read(&own));
    assert_eq!(
        a["config"]["shared_runs"],
        serde_json::json!({"unified": "memsaver"})
    );
    assert_eq!(b["config"]["shared_runs"], serde_json::json!({}));
    let (x, y) = (row(&a, "unified"), row(&b, "unified"));
    assert_eq!(x["hot_launch_cdf"], y["hot_launch_cdf"]);
    assert_eq!(x["per_app"], y["per_app"]);
    let (fx, fy) = (
        x["figures"].as_object().unwrap(),
        y["figures"].as_object().unwrap(),
    );
    assert_eq!(fx.keys().collect::<Vec<_>>(), fy.keys().collect::<Vec<_>>());
    for (k, f) in fx {
        // Differences from the baseline depend on which row is the baseline; the runs do not.
        for key in ["n", "mean", "ci95", "per_seed"] {
            assert_eq!(f[key], fy[k][key], "{k}.{key}");
        }
    }
}

#[test]
fn scenario_variants_run_as_extra_rows() {
    let d = dir("compare-variants");
    let text = workload::scenario::builtin_toml("fleet-fig2-twitter").unwrap().to_string()
        + "\n[[variants]]\nname = \"android\"\nswap = \"zram\"\n\n[[variants]]\nname = \"fleet-D1\"\npolicy = \"fleet\"\n[variants.params.fleet]\nD = 1\n";
    let sc = d.join("variants.toml");
    std::fs::write(&sc, text).unwrap();
    let json = d.join("v.json");
    let (code, out, err) = hotlaunch(
        &[
            "compare",
            sc.to_str().unwrap(),
            "--quick",
            "--seeds",
            "2",
            "--policies",
            "android,fleet",
            "--json",
            json.to_str().unwrap(),
            "--report",
            d.join("r").to_str().unwrap(),
        ],
        "2",
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("scenario variant \"fleet-D1\" runs as an extra row"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let rows: Vec<(String, String, bool)> = v["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["label"].as_str().unwrap().to_string(),
                p["policy"].as_str().unwrap().to_string(),
                p["variant"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("android".into(), "android".into(), false),
            ("fleet".into(), "fleet".into(), false),
            // Named like a policy row: renamed, not merged or dropped.
            ("android (variant)".into(), "android".into(), true),
            ("fleet-D1".into(), "fleet".into(), true),
        ]
    );
    assert_eq!(v["policies"][3]["params"]["D"], 1);
    assert!(out.contains("fleet-D1"));
}

#[test]
fn bad_arguments_are_one_line_errors_before_running() {
    for (args, expect) in [
        (vec!["compare", "default", "--seeds", "0"], "--seeds 0"),
        (
            vec!["compare", "default", "--policies", "android,nope"],
            "unknown policy `nope`",
        ),
        (vec!["compare", "no-such-scenario"], "no-such-scenario"),
    ] {
        let (code, _, err) = hotlaunch(&args, "1");
        assert_ne!(code, 0, "{args:?} must fail");
        assert_ne!(code, 101, "{args:?} must not panic: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.contains(expect), "{args:?}: {err}");
    }
}

#[test]
fn ablation_adds_one_unified_row_per_part_switch() {
    let d = dir("compare-ablation");
    let json = d.join("a.json");
    let report = d.join("r");
    let tail = [
        "--policies",
        "android,unified",
        "--ablation",
        "--json",
        json.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ];
    let (code, _out, err) = hotlaunch(&[QUICK2, &tail].concat(), "2");
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let labels: Vec<&str> = v["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "android",
            "unified",
            "unified(ariadne.enabled=true)",
            "unified(fleet.enabled=true)",
            "unified(memsaver.enabled=false)",
            "unified(regions.enabled=true)",
        ]
    );
    let html = std::fs::read_to_string(d.join("r/index.html")).unwrap();
    assert!(html.contains("unified(fleet.enabled=true)"));
    // Every part off is stock Android: that row shows android's runs.
    assert_eq!(
        v["config"]["shared_runs"],
        serde_json::json!({"unified(memsaver.enabled=false)": "android"})
    );
}
