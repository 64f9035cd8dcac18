//! Optional: render the example HTML report in headless Chromium and check the screenshot is a real
//! picture. Skipped (with a message) when `/usr/bin/chromium` is not installed
//! (`apt-get install chromium` on Debian).

use hotlaunch_report::sample::synthetic_report;
use hotlaunch_report::write_html;
use std::path::{Path, PathBuf};
use std::process::Command;

const CHROMIUM: &str = "/usr/bin/chromium";
const SIZE: (u32, u32) = (1400, 3000);

/// Width and height from a PNG's IHDR chunk.
fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.len() < 24 || &bytes[..8] != b"\x89PNG\r\n\x1a\n" || &bytes[12..16] != b"IHDR" {
        return None;
    }
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    Some((be(&bytes[16..20]), be(&bytes[20..24])))
}

fn screenshot(html: &Path, png: &Path, profile: &Path) -> std::process::Output {
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
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("--window-size={},{}", SIZE.0, SIZE.1))
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("run chromium")
}

#[test]
fn html_report_renders_in_chromium() {
    if !Path::new(CHROMIUM).exists() {
        println!("skipped: {CHROMIUM} not installed");
        return;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-screenshot");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let html = dir.join("index.html");
    write_html(&synthetic_report(42, 400), &html).unwrap();
    let png = dir.join("report.png");
    let out = screenshot(&html, &png, &dir.join("profile"));
    let bytes = std::fs::read(&png).unwrap_or_else(|e| {
        panic!(
            "no screenshot ({e}); chromium exit {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(png_size(&bytes), Some(SIZE));
    // A blank page of this size compresses to a few KiB; text and six plots do not.
    assert!(
        bytes.len() > 100_000,
        "screenshot suspiciously small: {} bytes",
        bytes.len()
    );
    println!("screenshot: {} ({} bytes)", png.display(), bytes.len());
}
