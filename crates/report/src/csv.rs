//! CSV output (RFC 4180 quoting, `\n` line ends, header row first):
//!
//! - `timeseries_<policy>.csv`: one row per sample, columns
//!   [`TIMESERIES_COLUMNS`] (`t_s, cached_apps, free_mb, anon_mb,
//!   file_mb, swapped_mb, zram_mb, kernel_mb, psi_some_ms, ui_0..ui_10` (unusable index per
//!   order), `zram_orig_mb, zram_compr_mb, zram_same_pages, zram_huge_pages, policy_cpu_ms`);
//! - `gcs_<policy>.csv`: one row per garbage collection, columns [`GC_COLUMNS`] (written when the
//!   run had collections);
//! - `per_app.csv`: one row per (policy, app), columns `policy` then
//!   [`PER_APP_COLUMNS`];
//! - `summary.csv`: one row per policy, columns `policy` then
//!   [`SUMMARY_ROWS`] keys.
//!
//! Numbers are written with up to 6 decimals. `<policy>` in file names is the policy name with any
//! character outside `[A-Za-z0-9._-]` replaced by `_`.

use crate::format::{Cell, GC_COLUMNS, PER_APP_COLUMNS, SUMMARY_ROWS, TIMESERIES_COLUMNS};
use crate::model::RunReport;
use std::io;
use std::path::{Path, PathBuf};

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn line<I: IntoIterator<Item = String>>(out: &mut String, fields: I) {
    let fields: Vec<String> = fields.into_iter().map(|f| field(&f)).collect();
    out.push_str(&fields.join(","));
    out.push('\n');
}

/// The file-name form of a policy name.
pub fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// One distinct file-name stem per name: [`file_safe`] when that is the name itself, else (the
/// name had characters replaced, so `a/b` and `a_b` would collide) the safe form plus a hash of
/// the name; a name repeated gets `-2`, `-3`, ...
pub fn file_stems<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        let safe = file_safe(n);
        let mut stem = if safe == n {
            safe
        } else {
            // FNV-1a: stable across runs and platforms.
            let h = n.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
            });
            format!("{safe}-{:08x}", h as u32)
        };
        let base = stem.clone();
        let mut k = 2;
        while out.contains(&stem) {
            stem = format!("{base}-{k}");
            k += 1;
        }
        out.push(stem);
    }
    out
}

/// `timeseries_<policy>.csv` contents for policy index `i`.
pub fn timeseries_csv(report: &RunReport, i: usize) -> String {
    let ts = &report.policies[i].timeseries;
    let mut out = String::new();
    line(&mut out, TIMESERIES_COLUMNS.iter().map(|c| c.key.to_string()));
    for row in 0..ts.len() {
        line(
            &mut out,
            TIMESERIES_COLUMNS.iter().map(|c| (c.value)(ts, row).raw()),
        );
    }
    out
}

/// `gcs_<policy>.csv` contents for policy index `i`: one row per garbage collection.
pub fn gcs_csv(report: &RunReport, i: usize) -> String {
    let mut out = String::new();
    line(&mut out, GC_COLUMNS.iter().map(|(k, _)| k.to_string()));
    for g in &report.policies[i].gcs {
        line(&mut out, GC_COLUMNS.iter().map(|(_, v)| v(g).raw()));
    }
    out
}

/// `per_app.csv` contents.
pub fn per_app_csv(report: &RunReport) -> String {
    let mut out = String::new();
    line(
        &mut out,
        std::iter::once("policy".to_string()).chain(PER_APP_COLUMNS.iter().map(|c| c.key.into())),
    );
    for p in &report.policies {
        for a in &p.per_app {
            line(
                &mut out,
                std::iter::once(p.policy.clone()).chain(PER_APP_COLUMNS.iter().map(|c| (c.value)(a).raw())),
            );
        }
    }
    out
}

/// `summary.csv` contents.
pub fn summary_csv(report: &RunReport) -> String {
    let mut out = String::new();
    line(
        &mut out,
        std::iter::once("policy".to_string()).chain(SUMMARY_ROWS.iter().map(|c| c.key.into())),
    );
    for p in &report.policies {
        line(
            &mut out,
            std::iter::once(Cell::Text(p.policy.clone()))
                .chain(SUMMARY_ROWS.iter().map(|c| (c.value)(p)))
                .map(|c| c.raw()),
        );
    }
    out
}

/// Write all CSV files into `dir` (created if missing); returns the paths written.
pub fn write_csv(report: &RunReport, dir: impl AsRef<Path>) -> io::Result<Vec<PathBuf>> {
    let dir = dir.as_ref();
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    let mut put = |name: String, contents: String| -> io::Result<()> {
        let path = dir.join(name);
        crate::write_atomic(&path, contents)?;
        written.push(path);
        Ok(())
    };
    let stems = file_stems(report.policies.iter().map(|p| p.policy.as_str()));
    for (i, stem) in stems.iter().enumerate() {
        put(format!("timeseries_{stem}.csv"), timeseries_csv(report, i))?;
    }
    for (i, p) in report.policies.iter().enumerate() {
        if !p.gcs.is_empty() {
            put(format!("gcs_{}.csv", stems[i]), gcs_csv(report, i))?;
        }
    }
    put("per_app.csv".into(), per_app_csv(report))?;
    put("summary.csv".into(), summary_csv(report))?;
    Ok(written)
}
