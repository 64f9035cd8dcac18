//! The worked example of `crates/policy/README.md`: a toy policy written against the platform's
//! seams alone, run end to end. "Early page-out": `delay_s` after an app leaves the foreground,
//! page out its native heap unless it came back first; under pressure, reclaim scans the apps it
//! paged out before the others. One state (`Shared<State>`) serves its framework and kernel hooks.

use engine::{HookCx, Nanos, Stall, NS_PER_SEC};
use framework::sim::{AppView, LaunchKind, PolicyKernel};
use framework::FrameworkHooks;
use hotlaunch::{run_policy, RunSpec};
use kernel::hooks::{KernelHooks, ProcView, ReclaimHook, ScanControl};
use kernel::types::{Advice, PageIdx, Pid};
use policy::android::stock_backends;
use policy::{
    resolve_params, ParamSpec, ParamValue, Params, Policy, PolicyParts, Seams, Shared, SwapDevices,
    SwapOverrides,
};
use std::collections::{BTreeMap, BTreeSet};
use workload::scenario::{Scenario, WorkloadSpec};

/// What the policy knows, shared by its hooks.
#[derive(Default)]
struct State {
    delay: Nanos,
    /// Apps in the background: since when, and their native range `(pid, first, pages)`.
    background: BTreeMap<usize, (Nanos, Pid, PageIdx, u32)>,
    /// Processes this policy paged out.
    paged_out: BTreeSet<Pid>,
}

struct EarlyPageOut;

impl Policy for EarlyPageOut {
    fn name(&self) -> &'static str {
        "toy-early-pageout"
    }
    fn description(&self) -> &'static str {
        "toy: page out a background app's native heap after a delay"
    }
    fn params(&self) -> Vec<ParamSpec> {
        vec![ParamSpec::float("delay_s", 10.0, 0.0, 3600.0)
            .unit("s")
            .about("time in the background before the page-out")
            .source("toy value")]
    }
    fn build(
        &self,
        device: &device::DeviceProfile,
        swap: SwapOverrides,
        params: &Params,
    ) -> Result<PolicyParts, String> {
        let state = Shared::new(State {
            delay: (params.float("delay_s") * NS_PER_SEC as f64) as Nanos,
            ..State::default()
        });
        Ok(PolicyParts {
            backends: stock_backends(device, swap, SwapDevices::Zram)?,
            kernel_hooks: KernelHooks {
                reclaim: Box::new(PagedOutFirst(state.clone())),
                ..KernelHooks::default()
            },
            framework_hooks: Box::new(Lifecycle(state)),
            runtime_hooks: framework::stock_runtime(),
            claims: Seams::SWAP_BACKENDS | Seams::RECLAIM | Seams::FRAMEWORK,
        })
    }
}

/// Framework part: remembers when apps leave the foreground and pages them out on a timer.
struct Lifecycle(Shared<State>);

impl FrameworkHooks for Lifecycle {
    fn on_background(&mut self, k: &mut PolicyKernel, app: &AppView) {
        let now = k.now();
        let delay = self.0.with(|s| {
            s.background
                .insert(app.app, (now, app.pid, app.native_first, app.native_pages));
            s.delay
        });
        k.cx().schedule(now + delay, app.app as u64);
    }
    fn on_launch_start(&mut self, _k: &mut PolicyKernel, app: &AppView, _kind: LaunchKind) -> Stall {
        self.0.with(|s| s.background.remove(&app.app));
        Stall::ZERO
    }
    fn on_killed(&mut self, _k: &mut PolicyKernel, app: usize) {
        self.0.with(|s| s.background.remove(&app));
    }
    fn on_timer(&mut self, k: &mut PolicyKernel, token: u64) {
        let now = k.now();
        // Due only if the app is still in the background since at least `delay` ago.
        let due = self.0.with(|s| match s.background.get(&(token as usize)) {
            Some(&(since, pid, first, n)) if now >= since + s.delay => {
                s.paged_out.insert(pid);
                Some((first, n))
            }
            _ => None,
        });
        if let Some((first, n)) = due {
            k.cx().charge(2_000); // the policy's own bookkeeping
            k.madvise(first, n, Advice::PageOut); // queued; applied when the hook returns
        }
    }
}

/// Kernel part: reclaim visits the processes the policy paged out first.
struct PagedOutFirst(Shared<State>);

impl ReclaimHook for PagedOutFirst {
    fn lruvec_order(&mut self, _cx: &mut HookCx, _sc: &ScanControl, procs: &[ProcView], out: &mut Vec<Pid>) {
        self.0.with(|s| {
            out.extend(
                procs
                    .iter()
                    .filter(|p| s.paged_out.contains(&p.pid))
                    .map(|p| p.pid),
            );
            out.extend(
                procs
                    .iter()
                    .filter(|p| !s.paged_out.contains(&p.pid))
                    .map(|p| p.pid),
            );
        });
    }
}

fn run(delay_s: Option<f64>) -> report::model::PolicyResult {
    let mut sc = Scenario::builtin("default").unwrap();
    sc.seed = 11;
    if let WorkloadSpec::LiveLab { launches, .. } = &mut sc.workload {
        *launches = 30;
    }
    let r = sc.resolve().unwrap();
    let spec = RunSpec::from_scenario(&r);
    let given: Vec<(String, ParamValue)> = delay_s
        .map(|d| vec![("delay_s".to_string(), ParamValue::Float(d))])
        .unwrap_or_default();
    let params = resolve_params(&EarlyPageOut, &given).unwrap();
    let out = run_policy(&spec, &EarlyPageOut, &params, SwapOverrides::default(), |_, _| {}).unwrap();
    hotlaunch::policy_result(&params.label("toy"), &out)
}

#[test]
fn toy_policy_acts_through_the_seams_and_is_deterministic() {
    let p = run(None);
    assert!(p.launches.hot > 0);
    assert!(
        p.cpu_ms.by_category["policy"] > 0.0,
        "the policy's CPU is charged"
    );
    assert_eq!(p.integrity.checksum_mismatches, 0);
    assert_eq!(p.policy, "toy");
    assert_eq!(p, run(None), "same seed, same result");
    // With an hour's delay only the apps left in the background that long are paged out (on top of
    // the device's own cached-app compaction): fewer page-outs, and the label says which run it is.
    let late = run(Some(3600.0));
    assert_eq!(late.policy, "toy(delay_s=3600.0)");
    assert!(late.cpu_ms.by_category["policy"] < p.cpu_ms.by_category["policy"]);
    assert!(
        p.vmstat["madvise_pageout_pages"] > late.vmstat["madvise_pageout_pages"],
        "the timer's page-outs ran: {} vs {}",
        p.vmstat["madvise_pageout_pages"],
        late.vmstat["madvise_pageout_pages"]
    );
}
