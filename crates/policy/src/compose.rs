//! Composition: one policy assembled from other policies' parts, seam by seam (the `unified`
//! policy will be). Each [`PolicyParts`] declares the seams it *claims* ([`Seams`], like MMTk's
//! `PlanConstraints`): the hooks it supplies for a claimed seam are its own, for the others it
//! leaves the stock default. [`compose`] takes every claimed seam from the part that claims it,
//! checks BEFORE anything runs that no exclusive seam is claimed twice (an error naming both
//! parts and the seam), chains the framework lifecycle hooks of every part that claims them (all
//! called, in part order, [`ChainedFramework`]) and fills unclaimed seams with stock defaults.
//!
//! Composition is generic over the boxed hook objects of [`PolicyParts`]: it moves boxes, it
//! never implements a layer's hook trait itself, except the framework chain (marked below), so a
//! hook method added to a trait later cannot be silently dropped by a forwarding impl here.
//!
//! Shrinkers chain like framework hooks: every claiming part's shrinkers are registered, in part
//! order (Linux runs every registered shrinker).

use crate::params::{ParamSpec, ParamValue, Params};
use crate::{Policy, PolicyParts, SwapOverrides};
use device::DeviceProfile;
use engine::Stall;
use framework::sim::{AppView, LaunchKind, PolicyKernel};
use framework::FrameworkHooks;
use kernel::hooks::KernelHooks;
use kernel::types::PageIdx;

/// A set of stack seams a policy part claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Seams(u16);

impl Seams {
    pub const NONE: Seams = Seams(0);
    /// The swap devices (`PolicyParts::backends`).
    pub const SWAP_BACKENDS: Seams = Seams(1 << 0);
    /// Kernel reclaim decisions (`KernelHooks::reclaim`).
    pub const RECLAIM: Seams = Seams(1 << 1);
    /// Kernel fault / readahead decisions (`KernelHooks::fault`).
    pub const FAULT: Seams = Seams(1 << 2);
    /// Physical frame placement (`KernelHooks::placement`).
    pub const PLACEMENT: Seams = Seams(1 << 3);
    /// Kernel shrinkers asked before the LRU walk (`KernelHooks::shrinkers`, chainable).
    pub const SHRINKER: Seams = Seams(1 << 4);
    /// Framework lifecycle hooks (chainable).
    pub const FRAMEWORK: Seams = Seams(1 << 5);
    /// Each app's managed-runtime (GC, barrier) hooks.
    pub const RUNTIME: Seams = Seams(1 << 6);
    /// Seams only one part may claim.
    pub const EXCLUSIVE: Seams =
        Seams(Self::SWAP_BACKENDS.0 | Self::RECLAIM.0 | Self::FAULT.0 | Self::PLACEMENT.0 | Self::RUNTIME.0);
    /// Every seam, with its name, in a fixed order.
    pub const ALL: [(Seams, &'static str); 7] = [
        (Self::SWAP_BACKENDS, "swap-backends"),
        (Self::RECLAIM, "reclaim"),
        (Self::FAULT, "fault"),
        (Self::PLACEMENT, "placement"),
        (Self::SHRINKER, "shrinker"),
        (Self::FRAMEWORK, "framework"),
        (Self::RUNTIME, "runtime"),
    ];

    /// Every seam.
    pub const EVERY: Seams = Seams(0x7f);

    pub const fn union(self, o: Seams) -> Seams {
        Seams(self.0 | o.0)
    }
    pub const fn intersection(self, o: Seams) -> Seams {
        Seams(self.0 & o.0)
    }
    pub const fn difference(self, o: Seams) -> Seams {
        Seams(self.0 & !o.0)
    }
    /// Whether every seam of `o` is in `self`.
    pub const fn contains(self, o: Seams) -> bool {
        self.0 & o.0 == o.0
    }
    pub const fn intersects(self, o: Seams) -> bool {
        self.0 & o.0 != 0
    }
    /// Names of the seams in the set (`reclaim`, `framework`, ...).
    pub fn names(self) -> Vec<&'static str> {
        Self::ALL
            .iter()
            .filter(|(s, _)| self.contains(*s))
            .map(|(_, n)| *n)
            .collect()
    }
}

impl std::ops::BitOr for Seams {
    type Output = Seams;
    fn bitor(self, o: Seams) -> Seams {
        self.union(o)
    }
}

/// Assembles policy `name` from `parts` (part name, its built parts), seam by seam; see the
/// module doc. Errors (one line) when two parts claim the same exclusive seam.
pub fn compose(name: &str, parts: Vec<(&str, PolicyParts)>) -> Result<PolicyParts, String> {
    for (seam, seam_name) in Seams::ALL {
        if !Seams::EXCLUSIVE.contains(seam) {
            continue;
        }
        let claimants: Vec<&str> = parts
            .iter()
            .filter(|(_, p)| p.claims.contains(seam))
            .map(|(n, _)| *n)
            .collect();
        if claimants.len() > 1 {
            return Err(format!(
                "policy {name}: parts `{}` and `{}` both claim the exclusive seam `{seam_name}`",
                claimants[0], claimants[1]
            ));
        }
    }
    let mut out = PolicyParts::stock(Vec::new());
    let mut kernel = KernelHooks::default();
    let mut frameworks: Vec<Box<dyn FrameworkHooks>> = Vec::new();
    for (_, p) in parts {
        let c = p.claims;
        out.claims = out.claims | c;
        if c.contains(Seams::SWAP_BACKENDS) {
            out.backends = p.backends;
        }
        // Field by field, so hooks a part does not claim are dropped and ones added to
        // `KernelHooks` later keep their stock default until a line is added here.
        let k = p.kernel_hooks;
        if c.contains(Seams::RECLAIM) {
            kernel.reclaim = k.reclaim;
        }
        if c.contains(Seams::FAULT) {
            kernel.fault = k.fault;
        }
        if c.contains(Seams::PLACEMENT) {
            kernel.placement = k.placement;
        }
        if c.contains(Seams::SHRINKER) {
            kernel.shrinkers.extend(k.shrinkers);
        }
        if c.contains(Seams::FRAMEWORK) {
            frameworks.push(p.framework_hooks);
        }
        if c.contains(Seams::RUNTIME) {
            out.runtime_hooks = p.runtime_hooks;
        }
    }
    out.kernel_hooks = kernel;
    out.framework_hooks = match frameworks.len() {
        0 => Box::new(framework::sim::StockFramework),
        1 => frameworks.pop().expect("one framework part"),
        _ => Box::new(ChainedFramework(frameworks)),
    };
    Ok(out)
}

/// Framework lifecycle hooks of several parts, all called in order (launch-start stalls add up).
///
/// The one hand-written forwarding impl of composition: every `FrameworkHooks` method must be
/// forwarded here, or the chained parts never see it. The contract test
/// `chained_framework_calls_every_part` calls every method and checks each part saw it.
pub struct ChainedFramework(pub Vec<Box<dyn FrameworkHooks>>);

impl FrameworkHooks for ChainedFramework {
    fn on_launch_start(&mut self, k: &mut PolicyKernel, app: &AppView, kind: LaunchKind) -> Stall {
        let mut total = Stall::ZERO;
        for h in &mut self.0 {
            total.add(h.on_launch_start(k, app, kind));
        }
        total
    }
    fn on_launch_end(&mut self, k: &mut PolicyKernel, app: &AppView, kind: LaunchKind, touched: &[PageIdx]) {
        self.0
            .iter_mut()
            .for_each(|h| h.on_launch_end(k, app, kind, touched));
    }
    fn on_foreground(&mut self, k: &mut PolicyKernel, app: &AppView) {
        self.0.iter_mut().for_each(|h| h.on_foreground(k, app));
    }
    fn on_background(&mut self, k: &mut PolicyKernel, app: &AppView) {
        self.0.iter_mut().for_each(|h| h.on_background(k, app));
    }
    fn on_transition_end(&mut self, k: &mut PolicyKernel, app: &AppView) {
        self.0.iter_mut().for_each(|h| h.on_transition_end(k, app));
    }
    fn on_killed(&mut self, k: &mut PolicyKernel, app: usize) {
        self.0.iter_mut().for_each(|h| h.on_killed(k, app));
    }
    fn on_timer(&mut self, k: &mut PolicyKernel, token: u64) {
        self.0.iter_mut().for_each(|h| h.on_timer(k, token));
    }
    fn metrics(&self, out: &mut std::collections::BTreeMap<String, f64>) {
        self.0.iter().for_each(|h| h.metrics(out));
    }
}

/// One part of a [`Composed`] policy: a policy and which of its claimed seams the composition
/// takes from it.
pub struct Part {
    pub policy: crate::PolicyBox,
    /// Seams taken from this part (an exclusive one claimed by another part too is an error).
    pub take: Seams,
    /// Seams taken from this part only when no earlier part supplied them (e.g. the stock swap
    /// devices every technique builds, or a reclaim hook that yields to an earlier part's).
    pub fallback: Seams,
    /// Whether the part can be switched with its boolean parameter `<part>.enabled` (ablations).
    pub optional: bool,
    /// The switch's default (an optional part may be off unless asked for).
    pub enabled_by_default: bool,
    /// Part parameters whose default the composition changes: (key, value, why).
    pub defaults: Vec<(&'static str, ParamValue, &'static str)>,
}

impl Part {
    /// Every seam the policy claims.
    pub fn all(policy: crate::PolicyBox) -> Self {
        Self::taking(policy, Seams::EVERY)
    }
    /// Only the seams in `take` (the part's other claims are released).
    pub fn taking(policy: crate::PolicyBox, take: Seams) -> Self {
        Part {
            policy,
            take,
            fallback: Seams::NONE,
            optional: false,
            enabled_by_default: true,
            defaults: Vec::new(),
        }
    }
    /// Also `fallback`, when no earlier part supplied those seams.
    pub fn or_else(mut self, fallback: Seams) -> Self {
        self.fallback = fallback;
        self
    }
    /// Can be switched off with `<part>.enabled = false`.
    pub fn optional(mut self) -> Self {
        self.optional = true;
        self
    }
    /// Give the part's parameter `key` another default inside this composition (`why` becomes
    /// its source). Panics on a key the part does not declare: a composition bug.
    pub fn default_param(mut self, key: &'static str, value: ParamValue, why: &'static str) -> Self {
        assert!(
            self.policy.params().iter().any(|s| s.name == key),
            "{} has no parameter {key}",
            self.policy.name()
        );
        self.defaults.push((key, value, why));
        self
    }
    /// Off unless `<part>.enabled = true`.
    pub fn off_by_default(mut self) -> Self {
        self.optional = true;
        self.enabled_by_default = false;
        self
    }
}

/// A policy made of other policies: each part is built with its own parameters (declared here
/// as `<part>.<key>`, e.g. `fleet.D`; an optional part also has `<part>.enabled`), its claims narrowed
/// to what the composition takes from it ([`Part`]), and the results are [`compose`]d in part
/// order. When no part supplies swap devices, the run gets stock zram.
pub struct Composed {
    pub name: &'static str,
    pub description: &'static str,
    pub parts: Vec<Part>,
}

impl Policy for Composed {
    fn name(&self) -> &'static str {
        self.name
    }

    fn description(&self) -> &'static str {
        self.description
    }

    fn params(&self) -> Vec<ParamSpec> {
        self.parts
            .iter()
            .flat_map(|part| {
                let prefix = part.policy.name();
                let on = part.optional.then(|| {
                    ParamSpec::bool("enabled", part.enabled_by_default)
                        .about("use this part (false: the ablation without it)")
                        .source("composition switch")
                });
                on.into_iter().chain(part.policy.params()).map(move |mut s| {
                    if let Some((_, v, why)) = part.defaults.iter().find(|d| d.0 == s.name) {
                        s.default = v.clone();
                        s.source = why;
                    }
                    s.name = format!("{prefix}.{}", s.name);
                    s
                })
            })
            .collect()
    }

    fn build(
        &self,
        device: &DeviceProfile,
        swap: SwapOverrides,
        params: &Params,
    ) -> Result<PolicyParts, String> {
        let mut built = Vec::with_capacity(self.parts.len());
        let mut supplied = Seams::NONE;
        for part in &self.parts {
            let name = part.policy.name();
            let sub = params.sub(name);
            if part.optional && !sub.bool("enabled") {
                continue;
            }
            let mut p = part.policy.build(device, swap, &sub)?;
            let wanted = part.take.union(part.fallback.difference(supplied));
            p.claims = p.claims.intersection(wanted);
            supplied = supplied.union(p.claims);
            built.push((name, p));
        }
        let mut out = compose(self.name, built)?;
        if !out.claims.contains(Seams::SWAP_BACKENDS) {
            out.backends = crate::android::stock_backends(device, swap, crate::SwapDevices::Zram)?;
        }
        Ok(out)
    }

    /// With no part switched on, the composition is stock Android (stock hooks, stock zram:
    /// `build` above). With one, it is that part's own policy when the composition takes every
    /// seam the part claims and the part brings its own swap devices: [`compose`] then moves the
    /// part's boxes over unchanged and fills only seams the part leaves stock with stock hooks
    /// (a policy's unclaimed hooks are stock by the [`PolicyParts::claims`] contract). The part's
    /// parameters are those it gets here (a changed default included), so a row of that policy
    /// with other values is not the same runs. Two parts or more: a policy of its own.
    fn runs_as(
        &self,
        device: &DeviceProfile,
        swap: SwapOverrides,
        params: &Params,
    ) -> Result<Option<(&'static str, Params)>, String> {
        let on: Vec<&Part> = self
            .parts
            .iter()
            .filter(|p| !p.optional || params.sub(p.policy.name()).bool("enabled"))
            .collect();
        match on.as_slice() {
            [] => Ok(Some((
                crate::android::Android { flash_swap: false }.name(),
                Params::default(),
            ))),
            [part] => {
                let sub = params.sub(part.policy.name()).without("enabled");
                let claims = part.policy.build(device, swap, &sub)?.claims;
                let whole =
                    part.take.union(part.fallback).contains(claims) && claims.contains(Seams::SWAP_BACKENDS);
                Ok(whole.then(|| (part.policy.name(), sub)))
            }
            _ => Ok(None),
        }
    }
}
