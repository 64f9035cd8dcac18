//! Policy parameter tables of a scenario file, as written: `[policy.<name>]` at the top level and
//! `[variants.params.<name>]` inside a `[[variants]]` entry (a variant's `policy` key already
//! names its policy, so its tables live under `params`). Nested tables flatten into dotted keys
//! (`[policy.unified]` with `fleet.D = 3` gives key `fleet.D`, the parameters of a composed
//! policy's part).
//!
//! This module checks only the shape (non-empty names, scalar values) and records the line of
//! every value; the values are checked against each policy's own parameter table when the runs
//! are planned (`hotlaunch::plan_runs`), because policies live above this crate.

use apps::tomlerr;
use serde::Serialize;

use crate::scenario::ScenarioError;

/// A parameter value as written (TOML boolean, integer, float or string).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ScalarValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

/// The parameter values given for one policy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PolicyTable {
    /// Policy name (the `<name>` of `[policy.<name>]`).
    pub policy: String,
    /// Dotted path of the table in the file: `policy.fleet`, `variants[1].params.fleet`.
    pub path: String,
    /// Line of the table (its header or inline definition), when found.
    pub line: Option<usize>,
    /// Key/value pairs in file order (keys of nested tables dotted).
    pub entries: Vec<ParamEntry>,
}

/// One `key = value` of a [`PolicyTable`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParamEntry {
    pub key: String,
    pub value: ScalarValue,
    /// Line of the key, when found.
    pub line: Option<usize>,
}

/// Reads the tables under `path` (`policy`, or `variants[i].params`) from `table`.
pub(crate) fn parse(
    origin: &str,
    text: &str,
    path: &str,
    table: &toml::Table,
) -> Result<Vec<PolicyTable>, ScenarioError> {
    let invalid = |key: &str, expected: &str, got: &str| ScenarioError::Invalid {
        origin: tomlerr::one_line(origin),
        line: key_line(text, key),
        key: tomlerr::one_line(key),
        expected: expected.to_string(),
        got: tomlerr::one_line(got),
    };
    let mut out = Vec::with_capacity(table.len());
    for (name, v) in table {
        let tpath = format!("{path}.{name}");
        if name.trim().is_empty() || name.chars().any(char::is_control) {
            return Err(invalid(&tpath, "a policy name", &format!("{name:?}")));
        }
        let toml::Value::Table(t) = v else {
            return Err(invalid(
                &tpath,
                &format!("a table of parameters ([{path}.{name}])"),
                type_name(v),
            ));
        };
        let mut entries = Vec::new();
        flatten(t, "", &mut |key: String, v: &toml::Value| {
            let full = format!("{tpath}.{key}");
            let value = match v {
                toml::Value::Boolean(b) => ScalarValue::Bool(*b),
                toml::Value::Integer(x) => ScalarValue::Int(*x),
                toml::Value::Float(x) => ScalarValue::Float(*x),
                toml::Value::String(s) => ScalarValue::Str(s.clone()),
                other => {
                    return Err(invalid(
                        &full,
                        "a boolean, integer, float or string",
                        type_name(other),
                    ))
                }
            };
            entries.push(ParamEntry {
                line: key_line(text, &full),
                key,
                value,
            });
            Ok(())
        })?;
        out.push(PolicyTable {
            policy: name.clone(),
            line: key_line(text, &tpath),
            path: tpath,
            entries,
        });
    }
    Ok(out)
}

fn flatten<E>(
    t: &toml::Table,
    prefix: &str,
    f: &mut dyn FnMut(String, &toml::Value) -> Result<(), E>,
) -> Result<(), E> {
    for (k, v) in t {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(sub) => flatten(sub, &key, f)?,
            _ => f(key, v)?,
        }
    }
    Ok(())
}

fn type_name(v: &toml::Value) -> &'static str {
    match v {
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) => "an integer",
        toml::Value::Float(_) => "a float",
        toml::Value::Boolean(_) => "a boolean",
        toml::Value::Datetime(_) => "a datetime",
        toml::Value::Array(_) => "an array",
        toml::Value::Table(_) => "a table",
    }
}

/// `a . "b"` → `a.b`.
fn clean(k: &str) -> String {
    k.split('.')
        .map(|p| p.trim().trim_matches('"').trim_matches('\''))
        .collect::<Vec<_>>()
        .join(".")
}

/// 1-based line where the dotted `path` (`policy.fleet.D`, `variants[1].params.fleet.D`) is
/// written as a key or a table header; else the line of its closest written parent. Unlike
/// `tomlerr::section_at`, sub-tables of an array-of-tables entry (`[variants.params.x]` after
/// the second `[[variants]]`) get that entry's index.
pub fn key_line(text: &str, path: &str) -> Option<usize> {
    let mut written: Vec<(usize, String)> = Vec::new();
    let mut section = String::new();
    let mut arrays: Vec<(String, usize)> = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.starts_with('[') {
            let h = t.split('#').next().unwrap_or("").trim();
            if let Some(inner) = h.strip_prefix("[[").and_then(|r| r.strip_suffix("]]")) {
                let name = clean(inner);
                let idx = match arrays.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, c)) => {
                        *c += 1;
                        *c
                    }
                    None => {
                        arrays.push((name.clone(), 0));
                        0
                    }
                };
                section = format!("{name}[{idx}]");
            } else if let Some(inner) = h.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                let name = clean(inner);
                // The longest array-of-tables this header is a sub-table of.
                let parent = arrays
                    .iter()
                    .filter(|(a, _)| name.starts_with(&format!("{a}.")))
                    .max_by_key(|(a, _)| a.len());
                section = match parent {
                    Some((a, idx)) => format!("{a}[{idx}]{}", &name[a.len()..]),
                    None => name,
                };
            }
            written.push((i + 1, section.clone()));
        } else if let Some((k, _)) = t.split_once('=') {
            let k = clean(k);
            let ok = !k.is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
            if ok {
                written.push((i + 1, tomlerr::join(&section, &k)));
            }
        }
    }
    let mut p = path.to_string();
    loop {
        if let Some((l, _)) = written.iter().find(|(_, w)| *w == p) {
            return Some(*l);
        }
        p.truncate(p.rfind('.')?);
    }
}
