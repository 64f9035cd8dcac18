//! Optional: render the example HTML report in headless Chromium and check the screenshot is a real
//! picture. Skipped (with a message) when `/usr/bin/chromium` is not installed
//! (`apt-get install chromium` on Debian).

use hotlaunch_report::sample::synthetic_report;
use hotlaunch_report::write_html;
use std::path::{Path, PathBuf};

mod support;
use support::{chromium, png_size, read_screenshot, CHROMIUM};

const SIZE: (u32, u32) = (1400, 3000);

fn screenshot(html: &Path, png: &Path, profile: &Path) -> std::process::Output {
    chromium(&[
        format!("--user-data-dir={}", profile.display()),
        format!("--screenshot={}", png.display()),
        format!("--window-size={},{}", SIZE.0, SIZE.1),
        format!("file://{}", html.display()),
    ])
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
    let bytes = read_screenshot(&png, &out);
    assert_eq!(png_size(&bytes), Some(SIZE));
    // A blank page of this size compresses to a few KiB; text and six plots do not.
    assert!(
        bytes.len() > 100_000,
        "screenshot suspiciously small: {} bytes",
        bytes.len()
    );
    println!("screenshot: {} ({} bytes)", png.display(), bytes.len());
}
