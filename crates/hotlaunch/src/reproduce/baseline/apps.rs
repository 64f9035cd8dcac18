//! Baseline rows about app footprints and launch work on the papers' phones.

use super::super::{app_hot, find, hist_ms, run_scenario, status, Check, CheckList};

pub(super) fn checks() -> CheckList {
    vec![("fleet-3.1", fleet_swap)]
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
