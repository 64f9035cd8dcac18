//! The simulator's own (host) memory for one run, estimated before anything is built, and the
//! refusal when the estimate exceeds a limit (issue 13, bounded work).
//!
//! Estimate = a fixed base + per simulated DRAM page (frame table, LRU and reverse-map entries,
//! page contents) + per app the timeline launches (Java heap objects, access model and page
//! contents at its steady footprint; heaps are built at first launch, so never-launched apps
//! cost only their profile) + per declared app. Coefficients come from peak RSS
//! (`/usr/bin/time -v`, release build) of one-policy runs of 1, 8 and 40 declared apps (up to 8
//! launched) on a03core (2 GiB), pixel3 (4 GiB) and pixel8pro (12 GiB): 108 MiB (pixel3, one
//! app) to 1107 MiB (pixel8pro, 40 apps), and the built-in `default` scenario (pixel3, 20 apps,
//! 20 simulated hours): 1272 MiB against an estimate of 1708 MiB. The coefficients are rounded up
//! so every measured run is below its estimate (pixel3 runs by up to 2.7x, a03core and pixel8pro
//! by 1.05-1.9x): this is a guard against runs that cannot fit, not a prediction. Not modelled:
//! growth with simulated time (logs, samples), the policies' own state, swap contents.
//!
//! Limit: `HOTLAUNCH_MEMORY_LIMIT_MB` if set (0 = no check), else `MemAvailable` from
//! `/proc/meminfo` (no check where that file is absent). The limit applies to each run; runs on
//! parallel worker threads (`HOTLAUNCH_JOBS`) each need their own estimate.

use crate::RunSpec;
use framework::UserAction;
use std::collections::BTreeSet;

/// Fixed cost of a run (binary, kernel structures, policy state, report), MiB.
const BASE_MB: f64 = 64.0;
/// Host bytes per simulated 4 KiB DRAM page.
const BYTES_PER_DRAM_PAGE: f64 = 128.0;
/// Host MiB per simulated MiB of a launched app's steady anonymous plus file footprint.
const PER_LAUNCHED_APP_MB: f64 = 0.3;
/// Host MiB per declared app (profile, page-content pool; the pools shrink beyond 128 apps, and
/// 1,000 declared apps with one launched peak under 1 GB).
const PER_DECLARED_APP_MB: f64 = 1.0;

/// The environment variable that overrides the limit (MiB; 0 disables the check).
pub const LIMIT_ENV: &str = "HOTLAUNCH_MEMORY_LIMIT_MB";

/// One term of the estimate: the scenario key it comes from and its share in MiB.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    pub key: String,
    pub mb: f64,
}

/// The estimate of one run, MiB, term by term (largest first).
pub fn estimate(spec: &RunSpec) -> Vec<Term> {
    let dram_pages = spec.device.memory.dram_mb as f64 * 256.0;
    let launched: BTreeSet<usize> = spec
        .actions
        .iter()
        .filter_map(|a| match a {
            UserAction::Launch { app, .. } => Some(*app),
            _ => None,
        })
        .collect();
    let app_mb: f64 = launched
        .iter()
        .filter_map(|&i| spec.apps.get(i))
        .map(|a| a.footprint.anon_mb_steady + a.footprint.file_mb)
        .sum();
    let mut terms = vec![
        Term {
            key: format!("device.dram_mb = {}", spec.device.memory.dram_mb),
            mb: dram_pages * BYTES_PER_DRAM_PAGE / (1u64 << 20) as f64,
        },
        Term {
            key: format!("apps ({} launched, {} declared)", launched.len(), spec.apps.len()),
            mb: app_mb * PER_LAUNCHED_APP_MB + spec.apps.len() as f64 * PER_DECLARED_APP_MB,
        },
    ];
    terms.sort_by(|a, b| b.mb.total_cmp(&a.mb));
    terms
}

/// The limit in MiB: the override, else `MemAvailable`; `None`: no check.
pub fn limit_mb() -> Result<Option<f64>, String> {
    if let Ok(v) = std::env::var(LIMIT_ENV) {
        let mb: u64 = v
            .trim()
            .parse()
            .map_err(|_| format!("{LIMIT_ENV} = {v:?}: expected a whole number of MiB (0: no check)"))?;
        return Ok((mb > 0).then_some(mb as f64));
    }
    let Ok(text) = std::fs::read_to_string("/proc/meminfo") else {
        return Ok(None);
    };
    Ok(mem_available_mb(&text))
}

/// `MemAvailable` of a `/proc/meminfo` text, MiB.
pub fn mem_available_mb(meminfo: &str) -> Option<f64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Refuse `spec` when its estimate exceeds `limit` (MiB): one line naming the largest term's
/// key, the estimate and the limit.
pub fn check(spec: &RunSpec, limit: Option<f64>) -> Result<(), String> {
    let Some(limit) = limit else { return Ok(()) };
    let terms = estimate(spec);
    let total = BASE_MB + terms.iter().map(|t| t.mb).sum::<f64>();
    if total <= limit {
        return Ok(());
    }
    let parts: Vec<String> = terms
        .iter()
        .map(|t| format!("{}: {:.0} MiB", t.key, t.mb))
        .collect();
    Err(format!(
        "scenario {}: estimated simulator memory {:.0} MiB exceeds the limit of {:.0} MiB ({}); \
         largest: {}, base {:.0} MiB; set {LIMIT_ENV} to change the limit",
        spec.name,
        total,
        limit,
        if std::env::var(LIMIT_ENV).is_ok() {
            LIMIT_ENV
        } else {
            "MemAvailable"
        },
        parts.join(", "),
        BASE_MB
    ))
}
