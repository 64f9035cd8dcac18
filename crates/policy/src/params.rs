//! Policy parameters, libCacheSim style: each policy declares a table of [`ParamSpec`]s (name,
//! type, default, allowed range, unit, one-line description and the SOURCE of the default, e.g.
//! "Fleet §5.3.1, artifact value D=2"); [`resolve`] checks the values a scenario or the command
//! line gives against that table (unknown key, wrong type, out of range → a [`ParamError`] naming
//! the key and what was expected) and fills in the defaults; the policy's `build` reads the
//! resulting [`Params`].
//!
//! Values are four scalar types ([`ParamValue`]); enums are strings restricted to a list. An
//! integer is accepted where a float is expected (TOML `ratio = 1`), never the other way round.
//! A run's label carries the non-default values ([`Params::label`], `fleet(D=3)`), so every result
//! says what produced it.

use std::fmt;

/// The type and allowed values of a parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamKind {
    Bool,
    /// An integer in `min..=max`.
    Int {
        min: i64,
        max: i64,
    },
    /// A finite float in `[min, max]`.
    Float {
        min: f64,
        max: f64,
    },
    /// Any non-empty single-line string.
    Str,
    /// One of the listed strings.
    Enum(Vec<&'static str>),
}

impl ParamKind {
    /// What a value of this kind must be, for error messages and `hotlaunch list`.
    pub fn expected(&self) -> String {
        match self {
            ParamKind::Bool => "a boolean (true or false)".into(),
            ParamKind::Int { min, max } => format!("an integer in {min}..={max}"),
            ParamKind::Float { min, max } => format!("a number in [{min}, {max}]"),
            ParamKind::Str => "a non-empty single-line string".into(),
            ParamKind::Enum(v) => format!("one of {}", v.join(", ")),
        }
    }

    /// Short type name: `bool`, `int`, `float`, `string`, `enum`.
    pub fn type_name(&self) -> &'static str {
        match self {
            ParamKind::Bool => "bool",
            ParamKind::Int { .. } => "int",
            ParamKind::Float { .. } => "float",
            ParamKind::Str => "string",
            ParamKind::Enum(_) => "enum",
        }
    }

    /// Checks (and, for an integer given to a float, converts) `v`.
    pub fn check(&self, v: &ParamValue) -> Result<ParamValue, String> {
        let bad = || Err(self.expected());
        match (self, v) {
            (ParamKind::Bool, ParamValue::Bool(_)) => Ok(v.clone()),
            (ParamKind::Int { min, max }, ParamValue::Int(x)) if (min..=max).contains(&x) => Ok(v.clone()),
            (ParamKind::Float { min, max }, ParamValue::Float(x))
                if x.is_finite() && (*min..=*max).contains(x) =>
            {
                Ok(v.clone())
            }
            (ParamKind::Float { min, max }, ParamValue::Int(x)) if (*min..=*max).contains(&(*x as f64)) => {
                Ok(ParamValue::Float(*x as f64))
            }
            (ParamKind::Str, ParamValue::Str(s))
                if !s.trim().is_empty() && !s.chars().any(char::is_control) =>
            {
                Ok(v.clone())
            }
            (ParamKind::Enum(names), ParamValue::Str(s)) if names.contains(&s.as_str()) => Ok(v.clone()),
            _ => bad(),
        }
    }

    /// Parses command-line text (`--param fleet.D=3`) as a value of this kind and checks it.
    pub fn parse_text(&self, text: &str) -> Result<ParamValue, String> {
        let t = text.trim();
        let v = match self {
            ParamKind::Bool => match t {
                "true" => ParamValue::Bool(true),
                "false" => ParamValue::Bool(false),
                _ => return Err(self.expected()),
            },
            ParamKind::Int { .. } => ParamValue::Int(t.parse().map_err(|_| self.expected())?),
            ParamKind::Float { .. } => ParamValue::Float(t.parse().map_err(|_| self.expected())?),
            // Strings are taken as written (spaces included).
            ParamKind::Str | ParamKind::Enum(_) => ParamValue::Str(text.to_string()),
        };
        self.check(&v)
    }
}

/// A parameter value.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl ParamValue {
    /// What the value is, for error messages (`the integer 12`, `the string "x"`).
    pub fn describe(&self) -> String {
        match self {
            ParamValue::Bool(b) => format!("the boolean {b}"),
            ParamValue::Int(x) => format!("the integer {x}"),
            ParamValue::Float(x) => format!("the float {x}"),
            ParamValue::Str(s) => format!("the string {s:?}"),
        }
    }
}

impl fmt::Display for ParamValue {
    /// The value as written on the command line (floats in Rust's shortest round-trip form).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Int(x) => write!(f, "{x}"),
            ParamValue::Float(x) => write!(f, "{x:?}"),
            ParamValue::Str(s) => write!(f, "{s}"),
        }
    }
}

/// One declared parameter of a policy.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    /// Key in `[policy.<name>]` and on the command line (`fleet.D=3`).
    pub name: String,
    pub kind: ParamKind,
    /// The papers' value (checked against `kind` by the contract tests).
    pub default: ParamValue,
    /// Unit (`pages`, `s`, `MiB`; empty when dimensionless).
    pub unit: &'static str,
    /// One-line description.
    pub about: &'static str,
    /// Where the default comes from, e.g. "Fleet §5.3.1, artifact value D=2".
    pub source: &'static str,
}

impl ParamSpec {
    fn new(name: &str, kind: ParamKind, default: ParamValue) -> Self {
        Self {
            name: name.to_string(),
            kind,
            default,
            unit: "",
            about: "",
            source: "",
        }
    }
    pub fn bool(name: &str, default: bool) -> Self {
        Self::new(name, ParamKind::Bool, ParamValue::Bool(default))
    }
    pub fn int(name: &str, default: i64, min: i64, max: i64) -> Self {
        Self::new(name, ParamKind::Int { min, max }, ParamValue::Int(default))
    }
    pub fn float(name: &str, default: f64, min: f64, max: f64) -> Self {
        Self::new(name, ParamKind::Float { min, max }, ParamValue::Float(default))
    }
    pub fn string(name: &str, default: &str) -> Self {
        Self::new(name, ParamKind::Str, ParamValue::Str(default.to_string()))
    }
    pub fn one_of(name: &str, default: &'static str, names: &[&'static str]) -> Self {
        Self::new(
            name,
            ParamKind::Enum(names.to_vec()),
            ParamValue::Str(default.to_string()),
        )
    }
    pub fn unit(mut self, unit: &'static str) -> Self {
        self.unit = unit;
        self
    }
    pub fn about(mut self, about: &'static str) -> Self {
        self.about = about;
        self
    }
    pub fn source(mut self, source: &'static str) -> Self {
        self.source = source;
        self
    }
}

/// A value that does not fit a policy's parameter table: `key` (as given), what was expected
/// and what was given. `Display` is one line.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamError {
    pub key: String,
    pub expected: String,
    pub got: String,
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "key {}: expected {}, got {}",
            self.key, self.expected, self.got
        )
    }
}

impl std::error::Error for ParamError {}

/// The resolved parameters of one policy for one run: every declared parameter with its value,
/// in declaration order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Params {
    entries: Vec<(ParamSpec, ParamValue)>,
}

impl Params {
    /// All defaults of `specs`.
    pub fn defaults(specs: &[ParamSpec]) -> Self {
        Self {
            entries: specs.iter().map(|s| (s.clone(), s.default.clone())).collect(),
        }
    }

    /// `(name, value)` of every parameter, in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ParamValue)> {
        self.entries.iter().map(|(s, v)| (s.name.as_str(), v))
    }

    /// `(name, value)` of the parameters whose value is not the default.
    pub fn non_default(&self) -> impl Iterator<Item = (&str, &ParamValue)> {
        self.entries
            .iter()
            .filter(|(s, v)| s.default != *v)
            .map(|(s, v)| (s.name.as_str(), v))
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value of `name`, if declared.
    pub fn get(&self, name: &str) -> Option<&ParamValue> {
        self.entries.iter().find(|(s, _)| s.name == name).map(|(_, v)| v)
    }

    /// `policy` followed by its non-default values: `fleet(D=3,T=0.5)`, or just `fleet`.
    pub fn label(&self, policy: &str) -> String {
        let nd: Vec<String> = self.non_default().map(|(k, v)| format!("{k}={v}")).collect();
        if nd.is_empty() {
            policy.to_string()
        } else {
            format!("{policy}({})", nd.join(","))
        }
    }

    /// These parameters without `name` (a composed policy's part switch `enabled` is not a
    /// parameter of the part itself).
    pub fn without(&self, name: &str) -> Params {
        Params {
            entries: self
                .entries
                .iter()
                .filter(|(s, _)| s.name != name)
                .cloned()
                .collect(),
        }
    }

    /// Whether two tables hold the same values under the same names, whatever their order,
    /// descriptions or defaults: what a run reads from them.
    pub fn same_values(&self, other: &Params) -> bool {
        fn sorted(p: &Params) -> Vec<(&str, &ParamValue)> {
            let mut v: Vec<(&str, &ParamValue)> = p.iter().collect();
            v.sort_by(|a, b| a.0.cmp(b.0));
            v
        }
        sorted(self) == sorted(other)
    }

    /// The parameters under `prefix.` with the prefix removed (a composed policy hands each part
    /// its own table).
    pub fn sub(&self, prefix: &str) -> Params {
        let p = format!("{prefix}.");
        Params {
            entries: self
                .entries
                .iter()
                .filter_map(|(s, v)| {
                    let name = s.name.strip_prefix(&p)?;
                    let mut s = s.clone();
                    s.name = name.to_string();
                    Some((s, v.clone()))
                })
                .collect(),
        }
    }

    fn value(&self, name: &str) -> &ParamValue {
        // A policy reading a parameter it did not declare is a bug in the policy, not bad input.
        self.get(name)
            .unwrap_or_else(|| panic!("policy reads undeclared parameter `{name}`"))
    }

    /// Typed accessors for a policy's `build`; they panic only when the policy reads a parameter
    /// it did not declare with that type (a programming error: resolution checked the input).
    pub fn bool(&self, name: &str) -> bool {
        match self.value(name) {
            ParamValue::Bool(b) => *b,
            v => panic!("parameter `{name}` is {}, not a bool", v.describe()),
        }
    }
    pub fn int(&self, name: &str) -> i64 {
        match self.value(name) {
            ParamValue::Int(x) => *x,
            v => panic!("parameter `{name}` is {}, not an int", v.describe()),
        }
    }
    pub fn float(&self, name: &str) -> f64 {
        match self.value(name) {
            ParamValue::Float(x) => *x,
            v => panic!("parameter `{name}` is {}, not a float", v.describe()),
        }
    }
    /// A float parameter in seconds (`*_s`) as simulated nanoseconds (rounded).
    pub fn secs(&self, name: &str) -> engine::Nanos {
        (self.float(name) * engine::NS_PER_SEC as f64).round() as engine::Nanos
    }
    pub fn str(&self, name: &str) -> &str {
        match self.value(name) {
            ParamValue::Str(s) => s,
            v => panic!("parameter `{name}` is {}, not a string", v.describe()),
        }
    }
}

/// Checks `given` (key, value; later entries override earlier ones) against `specs` and fills
/// in the defaults. `policy` names the policy in the unknown-key message.
pub fn resolve(
    policy: &str,
    specs: &[ParamSpec],
    given: &[(String, ParamValue)],
) -> Result<Params, ParamError> {
    let mut p = Params::defaults(specs);
    for (key, v) in given {
        p.set(policy, key, v)?;
    }
    Ok(p)
}

/// Parses command-line text for `key` against `specs` (`--param policy.key=text`).
pub fn parse_text(
    policy: &str,
    specs: &[ParamSpec],
    key: &str,
    text: &str,
) -> Result<ParamValue, ParamError> {
    let spec = find(policy, specs, key)?;
    spec.kind.parse_text(text).map_err(|expected| ParamError {
        key: key.to_string(),
        expected,
        got: format!("{text:?}"),
    })
}

fn find<'a>(policy: &str, specs: &'a [ParamSpec], key: &str) -> Result<&'a ParamSpec, ParamError> {
    specs.iter().find(|s| s.name == key).ok_or_else(|| ParamError {
        key: key.to_string(),
        expected: if specs.is_empty() {
            format!("no parameters (policy {policy} has none)")
        } else {
            let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
            format!("a parameter of policy {policy} ({})", names.join(", "))
        },
        got: format!("unknown key {key:?}"),
    })
}

impl Params {
    fn set(&mut self, policy: &str, key: &str, v: &ParamValue) -> Result<(), ParamError> {
        let Some(i) = self.entries.iter().position(|(s, _)| s.name == key) else {
            let specs: Vec<ParamSpec> = self.entries.iter().map(|(s, _)| s.clone()).collect();
            return Err(find(policy, &specs, key).expect_err("key is not declared"));
        };
        let e = &mut self.entries[i];
        e.1 = e.0.kind.check(v).map_err(|expected| ParamError {
            key: key.to_string(),
            expected,
            got: v.describe(),
        })?;
        Ok(())
    }
}

/// One line per parameter for `hotlaunch list`: `D  int 1..=8  default 2 pages  — what (source)`.
pub fn describe(specs: &[ParamSpec]) -> Vec<String> {
    specs
        .iter()
        .map(|s| {
            let unit = if s.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", s.unit)
            };
            let src = if s.source.is_empty() {
                String::new()
            } else {
                format!(" [{}]", s.source)
            };
            format!(
                "{} ({}, {}; default {}{unit}): {}{src}",
                s.name,
                s.kind.type_name(),
                s.kind.expected(),
                s.default,
                s.about
            )
        })
        .collect()
}
