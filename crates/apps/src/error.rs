//! Errors of app-profile loading. Every one renders as a single line naming the file, the place
//! (line and dotted key, when known) and what was expected.

use engine::text::{fmt_io, fmt_key, fmt_line};
use thiserror::Error;

/// Why an app profile could not be loaded or resolved. `Display` is always exactly one line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AppError {
    /// The profile file could not be read.
    #[error("app profile {origin}: cannot read file: {message}")]
    Io {
        /// File name or path as given.
        origin: String,
        /// The operating system's reason.
        message: String,
    },
    /// Not valid TOML, or not the profile's shape (unknown key, missing key, wrong type).
    #[error("app profile {origin}{}{}: {message}", fmt_line(*line), fmt_key(key))]
    Parse {
        /// File name or path as given.
        origin: String,
        /// 1-based line, when the parser reported a position.
        line: Option<usize>,
        /// Dotted key, e.g. `footprint.anon_mb_start`, when it could be determined.
        key: Option<String>,
        /// What the parser expected (single line).
        message: String,
    },
    /// A value is out of its valid range.
    #[error("app profile {origin}{}: key {key}: expected {expected}, got {got}", fmt_line(*line))]
    Invalid {
        /// File name or path as given.
        origin: String,
        /// 1-based line where the key is written, when found in the text.
        line: Option<usize>,
        /// Dotted key, e.g. `access.b1_fraction`.
        key: String,
        /// What a valid value looks like.
        expected: String,
        /// The value found.
        got: String,
    },
    /// Not a built-in profile name (and, for `resolve`, not a readable file either).
    #[error("app profile {name}: not a built-in app (known: {known}){}", fmt_io(io))]
    UnknownBuiltin {
        /// The name asked for.
        name: String,
        /// The built-in names, comma-separated.
        known: String,
        /// For `resolve`: why it could not be read as a file either.
        io: Option<String>,
    },
}
