//! App profiles and the page-access model of apps (DESIGN.md §3.11).
//!
//! An [`AppProfile`] is what the simulator knows about one Android app: how its anonymous
//! footprint grows (Ariadne Table 1: YouTube 177→358 MB, Twitter 182→273, Firefox 560→716,
//! Google Earth 273→429, BangDream 326→821 at 10 s → 5 min), how much of it is Java heap
//! (Fleet §A: Candy Crush only 4%), its mapped file pages, the CPU work of a cold and of a hot
//! launch (Fleet Fig. 2: Twitter hot 273 ms vs cold 2390 ms; MemSaver Fig. 1: ideal hot ~100–120
//! ms, cold mostly > 400 ms), its activity contexts (MemSaver Table 1), its compressibility mix
//! (mapped to [`content::SynthMix`]) and the parameters of its access behaviour, which
//! [`access::AccessModel`] turns into page sets:
//!
//! * the **launch set** touched by a hot launch, per context: consecutive launches of the same
//!   context overlap by `same_context_overlap` (MemSaver Fig. 3a/Fig. 10: ~75–80%; Ariadne Fig. 5:
//!   70% hot-data similarity), launches of different contexts by less (`cross_context_overlap`,
//!   MemSaver Fig. 8), made of runs of adjacent pages (Ariadne Table 3: P(next page adjacent)
//!   0.61–0.86);
//! * the **foreground working set**, touched while the app is used (⊇ the launch sets);
//! * **B1**, the transition working set touched in the ~5 s after the app leaves the foreground,
//!   and **B2**, the stable background working set, with B1 covering ~95% of B2 (MemSaver §3.3,
//!   Fig. 7).
//!
//! Apps also write their data files ([`writes`]: SQLite databases, `shared_prefs`, caches).
//!
//! Profiles are TOML files (`deny_unknown_fields` everywhere); the built-in ones live in
//! `crates/apps/profiles/` with a source comment on every value. Units are in the field names:
//! `_mb` is MiB, `_ms` milliseconds, `_seconds`/`_s` seconds; fractions are in [0, 1].
//! Every value is range-checked after parsing; errors are one line naming the file, the line,
//! the dotted key and what was expected (DESIGN.md §2 principle 5). Loading never panics.

pub mod access;
pub mod era;
mod error;
mod java_workload;
mod validate;
use validate::Validator;
pub mod ui;
pub mod writes;
pub use device::tomlerr;

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use access::{AccessModel, AppLayout, Region};
pub use era::{EraOverride, ANDROID_RELEASES};
pub use error::AppError;
pub use java_workload::{LaunchBiasSection, LinkedSection};
pub use ui::{default_gpu_cache_fill, UiSection};
pub use writes::WriteSection;

/// Bytes per page (4 KiB).
pub const PAGE_SIZE: u64 = 4096;
/// Pages per MiB.
pub const PAGES_PER_MB: f64 = 256.0;

/// One app: identity, footprint, launch costs, contexts, access behaviour, compressibility.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppProfile {
    /// Short name used in scenarios and reports, e.g. `YouTube` (matched case-insensitively).
    /// Non-empty, at most 64 characters, no whitespace or control characters.
    pub name: String,
    /// Android package name, e.g. `com.google.android.youtube`. Non-empty.
    pub package: String,
    /// Kind of app (free text, e.g. `multimedia`, `social`, `game`, `browser`, `tool`). Non-empty.
    pub category: String,
    /// Activity contexts a hot launch can resume in (MemSaver Table 1, e.g. YouTube `video`,
    /// `shorts`). 1..=16 distinct non-empty names; index 0 is the default context.
    pub contexts: Vec<String>,
    /// Number of threads of the app process (each has a kernel stack, an order-1 allocation:
    /// ISMM'15 §3). 1..=10000.
    pub threads: u32,
    /// Memory footprint.
    pub footprint: Footprint,
    /// CPU work of launches (excluding memory stalls, which the simulator adds).
    pub launch: LaunchCosts,
    /// Parameters of the page-access model ([`access::AccessModel`]).
    pub access: AccessParams,
    /// Compressibility mix of the anonymous pages (fractions of pages, summing to 1).
    pub compressibility: Compressibility,
    /// The Java heap's objects and allocation behaviour (optional; defaults below).
    #[serde(default)]
    pub java: JavaSection,
    /// `[era."<android release>"]` (optional): the sizes of this app on an older or newer phone
    /// generation, keyed by the Android release the paper's phone ran (`"10"` for Fleet's Pixel 3,
    /// `"4.2"` for ISMM'15's Nexus 10, …; one of [`ANDROID_RELEASES`]). The base sections hold the
    /// Android 14 / Pixel 7 sizes (Ariadne Table 1); [`AppProfile::for_release`] applies the table
    /// of the device's release, if the profile has one. See [`era`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub era: BTreeMap<String, EraOverride>,
    /// I/O-buffer demand of the app relative to the scenario's `[io_buffers]`: every ION buffer
    /// the app allocates at a launch is `io_buffer_scale` times the scenario's `mb` (camera and
    /// video apps hold larger capture/decode buffers than a plain UI's display buffers). Optional;
    /// default 1.0 (the scenario's size, ISMM'15 §6.3's mean over its 22 apps). (0, 100].
    #[serde(default = "one")]
    pub io_buffer_scale: f64,
    /// `[writes]` (optional): the app's own file writes. Absent: the app writes no file.
    #[serde(default)]
    pub writes: WriteSection,
    /// `[ui]` (optional): what the app releases when its UI is hidden ([`ui`]).
    #[serde(default, skip_serializing_if = "is_default_ui")]
    pub ui: UiSection,
}

fn is_default_ui(u: &UiSection) -> bool {
    *u == UiSection::default()
}

fn one() -> f64 {
    1.0
}

/// `[java]`: what the app's Java heap holds and how its code allocates. Every key is optional.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JavaSection {
    /// Long-lived objects of the heap (sized to `anon × java_heap_share`):
    /// - `"generated"` (default): a generated object graph, sizes shaped after Fleet Fig. 7, depth
    ///   profile after Fleet §4.2 (`runtime::gen`);
    /// - `"fleet-512"` / `"fleet-2048"`: Fleet §7.1's synthetic apps (objects of 512 / 2048 B);
    /// - `"marvin-4076"` / `"marvin-4076-1m"`: the same with the artifact's `byte[4076]` (one
    ///   page with its header);
    /// - `"marvin-4k"` / `"marvin-4k-1m"`: Marvin §8.3's apps (4 KiB arrays; or an even mix by
    ///   bytes of 4 KiB and 1 MiB arrays);
    /// - the path of an HPROF heap dump (`*.hprof`, HotSpot 1.0.2 or Android 1.0.3; relative to the
    ///   profile file, or to the working directory for built-in profiles): its objects, sizes,
    ///   references and roots, scaled onto the access model's Java pages.
    pub heap: String,
    /// `android:largeHeap`: the growth limit is the whole heap (`dalvik.vm.heapsize`) instead of
    /// `dalvik.vm.heapgrowthlimit`.
    pub large_heap: bool,
    /// Short-lived allocation in the foreground, MB/s (estimate, `runtime::app`). [0, 1000].
    pub fg_alloc_mb_per_s: f64,
    /// Short-lived allocation in the background, MB/s (estimate). [0, 1000].
    pub bg_alloc_mb_per_s: f64,
    /// Short-lived allocation of one hot launch, MB (estimate). [0, 4096].
    pub launch_alloc_mb: f64,
    /// Long-lived MB replaced every `churn_period_s`, in every app state (Marvin §8.3: 20 MB
    /// every 5 s). [0, 4096].
    pub churn_mb: f64,
    /// Period of churn rounds, seconds. (0, 86400].
    pub churn_period_s: f64,
    /// Every churn round replaces the same objects (Marvin's artifact deletes and recreates fixed
    /// buckets) rather than random ones. Default false.
    pub churn_same: bool,
    /// ART's heap growth multiplier in the foreground for this app (`-XX:ForegroundHeapGrowth
    /// Multiplier`), overriding the device release's (3.0 on Android 8+ with CC). [1, 100].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub foreground_heap_growth_multiplier: Option<f64>,
    /// ART's heap growth multiplier in the background for this app, overriding the device's
    /// (1.0). [1, 100].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background_heap_growth_multiplier: Option<f64>,
    /// `[java.linked]`: medium-lived objects linked into the graph ([`LinkedSection`]); absent
    /// (default): none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linked: Option<LinkedSection>,
    /// `[java.launch_bias]`: hot launches re-read near-root and young objects
    /// ([`LaunchBiasSection`]); absent (default): the access model's pages as they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_bias: Option<LaunchBiasSection>,
}

impl Default for JavaSection {
    fn default() -> Self {
        Self {
            heap: "generated".into(),
            large_heap: false,
            fg_alloc_mb_per_s: 1.0,
            bg_alloc_mb_per_s: 0.016,
            launch_alloc_mb: 2.0,
            churn_mb: 0.0,
            churn_period_s: 5.0,
            churn_same: false,
            foreground_heap_growth_multiplier: None,
            background_heap_growth_multiplier: None,
            linked: None,
            launch_bias: None,
        }
    }
}

/// The built-in heap kinds of [`JavaSection::heap`] (anything else is an HPROF path).
pub const BUILTIN_HEAPS: &[&str] = &[
    "generated",
    "fleet-512",
    "fleet-2048",
    "marvin-4k",
    "marvin-4k-1m",
    "marvin-4076",
    "marvin-4076-1m",
];

/// `[footprint]`: anonymous and file-backed memory of the app.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Footprint {
    /// Anonymous memory (MiB) ~10 s after a cold launch (Ariadne Table 1 "10s" row). (0, 65536].
    pub anon_mb_start: f64,
    /// Anonymous memory (MiB) after ~5 min of use (Ariadne Table 1 "5mins" row): the steady
    /// footprint the page-space layout is sized for. ≥ `anon_mb_start`, ≤ 65536.
    pub anon_mb_steady: f64,
    /// Seconds of foreground use after which the footprint reaches `anon_mb_steady`; it grows
    /// linearly from `anon_mb_start` in between ([`AppProfile::anon_mb_at`]). (0, 10^6].
    pub growth_seconds: f64,
    /// Fraction of the anonymous memory that is Java (ART) heap; the rest is native heap,
    /// stacks, graphics buffers (Fleet §A: Candy Crush 4%). [0, 1].
    pub java_heap_share: f64,
    /// Mapped file pages (MiB): code (APK dex/oat, .so), resources, fonts that the app touches.
    /// [0, 65536].
    pub file_mb: f64,
}

/// `[launch]`: CPU work of launches on an otherwise idle device with everything in DRAM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchCosts {
    /// App initialisation work of a cold launch in ms (after process creation, excluding memory
    /// stalls and the device's zygote fork): bind application, inflate the first activity, load
    /// first data, first frame. (0, 10^6].
    pub cold_launch_ms: f64,
    /// Resume work of a hot launch in ms when every page it touches is in DRAM (onRestart →
    /// onResume → first frame). (0, `cold_launch_ms`].
    pub hot_launch_ms: f64,
}

/// `[access]`: parameters of the page-access model. Fractions of sets are of the app's whole
/// steady page space (anonymous steady footprint + file pages).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessParams {
    /// Size of a hot-launch set as a fraction of the page space (MemSaver Fig. 3a: 30–45% of
    /// RSS). (0, 1].
    pub launch_set_fraction: f64,
    /// Size of the foreground working set (pages touched while the app is used); it contains
    /// every launch set of every context. [`launch_set_fraction`, 1], and large enough for the
    /// launch sets' cores and varying pool (checked; the error gives the minimum).
    ///
    /// [`launch_set_fraction`]: AccessParams::launch_set_fraction
    pub foreground_ws_fraction: f64,
    /// Size of B1, the transition working set touched in the ~5 s after the app leaves the
    /// foreground (MemSaver §3.1, §3.3). (0, 1].
    pub b1_fraction: f64,
    /// Size of B2, the stable background working set (MemSaver §3.3, Fig. 5). [0, 1], and
    /// `b2_fraction × b1_covers_b2 ≤ b1_fraction`.
    pub b2_fraction: f64,
    /// |H1 ∩ H2| / |H| for two hot launches of the same context (MemSaver Fig. 3a, Fig. 10:
    /// ~0.75–0.80). [0, 1).
    pub same_context_overlap: f64,
    /// |H1 ∩ H2| / |H| for hot launches of two different contexts (MemSaver Fig. 8, estimated).
    /// [0, `same_context_overlap`].
    pub cross_context_overlap: f64,
    /// |B1 ∩ B2| / |B2| (MemSaver Fig. 7: ~0.95). [0, 1].
    pub b1_covers_b2: f64,
    /// Probability that the next page a launch touches is the page after the previous one
    /// (Ariadne Table 3, "2 consecutive": 0.61–0.86). [0, 0.99].
    pub adjacency: f64,
    /// Fraction of a launch set's pages that are file-backed (code, resources). [0, 1].
    pub file_launch_share: f64,
}

/// `[compressibility]`: fractions of the anonymous pages by content kind; see
/// `content::synth` for what each kind contains. Each in [0, 1], summing to 1 (±0.01).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Compressibility {
    /// All-zero pages.
    pub zero: f64,
    /// Pages filled with one repeated non-zero word.
    pub same_filled: f64,
    /// Pointer-rich object pages (managed or native heap).
    pub object: f64,
    /// Text/string pages.
    pub text: f64,
    /// Random (already compressed: images, media, crypto) pages.
    pub incompressible: f64,
}

const BUILTINS: &[(&str, &str)] = &[
    ("YouTube", include_str!("../profiles/youtube.toml")),
    ("Twitter", include_str!("../profiles/twitter.toml")),
    ("Firefox", include_str!("../profiles/firefox.toml")),
    ("GoogleEarth", include_str!("../profiles/googleearth.toml")),
    ("BangDream", include_str!("../profiles/bangdream.toml")),
    ("TikTok", include_str!("../profiles/tiktok.toml")),
    ("Chrome", include_str!("../profiles/chrome.toml")),
    ("Reddit", include_str!("../profiles/reddit.toml")),
    ("SubwaySurfers", include_str!("../profiles/subwaysurfers.toml")),
    ("Facebook", include_str!("../profiles/facebook.toml")),
    ("Instagram", include_str!("../profiles/instagram.toml")),
    ("Spotify", include_str!("../profiles/spotify.toml")),
    ("AngryBirds", include_str!("../profiles/angrybirds.toml")),
    ("CandyCrush", include_str!("../profiles/candycrush.toml")),
    ("GoogleMaps", include_str!("../profiles/googlemaps.toml")),
    ("Gmail", include_str!("../profiles/gmail.toml")),
    ("WhatsApp", include_str!("../profiles/whatsapp.toml")),
    ("Camera", include_str!("../profiles/camera.toml")),
    ("Photos", include_str!("../profiles/photos.toml")),
    ("Messages", include_str!("../profiles/messages.toml")),
    ("Netflix", include_str!("../profiles/netflix.toml")),
    ("Edge", include_str!("../profiles/edge.toml")),
    ("Twitch", include_str!("../profiles/twitch.toml")),
    ("AmazonShop", include_str!("../profiles/amazonshop.toml")),
    ("Discord", include_str!("../profiles/discord.toml")),
    ("EmptyActivity", include_str!("../profiles/emptyactivity.toml")),
    ("Fleet512", include_str!("../profiles/fleet512.toml")),
    ("Fleet2048", include_str!("../profiles/fleet2048.toml")),
    ("Marvin4K", include_str!("../profiles/marvin4k.toml")),
    ("Marvin4K1M", include_str!("../profiles/marvin4k1m.toml")),
    (
        "Marvin4KBuckets",
        include_str!("../profiles/marvin4k-buckets.toml"),
    ),
    (
        "Marvin4K1MBuckets",
        include_str!("../profiles/marvin4k1m-buckets.toml"),
    ),
];

/// Names of the built-in profiles, in a fixed order.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTINS.iter().map(|(n, _)| *n).collect()
}

/// The TOML text of a built-in profile (case-insensitive name), if it is one.
pub fn builtin_toml(name: &str) -> Option<&'static str> {
    BUILTINS
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, t)| *t)
}

fn mb_to_pages(mb: f64) -> u32 {
    (mb * PAGES_PER_MB).round().clamp(0.0, u32::MAX as f64) as u32
}

impl JavaSection {
    /// The HPROF file of `heap`, if it is not a built-in heap kind.
    pub fn hprof_path(&self) -> Option<&Path> {
        (!BUILTIN_HEAPS
            .iter()
            .any(|b| b.eq_ignore_ascii_case(self.heap.trim())))
        .then(|| Path::new(&self.heap))
    }
}

impl AppProfile {
    /// Parses and validates a profile from TOML text; `origin` names the source in errors.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Self, AppError> {
        let profile: AppProfile = toml::from_str(text).map_err(|e| {
            let (line, key) = tomlerr::locate(text, e.message(), e.span());
            AppError::Parse {
                origin: tomlerr::one_line(origin),
                line,
                key,
                message: tomlerr::one_line(e.message()),
            }
        })?;
        profile.validate_in(text, origin)?;
        Ok(profile)
    }

    /// Reads, parses and validates a profile file. A relative HPROF path in `java.heap` is made
    /// relative to the file's directory.
    pub fn load(path: &Path) -> Result<Self, AppError> {
        let origin = path.display().to_string();
        let text = engine::fsio::read_capped_string(path, engine::fsio::FileKind::App).map_err(|e| {
            AppError::Io {
                origin: tomlerr::one_line(&origin),
                message: tomlerr::one_line(&e.to_string()),
            }
        })?;
        let mut p = Self::from_toml_str(&text, &origin)?;
        let written = p.java.heap.clone();
        p.anchor_heap_path(path);
        p.check_heap_file(&written, &text, &origin)?;
        Ok(p)
    }

    /// A `java.heap` that is not a built-in heap must name an existing file: a misspelt built-in
    /// (`fleet-4096`) is reported as such, at its line, rather than as a missing dump later.
    fn check_heap_file(&self, written: &str, text: &str, origin: &str) -> Result<(), AppError> {
        match self.java.hprof_path() {
            Some(h) if std::fs::metadata(h).is_err() => Err(Validator {
                text,
                origin,
                prefix: "",
            }
            .err(
                "java",
                "heap",
                &format!(
                    "one of {} or the path of an existing .hprof file",
                    BUILTIN_HEAPS.join(", ")
                ),
                &format!("{written:?} (no such file: {})", h.display()),
            )),
            _ => Ok(()),
        }
    }

    /// Make a relative HPROF path in `java.heap` relative to the directory of `profile_path`.
    fn anchor_heap_path(&mut self, profile_path: &Path) {
        if self.java.hprof_path().is_some_and(|h| h.is_relative()) {
            if let Some(dir) = profile_path.parent() {
                self.java.heap = dir.join(&self.java.heap).display().to_string();
            }
        }
    }

    /// A built-in profile by name, case-insensitive (`youtube`, `YouTube`). The error lists the
    /// known names.
    pub fn builtin(name: &str) -> Result<Self, AppError> {
        match BUILTINS.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
            Some((n, text)) => Self::from_toml_str(text, &format!("{}.toml", n.to_ascii_lowercase())),
            None => Err(AppError::UnknownBuiltin {
                name: tomlerr::one_line(name),
                known: builtin_names().join(", "),
                io: None,
            }),
        }
    }

    /// A built-in profile if `name_or_path` is a built-in name, otherwise the TOML file at that
    /// path. When it is neither, the error lists the built-in names and the file error.
    pub fn resolve(name_or_path: &str) -> Result<Self, AppError> {
        if builtin_toml(name_or_path).is_some() {
            return Self::builtin(name_or_path);
        }
        match engine::fsio::read_capped_string(Path::new(name_or_path), engine::fsio::FileKind::App) {
            Ok(text) => {
                let mut p = Self::from_toml_str(&text, name_or_path)?;
                let written = p.java.heap.clone();
                p.anchor_heap_path(Path::new(name_or_path));
                p.check_heap_file(&written, &text, name_or_path)?;
                Ok(p)
            }
            Err(e) => Err(AppError::UnknownBuiltin {
                name: tomlerr::one_line(name_or_path),
                known: builtin_names().join(", "),
                io: Some(tomlerr::one_line(&e.to_string())),
            }),
        }
    }

    /// Checks every value (done by the constructors; use after editing a profile in code).
    pub fn validate(&self) -> Result<(), AppError> {
        self.validate_in("", "<in memory>")
    }

    /// The compressibility mix as the content generator's [`content::SynthMix`] (default
    /// `classes` and `vocabulary`).
    pub fn synth_mix(&self) -> content::SynthMix {
        let c = &self.compressibility;
        content::SynthMix {
            zero: c.zero,
            same_filled: c.same_filled,
            object: c.object,
            text: c.text,
            incompressible: c.incompressible,
            ..content::SynthMix::default()
        }
    }

    /// Anonymous footprint (MiB) after `age_s` seconds of foreground use since a cold launch:
    /// linear from `anon_mb_start` (at 0 s) to `anon_mb_steady` (at `growth_seconds`), then flat.
    pub fn anon_mb_at(&self, age_s: f64) -> f64 {
        let f = &self.footprint;
        let x = if age_s.is_finite() {
            (age_s / f.growth_seconds).clamp(0.0, 1.0)
        } else {
            1.0
        };
        f.anon_mb_start + (f.anon_mb_steady - f.anon_mb_start) * x
    }

    /// Anonymous pages at the start (≈10 s after a cold launch).
    pub fn anon_pages_start(&self) -> u32 {
        mb_to_pages(self.footprint.anon_mb_start)
    }

    /// Anonymous pages at the steady footprint.
    pub fn anon_pages_steady(&self) -> u32 {
        mb_to_pages(self.footprint.anon_mb_steady)
    }

    /// File-backed pages.
    pub fn file_pages(&self) -> u32 {
        mb_to_pages(self.footprint.file_mb)
    }

    /// Index of a context by name (case-insensitive).
    pub fn context_index(&self, name: &str) -> Option<usize> {
        self.contexts.iter().position(|c| c.eq_ignore_ascii_case(name))
    }

    /// This profile with the sizes of the phone generation running Android `release` (the
    /// `[era."<release>"]` table, if the profile has one; otherwise unchanged). `None` (a device
    /// without a known release) keeps the base sizes.
    pub fn for_release(&self, release: Option<&str>) -> AppProfile {
        let mut p = self.clone();
        if let Some(ov) = release.and_then(|r| self.era.get(r)) {
            ov.apply(&mut p);
        }
        p
    }

    /// The release whose table [`AppProfile::for_release`] would apply, if any.
    pub fn era_for<'a>(&self, release: Option<&'a str>) -> Option<&'a str> {
        release.filter(|r| self.era.contains_key(*r))
    }
}
