//! Memory-management policies (the hook map, with when each seam is called and a worked example,
//! is `crates/policy/README.md`). A policy is one module here that supplies the stack's hook
//! implementations (kernel reclaim/fault/placement hooks, framework lifecycle hooks, runtime GC and
//! barrier hooks) and the swap
//! devices it runs with; lower layers never know which policy runs.
//!
//! Shipped: [`android`] (`android`: LRU reclaim + zram, lmkd) and `android-swap` (the same plus a
//! flash swap partition behind zram). The research techniques, one module each implementing the
//! same [`Policy`] trait:
//! - [`fleet`] (`fleet`, Fleet ASPLOS'24): background-object GC with a card table and
//!   runtime-guided swap.
//! - [`marvin`] (`marvin`, Marvin ATC'20): ahead-of-time object swap, stubs, bookmarking GC,
//!   runtime-driven reclamation through a shrinker.
//! - [`ariadne`] (`ariadne`, Ariadne HPCA'25): hot/warm/cold lists, chunk size by hotness,
//!   pre-decompression, compressed writeback.
//! - [`memsaver`] (`memsaver`, MemSaver ICPE'24): per-context hot-launch pages + transition working
//!   set kept, the rest of a background app paged out at the end of its transition.
//! - [`regions`] (`regions`, ISMM'15 region-based allocation): region domains, special domains,
//!   domain compaction, through the placement seam.
//! - [`unified`] (`unified`): MemSaver (+ Fleet, Ariadne and regions, off by default) composed with [`Composed`]; its
//!   module doc says which part supplies which seam and why.
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
//! let c = Composed { name: "mine", description: "…",
//!     parts: vec![Part::all(Box::new(ariadne::Ariadne::default())),
//!                 Part::taking(Box::new(fleet::Fleet::default()), Seams::RUNTIME).optional()] };
//! // `[policy.mine]` then takes `fleet.D = 3` and `fleet.enabled = false`.
//! ```

pub mod android;
pub mod ariadne;
pub mod compose;
pub mod fleet;
pub mod marvin;
pub mod memsaver;
pub mod params;
pub mod regions;
pub mod shared;
#[doc(hidden)]
pub mod testing;
pub mod unified;

pub use compose::{compose, ChainedFramework, Composed, Part, Seams};
pub use params::{ParamError, ParamKind, ParamSpec, ParamValue, Params};
pub use shared::{Probe, Shared};

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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
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

/// A policy as the registry and run plans hold it: shareable between the worker threads that run
/// independent runs in parallel (a policy value is a recipe; the state it builds per run is
/// single-threaded). A policy carrying a probe (`Rc`) is still a [`Policy`], run directly.
pub type PolicyBox = Box<dyn Policy + Send + Sync>;

/// A registry entry for a policy type whose values may carry a single-threaded probe (an `Rc` the
/// caller reads after a run): the entry holds no value, only the type, and builds from
/// `P::default()` (no probe) on every call, so it is `Send + Sync` whatever `P` holds.
pub struct FromDefault<P>(std::marker::PhantomData<fn() -> P>);

impl<P> FromDefault<P> {
    pub fn new() -> Self {
        FromDefault(std::marker::PhantomData)
    }
}

impl<P> Default for FromDefault<P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P: Policy + Default> Policy for FromDefault<P> {
    fn name(&self) -> &'static str {
        P::default().name()
    }
    fn description(&self) -> &'static str {
        P::default().description()
    }
    fn params(&self) -> Vec<ParamSpec> {
        P::default().params()
    }
    fn build(
        &self,
        device: &DeviceProfile,
        swap: SwapOverrides,
        params: &Params,
    ) -> Result<PolicyParts, String> {
        P::default().build(device, swap, params)
    }
    fn runs_as(
        &self,
        device: &DeviceProfile,
        swap: SwapOverrides,
        params: &Params,
    ) -> Result<Option<(&'static str, Params)>, String> {
        P::default().runs_as(device, swap, params)
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

    /// Checks beyond each value's own range (e.g. one parameter against another), run when the
    /// runs are planned so a bad scenario fails before any run, naming its file and line:
    /// `Err((key, what was expected))`. Default: none.
    fn check_params(&self, _params: &Params) -> Result<(), (&'static str, String)> {
        Ok(())
    }

    /// When this policy with `params` builds exactly the hooks and swap devices of another
    /// registered policy (by name) with the parameters returned, on any device: that policy and
    /// its parameters, so callers can share the runs (`compare` does). A composition with a
    /// single part whose every seam it takes is that part, for instance. Default: `None` (a
    /// policy is only itself); an answer must be exact, never "close".
    fn runs_as(
        &self,
        _device: &DeviceProfile,
        _swap: SwapOverrides,
        _params: &Params,
    ) -> Result<Option<(&'static str, Params)>, String> {
        Ok(None)
    }
}

/// Checks `given` (key, value; later entries win) against `policy`'s parameter table and fills
/// in the defaults.
pub fn resolve_params(policy: &dyn Policy, given: &[(String, ParamValue)]) -> Result<Params, ParamError> {
    params::resolve(policy.name(), &policy.params(), given)
}

/// All policies available, in report order.
pub fn all() -> Vec<PolicyBox> {
    vec![
        Box::new(android::Android { flash_swap: false }),
        Box::new(android::Android { flash_swap: true }),
        Box::new(FromDefault::<fleet::Fleet>::new()),
        Box::new(marvin::Marvin),
        Box::new(ariadne::Ariadne::default()),
        Box::new(memsaver::MemSaver::default()),
        Box::new(regions::Regions),
        Box::new(unified::unified()),
    ]
}

/// Names of all policies.
pub fn names() -> Vec<&'static str> {
    all().iter().map(|p| p.name()).collect()
}

/// The policy called `name`, or an error listing the known ones.
pub fn by_name(name: &str) -> Result<PolicyBox, String> {
    all()
        .into_iter()
        .find(|p| p.name() == name)
        .ok_or_else(|| format!("unknown policy `{name}`; known policies: {}", names().join(", ")))
}
