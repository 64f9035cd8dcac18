//! `hotlaunch reproduce ariadne --quick`: every row of `ariadne-checks.md` is printed and ran
//! (PASS or GAP, never "could not run"); an `ariadne` run is deterministic.

mod support;

use hotlaunch::{run_policy, RunSpec};
use policy::ariadne::Ariadne;
use policy::{resolve_params, SwapOverrides};
use workload::scenario::{Scenario, WorkloadSpec};

#[test]
fn every_ariadne_row_is_present_and_ran() {
    support::every_row_ran("ariadne", 11, None);
}

fn short_run() -> report::model::PolicyResult {
    let mut sc = Scenario::builtin("ariadne-6.1-relaunch").unwrap();
    if let WorkloadSpec::RelaunchAfter {
        targets,
        repeats,
        n_between,
        params,
        ..
    } = &mut sc.workload
    {
        targets.truncate(1);
        *repeats = 1;
        *n_between = 3;
        params.use_s = 5.0;
    }
    let r = sc.resolve().unwrap();
    let spec = RunSpec::from_scenario(&r);
    let params = resolve_params(&Ariadne::default(), &[]).unwrap();
    let swap = SwapOverrides {
        zram_mb: Some(3072),
        ..SwapOverrides::default()
    };
    let out = run_policy(&spec, &Ariadne::default(), &params, swap, |_, _| {}).unwrap();
    hotlaunch::policy_result("ariadne", &out)
}

#[test]
fn an_ariadne_run_is_deterministic() {
    let a = short_run();
    assert_eq!(a.integrity.checksum_mismatches, 0);
    assert!(a.cpu_ms.by_category["policy"] > 0.0);
    assert_eq!(a, short_run(), "same seed, same result");
}
