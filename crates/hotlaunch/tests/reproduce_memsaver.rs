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
    assert_eq!(a, short_run(), "same seed, same result");
}
