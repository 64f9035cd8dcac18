//! `baseline`: the stock-Android observations every paper starts from.

use super::{app_hot, find, hist_ms, run_scenario, status, Check, CheckList};
use framework::sim::SimOutput;

pub(super) fn checks() -> CheckList {
    vec![
        ("fleet-fig2", fleet_fig2),
        ("fleet-3.1", fleet_swap),
        ("ariadne-fig2", ariadne_fig2),
        ("marvin-fig3", marvin_fig3),
        ("fleet-7.1", fleet_capacity),
        ("marvin-8.3", marvin_capacity),
    ]
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

/// Fleet §3.1: Instagram's tail hot launch 147 ms without swap, 1027 ms with flash swap.
fn fleet_swap(quick: bool) -> anyhow::Result<Check> {
    let runs = run_scenario("fleet-3.1-instagram-swap", quick)?;
    let without = app_hot(find(&runs, "without-swap")?, "Instagram").map_or(f64::NAN, |h| hist_ms(h, 0.9));
    let with = app_hot(find(&runs, "with-swap")?, "Instagram").map_or(f64::NAN, |h| hist_ms(h, 0.9));
    let ratio = with / without;
    Ok(Check {
        check: "flash swap makes tail hot launch several times worse (Instagram p90)".into(),
        paper: "Fleet §3.1: 147 ms without swap, 1027 ms with swap (7.0x)".into(),
        simulated: if without.is_nan() || with.is_nan() {
            // Every Instagram launch of that run was cold (the app was always killed first).
            let ms = |x: f64| {
                if x.is_nan() {
                    "no hot launch".to_string()
                } else {
                    format!("{x:.0} ms")
                }
            };
            format!("{} without, {} with", ms(without), ms(with))
        } else {
            format!("{without:.0} ms without, {with:.0} ms with ({ratio:.1}x)")
        },
        tolerance: "ratio within 7.0x ×/÷ 2 (3.5x..14x)".into(),
        status: status((3.5..=14.0).contains(&ratio)),
    })
}

/// Ariadne Fig. 2: relaunch from zram ≈ 2.1× the all-in-DRAM relaunch.
fn ariadne_fig2(quick: bool) -> anyhow::Result<Check> {
    let runs = run_scenario("ariadne-fig2-zram", quick)?;
    let mean = |o: &SimOutput| {
        let apps = ["YouTube", "Twitter", "Firefox", "GoogleEarth", "BangDream"];
        let v: Vec<f64> = apps
            .iter()
            .filter_map(|a| app_hot(o, a))
            .filter(|h| !h.is_empty())
            .map(|h| h.mean() / 1000.0)
            .collect();
        v.iter().sum::<f64>() / v.len().max(1) as f64
    };
    let dram = mean(find(&runs, "dram")?);
    let zram = mean(find(&runs, "zram")?);
    let ratio = zram / dram;
    Ok(Check {
        check: "relaunch from zram vs all in DRAM (Pixel 7, mean of 5 apps)".into(),
        paper: "Ariadne Fig. 2: ZRAM relaunch 2.1x DRAM".into(),
        simulated: format!("DRAM {dram:.0} ms, zram {zram:.0} ms ({ratio:.2}x)"),
        tolerance: "ratio within 2.1x ± 30% (1.47x..2.73x)".into(),
        status: status((1.47..=2.73).contains(&ratio)),
    })
}

/// Marvin Fig. 3: allocating 512 MB takes ~450 ms with free memory, ~8 s under pressure with a
/// swap file.
fn marvin_fig3(quick: bool) -> anyhow::Result<Check> {
    let runs = run_scenario("marvin-fig3-alloc", quick)?;
    let out = &runs[0].1;
    let free = out.alloc_ms.first().copied().unwrap_or(f64::NAN);
    let pressure = out.alloc_ms.get(1).copied().unwrap_or(f64::NAN);
    let ok = (225.0..=900.0).contains(&free) && (4000.0..=16000.0).contains(&pressure);
    Ok(Check {
        check: "allocate 512 MB: free memory vs under pressure with a swap file (Pixel XL)".into(),
        paper: "Marvin Fig. 3: ~450 ms free, ~8 s under pressure".into(),
        simulated: format!("{free:.0} ms free, {:.2} s under pressure", pressure / 1000.0),
        tolerance: "each within ×/÷ 2 of the paper".into(),
        status: status(ok),
    })
}

fn opt(v: Option<u32>) -> String {
    v.map_or("none".into(), |x| x.to_string())
}

/// Fleet §7.1 / Fig. 11a: stock Android starts killing at 11 cached synthetic apps, caches at most
/// 14 (Pixel 3, 2 GB flash swap, 180 MB apps of 2048 B objects).
fn fleet_capacity(quick: bool) -> anyhow::Result<Check> {
    let runs = run_scenario("fleet-7.1-capacity", quick)?;
    let out = &runs[0].1;
    let first = out.cached_at_first_kill;
    let peak = out.cached_peak;
    let ok = first.is_some_and(|f| (9..=13).contains(&f)) && (12..=16).contains(&peak);
    Ok(Check {
        check: "caching capacity, synthetic 180 MB apps of 2048 B objects (Pixel 3, flash swap)".into(),
        paper: "Fleet §7.1: kills start at 11 cached apps; at most 14 cached".into(),
        simulated: format!("kills start at {} cached apps; at most {peak} cached", opt(first)),
        tolerance: "each within ±2 apps".into(),
        status: status(ok),
    })
}

/// Marvin §8.3 / Fig. 7: stock Android runs 10 of the 220 MB 4 KiB-array apps concurrently; with a
/// swap file it briefly reaches 13 (Pixel XL).
fn marvin_capacity(quick: bool) -> anyhow::Result<Check> {
    let runs = run_scenario("marvin-8.3-capacity", quick)?;
    let plain = find(&runs, "android")?.alive_peak;
    let swap = find(&runs, "swap-file")?.alive_peak;
    let ok = (8..=12).contains(&plain) && (11..=15).contains(&swap);
    Ok(Check {
        check: "concurrent 220 MB 4 KiB-array apps with churn (Pixel XL)".into(),
        paper: "Marvin §8.3: Android 10 concurrently; with a swap file briefly 13".into(),
        simulated: format!("{plain} without swap; {swap} with a swap file"),
        tolerance: "each within ±2 apps".into(),
        status: status(ok),
    })
}
