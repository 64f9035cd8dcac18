//! Android framework model for hotlaunch: the activity manager's app lifecycle, `oom_score_adj`,
//! lmkd, and launch latency.
//!
//! Lifecycle (MemSaver §3.1): not running → cold launch → foreground → background *transition*
//! (~5 s after leaving the foreground, the app still touches its transition working set B1) →
//! stable background (touches only B2, rarely) → hot launch → … or killed (by lmkd, the cached-app
//! limit or the kernel OOM killer). `oom_score_adj` follows ProcessList.java: foreground 0, the
//! previous app 700, cached apps 900..999 in LRU order ([`adj`]). When the transition ends (and
//! the device or scenario sets `android.ui_trim`) the
//! app's UI is hidden (`TRIM_MEMORY_UI_HIDDEN`): it frees its window buffers and trimmed GPU cache
//! (`AppModel::ui_pages`, gone, not swapped), which its next hot launch writes again.
//!
//! Launch latency is measured on the launching app's main thread: a cold launch is process
//! creation + app init (profile) + faulting in its start footprint and launch files; a hot launch is
//! the resume work (profile) + every stall on the main thread while it touches its launch set
//! (swap-ins, flash reads, direct reclaim). The launch ends at its first frame, i.e. at its last
//! launch-set access.
//!
//! A launch runs atomically in the event loop, so only the kernel OOM killer (or a failed
//! mapping) can end it before its first frame; lmkd polls and force-stops come between launches.
//! Work of the seconds a launch spans (background GCs, churn) then reaches the kernel after the
//! launch's later I/O: the flash queue orders requests by submission time for that reason
//! (kernel `swap.rs`, `FlashDevice`).
//! A hot launch killed that way is redone cold; a request that reaches no first frame is counted
//! as interrupted, so every launch request is exactly one hot, cold or interrupted launch.
//!
//! Each app's Java heap runs on the managed runtime (`runtime::JavaApp`): a cold launch allocates
//! its start footprint's objects through the runtime (GCs may run), foreground use grows it to the
//! steady footprint and allocates short-lived objects (sticky and full GCs at ART's triggers), a
//! hot launch allocates too (GC pauses land on the launch), leaving the foreground requests ART's
//! collector transition (a compacting GC 5 s later, which touches the whole heap — swapped pages
//! fault back in on the GC thread), and churn (Marvin's apps) runs in every state. The access
//! model's Java pages map to objects, so launch, foreground and background accesses touch the
//! pages where those objects currently are. Native and file pages stay page-level.
//!
//! Simplified: the always-running system (system_server, SurfaceFlinger, persistent services) is
//! one process holding the device's `memory.system_reserve_mb`: its `memory.system_file_mb` of
//! file pages (code, resources) are touched at boot and then reclaimable like any file page
//! (never touched again: a simplification), the rest is resident and unevictable; the
//! launcher is not modelled; a GC runs atomically at its start time (the GC thread's work does not
//! delay the main thread except through its flip pause, or the whole GC when it blocks an
//! allocation).
//!
//! Policies change behaviour through [`FrameworkHooks`] (lifecycle callbacks) and the kernel's
//! hook traits; the framework never knows which policy runs.

pub mod adj;
pub mod lmkd;
pub mod lowmemorykiller;
pub mod sim;

pub use sim::{
    stock_runtime, AccessSets, AppModel, FrameworkHooks, GcSummary, JavaModel, RuntimeHooksFactory,
    SimConfig, SimOutput, Simulation, StackHooks, UserAction,
};
