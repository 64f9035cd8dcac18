//! `hotlaunch run … --page-trace FILE`: the run of `run`, also writing the kernel's page-access
//! stream as a libCacheSim `oracleGeneral` trace (or CSV with `--page-trace-format csv`).
//!
//! Object ids are `app << 40 | mapping << 28 | offset` (`kernel::access_log`), times whole
//! simulated seconds, sizes 4096. Memory: the run holds 12 bytes per access while recording and
//! the oracle writer 8 more per access (the next-access pass), e.g. ~2 GB for 100 M accesses;
//! without the flag nothing is recorded (one branch per access).

use super::run::{load_scenario, Args, LazyProgress};
use anyhow::Context;

pub fn run(args: Args) -> anyhow::Result<()> {
    let path = args.page_trace.clone().expect("called with --page-trace");
    let format: trace::Format = args
        .page_trace_format
        .parse()
        .map_err(|e: String| anyhow::anyhow!("--page-trace-format: {e}"))?;
    report::check_writable_file(&path)
        .with_context(|| format!("--page-trace {}: cannot write there", path.display()))?;
    if let Some(p) = &args.json {
        report::check_writable_file(p)
            .with_context(|| format!("--json {}: cannot write there", p.display()))?;
    }
    if args.perfetto.is_some() || args.report.is_some() {
        anyhow::bail!("--page-trace records one run on its own: drop --perfetto and --report");
    }
    let name = args.scenario.as_deref().unwrap_or("default");
    let resolved = load_scenario(name, args.seed)?;
    let plans = hotlaunch::plan_runs_with(&resolved, &args.policies, &args.params, &policy::by_name)?;
    let [plan] = plans.as_slice() else {
        anyhow::bail!(
            "--page-trace records one run, but {} are planned ({}): pass one --policy",
            plans.len(),
            plans
                .iter()
                .map(|p| p.label.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    let spec = hotlaunch::RunSpec::from_scenario(&resolved);
    let mut progress = LazyProgress::new();
    let mut out = hotlaunch::run_policy_with(
        &spec.for_plan(plan),
        plan.policy.as_ref(),
        &plan.params,
        plan.swap,
        true,
        |d, t| progress.update(&plan.label, d, t),
    )
    .with_context(|| format!("run {}", plan.label))?;
    progress.finish();
    let mut result = hotlaunch::policy_result(&plan.label, &out);
    result.params = hotlaunch::params_json(&plan.params);
    let mut report = report::model::RunReport::new(spec.name.clone(), spec.device.name.clone(), spec.seed);
    report.simulated_seconds = (out.simulated as f64 / engine::NS_PER_SEC as f64 * 1000.0).round() / 1000.0;
    report.policies.push(result);
    report::print_summary(&report, &mut std::io::stdout())?;
    if let Some(p) = &args.json {
        report::write_json(&report, p).with_context(|| format!("writing {}", p.display()))?;
        println!("wrote {}", p.display());
    }
    let log = out.kernel.take_access_log().unwrap_or_default();
    let file = std::fs::File::create(&path).with_context(|| format!("writing {}", path.display()))?;
    match format {
        trace::Format::Oracle => trace::oracle::write_pages(&log.time_s, &log.obj_id, file),
        trace::Format::Csv => trace::csv::write_pages(&log.time_s, &log.obj_id, file),
    }
    .with_context(|| format!("writing {}", path.display()))?;
    println!(
        "wrote {} ({} page accesses of {} apps, {})",
        path.display(),
        log.len(),
        log.apps.len(),
        match format {
            trace::Format::Oracle => "libCacheSim oracleGeneral",
            trace::Format::Csv => "CSV time,obj_id,size",
        }
    );
    Ok(())
}
