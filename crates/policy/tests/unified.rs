//! `unified`: each seam comes from the part its module doc names, every part can be switched on or
//! off (Fleet, Ariadne and regions are off by default), and the swap devices and reclaim come from
//! the fallbacks when Ariadne is off.

use device::DeviceProfile;
use hotlaunch_policy::{resolve_params, ParamValue, Policy, Seams};

fn claims(off: &[&str]) -> (Seams, usize) {
    claims_with(off, &[])
}

/// `unified` with the parts in `off` switched off and those in `on` switched on, its resolved
/// parameters and the Pixel 3.
fn unified_with(
    off: &[&str],
    on: &[&str],
) -> (
    hotlaunch_policy::Composed,
    hotlaunch_policy::Params,
    DeviceProfile,
) {
    let u = hotlaunch_policy::unified::unified();
    let overrides: Vec<(String, ParamValue)> = off
        .iter()
        .map(|p| (format!("{p}.enabled"), ParamValue::Bool(false)))
        .chain(
            on.iter()
                .map(|p| (format!("{p}.enabled"), ParamValue::Bool(true))),
        )
        .collect();
    let p = resolve_params(&u, &overrides).unwrap();
    (u, p, DeviceProfile::builtin("pixel3").unwrap())
}

fn claims_with(off: &[&str], on: &[&str]) -> (Seams, usize) {
    let (u, p, device) = unified_with(off, on);
    let built = u.build(&device, Default::default(), &p).unwrap();
    (built.claims, built.backends.len())
}

#[test]
fn every_part_supplies_its_seams() {
    // Default (Fleet, Ariadne and regions off): MemSaver's framework hooks and its stock zram;
    // placement, reclaim, runtime and faults are stock.
    assert_eq!(claims(&[]), (Seams::SWAP_BACKENDS | Seams::FRAMEWORK, 1));
    // With regions: its placement too.
    let base = Seams::SWAP_BACKENDS | Seams::PLACEMENT | Seams::FRAMEWORK;
    assert_eq!(claims_with(&[], &["regions"]), (base, 1));
    // With Fleet: its runtime, and its reclaim as the fallback nobody else supplies.
    let (c, _) = claims_with(&[], &["fleet", "regions"]);
    assert_eq!(c, base | Seams::RUNTIME | Seams::RECLAIM);
    // With Ariadne too: its fault hook (PreDecomp); its reclaim and zram replace the fallbacks.
    let (c, backends) = claims_with(&[], &["ariadne", "fleet", "regions"]);
    assert_eq!(c, base | Seams::RUNTIME | Seams::RECLAIM | Seams::FAULT);
    assert!(backends >= 1);
}

#[test]
fn ablations_drop_exactly_their_parts_seams() {
    // Without regions (the default) placement is stock.
    assert!(!claims(&[]).0.contains(Seams::PLACEMENT));
    assert!(!claims_with(&["regions"], &[]).0.contains(Seams::PLACEMENT));
    // Fleet alone on top keeps the runtime; without it the runtime is stock.
    assert!(claims_with(&["memsaver"], &["fleet"]).0.contains(Seams::RUNTIME));
    assert!(!claims(&[]).0.contains(Seams::RUNTIME));
    // Everything off is stock Android (stock zram filled in).
    let (c, backends) = claims(&["memsaver"]);
    assert_eq!((c, backends), (Seams::NONE, 1));
}

#[test]
fn regions_take_no_region_effort_inside_unified_unless_asked() {
    let u = hotlaunch_policy::unified::unified();
    let p = resolve_params(&u, &[]).unwrap();
    assert!(!p.sub("regions").bool("region_effort"));
    let p = resolve_params(&u, &[("regions.region_effort".into(), ParamValue::Bool(true))]).unwrap();
    assert!(p.sub("regions").bool("region_effort"));
}

#[test]
fn parameters_are_namespaced_per_part() {
    let u = hotlaunch_policy::unified::unified();
    let names: Vec<String> = u.params().into_iter().map(|s| s.name).collect();
    for key in [
        "ariadne.enabled",
        "fleet.D",
        "memsaver.keep",
        "regions.order",
        "regions.enabled",
    ] {
        assert!(names.iter().any(|n| n == key), "{key} missing from {names:?}");
    }
    let e = resolve_params(&u, &[("fleet.nope".into(), ParamValue::Int(1))]).unwrap_err();
    assert_eq!(e.key, "fleet.nope");
}

/// What `unified` with these switches runs as (`Policy::runs_as`): the policy and its
/// non-default parameter values.
fn runs_as(off: &[&str], on: &[&str]) -> Option<(&'static str, Vec<(String, ParamValue)>)> {
    let (u, p, device) = unified_with(off, on);
    u.runs_as(&device, Default::default(), &p)
        .unwrap()
        .map(|(name, params)| {
            // The answer's table must resolve as that policy's own table does.
            let own = hotlaunch_policy::by_name(name).unwrap();
            let nd: Vec<(String, ParamValue)> =
                params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
            let resolved = resolve_params(own.as_ref(), &nd).unwrap();
            assert!(resolved.same_values(&params), "{name}: {params:?}");
            let changed = resolved
                .non_default()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect();
            (name, changed)
        })
}

#[test]
fn a_composition_of_one_whole_part_runs_as_that_part() {
    // The default is MemSaver alone with its own parameters.
    assert_eq!(runs_as(&[], &[]), Some(("memsaver", vec![])));
    // Nothing on: stock Android (stock hooks and zram).
    assert_eq!(runs_as(&["memsaver"], &[]), Some(("android", vec![])));
    // Fleet alone: every seam Fleet claims is taken (reclaim and zram as fallbacks).
    assert_eq!(runs_as(&["memsaver"], &["fleet"]), Some(("fleet", vec![])));
    assert_eq!(runs_as(&["memsaver"], &["ariadne"]), Some(("ariadne", vec![])));
    // Regions alone carry the composition's default: no region effort.
    assert_eq!(
        runs_as(&["memsaver"], &["regions"]),
        Some((
            "regions",
            vec![("region_effort".to_string(), ParamValue::Bool(false))]
        ))
    );
    // Two parts are a policy of their own.
    assert_eq!(runs_as(&[], &["fleet"]), None);
    assert_eq!(runs_as(&[], &["regions"]), None);
}

#[test]
fn a_part_whose_claims_are_narrowed_is_not_the_part() {
    use hotlaunch_policy::compose::{Composed, Part};
    let device = DeviceProfile::builtin("pixel3").unwrap();
    // Fleet's runtime only: its reclaim hook is dropped, so this is not `fleet`.
    let c = Composed {
        name: "fleet-runtime",
        description: "test",
        parts: vec![Part::taking(
            Box::new(hotlaunch_policy::FromDefault::<hotlaunch_policy::fleet::Fleet>::new()),
            Seams::RUNTIME | Seams::SWAP_BACKENDS,
        )],
    };
    let p = resolve_params(&c, &[]).unwrap();
    assert_eq!(c.runs_as(&device, Default::default(), &p).unwrap(), None);
    // Taking all of them, it is.
    let c = Composed {
        name: "fleet-all",
        description: "test",
        parts: vec![Part::all(Box::new(hotlaunch_policy::FromDefault::<
            hotlaunch_policy::fleet::Fleet,
        >::new()))],
    };
    let p = resolve_params(&c, &[]).unwrap();
    let (name, _) = c.runs_as(&device, Default::default(), &p).unwrap().unwrap();
    assert_eq!(name, "fleet");
}
