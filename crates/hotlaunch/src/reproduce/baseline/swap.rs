//! Baseline rows about swap devices: flash writeback, zram layout, reclaim cost.

use super::super::{run_scenario, status, Check, CheckList};

pub(super) fn checks() -> CheckList {
    vec![("marvin-fig3", marvin_fig3)]
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
