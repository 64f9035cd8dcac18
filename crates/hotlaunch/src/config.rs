//! The configuration a run was asked for, recorded in its JSON report (`config`) so that the
//! result can be repeated from the report alone (`hotlaunch run --rerun REPORT.json`).
//!
//! What makes the run is the scenario's own TOML text (with the directory its relative device
//! and app paths resolve against), the seed, and the policies and `--param` entries named on the
//! command line. The resolved scenario (device parameters, app profiles, workload, variants,
//! policy tables) is recorded as well, for readers; it is derived from the above, so a re-run
//! does not read it back. The user timeline is left out: it follows from the workload and seed.

use anyhow::Context;
use serde::{Deserialize, Serialize};
use workload::scenario::{ResolvedScenario, Scenario};

/// A run's configuration (the report's `config` block).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunConfig {
    /// The scenario as the user named it: a built-in name or a file path.
    pub source: String,
    /// Directory relative device and app paths resolve against (scenario files only).
    pub base_dir: Option<String>,
    /// The scenario's TOML text as read.
    pub scenario_toml: String,
    /// The master seed used.
    pub seed: u64,
    /// Policies named on the command line (empty: the scenario's variants or policies).
    pub policies: Vec<String>,
    /// `--param` entries given on the command line.
    pub params: Vec<String>,
    /// hotlaunch version that made the run.
    pub version: String,
    /// The resolved scenario without its timeline (for readers; not read back).
    #[serde(default)]
    pub resolved: serde_json::Value,
}

impl RunConfig {
    /// Loads scenario `source` (built-in name or file) with an optional seed override.
    pub fn load(
        source: &str,
        seed: Option<u64>,
        policies: &[String],
        params: &[String],
    ) -> anyhow::Result<(RunConfig, ResolvedScenario)> {
        let sc = Scenario::resolve_name(source)?;
        let mut c = RunConfig {
            source: source.to_string(),
            // Absolute, so that a re-run from another directory finds the same files.
            base_dir: sc.base_dir.as_ref().map(|d| {
                let d = if d.as_os_str().is_empty() {
                    std::path::Path::new(".")
                } else {
                    d
                };
                std::fs::canonicalize(d)
                    .unwrap_or_else(|_| d.to_path_buf())
                    .display()
                    .to_string()
            }),
            scenario_toml: sc.text().to_string(),
            seed: seed.unwrap_or(sc.seed),
            policies: policies.to_vec(),
            params: params.to_vec(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            resolved: serde_json::Value::Null,
        };
        let r = c.resolve_scenario(sc)?;
        Ok((c, r))
    }

    /// The configuration recorded in a JSON report; refused when another version wrote it
    /// (the same configuration may give other figures there).
    pub fn from_report(path: &std::path::Path) -> anyhow::Result<(RunConfig, ResolvedScenario)> {
        let text = engine::fsio::read_capped_string(path, engine::fsio::FileKind::Report)
            .with_context(|| format!("--rerun {}", path.display()))?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("--rerun {}: line {}: {e}", path.display(), e.line()))?;
        let cfg = v.get("config").ok_or_else(|| {
            anyhow::anyhow!(
                "--rerun {}: key config: missing (not a run report?)",
                path.display()
            )
        })?;
        let c: RunConfig = serde_json::from_value(cfg.clone())
            .map_err(|e| anyhow::anyhow!("--rerun {}: key config: {e}", path.display()))?;
        if c.version != env!("CARGO_PKG_VERSION") {
            anyhow::bail!(
                "--rerun {}: key config.version: recorded by hotlaunch {}, this is {}",
                path.display(),
                c.version,
                env!("CARGO_PKG_VERSION")
            );
        }
        let mut sc = Scenario::from_toml_str(&c.scenario_toml, &origin_name(&c.source))?;
        sc.base_dir = c.base_dir.as_ref().map(std::path::PathBuf::from);
        let mut c = c;
        let r = c.resolve_scenario(sc)?;
        Ok((c, r))
    }

    fn resolve_scenario(&mut self, mut sc: Scenario) -> anyhow::Result<ResolvedScenario> {
        sc.seed = self.seed;
        let r = sc.resolve()?;
        let mut v = serde_json::to_value(&r)?;
        if let Some(m) = v.as_object_mut() {
            m.remove("timeline");
        }
        self.resolved = v;
        Ok(r)
    }

    /// The block as stored in a report.
    pub fn to_json(&self) -> serde_json::Value {
        // Plain strings, numbers and already-built values: serializing cannot fail.
        serde_json::to_value(self).expect("RunConfig serializes")
    }
}

/// The origin a scenario's errors name: its file as given, or `<name>.toml` for a built-in.
fn origin_name(source: &str) -> String {
    if workload::scenario::builtin_toml(source).is_some() {
        format!("{source}.toml")
    } else {
        source.to_string()
    }
}
