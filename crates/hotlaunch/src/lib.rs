//! hotlaunch as a library: the pure entry point `simulate(spec, policies) -> RunReport` that the
//! command line (and later the Python package) call.
//!
//! It assembles one run: page contents for every app (synthetic, with the app's compressibility
//! mix), the kernel with the policy's swap devices and hooks, the framework with the app models
//! and the user's actions, and turns what the simulation measured into the report model.

use anyhow::Context;
use apps::access::AccessModel;
use apps::AppProfile;
use content::ContentStore;
use device::DeviceProfile;
use engine::{ms, Nanos, RngStreams, NS_PER_MS, NS_PER_SEC};
use framework::sim::{AccessSets, AppModel, JavaModel, SimConfig, SimOutput, Simulation, UserAction};
use hdrhistogram::Histogram;
use kernel::Kernel;
use policy::{ParamValue, Params, Policy, SwapOverrides};
use rand::Rng;
use report::model::*;
use std::collections::BTreeMap;
use workload::scenario::ResolvedScenario;
use workload::user::Action;

/// Distinct content pages generated per app (pages of an app share this pool).
pub const CONTENTS_PER_APP: usize = 512;
/// Distinct content pages for all apps of a run together (256 MiB of page bytes): every app gets
/// [`CONTENTS_PER_APP`] up to 128 apps; beyond that the pools shrink (at least 16 pages each), so
/// a 1,000-app declaration does not hold 2 GB of page contents (issue 13).
pub const CONTENT_PAGES_TOTAL: usize = 65_536;

/// Content pool size of each app in a run of `apps` apps.
pub fn contents_per_app(apps: usize) -> usize {
    (CONTENT_PAGES_TOTAL / apps.max(1)).clamp(16, CONTENTS_PER_APP)
}

/// One fully resolved run: everything needed, nothing left to look up.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub name: String,
    pub seed: u64,
    pub device: DeviceProfile,
    pub apps: Vec<AppProfile>,
    pub actions: Vec<UserAction>,
    /// End of the run (ns).
    pub end: Nanos,
    pub sim: SimConfig,
    /// Generated heap blueprints, shared by this spec's clones and so by every run made from it
    /// ([`blueprints`]).
    pub blueprints: BlueprintCache,
}

impl RunSpec {
    /// The run of a resolved scenario (its timeline, device and apps).
    pub fn from_scenario(r: &ResolvedScenario) -> Self {
        let actions = r
            .timeline
            .events
            .iter()
            .map(|e| match e.action {
                Action::Launch { app, context } => UserAction::Launch {
                    at: e.at_ns,
                    app,
                    context,
                },
                Action::Home => UserAction::Home { at: e.at_ns },
                Action::Alloc { app, mb } => UserAction::Alloc {
                    at: e.at_ns,
                    app,
                    pages: (mb * 256.0).round() as u32,
                },
                Action::Kill { app } => UserAction::Kill { at: e.at_ns, app },
            })
            .collect();
        RunSpec {
            name: r.name.clone(),
            seed: r.seed,
            device: r.device.clone(),
            apps: r.apps.clone(),
            actions,
            end: r.timeline.end_ns,
            sim: {
                let mut cfg = sim_config(&r.device, r.seed);
                cfg.io_buffers = r.io_buffers.map(|b| framework::sim::IoBufferDemand {
                    per_launch: b.per_launch,
                    mb: b.mb,
                    live: b.live,
                    spread_s: b.spread_s,
                    home_window: b.home_window,
                });
                cfg
            },
            blueprints: BlueprintCache::default(),
        }
    }

    /// This spec with a cache of its own: its runs build their blueprints again (a benchmark
    /// that charges each run its whole cost).
    pub fn with_own_blueprints(&self) -> Self {
        Self {
            blueprints: BlueprintCache::default(),
            ..self.clone()
        }
    }
}

impl RunSpec {
    /// The spec one planned run uses: this one, or a copy with the variant's stock changes: an
    /// `all_in_dram` variant runs without cached-app compaction (its swap devices are already
    /// none), an `lmk_minfree` variant with those minfree thresholds.
    pub fn for_plan(&self, plan: &RunPlan) -> std::borrow::Cow<'_, RunSpec> {
        let no_compaction = plan.all_in_dram && self.sim.app_compaction;
        if !no_compaction && plan.lmk_minfree.is_none() {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut s = self.clone();
        if no_compaction {
            s.sim.app_compaction = false;
        }
        if let Some(m) = plan.lmk_minfree {
            for (slot, pages) in s.sim.lmkd.minfree.iter_mut().zip(m) {
                slot.1 = pages;
            }
        }
        std::borrow::Cow::Owned(s)
    }
}

/// Framework settings for `device` (its Android and kernel release's features).
pub fn sim_config(device: &DeviceProfile, seed: u64) -> SimConfig {
    SimConfig::for_device(device, seed)
}

/// `cpu.speed_factor` of the Pixel 3, the device app profiles' launch times are measured for
/// (crates/apps/README.md).
pub const LAUNCH_REFERENCE_SPEED_FACTOR: f64 = 2.5;

/// App launch work of a profile (`ms` on the Pixel 3) on `device`: × `speed_factor / 2.5`.
pub fn launch_work_ns(ms: f64, device: &DeviceProfile) -> Nanos {
    (ms * device.cpu.speed_factor / LAUNCH_REFERENCE_SPEED_FACTOR * NS_PER_MS as f64) as Nanos
}

/// The access model of one app, seen through the framework's trait. Built at the app's first
/// launch (checked before the run): most of a 1,000-app declaration is never launched (issue 13).
/// Building is seeded, so when it happens does not change results.
struct Access {
    profile: AppProfile,
    seed: u64,
    model: std::sync::OnceLock<AccessModel>,
}

impl Access {
    fn new(profile: &AppProfile, seed: u64) -> anyhow::Result<Self> {
        AccessModel::check(profile, &apps::AppLayout::from_profile(profile))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(Self {
            profile: profile.clone(),
            seed,
            model: std::sync::OnceLock::new(),
        })
    }

    fn model(&self) -> &AccessModel {
        self.model.get_or_init(|| {
            AccessModel::for_profile(&self.profile, self.seed)
                .expect("AccessModel::check passed before the run")
        })
    }

    fn model_mut(&mut self) -> &mut AccessModel {
        self.model();
        self.model.get_mut().expect("built just above")
    }
}

impl AccessSets for Access {
    fn contexts(&self) -> usize {
        // As `AccessModel::contexts`, without building the model.
        self.profile.contexts.len().max(1)
    }
    fn launch_set(&mut self, context: usize, n: u32) -> Vec<u32> {
        self.model_mut().launch_set(context, n as u64)
    }
    fn foreground_ws(&self) -> &[u32] {
        self.model().foreground_ws()
    }
    fn b1(&self, context: usize) -> &[u32] {
        self.model().b1(context)
    }
    fn b2(&self) -> &[u32] {
        self.model().b2()
    }
}

fn app_models(spec: &RunSpec, contents: &mut ContentStore) -> anyhow::Result<Vec<AppModel>> {
    let streams = RngStreams::new(spec.seed);
    let pool = contents_per_app(spec.apps.len());
    spec.apps
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let seed = streams.stream("app-access", i as u64).gen::<u64>();
            let access = Access::new(p, seed)?;
            let layout = apps::AppLayout::from_profile(p);
            let range = contents.append_synthetic(&p.synth_mix(), pool, seed ^ 0xC0_4E47);
            let steady = layout.anon_pages().max(1);
            Ok(AppModel {
                name: p.name.clone(),
                java_pages: layout.java_pages,
                native_pages: layout.native_pages,
                file_pages: layout.file_pages,
                start_anon_fraction: (p.anon_pages_start() as f64 / steady as f64).min(1.0),
                growth: (p.footprint.growth_seconds * NS_PER_SEC as f64) as Nanos,
                cold_init: launch_work_ns(p.launch.cold_launch_ms, &spec.device),
                hot_resume: launch_work_ns(p.launch.hot_launch_ms, &spec.device),
                threads: p.threads,
                content_base: range.start,
                content_len: range.end - range.start,
                access: Box::new(access),
                java: java_model(p, layout.java_pages, &spec.device, seed, &spec.blueprints)?,
                io_buffer_scale: p.io_buffer_scale,
                data_pages: p.writes.data_pages(),
                fg_write_pages_per_s: p.writes.fg_kb_per_s / 4.0,
                bg_write_pages_per_s: p.writes.bg_kb_per_s / 4.0,
                ui_pages: p.ui_hidden_pages(&spec.device),
            })
        })
        .collect()
}

/// The Java heap of app `p` with `java_pages` pages (see `apps::JavaSection`): its long-lived
/// objects, the device's `dalvik.vm.*` heap settings and the app's allocation behaviour.
pub fn java_model(
    p: &AppProfile,
    java_pages: u32,
    device: &DeviceProfile,
    seed: u64,
    blueprints: &BlueprintCache,
) -> anyhow::Result<JavaModel> {
    use runtime::gen::{GraphSpec, SizeDist, SyntheticSpec};
    let j = &p.java;
    let bytes = java_pages as u64 * 4096;
    // Generated heaps are recipes built at the app's first launch (`runtime::lazy`); a dump is
    // parsed now so that a bad one is reported before the run.
    let kind = j.heap.trim().to_ascii_lowercase();
    let synthetic = |mut s: SyntheticSpec| {
        s.footprint = bytes;
        blueprints.get_or_insert(&kind, bytes, 0, || {
            runtime::LazyBlueprint::new(move || s.blueprint())
        })
    };
    let mut config = runtime::HeapConfig::for_dram_mb(device.memory.dram_mb);
    if j.large_heap {
        config = config.large_heap();
    }
    // Growth multipliers: the app's `[java]` keys, else the device release's (ART defaults).
    let stock = device.stock();
    config.foreground_multiplier = j
        .foreground_heap_growth_multiplier
        .unwrap_or(stock.foreground_heap_growth_multiplier);
    config.background_multiplier = j
        .background_heap_growth_multiplier
        .unwrap_or(stock.background_heap_growth_multiplier);
    // Dalvik releases (Android <= 4.4) keep freed heap pages until the idle trim.
    config.trim_delay_ns = stock.heap_trim_delay_ms.map(|ms| ms * 1_000_000);
    let too_big = |total: u64| {
        anyhow::anyhow!(
            "app {}: its Java heap ({:.0} MiB) exceeds the growth limit ({} MiB); set java.large_heap = true \
             or lower footprint.java_heap_share",
            p.name,
            total as f64 / (1 << 20) as f64,
            config.growth_limit >> 20
        )
    };
    // Checked before building: a generated heap is as large as asked, and building one of
    // gigabytes only to reject it costs the host that much memory.
    let dump = j.hprof_path().is_some();
    if !dump && bytes > config.growth_limit {
        return Err(too_big(bytes));
    }
    let blueprint = match kind.as_str() {
        "generated" => {
            let spec = GraphSpec {
                bytes,
                sizes: SizeDist::commercial_apps(),
                local_refs: runtime::bench::BENCH_LOCAL_REFS,
                shared_refs: runtime::bench::BENCH_SHARED_REFS,
                ..GraphSpec::default()
            };
            blueprints.get_or_insert(&kind, bytes, seed, || {
                runtime::LazyBlueprint::new(move || {
                    spec.blueprint(&mut RngStreams::new(seed).stream("java-heap", 0))
                })
            })
        }
        "fleet-512" => synthetic(SyntheticSpec::idle_uniform(512)),
        "fleet-2048" => synthetic(SyntheticSpec::idle_uniform(2048)),
        "marvin-4k" => synthetic(SyntheticSpec::churning_4k_arrays()),
        "marvin-4k-1m" => synthetic(SyntheticSpec::churning_4k_1m_arrays()),
        "marvin-4076" => synthetic(SyntheticSpec::churning_4076_arrays()),
        "marvin-4076-1m" => synthetic(SyntheticSpec::churning_4076_1m_arrays()),
        _ => {
            let path = std::path::Path::new(j.heap.trim());
            let dump = runtime::hprof::parse_file(path)
                .with_context(|| format!("app {}: java.heap = {:?}", p.name, j.heap))?;
            let bp = dump.blueprint();
            if bp.total_bytes() > config.growth_limit {
                return Err(too_big(bp.total_bytes()));
            }
            bp.into()
        }
    };
    Ok(JavaModel {
        blueprint,
        config,
        params: runtime::JavaParams {
            fg_alloc_bytes_per_s: j.fg_alloc_mb_per_s * 1e6,
            bg_alloc_bytes_per_s: j.bg_alloc_mb_per_s * 1e6,
            launch_alloc_bytes: (j.launch_alloc_mb * 1e6) as u64,
            churn_bytes: (j.churn_mb * 1e6) as u64,
            churn_period: (j.churn_period_s * NS_PER_SEC as f64) as Nanos,
            churn_same: j.churn_same,
            linked: j.linked.map(|l| runtime::LinkedParams {
                share: l.share,
                object_bytes: l.object_bytes,
                fg_death_per_gc: l.fg_death_per_gc,
                bg_death_per_gc: l.bg_death_per_gc,
            }),
            launch_bias: j.launch_bias.map(|b| runtime::LaunchBias {
                near_root_share: b.near_root_share,
                near_root_depth: b.near_root_depth,
                young_share: b.young_share,
            }),
        },
    })
}

/// Run `spec` under one policy with its resolved `params` and return what the simulation
/// measured.
pub fn run_policy(
    spec: &RunSpec,
    policy: &dyn Policy,
    params: &Params,
    swap: SwapOverrides,
    progress: impl FnMut(u64, u64),
) -> anyhow::Result<SimOutput> {
    run_policy_with(spec, policy, params, swap, false, progress)
}

/// [`run_policy`], recording the kernel's page-access stream when `record_accesses` is set
/// (`kernel::access_log`; take it from the output's kernel with `take_access_log`).
pub fn run_policy_with(
    spec: &RunSpec,
    policy: &dyn Policy,
    params: &Params,
    swap: SwapOverrides,
    record_accesses: bool,
    progress: impl FnMut(u64, u64),
) -> anyhow::Result<SimOutput> {
    let parts = policy
        .build(&spec.device, swap, params)
        .map_err(anyhow::Error::msg)?;
    let mut contents = ContentStore::new();
    let models = app_models(spec, &mut contents)?;
    // Before the kernel's frames and any heap are built (the profiles' own checks, such as the
    // growth limit, come first: they name the exact mistake): refuse a run that cannot fit.
    membudget::check(spec, membudget::limit_mb().map_err(anyhow::Error::msg)?).map_err(anyhow::Error::msg)?;
    let mut k = Kernel::new(&spec.device, contents, parts.backends, parts.kernel_hooks)
        .with_context(|| format!("device {}", spec.device.name))?;
    if record_accesses {
        k.record_accesses();
    }
    let sim = Simulation::new(
        k,
        spec.device.clone(),
        spec.sim.clone(),
        models,
        spec.actions.clone(),
        spec.end,
        framework::StackHooks {
            framework: parts.framework_hooks,
            runtime: parts.runtime_hooks,
        },
    )
    .map_err(anyhow::Error::msg)?;
    Ok(sim.run(progress))
}

/// Run `spec` once per plan, in parallel on [`jobs`] threads (same results as one thread).
/// `progress(run_index, done, total)` reports progress.
pub fn simulate(
    spec: &RunSpec,
    runs: &[RunPlan],
    progress: impl FnMut(usize, u64, u64) + Send,
) -> anyhow::Result<RunReport> {
    simulate_on(spec, runs, jobs(), progress)
}

/// [`simulate`] on exactly `threads` worker threads.
pub fn simulate_on(
    spec: &RunSpec,
    runs: &[RunPlan],
    threads: usize,
    progress: impl FnMut(usize, u64, u64) + Send,
) -> anyhow::Result<RunReport> {
    Ok(simulate_events(spec, runs, threads, false, progress)?.0)
}

/// The event rows (launches, deaths) of one run's output.
pub fn run_events(label: &str, out: &SimOutput) -> report::events::RunEvents {
    let app = |i: u32| {
        out.per_app
            .get(i as usize)
            .map_or_else(String::new, |a| a.app.clone())
    };
    report::events::RunEvents {
        policy: label.to_string(),
        launches: out
            .launch_log
            .iter()
            .map(|l| report::events::LaunchRow {
                t_us: l.t / 1000,
                app: app(l.app),
                context: l.context,
                kind: if l.hot { "hot" } else { "cold" }.to_string(),
                latency_us: ((l.end - l.t) / 1000).max(1),
            })
            .collect(),
        kills: out
            .kill_log
            .iter()
            .map(|k| report::events::KillRow {
                t_us: k.t / 1000,
                app: app(k.app),
                reason: k.reason.to_string(),
            })
            .collect(),
        kswapd_runs: out
            .kernel
            .kswapd_runs()
            .iter()
            .map(|&(a, b)| [a / 1000, b / 1000])
            .collect(),
    }
}

/// [`simulate_on`], also returning each run's event rows when `events` is set (else empty rows).
pub fn simulate_events(
    spec: &RunSpec,
    runs: &[RunPlan],
    threads: usize,
    events: bool,
    progress: impl FnMut(usize, u64, u64) + Send,
) -> anyhow::Result<(RunReport, Vec<report::events::RunEvents>)> {
    let progress = std::sync::Mutex::new(progress);
    // A run's output holds its kernel (with the policy's single-threaded state): each worker
    // turns it into the report's result before handing it back.
    let results = par_map(runs.len(), threads, |i| {
        let r = &runs[i];
        let out = run_policy(&spec.for_plan(r), r.policy.as_ref(), &r.params, r.swap, |d, t| {
            (*progress.lock().unwrap_or_else(|e| e.into_inner()))(i, d, t)
        })
        .with_context(|| format!("run {}", r.label))?;
        let mut result = policy_result(&r.label, &out);
        result.params = params_json(&r.params);
        let ev = if events {
            run_events(&r.label, &out)
        } else {
            report::events::RunEvents::default()
        };
        Ok::<_, anyhow::Error>((round3(out.simulated as f64 / NS_PER_SEC as f64), result, ev))
    });
    let mut report = RunReport::new(spec.name.clone(), spec.device.name.clone(), spec.seed);
    let mut all = Vec::with_capacity(runs.len());
    for r in results {
        let (simulated, result, ev) = r?;
        report.simulated_seconds = simulated;
        report.policies.push(result);
        all.push(ev);
    }
    Ok((report, all))
}

pub mod blueprints;
mod parallel;
pub use blueprints::BlueprintCache;
pub use parallel::{jobs, par_map, par_map_lpt, thread_cpu};
pub mod membudget;
pub mod perfetto;
mod plan;
pub mod reproduce;
mod result;
pub use result::policy_result;
pub mod sweep;

pub mod config;
pub use config::RunConfig;
pub use plan::{plan_policies_beside_variants, plan_runs, plan_runs_with, same_runs, Lookup, RunPlan};

/// An error as one line: each cause in the chain appended unless the text so far already holds
/// it (nested errors often include their source in their own message). The CLI prints this
/// after `error: `; the Python package raises it.
pub fn error_line(e: &anyhow::Error) -> String {
    let mut msg = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !msg.contains(&c) {
            msg = format!("{msg}: {c}");
        }
    }
    msg
}

/// A policy's resolved parameters as JSON values, for the report.
pub fn params_json(p: &Params) -> BTreeMap<String, serde_json::Value> {
    p.iter()
        .map(|(k, v)| {
            let j = match v {
                ParamValue::Bool(b) => serde_json::Value::from(*b),
                ParamValue::Int(x) => serde_json::Value::from(*x),
                ParamValue::Float(x) => serde_json::Value::from(*x),
                ParamValue::Str(s) => serde_json::Value::from(s.as_str()),
            };
            (k.to_string(), j)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marvin_swap_file_variants_turn_the_lowmemorykiller_off() {
        // marvin-code enable-linux-swap.pl: minfree 0,0,0,0,0,0 with the swap file; the stock
        // variant keeps the Android 7.1 table.
        let r = workload::scenario::Scenario::builtin("marvin-8.3-capacity")
            .unwrap()
            .resolve()
            .unwrap();
        let spec = RunSpec::from_scenario(&r);
        let plans = plan::plan_runs(&r, &[]).unwrap();
        let minfree = |label: &str| {
            let p = plans.iter().find(|p| p.label == label).unwrap();
            spec.for_plan(p).sim.lmkd.minfree.clone()
        };
        assert!(minfree("swap-file").iter().all(|&(_, pages)| pages == 0));
        let stock = minfree("android");
        assert_eq!(stock, spec.sim.lmkd.minfree);
        assert!(stock.iter().all(|&(_, pages)| pages > 0));
        assert_eq!(spec.sim.lmkd.mode, framework::lmkd::LmkdMode::InKernel);
    }

    /// The Fleet evaluation scenarios run, like the artifact's builds, with lmkd's kill path off
    /// (and only lmkd's: the cached-process limit stays); the default day keeps lmkd killing.
    #[test]
    fn fleet_evaluation_scenarios_run_without_lmkd_kills() {
        let spec = |name: &str| {
            let r = workload::scenario::Scenario::builtin(name)
                .unwrap()
                .resolve()
                .unwrap();
            RunSpec::from_scenario(&r)
        };
        for name in [
            "fleet-7.1-capacity",
            "fleet-7.1-synthetic-512",
            "fleet-7.1-synthetic-2048",
            "fleet-7.1-commercial",
            "fleet-7.1-gc",
            "fleet-7.2-hotlaunch",
            "fleet-3.1-instagram-swap",
        ] {
            let s = spec(name);
            assert!(!s.sim.lmkd.kills, "{name}");
            assert_eq!(s.sim.lmkd.mode, framework::lmkd::LmkdMode::Psi, "{name}");
            assert_eq!(s.sim.max_cached, SimConfig::defaults(1).max_cached, "{name}");
        }
        assert!(spec("default").sim.lmkd.kills);
    }

    #[test]
    fn launch_work_scales_with_the_device_cpu() {
        // Profiles give Pixel 3 times (speed factor 2.5): the OnePlus 9 Pro (2.0) is 20% faster,
        // the Pixel XL (3.5) 40% slower.
        let d = |n: &str| DeviceProfile::builtin(n).unwrap();
        assert_eq!(launch_work_ns(100.0, &d("pixel3")), 100 * NS_PER_MS);
        assert_eq!(launch_work_ns(125.0, &d("oneplus9pro")), 100 * NS_PER_MS);
        assert_eq!(launch_work_ns(100.0, &d("pixelxl")), 140 * NS_PER_MS);
    }

    #[test]
    fn java_heap_takes_the_release_multiplier_unless_the_app_sets_one() {
        let mut p = AppProfile::builtin("Twitter").unwrap();
        let m = |p: &AppProfile, dev: &str| {
            let j = java_model(
                p,
                4096,
                &DeviceProfile::builtin(dev).unwrap(),
                1,
                &BlueprintCache::default(),
            )
            .unwrap();
            (j.config.foreground_multiplier, j.config.background_multiplier)
        };
        assert_eq!(m(&p, "pixel3"), (3.0, 1.0));
        assert_eq!(m(&p, "pixelxl"), (2.0, 1.0));
        p.java.foreground_heap_growth_multiplier = Some(1.5);
        p.java.background_heap_growth_multiplier = Some(1.1);
        assert_eq!(m(&p, "pixel3"), (1.5, 1.1));
    }
}
