//! Sweeps: a grid of scenarios × policies × policy-parameter values × seeds, one simulation per
//! point, one table row per point.
//!
//! A sweep file is TOML (documented in `examples/sweep.toml` and the README):
//!
//! ```toml
//! scenarios = ["fleet-fig2-twitter"]   # built-in names or scenario files (relative to this file)
//! policies = ["android", "fleet"]
//! seeds = [1, 2]                        # master seeds (override the scenarios' own)
//! [params.fleet]                        # optional: values to sweep, per policy and key
//! D = [2, 3]
//! ```
//!
//! Points are the product scenarios × policies × (for each policy, the product of its swept
//! parameters' values) × seeds, in that nesting order (the table's row order). Each point has a
//! canonical id (`scenario=…;policy=…;params=k=v,…;seed=…`) that keys its row in the resume log:
//! [`ResumeLog`] appends one JSON line per finished point and flushes it, so an interrupted sweep
//! re-run skips every point already in the log and loses none. A point runs exactly as
//! `hotlaunch run SCENARIO --policy P --param P.K=V --seed S` would (same planning and
//! simulation code), on one thread; independent points go in parallel.

use crate::{plan_runs_with, simulate_on, RunSpec};
use anyhow::Context;
use device::tomlerr;
use report::format::SUMMARY_ROWS;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// A parsed, checked sweep file.
#[derive(Debug, Clone)]
pub struct SweepGrid {
    /// Where the grid came from (the file name in errors).
    pub origin: String,
    /// Directory that relative scenario paths are resolved against.
    pub base_dir: Option<PathBuf>,
    pub scenarios: Vec<String>,
    pub policies: Vec<String>,
    /// Swept parameters: (policy, key, values as `--param` text), in file order.
    pub params: Vec<(String, String, Vec<String>)>,
    pub seeds: Vec<u64>,
}

/// One point of a sweep.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Deserialize)]
pub struct Point {
    /// The scenario as written in the sweep file (built-in name or path).
    pub scenario: String,
    /// The scenario to load: the name, or the path resolved against the sweep file's folder.
    pub scenario_path: String,
    pub policy: String,
    /// This policy's swept parameters: (key, value text).
    pub params: Vec<(String, String)>,
    pub seed: u64,
}

impl Point {
    /// The canonical id: same point, same id (it keys the resume log).
    pub fn id(&self) -> String {
        let params: Vec<String> = self.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!(
            "scenario={};policy={};params={};seed={}",
            self.scenario,
            self.policy,
            params.join(","),
            self.seed
        )
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGrid {
    scenarios: Vec<String>,
    policies: Vec<String>,
    seeds: Vec<i64>,
    #[serde(default)]
    params: BTreeMap<String, toml::Table>,
}

fn err(origin: &str, line: Option<usize>, key: &str, msg: &str) -> anyhow::Error {
    let at = line.map_or_else(String::new, |l| format!(", line {l}"));
    anyhow::anyhow!(
        "sweep {}{at}: key {key}: {}",
        tomlerr::one_line(origin),
        tomlerr::one_line(msg)
    )
}

impl SweepGrid {
    /// Reads and checks a sweep file.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = engine::fsio::read_capped_string(path, engine::fsio::FileKind::Sweep)
            .map_err(|e| anyhow::anyhow!("sweep {}: cannot read: {e}", path.display()))?;
        let mut g = Self::from_toml_str(&text, &path.display().to_string())?;
        g.base_dir = path.parent().map(Path::to_path_buf);
        g.check_scenarios(&text)?;
        Ok(g)
    }

    /// Parses and checks sweep TOML (policies and parameter values against the policies' tables;
    /// scenarios are checked by [`SweepGrid::load`] and when a point runs).
    pub fn from_toml_str(text: &str, origin: &str) -> anyhow::Result<Self> {
        let raw: RawGrid = toml::from_str(text).map_err(|e| {
            let (line, key) = tomlerr::locate(text, e.message(), e.span());
            err(origin, line, key.as_deref().unwrap_or("?"), e.message())
        })?;
        let line = |section: &str, key: &str| tomlerr::find_key_line(text, section, key);
        let nonempty = |v: &[String], key: &str, what: &str| {
            if v.is_empty() || v.iter().any(|s| s.trim().is_empty()) {
                Err(err(
                    origin,
                    line("", key),
                    key,
                    &format!("expected a non-empty list of {what}"),
                ))
            } else {
                Ok(())
            }
        };
        nonempty(&raw.scenarios, "scenarios", "scenario names or files")?;
        nonempty(&raw.policies, "policies", "policy names")?;
        for p in &raw.policies {
            policy::by_name(p).map_err(|_| {
                let known = policy::names().join(", ");
                err(
                    origin,
                    line("", "policies"),
                    "policies",
                    &format!("expected known policies ({known}), got {p:?}"),
                )
            })?;
        }
        let dup = |v: &[String], key: &str| {
            let set: BTreeSet<&String> = v.iter().collect();
            if set.len() != v.len() {
                Err(err(origin, line("", key), key, "expected no repeated entries"))
            } else {
                Ok(())
            }
        };
        dup(&raw.scenarios, "scenarios")?;
        dup(&raw.policies, "policies")?;
        if raw.seeds.is_empty() || raw.seeds.iter().any(|&s| s < 0) {
            return Err(err(
                origin,
                line("", "seeds"),
                "seeds",
                "expected a non-empty list of non-negative integers",
            ));
        }
        let seeds: Vec<u64> = raw.seeds.iter().map(|&s| s as u64).collect();
        let set: BTreeSet<u64> = seeds.iter().copied().collect();
        if set.len() != seeds.len() {
            return Err(err(
                origin,
                line("", "seeds"),
                "seeds",
                "expected no repeated seeds",
            ));
        }
        let mut params = Vec::new();
        for (pol, table) in &raw.params {
            let section = format!("params.{pol}");
            if !raw.policies.contains(pol) {
                let l = tomlerr::find_key_line(text, "", &section).or_else(|| line("params", pol));
                let l = l.or_else(|| {
                    (1..=text.lines().count()).find(|&n| tomlerr::section_at(text, n) == section)
                });
                return Err(err(
                    origin,
                    l,
                    &section,
                    &format!("expected a policy of `policies` ({})", raw.policies.join(", ")),
                ));
            }
            let specs = policy::by_name(pol).map_err(anyhow::Error::msg)?.params();
            for (key, v) in table {
                let dotted = format!("{section}.{key}");
                let l = line(&section, key);
                let values = match v {
                    toml::Value::Array(a) if !a.is_empty() => a.clone(),
                    toml::Value::Array(_) => {
                        return Err(err(origin, l, &dotted, "expected a non-empty list of values"))
                    }
                    other => vec![other.clone()],
                };
                let mut texts = Vec::new();
                for v in values {
                    let t = match &v {
                        toml::Value::String(s) => s.clone(),
                        toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_) => {
                            v.to_string()
                        }
                        _ => {
                            return Err(err(
                                origin,
                                l,
                                &dotted,
                                "expected scalar values (number, boolean, string)",
                            ))
                        }
                    };
                    policy::params::parse_text(pol, &specs, key, &t).map_err(|e| {
                        err(
                            origin,
                            l,
                            &dotted,
                            &format!("expected {}, got {}", e.expected, e.got),
                        )
                    })?;
                    if texts.contains(&t) {
                        return Err(err(origin, l, &dotted, "expected no repeated values"));
                    }
                    texts.push(t);
                }
                params.push((pol.clone(), key.clone(), texts));
            }
        }
        Ok(SweepGrid {
            origin: origin.to_string(),
            base_dir: None,
            scenarios: raw.scenarios,
            policies: raw.policies,
            params,
            seeds,
        })
    }

    fn scenario_path(&self, s: &str) -> String {
        if workload::builtin_scenarios::builtin_toml(s).is_some() {
            return s.to_string();
        }
        match &self.base_dir {
            Some(d) if Path::new(s).is_relative() => d.join(s).display().to_string(),
            _ => s.to_string(),
        }
    }

    /// Every scenario must be built in or an existing file (named in a one-line error).
    pub fn check_scenarios(&self, text: &str) -> anyhow::Result<()> {
        for s in &self.scenarios {
            let p = self.scenario_path(s);
            if workload::builtin_scenarios::builtin_toml(&p).is_none() && !Path::new(&p).is_file() {
                return Err(err(
                    &self.origin,
                    tomlerr::find_key_line(text, "", "scenarios"),
                    "scenarios",
                    &format!("expected built-in scenarios (`hotlaunch list`) or scenario files, got {s:?}"),
                ));
            }
        }
        Ok(())
    }

    /// The swept parameter columns of the table (`policy.key`), in file order.
    pub fn param_columns(&self) -> Vec<String> {
        self.params.iter().map(|(p, k, _)| format!("{p}.{k}")).collect()
    }

    /// Every point, in table order.
    pub fn points(&self) -> Vec<Point> {
        let mut out = Vec::new();
        for s in &self.scenarios {
            for pol in &self.policies {
                // The product of this policy's swept values (one empty combination if none).
                let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
                for (_, key, values) in self.params.iter().filter(|(p, _, _)| p == pol) {
                    combos = combos
                        .into_iter()
                        .flat_map(|c| {
                            values.iter().map(move |v| {
                                let mut c = c.clone();
                                c.push((key.clone(), v.clone()));
                                c
                            })
                        })
                        .collect();
                }
                for c in combos {
                    for &seed in &self.seeds {
                        out.push(Point {
                            scenario: s.clone(),
                            scenario_path: self.scenario_path(s),
                            policy: pol.clone(),
                            params: c.clone(),
                            seed,
                        });
                    }
                }
            }
        }
        out
    }

    /// The table's columns: the point, then the swept parameters, then the headline figures.
    pub fn columns(&self) -> Vec<String> {
        let mut c: Vec<String> = ["id", "scenario", "policy", "label", "seed", "simulated_s"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        c.extend(self.param_columns());
        c.extend(SUMMARY_ROWS.iter().map(|r| r.key.to_string()));
        c
    }
}

/// The outcome of one point: its row (column → CSV text) and the full per-policy result.
pub struct PointResult {
    pub row: BTreeMap<String, String>,
    pub report: report::model::RunReport,
}

/// Runs one point on the calling thread, as `hotlaunch run` would.
pub fn run_point(p: &Point) -> anyhow::Result<PointResult> {
    let mut sc = workload::scenario::Scenario::resolve_name(&p.scenario_path)?;
    sc.seed = p.seed;
    let resolved = sc.resolve()?;
    let cli: Vec<String> = p
        .params
        .iter()
        .map(|(k, v)| format!("{}.{k}={v}", p.policy))
        .collect();
    let plans = plan_runs_with(&resolved, std::slice::from_ref(&p.policy), &cli, &policy::by_name)?;
    let spec = RunSpec::from_scenario(&resolved);
    let report = simulate_on(&spec, &plans, 1, |_, _, _| {})?;
    let r = &report.policies[0];
    let mut row = BTreeMap::new();
    row.insert("id".into(), p.id());
    row.insert("scenario".into(), p.scenario.clone());
    row.insert("policy".into(), p.policy.clone());
    row.insert("label".into(), r.policy.clone());
    row.insert("seed".into(), p.seed.to_string());
    row.insert("simulated_s".into(), report.simulated_seconds.to_string());
    for (k, v) in &p.params {
        row.insert(format!("{}.{k}", p.policy), v.clone());
    }
    for c in SUMMARY_ROWS {
        row.insert(c.key.to_string(), (c.value)(r).raw());
    }
    Ok(PointResult { row, report })
}

/// Quotes a CSV field when it holds a comma, quote or line break.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The table as CSV text: a header and one line per row (missing cells empty).
pub fn table_csv(columns: &[String], rows: &[BTreeMap<String, String>]) -> String {
    let mut out = String::new();
    let head: Vec<String> = columns.iter().map(|c| csv_field(c)).collect();
    out.push_str(&head.join(","));
    out.push('\n');
    for r in rows {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| csv_field(r.get(c).map_or("", String::as_str)))
            .collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// The append-only log of finished points (`points.jsonl`): one JSON object `{"id", "row"}` per
/// line, written and flushed as each point finishes. A torn last line (the process was killed
/// mid-write) is dropped when the log is opened again.
pub struct ResumeLog {
    path: PathBuf,
    file: std::sync::Mutex<std::fs::File>,
    /// Rows already in the log, by point id.
    pub done: BTreeMap<String, BTreeMap<String, String>>,
}

#[derive(serde::Serialize, Deserialize)]
struct LogLine {
    id: String,
    row: BTreeMap<String, String>,
}

impl ResumeLog {
    /// Opens (or creates) the log at `path` and reads the points it holds.
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        let mut done = BTreeMap::new();
        let mut good_len = 0u64;
        if path.exists() {
            let f = engine::fsio::open_regular(path, engine::fsio::FileKind::ResumeLog)
                .with_context(|| format!("reading {}", path.display()))?;
            let mut reader = std::io::BufReader::new(f);
            let mut line = String::new();
            let mut n = 0usize;
            loop {
                line.clear();
                let read = reader.read_line(&mut line)?;
                if read == 0 {
                    break;
                }
                n += 1;
                let complete = line.ends_with('\n');
                match serde_json::from_str::<LogLine>(line.trim_end()) {
                    Ok(l) if complete => {
                        done.insert(l.id, l.row);
                        good_len += read as u64;
                    }
                    // A torn last line: the point is not done; it runs again.
                    _ if !complete => break,
                    Ok(_) => unreachable!(),
                    Err(e) => anyhow::bail!("{}, line {n}: not a sweep log line: {e}", path.display()),
                }
            }
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        file.set_len(good_len)
            .with_context(|| format!("truncating {}", path.display()))?;
        Ok(ResumeLog {
            path: path.to_path_buf(),
            file: std::sync::Mutex::new(file),
            done,
        })
    }

    /// Appends one finished point and flushes it to the file.
    pub fn append(&self, id: &str, row: &BTreeMap<String, String>) -> anyhow::Result<()> {
        let mut text = serde_json::to_string(&LogLine {
            id: id.to_string(),
            row: row.clone(),
        })?;
        text.push('\n');
        let mut f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        f.write_all(text.as_bytes())
            .and_then(|_| f.sync_data())
            .with_context(|| format!("writing {}", self.path.display()))
    }
}
