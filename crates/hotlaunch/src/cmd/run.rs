//! `hotlaunch run [SCENARIO]`: run a scenario under one or more policies, print the summary
//! table, write JSON / CSV / HTML. (`hotlaunch compare` is in `compare.rs`.)

use anyhow::Context;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// Scenario file or built-in name (default: the built-in `default` scenario).
    pub scenario: Option<String>,
    /// Policy to run (repeat for several). Default: the scenario's variants or policies, else `android`.
    #[arg(long = "policy")]
    pub policies: Vec<String>,
    /// Policy parameter `<policy>.<key>=<value>` (repeat for several), e.g. `fleet.D=3`; applies
    /// to every run of that policy and overrides the scenario's `[policy.<name>]` tables.
    #[arg(long = "param", value_name = "POLICY.KEY=VALUE")]
    pub params: Vec<String>,
    /// Master seed (overrides the scenario's).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write the report (index.html, report.json, CSV time series) to this directory.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Also write the run as a Perfetto trace (Chrome JSON trace events) to this file.
    #[arg(long)]
    pub perfetto: Option<PathBuf>,
    /// Also write the run's page-access stream (every access the kernel sees) to this file as a
    /// libCacheSim trace (one policy only; see `hotlaunch-trace`).
    #[arg(long, value_name = "FILE")]
    pub page_trace: Option<PathBuf>,
    /// Format of `--page-trace`: `oracle` (libCacheSim oracleGeneral binary) or `csv`.
    #[arg(long, default_value = "oracle", value_name = "oracle|csv")]
    pub page_trace_format: String,
    /// Run again what a JSON report (`--json` or `report.json`) records in its `config` block:
    /// same scenario text, seed, policies and parameters (give no scenario, policy or seed).
    #[arg(long, value_name = "REPORT.json", conflicts_with_all = ["scenario", "policies", "params", "seed"])]
    pub rerun: Option<PathBuf>,
}

/// A progress bar that appears only after one second, and only on a terminal.
pub struct LazyProgress {
    start: Instant,
    bar: Option<indicatif::ProgressBar>,
    enabled: bool,
}

impl LazyProgress {
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
            bar: None,
            enabled: std::io::stderr().is_terminal(),
        }
    }

    pub fn update(&mut self, label: &str, done: u64, total: u64) {
        if !self.enabled {
            return;
        }
        if self.bar.is_none() && self.start.elapsed().as_secs_f64() > 1.0 {
            let bar = indicatif::ProgressBar::new(total);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:40}] {pos}/{len} actions {msg}",
                )
                .expect("template")
                .progress_chars("=> "),
            );
            self.bar = Some(bar);
        }
        if let Some(b) = &self.bar {
            b.set_length(total);
            b.set_position(done);
            b.set_message(label.to_string());
        }
    }

    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl Default for LazyProgress {
    fn default() -> Self {
        Self::new()
    }
}

/// Load and resolve a scenario (built-in name or file), with an optional seed override.
pub fn load_scenario(name: &str, seed: Option<u64>) -> anyhow::Result<workload::scenario::ResolvedScenario> {
    let mut sc = workload::scenario::Scenario::resolve_name(name)?;
    if let Some(s) = seed {
        sc.seed = s;
    }
    Ok(sc.resolve()?)
}

/// What to run: a scenario as named with overrides, or the configuration recorded in a report.
pub enum Source<'a> {
    Named {
        name: &'a str,
        seed: Option<u64>,
        policies: &'a [String],
        params: &'a [String],
    },
    Rerun(&'a std::path::Path),
}

impl Source<'_> {
    /// The run's configuration and its resolved scenario.
    pub fn load(&self) -> anyhow::Result<(hotlaunch::RunConfig, workload::scenario::ResolvedScenario)> {
        match self {
            Source::Named {
                name,
                seed,
                policies,
                params,
            } => hotlaunch::RunConfig::load(name, *seed, policies, params),
            Source::Rerun(p) => hotlaunch::RunConfig::from_report(p),
        }
    }
}

/// Run what `source` asks for and write the outputs asked for.
pub fn execute(
    source: Source,
    json: Option<&PathBuf>,
    report_dir: Option<&PathBuf>,
) -> anyhow::Result<report::model::RunReport> {
    // Output paths are checked before the run: a typo must not cost the simulation.
    if let Some(path) = json {
        report::check_writable_file(path)
            .with_context(|| format!("--json {}: cannot write there", path.display()))?;
    }
    if let Some(dir) = report_dir {
        report::check_writable_dir(dir)
            .with_context(|| format!("--report {}: cannot write there", dir.display()))?;
    }
    let (config, resolved) = source.load()?;
    let plans = hotlaunch::plan_runs_with(&resolved, &config.policies, &config.params, &policy::by_name)?;
    let spec = hotlaunch::RunSpec::from_scenario(&resolved);
    let labels: Vec<String> = plans.iter().map(|p| p.label.clone()).collect();
    let mut progress = LazyProgress::new();
    let mut report = hotlaunch::simulate(&spec, &plans, |i, d, t| progress.update(&labels[i], d, t))?;
    progress.finish();
    report.config = Some(config.to_json());
    report::print_summary(&report, &mut std::io::stdout())?;
    if let Some(path) = json {
        report::write_json(&report, path).with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    if let Some(dir) = report_dir {
        report::write_all(&report, dir)
            .with_context(|| format!("writing the report to {}", dir.display()))?;
        println!("wrote {}", dir.join("index.html").display());
    }
    Ok(report)
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.page_trace.is_some() {
        return super::page_trace::run(args);
    }
    if args.perfetto.is_some() {
        return super::export::run(args);
    }
    let source = match &args.rerun {
        Some(p) => Source::Rerun(p),
        None => Source::Named {
            name: args.scenario.as_deref().unwrap_or("default"),
            seed: args.seed,
            policies: &args.policies,
            params: &args.params,
        },
    };
    execute(source, args.json.as_ref(), args.report.as_ref())?;
    Ok(())
}

/// `hotlaunch` with no arguments: the default scenario, report in ./hotlaunch-report.
pub fn run_default() -> anyhow::Result<()> {
    let dir = PathBuf::from("hotlaunch-report");
    let source = Source::Named {
        name: "default",
        seed: None,
        policies: &[],
        params: &[],
    };
    execute(source, None, Some(&dir))?;
    Ok(())
}
