//! Baseline rows about what a device's Android and kernel release turn on (lmkd mode, cached-app
//! compaction, all-in-DRAM runs, CPU speed).

use super::super::{app_hot, find, run_scenario, status, Check, CheckList};
use framework::sim::SimOutput;

pub(super) fn checks() -> CheckList {
    vec![("ariadne-fig2", ariadne_fig2)]
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
