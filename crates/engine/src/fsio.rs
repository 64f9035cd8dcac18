//! Bounded reads of input files (issue 13): every file hotlaunch reads on a user's behalf
//! (scenario, device and app profiles, heap dumps, corpora, cost tables, sweeps) goes through
//! [`read_capped`], which refuses what is not a regular file (`/dev/zero` would read until memory
//! runs out, a FIFO would block forever) and files larger than a per-kind cap, before reading.
//! Files read as a stream (page traces, a sweep's resume log) are opened through [`open_regular`],
//! the same checks with a larger cap (memory does not grow with their size).
//!
//! Simplified: the check and the read are not atomic (a file swapped between them is read with the
//! same cap, so memory stays bounded either way).

use std::fmt;
use std::io::{self, Read};
use std::path::Path;

/// What a file is, for its size cap and its error message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Scenario,
    Device,
    App,
    HeapDump,
    Corpus,
    Costs,
    /// A JSON run report read back (`run --rerun`).
    Report,
    Sweep,
    /// A page or request trace (libCacheSim, Ariadne), streamed.
    Trace,
    /// A sweep's resume log (`points.jsonl`), streamed.
    ResumeLog,
}

impl FileKind {
    /// The largest file of this kind read. Profiles are a few KB; a scenario of 1,000 apps with
    /// inline tables is well under 16 MiB; heap dumps and corpora are bounded so that parsing
    /// stays within a couple of GB of host memory.
    pub const fn max_bytes(self) -> u64 {
        match self {
            FileKind::Scenario | FileKind::Sweep => 16 << 20,
            FileKind::Device | FileKind::App | FileKind::Costs => 1 << 20,
            FileKind::HeapDump => 1 << 30,
            FileKind::Corpus | FileKind::Report => 1 << 30,
            // Streamed: the cap only bounds run time (a day's trace of a busy cache is ~100 GB).
            FileKind::Trace | FileKind::ResumeLog => 1 << 40,
        }
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileKind::Scenario => "scenario file",
            FileKind::Device => "device profile",
            FileKind::App => "app profile",
            FileKind::HeapDump => "heap dump",
            FileKind::Corpus => "corpus file",
            FileKind::Costs => "cost table",
            FileKind::Report => "report",
            FileKind::Sweep => "sweep file",
            FileKind::Trace => "trace",
            FileKind::ResumeLog => "resume log",
        })
    }
}

fn human(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{} GiB", bytes >> 30)
    } else if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// Reads `path` whole if it is a regular file of at most `kind.max_bytes()` bytes. The error
/// message is one line and does not repeat the path (callers name it).
pub fn read_capped(path: &Path, kind: FileKind) -> io::Result<Vec<u8>> {
    read_capped_to(path, kind, kind.max_bytes())
}

/// [`read_capped`] with an explicit cap.
pub fn read_capped_to(path: &Path, kind: FileKind, max: u64) -> io::Result<Vec<u8>> {
    let (f, len) = open_checked(path, kind, max)?;
    let mut buf = Vec::with_capacity(len as usize);
    f.take(max + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > max {
        return Err(too_big(kind, max));
    }
    Ok(buf)
}

/// Opens `path` for streamed reading if it is a regular file of at most `kind.max_bytes()`
/// bytes (errors as [`read_capped`]).
pub fn open_regular(path: &Path, kind: FileKind) -> io::Result<std::fs::File> {
    open_checked(path, kind, kind.max_bytes()).map(|(f, _)| f)
}

fn too_big(kind: FileKind, max: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("larger than the {} limit for a {kind}", human(max)),
    )
}

/// The file and its length, if it is a regular file within `max` bytes.
fn open_checked(path: &Path, kind: FileKind, max: u64) -> io::Result<(std::fs::File, u64)> {
    // Metadata before opening: opening a FIFO for reading blocks until a writer appears.
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "is a directory"
        } else {
            "is not a regular file (a device, FIFO or socket)"
        };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{kind} {what}"),
        ));
    }
    if meta.len() > max {
        return Err(too_big(kind, max));
    }
    Ok((std::fs::File::open(path)?, meta.len()))
}

/// [`read_capped`] as UTF-8 text.
pub fn read_capped_string(path: &Path, kind: FileKind) -> io::Result<String> {
    let b = read_capped(path, kind)?;
    String::from_utf8(b)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, format!("{kind} is not valid UTF-8")))
}
