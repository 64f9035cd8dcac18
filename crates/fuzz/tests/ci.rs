//! The fuzz harness in CI (issue 13): a short deterministic run of every target with no
//! findings, the supervisor catching each failure mode, and every saved regression input.

use hotlaunch_fuzz::supervise::run_one;
use hotlaunch_fuzz::ALL;
use std::path::{Path, PathBuf};
use std::process::Command;

const EXE: &str = env!("CARGO_BIN_EXE_hotlaunch-fuzz");

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn short_run_of_every_target_finds_nothing() {
    let dir = tmp("fuzz-ci");
    let out = Command::new(EXE)
        .args(["all", "--inputs", "3000", "--seconds", "60", "--seed", "13"])
        // A worker writes a line before every input; allow a long stall of a loaded host before
        // calling a silent one hung (the per-input cap itself counts CPU time).
        .args(["--kill-after-ms", "30000"])
        .arg("--crash-dir")
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "findings:\n{stdout}\n{stderr}");
    for t in ALL {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(t.name()))
            .unwrap_or_else(|| panic!("no line for {}: {stdout}", t.name()));
        assert!(
            line.contains(" 3000 ") && line.contains("crashes 0  hangs 0  aborts 0"),
            "{line}"
        );
    }
    assert!(!dir.exists(), "no crash files expected");
}

#[test]
fn supervisor_catches_panics_aborts_oom_and_hangs() {
    for (mode, kind) in [
        ("panic", "crash"),
        ("oom", "abort"),
        ("exit", "abort"),
        ("hang", "hang"),
    ] {
        let dir = tmp(&format!("fuzz-selftest-{mode}"));
        let out = Command::new(EXE)
            .args([
                "device",
                "--inputs",
                "12",
                // Wall time before a silent worker is killed: generous, so a loaded host does not
                // turn the abort into a hang (the selftest hang sleeps an hour).
                "--kill-after-ms",
                "6000",
                "--cap-ms",
                "500",
            ])
            .arg("--crash-dir")
            .arg(&dir)
            .env("HOTLAUNCH_FUZZ_SELFTEST", format!("{mode}:4"))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{mode}: {stdout}");
        // The run carried on past the bad input.
        assert!(stdout.contains("inputs         12"), "{mode}: {stdout}");
        let saved = dir.join("device").join(format!("{kind}-seed1-4.bin"));
        assert!(saved.is_file(), "{mode}: {} missing; {stdout}", saved.display());
    }
}

#[test]
fn seeds_are_accepted_and_regression_inputs_pass() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    for t in ALL {
        for (i, s) in t.seeds().iter().enumerate() {
            // Every seed is a valid file: mutations start from inputs that get deep.
            assert_eq!(run_one(t, s), Ok(true), "{} seed {i}", t.name());
        }
        let Ok(dir) = std::fs::read_dir(root.join(t.name())) else {
            continue;
        };
        for f in dir {
            let p = f.unwrap().path();
            let b = std::fs::read(&p).unwrap();
            let r = run_one(t, &b);
            assert!(r.is_ok(), "{}: {r:?}", p.display());
        }
    }
}
