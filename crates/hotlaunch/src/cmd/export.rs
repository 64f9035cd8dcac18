//! `hotlaunch run … --perfetto FILE`: the run of `run`, also written as a Perfetto trace
//! (`hotlaunch::perfetto`). Kept apart from `run.rs` so that plain runs keep their path.

use super::run::{Args, LazyProgress};
use anyhow::Context;

pub fn run(args: Args) -> anyhow::Result<()> {
    let path = args.perfetto.clone().expect("called with --perfetto");
    report::check_writable_file(&path)
        .with_context(|| format!("--perfetto {}: cannot write there", path.display()))?;
    if let Some(p) = &args.json {
        report::check_writable_file(p)
            .with_context(|| format!("--json {}: cannot write there", p.display()))?;
    }
    if let Some(d) = &args.report {
        report::check_writable_dir(d)
            .with_context(|| format!("--report {}: cannot write there", d.display()))?;
    }
    let name = args.scenario.as_deref().unwrap_or("default");
    let (config, resolved) = match &args.rerun {
        Some(p) => hotlaunch::RunConfig::from_report(p)?,
        None => hotlaunch::RunConfig::load(name, args.seed, &args.policies, &args.params)?,
    };
    let plans = hotlaunch::plan_runs_with(&resolved, &config.policies, &config.params, &policy::by_name)?;
    let spec = hotlaunch::RunSpec::from_scenario(&resolved);
    let labels: Vec<String> = plans.iter().map(|p| p.label.clone()).collect();
    let mut progress = LazyProgress::new();
    let (report, events) = hotlaunch::simulate_events(&spec, &plans, hotlaunch::jobs(), true, |i, d, t| {
        progress.update(&labels[i], d, t)
    })?;
    progress.finish();
    let mut report = report;
    report.config = Some(config.to_json());
    report::print_summary(&report, &mut std::io::stdout())?;
    if let Some(p) = &args.json {
        report::write_json(&report, p).with_context(|| format!("writing {}", p.display()))?;
        println!("wrote {}", p.display());
    }
    if let Some(d) = &args.report {
        report::write_all(&report, d).with_context(|| format!("writing the report to {}", d.display()))?;
        println!("wrote {}", d.join("index.html").display());
    }
    hotlaunch::perfetto::write(&report, &events, &path)?;
    println!(
        "wrote {} (Perfetto trace: open it in ui.perfetto.dev)",
        path.display()
    );
    Ok(())
}
