//! `hotlaunch reproduce ismm15 --quick`: every row of `ismm15-checks.md` is present and ran
//! (not that it passes), and a short `regions` run is deterministic.

mod support;

use hotlaunch::{run_policy, RunSpec};
use policy::{resolve_params, ParamValue, SwapOverrides};
use workload::scenario::{Scenario, WorkloadSpec};

#[test]
fn every_ismm15_row_is_reported() {
    for c in support::every_row_ran("ismm15", 10, Some(|i| format!("{}. ", i + 1))) {
        // Visible with --nocapture: the quick table without a second reproduce run.
        eprintln!("{} | {} | {}", c.check, c.simulated, c.status);
    }
}

fn short_run(order: i64) -> report::model::PolicyResult {
    let mut sc = Scenario::builtin("ismm15-regions").unwrap();
    if let WorkloadSpec::LiveLab { launches, .. } = &mut sc.workload {
        *launches = 12;
    }
    let r = sc.resolve().unwrap();
    let spec = RunSpec::from_scenario(&r);
    let p = policy::by_name("regions").unwrap();
    let params = resolve_params(p.as_ref(), &[("order".into(), ParamValue::Int(order))]).unwrap();
    let out = run_policy(&spec, p.as_ref(), &params, SwapOverrides::default(), |_, _| {}).unwrap();
    assert!(
        out.samples.iter().any(|s| s.held_free_pages > 0),
        "regions hold pages"
    );
    assert!(
        out.kernel.io_buffers.allocations > 0,
        "the scenario demands I/O buffers"
    );
    out.kernel.check_invariants().unwrap();
    hotlaunch::policy_result(&params.label("regions"), &out)
}

#[test]
fn regions_runs_are_deterministic() {
    let a = short_run(6);
    assert_eq!(a, short_run(6), "same seed, same result");
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&short_run(6)).unwrap()
    );
}
