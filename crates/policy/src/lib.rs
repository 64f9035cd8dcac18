//! Memory-management policies. A policy is one module here that supplies the stack's hook
//! implementations (kernel reclaim/fault/placement hooks, framework lifecycle hooks, runtime GC and
//! barrier hooks) and the swap
//! devices it runs with; lower layers never know which policy runs.
//!
//! Shipped: [`android`] (`android`: LRU reclaim + zram, lmkd) and `android-swap` (the same plus a
//! flash swap partition behind zram). The research techniques (Marvin, Fleet, Ariadne, MemSaver,
//! regions) come as further modules implementing the same [`Policy`] trait.

pub mod android;
pub mod shared;

pub use shared::Shared;

use device::DeviceProfile;
use framework::FrameworkHooks;
use kernel::hooks::KernelHooks;
use kernel::swap::SwapBackend;

/// Which swap devices a run gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwapDevices {
    None,
    Zram,
    Flash,
    /// zram first, then flash when zram is full (Linux swap priorities).
    ZramFlash,
}

/// What a scenario asks for (overrides of the policy's and the device profile's defaults).
#[derive(Debug, Clone, Copy, Default)]
pub struct SwapOverrides {
    /// Swap devices (`None`: the policy's default).
    pub devices: Option<SwapDevices>,
    /// zram disksize in MB (`None`: the device profile's `swap.zram_disksize_mb`).
    pub zram_mb: Option<u64>,
    /// Flash swap size in MB (`None`: the device profile's `swap.flash_swap_mb`).
    pub flash_mb: Option<u64>,
}

/// Everything a policy contributes to one run.
pub struct PolicyParts {
    pub backends: Vec<Box<dyn SwapBackend>>,
    pub kernel_hooks: KernelHooks,
    pub framework_hooks: Box<dyn FrameworkHooks>,
    /// Each app's managed-runtime hooks (stock ART: [`framework::stock_runtime`]).
    pub runtime_hooks: framework::RuntimeHooksFactory,
}

/// A memory-management policy.
pub trait Policy {
    /// The name used on the command line and in reports.
    fn name(&self) -> &'static str;
    /// One-line description with the paper it implements.
    fn description(&self) -> &'static str;
    /// Build the hooks and swap devices for `device`.
    fn build(&self, device: &DeviceProfile, swap: SwapOverrides) -> Result<PolicyParts, String>;
}

/// All policies available, in report order.
pub fn all() -> Vec<Box<dyn Policy>> {
    vec![
        Box::new(android::Android { flash_swap: false }),
        Box::new(android::Android { flash_swap: true }),
    ]
}

/// Names of all policies.
pub fn names() -> Vec<&'static str> {
    all().iter().map(|p| p.name()).collect()
}

/// The policy called `name`, or an error listing the known ones.
pub fn by_name(name: &str) -> Result<Box<dyn Policy>, String> {
    all()
        .into_iter()
        .find(|p| p.name() == name)
        .ok_or_else(|| format!("unknown policy `{name}`; known policies: {}", names().join(", ")))
}
