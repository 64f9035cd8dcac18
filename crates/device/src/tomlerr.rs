//! Helpers that turn TOML/serde errors into one-line messages naming the line and the dotted key.
//!
//! Shared by the device, app-profile and scenario loaders (`hotlaunch-device`, `hotlaunch-apps`,
//! `hotlaunch-workload`): one implementation of the line/key lookup for all TOML inputs.

use std::ops::Range;

pub use engine::text::{line_of, one_line};

/// `"a" . b` → `a.b`.
fn clean_key(k: &str) -> String {
    k.split('.')
        .map(|p| p.trim().trim_matches('"').trim_matches('\''))
        .collect::<Vec<_>>()
        .join(".")
}

/// `(name, is_array)` of a `[table]` / `[[array]]` header line.
fn header(line: &str) -> Option<(String, bool)> {
    let t = line.split('#').next().unwrap_or("").trim();
    if let Some(inner) = t.strip_prefix("[[").and_then(|r| r.strip_suffix("]]")) {
        return Some((clean_key(inner), true));
    }
    let inner = t.strip_prefix('[')?.strip_suffix(']')?;
    Some((clean_key(inner), false))
}

/// The key written at the start of a `key = value` line.
fn line_key(line: &str) -> Option<String> {
    let (k, _) = line.split_once('=')?;
    let k = clean_key(k.trim());
    let ok = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
    ok.then_some(k)
}

/// The table in force at 1-based `line`, with `[i]` indices for arrays of tables
/// (`workload.events[2]`); empty for the top level.
pub fn section_at(text: &str, line: usize) -> String {
    let mut section = String::new();
    let mut counts: Vec<(String, usize)> = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if i + 1 > line {
            break;
        }
        if let Some((name, is_array)) = header(l) {
            if is_array {
                let idx = match counts.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, c)) => {
                        *c += 1;
                        *c - 1
                    }
                    None => {
                        counts.push((name.clone(), 1));
                        0
                    }
                };
                section = format!("{name}[{idx}]");
            } else {
                section = name;
            }
        }
    }
    section
}

/// 1-based line where `section.key` is written (`section` as returned by [`section_at`]), if any.
pub fn find_key_line(text: &str, section: &str, key: &str) -> Option<usize> {
    (1..=text.lines().count()).find(|&l| {
        let lt = text.lines().nth(l - 1).unwrap_or("");
        line_key(lt).as_deref() == Some(key) && section_at(text, l) == section
    })
}

/// Joins a section and a key with a dot (no dot for the top level).
pub fn join(section: &str, key: &str) -> String {
    if section.is_empty() {
        key.to_string()
    } else {
        format!("{section}.{key}")
    }
}

/// The text between the first pair of backticks after `marker` in `msg`.
pub fn backticked_after<'a>(msg: &'a str, marker: &str) -> Option<&'a str> {
    let rest = &msg[msg.find(marker)? + marker.len()..];
    let rest = rest.strip_prefix('`')?;
    Some(&rest[..rest.find('`')?])
}

/// Where a TOML deserialisation error happened: `(line, dotted key)`, each when it can be
/// determined from the error's span and message.
pub fn locate(text: &str, message: &str, span: Option<Range<usize>>) -> (Option<usize>, Option<String>) {
    let line = span.as_ref().map(|s| line_of(text, s.start));
    let line_text = line.and_then(|l| text.lines().nth(l - 1)).unwrap_or("");
    let section = section_at(text, line.unwrap_or(0));
    let key = if let Some(field) = backticked_after(message, "missing field ") {
        Some(join(&section, field))
    } else if let Some(field) = backticked_after(message, "unknown field ") {
        match header(line_text) {
            Some((h, _)) if h.rsplit('.').next() == Some(field) => Some(h),
            _ => Some(join(&section, field)),
        }
    } else if line.is_some() {
        if header(line_text).is_some() {
            Some(section)
        } else {
            line_key(line_text).map(|k| join(&section, &k))
        }
    } else {
        None
    };
    (line, key.filter(|k| !k.is_empty()).map(|k| one_line(&k)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_and_indices() {
        let t = "a = 1\n[x]\nb = 2\n[[w.e]]\nc = 1\n[[w.e]]\nc = 2\n";
        assert_eq!(section_at(t, 1), "");
        assert_eq!(section_at(t, 3), "x");
        assert_eq!(section_at(t, 5), "w.e[0]");
        assert_eq!(section_at(t, 7), "w.e[1]");
        assert_eq!(find_key_line(t, "w.e[1]", "c"), Some(7));
        assert_eq!(one_line("a\n\tb  c"), "a b c");
    }
}
