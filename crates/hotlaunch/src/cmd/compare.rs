//! `hotlaunch compare SCENARIO`: every policy (or `--policies a,b,c`) on the same workload, each
//! with N seeds, in parallel on [`hotlaunch::jobs`] threads; means with Student t 95% intervals
//! and paired differences from `android` (see `report::stats`), as a terminal table,
//! `--json FILE` and the HTML dashboard (`--report DIR`, default `./hotlaunch-report`).
//!
//! **Seeds.** Seed 0 is the scenario's seed (`--seed` overrides it), so the first seed of every
//! policy is exactly `hotlaunch run SCENARIO --policy P`; seed i > 0 is SplitMix64 of
//! `base + i·0x9E3779B97F4A7C15` ([`derive_seed`]). Each seed regenerates the user's timeline, the
//! apps' page contents and access patterns; every policy sees the same seeds (paired design).
//!
//! **Variants.** A scenario's `[[variants]]` (own policy, swap and parameters) are kept: each runs
//! as an extra row under its name after the policies, so `compare fleet-3.1-instagram-swap` holds
//! the same runs as `run fleet-3.1-instagram-swap` plus every policy on the scenario as written.
//! A variant named like a policy row is labelled `<name> (variant)`.
//!
//! **Shared runs.** A row whose runs would be another row's exactly (the same policy once a
//! composition is resolved to the policy it builds, e.g. `unified` with only its MemSaver part on
//! is `memsaver`; the same parameter values and swap: [`hotlaunch::same_runs`]) is not run again:
//! it shows that row's per-seed results, stderr says so and the JSON's `config.shared_runs` maps
//! its label to the row it shares. Runs are deterministic, so the figures are the ones its own
//! runs would give (test `compare::a_shared_row_has_the_figures_of_its_own_runs`).
//!
//! Output does not depend on the thread count: every run builds its own state from its spec and
//! seed, and results are collected in (row, seed) order.

use anyhow::Context;
use hotlaunch::RunPlan;
use report::compare::{build, CompareMeta, RowInput, RunSample};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Scenario file or built-in name.
    pub scenario: String,
    /// Seeds per policy (default 5; 3 with --quick).
    #[arg(long)]
    pub seeds: Option<usize>,
    /// Base seed (default: the scenario's); the other seeds are derived from it.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Comma-separated policies to run (default: every policy, `hotlaunch list`).
    #[arg(long, value_delimiter = ',')]
    pub policies: Vec<String>,
    /// Policy parameter `<policy>.<key>=<value>` (repeat for several).
    #[arg(long = "param", value_name = "POLICY.KEY=VALUE")]
    pub params: Vec<String>,
    /// Write the comparison (every figure's mean, interval, per-seed values) as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Dashboard directory: index.html and compare.json (default: ./hotlaunch-report).
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Shrink the workload (as `reproduce --quick`) and default to 3 seeds: a smoke test.
    #[arg(long)]
    pub quick: bool,
    /// Also run `unified` with each of its part switches flipped (the dashboard's ablation table).
    #[arg(long)]
    pub ablation: bool,
}

/// Label of the row every difference is taken against (the first row when absent).
pub const BASELINE: &str = "android";

/// Seed `i` of a comparison whose base seed is `base` (seed 0 is `base` itself).
pub fn derive_seed(base: u64, i: usize) -> u64 {
    if i == 0 {
        return base;
    }
    // SplitMix64 (Steele, Lea, Flood, OOPSLA'14): a bijective mix, so distinct i give distinct
    // seeds and neighbouring bases do not give overlapping seed sets.
    let mut z = base.wrapping_add((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One row to run: its plan, policy name and whether it is a scenario variant.
struct Row {
    plan: RunPlan,
    policy: String,
    variant: bool,
}

/// The policies' rows, then the scenario's variants as extra rows. `--param` entries go to the
/// rows that run their policy (an entry no row runs is an error from the planner).
fn plan_rows(
    r: &workload::scenario::ResolvedScenario,
    policies: &[String],
    params: &[String],
) -> anyhow::Result<Vec<Row>> {
    let variant_policies: Vec<String> = r
        .variants
        .iter()
        .map(|v| {
            v.policy
                .clone()
                .or_else(|| r.policies.first().cloned())
                .unwrap_or_else(|| "android".into())
        })
        .collect();
    let target = |p: &String| p.split_once('.').map(|(n, _)| n.trim().to_string());
    let in_variants = |p: &String| target(p).is_some_and(|n| variant_policies.contains(&n));
    let in_policies = |p: &String| target(p).is_some_and(|n| policies.contains(&n));
    let for_policies: Vec<String> = params
        .iter()
        .filter(|p| in_policies(p) || !in_variants(p))
        .cloned()
        .collect();
    let for_variants: Vec<String> = params.iter().filter(|p| in_variants(p)).cloned().collect();
    let mut rows: Vec<Row> =
        hotlaunch::plan_policies_beside_variants(r, policies, &for_policies, &policy::by_name)?
            .into_iter()
            .zip(policies)
            .map(|(plan, name)| Row {
                plan,
                policy: name.clone(),
                variant: false,
            })
            .collect();
    if !r.variants.is_empty() {
        let plans = hotlaunch::plan_runs_with(r, &[], &for_variants, &policy::by_name)?;
        for (mut plan, name) in plans.into_iter().zip(variant_policies) {
            if rows.iter().any(|x| x.plan.label == plan.label) {
                plan.label = format!("{} (variant)", plan.label);
            }
            rows.push(Row {
                plan,
                policy: name,
                variant: true,
            });
        }
    }
    Ok(rows)
}

/// `unified` with each part switch (`<part>.enabled`) flipped from its default, one row each, with
/// the command line's other `unified.*` parameters.
fn unified_ablation_rows(
    r: &workload::scenario::ResolvedScenario,
    params: &[String],
) -> anyhow::Result<Vec<Row>> {
    let unified = policy::by_name("unified").map_err(anyhow::Error::msg)?;
    let base: Vec<String> = params
        .iter()
        .filter(|p| p.trim_start().starts_with("unified."))
        .cloned()
        .collect();
    let mut rows = Vec::new();
    for spec in unified.params().iter().filter(|s| s.name.ends_with(".enabled")) {
        let on = matches!(spec.default, policy::ParamValue::Bool(true));
        let mut p = base.clone();
        p.push(format!("unified.{}={}", spec.name, !on));
        let names = ["unified".to_string()];
        let plan = hotlaunch::plan_policies_beside_variants(r, &names, &p, &policy::by_name)?.remove(0);
        rows.push(Row {
            plan,
            policy: "unified".into(),
            variant: false,
        });
    }
    Ok(rows)
}

/// A progress bar over every run's actions, with an ETA; only on a terminal.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    done: Vec<u64>,
    total: Vec<u64>,
    finished: usize,
}

impl Progress {
    fn new(totals: Vec<u64>) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::new(totals.iter().sum());
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:40}] {percent:>3}% ETA {eta_precise} {msg}",
                )
                .expect("template")
                .progress_chars("=> "),
            );
            b
        });
        let n = totals.len();
        Progress {
            bar,
            done: vec![0; n],
            total: totals,
            finished: 0,
        }
    }

    fn update(&mut self, run: usize, done: u64, total: u64) {
        self.done[run] = done;
        self.total[run] = total;
        if let Some(b) = &self.bar {
            b.set_length(self.total.iter().sum());
            b.set_position(self.done.iter().sum());
        }
    }

    fn run_finished(&mut self) {
        self.finished += 1;
        if let Some(b) = &self.bar {
            b.set_message(format!("{}/{} runs", self.finished, self.total.len()));
        }
    }

    fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    // Output paths are checked before the runs: a typo must not cost the simulation.
    if let Some(path) = &args.json {
        report::check_writable_file(path)
            .with_context(|| format!("--json {}: cannot write there", path.display()))?;
    }
    let dir = args
        .report
        .clone()
        .unwrap_or_else(|| PathBuf::from("hotlaunch-report"));
    report::check_writable_dir(&dir)
        .with_context(|| format!("--report {}: cannot write there", dir.display()))?;
    let n_seeds = args.seeds.unwrap_or(if args.quick { 3 } else { 5 });
    if n_seeds == 0 {
        anyhow::bail!(
            "--seeds 0: expected at least 1 seed (5 gives 95% intervals of ±1.24 standard deviations)"
        );
    }

    let mut sc = workload::scenario::Scenario::resolve_name(&args.scenario)?;
    if args.quick {
        hotlaunch::reproduce::shrink(&mut sc.workload);
    }
    let base = args.seed.unwrap_or(sc.seed);
    let seeds: Vec<u64> = (0..n_seeds).map(|i| derive_seed(base, i)).collect();
    let resolved: Vec<workload::scenario::ResolvedScenario> = seeds
        .iter()
        .map(|&s| {
            let mut one = sc.clone();
            one.seed = s;
            one.resolve()
        })
        .collect::<Result<_, _>>()?;
    let specs: Vec<hotlaunch::RunSpec> = resolved.iter().map(hotlaunch::RunSpec::from_scenario).collect();

    let policies: Vec<String> = if args.policies.is_empty() {
        policy::names().into_iter().map(String::from).collect()
    } else {
        args.policies.iter().map(|p| p.trim().to_string()).collect()
    };
    let mut rows = plan_rows(&resolved[0], &policies, &args.params)?;
    if args.ablation {
        rows.extend(unified_ablation_rows(&resolved[0], &args.params)?);
    }
    for r in rows.iter().filter(|r| r.variant) {
        eprintln!(
            "scenario variant {:?} runs as an extra row (policy {})",
            r.plan.label, r.policy
        );
    }

    // A row whose runs are another row's (same policy once compositions are resolved, same
    // parameters and swap: `same_runs`) is not run again: it shows that row's results.
    let plans: Vec<&RunPlan> = rows.iter().map(|r| &r.plan).collect();
    let alias = hotlaunch::same_runs(&plans, &specs[0].device)?;
    let distinct: Vec<usize> = (0..rows.len()).filter(|&i| alias[i].is_none()).collect();
    let mut shared_runs = serde_json::Map::new();
    for (i, a) in alias.iter().enumerate() {
        if let Some(j) = *a {
            eprintln!(
                "row {:?} builds the same hooks, swap devices and parameters as row {:?}: it shares its runs",
                rows[i].plan.label, rows[j].plan.label
            );
            shared_runs.insert(rows[i].plan.label.clone(), rows[j].plan.label.clone().into());
        }
    }

    // Run k is distinct row k % nd, seed k / nd: the first results cover every row.
    let nd = distinct.len();
    let runs = nd * seeds.len();
    let totals: Vec<u64> = (0..runs).map(|k| specs[k / nd].actions.len() as u64).collect();
    let progress = Mutex::new(Progress::new(totals));
    let threads = hotlaunch::jobs();
    let left: Vec<std::sync::atomic::AtomicUsize> = seeds
        .iter()
        .map(|_| std::sync::atomic::AtomicUsize::new(nd))
        .collect();
    let (wall, cpu) = (Instant::now(), cpu_time::ProcessTime::now());
    // Longest rows first once their first seed has been timed (only the timing depends on it).
    let results = hotlaunch::par_map_lpt(
        runs,
        threads,
        |k| k % nd,
        |k| {
            let (row, seed) = (&rows[distinct[k % nd]], k / nd);
            let p = &row.plan;
            let out = hotlaunch::run_policy(&specs[seed], p.policy.as_ref(), &p.params, p.swap, |d, t| {
                progress.lock().unwrap_or_else(|e| e.into_inner()).update(k, d, t)
            })
            .with_context(|| format!("run {} with seed {}", p.label, seeds[seed]))?;
            let simulated = out.simulated as f64 / engine::NS_PER_SEC as f64;
            let sample = RunSample::of(&hotlaunch::policy_result(&p.label, &out));
            progress.lock().unwrap_or_else(|e| e.into_inner()).run_finished();
            // The seed's last run frees its shared heap blueprints (runs still going keep theirs).
            if left[seed].fetch_sub(1, std::sync::atomic::Ordering::AcqRel) == 1 {
                specs[seed].blueprints.clear();
            }
            Ok::<_, anyhow::Error>((simulated, sample))
        },
    );
    progress.lock().unwrap_or_else(|e| e.into_inner()).finish();
    let results: Vec<(f64, RunSample)> = results.into_iter().collect::<anyhow::Result<_>>()?;
    eprintln!(
        "compare: {runs} runs ({nd} rows x {} seeds; {} row(s) sharing them) in {:.1} s wall, {:.1} CPU-s, {threads} thread(s)",
        seeds.len(),
        rows.len() - nd,
        wall.elapsed().as_secs_f64(),
        cpu.elapsed().as_secs_f64()
    );

    let simulated_seconds = results.first().map_or(0.0, |r| r.0);
    let samples: Vec<RunSample> = results.into_iter().map(|r| r.1).collect();
    let inputs: Vec<RowInput> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let d = distinct
                .iter()
                .position(|&x| x == alias[i].unwrap_or(i))
                .expect("a row runs or shares a row that runs");
            RowInput {
                label: r.plan.label.clone(),
                policy: r.policy.clone(),
                variant: r.variant,
                params: hotlaunch::params_json(&r.plan.params),
                runs: (0..seeds.len()).map(|s| samples[s * nd + d].clone()).collect(),
            }
        })
        .collect();
    let baseline = inputs
        .iter()
        .find(|r| r.label == BASELINE)
        .or(inputs.first())
        .map_or_else(String::new, |r| r.label.clone());
    let mut report = build(
        CompareMeta {
            scenario: resolved[0].name.clone(),
            device: resolved[0].device.name.clone(),
            seeds,
            simulated_seconds,
            baseline,
        },
        inputs,
    );

    report.config = Some(compare_config(&args, &report.seeds, shared_runs)?);
    print!("{}", report::compare_text::compare_summary_string(&report));
    let json = report::compare::to_json_string(&report)?;
    if let Some(path) = &args.json {
        report::write_atomic(path, &json).with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("--report {}", dir.display()))?;
    report::write_atomic(&dir.join("compare.json"), &json)
        .with_context(|| format!("writing {}", dir.join("compare.json").display()))?;
    let html = dir.join("index.html");
    report::dashboard::write_dashboard(&report, &html)
        .with_context(|| format!("writing {}", html.display()))?;
    println!("wrote {}", html.display());
    Ok(())
}

/// The `config` block of the comparison: the run configuration of its first seed (scenario
/// text, device, apps, policies, parameters) and what `compare` adds (seeds, --quick, --ablation).
fn compare_config(
    args: &Args,
    seeds: &[u64],
    shared_runs: serde_json::Map<String, serde_json::Value>,
) -> anyhow::Result<serde_json::Value> {
    let (config, _) = hotlaunch::RunConfig::load(
        &args.scenario,
        seeds.first().copied(),
        &args.policies,
        &args.params,
    )?;
    let mut v = config.to_json();
    if let Some(m) = v.as_object_mut() {
        m.insert("command".into(), "compare".into());
        m.insert("seeds".into(), seeds.into());
        m.insert("quick".into(), args.quick.into());
        m.insert("ablation".into(), args.ablation.into());
        // Row label -> the row whose runs it shows (same hooks, swap and parameters).
        m.insert("shared_runs".into(), shared_runs.into());
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_start_at_the_base_and_are_distinct() {
        assert_eq!(derive_seed(7, 0), 7);
        let s: std::collections::BTreeSet<u64> = (0..100).map(|i| derive_seed(1, i)).collect();
        assert_eq!(s.len(), 100);
        assert_ne!(derive_seed(1, 1), derive_seed(2, 1));
    }
}
