//! `hotlaunch reproduce memsaver --quick`: every row of `memsaver-checks.md` is printed and ran
//! (not that it passes), and a short `memsaver` run is deterministic.

mod support;

use hotlaunch::{run_policy, RunSpec};
use policy::{resolve_params, SwapOverrides};
use workload::scenario::{Scenario, WorkloadSpec};

#[test]
fn every_memsaver_row_is_present_and_ran() {
    support::every_row_ran("memsaver", 10, Some(|i| format!("{} ", i + 1)));
}

fn short_run() -> report::model::PolicyResult {
    let mut sc = Scenario::builtin("default").unwrap();
    sc.seed = 5;
    if let WorkloadSpec::LiveLab { launches, .. } = &mut sc.workload {
        *launches = 25;
    }
    let r = sc.resolve().unwrap();
    let spec = RunSpec::from_scenario(&r);
    let p = policy::by_name("memsaver").unwrap();
    let params = resolve_params(p.as_ref(), &[]).unwrap();
    let out = run_policy(&spec, p.as_ref(), &params, SwapOverrides::default(), |_, _| {}).unwrap();
    hotlaunch::policy_result(&params.label("memsaver"), &out)
}

#[test]
fn memsaver_runs_are_deterministic_and_intact() {
    let a = short_run();
    assert_eq!(a.integrity.checksum_mismatches, 0);
    assert!(a.launches.hot > 0);
    assert!(a.cpu_ms.by_category["policy"] > 0.0, "scan CPU is charged");
    // The run exercised the mechanism: H collections and page-out moments happened.
    assert!(a.policy_metrics["h_collections"] > 0.0, "{:?}", a.policy_metrics);
    assert!(
        a.policy_metrics["pageout_moments"] > 0.0,
        "{:?}",
        a.policy_metrics
    );
    assert_eq!(a, short_run(), "same seed, same result");
}

/// Bad `memsaver` parameters in a scenario file: a one-line error naming the file, line, key and
/// what was expected (stack depth 0 or > 3 spare bits, negative transition, unknown key).
#[test]
fn bad_memsaver_parameters_in_a_scenario_are_one_line_errors() {
    for (line, key) in [
        ("depth = 0", "depth"),
        ("depth = 4", "depth"),
        ("transition_s = -1.0", "transition_s"),
        ("no_such_key = 1", "no_such_key"),
    ] {
        let text = format!(
            "name = \"bad\"\nseed = 1\ndevice = \"oneplus9pro\"\npolicies = [\"memsaver\"]\n\
             [apps]\nnames = [\"YouTube\"]\n[workload]\nkind = \"script\"\nrepeat = 1\n\
             [[workload.events]]\nlaunch = \"YouTube\"\nuse_s = 1\n\
             [[variants]]\nname = \"x\"\n[variants.params.memsaver]\n{line}\n"
        );
        let e = Scenario::from_toml_str(&text, "bad.toml")
            .and_then(|s| s.resolve())
            .map_err(|e| e.to_string())
            .and_then(|r| {
                hotlaunch::plan_runs(&r, &[])
                    .map(|_| ())
                    .map_err(|e| format!("{e:#}"))
            })
            .unwrap_err();
        assert!(!e.contains('\n'), "{line}: {e}");
        for want in ["bad.toml", "line", key, "expected"] {
            assert!(e.contains(want), "{line}: {want} missing in {e}");
        }
    }
}
