//! Results of a hotlaunch run and the files written from them.
//!
//! - [`model`]: the data model ([`RunReport`] → one [`PolicyResult`] per policy), filled in by the
//!   simulation; histogram helpers [`LatencySummary::from_histogram`] and [`cdf_from_histogram`].
//! - [`json`]: the whole report as pretty JSON ([`write_json`], [`to_json_string`]), byte-stable.
//! - [`csv`]: `timeseries_<policy>.csv`, `per_app.csv` and `summary.csv` ([`write_csv`]).
//! - [`text`]: the aligned terminal summary table ([`print_summary`]).
//! - [`html`]: one self-contained HTML file with inline SVG plots ([`write_html`]).
//! - [`format`](mod@format): what each table shows and how values are formatted — shared by all writers.
//! - [`sample`]: a synthetic, deterministic report for tests, examples and demos.
//! - [`compare`], [`stats`], [`compare_text`], [`dashboard`], [`dashboard_plots`]: the results of
//!   `hotlaunch compare` (every policy over several seeds, means with 95% intervals, paired
//!   differences), its terminal table and its HTML dashboard.
//!
//! [`write_all`] writes everything a `--report DIR` asks for: `report.json`, the CSV files and
//! `index.html`.

pub mod compare;
pub mod compare_text;
pub mod csv;
pub mod dashboard;
pub mod dashboard_plots;
pub mod events;
pub mod format;
pub mod html;
pub mod json;
pub mod model;
pub(crate) mod plot;
pub mod sample;
pub mod stats;
pub mod text;

pub use crate::csv::write_csv;
pub use html::{to_html_string, write_html};
pub use json::{from_json_str, to_json_string, write_json};
pub use model::*;
pub use text::{print_summary, summary_string};

use std::io;
use std::path::{Path, PathBuf};

/// Write `report.json`, the CSV files and `index.html` into `dir`; returns the paths written.
pub fn write_all(report: &RunReport, dir: impl AsRef<Path>) -> io::Result<Vec<PathBuf>> {
    let dir = dir.as_ref();
    std::fs::create_dir_all(dir)?;
    let json = dir.join("report.json");
    write_json(report, &json)?;
    let mut written = vec![json];
    written.extend(write_csv(report, dir)?);
    let html = dir.join("index.html");
    write_html(report, &html)?;
    written.push(html);
    Ok(written)
}

/// Write `contents` to `path` through a temporary file in the same directory and a rename, so an
/// interrupted or failed write never leaves a truncated report where a good one was.
pub fn write_atomic(path: &Path, contents: impl AsRef<[u8]>) -> io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
    let tmp = path.with_file_name(format!(".{}.tmp-{}", name.to_string_lossy(), std::process::id()));
    let r = std::fs::write(&tmp, contents).and_then(|()| std::fs::rename(&tmp, path));
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}

/// Checks, before a run, that a file can be written at `path`: it is not a directory, its parent
/// directory exists and accepts a new file. Nothing is created (a failed run leaves no trace).
pub fn check_writable_file(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "is a directory"));
    }
    existing_writable_dir(parent_of(path))
}

/// Checks, before a run, that report files can be written into `dir`: either it is a writable
/// directory, or it is missing and its parent is one (`dir` is then created when writing).
/// Nothing is created here.
pub fn check_writable_dir(dir: &Path) -> io::Result<()> {
    if dir.exists() {
        existing_writable_dir(dir)
    } else {
        existing_writable_dir(parent_of(dir))
    }
}

fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

fn existing_writable_dir(dir: &Path) -> io::Result<()> {
    if !dir.exists() {
        let msg = format!("directory {} does not exist", dir.display());
        return Err(io::Error::new(io::ErrorKind::NotFound, msg));
    }
    if !dir.is_dir() {
        let msg = format!("{} is not a directory", dir.display());
        return Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
    }
    // Creating and removing an empty file is the only reliable test (permissions, read-only
    // mounts, ACLs); the probe name is unique to this process.
    let p = dir.join(format!(".hotlaunch-probe-{}", std::process::id()));
    std::fs::write(&p, b"").map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
    std::fs::remove_file(&p)
}

fn create_parent(path: &Path) -> io::Result<()> {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => std::fs::create_dir_all(p),
        _ => Ok(()),
    }
}
