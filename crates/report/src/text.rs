//! Terminal summary: a one-line run description, then an aligned table with one row per
//! [`SUMMARY_ROWS`](crate::format::SUMMARY_ROWS) metric (hot launch p50/p90/p99/mean, cold launch
//! p50/p90, launches hot/cold, cached apps max/mean, kills, memory-management CPU, energy, flash
//! read/written, zram stored/compressed, PSI, integrity counters) and one column per policy. A
//! final line flags any checksum mismatch.

use crate::format::{run_description, summary_grid};
use crate::model::RunReport;
use std::io::{self, Write};

/// The summary table as a string (what [`print_summary`] writes).
pub fn summary_string(report: &RunReport) -> String {
    let grid = summary_grid(report);
    let ncols = grid.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..ncols)
        .map(|c| {
            grid.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    out.push_str(&run_description(report));
    out.push('\n');
    for (r, row) in grid.iter().enumerate() {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c == 0 {
                line.push_str(&format!("{:<w$}", cell, w = widths[0]));
            } else {
                line.push_str(&format!("  {:>w$}", cell, w = widths[c]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
        if r == 0 {
            let total = widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1);
            out.push_str(&"-".repeat(total));
            out.push('\n');
        }
    }
    for p in &report.policies {
        if p.integrity.checksum_mismatches > 0 {
            out.push_str(&format!(
                "INTEGRITY FAILURE: policy {}: {} checksum mismatches\n",
                p.policy, p.integrity.checksum_mismatches
            ));
        }
    }
    out
}

/// Print the summary table to `out`.
pub fn print_summary(report: &RunReport, out: &mut impl Write) -> io::Result<()> {
    out.write_all(summary_string(report).as_bytes())
}
