//! `hotlaunch reproduce marvin --quick`: every row of `marvin-checks.md` is printed and ran (PASS
//! or GAP is the model's business, not this test's); a short `marvin` run is deterministic and
//! keeps swap integrity.

mod support;

use hotlaunch::{run_policy, RunSpec};
use policy::{resolve_params, SwapOverrides};
use workload::scenario::{Scenario, WorkloadSpec};

#[test]
fn reproduce_marvin_quick_prints_every_row() {
    let checks = support::every_row_ran("marvin", 10, Some(|i| format!("#{} ", i + 1)));
    // Row 10 ran Marvin on Fleet's §7.2 protocol.
    assert!(
        checks[9].simulated.starts_with("Marvin P90 = "),
        "{:?}",
        checks[9]
    );
}

fn short_marvin_run() -> String {
    let mut sc = Scenario::builtin("default").unwrap();
    sc.seed = 7;
    if let WorkloadSpec::LiveLab { launches, .. } = &mut sc.workload {
        *launches = 25;
    }
    let r = sc.resolve().unwrap();
    let spec = RunSpec::from_scenario(&r);
    let p = policy::by_name("marvin").unwrap();
    let params = resolve_params(p.as_ref(), &[]).unwrap();
    let out = run_policy(&spec, p.as_ref(), &params, SwapOverrides::default(), |_, _| {}).unwrap();
    let res = hotlaunch::policy_result("marvin", &out);
    assert_eq!(res.integrity.checksum_mismatches, 0);
    assert!(res.policy_metrics.contains_key("marvin.saved_mb"));
    let v = serde_json::to_value(&res).unwrap();
    v.to_string()
}

#[test]
fn marvin_runs_are_deterministic() {
    assert_eq!(short_marvin_run(), short_marvin_run());
}

/// A reclaimed object read back (eager restore and object faults, from the flash swap file) is
/// byte-identical: every page swapped in matches its content's checksum, and the run did read
/// back hundreds of MB (`marvin-8.2-reclaim`: the shrinker drops saved objects, hot launches
/// restore them).
#[test]
fn a_reclaimed_object_read_back_is_byte_identical() {
    let r = Scenario::builtin("marvin-8.2-reclaim")
        .unwrap()
        .resolve()
        .unwrap();
    let spec = RunSpec::from_scenario(&r);
    let plan = &hotlaunch::plan_runs(&r, &[]).unwrap()[0];
    let out = run_policy(
        &spec.for_plan(plan),
        plan.policy.as_ref(),
        &plan.params,
        plan.swap,
        |_, _| {},
    )
    .unwrap();
    let m = |k: &str| out.policy_metrics[k];
    assert!(m("marvin.shrinker_reclaimed_mb") > 500.0);
    assert!(m("marvin.restored_mb") > 500.0 && m("marvin.object_faults") > 0.0);
    let i = &out.kernel.integrity;
    // 256 pages per MB restored, all checked.
    assert!(
        i.pages_swapped_in as f64 > m("marvin.restored_mb") * 256.0 * 0.9,
        "{i:?}"
    );
    assert_eq!(i.checksum_mismatches, 0);
}
