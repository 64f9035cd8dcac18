//! `hotlaunch._hotlaunch`: the Rust side of the Python package (python/hotlaunch).
//!
//! It hands plain data to Python: the run's report as the very JSON text `hotlaunch run --json`
//! writes (same code: `hotlaunch::simulate_events` then `report::to_json_string`), the event rows
//! as JSON, sweep points and rows as dicts-in-JSON. The DataFrames are built in Python from these,
//! so Python figures equal the CLI's by construction. Runs release the GIL. Errors raise
//! `hotlaunch.HotlaunchError` with the CLI's one-line message.

use hotlaunch::sweep::{self, Point, SweepGrid};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use std::path::PathBuf;

create_exception!(
    _hotlaunch,
    HotlaunchError,
    PyException,
    "A hotlaunch error (one line naming the input, place and what was expected)."
);

fn py_err(e: anyhow::Error) -> PyErr {
    HotlaunchError::new_err(hotlaunch::error_line(&e))
}

/// Runs `scenario` (built-in name or file) under `policies` (empty: the scenario's own choice)
/// with `params` (`policy.key=value`) and an optional seed. Returns `(report_json, events_json)`.
#[pyfunction]
#[pyo3(signature = (scenario, policies, params, seed=None, threads=None))]
fn run_json(
    py: Python<'_>,
    scenario: String,
    policies: Vec<String>,
    params: Vec<String>,
    seed: Option<u64>,
    threads: Option<usize>,
) -> PyResult<(String, String)> {
    py.allow_threads(move || {
        // The same configuration block as `hotlaunch run --json` (the reports compare equal).
        let (config, resolved) = hotlaunch::RunConfig::load(&scenario, seed, &policies, &params)?;
        let plans = hotlaunch::plan_runs_with(&resolved, &policies, &params, &policy::by_name)?;
        let spec = hotlaunch::RunSpec::from_scenario(&resolved);
        let threads = threads.unwrap_or_else(hotlaunch::jobs).max(1);
        let (mut report, events) = hotlaunch::simulate_events(&spec, &plans, threads, true, |_, _, _| {})?;
        report.config = Some(config.to_json());
        Ok::<_, anyhow::Error>((report::to_json_string(&report), serde_json::to_string(&events)?))
    })
    .map_err(py_err)
}

/// The summary table of a report (JSON text): one CSV row per policy with the CLI summary
/// table's columns (`report::format::SUMMARY_ROWS`, the `summary.csv` keys), same cell text.
#[pyfunction]
fn summary_csv(report_json: &str) -> PyResult<String> {
    let r = report::from_json_str(report_json).map_err(|e| py_err(anyhow::anyhow!("{e}")))?;
    let mut columns: Vec<String> = ["policy", "scenario", "seed"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    columns.extend(report::format::SUMMARY_ROWS.iter().map(|c| c.key.to_string()));
    let rows: Vec<std::collections::BTreeMap<String, String>> = r
        .policies
        .iter()
        .map(|p| {
            let mut row: std::collections::BTreeMap<String, String> = report::format::SUMMARY_ROWS
                .iter()
                .map(|c| (c.key.to_string(), (c.value)(p).raw()))
                .collect();
            row.insert("policy".into(), p.policy.clone());
            row.insert("scenario".into(), r.scenario.clone());
            row.insert("seed".into(), r.seed.to_string());
            row
        })
        .collect();
    Ok(sweep::table_csv(&columns, &rows))
}

/// Built-in scenario names.
#[pyfunction]
fn scenarios() -> Vec<String> {
    workload::scenario::builtin_names()
        .into_iter()
        .map(String::from)
        .collect()
}

/// Every policy with its description and parameters, as JSON (a list of objects).
#[pyfunction]
fn policies_json() -> PyResult<String> {
    let all: Vec<serde_json::Value> = policy::all()
        .iter()
        .map(|p| {
            let params: Vec<serde_json::Value> = p
                .params()
                .iter()
                .map(|s| {
                    serde_json::json!({
                        "name": s.name,
                        "default": s.default.to_string(),
                        "expected": s.kind.expected(),
                        "unit": s.unit,
                        "about": s.about,
                        "source": s.source,
                    })
                })
                .collect();
            serde_json::json!({"policy": p.name(), "description": p.description(), "params": params})
        })
        .collect();
    serde_json::to_string(&all).map_err(|e| py_err(e.into()))
}

fn grid(text: &str, origin: &str, base_dir: Option<String>, is_json: bool) -> anyhow::Result<SweepGrid> {
    let toml_text = if is_json {
        let v: serde_json::Value = serde_json::from_str(text)?;
        toml::to_string(&v).map_err(|e| anyhow::anyhow!("sweep {origin}: {e}"))?
    } else {
        text.to_string()
    };
    let mut g = SweepGrid::from_toml_str(&toml_text, origin)?;
    g.base_dir = base_dir.map(PathBuf::from);
    g.check_scenarios(&toml_text)?;
    Ok(g)
}

/// The points of a sweep grid (TOML text, or JSON text of the same keys when `is_json`), each
/// as JSON, and the table's columns.
#[pyfunction]
#[pyo3(signature = (text, origin, base_dir=None, is_json=false))]
fn sweep_points(
    text: &str,
    origin: &str,
    base_dir: Option<String>,
    is_json: bool,
) -> PyResult<(Vec<String>, Vec<String>)> {
    let g = grid(text, origin, base_dir, is_json).map_err(py_err)?;
    let points = g
        .points()
        .iter()
        .map(|p| serde_json::to_string(p).expect("points serialize"))
        .collect();
    Ok((points, g.columns()))
}

/// Runs one sweep point (JSON from [`sweep_points`]) and returns its row as JSON (one
/// simulation on the calling thread; the unit of work of a Ray task).
#[pyfunction]
fn sweep_run_point(py: Python<'_>, point: String) -> PyResult<String> {
    py.allow_threads(move || {
        let p: Point = serde_json::from_str(&point)?;
        let r = sweep::run_point(&p).map_err(|e| anyhow::anyhow!("point {}: {e:#}", p.id()))?;
        Ok::<_, anyhow::Error>(serde_json::to_string(&r.row)?)
    })
    .map_err(py_err)
}

/// Runs many points on `threads` threads (all cores by default); rows as JSON, in point order.
/// With `log` (a `points.jsonl` path, the CLI's resume log `hotlaunch::sweep::ResumeLog`), points
/// already in the log are not run again (their logged rows are returned) and every point is
/// appended to it as it finishes, so an interrupted sweep re-run loses none and redoes none.
#[pyfunction]
#[pyo3(signature = (points, threads=None, log=None))]
fn sweep_run_points(
    py: Python<'_>,
    points: Vec<String>,
    threads: Option<usize>,
    log: Option<String>,
) -> PyResult<Vec<String>> {
    py.allow_threads(move || {
        let pts: Vec<Point> = points
            .iter()
            .map(|p| serde_json::from_str(p))
            .collect::<Result<_, _>>()?;
        let log = log
            .map(|l| sweep::ResumeLog::open(std::path::Path::new(&l)))
            .transpose()?;
        let done = |p: &Point| log.as_ref().and_then(|l| l.done.get(&p.id()));
        let todo: Vec<usize> = (0..pts.len()).filter(|&i| done(&pts[i]).is_none()).collect();
        let new = hotlaunch::par_map(todo.len(), threads.unwrap_or_else(hotlaunch::jobs), |j| {
            let p = &pts[todo[j]];
            let r = sweep::run_point(p).map_err(|e| anyhow::anyhow!("point {}: {e:#}", p.id()))?;
            if let Some(l) = &log {
                l.append(&p.id(), &r.row)?;
            }
            Ok::<_, anyhow::Error>(r.row)
        });
        let mut new = new.into_iter();
        let mut rows = Vec::with_capacity(pts.len());
        for p in &pts {
            let row = match done(p) {
                Some(r) => r.clone(),
                None => new.next().expect("one result per point to run")?,
            };
            rows.push(serde_json::to_string(&row)?);
        }
        Ok::<_, anyhow::Error>(rows)
    })
    .map_err(py_err)
}

/// The sweep table as CSV text from rows (JSON objects) and columns: the CLI's `sweep.csv`.
#[pyfunction]
fn sweep_table_csv(columns: Vec<String>, rows: Vec<String>) -> PyResult<String> {
    let rows = rows
        .iter()
        .map(|r| serde_json::from_str(r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| py_err(e.into()))?;
    Ok(sweep::table_csv(&columns, &rows))
}

#[pymodule]
fn _hotlaunch(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("HotlaunchError", m.py().get_type::<HotlaunchError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(scenarios, m)?)?;
    m.add_function(wrap_pyfunction!(summary_csv, m)?)?;
    m.add_function(wrap_pyfunction!(policies_json, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_points, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_run_point, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_run_points, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_table_csv, m)?)?;
    Ok(())
}
