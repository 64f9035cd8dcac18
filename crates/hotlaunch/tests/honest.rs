//! Nothing lost, honest output, errors as promised (issue 13): output paths are checked before a
//! run and nothing is created on error; absent figures are absent; mistakes in a scenario are
//! reported once, where the user made them.

use std::path::{Path, PathBuf};
use std::process::Command;

mod cmdline;
use cmdline::hotlaunch;

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    cmdline::fresh_dir("honest", name)
}

/// Exactly one stderr line, "error: …", containing every needle.
fn one_line_error(out: &(i32, String, String), needles: &[&str]) {
    let (code, _, err) = out;
    assert_eq!(*code, 1, "stderr: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected: {err}");
    assert!(lines[0].starts_with("error: "), "{err}");
    for n in needles {
        assert!(lines[0].contains(n), "{n:?} missing from: {err}");
    }
}

/// One cold launch of Twitter: no hot launch at all. `policies` and `extra` are TOML text.
fn one_launch(d: &Path, policies: &str, extra: &str) -> PathBuf {
    let p = d.join("one.toml");
    std::fs::write(
        &p,
        format!(
            "name = \"one\"\ndevice = \"pixel3\"\npolicies = {policies}\n[apps]\nnames = [\"Twitter\"]\n\
             [workload]\nkind = \"script\"\n[[workload.events]]\nlaunch = \"Twitter\"\nuse_s = 1\n{extra}"
        ),
    )
    .unwrap();
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn output_paths_in_missing_directories_fail_before_anything_is_created() {
    let d = dir("missing");
    let sc = one_launch(&d, "[\"android\"]", "");
    let missing = d.join("nope");
    let json = missing.join("deeper").join("r.json");
    for (cmd, flag) in [
        (vec!["run", s(&sc)], "--json"),
        (vec!["compare", s(&sc), "--seeds", "1"], "--json"),
        (vec!["reproduce", "baseline"], "--json"),
        (vec!["inspect", "/nonexistent.hprof"], "--json"),
    ] {
        let mut args = cmd.clone();
        args.extend([flag, s(&json)]);
        let out = hotlaunch(&args);
        one_line_error(&out, &[flag, s(&json), "does not exist"]);
        assert!(!missing.exists(), "{args:?} created {}", missing.display());
    }
    let report = missing.join("deeper").join("report");
    let out = hotlaunch(&["run", s(&sc), "--report", s(&report)]);
    one_line_error(&out, &["--report", s(&report), "does not exist"]);
    assert!(!missing.exists());
    // A bad scenario after good output paths: nothing is created either.
    let rep = d.join("rep");
    let out = hotlaunch(&[
        "run",
        "no-such-scenario",
        "--report",
        s(&rep),
        "--json",
        s(&d.join("r.json")),
    ]);
    assert_eq!(out.0, 1);
    assert!(!rep.exists() && !d.join("r.json").exists());
    assert_eq!(
        std::fs::read_dir(&d).unwrap().count(),
        1,
        "only the scenario file is left"
    );
}

#[test]
fn no_hot_launch_is_absent_not_zero() {
    let d = dir("absent");
    let sc = one_launch(&d, "[\"android\"]", "");
    let json = d.join("r.json");
    let (code, stdout, err) = hotlaunch(&["run", s(&sc), "--json", s(&json)]);
    assert_eq!(code, 0, "{err}");
    let hot = stdout.lines().find(|l| l.starts_with("hot launch p50")).unwrap();
    assert!(hot.trim_end().ends_with('—'), "{hot}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let p = &v["policies"][0];
    for key in ["p50", "p90", "p99", "mean", "max"] {
        assert!(
            p["hot_launch_ms"][key].is_null(),
            "hot_launch_ms.{key}: {}",
            p["hot_launch_ms"]
        );
        assert!(p["per_app"][0]["hot_launch_ms"][key].is_null());
        assert!(p["cold_launch_ms"][key].as_f64().unwrap() > 0.0);
    }
    assert_eq!(p["hot_launch_ms"]["count"], 0);
    // Absent figures read back as a report (the Python package parses it this way).
    let back = report::from_json_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(back.policies[0].hot_launch_ms.count, 0);
}

#[test]
fn unknown_policy_in_a_scenario_names_file_line_and_key() {
    let d = dir("policy");
    let sc = one_launch(&d, "[\"android\", \"flet\"]", "");
    one_line_error(
        &hotlaunch(&["run", s(&sc)]),
        &["one.toml", "line 3", "key policies", "flet", "fleet"],
    );
    let sc = one_launch(
        &d,
        "[\"android\"]",
        "[[variants]]\nname = \"a\"\n[[variants]]\nname = \"b\"\npolicy = \"marvn\"\n",
    );
    one_line_error(
        &hotlaunch(&["run", s(&sc)]),
        &["one.toml", "line 15", "key variants[1].policy", "marvn", "marvin"],
    );
}

#[test]
fn naming_policies_on_a_scenario_with_variants_is_refused() {
    let d = dir("variants");
    let sc = one_launch(
        &d,
        "[\"android\"]",
        "[[variants]]\nname = \"no-swap\"\nswap = \"none\"\n[[variants]]\nname = \"swap\"\nswap = \"zram\"\n",
    );
    let out = hotlaunch(&["run", s(&sc), "--policy", "android"]);
    one_line_error(&out, &["one.toml", "[[variants]]", "no-swap, swap", "compare"]);
    let out = hotlaunch(&["run", "fleet-3.1-instagram-swap", "--policy", "fleet"]);
    one_line_error(&out, &["fleet-3.1-instagram-swap", "[[variants]]"]);
    // Without --policy the variants run.
    let (code, stdout, err) = hotlaunch(&["run", s(&sc)]);
    assert_eq!(code, 0, "{err}");
    let head = stdout.lines().nth(1).unwrap();
    assert!(head.contains("no-swap") && head.contains("swap"), "{stdout}");
}

#[test]
fn a_report_records_its_configuration_and_reruns_to_the_same_bytes() {
    let d = dir("rerun");
    let sc = one_launch(&d, "[\"android\"]", "[policy.fleet]\nD = 3\n");
    let first = d.join("first.json");
    let args = [
        "run",
        s(&sc),
        "--seed",
        "7",
        "--policy",
        "fleet",
        "--param",
        "fleet.T_B_s=5",
        "--json",
        s(&first),
    ];
    let (code, _, err) = hotlaunch(&args);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&first).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let c = &v["config"];
    assert_eq!(c["seed"], 7);
    assert_eq!(c["policies"], serde_json::json!(["fleet"]));
    assert_eq!(c["params"], serde_json::json!(["fleet.T_B_s=5"]));
    assert_eq!(c["source"], s(&sc));
    assert!(c["scenario_toml"].as_str().unwrap().contains("D = 3"));
    assert_eq!(c["resolved"]["device"]["name"], "pixel3");
    assert_eq!(c["resolved"]["apps"][0]["name"], "Twitter");
    assert_eq!(c["version"], env!("CARGO_PKG_VERSION"));
    // The scenario file may change or go: the report alone repeats the run, from elsewhere too.
    std::fs::write(&sc, "garbage").unwrap();
    let second = d.join("second.json");
    let o = Command::new(env!("CARGO_BIN_EXE_hotlaunch"))
        .args(["run", "--rerun", s(&first), "--json", s(&second)])
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(&second).unwrap(), text, "re-run differs");
    // A report without a config block is refused with the key named.
    std::fs::write(&first, "{}").unwrap();
    one_line_error(
        &hotlaunch(&["run", "--rerun", s(&first)]),
        &["--rerun", "key config"],
    );
}

#[test]
fn compare_json_records_its_configuration() {
    let d = dir("compare");
    let sc = one_launch(&d, "[\"android\"]", "");
    let json = d.join("c.json");
    let dash = d.join("dash");
    let args = [
        "compare",
        s(&sc),
        "--seeds",
        "2",
        "--seed",
        "4",
        "--policies",
        "android",
        "--json",
        s(&json),
        "--report",
        s(&dash),
    ];
    let (code, _, err) = hotlaunch(&args);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let c = &v["config"];
    assert_eq!(c["command"], "compare");
    assert_eq!(c["seed"], 4);
    assert_eq!(c["seeds"], v["seeds"]);
    assert_eq!(c["policies"], serde_json::json!(["android"]));
    assert_eq!(c["resolved"]["device"]["name"], "pixel3");
    assert!(c["scenario_toml"].as_str().unwrap().contains("Twitter"));
}
