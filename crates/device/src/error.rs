//! Errors of device-profile loading: every one renders as a single line that names the file,
//! the place (line and dotted key, when known) and what was expected.

use std::ops::Range;

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

fn fmt_line(line: Option<usize>) -> String {
    line.map(|l| format!(", line {l}")).unwrap_or_default()
}

fn fmt_key(key: &Option<String>) -> String {
    key.as_ref().map(|k| format!(": key {k}")).unwrap_or_default()
}

fn fmt_io(io: &Option<String>) -> String {
    io.as_ref()
        .map(|m| format!(" and not a readable file: {m}"))
        .unwrap_or_default()
}

/// Makes arbitrary text safe for a one-line message: control characters (newlines included)
/// become spaces, runs of whitespace collapse.
pub(crate) fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut last_space = false;
    for c in s.chars() {
        let c = if c.is_control() || c.is_whitespace() {
            ' '
        } else {
            c
        };
        if c == ' ' {
            if !last_space && !out.is_empty() {
                out.push(' ');
            }
            last_space = true;
        } else {
            out.push(c);
            last_space = false;
        }
    }
    while out.ends_with(' ') {
        out.pop();
    }
    out
}

/// 1-based line number of byte offset `pos` in `text`.
pub(crate) fn line_of(text: &str, pos: usize) -> usize {
    let pos = pos.min(text.len());
    text.as_bytes()[..pos].iter().filter(|&&b| b == b'\n').count() + 1
}

/// Name of a `[table]` header line (`[ memory ]` → `memory`), if the line is one.
fn header_name(line: &str) -> Option<String> {
    let t = line.trim();
    let t = t.split('#').next().unwrap_or("").trim();
    if t.starts_with("[[") {
        let inner = t.strip_prefix("[[")?.strip_suffix("]]")?;
        return Some(clean_key(inner));
    }
    let inner = t.strip_prefix('[')?.strip_suffix(']')?;
    Some(clean_key(inner))
}

/// `"a" . b` → `a.b`.
fn clean_key(k: &str) -> String {
    k.split('.')
        .map(|p| p.trim().trim_matches('"').trim_matches('\''))
        .collect::<Vec<_>>()
        .join(".")
}

/// The key written at the start of a `key = value` line, if the line is one.
fn line_key(line: &str) -> Option<String> {
    let (k, _) = line.split_once('=')?;
    let k = clean_key(k.trim());
    let ok = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
    ok.then_some(k)
}

/// The table (section) in force at 1-based line `line`: the nearest header at or above it;
/// empty for the top level.
fn section_at(text: &str, line: usize) -> String {
    let mut section = String::new();
    for (i, l) in text.lines().enumerate() {
        if i + 1 > line {
            break;
        }
        if let Some(h) = header_name(l) {
            section = h;
        }
    }
    section
}

/// 1-based line where `section.key` is written (`section` empty = top level), if present.
pub(crate) fn find_key_line(text: &str, section: &str, key: &str) -> Option<usize> {
    let mut current = String::new();
    for (i, l) in text.lines().enumerate() {
        if let Some(h) = header_name(l) {
            current = h;
            continue;
        }
        if current == section && line_key(l).as_deref() == Some(key) {
            return Some(i + 1);
        }
    }
    None
}

/// The text between the first pair of backticks after `marker` in `msg`.
fn backticked_after<'a>(msg: &'a str, marker: &str) -> Option<&'a str> {
    let rest = &msg[msg.find(marker)? + marker.len()..];
    let rest = rest.strip_prefix('`')?;
    Some(&rest[..rest.find('`')?])
}

fn join(section: &str, key: &str) -> String {
    if section.is_empty() {
        key.to_string()
    } else {
        format!("{section}.{key}")
    }
}

/// Maps a `toml` deserialisation error to a one-line [`DeviceError::Parse`] with the line
/// number (from the error's span) and the dotted key when it can be determined.
pub(crate) fn from_toml(origin: &str, text: &str, message: &str, span: Option<Range<usize>>) -> DeviceError {
    let line = span.as_ref().map(|s| line_of(text, s.start));
    let line_text = line.and_then(|l| text.lines().nth(l - 1)).unwrap_or("");
    let key = if let Some(field) = backticked_after(message, "missing field ") {
        // Field names are unique across the schema, so the section is known from the name.
        Some(match schema_section_of(field) {
            Some(section) => join(section, field),
            None => field.to_string(),
        })
    } else if let Some(field) = backticked_after(message, "unknown field ") {
        let line_no = line.unwrap_or(1);
        if header_name(line_text).as_deref() == Some(field) {
            Some(field.to_string())
        } else {
            Some(join(&section_at(text, line_no), field))
        }
    } else if let Some(l) = line {
        if let Some(h) = header_name(line_text) {
            Some(h)
        } else {
            line_key(line_text).map(|k| join(&section_at(text, l), &k))
        }
    } else {
        None
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
