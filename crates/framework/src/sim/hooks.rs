//! The policy's framework hooks: lifecycle callbacks and timers.
//!
//! Every hook receives the kernel's policy facade ([`PolicyKernel`]): the simulated time and the
//! acting thread (`k.now()`, `k.actor()`), CPU charging and timers (`k.cx()`), reads of pages,
//! processes and memory state, per-page policy state, and kernel operations (madvise, mlock,
//! compaction) that are queued and applied by the framework as soon as the hook returns — so a
//! hook never re-enters the kernel's hooks of the same policy (see `policy::Shared`).
//!
//! When each hook fires, in simulated time (`t` = the user's action or the event's time):
//!
//! | hook | fires at | acting thread | queued kernel work |
//! |---|---|---|---|
//! | [`FrameworkHooks::on_launch_start`] | `t` of a launch, before any launch work (cold: after the process exists, its mappings are made and the runtime is set up) | the app's main thread | applied before the launch's work; its stall and the returned stall are on the launch's critical path |
//! | [`FrameworkHooks::on_launch_end`] | the launch's first frame (its last launch-set access) | main thread | applied at once, off the launch path |
//! | [`FrameworkHooks::on_foreground`] | right after `on_launch_end` (the app is now the foreground app, adj 0) | main thread | applied at once |
//! | [`FrameworkHooks::on_background`] | `t` the app leaves the foreground (another launch or Home), after the runtime heard of it | kernel | applied at once |
//! | [`FrameworkHooks::on_transition_end`] | `t + SimConfig::transition` (5 s) if the app stayed in the background, after cached-app compaction | kernel | applied at once |
//! | [`FrameworkHooks::on_killed`] | when the framework learns of the death (lmkd poll, cached limit, OOM kill, user) | kernel | applied at once |
//! | [`FrameworkHooks::on_timer`] | the time asked for with `HookCx::schedule` by any of the policy's hooks (kernel, runtime or framework), or at once if in the past | kernel | applied at once |

use super::*;
pub use kernel::facade::PolicyKernel;

/// Whether a launch found the app's process alive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaunchKind {
    Hot,
    Cold,
}

/// Lifecycle callbacks for policies (MemSaver pages out at transition end, Fleet hints the
/// kernel when an app goes to the background, Marvin restores objects eagerly when a launch
/// starts, ...). Stock Android does nothing.
pub trait FrameworkHooks {
    /// A launch starts. The returned stall (e.g. restoring saved objects before the first frame) is
    /// added to the launch's critical path.
    fn on_launch_start(&mut self, _k: &mut PolicyKernel, _app: &AppView, _kind: LaunchKind) -> Stall {
        Stall::ZERO
    }
    /// A launch reached its first frame; `touched` are the pages its main thread touched (Java
    /// heap, native and file pages), in access order.
    fn on_launch_end(
        &mut self,
        _k: &mut PolicyKernel,
        _app: &AppView,
        _kind: LaunchKind,
        _touched: &[PageIdx],
    ) {
    }
    fn on_foreground(&mut self, _k: &mut PolicyKernel, _app: &AppView) {}
    fn on_background(&mut self, _k: &mut PolicyKernel, _app: &AppView) {}
    fn on_transition_end(&mut self, _k: &mut PolicyKernel, _app: &AppView) {}
    /// The app's process died (`app` is the scenario's app index; its memory is already freed).
    fn on_killed(&mut self, _k: &mut PolicyKernel, _app: usize) {}
    /// A timer the policy scheduled fired.
    fn on_timer(&mut self, _k: &mut PolicyKernel, _token: u64) {}
    /// At the end of a run: figures the policy reports about itself (name → value), copied into
    /// [`super::SimOutput::policy_metrics`] and the report. Stock: none.
    fn metrics(&self, _out: &mut BTreeMap<String, f64>) {}
}

/// Stock Android: no lifecycle hooks.
pub struct StockFramework;
impl FrameworkHooks for StockFramework {}

impl Simulation {
    /// Call one framework hook with the kernel facade at `now` on behalf of `actor`, then apply the
    /// kernel work it queued. Returns the hook's result and the stall of the queued work.
    pub(super) fn framework_hook<R>(
        &mut self,
        now: Nanos,
        actor: Actor,
        f: impl FnOnce(&mut dyn FrameworkHooks, &mut PolicyKernel) -> R,
    ) -> (R, Stall) {
        let r = f(self.hooks.as_mut(), &mut self.k.policy_kernel(now, actor));
        let stall = self.k.apply_policy_cmds();
        self.collect_oom_kills(now);
        (r, stall)
    }

    /// Turn the timers the policy's hooks asked for (kernel, facade and runtime) into events.
    pub(super) fn queue_timers(&mut self, now: Nanos) {
        for (at, token) in self.k.timers.drain() {
            self.q.push(at.max(now), Ev::PolicyTimer { token });
        }
    }
}
