//! Android framework model for hotlaunch: the activity manager's app lifecycle, `oom_score_adj`,
//! lmkd, and launch latency.
//!
//! Lifecycle (MemSaver §3.1): not running → cold launch → foreground → background *transition*
//! (~5 s after leaving the foreground, the app still touches its transition working set B1) →
//! stable background (touches only B2, rarely) → hot launch → … or killed (by lmkd, the cached-app
//! limit or the kernel OOM killer). `oom_score_adj` follows ProcessList.java: foreground 0, the
//! previous app 700, cached apps 900..999 in LRU order ([`adj`]).
//!
//! Launch latency is measured on the launching app's main thread: a cold launch is process
//! creation + app init (profile) + faulting in its start footprint and launch files; a hot launch is
//! the resume work (profile) + every stall on the main thread while it touches its launch set
//! (swap-ins, flash reads, direct reclaim). The launch ends at its first frame, i.e. at its last
//! launch-set access.
//!
//! Simplified: the always-running system (system_server, SurfaceFlinger, persistent services) is
//! one process holding the device's `memory.system_reserve_mb`, resident and unevictable; the
//! launcher is not modelled; apps' Java heaps are touched as pages (the managed runtime is not yet
//! wired into launches, so there are no GC pauses on the critical path).
//!
//! Policies change behaviour through [`FrameworkHooks`] (lifecycle callbacks) and the kernel's
//! hook traits; the framework never knows which policy runs.

pub mod adj;
pub mod lmkd;
pub mod sim;

pub use sim::{
    stock_runtime, AccessSets, AppModel, FrameworkHooks, GcSummary, JavaModel, RuntimeHooksFactory,
    SimConfig, SimOutput, Simulation, StackHooks, UserAction,
};
