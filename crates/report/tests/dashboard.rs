//! The comparison dashboard: its content without a browser, and rendered in headless Chromium
//! (DOM and screenshot) — the Pareto plot and the CDFs must exist with their labels.
//!
//! Chromium (`/usr/bin/chromium`, Debian packages `chromium` and `chromium-driver`; `.ci/run`
//! installs them) is REQUIRED: without it the rendering test fails, so CI cannot pass silently.
//! A developer without Chromium can set `HOTLAUNCH_SKIP_CHROMIUM=1` to skip that one test (it
//! then prints why).

use hotlaunch_report::compare::to_json_string;
use hotlaunch_report::dashboard::{dashboard_string, write_dashboard};
use hotlaunch_report::sample::synthetic_compare;
use std::path::{Path, PathBuf};

mod support;
use support::{chromium, png_size, read_screenshot, CHROMIUM};

const SIZE: (u32, u32) = (1400, 6000);
const PARETO_TITLE: &str = "Pareto: hot launch p90 vs mean cached apps";
const CDF_TITLE: &str = "Hot-launch latency CDFs";

/// The `<svg>…</svg>` element whose `<title>` is `title`.
fn svg_with_title<'a>(dom: &'a str, title: &str) -> Option<&'a str> {
    let at = dom.find(&format!("<title>{title}</title>"))?;
    let start = dom[..at].rfind("<svg")?;
    let end = at + dom[at..].find("</svg>")? + "</svg>".len();
    Some(&dom[start..end])
}

/// The text contents of an SVG's `<text>` elements, trimmed.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

/// Every check of the two plots, on an HTML/DOM string.
fn check_plots(dom: &str, labels: &[&str]) {
    let pareto = svg_with_title(dom, PARETO_TITLE).expect("a Pareto svg with its title");
    let pareto_texts = texts(pareto);
    for text in [
        "mean cached apps (apps; higher is better)",
        "hot launch p90 (ms; lower is better)",
    ] {
        assert!(
            pareto_texts.iter().any(|t| t == text),
            "Pareto axis label {text:?} missing"
        );
    }
    assert!(pareto.contains("<circle"), "Pareto points missing");
    for l in labels {
        // In the legend and next to its point.
        let n = pareto_texts.iter().filter(|t| t == l).count();
        assert_eq!(n, 2, "Pareto label {l:?}: {pareto_texts:?}");
    }
    let cdf = svg_with_title(dom, CDF_TITLE).expect("a CDF svg with its title");
    let cdf_texts = texts(cdf);
    assert!(
        cdf_texts.iter().any(|t| t.starts_with("hot launch latency (ms")),
        "CDF x label missing: {cdf_texts:?}"
    );
    assert!(
        cdf_texts.iter().any(|t| t == "fraction of hot launches"),
        "CDF y label missing"
    );
    assert!(
        cdf.matches("<polyline").count() >= labels.len(),
        "one CDF line per row"
    );
    for l in labels {
        assert!(cdf_texts.iter().any(|t| t == l), "CDF legend {l:?} missing");
    }
}

#[test]
fn dashboard_has_every_section_and_is_byte_stable() {
    let r = synthetic_compare(5);
    let html = dashboard_string(&r).unwrap();
    assert_eq!(html, dashboard_string(&synthetic_compare(5)).unwrap());
    assert_eq!(
        to_json_string(&r).unwrap(),
        to_json_string(&synthetic_compare(5)).unwrap()
    );
    check_plots(&html, &["android", "android-swap", "fleet", "marvin"]);
    for title in [
        "Heat map: per-app hot launch p90",
        "Memory-management CPU by category",
        "Energy, flash wear, zram use and unusable index",
        "Kills by reason",
    ] {
        assert!(
            html.contains(&format!("<title>{title}</title>")),
            "{title} missing"
        );
    }
    for id in ["pareto", "hot-launch-cdfs", "figures", "per-app", "ablation"] {
        assert!(html.contains(&format!("id=\"{id}\"")), "section {id} missing");
    }
    // No unified row in this comparison: the ablation slot says so instead of an empty table.
    assert!(html.contains("No <code>unified</code> row"));
    assert!(!html.contains("<script"));
}

#[test]
fn dashboard_renders_in_chromium_with_pareto_and_cdfs() {
    if !Path::new(CHROMIUM).exists() {
        if std::env::var_os("HOTLAUNCH_SKIP_CHROMIUM").is_some_and(|v| v == "1") {
            println!("skipped (HOTLAUNCH_SKIP_CHROMIUM=1): {CHROMIUM} not installed");
            return;
        }
        panic!(
            "{CHROMIUM} not installed: the dashboard screenshot check needs it \
             (apt-get install chromium chromium-driver; .ci/run does). \
             On a developer machine without it, HOTLAUNCH_SKIP_CHROMIUM=1 skips this test."
        );
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dashboard-screenshot");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let html = dir.join("index.html");
    write_dashboard(&synthetic_compare(5), &html).unwrap();
    let profile = format!("--user-data-dir={}", dir.join("profile").display());
    let url = format!("file://{}", html.display());

    // The DOM as Chromium parsed it: the SVG elements, their titles and text survive parsing.
    let out = chromium(&[profile.clone(), "--dump-dom".into(), url.clone()]);
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        dom.contains("<svg"),
        "chromium gave no DOM (exit {:?}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    check_plots(&dom, &["android", "android-swap", "fleet", "marvin"]);

    // The screenshot at 1400 px wide is a real picture (a blank page compresses to a few KiB).
    let png = dir.join("dashboard.png");
    let out = chromium(&[
        profile,
        format!("--screenshot={}", png.display()),
        format!("--window-size={},{}", SIZE.0, SIZE.1),
        url,
    ]);
    let bytes = read_screenshot(&png, &out);
    assert_eq!(png_size(&bytes), Some(SIZE));
    assert!(
        bytes.len() > 200_000,
        "screenshot suspiciously small: {} bytes",
        bytes.len()
    );
    println!("screenshot: {} ({} bytes)", png.display(), bytes.len());
}
