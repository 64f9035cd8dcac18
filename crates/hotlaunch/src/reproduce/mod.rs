//! The papers' observations as automated checks: each runs a built-in scenario and reports the
//! paper's figure next to the simulated one with a stated tolerance, PASS or GAP. A GAP is a
//! finding to explain, never something to tune away.
//!
//! One module per check group (`hotlaunch reproduce <group>`): [`baseline`] holds the stock-Android
//! observations every paper starts from; each technique's group lives in the module named after
//! its paper and lists the rows of `../shared/specs/<paper>-checks.md`.

use crate::{plan_runs, run_policy, RunSpec};
use anyhow::Context;
use framework::sim::SimOutput;
use serde::Serialize;

mod ariadne;
mod baseline;
mod fleet;
mod ismm15;
mod marvin;
mod memsaver;

/// One check's outcome (the JSON shape `{"check", "paper", "simulated", "tolerance", "status"}`).
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub check: String,
    pub paper: String,
    pub simulated: String,
    pub tolerance: String,
    /// "PASS" or "GAP".
    pub status: String,
}

/// A check: runs its scenario(s) (`quick`: fewer repetitions) and compares with the paper.
pub type CheckFn = fn(bool) -> anyhow::Result<Check>;

/// A group's checks, each with its short name (the progress line).
pub type CheckList = Vec<(&'static str, CheckFn)>;

/// The check groups (`hotlaunch reproduce [GROUP]`), each with the function listing its checks.
type Group = (&'static str, fn() -> CheckList);
const REGISTRY: &[Group] = &[
    ("baseline", baseline::checks),
    ("fleet", fleet::checks),
    ("marvin", marvin::checks),
    ("ariadne", ariadne::checks),
    ("memsaver", memsaver::checks),
    ("ismm15", ismm15::checks),
];

/// Names of the check groups (`hotlaunch reproduce [GROUP]`).
pub const GROUPS: &[&str] = &["baseline", "fleet", "marvin", "ariadne", "memsaver", "ismm15"];

/// Other names a group answers to (`reproduce regions` = `ismm15`, the policy's name).
pub const ALIASES: &[(&str, &str)] = &[("regions", "ismm15")];

/// `hotlaunch reproduce all`: every group's checks in one table.
pub const ALL: &str = "all";

/// `regions = ismm15, ...` for help and error texts.
pub fn aliases_text() -> String {
    ALIASES
        .iter()
        .map(|(a, g)| format!("{a} = {g}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The paper each group reproduces (`reproduce all`'s per-paper summary).
pub const PAPERS: &[(&str, &str)] = &[
    (
        "baseline",
        "stock Android (the observations every paper starts from)",
    ),
    ("fleet", "Fleet (ASPLOS'24)"),
    ("marvin", "Marvin (ATC'20)"),
    ("ariadne", "Ariadne (HPCA'25)"),
    ("memsaver", "MemSaver (ICPE'24)"),
    ("ismm15", "region-based anti-fragmentation (ISMM'15)"),
];

/// The paper of `group` (the group's name if unknown).
pub fn paper_of(group: &str) -> &str {
    PAPERS.iter().find(|(g, _)| *g == group).map_or(group, |(_, p)| p)
}

/// One group's outcome in `reproduce all`.
#[derive(Debug, Clone, Serialize)]
pub struct GroupSummary {
    pub group: String,
    pub paper: String,
    pub pass: usize,
    pub gap: usize,
}

/// PASS/GAP counts per group.
pub fn summarize(groups: &[(String, Vec<Check>)]) -> Vec<GroupSummary> {
    groups
        .iter()
        .map(|(g, checks)| {
            let pass = checks.iter().filter(|c| c.status == "PASS").count();
            GroupSummary {
                group: g.clone(),
                paper: paper_of(g).to_string(),
                pass,
                gap: checks.len() - pass,
            }
        })
        .collect()
}

/// Every group's checks (`reproduce all`), all checks in parallel on [`crate::jobs`] threads;
/// groups in [`GROUPS`] order, each group's checks in its order, whatever the thread count.
pub fn run_all(quick: bool, progress: impl FnMut(CheckProgress) + Send) -> Vec<(String, Vec<Check>)> {
    let lists: Vec<(&str, CheckList)> = REGISTRY.iter().map(|(g, list)| (*g, list())).collect();
    let flat: Vec<(&str, &'static str, CheckFn)> = lists
        .iter()
        .flat_map(|(g, l)| l.iter().map(move |(n, f)| (*g, *n, *f)))
        .collect();
    let mut results = run_checks(
        &flat.iter().map(|(_, n, f)| (*n, *f)).collect::<Vec<_>>(),
        quick,
        progress,
    )
    .into_iter();
    lists
        .iter()
        .map(|(g, l)| (g.to_string(), results.by_ref().take(l.len()).collect()))
        .collect()
}

/// What a running group reports: a check starts, or ends after `wall_s` seconds having used
/// `cpu_s` of CPU (its thread's and its parallel variants'; rows that share a run wait for it:
/// wall without CPU).
#[derive(Debug, Clone, Copy)]
pub enum CheckProgress<'a> {
    Started(&'a str),
    Done { check: &'a str, wall_s: f64, cpu_s: f64 },
}

impl std::fmt::Display for CheckProgress<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Started(c) => write!(f, "running {c} ..."),
            Self::Done { check, wall_s, cpu_s } => {
                write!(f, "done {check} in {wall_s:.1} s ({cpu_s:.1} CPU-s)")
            }
        }
    }
}

/// Run `checks` in parallel; a check that cannot run is a GAP with its cause, not dropped.
fn run_checks(
    checks: &[(&'static str, CheckFn)],
    quick: bool,
    progress: impl FnMut(CheckProgress) + Send,
) -> Vec<Check> {
    let progress = std::sync::Mutex::new(progress);
    let report = |p: CheckProgress| (*progress.lock().unwrap_or_else(|e| e.into_inner()))(p);
    crate::par_map(checks.len(), crate::jobs(), |i| {
        let (name, f) = checks[i];
        report(CheckProgress::Started(name));
        let (wall, cpu) = (std::time::Instant::now(), crate::thread_cpu());
        let check = f(quick).unwrap_or_else(|e| Check {
            check: name.to_string(),
            paper: String::new(),
            simulated: format!("could not run: {e:#}"),
            tolerance: String::new(),
            status: status(false),
        });
        let workers = WORKER_CPU.with(|c| c.replace(std::time::Duration::ZERO));
        report(CheckProgress::Done {
            check: name,
            wall_s: wall.elapsed().as_secs_f64(),
            cpu_s: (crate::thread_cpu() - cpu + workers).as_secs_f64(),
        });
        check
    })
}

pub(crate) fn status(ok: bool) -> String {
    if ok { "PASS" } else { "GAP" }.to_string()
}

/// Run every variant of a built-in scenario; returns (label, output) pairs.
pub(crate) fn run_scenario(name: &str, quick: bool) -> anyhow::Result<Vec<(String, SimOutput)>> {
    run_loaded_scenario(builtin_scenario(name, quick)?)
}

/// Built-in scenario `name`, [`shrink`]-ed when `quick`.
fn builtin_scenario(name: &str, quick: bool) -> anyhow::Result<workload::scenario::Scenario> {
    let mut sc = workload::scenario::Scenario::builtin(name)?;
    if quick {
        shrink(&mut sc.workload);
    }
    Ok(sc)
}

/// Run every variant of an already loaded (and possibly edited) scenario, one after another.
pub(crate) fn run_loaded_scenario(
    sc: workload::scenario::Scenario,
) -> anyhow::Result<Vec<(String, SimOutput)>> {
    let (spec, plans) = scenario_runs(&sc)?;
    plans
        .iter()
        .map(|p| Ok((p.label.clone(), run_plan(&sc.name, &spec, p)?)))
        .collect()
}

/// Like [`run_scenario`], with the variants on parallel threads ([`crate::jobs`]): each run's
/// output is reduced by `f` on its own thread (an output holds its kernel, whose policy state is
/// single-threaded). Results in variant order whatever the thread count.
pub(crate) fn run_scenario_map<T: Send>(
    name: &str,
    quick: bool,
    f: impl Fn(&SimOutput) -> T + Sync,
) -> anyhow::Result<Vec<(String, T)>> {
    let sc = builtin_scenario(name, quick)?;
    let (spec, plans) = scenario_runs(&sc)?;
    let caller = std::thread::current().id();
    let runs = crate::par_map(plans.len(), crate::jobs(), |i| {
        let (p, t0) = (&plans[i], crate::thread_cpu());
        let r = run_plan(&sc.name, &spec, p).map(|out| (p.label.clone(), f(&out)));
        // Only runs on other threads: the caller's own CPU is counted by its clock.
        let other = std::thread::current().id() != caller;
        (
            r,
            if other {
                crate::thread_cpu() - t0
            } else {
                Default::default()
            },
        )
    });
    // The workers' CPU counts for the check that asked (its progress line).
    let cpu: std::time::Duration = runs.iter().map(|(_, t)| *t).sum();
    WORKER_CPU.with(|c| c.set(c.get() + cpu));
    runs.into_iter().map(|(r, _)| r).collect()
}

thread_local! {
    /// CPU of runs a check handed to other threads ([`run_scenario_map`]), for its progress line.
    static WORKER_CPU: std::cell::Cell<std::time::Duration> = const { std::cell::Cell::new(std::time::Duration::ZERO) };
}

/// The shared spec and the per-variant run plans of `sc`.
fn scenario_runs(sc: &workload::scenario::Scenario) -> anyhow::Result<(RunSpec, Vec<crate::RunPlan>)> {
    let r = sc.clone().resolve()?;
    Ok((RunSpec::from_scenario(&r), plan_runs(&r, &[])?))
}

/// One variant's run of scenario `name`.
fn run_plan(name: &str, spec: &RunSpec, p: &crate::RunPlan) -> anyhow::Result<SimOutput> {
    run_policy(&spec.for_plan(p), p.policy.as_ref(), &p.params, p.swap, |_, _| {})
        .with_context(|| format!("scenario {name}, run {}", p.label))
}

/// Like [`run_scenario`], but `each` gets every run's label and policy and a function running
/// the scenario with a policy of its choice (e.g. the policy wrapped in a probe).
/// The runs of built-in scenario `name`, one per variant, handed to `each` with a runner that
/// can adjust the run's spec first (e.g. a device knob). `quick`: [`shrink`], with LiveLab
/// launches capped at `quick_launches` instead of its default.
pub(crate) fn run_scenario_with(
    name: &str,
    quick: bool,
    quick_launches: Option<usize>,
    mut each: impl FnMut(&str, &dyn policy::Policy, &RunWith) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut sc = workload::scenario::Scenario::builtin(name)?;
    if quick {
        let full = match &sc.workload {
            workload::scenario::WorkloadSpec::LiveLab { launches, .. } => Some(*launches),
            _ => None,
        };
        shrink(&mut sc.workload);
        if let (workload::scenario::WorkloadSpec::LiveLab { launches, .. }, Some(q), Some(full)) =
            (&mut sc.workload, quick_launches, full)
        {
            *launches = q.min(full);
        }
    }
    let r = sc.resolve()?;
    let spec = RunSpec::from_scenario(&r);
    for p in &plan_runs(&r, &[])? {
        let run = |pol: &dyn policy::Policy, tweak: &dyn Fn(&mut RunSpec)| {
            let mut s = spec.for_plan(p).into_owned();
            tweak(&mut s);
            run_policy(&s, pol, &p.params, p.swap, |_, _| {})
                .with_context(|| format!("scenario {name}, run {}", p.label))
        };
        each(&p.label, p.policy.as_ref(), &run)?;
    }
    Ok(())
}

/// A runner of [`run_scenario_with`]: the policy, and a change to the run's spec.
pub(crate) type RunWith<'a> =
    dyn Fn(&dyn policy::Policy, &dyn Fn(&mut RunSpec)) -> anyhow::Result<SimOutput> + 'a;

/// Fewer repetitions for the smoke test (same structure); also `hotlaunch compare --quick`.
pub fn shrink(w: &mut workload::scenario::WorkloadSpec) {
    use workload::scenario::WorkloadSpec::*;
    match w {
        RelaunchAfter { repeats, .. } => *repeats = (*repeats).min(3),
        Script { repeat, .. } => *repeat = (*repeat).min(3),
        LiveLab { launches, .. } => *launches = (*launches).min(30),
        LaunchOneMore { rounds, params, .. } => {
            *rounds = (*rounds).min(1);
            params.use_s = params.use_s.min(20.0);
        }
        RoundRobin { rounds, .. } => *rounds = (*rounds).min(1),
    }
}

pub(crate) fn hist_ms(h: &hdrhistogram::Histogram<u64>, q: f64) -> f64 {
    if h.is_empty() {
        return f64::NAN;
    }
    h.value_at_quantile(q) as f64 / 1000.0
}

pub(crate) fn app_hot<'a>(out: &'a SimOutput, app: &str) -> Option<&'a hdrhistogram::Histogram<u64>> {
    out.per_app
        .iter()
        .find(|a| a.app.eq_ignore_ascii_case(app))
        .map(|a| &a.hot_us)
}

pub(crate) fn find<'a, T>(runs: &'a [(String, T)], label: &str) -> anyhow::Result<&'a T> {
    runs.iter()
        .find(|(l, _)| l == label)
        .map(|(_, o)| o)
        .with_context(|| format!("no run labelled {label}"))
}

/// Run the checks of `group`, independent checks in parallel on [`crate::jobs`] threads (each
/// check's scenarios one after another); results in the group's order whatever the thread
/// count. `quick` shrinks repetitions (for the test suite).
pub fn run_group(
    group: &str,
    quick: bool,
    progress: impl FnMut(CheckProgress) + Send,
) -> anyhow::Result<Vec<Check>> {
    let name = ALIASES
        .iter()
        .find(|(a, _)| *a == group)
        .map_or(group, |(_, g)| g);
    let Some((_, list)) = REGISTRY.iter().find(|(g, _)| *g == name) else {
        anyhow::bail!(
            "unknown check group `{group}`; known groups: {} (aliases: {})",
            GROUPS.join(", "),
            aliases_text()
        );
    };
    Ok(run_checks(&list(), quick, progress))
}

#[cfg(test)]
mod tests {
    #[test]
    fn groups_and_registry_agree() {
        let reg: Vec<&str> = super::REGISTRY.iter().map(|(g, _)| *g).collect();
        assert_eq!(reg, super::GROUPS);
        let papers: Vec<&str> = super::PAPERS.iter().map(|(g, _)| *g).collect();
        assert_eq!(papers, super::GROUPS, "every group names its paper");
        assert!(!super::GROUPS.contains(&super::ALL));
        for (a, g) in super::ALIASES {
            assert!(super::GROUPS.contains(g) && !super::GROUPS.contains(a) && *a != super::ALL);
        }
    }

    #[test]
    fn parallel_variants_give_the_sequential_runs() {
        // Two variants (no swap, a swap file) of a short scenario, shrunk.
        let name = "marvin-8.3-capacity";
        let seq: Vec<(String, u32, u64)> = super::run_scenario(name, true)
            .unwrap()
            .iter()
            .map(|(l, o)| (l.clone(), o.alive_peak, o.kernel.vmstat.pswpout))
            .collect();
        let par: Vec<(String, (u32, u64))> =
            super::run_scenario_map(name, true, |o| (o.alive_peak, o.kernel.vmstat.pswpout)).unwrap();
        assert_eq!(seq.len(), 2);
        let par: Vec<(String, u32, u64)> = par.into_iter().map(|(l, (a, p))| (l, a, p)).collect();
        assert_eq!(seq, par);
    }

    #[test]
    fn summary_counts_pass_and_gap_per_group() {
        let check = |status: &str| super::Check {
            check: "c".into(),
            paper: String::new(),
            simulated: String::new(),
            tolerance: String::new(),
            status: status.into(),
        };
        let groups = vec![
            (
                "fleet".to_string(),
                vec![check("PASS"), check("GAP"), check("PASS")],
            ),
            ("ismm15".to_string(), vec![]),
        ];
        let s = super::summarize(&groups);
        assert_eq!((s[0].pass, s[0].gap), (2, 1));
        assert_eq!(s[0].paper, "Fleet (ASPLOS'24)");
        assert_eq!((s[1].pass, s[1].gap), (0, 0));
    }
}
