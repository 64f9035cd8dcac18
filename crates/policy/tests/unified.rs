//! `unified`: each seam comes from the part its module doc names, every part can be switched on or
//! off, and with Ariadne off reclaim and the swap devices come from the fallbacks.

use device::DeviceProfile;
use hotlaunch_policy::{resolve_params, ParamValue, Policy, Seams};

fn claims(off: &[&str]) -> (Seams, usize) {
    claims_with(off, &[])
}

fn claims_with(off: &[&str], on: &[&str]) -> (Seams, usize) {
    let device = DeviceProfile::builtin("pixel3").unwrap();
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
    let built = u.build(&device, Default::default(), &p).unwrap();
    (built.claims, built.backends.len())
}

#[test]
fn every_part_supplies_its_seams() {
    // Default (Ariadne off): Fleet's reclaim and a part's stock zram, no fault hook.
    let base = Seams::SWAP_BACKENDS | Seams::RECLAIM | Seams::PLACEMENT | Seams::FRAMEWORK | Seams::RUNTIME;
    assert_eq!(claims(&[]), (base, 1));
    // With Ariadne: its fault hook (PreDecomp) too; its reclaim and zram replace the fallbacks.
    let (c, backends) = claims_with(&[], &["ariadne"]);
    assert_eq!(c, base | Seams::FAULT);
    assert!(backends >= 1);
}

#[test]
fn ablations_drop_exactly_their_parts_seams() {
    // Without Fleet the runtime is stock.
    assert!(!claims(&["fleet"]).0.contains(Seams::RUNTIME));
    // Without regions placement is stock.
    assert!(!claims(&["regions"]).0.contains(Seams::PLACEMENT));
    // Without Fleet and Ariadne nobody decides reclaim.
    assert!(!claims(&["fleet"]).0.contains(Seams::RECLAIM));
    // Everything off is stock Android (stock zram filled in).
    let (c, backends) = claims(&["fleet", "memsaver", "regions"]);
    assert_eq!((c, backends), (Seams::NONE, 1));
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
