//! The memory estimate before allocating (issue 13): a run whose estimated simulator memory
//! exceeds the limit is refused with one line naming the key, the estimate and the limit; the
//! default scenario fits (`HOTLAUNCH_MEMORY_LIMIT_MB` overrides `MemAvailable`).

use hotlaunch::membudget::{check, estimate, limit_mb, mem_available_mb};
use hotlaunch::RunSpec;
use std::process::Command;
use workload::scenario::Scenario;

fn hotlaunch(args: &[&str], limit: &str) -> (i32, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_hotlaunch"))
        .args(args)
        .env("HOTLAUNCH_MEMORY_LIMIT_MB", limit)
        .output()
        .expect("run hotlaunch");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn builtin(name: &str) -> RunSpec {
    RunSpec::from_scenario(&Scenario::builtin(name).unwrap().resolve().unwrap())
}

fn one_error_line(err: &str, needles: &[&str]) {
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected: {err}");
    assert!(lines[0].starts_with("error: "), "{err}");
    for n in needles {
        assert!(lines[0].contains(n), "{n:?} missing from: {err}");
    }
}

#[test]
fn default_scenario_fits_the_default_limit_and_its_estimate_is_plausible() {
    let spec = builtin("default");
    let total: f64 = estimate(&spec).iter().map(|t| t.mb).sum();
    // Measured peak RSS of `hotlaunch run` (default, pixel3, 20 h): see docs; the estimate must
    // cover it without being absurd.
    assert!((300.0..4000.0).contains(&total), "{:?}", estimate(&spec));
    check(&spec, limit_mb().unwrap()).unwrap();
}

#[test]
fn a_small_limit_refuses_before_running_naming_key_and_estimate() {
    let (code, err) = hotlaunch(&["run", "default"], "100");
    assert_eq!(code, 1, "{err}");
    one_error_line(
        &err,
        &[
            "estimated simulator memory",
            "exceeds the limit of 100 MiB",
            "HOTLAUNCH_MEMORY_LIMIT_MB",
            "apps (",
            "device.dram_mb = 4096",
        ],
    );
    // The largest term comes first: with many apps launched, `apps`.
    let spec = builtin("default");
    let e = estimate(&spec);
    assert!(e[0].mb >= e[1].mb, "{e:?}");
    let msg = check(&spec, Some(100.0)).unwrap_err();
    assert!(msg.contains(&format!("largest: {}", e[0].key)), "{msg}");
}

#[test]
fn limit_zero_disables_the_check_and_nonsense_is_one_line() {
    let spec = builtin("default");
    check(&spec, None).unwrap();
    let (code, err) = hotlaunch(&["run", "default"], "lots");
    assert_eq!(code, 1, "{err}");
    one_error_line(
        &err,
        &["HOTLAUNCH_MEMORY_LIMIT_MB", "\"lots\"", "whole number of MiB"],
    );
}

#[test]
fn mem_available_is_read_in_mib() {
    let t = "MemTotal:       24684084 kB\nMemFree: 1 kB\nMemAvailable:   2097152 kB\n";
    assert_eq!(mem_available_mb(t), Some(2048.0));
    assert_eq!(mem_available_mb("MemTotal: 1 kB\n"), None);
}
