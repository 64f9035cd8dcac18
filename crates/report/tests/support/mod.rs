//! Headless Chromium for the report tests (the HTML report's and the dashboard's screenshots).

#![allow(dead_code)] // each test file uses a subset

use std::path::Path;
use std::process::{Command, Output};

pub const CHROMIUM: &str = "/usr/bin/chromium";

/// Runs headless Chromium (no sandbox, GPU, network or first-run work) with `args`.
pub fn chromium(args: &[String]) -> Output {
    Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .args(args)
        .output()
        .expect("run chromium")
}

/// The screenshot Chromium wrote to `png`, or a panic with its exit status and stderr.
pub fn read_screenshot(png: &Path, out: &Output) -> Vec<u8> {
    std::fs::read(png).unwrap_or_else(|e| {
        panic!(
            "no screenshot ({e}); chromium exit {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Width and height from a PNG's IHDR chunk.
pub fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.len() < 24 || &bytes[..8] != b"\x89PNG\r\n\x1a\n" || &bytes[12..16] != b"IHDR" {
        return None;
    }
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    Some((be(&bytes[16..20]), be(&bytes[20..24])))
}
