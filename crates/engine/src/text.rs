//! Text helpers for one-line error messages, shared by every loader (TOML profiles, scenarios,
//! the cost table).

/// Makes arbitrary text safe for a one-line message: control characters (newlines included)
/// become spaces, runs of whitespace collapse, and very long texts are cut.
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(400));
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
        if out.len() > 400 {
            out.push('…');
            break;
        }
    }
    while out.ends_with(' ') {
        out.pop();
    }
    out
}

/// 1-based line number of byte offset `pos` in `text`.
pub fn line_of(text: &str, pos: usize) -> usize {
    let mut pos = pos.min(text.len());
    while !text.is_char_boundary(pos) {
        pos -= 1;
    }
    text.as_bytes()[..pos].iter().filter(|&&b| b == b'\n').count() + 1
}

/// Whether `x` is finite and in `(lo, hi]` (`lo_incl` = false) or `[lo, hi]`: the range test
/// behind every loader's numeric-key check.
pub fn in_range(x: f64, lo: f64, lo_incl: bool, hi: f64) -> bool {
    x.is_finite() && (if lo_incl { x >= lo } else { x > lo }) && x <= hi
}

/// `", line N"` for a one-line error message, or nothing (shared by the loaders' error types).
pub fn fmt_line(line: Option<usize>) -> String {
    line.map(|l| format!(", line {l}")).unwrap_or_default()
}

/// `": key K"` for a one-line error message, or nothing.
pub fn fmt_key(key: &Option<String>) -> String {
    key.as_ref().map(|k| format!(": key {k}")).unwrap_or_default()
}

/// Why a name that is not built in could not be read as a file either, or nothing.
pub fn fmt_io(io: &Option<String>) -> String {
    io.as_ref()
        .map(|m| format!(" and not a readable file: {m}"))
        .unwrap_or_default()
}
