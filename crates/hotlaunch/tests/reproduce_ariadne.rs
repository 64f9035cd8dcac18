//! `hotlaunch reproduce ariadne --quick`: every row of `ariadne-checks.md` is printed and ran
//! (PASS or GAP, never "could not run"); an `ariadne` run is deterministic; the hot-list
//! recorder run (all mechanisms off) is stock ZRAM and measures the artifact's coverage and
//! accuracy.

mod support;

use hotlaunch::{run_policy, RunSpec};
use policy::ariadne::Ariadne;
use policy::{resolve_params, SwapOverrides};
use workload::scenario::{Scenario, WorkloadSpec};

#[test]
fn every_ariadne_row_is_present_and_ran() {
    support::every_row_ran("ariadne", 11, None);
}

fn short_spec(n: usize) -> RunSpec {
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
        *repeats = n;
        *n_between = 3;
        params.use_s = 5.0;
    }
    RunSpec::from_scenario(&sc.resolve().unwrap())
}

fn short_run() -> report::model::PolicyResult {
    let spec = short_spec(1);
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

#[test]
fn the_hot_list_recorder_is_stock_zram_and_scores_ttid_swap_ins() {
    use policy::{ParamValue, Probe};
    let spec = short_spec(2);
    let swap = SwapOverrides {
        zram_mb: Some(3072),
        ..SwapOverrides::default()
    };
    let stock = policy::android::Android { flash_swap: false };
    let stock_params = resolve_params(&stock, &[]).unwrap();
    let z = run_policy(&spec, &stock, &stock_params, swap, |_, _| {}).unwrap();
    let off: Vec<(String, ParamValue)> = [
        ("hotness_org", ParamValue::Bool(false)),
        ("adaptive_comp", ParamValue::Bool(false)),
        ("predecomp", ParamValue::Bool(false)),
        ("writeback", ParamValue::Bool(false)),
        ("exclude_hot", ParamValue::Bool(false)),
        ("lru_op_ns", ParamValue::Float(0.0)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let probe = Probe::new(policy::ariadne::Stats::default());
    let rec = Ariadne {
        stats: Some(probe.clone()),
    };
    let t = run_policy(&spec, &rec, &resolve_params(&rec, &off).unwrap(), swap, |_, _| {}).unwrap();
    let lat = |o: &framework::sim::SimOutput| -> Vec<(u64, u64)> {
        o.launch_log.iter().map(|l| (l.t, l.end)).collect()
    };
    assert_eq!(
        lat(&z),
        lat(&t),
        "the recorder must not change stock ZRAM's launches"
    );
    let s = probe.with(|x| x.clone());
    // One scored relaunch (the second), one pair of consecutive relaunches.
    assert_eq!((s.relaunches, s.pairs), (1, 1), "{s:?}");
    let (hot, touched, ttid) = s.mean_sizes();
    assert!(ttid > 0.0 && ttid <= touched, "{s:?}");
    let c = s.coverage();
    // Coverage cannot beat the list's size over the swap-ins; accuracy is a share.
    assert!(c > 0.0 && c <= (hot / ttid).min(1.0) + 1e-9, "{s:?}");
    assert_eq!((s.accuracy_n, s.reused_n), (1, 1), "{s:?}");
    assert!((0.0..=1.0).contains(&s.accuracy()), "{s:?}");
    let (sim, reused) = s.similarity();
    assert!(sim > 0.0 && sim <= 1.0 && reused > 0.0 && reused <= 1.0, "{s:?}");
}
