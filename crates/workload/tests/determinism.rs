//! Same scenario + seed ⇒ byte-identical JSON; a different seed changes it.

use hotlaunch_workload::pagelevel::PageScenario;

fn run(seed: u64) -> String {
    let device = device::DeviceProfile::builtin("pixel3").unwrap();
    let mut sc = PageScenario::default_on(device, seed);
    sc.switches = 40;
    sc.dwell = 5_000_000_000;
    serde_json::to_string_pretty(&sc.run(|_, _| {}).unwrap()).unwrap()
}

#[test]
fn same_seed_same_bytes_different_seed_different_bytes() {
    let a = run(7);
    let b = run(7);
    assert_eq!(a, b, "same seed must give byte-identical JSON");
    let c = run(8);
    assert_ne!(a, c, "a different seed must change the results");
}

#[test]
fn default_scenario_reaches_memory_pressure_and_loses_nothing() {
    let device = device::DeviceProfile::builtin("pixel3").unwrap();
    let mut sc = PageScenario::default_on(device, 3);
    sc.switches = 60;
    sc.dwell = 5_000_000_000;
    let r = sc.run(|_, _| {}).unwrap();
    assert!(r.vmstat.pswpout > 0, "the default scenario must swap");
    assert!(r.vmstat.pswpin > 0);
    assert!(r.hot_switches > 0 && r.cold_starts > 0);
    assert_eq!(r.integrity.checksum_mismatches, 0);
    assert_eq!(r.integrity.pages_swapped_in, r.vmstat.pswpin);
    // Hot switches are served mostly from memory: cheaper than cold starts.
    assert!(r.hot_switch_stall_ms.p50 < r.cold_start_stall_ms.p50);
}
