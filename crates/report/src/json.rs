//! JSON output: the whole [`RunReport`], pretty-printed with 2-space indentation and a trailing
//! newline. Keys appear in struct field order and maps are sorted, so equal reports give identical
//! bytes.

use crate::model::RunReport;
use std::io;
use std::path::Path;

/// The report as pretty JSON with a trailing newline.
pub fn to_json_string(report: &RunReport) -> String {
    // Serializing plain structs, Vecs and BTreeMaps with String keys cannot fail.
    let mut s = serde_json::to_string_pretty(report).expect("RunReport serializes");
    s.push('\n');
    s
}

/// Parse a report written by [`to_json_string`] / [`write_json`].
pub fn from_json_str(s: &str) -> serde_json::Result<RunReport> {
    serde_json::from_str(s)
}

/// Write the report as JSON to `path` (parent directories are created).
pub fn write_json(report: &RunReport, path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref();
    crate::create_parent(path)?;
    crate::write_atomic(path, to_json_string(report))
}
