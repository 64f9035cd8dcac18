//! `hotlaunch sweep`: the grid's points, resume after a kill (no point redone, none lost), the
//! same table on 1 and 2 threads, and one-line errors for bad sweep files.

use hotlaunch::sweep::{ResumeLog, SweepGrid};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TINY: &str = r#"name = "tiny"
device = "pixel3"
swap = "zram"
[apps]
names = ["YouTube", "Chrome"]
[workload]
kind = "script"
[[workload.events]]
launch = "YouTube"
use_s = 5
[[workload.events]]
launch = "Chrome"
use_s = 5
[[workload.events]]
launch = "YouTube"
use_s = 5
"#;

const GRID: &str = r#"scenarios = ["tiny.toml"]
policies = ["android", "android-swap"]
seeds = [1, 2, 3]
"#;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hotlaunch-sweep-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("tiny.toml"), TINY).unwrap();
    std::fs::write(d.join("s.toml"), GRID).unwrap();
    d
}

fn sweep(d: &Path, out: &str, jobs: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hotlaunch"));
    c.args(["sweep", "s.toml", "--out", out])
        .current_dir(d)
        .env("HOTLAUNCH_JOBS", jobs);
    c
}

fn log_ids(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| v["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn grid_points_follow_the_file() {
    let g = SweepGrid::from_toml_str(
        "scenarios = [\"a\", \"b\"]\npolicies = [\"android\", \"fleet\"]\nseeds = [7, 8]\n[params.fleet]\nD = [2, 3]\n",
        "g.toml",
    )
    .unwrap();
    let p = g.points();
    // 2 scenarios × (android: 1 + fleet: 2 values) × 2 seeds.
    assert_eq!(p.len(), 12);
    assert_eq!(p[0].id(), "scenario=a;policy=android;params=;seed=7");
    assert_eq!(p[2].id(), "scenario=a;policy=fleet;params=D=2;seed=7");
    assert_eq!(p[5].id(), "scenario=a;policy=fleet;params=D=3;seed=8");
    assert_eq!(g.param_columns(), vec!["fleet.D".to_string()]);
    let ids: std::collections::BTreeSet<String> = p.iter().map(|x| x.id()).collect();
    assert_eq!(ids.len(), 12, "ids are unique");
}

#[test]
fn bad_sweep_files_give_one_line_errors_naming_line_and_key() {
    let cases = [
        (
            "scenarios = [\"a\"]\npolicies = [\"android\"]\nseeds = [1]\nseed = 3\n",
            "line 4: key seed",
        ),
        (
            "scenarios = [\"a\"]\npolicies = [\"andriod\"]\nseeds = [1]\n",
            "line 2: key policies: expected known policies",
        ),
        (
            "scenarios = [\"a\"]\npolicies = [\"fleet\"]\nseeds = [1]\n[params.fleet]\nD = [2, 99]\n",
            "line 5: key params.fleet.D: expected",
        ),
        (
            "scenarios = [\"a\"]\npolicies = [\"fleet\"]\nseeds = [1]\n[params.fleet]\nDD = [2]\n",
            "line 5: key params.fleet.DD",
        ),
        (
            "scenarios = [\"a\"]\npolicies = [\"android\"]\nseeds = [1]\n[params.fleet]\nD = [2]\n",
            "line 4: key params.fleet: expected a policy of `policies`",
        ),
        (
            "scenarios = []\npolicies = [\"android\"]\nseeds = [1]\n",
            "line 1: key scenarios",
        ),
        (
            "scenarios = [\"a\"]\npolicies = [\"android\"]\nseeds = [-1]\n",
            "line 3: key seeds",
        ),
        (
            "scenarios = [\"a\"]\npolicies = [\"android\"]\nseeds = [1, 1]\n",
            "line 3: key seeds",
        ),
        ("scenarios = [\"a\"]\npolicies = [\"android\"]\n", "key seeds"),
        (
            "scenarios = \"a\"\npolicies = [\"android\"]\nseeds = [1]\n",
            "line 1: key scenarios",
        ),
    ];
    for (text, want) in cases {
        let e = format!("{:#}", SweepGrid::from_toml_str(text, "g.toml").unwrap_err());
        assert!(e.starts_with("sweep g.toml"), "{e}");
        assert!(e.contains(want), "{text:?}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
    // An unknown scenario is named by the CLI, non-zero exit, one line.
    let d = dir("bad");
    std::fs::write(
        d.join("s.toml"),
        "scenarios = [\"nope.toml\"]\npolicies = [\"android\"]\nseeds = [1]\n",
    )
    .unwrap();
    let out = sweep(&d, "o", "1").output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("s.toml, line 1: key scenarios") && err.contains("nope.toml"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn killed_sweep_resumes_without_redoing_or_losing_points() {
    let d = dir("resume");
    // One thread: points finish one by one; kill after the first is logged.
    let mut child = sweep(&d, "o", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let log = d.join("o/points.jsonl");
    let t0 = Instant::now();
    while log_ids(&log).is_empty() {
        assert!(t0.elapsed() < Duration::from_secs(300), "no point finished");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = log_ids(&log);
    assert!(
        !before.is_empty() && before.len() < 6,
        "killed midway: {} points",
        before.len()
    );
    assert!(
        !d.join("o/sweep.csv").exists(),
        "no table before every point is done"
    );

    let out = sweep(&d, "o", "2").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{} already done", before.len())), "{err}");
    for id in &before {
        assert!(
            !err.contains(&format!("done {id}\n")),
            "point {id} was redone: {err}"
        );
    }
    let after = log_ids(&log);
    assert_eq!(after.len(), 6, "every point logged once: {after:?}");
    assert_eq!(after[..before.len()], before[..], "finished points kept");
    let unique: std::collections::BTreeSet<_> = after.iter().collect();
    assert_eq!(unique.len(), 6);
    let csv = std::fs::read_to_string(d.join("o/sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 7, "header + 6 rows:\n{csv}");

    // A third run does nothing and writes the same table; a fresh 1-thread sweep gives the same
    // table bytes as the 2-thread resumed one.
    let out = sweep(&d, "o", "2").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("6 already done, 0 to run"));
    assert_eq!(std::fs::read_to_string(d.join("o/sweep.csv")).unwrap(), csv);
    let out = sweep(&d, "fresh", "1").output().unwrap();
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(d.join("fresh/sweep.csv")).unwrap(), csv);
}

#[test]
fn torn_last_log_line_is_dropped() {
    let d = dir("torn");
    let path = d.join("points.jsonl");
    std::fs::write(&path, "{\"id\":\"a\",\"row\":{\"x\":\"1\"}}\n{\"id\":\"b\",\"ro").unwrap();
    let log = ResumeLog::open(&path).unwrap();
    assert_eq!(log.done.keys().collect::<Vec<_>>(), vec!["a"]);
    log.append("c", &Default::default()).unwrap();
    drop(log);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(ResumeLog::open(&path).unwrap().done.contains_key("c"));
    // A corrupt complete line is an error naming the file and line, not a silent loss.
    std::fs::write(&path, "garbage\n").unwrap();
    let e = format!("{:#}", ResumeLog::open(&path).err().unwrap());
    assert!(e.contains("points.jsonl, line 1"), "{e}");
}
