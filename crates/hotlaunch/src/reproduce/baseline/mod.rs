//! `baseline`: the stock-Android observations every paper starts from.
//!
//! The rows are split by the part of the stock model they test: [`apps`] (app footprints and
//! launch work per device era), [`release`] (what a device's Android/kernel release turns on),
//! [`swap`] (swap devices, writeback, zram layout) and [`ion`] (I/O buffers and physical-memory
//! fragmentation); the capacity rows that depend on all of them stay here.

use super::{find, hist_ms, run_scenario, run_scenario_map, status, Check, CheckList};
use framework::sim::SimOutput;

mod apps;
mod ion;
mod release;
mod swap;

pub(super) fn checks() -> CheckList {
    let mut rows: CheckList = vec![
        ("fleet-fig2", fleet_fig2),
        ("fleet-7.1", fleet_capacity),
        ("marvin-8.3", marvin_capacity),
    ];
    rows.extend(apps::checks());
    rows.extend(release::checks());
    rows.extend(swap::checks());
    rows.extend(ion::checks());
    rows
}

/// Fleet Fig. 2: Twitter hot 273 ms vs cold 2390 ms.
fn fleet_fig2(quick: bool) -> anyhow::Result<Check> {
    let runs = run_scenario("fleet-fig2-twitter", quick)?;
    let out = &runs[0].1;
    let hot = hist_ms(&out.hot_us, 0.5);
    let cold = hist_ms(&out.cold_us, 0.5);
    let ratio = cold / hot;
    Ok(Check {
        check: "hot launch << cold launch (Twitter, idle Pixel 3)".into(),
        paper: "Fleet Fig. 2: hot 273 ms, cold 2390 ms (8.8x)".into(),
        simulated: format!("hot {hot:.0} ms, cold {cold:.0} ms ({ratio:.1}x)"),
        tolerance: "cold/hot within 8.8x ×/÷ 2 (4.4x..17.5x)".into(),
        status: status((4.4..=17.5).contains(&ratio)),
    })
}

fn opt(v: Option<u32>) -> String {
    v.map_or("none".into(), |x| x.to_string())
}

/// Fleet §7.1 / Fig. 11a: stock Android starts killing at 11 cached synthetic apps, caches at most
/// 14 (Pixel 3, 2 GB flash swap, 180 MB apps of 2048 B objects).
/// lmkd's kills are off (as in the artifact), so only the kernel OOM killer kills. Until session
/// 20 its kills came from a model artifact: every one followed 16 direct reclaims whose writes
/// queued behind a launch's reads submitted up to 8 s later in simulated time, so no write ever
/// completed inside the reclaimer's 100 ms throttle (kills from 10 cached apps, at most 11).
/// With the flash queue ordered by submission time (`kernel` `swap.rs`) the phone thrashes
/// instead (44 GB swapped out) and the first kill comes at 16 cached apps (1.3 of the 2 GB of
/// swap in use): a GAP the other way.
fn fleet_capacity(quick: bool) -> anyhow::Result<Check> {
    let runs = run_scenario("fleet-7.1-capacity", quick)?;
    let out = &runs[0].1;
    let first = out.cached_at_first_kill;
    let peak = out.cached_peak;
    let ok = first.is_some_and(|f| (9..=13).contains(&f)) && (12..=16).contains(&peak);
    Ok(Check {
        check: "caching capacity, synthetic 180 MB apps of 2048 B objects (Pixel 3, flash swap)".into(),
        paper: "Fleet §7.1: kills start at 11 cached apps; at most 14 cached".into(),
        simulated: format!(
            "kills start at {} cached apps; at most {peak} cached ({}; lmkd's kills off as in \
             the artifact)",
            opt(first),
            capacity_cause(out)
        ),
        tolerance: "each within ±2 apps".into(),
        status: status(ok),
    })
}

/// Marvin §8.3 / Fig. 7: stock Android runs 10 of the 220 MB 4 KiB-array apps concurrently; with a
/// swap file it briefly reaches 13 (Pixel XL). Counted as the paper does: *active* apps (a churn
/// round completed within 20 s). The swap-file run turns the in-kernel lowmemorykiller off as the
/// artifact did (minfree 0): with the stock table the driver kills once free memory and file
/// pages are both below minfree[950] (315 MB), the same levels as without swap, before reclaim
/// needs the swap file (measured, session 9, 16 instances 60 s apart: 9 alive with or without
/// swap; 233 MiB swapped out and 7 lowmemorykiller kills with per-app lruvecs, 35 MiB and 8 with
/// the Pixel XL's global LRU). In quick runs (instances 20 s apart, the activity window) an app
/// killed right after a round still counts, so active can exceed the alive peak by one.
/// With the driver off only the kernel OOM killer kills, by Linux 3.18's rule (`zone_reclaimable`:
/// not before reclaim has scanned 6× the reclaimable pages with no page freed; `kernel`
/// `oom_rule.rs`). Measured at session 20, full run, swap-file run: 12 active apps (7 OOM kills
/// from 90 min) under the earlier fixed count of 16 fruitless reclaims; 13 (3 kills from 148 min)
/// with the 3.18 rule; 16 (3 kills from 150 min, 414 GiB swapped out: most apps thrash) once
/// the flash queue stopped making a reclaimer's writes wait for I/O submitted later in simulated
/// time (`kernel` `swap.rs`, `FlashDevice`). The paper's "briefly 13" ended in thrashing and device
/// crashes, which the model does not have: a GAP.
fn marvin_capacity(quick: bool) -> anyhow::Result<Check> {
    // The longest check of the group: its two runs on parallel threads.
    let runs = run_scenario_map("marvin-8.3-capacity", quick, |o| {
        (super::marvin::active_max_of(&o.churn_rounds), capacity_cause(o))
    })?;
    let (a, plain) = find(&runs, "android")?.clone();
    let (w, swap) = find(&runs, "swap-file")?.clone();
    let ok = (8..=12).contains(&a) && (11..=15).contains(&w);
    Ok(Check {
        check: "concurrently active 220 MB 4 KiB-array apps with churn (Pixel XL)".into(),
        paper: "Marvin §8.3: Android 10 concurrently; with a swap file (LMK minfree 0) briefly 13".into(),
        simulated: format!("{a} without swap ({}); {w} with a swap file ({})", plain, swap),
        tolerance: "each within ±2 apps".into(),
        status: status(ok),
    })
}

/// What bounded a capacity run: alive peak, the first kill, kills by reason, MiB swapped out.
fn capacity_cause(o: &SimOutput) -> String {
    let first = o
        .kill_log
        .iter()
        .find(|k| k.reason != "user")
        .map_or("no kill".into(), |k| {
            format!("first kill at {:.1} min", k.t as f64 / 60e9)
        });
    let kills: Vec<String> = o.kills.iter().map(|(r, n)| format!("{r} {n}")).collect();
    let out_mib = o.kernel.vmstat.pswpout as f64 * 4096.0 / (1 << 20) as f64;
    format!(
        "alive peak {}, {first}, kills: {}, {out_mib:.0} MiB swapped out",
        o.alive_peak,
        if kills.is_empty() {
            "none".into()
        } else {
            kills.join(", ")
        }
    )
}
