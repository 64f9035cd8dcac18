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
