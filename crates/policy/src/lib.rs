//! Memory-management policies (the hook map, with when each seam is called and a worked example,
//! is `crates/policy/README.md`). A policy is one module here that supplies the stack's hook
//! implementations (kernel reclaim/fault/placement hooks, framework lifecycle hooks, runtime GC and
//! barrier hooks) and the swap
//! devices it runs with; lower layers never know which policy runs.
//!
//! Shipped: [`android`] (`android`: LRU reclaim + zram, lmkd) and `android-swap` (the same plus a
//! flash swap partition behind zram). The research techniques come as further modules implementing
//! the same [`Policy`] trait: [`marvin`] (`marvin`, ATC'20: ahead-of-time object swap, stubs,
//! bookmarking GC, runtime-driven reclamation through a shrinker); Fleet, Ariadne, MemSaver and
//! regions to follow.
//!
//! **Parameters** ([`params`]): a policy declares its parameter table with [`Policy::params`]
//! (name, type, default, range, unit, description, source of the default). A scenario's
//! `[policy.<name>]` table, a variant's `[variants.params.<name>]` table and the command line's
//! `--param <name>.<key>=<value>` are checked against it by [`resolve_params`] before anything
//! runs, and [`Policy::build`] receives the resolved [`Params`]. `android` and `android-swap`
//! have no parameters.
//!
//! **Composition** ([`compose`]): every [`PolicyParts`] says which seams it claims
//! ([`PolicyParts::claims`], a [`Seams`] set); [`compose()`] assembles a policy from several
//! parts, taking each seam from the part that claims it, rejecting an exclusive seam (swap
//! devices, reclaim, fault, placement, runtime hooks) claimed twice, and chaining the
//! framework lifecycle hooks and the shrinkers of all parts in order. [`Composed`] is a [`Policy`] built that way
//! from other policies, their parameters namespaced `<part>.<key>`:
//!
//! ```ignore
//! let unified = Composed { name: "unified", description: "…",
//!     parts: vec![Box::new(Android { flash_swap: false }), Box::new(fleet::Fleet)] };
//! // `[policy.unified]` then takes `fleet.D = 3`.
//! ```

pub mod android;
pub mod compose;
pub mod marvin;
pub mod params;
pub mod shared;
#[doc(hidden)]
pub mod testing;

pub use compose::{compose, ChainedFramework, Composed, Seams};
pub use params::{ParamError, ParamKind, ParamSpec, ParamValue, Params};
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
    /// The seams whose hooks above are this policy's own (the others are stock defaults); what
    /// [`compose()`] takes from this part.
    pub claims: Seams,
}

impl PolicyParts {
    /// Stock hooks everywhere with these swap devices (claimed when there are any).
    pub fn stock(backends: Vec<Box<dyn SwapBackend>>) -> Self {
        let claims = if backends.is_empty() {
            Seams::NONE
        } else {
            Seams::SWAP_BACKENDS
        };
        Self {
            backends,
            kernel_hooks: KernelHooks::default(),
            framework_hooks: Box::new(framework::sim::StockFramework),
            runtime_hooks: framework::stock_runtime(),
            claims,
        }
    }
}

/// A memory-management policy.
pub trait Policy {
    /// The name used on the command line and in reports.
    fn name(&self) -> &'static str;
    /// One-line description with the paper it implements.
    fn description(&self) -> &'static str;
    /// The parameter table (default: none). Defaults are the papers' values with their source.
    fn params(&self) -> Vec<ParamSpec> {
        Vec::new()
    }
    /// Build the hooks and swap devices for `device` with `params` (resolved against
    /// [`Policy::params`] by [`resolve_params`]).
    fn build(
        &self,
        device: &DeviceProfile,
        swap: SwapOverrides,
        params: &Params,
    ) -> Result<PolicyParts, String>;
}

/// Checks `given` (key, value; later entries win) against `policy`'s parameter table and fills
/// in the defaults.
pub fn resolve_params(policy: &dyn Policy, given: &[(String, ParamValue)]) -> Result<Params, ParamError> {
    params::resolve(policy.name(), &policy.params(), given)
}

/// All policies available, in report order.
pub fn all() -> Vec<Box<dyn Policy>> {
    vec![
        Box::new(android::Android { flash_swap: false }),
        Box::new(android::Android { flash_swap: true }),
        Box::new(marvin::Marvin),
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
