//! Interrupted launches (issue 13): a launch whose app is killed before its first frame is
//! counted (`launches.interrupted`, per-app `launches_interrupted`), and every launch request ends
//! exactly once: `requested = hot + cold + interrupted`.
//!
//! The pressure device is the built-in a03core profile with 1000 MiB of DRAM (800 of them
//! reserved by the kernel and system) and no swap: Facebook and GoogleEarth do not fit beside
//! the system, so the kernel OOM killer ends up killing the launching app itself.

use std::path::{Path, PathBuf};

mod cmdline;
use cmdline::hotlaunch;

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    cmdline::fresh_dir("interrupted", name)
}

/// A scenario on a shrunken a03core: `apps` launched round-robin 3 times, no use time.
fn pressure_scenario(d: &Path, dram_mb: u32, apps: &str) -> PathBuf {
    let stock = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../device/profiles/a03core.toml"
    ))
    .unwrap();
    assert!(stock.contains("\ndram_mb = 2048 "), "a03core profile changed");
    let tiny = stock
        .replace("\ndram_mb = 2048 ", &format!("\ndram_mb = {dram_mb} "))
        .replace("name = \"a03core\"", "name = \"tiny\"");
    std::fs::write(d.join("tiny.toml"), tiny).unwrap();
    let p = d.join("pressure.toml");
    std::fs::write(
        &p,
        format!(
            "name = \"pressure\"\ndevice = \"tiny.toml\"\nswap = \"none\"\n[apps]\nnames = [{apps}]\n\
             [workload]\nkind = \"round-robin\"\nrounds = 3\nuse_s = 0\n"
        ),
    )
    .unwrap();
    p
}

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn launches_killed_mid_launch_are_counted_and_every_request_ends_once() {
    let d = dir("pressure");
    let sc = pressure_scenario(&d, 1000, "\"Messages\", \"Facebook\", \"Gmail\", \"GoogleEarth\"");
    let json = d.join("r.json");
    let out = d.join("report");
    let (code, stdout, err) = hotlaunch(&[
        "run",
        sc.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--report",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let p = &r["policies"][0];
    let l = &p["launches"];
    let (hot, cold, interrupted, requested) = (
        u(&l["hot"]),
        u(&l["cold"]),
        u(&l["interrupted"]),
        u(&l["requested"]),
    );
    // 4 apps x 3 rounds, each launch finds its app dead (no swap: the previous one was OOM-killed).
    assert_eq!(requested, 12, "{l}");
    assert!(interrupted > 0, "a launch must have been killed mid-launch: {l}");
    assert!(cold > 0, "small apps still launch: {l}");
    assert_eq!(requested, hot + cold + interrupted, "{l}");
    assert!(
        u(&p["kills"]["by_reason"]["kernel_oom"]) >= interrupted,
        "{}",
        p["kills"]
    );
    let per_app: u64 = p["per_app"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| u(&a["launches_interrupted"]))
        .sum();
    assert_eq!(per_app, interrupted);
    // Text shows the row; CSV columns are numbers.
    let row = stdout
        .lines()
        .find(|l| l.starts_with("launches interrupted"))
        .unwrap_or_else(|| panic!("no interrupted row in:\n{stdout}"));
    assert_eq!(
        row.split_whitespace().last(),
        Some(interrupted.to_string().as_str()),
        "{row}"
    );
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut lines = summary.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let values: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = header.iter().position(|&h| h == "launches_interrupted").unwrap();
    assert_eq!(values[i].parse::<u64>().unwrap(), interrupted);
    let per_app_csv = std::fs::read_to_string(out.join("per_app.csv")).unwrap();
    let mut lines = per_app_csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = header.iter().position(|&h| h == "launches_interrupted").unwrap();
    let csv_sum: u64 = lines
        .map(|l| l.split(',').nth(i).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(csv_sum, interrupted);
}

#[test]
fn no_interrupted_row_when_nothing_was_interrupted() {
    let d = dir("calm");
    // Two small apps on a full-size a03core: nothing is killed mid-launch.
    let sc = pressure_scenario(&d, 2048, "\"Messages\", \"Gmail\"");
    let json = d.join("r.json");
    let (code, stdout, err) = hotlaunch(&["run", sc.to_str().unwrap(), "--json", json.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let l = &r["policies"][0]["launches"];
    assert_eq!(u(&l["interrupted"]), 0, "{l}");
    // Launching the app already in the foreground is no request: 2 apps x 3 rounds.
    assert_eq!(u(&l["requested"]), 6, "{l}");
    assert_eq!(u(&l["requested"]), u(&l["hot"]) + u(&l["cold"]), "{l}");
    assert!(!stdout.contains("launches interrupted"), "{stdout}");
    assert!(stdout.contains("launches cold"), "{stdout}");
}
