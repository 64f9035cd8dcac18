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

/// What a soak run left: its days, launches, invariant checks and integrity counters.
struct Soaked {
    days: f64,
    launches: usize,
    checks: u64,
    violation: Option<String>,
    end_check: Result<(), String>,
    swapped_in: u64,
    mismatches: u64,
    cpu: f64,
}

/// Simulated days of the Marvin soak in the default (CI) run.
const MARVIN_CI_DAYS: f64 = 1.0;

#[test]
fn thirty_days_under_every_policy_keep_invariants() {
    let scale: f64 = std::env::var("HOTLAUNCH_SOAK_SCALE").map_or(1.0, |v| v.parse().expect("a number"));
    let days = std::env::var("HOTLAUNCH_SOAK_DAYS").map_or(30.0 * scale, |v| v.parse().expect("a number"));
    let launches = std::env::var("HOTLAUNCH_SOAK_LAUNCHES")
        .map_or((60.0 * scale) as usize, |v| v.parse().expect("a number"));
    let days_set = std::env::var("HOTLAUNCH_SOAK_DAYS").is_ok() || scale != 1.0;
    let mut total = (0.0, 0, 0);
    // HOTLAUNCH_SOAK_POLICIES=a,b: only these policies.
    let only = std::env::var("HOTLAUNCH_SOAK_POLICIES").unwrap_or_default();
    let mut runs = Vec::new();
    for name in policy::names() {
        if !only.is_empty() && !only.split(',').any(|p| p == name) {
            continue;
        }
        // Marvin walks every background heap every 30 s (its working-set rounds): ~2,900 full
        // heap walks per app per simulated day, about 3.5 CPU-minutes per simulated day here. CI
        // soaks it for a day; `HOTLAUNCH_SOAK_DAYS=30` (or a scale) gives it the full month.
        let d = if name == "marvin" && !days_set {
            MARVIN_CI_DAYS
        } else {
            days
        };
        let r = scenario(d, launches);
        let mut spec = RunSpec::from_scenario(&r);
        spec.sim.invariant_check_every = 6 * 3600 * NS_PER_SEC;
        spec.end = spec.end.max((d * DAY_S) as u64 * NS_PER_SEC);
        for plan in plan_runs(&r, &[name.to_string()]).unwrap() {
            runs.push((d, spec.for_plan(&plan).into_owned(), plan));
        }
    }
    // Independent runs on all cores (each run's CPU time is its worker thread's); a run's
    // output holds its kernel (not `Send`), so each worker returns a summary.
    let outs = hotlaunch::par_map(runs.len(), hotlaunch::jobs(), |i| {
        let (_, spec, plan) = &runs[i];
        let cpu0 = thread_cpu_s();
        let out = run_policy(spec, &*plan.policy, &plan.params, plan.swap, |_, _| {}).unwrap();
        let integ = out.kernel.integrity;
        Soaked {
            days: out.simulated as f64 / 1e9 / DAY_S,
            launches: out.launch_log.len(),
            checks: out.invariant_checks.done,
            violation: out
                .invariant_checks
                .first_violation
                .as_ref()
                .map(|v| format!("{v:?}")),
            end_check: out.kernel.check_invariants(),
            swapped_in: integ.pages_swapped_in,
            mismatches: integ.checksum_mismatches,
            cpu: thread_cpu_s() - cpu0,
        }
    });
    for ((days, _, plan), o) in runs.iter().zip(outs) {
        let (label, days) = (&plan.label, *days);
        println!(
            "soak {label}: {:.1} days, {} launches, {} invariant checks, {} pages swapped in, \
             {} mismatches, {:.1} CPU-s",
            o.days, o.launches, o.checks, o.swapped_in, o.mismatches, o.cpu
        );
        assert_eq!(o.violation, None, "{label}");
        assert_eq!(o.end_check, Ok(()), "{label}");
        assert_eq!(o.mismatches, 0, "{label}");
        assert!(o.days >= days * 0.9, "{label}: only {:.1} days", o.days);
        assert!(
            o.launches >= launches * 9 / 10,
            "{label}: only {} launches",
            o.launches
        );
        assert!(
            o.checks as f64 >= o.days * 4.0 * 0.9,
            "{label}: {} checks",
            o.checks
        );
        total = (total.0 + o.days, total.1 + o.launches, total.2 + o.checks);
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
