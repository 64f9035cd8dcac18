//! End-to-end runs of the framework on a small hand-built workload.

use framework::sim::{SimConfig, UserAction};
use hotlaunch::{simulate, RunSpec};
use policy::SwapOverrides;

fn spec(seed: u64, visits: usize) -> RunSpec {
    let names = ["YouTube", "Twitter", "Chrome", "Instagram", "Facebook", "Spotify", "GoogleMaps", "TikTok", "Reddit", "CandyCrush", "Gmail", "WhatsApp"];
    let apps: Vec<_> = names.iter().map(|n| apps::AppProfile::builtin(n).unwrap()).collect();
    let mut actions = Vec::new();
    let mut t = 1_000_000_000u64;
    for i in 0..visits {
        let app = (i * 7 + i / names.len()) % names.len();
        actions.push(UserAction::Visit { at: t, app, context: i % 2, dwell: 30_000_000_000 });
        t += 31_000_000_000;
    }
    let mut device = device::DeviceProfile::builtin("pixel3").unwrap();
    device.swap.zram_disksize_mb = 2048;
    RunSpec {
        name: "test".into(),
        seed,
        device,
        apps,
        actions,
        swap: SwapOverrides::default(),
        sim: SimConfig::defaults(seed),
    }
}

#[test]
fn stock_android_runs_and_is_deterministic() {
    let s = spec(1, 60);
    let policies = vec![policy::by_name("android").unwrap()];
    let a = simulate(&s, &policies, |_, _, _| {}).unwrap();
    let b = simulate(&s, &policies, |_, _, _| {}).unwrap();
    let ja = report::json::to_json_string(&a);
    assert_eq!(ja, report::json::to_json_string(&b));
    let p = &a.policies[0];
    eprintln!("{}", serde_json::to_string_pretty(&serde_json::json!({
        "hot": p.hot_launch_ms, "cold": p.cold_launch_ms, "launches": p.launches, "cached": p.cached_apps,
        "kills": p.kills, "cpu": p.cpu_ms, "zram": p.zram, "integrity": p.integrity, "psi": p.psi})).unwrap());
    assert!(p.launches.hot > 0);
    assert_eq!(p.integrity.checksum_mismatches, 0);
    assert!(p.hot_launch_ms.p50 < p.cold_launch_ms.p50);
}
