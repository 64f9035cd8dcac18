//! `unified`: each seam comes from the part its module doc names, every part can be switched off,
//! and switching Ariadne off hands reclaim and the swap devices to the fallbacks.

use device::DeviceProfile;
use hotlaunch_policy::{resolve_params, ParamValue, Policy, Seams};

fn claims(off: &[&str]) -> (Seams, usize) {
    let device = DeviceProfile::builtin("pixel3").unwrap();
    let u = hotlaunch_policy::unified::unified();
    let overrides: Vec<(String, ParamValue)> = off
        .iter()
        .map(|p| (format!("{p}.enabled"), ParamValue::Bool(false)))
        .collect();
    let p = resolve_params(&u, &overrides).unwrap();
    let built = u.build(&device, Default::default(), &p).unwrap();
    (built.claims, built.backends.len())
}

#[test]
fn every_part_supplies_its_seams() {
    let (c, backends) = claims(&[]);
    let want = Seams::SWAP_BACKENDS
        | Seams::RECLAIM
        | Seams::FAULT
        | Seams::PLACEMENT
        | Seams::FRAMEWORK
        | Seams::RUNTIME;
    assert_eq!(c, want);
    // Ariadne's zram (compressed writeback to flash is an Ariadne parameter, not a second device).
    assert!(backends >= 1);
}

#[test]
fn ablations_drop_exactly_their_parts_seams() {
    // Without Fleet the runtime is stock.
    assert!(!claims(&["fleet"]).0.contains(Seams::RUNTIME));
    // Without regions placement is stock.
    assert!(!claims(&["regions"]).0.contains(Seams::PLACEMENT));
    // Without Ariadne: no fault hook, but Fleet's reclaim and a part's stock zram take over.
    let (c, backends) = claims(&["ariadne"]);
    assert!(!c.contains(Seams::FAULT));
    assert!(c.contains(Seams::RECLAIM | Seams::SWAP_BACKENDS));
    assert_eq!(backends, 1);
    // Everything off is stock Android (stock zram filled in).
    let (c, backends) = claims(&["ariadne", "fleet", "memsaver", "regions"]);
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
