//! `marvin`: Lebeck, Krishnamurthy, Levy, Zhang, "End the Senseless Killing: Improving Memory
//! Management for Mobile Operating Systems", USENIX ATC'20 (spec: `../shared/specs/marvin.md`,
//! artifact UWSysLab/marvin-art). Swapping moves from the kernel's pages to the runtime's objects.
//!
//! What is modelled, by the paper's names:
//! - **Object working-set estimation** (§6.1; [`runtime::MarvinRuntime::barrier`] and `on_mark`):
//!   app writes (and allocation) are recorded by the barrier (GC visits do not: the collector
//!   does not call the barrier); the artifact shifts a write bit into a 4-bit shift register per
//!   object at every full-heap GC. Full-heap walks are the WriteTask's collections, every 5 s in
//!   the foreground and 30 s in the background (first 6 s after start). Cold = not written in the
//!   last `cold_rounds` rounds (artifact `objectIsCold = wsr < 2 && !wrote`). The simulator
//!   keeps each object's last write interval instead of shifting every register (same answer,
//!   [`state::is_cold`]); read bits are not kept (the coldness test does not use them).
//! - **Stubs** (§5.1): in the background, at the stop-the-world compaction (stock ART's collector
//!   transition 5 s after going to the background, then after every 6 background mark-sweeps, i.e.
//!   every 7th background WriteTask), cold
//!   swappable objects of at least `stub_threshold` bytes are moved to the page-aligned
//!   swapped-in space (destination group 1, page alignment, never evacuated) and get the stub
//!   flag. The pause (one more heap walk to patch references, plus per-stub work) is charged to
//!   the app's main thread.
//! - **Ahead-of-time swap** (§3.2, §6.2; the WriteTask): at the end of each full walk, cold
//!   stubbed objects not saved yet (or dirty) are written to the app's swap file on flash with
//!   `madvise(WRITE_AHEAD)`: the kernel stores a clean copy on the flash swap device (its I/O cost
//!   model, flash writes and wear) and leaves the pages resident in the swap-cache state. A write
//!   to a saved object makes it dirty (the kernel drops the copy on the write) and it must be
//!   saved again before it can be reclaimed.
//! - **Reclamation table and runtime-driven reclaim** (§5.2, §6.2; [`kernel::TableShrinker`]):
//!   each app's table lists its stubbed objects and their pages. Under memory pressure the kernel
//!   asks its shrinkers; Marvin's walks background apps (victim order `victim_order`: the paper
//!   leaves it open), never the foreground app, and hands over the pages of clean saved objects.
//!   They have a clean copy, so the kernel only zaps each object's page range (no I/O; the
//!   shrinker's range seam, priced as the artifact's per-object `madvise(MADV_DONTNEED)`).
//! - **Object faults** (§6.2): an app access to a reclaimed object restores it: its pages are
//!   read back from the swap file on the accessing thread's critical path (the kernel's flash
//!   fault path); the copy stays in the swap file (swap cache), so it is clean again.
//! - **Bookmarking GC** (§6.3): stubbed objects are marked in `Bookmarked` mode — their references
//!   come from the stub, their pages are never touched, so the GC never faults a reclaimed object
//!   in. Freeing a stubbed object marks its swap-file record dead without reading it.
//! - **Eager restore** (§6.2): at a hot launch every reclaimed object of the app is read back in
//!   a stop-the-world pass before the first frame: the launch stalls for the slower of the flash's
//!   sequential read of those bytes and the runtime's `restore_mb_s` (§8.4: ~100 MB/s, software
//!   bound), and the pages are brought in (queued WILLNEED, kernel work); `eager_restore = false`
//!   leaves restores to object faults.
//! - **Swap-file compaction** (§6.3): when more than `compact_threshold` of the file is dead, the
//!   live records are copied (flash read + write at the device profile's rates, heap-task time).
//! - **Reclaim at the stub round** (§7, §8.2: "when an app transitions to the background and then
//!   periodically"; artifact `SwapObjectsOut` right after `CreateStubs`): with
//!   `reclaim_at_stub_round`, after a stub round's WriteTask every clean saved object is dropped
//!   at once (`madvise(PAGEOUT)` of swap-cached pages: an unmap, no I/O), before any pressure.
//!   Its cost is GC-thread time here (the prototype's is inside the stop-the-world pause).
//!   `marvin-8.2-reclaim` turns it off: there the kernel must ask (the shrinker) for the memory.
//! - **Swap files**: one flash swap device of `swap_files_mb` (8 GiB, an estimate: per-app files
//!   on `/data`, whose size the paper does not give) holds every app's file.
//! - **Interposition cost** (§5.3, §8.4): every app object access pays `barrier_ns` on the
//!   accessing thread and as app CPU; a reference store into a stubbed object pays it twice
//!   (stub update).
//! - **Kernel swap**: Marvin's kernel does not swap the Java heap (the runtime does); the LRU keeps
//!   anonymous pages resident ([`kernel::NoAnonSwap`]) and the only swap device is the flash swap
//!   file of the saved objects.
//!
//! Simplified: stubs cost no memory of their own (16 B + 4 B/ref each, small next to the ≥2 KiB
//! objects) and references are not patched object by object (the pause is charged instead);
//! saving starts once an object is stubbed (the artifact may save before); the per-app swap
//! files share one flash swap device whose slots of dead objects are freed when their pages are
//! (compaction is accounted, not re-laid out); the reclamation table has no entry limit.
//!
//! Parameters (defaults, sources in [`Marvin::params`]): `stub_threshold` 2048 B (§5.1,
//! `marvin_common.h`; Fleet's evaluation used 1024 B), `cold_rounds` 4 (§6.1), `fg_period_s` 5,
//! `bg_period_s` 30 (§8.4), `startup_delay_s` 6, `transition_wait_s` 5, `bg_walks_per_stub_round`
//! 6, `write_task_s` 1 (artifact), `compact_threshold` 0.25 (§6.3), `eager_restore` true (§6.2),
//! `restore_mb_s` 100 (§8.4), `reclaim_at_stub_round` true (§7, artifact), `swap_files_mb` 8192
//! (estimate), `victim_order` lru (not in the paper), `barrier_ns` 10 (§8.4 Fig. 9), `stub_ns` 200 and
//! `rte_scan_ns` 20 (estimates).

pub mod kernel;
pub mod runtime;
pub mod state;

use crate::android::stock_backends;
use crate::{ParamSpec, Params, Policy, PolicyParts, Seams, Shared, SwapDevices, SwapOverrides};
use ::kernel::hooks::KernelHooks;
use device::DeviceProfile;
use engine::Nanos;
use state::{AppTable, Global, VictimOrder};
use std::cell::RefCell;
use std::rc::Rc;

/// Resolved parameters, per run.
#[derive(Debug, Clone, Copy)]
pub struct Cfg {
    pub stub_threshold: u32,
    pub cold_rounds: u32,
    pub fg_period: Nanos,
    pub bg_period: Nanos,
    pub startup_delay: Nanos,
    pub transition_wait: Nanos,
    pub bg_walks_per_stub_round: u32,
    pub write_task_bytes: u64,
    pub compact_threshold: f64,
    pub barrier_ns: u64,
    pub stub_ns: u64,
    pub rte_scan_ns: u64,
    /// Drop the pages of clean saved stubbed objects right after a stub round (the prototype's
    /// madvise in the same stop-the-world pause), not only when the kernel asks.
    pub reclaim_at_stub_round: bool,
    /// Flash (read latency ns, read B/ns, write latency ns, write B/ns) of the device profile.
    pub flash: (f64, f64, f64, f64),
}

impl Cfg {
    /// Copying `bytes` of swap file: one sequential read and one write at the device's rates.
    pub fn flash_rw_ns(&self, bytes: u64) -> Nanos {
        let (rl, rbw, wl, wbw) = self.flash;
        (rl + bytes as f64 / rbw + wl + bytes as f64 / wbw) as Nanos
    }
}

/// The `marvin` policy.
pub struct Marvin;

impl Policy for Marvin {
    fn name(&self) -> &'static str {
        "marvin"
    }

    fn description(&self) -> &'static str {
        "Marvin (ATC'20): ahead-of-time object swap, stubs, bookmarking GC, runtime-driven reclamation"
    }

    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::int("stub_threshold", 2048, 1, 1 << 30)
                .unit("B")
                .about("smallest object that gets a stub and can be swapped")
                .source("Marvin §5.1; marvin-art marvin_common.h objectIsLarge (Fleet §7 used 1024 B)"),
            ParamSpec::int("cold_rounds", 4, 1, 5)
                .unit("rounds")
                .about("cold = not written in the current and the last cold_rounds-1 full-heap walks")
                .source("Marvin §6.1; marvin_common.h objectIsCold (wsr < 2 && !wrote)"),
            ParamSpec::float("fg_period_s", 5.0, 0.1, 86400.0)
                .unit("s")
                .about("full-heap walk (WriteTask) period in the foreground")
                .source("Marvin §8.4; marvin_swap.cc WRITE_TASK_FG_WAIT_TIME"),
            ParamSpec::float("bg_period_s", 30.0, 0.1, 86400.0)
                .unit("s")
                .about("full-heap walk (WriteTask) period in the background")
                .source("Marvin §8.4; marvin_swap.cc WRITE_TASK_BG_WAIT_TIME"),
            ParamSpec::float("startup_delay_s", 6.0, 0.0, 86400.0)
                .unit("s")
                .about("first WriteTask after the app starts")
                .source("marvin_swap.cc WRITE_TASK_STARTUP_DELAY"),
            ParamSpec::float("transition_wait_s", 5.0, 0.0, 86400.0)
                .unit("s")
                .about("background transition to the stop-the-world compaction that creates stubs")
                .source("ART kCollectorTransitionWait; marvin-art heap.cc"),
            ParamSpec::int("bg_walks_per_stub_round", 6, 1, 1000)
                .unit("walks")
                .about("background mark-sweeps before each stub-creating compaction (the next WriteTask compacts instead: every (n+1)-th background task; the count restarts in the foreground)")
                .source("marvin-art marvin_swap.cc scheduleNextTask: bgMarkSweepCounter >= BG_MARK_SWEEPS_BEFORE_SEMI_SPACE (6), reset by SetInForeground(true)"),
            ParamSpec::float("write_task_s", 1.0, 0.001, 3600.0)
                .unit("s")
                .about("longest WriteTask run (bytes saved per walk = this × flash write bandwidth)")
                .source("marvin_swap.cc WRITE_TASK_{FG,BG}_MAX_DURATION"),
            ParamSpec::float("compact_threshold", 0.25, 0.01, 1.0)
                .about("dead fraction of the swap file that triggers its compaction")
                .source("Marvin §6.3; marvin_swap.cc COMPACT_THRESHOLD"),
            ParamSpec::bool("eager_restore", true)
                .about("restore every reclaimed object when the app comes to the foreground")
                .source("Marvin §6.2; marvin_swap.cc SWAP_IN_ON_FOREGROUND"),
            ParamSpec::bool("reclaim_at_stub_round", true)
                .about("reclaim clean saved objects right after each stub round (background transition, then after every 6 background mark-sweeps)")
                .source("Marvin §7/§8.2: the prototype reclaims with madvise at the background transition and then periodically; marvin-art heap.cc SwapObjectsOut after CreateStubs"),
            ParamSpec::int("swap_files_mb", 8192, 1, 1 << 20)
                .unit("MB")
                .about("flash space for the per-app swap files (files on /data, not a swap partition)")
                .source("estimate: the paper gives no limit; a few GB of free /data on a 32 GB Pixel XL"),
            ParamSpec::float("restore_mb_s", 100.0, 0.1, 1e6)
                .unit("MB/s")
                .about("rate at which the runtime reads reclaimed objects back at a foreground transition")
                .source("Marvin §8.4: ~100 MB/s with libc++ file I/O (260 MB/s possible)"),
            ParamSpec::one_of("victim_order", "lru", &["lru", "largest"])
                .about("which background app the kernel reclaims from first")
                .source("not specified by the paper (§6.2); spec §1.7 suggests lmkd-like LRU"),
            ParamSpec::float("barrier_ns", 10.0, 0.0, 1e6)
                .unit("ns")
                .about("interposition cost of one app object access (stub check, access bits)")
                .source("Marvin §8.4 Fig. 9: +10% at 1% object accesses ≈ 10 instruction-times ≈ 10 ns"),
            ParamSpec::float("stub_ns", 200.0, 0.0, 1e9)
                .unit("ns")
                .about("stop-the-world work per stub created (stub + table entry, reference copy)")
                .source("estimate (durations not reported, spec §3)"),
            ParamSpec::float("rte_scan_ns", 20.0, 0.0, 1e9)
                .unit("ns")
                .about("policy CPU per reclamation-table entry scanned or rebuilt")
                .source("estimate"),
        ]
    }

    fn build(
        &self,
        device: &DeviceProfile,
        swap: SwapOverrides,
        params: &Params,
    ) -> Result<PolicyParts, String> {
        let f = &device.flash;
        let cfg = Cfg {
            stub_threshold: params.int("stub_threshold") as u32,
            cold_rounds: params.int("cold_rounds") as u32,
            fg_period: params.secs("fg_period_s"),
            bg_period: params.secs("bg_period_s"),
            startup_delay: params.secs("startup_delay_s"),
            transition_wait: params.secs("transition_wait_s"),
            bg_walks_per_stub_round: params.int("bg_walks_per_stub_round") as u32,
            write_task_bytes: (params.float("write_task_s") * f.write_bandwidth_mb_s * 1e6) as u64,
            compact_threshold: params.float("compact_threshold"),
            barrier_ns: params.float("barrier_ns").round() as u64,
            stub_ns: params.float("stub_ns").round() as u64,
            rte_scan_ns: params.float("rte_scan_ns").round() as u64,
            reclaim_at_stub_round: params.bool("reclaim_at_stub_round"),
            flash: (
                f.read_latency_us * 1e3,
                f.read_bandwidth_mb_s * 1e-3,
                f.write_latency_us * 1e3,
                f.write_bandwidth_mb_s * 1e-3,
            ),
        };
        let global = Shared::new(Global {
            apps: Vec::new(),
            order: match params.str("victim_order") {
                "largest" => VictimOrder::Largest,
                _ => VictimOrder::Lru,
            },
            eager_restore: params.bool("eager_restore"),
            rte_scan_ns: cfg.rte_scan_ns,
            retired: Default::default(),
            reclaims: Vec::new(),
            reclaimed_pages: 0,
            restores: Vec::new(),
            restore_rate: params.float("restore_mb_s") * 1e-3,
            flash_read: (cfg.flash.0, cfg.flash.1),
        });
        let g = global.clone();
        let factory: framework::RuntimeHooksFactory = Box::new(move |app| {
            let tab = Rc::new(RefCell::new(AppTable {
                foreground: true,
                ..AppTable::default()
            }));
            g.with(|s| s.attach(app, tab.clone()));
            Box::new(runtime::MarvinRuntime::new(tab, cfg))
        });
        Ok(PolicyParts {
            // The swap files of saved objects (flash, sized by `swap_files_mb`); no zram.
            backends: stock_backends(
                device,
                SwapOverrides {
                    flash_mb: Some(params.int("swap_files_mb") as u64),
                    ..swap
                },
                SwapDevices::Flash,
            )?,
            kernel_hooks: KernelHooks {
                reclaim: Box::new(kernel::NoAnonSwap),
                shrinkers: vec![Box::new(kernel::TableShrinker(global.clone()))],
                fault: Box::new(kernel::KeepCheckpoint),
                ..KernelHooks::default()
            },
            framework_hooks: Box::new(kernel::Lifecycle(global)),
            runtime_hooks: factory,
            claims: Seams::SWAP_BACKENDS
                | Seams::RECLAIM
                | Seams::FAULT
                | Seams::SHRINKER
                | Seams::FRAMEWORK
                | Seams::RUNTIME,
        })
    }
}
