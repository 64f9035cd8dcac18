#![allow(dead_code)] // each test crate uses part of it

//! Shared set-up of the kernel's integration tests: a small device that reaches memory pressure
//! quickly and a kernel on it.

use content::{ContentStore, SynthMix};
use device::DeviceProfile;
use engine::Actor;
use hotlaunch_kernel::hooks::KernelHooks;
use hotlaunch_kernel::mm::ContentSource;
use hotlaunch_kernel::swap::{FlashSwap, SwapBackend};
use hotlaunch_kernel::types::{PageIdx, PageKind, PageState, Pid};
use hotlaunch_kernel::Kernel;

/// A Pixel 3 cut to 96 MB of DRAM (56 MB for apps), so short sequences reach pressure.
pub fn small_device() -> DeviceProfile {
    let mut d = DeviceProfile::builtin("pixel3").unwrap();
    d.memory.dram_mb = 96;
    d.memory.kernel_reserve_mb = 32;
    d.memory.system_reserve_mb = 8;
    d.kernel.min_free_kbytes = Some(1024);
    // Per-app lruvecs (the tests exercise `lruvec_order`); `global_lru.rs` sets its own.
    d.android.per_app_memcg = Some(true);
    d
}

/// 64 synthetic page contents (seed 3).
pub fn contents() -> ContentStore {
    let mut c = ContentStore::new();
    c.append_synthetic(&SynthMix::default(), 64, 3);
    c
}

/// A kernel on [`small_device`] with [`contents`], the given swap devices and hooks.
pub fn kernel_with(backends: Vec<Box<dyn SwapBackend>>, hooks: KernelHooks) -> Kernel {
    Kernel::new(&small_device(), contents(), backends, hooks).unwrap()
}

/// One flash swap backend of `pages` slots.
pub fn flash(pages: u32) -> Vec<Box<dyn SwapBackend>> {
    vec![Box::new(FlashSwap::new(pages))]
}

/// Synthetic content of the test processes' pages.
pub const SRC: ContentSource = ContentSource {
    base: 0,
    len: 64,
    seed: 7,
};

/// Map and touch `pages` anonymous pages for a new process.
pub fn resident_proc(k: &mut Kernel, name: &str, adj: i16, pages: u32, now: &mut u64) -> (Pid, PageIdx) {
    let pid = k.spawn(name, adj, 2);
    let first = k.mmap(pid, pages, PageKind::NativeAnon, false, SRC).unwrap();
    *now += k
        .access_range(*now, Actor::AppMain(pid), first, pages, true)
        .unwrap()
        .ns;
    (pid, first)
}

/// The page's state.
pub fn state(k: &Kernel, idx: PageIdx) -> PageState {
    k.page(idx).unwrap().state
}
