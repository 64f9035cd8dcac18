//! Baseline rows about what a device's Android and kernel release turn on (lmkd mode, cached-app
//! compaction, all-in-DRAM runs, CPU speed).

use super::super::{app_hot, find, run_loaded_scenario, run_scenario, shrink, status, Check, CheckList};
use framework::sim::SimOutput;

pub(super) fn checks() -> CheckList {
    vec![("ariadne-fig2", ariadne_fig2), ("memsaver-fig1", memsaver_fig1)]
}

/// What the kernel swapped out and the framework compacted during a run.
fn swap_and_compaction(o: &SimOutput) -> (u64, u64) {
    (o.kernel.vmstat.pswpout, o.app_compactions)
}

/// Ariadne Fig. 2: relaunch from zram ≈ 2.1× the all-in-DRAM relaunch; the DRAM run must keep
/// everything in memory (no swap-out, no cached-app compaction).
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
    let dram_out = find(&runs, "dram")?;
    let dram = mean(dram_out);
    let zram = mean(find(&runs, "zram")?);
    let ratio = zram / dram;
    let (swapped, compacted) = swap_and_compaction(dram_out);
    let in_memory = swapped == 0 && compacted == 0;
    Ok(Check {
        check: "relaunch from zram vs all in DRAM (Pixel 7, mean of 5 apps)".into(),
        paper: "Ariadne Fig. 2: ZRAM relaunch 2.1x DRAM".into(),
        simulated: format!(
            "DRAM {dram:.0} ms, zram {zram:.0} ms ({ratio:.2}x); DRAM run: {swapped} pages swapped out, \
             {compacted} compactions"
        ),
        tolerance: "ratio within 2.1x ± 30% (1.47x..2.73x); DRAM run with zero swap-out and zero compaction"
            .into(),
        status: status((1.47..=2.73).contains(&ratio) && in_memory),
    })
}

/// MemSaver Fig. 1 / §2.1: with every app in memory, hot launches on the OnePlus 9 Pro take about
/// 100 ms (YouTube 120 ms).
fn memsaver_fig1(quick: bool) -> anyhow::Result<Check> {
    // The first round is cold launches: keep two rounds in the quick form.
    let mut sc = workload::scenario::Scenario::builtin("memsaver-fig1-hot")?;
    if quick {
        shrink(&mut sc.workload);
        if let workload::scenario::WorkloadSpec::RoundRobin { rounds, .. } = &mut sc.workload {
            *rounds = 2;
        }
    }
    let runs = run_loaded_scenario(sc)?;
    let out = find(&runs, "all-in-memory")?;
    let median = |app: &str| {
        app_hot(out, app)
            .filter(|h| !h.is_empty())
            .map(|h| h.value_at_quantile(0.5) as f64 / 1000.0)
    };
    let others = ["Twitter", "Reddit", "Discord", "Chrome", "SubwaySurfers"];
    let v: Vec<f64> = others.iter().filter_map(|a| median(a)).collect();
    let rest = v.iter().sum::<f64>() / v.len().max(1) as f64;
    let youtube = median("YouTube").unwrap_or(f64::NAN);
    let (swapped, compacted) = swap_and_compaction(out);
    let ok = v.len() == others.len()
        && (70.0..=130.0).contains(&rest)
        && (84.0..=156.0).contains(&youtube)
        && swapped == 0
        && compacted == 0;
    Ok(Check {
        check: "hot launch with every app in memory (OnePlus 9 Pro, Android 11)".into(),
        paper: "MemSaver Fig. 1: hot ~100 ms (YouTube 120 ms, §2.1)".into(),
        simulated: format!(
            "mean of 5 apps' medians {rest:.0} ms ({} apps), YouTube {youtube:.0} ms; {swapped} pages \
             swapped out, {compacted} compactions",
            v.len()
        ),
        tolerance: "each ± 30% (70..130 ms, 84..156 ms), nothing swapped or compacted".into(),
        status: status(ok),
    })
}
