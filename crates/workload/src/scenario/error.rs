//! [`ScenarioError`]: every way a scenario can fail to load or resolve, each one line.

use super::*;
use engine::text::{fmt_io, fmt_key, fmt_line};

/// Why a scenario could not be loaded or resolved. `Display` is always one line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("scenario {origin}: cannot read file: {message}")]
    Io { origin: String, message: String },
    /// Not valid TOML or not the scenario's shape (unknown key, missing key, wrong type).
    #[error("scenario {origin}{}{}: {message}", fmt_line(*line), fmt_key(key))]
    Parse {
        origin: String,
        line: Option<usize>,
        key: Option<String>,
        message: String,
    },
    /// A value is invalid.
    #[error("scenario {origin}{}: key {key}: expected {expected}, got {got}", fmt_line(*line))]
    Invalid {
        origin: String,
        line: Option<usize>,
        key: String,
        expected: String,
        got: String,
    },
    /// The device could not be resolved (the device error names its own file and key).
    #[error("scenario {origin}{}: key device: {source}", fmt_line(*line))]
    Device {
        origin: String,
        line: Option<usize>,
        source: Box<DeviceError>,
    },
    /// An app profile could not be resolved.
    #[error("scenario {origin}{}: key {key}: {source}", fmt_line(*line))]
    App {
        origin: String,
        line: Option<usize>,
        key: String,
        source: Box<AppError>,
    },
    /// Not a built-in scenario (and, for `resolve_name`, not a readable file).
    #[error("scenario {name}: not a built-in scenario (known: {known}){}", fmt_io(io))]
    UnknownBuiltin {
        name: String,
        known: String,
        io: Option<String>,
    },
}
