//! Trace formats (the design's `trace` layer): page-access traces in libCacheSim's formats and
//! Ariadne's published swap traces. Pure formats: no simulation here.
//!
//! - [`oracle`]: libCacheSim's `oracleGeneral` binary format (24-byte records), reader and
//!   writer, with the backward pass that fills each record's next-access index.
//! - [`csv`]: a plain `time,obj_id,size` text form of the same stream.
//! - [`ariadne`]: Ariadne's (HPCA'25, CMU-SAFARI/Ariadne) swap-out and swap-in trace files.
//!
//! Every reader returns a [`TraceError`] naming the byte offset of the first bad byte for a
//! truncated or malformed file; none panics on any input (property-tested in `tests/fuzz.rs`).

pub mod ariadne;
pub mod csv;
pub mod oracle;

/// Size of a page and of every object of a page trace.
pub const PAGE_SIZE: u32 = 4096;

/// One request of a page-access trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Simulated (or wall) time of the request, whole seconds.
    pub time_s: u32,
    pub obj_id: u64,
    pub obj_size: u32,
    /// Index of the next request to the same object when the format says (oracleGeneral's
    /// `next_access_vtime`; validated to point after this request), else `None`.
    pub next: Option<u64>,
}

/// A trace file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}: {inner}")]
    InFile { path: String, inner: Box<TraceError> },
    #[error("{what} at byte offset {offset}: {detail}")]
    Malformed {
        what: &'static str,
        offset: u64,
        detail: String,
    },
}

impl TraceError {
    pub(crate) fn malformed(what: &'static str, offset: u64, detail: impl Into<String>) -> Self {
        TraceError::Malformed {
            what,
            offset,
            detail: detail.into(),
        }
    }

    /// This error, naming `path` (an I/O error names it already).
    pub fn in_file(self, path: &std::path::Path) -> Self {
        match self {
            TraceError::Io { source, .. } => TraceError::io(path, source),
            e => TraceError::InFile {
                path: path.display().to_string(),
                inner: Box::new(e),
            },
        }
    }

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        TraceError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

/// Trace file formats `hotlaunch replay` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Oracle,
    Csv,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "oracle" | "oracleGeneral" => Ok(Format::Oracle),
            "csv" => Ok(Format::Csv),
            _ => Err(format!("unknown trace format `{s}`; expected oracle or csv")),
        }
    }
}

/// Read every request of a trace file in `format`, calling `f` for each (streamed: the file is
/// not held in memory).
pub fn for_each_request(
    path: &std::path::Path,
    format: Format,
    f: impl FnMut(Request),
) -> Result<u64, TraceError> {
    let file = engine::fsio::open_regular(path, engine::fsio::FileKind::Trace)
        .map_err(|e| TraceError::io(path, e))?;
    let r = std::io::BufReader::with_capacity(1 << 20, file);
    let res = match format {
        Format::Oracle => oracle::read(r, f),
        Format::Csv => csv::read(r, f),
    };
    res.map_err(|e| e.in_file(path))
}
