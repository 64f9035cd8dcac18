//! Scenario files: device + apps + workload + run options, in TOML (format: `docs/scenario.md`).
//!
//! [`Scenario::from_toml_str`] parses and checks a scenario on its own (keys, ranges, workload
//! kind and its keys, event shapes); [`Scenario::resolve`] loads the device and app profiles
//! (built-in names, or paths relative to the scenario file) and generates the user's
//! [`Timeline`] into a [`ResolvedScenario`], checking that every event names an app of the
//! scenario and an existing context. Every error is one line naming the scenario file, the line
//! when known, the dotted key and what was expected; nothing panics on any input.
//!
//! Built-in scenarios live in `crates/workload/scenarios/*.toml` ([`builtin_names`]).

use std::path::{Path, PathBuf};

use apps::{tomlerr, AppError, AppProfile};
use device::{DeviceError, DeviceProfile};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::policy_tables;
pub use crate::policy_tables::{ParamEntry, PolicyTable, ScalarValue};
use crate::user::{self, LiveLabParams, ProtocolParams, Timeline, TimelineBuilder};

mod error;
mod workload;
pub use error::ScenarioError;
use workload::{build_timeline, parse_workload};

/// Which swap devices a run gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SwapMode {
    /// No swap at all.
    #[serde(rename = "none")]
    None,
    /// zram only (stock Android).
    #[serde(rename = "zram")]
    Zram,
    /// A flash swap partition/file only (Fleet's and Marvin's "swap").
    #[serde(rename = "flash")]
    Flash,
    /// zram first, then flash (Linux swap priorities / zram writeback).
    #[serde(rename = "zram+flash")]
    ZramFlash,
}

impl SwapMode {
    /// Parses `none`, `zram`, `flash`, `zram+flash`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "none" => Some(SwapMode::None),
            "zram" => Some(SwapMode::Zram),
            "flash" => Some(SwapMode::Flash),
            "zram+flash" => Some(SwapMode::ZramFlash),
            _ => None,
        }
    }

    /// The scenario-file spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SwapMode::None => "none",
            SwapMode::Zram => "zram",
            SwapMode::Flash => "flash",
            SwapMode::ZramFlash => "zram+flash",
        }
    }
}

/// A named run configuration of a scenario (e.g. "with swap" vs "without swap"): each variant is
/// run on the same workload; unset fields inherit the scenario's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Variant {
    /// Variant name (reports, checks).
    pub name: String,
    /// Policy to run (else the scenario's first policy).
    pub policy: Option<String>,
    /// Swap mode (else the scenario's).
    pub swap: Option<SwapMode>,
    /// zram disk size in MiB (else the scenario's / the device's).
    pub zram_mb: Option<u64>,
    /// `all_in_dram = true`: everything stays in memory (the papers' "DRAM" runs, e.g. Ariadne
    /// Fig. 2): no swap device and no cached-app compaction, whatever the device's release.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub all_in_dram: bool,
    /// `lmk_minfree`: the low-memory killer's six minfree thresholds in pages for this variant
    /// (`/sys/module/lowmemorykiller/parameters/minfree`; the adj slots stay the release's). Marvin's
    /// "Android + swap file" baseline writes `0,0,0,0,0,0` (marvin-code `enable-linux-swap.pl`):
    /// the driver never kills. The in-kernel driver and minfree lmkd read it; PSI lmkd does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lmk_minfree: Option<[u64; 6]>,
    /// `[variants.params.<policy>]`: parameter values for this variant's runs (override the
    /// scenario's `[policy.<policy>]` key by key).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<PolicyTable>,
    /// 1-based line of its `policy` key, when known (for errors about the policy's name).
    #[serde(skip)]
    pub policy_line: Option<usize>,
}

/// The workload section, checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum WorkloadSpec {
    /// LiveLab-like sessions.
    LiveLab { launches: usize, params: LiveLabParams },
    /// Launch apps one after another (`order`: app names; empty = all apps in `[apps]` order).
    LaunchOneMore {
        order: Vec<String>,
        rounds: usize,
        params: ProtocolParams,
    },
    /// Relaunch each target after `n_between` other apps, `repeats` times.
    RelaunchAfter {
        targets: Vec<String>,
        others: Vec<String>,
        n_between: usize,
        repeats: usize,
        params: ProtocolParams,
    },
    /// All apps in turn for `rounds` rounds.
    RoundRobin {
        order: Vec<String>,
        rounds: usize,
        params: ProtocolParams,
    },
    /// An explicit event list, repeated `repeat` times.
    Script { events: Vec<ScriptEvent>, repeat: usize },
}

/// One event of a script, as written (names resolved at [`Scenario::resolve`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScriptEvent {
    /// Explicit time (s since start); must not go back in time.
    pub at_s: Option<f64>,
    /// The action.
    pub kind: ScriptAction,
    /// 1-based line in the scenario file, when known (for error messages).
    #[serde(skip)]
    pub line: Option<usize>,
}

/// The action of a script event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum ScriptAction {
    /// `launch = "App"`, optional `context`, then `use_s` seconds of use.
    Launch {
        app: String,
        context: Option<String>,
        use_s: f64,
    },
    /// `home = true`, then `wait_s` seconds.
    Home { wait_s: f64 },
    /// `alloc_mb = N` by `app` (default: the foreground app), then `wait_s`.
    Alloc {
        app: Option<String>,
        mb: f64,
        wait_s: f64,
    },
    /// `kill = "App"`, then `wait_s`.
    Kill { app: String, wait_s: f64 },
    /// `wait_s = N` alone: time passes.
    Wait { wait_s: f64 },
}

/// A parsed, checked scenario (device and apps not yet loaded).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    /// Scenario name.
    pub name: String,
    /// One-paragraph description.
    pub description: String,
    /// Master seed of the run (workload generation and every other RNG stream). The CLI's
    /// `--seed` overrides it before [`Scenario::resolve`].
    pub seed: u64,
    /// Device: built-in name or path (relative to the scenario file).
    pub device: String,
    /// Swap mode (None: the policy's default).
    pub swap: Option<SwapMode>,
    /// zram disk size override, MiB (None: the device's).
    pub zram_mb: Option<u64>,
    /// Flash swap size override, MiB (None: the device's `swap.flash_swap_mb`), e.g. the swap
    /// file Marvin enabled on a Pixel XL that has none by default.
    pub flash_mb: Option<u64>,
    /// Default policies to run (empty: the CLI's default).
    pub policies: Vec<String>,
    /// Variants to run (empty: just the policies).
    pub variants: Vec<Variant>,
    /// `[policy.<name>]`: parameter values for every run of policy `<name>`.
    pub policy_params: Vec<PolicyTable>,
    /// App names or paths, in order (the order is also the popularity rank for `livelab`).
    pub apps: Vec<String>,
    /// The workload.
    pub workload: WorkloadSpec,
    /// `[io_buffers]`: I/O-buffer demand of foreground apps (None: no I/O buffers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_buffers: Option<IoBufferSpec>,
    /// `[android]`: overrides of the device's `[android]` keys (release, lmkd mode, compaction,
    /// heap growth multipliers) for every run of the scenario.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub android: Option<device::AndroidProfile>,
    /// `[java.linked]`: medium-lived linked allocation ([`apps::LinkedSection`]) for every app
    /// whose profile has no `[java.linked]` of its own (the papers' workloads; None: the
    /// profiles').
    #[serde(skip_serializing_if = "Option::is_none")]
    pub java_linked: Option<apps::LinkedSection>,
    /// `[java.launch_bias]`: the same for [`apps::LaunchBiasSection`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub java_launch_bias: Option<apps::LaunchBiasSection>,
    /// File name or path the scenario came from (for errors).
    pub origin: String,
    /// Directory relative paths are resolved against (None for built-ins).
    #[serde(skip)]
    pub base_dir: Option<PathBuf>,
    #[serde(skip)]
    text: String,
}

/// A scenario with its device and apps loaded and its user timeline generated: what the
/// framework runs.
#[derive(Debug, Clone, Serialize)]
pub struct ResolvedScenario {
    /// Scenario name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Master seed.
    pub seed: u64,
    /// The device profile.
    pub device: DeviceProfile,
    /// Swap mode (None: the policy decides).
    pub swap: Option<SwapMode>,
    /// zram size override (MiB).
    pub zram_mb: Option<u64>,
    /// Flash swap size override (MiB).
    pub flash_mb: Option<u64>,
    /// Default policies.
    pub policies: Vec<String>,
    /// 1-based line of the `policies` key, when known (for errors about a policy's name).
    #[serde(skip)]
    pub policies_line: Option<usize>,
    /// Variants.
    pub variants: Vec<Variant>,
    /// `[policy.<name>]` parameter tables (checked against the policies when runs are planned).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub policy_params: Vec<PolicyTable>,
    /// File name or path the scenario came from (for errors about its parameter tables).
    #[serde(skip)]
    pub origin: String,
    /// The apps; events refer to them by index. Repeated names become instances `Name#2`, ….
    pub apps: Vec<AppProfile>,
    /// The user's actions, time-ordered, and the end of the run.
    pub timeline: Timeline,
    /// The workload as written.
    pub workload: WorkloadSpec,
    /// I/O-buffer demand of foreground apps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_buffers: Option<IoBufferSpec>,
}

/// `[io_buffers]`: camera/display buffers each launch's foreground app allocates ION-style.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct IoBufferSpec {
    /// Buffers per launch (mean; fractions carry over launches).
    pub per_launch: f64,
    /// Size of each buffer, MiB.
    pub mb: f64,
    /// Most buffers held at once.
    pub live: u32,
    /// Seconds after the first frame over which a launch's buffers are spread (0: all at once).
    #[serde(skip_serializing_if = "is_zero")]
    pub spread_s: f64,
    /// Whether `Home` allocates the launcher's window buffers (3 screen-sized RGBA_8888
    /// buffers from the device's `[display]`), held until the next launch starts.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub home_window: bool,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

pub use crate::builtin_scenarios::{builtin_names, builtin_toml};

// ---------------------------------------------------------------------------------------------
// Raw (serde) shapes.

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default = "one")]
    seed: u64,
    device: String,
    swap: Option<String>,
    zram_mb: Option<u64>,
    flash_mb: Option<u64>,
    #[serde(default)]
    policies: Vec<String>,
    #[serde(default)]
    variants: Vec<RawVariant>,
    #[serde(default)]
    policy: toml::Table,
    apps: RawApps,
    workload: RawWorkload,
    io_buffers: Option<RawIoBuffers>,
    android: Option<device::AndroidProfile>,
    java: Option<RawJava>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJava {
    linked: Option<apps::LinkedSection>,
    launch_bias: Option<apps::LaunchBiasSection>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIoBuffers {
    per_launch: f64,
    mb: f64,
    #[serde(default = "three")]
    live: u64,
    #[serde(default)]
    spread_s: f64,
    #[serde(default)]
    home_window: bool,
}

fn three() -> u64 {
    3
}

fn one() -> u64 {
    1
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawApps {
    names: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVariant {
    name: String,
    policy: Option<String>,
    swap: Option<String>,
    zram_mb: Option<u64>,
    #[serde(default)]
    all_in_dram: bool,
    lmk_minfree: Option<Vec<u64>>,
    #[serde(default)]
    params: toml::Table,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    kind: String,
    launches: Option<u64>,
    order: Option<Vec<String>>,
    rounds: Option<u64>,
    targets: Option<Vec<String>>,
    others: Option<Vec<String>>,
    n_between: Option<u64>,
    repeats: Option<u64>,
    use_s: Option<f64>,
    home_wait_s: Option<f64>,
    repeat: Option<u64>,
    events: Option<Vec<RawEvent>>,
    zipf_exponent: Option<f64>,
    weights: Option<Vec<f64>>,
    locality_p: Option<f64>,
    locality_k: Option<u64>,
    dwell_median_s: Option<f64>,
    dwell_sigma: Option<f64>,
    dwell_max_s: Option<f64>,
    session_apps_mean: Option<f64>,
    direct_switch_p: Option<f64>,
    home_pause_s: Option<f64>,
    gap_mean_s: Option<f64>,
    same_context_p: Option<f64>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct RawEvent {
    at_s: Option<f64>,
    launch: Option<String>,
    context: Option<String>,
    use_s: Option<f64>,
    home: Option<bool>,
    alloc_mb: Option<f64>,
    app: Option<String>,
    kill: Option<String>,
    wait_s: Option<f64>,
}

const KINDS: &str = "livelab, launch-one-more, relaunch-after, round-robin, script";
const LIVELAB_KEYS: &[&str] = &[
    "launches",
    "zipf_exponent",
    "weights",
    "locality_p",
    "locality_k",
    "dwell_median_s",
    "dwell_sigma",
    "dwell_max_s",
    "session_apps_mean",
    "direct_switch_p",
    "home_pause_s",
    "gap_mean_s",
    "same_context_p",
];

/// Upper bound on generated launches / events (keeps bad input from exhausting memory).
const MAX_LAUNCHES: u64 = 1_000_000;
/// Bound on a run's total simulated time (idle time still costs host time and memory: about a
/// second and a few MB per simulated day): a year covers every protocol, and a wait of 10^9 s
/// (31 years) is a mistake rather than an experiment.
pub const MAX_SIM_NS: u64 = 366 * 86_400 * 1_000_000_000;

struct Ctx<'a> {
    origin: &'a str,
    text: &'a str,
}

impl Ctx<'_> {
    fn invalid(&self, section: &str, key: &str, expected: &str, got: &str) -> ScenarioError {
        ScenarioError::Invalid {
            origin: tomlerr::one_line(self.origin),
            line: tomlerr::find_key_line(self.text, section, key),
            key: tomlerr::one_line(&tomlerr::join(section, key)),
            expected: tomlerr::one_line(expected),
            got: tomlerr::one_line(got),
        }
    }

    fn num(
        &self,
        section: &str,
        key: &str,
        x: f64,
        lo: f64,
        lo_incl: bool,
        hi: f64,
    ) -> Result<f64, ScenarioError> {
        let ok = engine::text::in_range(x, lo, lo_incl, hi);
        if ok {
            Ok(x)
        } else {
            let lb = if lo_incl { '[' } else { '(' };
            Err(self.invalid(
                section,
                key,
                &format!("a number in {lb}{lo}, {hi}]"),
                &x.to_string(),
            ))
        }
    }

    fn count(&self, section: &str, key: &str, x: u64, lo: u64, hi: u64) -> Result<usize, ScenarioError> {
        if (lo..=hi).contains(&x) {
            Ok(x as usize)
        } else {
            Err(self.invalid(
                section,
                key,
                &format!("an integer in {lo}..={hi}"),
                &x.to_string(),
            ))
        }
    }

    fn swap(&self, section: &str, s: &str) -> Result<SwapMode, ScenarioError> {
        SwapMode::parse(s).ok_or_else(|| {
            self.invalid(
                section,
                "swap",
                "one of none, zram, flash, zram+flash",
                &format!("{s:?}"),
            )
        })
    }
}

impl Scenario {
    /// Parses and checks a scenario from TOML text; `origin` names it in errors. Relative paths
    /// of devices and apps are resolved against the current directory unless
    /// [`Scenario::base_dir`] is set (as [`Scenario::load`] does).
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Self, ScenarioError> {
        let raw: RawScenario = toml::from_str(text).map_err(|e| {
            let (line, key) = tomlerr::locate(text, e.message(), e.span());
            ScenarioError::Parse {
                origin: tomlerr::one_line(origin),
                line,
                key,
                message: tomlerr::one_line(e.message()),
            }
        })?;
        let c = Ctx { origin, text };
        if raw.name.trim().is_empty() || raw.name.chars().any(|ch| ch.is_control()) {
            return Err(c.invalid("", "name", "a non-empty single-line name", &raw.name));
        }
        if raw.device.trim().is_empty() {
            return Err(c.invalid("", "device", "a built-in device name or a path", "\"\""));
        }
        let swap = raw.swap.as_deref().map(|s| c.swap("", s)).transpose()?;
        if let Some(z) = raw.zram_mb {
            c.count("", "zram_mb", z, 1, 1 << 20)?;
        }
        if let Some(f) = raw.flash_mb {
            c.count("", "flash_mb", f, 1, 1 << 20)?;
        }
        for p in &raw.policies {
            if p.trim().is_empty() {
                return Err(c.invalid("", "policies", "non-empty policy names", "\"\""));
            }
        }
        let mut variants = Vec::new();
        for (i, v) in raw.variants.iter().enumerate() {
            let sec = format!("variants[{i}]");
            if v.name.trim().is_empty() {
                return Err(c.invalid(&sec, "name", "a non-empty name", "\"\""));
            }
            if variants.iter().any(|o: &Variant| o.name == v.name) {
                return Err(c.invalid(&sec, "name", "distinct variant names", &v.name));
            }
            let swap = v.swap.as_deref().map(|s| c.swap(&sec, s)).transpose()?;
            if v.all_in_dram && swap.is_some_and(|m| m != SwapMode::None) {
                let got = swap.map_or("", |m| m.as_str());
                return Err(c.invalid(
                    &sec,
                    "swap",
                    "\"none\" or no swap key with all_in_dram = true",
                    got,
                ));
            }
            if let Some(z) = v.zram_mb {
                c.count(&sec, "zram_mb", z, 1, 1 << 20)?;
            }
            let lmk_minfree = match v.lmk_minfree.as_deref() {
                None => None,
                Some(m) => Some(<[u64; 6]>::try_from(m).map_err(|_| {
                    c.invalid(
                        &sec,
                        "lmk_minfree",
                        "six page counts",
                        &format!("{} values", m.len()),
                    )
                })?),
            };
            let params = policy_tables::parse(origin, text, &format!("{sec}.params"), &v.params)?;
            variants.push(Variant {
                name: v.name.clone(),
                policy: v.policy.clone(),
                swap,
                zram_mb: v.zram_mb,
                all_in_dram: v.all_in_dram,
                lmk_minfree,
                params,
                policy_line: tomlerr::find_key_line(text, &sec, "policy"),
            });
        }
        if raw.apps.names.is_empty() || raw.apps.names.len() > 1000 {
            return Err(c.invalid(
                "apps",
                "names",
                "1 to 1000 app names or paths",
                &format!("{} entries", raw.apps.names.len()),
            ));
        }
        if let Some(n) = raw.apps.names.iter().find(|n| n.trim().is_empty()) {
            return Err(c.invalid("apps", "names", "non-empty app names or paths", &format!("{n:?}")));
        }
        let policy_params = policy_tables::parse(origin, text, "policy", &raw.policy)?;
        if let Some((key, expected, got)) = raw.android.as_ref().and_then(|a| a.problem()) {
            return Err(c.invalid("android", key, &expected, &got));
        }
        let (java_linked, java_launch_bias) = raw.java.map_or((None, None), |j| (j.linked, j.launch_bias));
        if let Some((key, expected, got)) = java_linked.as_ref().and_then(|l| l.problem()) {
            return Err(c.invalid("java.linked", key, &expected, &got));
        }
        if let Some((key, expected, got)) = java_launch_bias.as_ref().and_then(|l| l.problem()) {
            return Err(c.invalid("java.launch_bias", key, &expected, &got));
        }
        let workload = parse_workload(&c, raw.workload, raw.apps.names.len())?;
        let io_buffers = match &raw.io_buffers {
            None => None,
            Some(b) => Some(IoBufferSpec {
                per_launch: c.num("io_buffers", "per_launch", b.per_launch, 0.0, true, 1000.0)?,
                mb: c.num("io_buffers", "mb", b.mb, 0.0, false, 1024.0)?,
                live: c.count("io_buffers", "live", b.live, 1, 64)? as u32,
                spread_s: c.num("io_buffers", "spread_s", b.spread_s, 0.0, true, 3600.0)?,
                home_window: b.home_window,
            }),
        };
        Ok(Scenario {
            name: raw.name,
            description: raw.description,
            seed: raw.seed,
            device: raw.device,
            swap,
            zram_mb: raw.zram_mb,
            flash_mb: raw.flash_mb,
            policies: raw.policies,
            variants,
            policy_params,
            apps: raw.apps.names,
            workload,
            io_buffers,
            android: raw.android,
            java_linked,
            java_launch_bias,
            origin: origin.to_string(),
            base_dir: None,
            text: text.to_string(),
        })
    }

    /// Reads and checks a scenario file; relative device/app paths resolve against its directory.
    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        let origin = path.display().to_string();
        let text = engine::fsio::read_capped_string(path, engine::fsio::FileKind::Scenario).map_err(|e| {
            ScenarioError::Io {
                origin: tomlerr::one_line(&origin),
                message: tomlerr::one_line(&e.to_string()),
            }
        })?;
        let mut s = Self::from_toml_str(&text, &origin)?;
        s.base_dir = Some(path.parent().map(Path::to_path_buf).unwrap_or_default());
        Ok(s)
    }

    /// The scenario's TOML text as read (recorded in reports so a run can be repeated).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// A built-in scenario by name; the error lists the known names.
    pub fn builtin(name: &str) -> Result<Self, ScenarioError> {
        match builtin_toml(name) {
            Some(t) => Self::from_toml_str(t, &format!("{name}.toml")),
            None => Err(ScenarioError::UnknownBuiltin {
                name: tomlerr::one_line(name),
                known: builtin_names().join(", "),
                io: None,
            }),
        }
    }

    /// A built-in scenario if `name_or_path` is one, else the file at that path.
    pub fn resolve_name(name_or_path: &str) -> Result<Self, ScenarioError> {
        if builtin_toml(name_or_path).is_some() {
            return Self::builtin(name_or_path);
        }
        let path = Path::new(name_or_path);
        match std::fs::metadata(path) {
            Ok(_) => Self::load(path),
            Err(e) => Err(ScenarioError::UnknownBuiltin {
                name: tomlerr::one_line(name_or_path),
                known: builtin_names().join(", "),
                io: Some(tomlerr::one_line(&e.to_string())),
            }),
        }
    }

    fn path_of(&self, s: &str) -> String {
        match &self.base_dir {
            Some(d) if Path::new(s).is_relative() => d.join(s).display().to_string(),
            _ => s.to_string(),
        }
    }

    /// Loads the device and apps and generates the timeline (with [`Scenario::seed`]).
    pub fn resolve(&self) -> Result<ResolvedScenario, ScenarioError> {
        let c = Ctx {
            origin: &self.origin,
            text: &self.text,
        };
        let origin = tomlerr::one_line(&self.origin);
        let device = if device::builtin_toml(&self.device).is_some() {
            DeviceProfile::builtin(&self.device)
        } else {
            // Errors name the device as written, not the path joined to the scenario's directory.
            DeviceProfile::resolve(&self.path_of(&self.device)).map_err(|e| match e {
                DeviceError::UnknownBuiltin { known, io, .. } => DeviceError::UnknownBuiltin {
                    name: tomlerr::one_line(&self.device),
                    known,
                    io,
                },
                e => e,
            })
        }
        .map_err(|source| ScenarioError::Device {
            origin: origin.clone(),
            line: tomlerr::find_key_line(&self.text, "", "device"),
            source: Box::new(source),
        })?;
        let mut device = device;
        if let Some(a) = &self.android {
            device.android.merge(a);
        }
        let mut apps: Vec<AppProfile> = Vec::with_capacity(self.apps.len());
        for (i, n) in self.apps.iter().enumerate() {
            let r = if apps::builtin_toml(n).is_some() {
                AppProfile::builtin(n)
            } else {
                AppProfile::resolve(&self.path_of(n)).map_err(|e| match e {
                    AppError::UnknownBuiltin { known, io, .. } => AppError::UnknownBuiltin {
                        name: tomlerr::one_line(n),
                        known,
                        io,
                    },
                    e => e,
                })
            };
            // The app's sizes on this device's phone generation (`[era."<release>"]`).
            let mut p = r
                .map_err(|source| ScenarioError::App {
                    origin: origin.clone(),
                    line: tomlerr::find_key_line(&self.text, "apps", "names"),
                    key: format!("apps.names[{i}]"),
                    source: Box::new(source),
                })?
                .for_release(apps::era::release_of_device(&device));
            let same = apps
                .iter()
                .filter(|a| {
                    a.name
                        .split('#')
                        .next()
                        .unwrap_or("")
                        .eq_ignore_ascii_case(&p.name)
                })
                .count();
            if same > 0 {
                p.name = format!("{}#{}", p.name, same + 1);
            }
            if p.java.linked.is_none() {
                p.java.linked = self.java_linked;
            }
            if p.java.launch_bias.is_none() {
                p.java.launch_bias = self.java_launch_bias;
            }
            apps.push(p);
        }
        let timeline = build_timeline(&c, &self.workload, &apps, self.seed, device.memory.dram_mb)?;
        if timeline.end_ns > MAX_SIM_NS {
            let days = |ns: u64| ns as f64 / (86_400.0 * 1e9);
            return Err(ScenarioError::Invalid {
                origin,
                line: tomlerr::find_key_line(&self.text, "", "workload")
                    .or_else(|| tomlerr::find_key_line(&self.text, "workload", "kind")),
                key: "workload".into(),
                expected: format!(
                    "at most {:.0} days of simulated time in total (the sum of waits, uses and gaps)",
                    days(MAX_SIM_NS)
                ),
                got: format!("{:.1} days", days(timeline.end_ns)),
            });
        }
        Ok(ResolvedScenario {
            name: self.name.clone(),
            description: self.description.clone(),
            seed: self.seed,
            device,
            swap: self.swap,
            zram_mb: self.zram_mb,
            flash_mb: self.flash_mb,
            policies: self.policies.clone(),
            policies_line: tomlerr::find_key_line(&self.text, "", "policies"),
            variants: self.variants.clone(),
            policy_params: self.policy_params.clone(),
            origin: self.origin.clone(),
            apps,
            timeline,
            workload: self.workload.clone(),
            io_buffers: self.io_buffers,
        })
    }
}

impl ResolvedScenario {
    /// Index of an app by name (case-insensitive; `Name#2` for a second instance).
    pub fn app_index(&self, name: &str) -> Option<usize> {
        find_app(&self.apps, name)
    }
}

/// Parses and resolves a built-in scenario name or a scenario file path in one go.
pub fn resolve(name_or_path: &str) -> Result<ResolvedScenario, ScenarioError> {
    Scenario::resolve_name(name_or_path)?.resolve()
}

fn find_app(apps: &[AppProfile], name: &str) -> Option<usize> {
    apps.iter().position(|a| a.name.eq_ignore_ascii_case(name))
}
