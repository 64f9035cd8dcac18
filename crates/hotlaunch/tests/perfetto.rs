//! Event rows and the Perfetto export: recording events changes no result (the observation seam
//! is read-only), and the trace has the expected tracks and slice counts in the Chrome JSON
//! trace-event format (checked field by field against the format's spec; Perfetto's
//! trace_processor cannot be downloaded here, see python/tests/test_perfetto.py).

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use workload::scenario::Scenario;

const PRESS: &str = include_str!("support/press.toml");

fn run() -> (
    report::model::RunReport,
    Vec<report::events::RunEvents>,
    report::model::RunReport,
) {
    let r = Scenario::from_toml_str(PRESS, "press.toml")
        .unwrap()
        .resolve()
        .unwrap();
    let plans = hotlaunch::plan_runs(&r, &["android".into(), "android-swap".into()]).unwrap();
    let spec = hotlaunch::RunSpec::from_scenario(&r);
    let (with, events) = hotlaunch::simulate_events(&spec, &plans, 2, true, |_, _, _| {}).unwrap();
    let plain = hotlaunch::simulate_on(&spec, &plans, 1, |_, _, _| {}).unwrap();
    (with, events, plain)
}

#[test]
fn events_and_trace_match_the_report() {
    let (report, events, plain) = run();
    // Read-only seam: the same report bytes with and without event rows.
    assert_eq!(report::to_json_string(&report), report::to_json_string(&plain));
    let trace = hotlaunch::perfetto::trace(&report, &events);
    let ev = trace["traceEvents"].as_array().unwrap();

    // Format: every event has the fields its phase needs (Trace Event Format spec).
    let mut named: BTreeSet<u64> = BTreeSet::new();
    for e in ev {
        let ph = e["ph"].as_str().unwrap();
        assert!(e["pid"].is_u64(), "{e}");
        match ph {
            "M" => {
                assert!(
                    e["args"]["name"].is_string() || e["args"]["sort_index"].is_u64(),
                    "{e}"
                );
                if e["name"] == "process_name" {
                    named.insert(e["pid"].as_u64().unwrap());
                }
            }
            "X" => {
                assert!(
                    e["ts"].is_u64()
                        && e["dur"].as_u64().unwrap() >= 1
                        && e["tid"].is_u64()
                        && e["name"].is_string(),
                    "{e}"
                )
            }
            "i" => assert!(
                ["g", "p", "t"].contains(&e["s"].as_str().unwrap()) && e["ts"].is_u64(),
                "{e}"
            ),
            "C" => assert!(e["args"]["value"].is_number() && e["ts"].is_u64(), "{e}"),
            other => panic!("unexpected phase {other}"),
        }
    }
    for e in ev {
        assert!(
            named.contains(&e["pid"].as_u64().unwrap()),
            "pid without a process name: {e}"
        );
    }

    for (k, (p, e)) in report.policies.iter().zip(&events).enumerate() {
        let sys = (k as u64 + 1) * 1000;
        let in_policy = |v: &&Value| {
            let pid = v["pid"].as_u64().unwrap();
            pid >= sys && pid < sys + 1000
        };
        let count = |ph: &str, cat: &str| {
            ev.iter()
                .filter(in_policy)
                .filter(|v| v["ph"] == ph && v["cat"] == cat)
                .count()
        };
        let launches = (p.launches.hot + p.launches.cold) as usize;
        assert!(launches > 0);
        assert_eq!(e.launches.len(), launches);
        assert_eq!(count("X", "launch"), launches);
        assert_eq!(count("X", "gc"), p.gc.collections as usize);
        assert!(p.gc.collections > 0);
        // Deaths: one process instant each; lmkd/OOM ones also on the lmkd track.
        assert_eq!(e.kills.len() as u64, p.kills.total + p.kills.force_stops);
        let system_kills = ev
            .iter()
            .filter(in_policy)
            .filter(|v| v["ph"] == "i" && v["tid"] == 2 && v["pid"] == sys)
            .count();
        assert_eq!(system_kills as u64, p.kills.total);
        assert_eq!(count("i", "kill"), e.kills.len() + system_kills);
        // kswapd: one slice per run; every wakeup starts a run.
        let wakeups = p.vmstat.get("kswapd_wakeups").copied().unwrap_or(0);
        assert!(wakeups > 0, "the scenario puts memory under pressure");
        assert_eq!(e.kswapd_runs.len() as u64, wakeups);
        assert_eq!(count("X", "reclaim"), e.kswapd_runs.len());
        // Counters: four series per sample.
        let mut counters: BTreeMap<String, usize> = BTreeMap::new();
        for v in ev.iter().filter(in_policy).filter(|v| v["ph"] == "C") {
            *counters
                .entry(v["name"].as_str().unwrap().to_string())
                .or_default() += 1;
        }
        assert_eq!(counters.len(), 4, "{counters:?}");
        assert!(counters.values().all(|&n| n == p.timeseries.t_s.len()));
        // Launch slices carry the launch's latency, like the histograms.
        let hot: Vec<u64> = e
            .launches
            .iter()
            .filter(|l| l.kind == "hot")
            .map(|l| l.latency_us)
            .collect();
        assert_eq!(hot.len() as u64, p.launches.hot);
    }
}
