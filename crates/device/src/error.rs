//! Errors of device-profile loading: every one renders as a single line that names the file,
//! the place (line and dotted key, when known) and what was expected.

use std::ops::Range;

use engine::text::{fmt_io, fmt_key, fmt_line};
use thiserror::Error;

use crate::schema_section_of;

/// Why a device profile could not be loaded. `Display` is always exactly one line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DeviceError {
    /// The profile file could not be read.
    #[error("device profile {origin}: cannot read file: {message}")]
    Io {
        /// File name or path as given.
        origin: String,
        /// The operating system's reason.
        message: String,
    },
    /// The text is not valid TOML, or does not have the profile's shape: unknown key, missing
    /// key, wrong type, negative number where an unsigned one is expected.
    #[error("device profile {origin}{}{}: {message}", fmt_line(*line), fmt_key(key))]
    Parse {
        /// File name or path as given.
        origin: String,
        /// 1-based line of the offending text, when the TOML parser reported a position.
        line: Option<usize>,
        /// Dotted key (e.g. `memory.dram_mb`), when it could be determined.
        key: Option<String>,
        /// What the parser expected (single line).
        message: String,
    },
    /// The profile parsed but a value is out of its valid range.
    #[error("device profile {origin}{}: key {key}: expected {expected}, got {got}", fmt_line(*line))]
    Invalid {
        /// File name or path as given.
        origin: String,
        /// 1-based line where the key is written, when found in the text.
        line: Option<usize>,
        /// Dotted key, e.g. `memory.dram_mb`.
        key: String,
        /// What a valid value looks like.
        expected: String,
        /// The value found.
        got: String,
    },
    /// `DeviceProfile::builtin` / `resolve` was given a name that is not a built-in profile
    /// (and, for `resolve`, not a readable file either).
    #[error(
        "device profile {name}: not a built-in profile (known: {known}){}",
        fmt_io(io)
    )]
    UnknownBuiltin {
        /// The name asked for.
        name: String,
        /// The known built-in names, comma-separated.
        known: String,
        /// For `resolve`: why it could not be read as a file either.
        io: Option<String>,
    },
}

use crate::tomlerr::{backticked_after, join};
pub(crate) use crate::tomlerr::{find_key_line, one_line};

/// Maps a `toml` deserialisation error to a one-line [`DeviceError::Parse`] with the line
/// number (from the error's span) and the dotted key when it can be determined.
pub(crate) fn from_toml(origin: &str, text: &str, message: &str, span: Option<Range<usize>>) -> DeviceError {
    let (line, located) = crate::tomlerr::locate(text, message, span);
    // Field names are unique across the schema, so a missing field's section is known from its
    // name even though the error points at the enclosing table.
    let key = match backticked_after(message, "missing field ") {
        Some(field) => Some(schema_section_of(field).map_or_else(|| field.to_string(), |s| join(s, field))),
        None => located,
    };
    DeviceError::Parse {
        origin: one_line(origin),
        line,
        key: key.map(|k| one_line(&k)),
        message: one_line(&friendly(message)),
    }
}

/// Replaces Rust type names in serde messages with what a profile author writes.
fn friendly(message: &str) -> String {
    let mut m = message.to_string();
    for (from, to) in [
        ("expected u64", "expected a non-negative integer"),
        ("expected u32", "expected a non-negative integer"),
        ("expected f64", "expected a number"),
    ] {
        m = m.replace(from, to);
    }
    for name in [
        "DeviceProfile",
        "MemoryProfile",
        "KernelProfile",
        "CpuProfile",
        "FlashProfile",
        "SwapProfile",
    ] {
        m = m.replace(&format!("expected struct {name}"), "expected a table");
    }
    m
}
