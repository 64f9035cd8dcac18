//! End-to-end runs of the whole stack (framework + kernel + policies) on built-in scenarios,
//! shortened so the suite stays fast.

use hotlaunch::{plan_runs, simulate, RunSpec};
use workload::scenario::{Scenario, WorkloadSpec};

fn short_default(seed: u64, launches: usize) -> workload::scenario::ResolvedScenario {
    let mut sc = Scenario::builtin("default").unwrap();
    sc.seed = seed;
    if let WorkloadSpec::LiveLab { launches: l, .. } = &mut sc.workload {
        *l = launches;
    }
    sc.resolve().unwrap()
}

fn run_json(seed: u64) -> String {
    let r = short_default(seed, 40);
    let spec = RunSpec::from_scenario(&r);
    let plans = plan_runs(&r, &["android".to_string(), "android-swap".to_string()]).unwrap();
    report::to_json_string(&simulate(&spec, &plans, |_, _, _| {}).unwrap())
}

#[test]
fn same_seed_same_bytes_different_seed_different_bytes() {
    let a = run_json(7);
    assert_eq!(a, run_json(7), "same seed must give byte-identical JSON");
    assert_ne!(a, run_json(8), "a different seed must change the results");
}

#[test]
fn parallel_runs_give_the_same_bytes_as_one_thread() {
    let r = short_default(11, 30);
    let spec = RunSpec::from_scenario(&r);
    let plans = plan_runs(
        &r,
        &[
            "android".to_string(),
            "android-swap".to_string(),
            "android".to_string(),
        ],
    )
    .unwrap();
    let one = report::to_json_string(&hotlaunch::simulate_on(&spec, &plans, 1, |_, _, _| {}).unwrap());
    let three = report::to_json_string(&hotlaunch::simulate_on(&spec, &plans, 3, |_, _, _| {}).unwrap());
    assert_eq!(one, three, "runs on worker threads must not change any byte");
}

#[test]
fn runs_of_one_spec_share_heap_blueprints_and_results_do_not_change() {
    let r = short_default(5, 20);
    let plans = plan_runs(&r, &["android".to_string(), "android".to_string()]).unwrap();
    let shared = RunSpec::from_scenario(&r);
    let both = report::to_json_string(&hotlaunch::simulate_on(&shared, &plans, 2, |_, _, _| {}).unwrap());
    // Every app with a generated heap has one recipe, whichever run asked first.
    let generated = r
        .apps
        .iter()
        .filter(|a| a.java.heap.trim() == "generated")
        .count();
    assert!(generated > 0);
    assert_eq!(
        shared.blueprints.len(),
        generated,
        "one recipe per app, not per run"
    );
    // Runs that each build their own blueprints give the same bytes.
    let own: Vec<String> = (0..2)
        .map(|i| {
            let spec = shared.with_own_blueprints();
            assert!(spec.blueprints.is_empty());
            report::to_json_string(&simulate(&spec, &plans[i..i + 1], |_, _, _| {}).unwrap())
        })
        .collect();
    let rep: serde_json::Value = serde_json::from_str(&both).unwrap();
    for (i, o) in own.iter().enumerate() {
        let mine: serde_json::Value = serde_json::from_str(o).unwrap();
        assert_eq!(
            rep["policies"][i], mine["policies"][0],
            "run {i}: a shared blueprint changed a result"
        );
    }
}

#[test]
fn par_map_keeps_index_order() {
    let v = hotlaunch::par_map(37, 4, |i| i * i);
    assert_eq!(v, (0..37).map(|i| i * i).collect::<Vec<_>>());
    assert!(hotlaunch::par_map(0, 4, |i| i).is_empty());
}

#[test]
fn default_day_reaches_pressure_and_loses_nothing() {
    let r = short_default(3, 80);
    let spec = RunSpec::from_scenario(&r);
    let plans = plan_runs(&r, &[]).unwrap();
    let rep = simulate(&spec, &plans, |_, _, _| {}).unwrap();
    let p = &rep.policies[0];
    assert_eq!(p.policy, "android");
    assert!(p.launches.hot > 0 && p.launches.cold > 0, "{:?}", p.launches);
    assert!(
        p.hot_launch_ms.p50 < p.cold_launch_ms.p50,
        "hot {:?} cold {:?}",
        p.hot_launch_ms,
        p.cold_launch_ms
    );
    assert!(
        p.zram.orig_data_size > 0,
        "stock Android swaps to zram under pressure"
    );
    assert!(p.integrity.pages_swapped_in > 0);
    assert_eq!(p.integrity.checksum_mismatches, 0);
    // With Android 10-sized apps (Fleet's Pixel 3) the first 80 launches fill zram but need no
    // kill yet (the whole day has some); pressure shows as swap and stalls.
    assert!(p.psi.some_ms > 0.0, "memory stalls under pressure");
    assert!(p.cached_apps.max >= 3);
    assert_eq!(p.timeseries.t_s.len(), p.timeseries.cached_apps.len());

    // Metrics sampled during the run.
    let ts = &p.timeseries;
    let n = ts.t_s.len();
    assert!(n > 10);
    assert_eq!(ts.unusable_index.len(), n);
    assert!(ts.unusable_index.iter().all(|row| row.len() == 11
        && row.iter().all(|u| (0.0..=1.0).contains(u))
        && row.windows(2).all(|w| w[0] <= w[1])));
    assert_eq!(ts.zram_orig_mb.len(), n);
    assert!(
        ts.zram_orig_mb.iter().any(|&v| v > 0.0),
        "zram fills during the run"
    );
    assert!(ts.zram_orig_mb.iter().zip(&ts.zram_compr_mb).all(|(o, c)| c <= o));
    assert!(
        ts.policy_cpu_ms.iter().all(|&v| v == 0.0),
        "stock Android has no policy CPU"
    );
    // One row per collection, adding up to the GC totals.
    assert_eq!(p.gcs.len() as u64, p.gc.collections);
    assert_eq!(
        p.gcs.iter().map(|g| g.objects_visited).sum::<u64>(),
        p.gc.objects_visited
    );
    assert!(
        p.gcs.iter().any(|g| g.state == "background"),
        "collector transitions run in the background"
    );
}

#[test]
fn baseline_checks_run_quickly_in_smoke_mode() {
    let checks = hotlaunch::reproduce::run_group("baseline", true, |_| {}).unwrap();
    assert_eq!(checks.len(), 14);
    for c in &checks {
        assert!(c.status == "PASS" || c.status == "GAP", "{c:?}");
        assert!(!c.simulated.is_empty());
    }
    assert!(hotlaunch::reproduce::run_group("nope", true, |_| {}).is_err());
}
