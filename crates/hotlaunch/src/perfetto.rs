//! A run as a trace for the Perfetto UI (ui.perfetto.dev), in the Chrome JSON trace-event format
//! (which Perfetto opens as is): <https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU>.
//!
//! Per policy: a `<policy>: system` process with a `kswapd` thread (one slice per kswapd run,
//! wake to sleep), an `lmkd` thread (one instant per kill by lmkd or the kernel OOM killer) and
//! counter tracks (free memory, zram, cached apps, PSI some); and one process per app with a
//! `launches` thread (one slice per launch, hot or cold, its latency as duration), a `gc` thread
//! (one slice per collection, its GC CPU time as duration) and its deaths as process instants.
//! Times are simulated µs. Simplified: GC slices are placed at the collection's start (the model
//! runs a collection atomically there) with its CPU time as length.

use report::events::RunEvents;
use report::model::RunReport;
use serde_json::{json, Value};

/// Process id of policy `k`'s system process; its apps follow (`+ 1 + app index`).
fn base_pid(k: usize) -> u64 {
    (k as u64 + 1) * 1000
}

const TID_MAIN: u64 = 1;
const TID_GC: u64 = 2;
const TID_KSWAPD: u64 = 1;
const TID_LMKD: u64 = 2;

fn meta(kind: &str, pid: u64, tid: Option<u64>, name: &str) -> Value {
    let mut v = json!({"ph": "M", "name": kind, "pid": pid, "args": {"name": name}});
    if let Some(t) = tid {
        v["tid"] = json!(t);
    }
    v
}

fn ms_to_us(ms: f64) -> u64 {
    (ms * 1000.0).round().max(0.0) as u64
}

/// The trace of `report` (with the event rows of each of its policies, in the same order).
pub fn trace(report: &RunReport, events: &[RunEvents]) -> Value {
    let mut ev: Vec<Value> = Vec::new();
    for (k, (p, e)) in report.policies.iter().zip(events).enumerate() {
        let sys = base_pid(k);
        ev.push(meta("process_name", sys, None, &format!("{}: system", p.policy)));
        ev.push(json!({"ph": "M", "name": "process_sort_index", "pid": sys, "args": {"sort_index": sys}}));
        ev.push(meta("thread_name", sys, Some(TID_KSWAPD), "kswapd"));
        ev.push(meta("thread_name", sys, Some(TID_LMKD), "lmkd"));
        let app_pid = |name: &str| {
            p.per_app
                .iter()
                .position(|a| a.app == name)
                .map_or(sys + 999, |i| sys + 1 + i as u64)
        };
        for (i, a) in p.per_app.iter().enumerate() {
            let pid = sys + 1 + i as u64;
            ev.push(meta(
                "process_name",
                pid,
                None,
                &format!("{}: {}", p.policy, a.app),
            ));
            ev.push(
                json!({"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": pid}}),
            );
            ev.push(meta("thread_name", pid, Some(TID_MAIN), "launches"));
            ev.push(meta("thread_name", pid, Some(TID_GC), "gc"));
        }
        for &[a, b] in &e.kswapd_runs {
            ev.push(
                json!({"ph": "X", "cat": "reclaim", "name": "kswapd", "pid": sys, "tid": TID_KSWAPD,
                "ts": a, "dur": b.saturating_sub(a).max(1)}),
            );
        }
        for l in &e.launches {
            ev.push(
                json!({"ph": "X", "cat": "launch", "name": format!("{} launch", l.kind),
                "pid": app_pid(&l.app), "tid": TID_MAIN, "ts": l.t_us, "dur": l.latency_us,
                "args": {"kind": l.kind, "context": l.context, "latency_ms": l.latency_us as f64 / 1000.0}}),
            );
        }
        for g in &p.gcs {
            ev.push(
                json!({"ph": "X", "cat": "gc", "name": format!("{} GC ({})", g.kind, g.cause),
                "pid": app_pid(&g.app), "tid": TID_GC, "ts": ms_to_us(g.t_s * 1000.0),
                "dur": ms_to_us(g.cpu_ms).max(1),
                "args": {"state": g.state, "cause": g.cause, "objects_visited": g.objects_visited,
                    "mb_copied": g.mb_copied, "pause_ms": g.pause_ms, "cpu_ms": g.cpu_ms}}),
            );
        }
        for kill in &e.kills {
            let name = format!("kill ({})", kill.reason);
            ev.push(
                json!({"ph": "i", "s": "p", "cat": "kill", "name": name, "pid": app_pid(&kill.app),
                "tid": TID_MAIN, "ts": kill.t_us, "args": {"reason": kill.reason}}),
            );
            if kill.reason != "user" {
                ev.push(json!({"ph": "i", "s": "t", "cat": "kill", "name": format!("kill {}", kill.app),
                    "pid": sys, "tid": TID_LMKD, "ts": kill.t_us, "args": {"reason": kill.reason, "app": kill.app}}));
            }
        }
        let ts = &p.timeseries;
        let counters: [(&str, &[f64]); 3] = [
            ("free memory (MiB)", &ts.free_mb),
            ("zram (MiB)", &ts.zram_mb),
            ("PSI some total (ms)", &ts.psi_some_ms),
        ];
        for (i, &t) in ts.t_s.iter().enumerate() {
            let t_us = ms_to_us(t * 1000.0);
            for (name, series) in counters {
                if let Some(v) = series.get(i) {
                    ev.push(json!({"ph": "C", "name": name, "pid": sys, "ts": t_us, "args": {"value": v}}));
                }
            }
            if let Some(c) = ts.cached_apps.get(i) {
                ev.push(
                    json!({"ph": "C", "name": "cached apps", "pid": sys, "ts": t_us, "args": {"value": c}}),
                );
            }
        }
    }
    json!({
        "displayTimeUnit": "ms",
        "metadata": {"tool": "hotlaunch", "scenario": report.scenario, "device": report.device, "seed": report.seed},
        "traceEvents": ev,
    })
}

/// Writes the trace to `path`.
pub fn write(report: &RunReport, events: &[RunEvents], path: &std::path::Path) -> anyhow::Result<()> {
    let text = serde_json::to_string(&trace(report, events))?;
    report::write_atomic(path, text).map_err(|e| anyhow::anyhow!("--perfetto {}: {e}", path.display()))
}
