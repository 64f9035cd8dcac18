//! Soak (issue 13): a month of simulated use under every built-in policy, with the kernel's
//! (`Kernel::check_invariants`) and every Java heap's (`Heap::check_invariants`) invariants
//! checked every 6 simulated hours (`SimConfig::invariant_check_every`), and swap integrity
//! (every swapped-in page's checksum) at the end.
//!
//! Sized for CI (2 cores): a 2 GB phone, four apps, 60 LiveLab-like launches spread over 30 days
//! (long screen-off gaps), per policy. A longer soak (more days and launches per policy) runs with
//! `HOTLAUNCH_SOAK_SCALE=N cargo test --release -p hotlaunch --test soak -- --nocapture`
//! (N× the days and N× the launches); `HOTLAUNCH_SOAK_POLICIES=fleet,marvin` limits the policies.

use engine::NS_PER_SEC;
use hotlaunch::{plan_runs, run_policy, RunSpec};
use workload::scenario::{Scenario, WorkloadSpec};

const DAY_S: f64 = 86_400.0;

/// CPU seconds used so far by this (test) thread, from `/proc/thread-self/schedstat` (0 if absent).
fn thread_cpu_s() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns / 1e9)
}

/// The soak scenario: `days` days, `launches` launches (sessions of ~3 apps, gaps spread evenly).
fn scenario(days: f64, launches: usize) -> workload::scenario::ResolvedScenario {
    let mut sc = Scenario::builtin("day-2gb").unwrap();
    sc.apps.truncate(4);
    sc.seed = 5;
    let WorkloadSpec::LiveLab { launches: l, params } = &mut sc.workload else {
        panic!("day-2gb is a livelab workload");
    };
    *l = launches;
    params.gap_mean_s = days * DAY_S / (launches as f64 / params.session_apps_mean);
    sc.resolve().unwrap()
}

#[test]
fn thirty_days_under_every_policy_keep_invariants() {
    let scale: f64 = std::env::var("HOTLAUNCH_SOAK_SCALE").map_or(1.0, |v| v.parse().expect("a number"));
    let days = std::env::var("HOTLAUNCH_SOAK_DAYS").map_or(30.0 * scale, |v| v.parse().expect("a number"));
    let launches = std::env::var("HOTLAUNCH_SOAK_LAUNCHES")
        .map_or((60.0 * scale) as usize, |v| v.parse().expect("a number"));
    let r = scenario(days, launches);
    let mut spec = RunSpec::from_scenario(&r);
    spec.sim.invariant_check_every = 6 * 3600 * NS_PER_SEC;
    spec.end = spec.end.max((days * DAY_S) as u64 * NS_PER_SEC);
    let mut total = (0.0, 0, 0);
    // HOTLAUNCH_SOAK_POLICIES=a,b: only these policies.
    let only = std::env::var("HOTLAUNCH_SOAK_POLICIES").unwrap_or_default();
    for name in policy::names() {
        if !only.is_empty() && !only.split(',').any(|p| p == name) {
            continue;
        }
        let cpu0 = thread_cpu_s();
        let plans = plan_runs(&r, &[name.to_string()]).unwrap();
        for plan in &plans {
            let spec = spec.for_plan(plan);
            let out = run_policy(&spec, &*plan.policy, &plan.params, plan.swap, |_, _| {}).unwrap();
            let sim_days = out.simulated as f64 / 1e9 / DAY_S;
            let n = out.launch_log.len();
            let ck = &out.invariant_checks;
            let integ = out.kernel.integrity;
            println!(
                "soak {}: {sim_days:.1} days, {n} launches, {} invariant checks, {} pages swapped in, \
                 {} mismatches, {:.1} CPU-s",
                plan.label,
                ck.done,
                integ.pages_swapped_in,
                integ.checksum_mismatches,
                thread_cpu_s() - cpu0
            );
            assert_eq!(ck.first_violation, None, "{}", plan.label);
            out.kernel.check_invariants().unwrap();
            assert_eq!(integ.checksum_mismatches, 0, "{}", plan.label);
            assert!(sim_days >= days * 0.9, "{}: only {sim_days:.1} days", plan.label);
            assert!(n >= launches * 9 / 10, "{}: only {n} launches", plan.label);
            assert!(
                ck.done as f64 >= sim_days * 4.0 * 0.9,
                "{}: {} checks",
                plan.label,
                ck.done
            );
            total = (total.0 + sim_days, total.1 + n, total.2 + ck.done);
        }
    }
    println!(
        "soak: {:.1} simulated days, {} launches, {} invariant checks, 0 violations",
        total.0, total.1, total.2
    );
}

/// Invariant checks are read-only: a run with them gives the same report bytes as without.
#[test]
fn invariant_checks_do_not_change_results() {
    let mut sc = Scenario::builtin("default").unwrap();
    if let WorkloadSpec::LiveLab { launches, .. } = &mut sc.workload {
        *launches = 15;
    }
    let r = sc.resolve().unwrap();
    let plans = plan_runs(&r, &["android".to_string()]).unwrap();
    let mut spec = RunSpec::from_scenario(&r);
    let plain = report::to_json_string(&hotlaunch::simulate(&spec, &plans, |_, _, _| {}).unwrap());
    spec.sim.invariant_check_every = 60 * NS_PER_SEC;
    let checked = report::to_json_string(&hotlaunch::simulate(&spec, &plans, |_, _, _| {}).unwrap());
    assert_eq!(plain, checked);
}
