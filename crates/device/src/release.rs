//! The Android and kernel release a device runs, and the stock features that release decides.
//!
//! A profile's `[android]` section names the releases (`android_release = "10"`,
//! `kernel_release = "4.9"`); [`DeviceProfile::stock`] turns them into the features the stock
//! stack runs with, each overridable by an explicit key in the same section (and by a scenario
//! or variant, which edit that section before the run):
//!
//! | feature | decided by | source |
//! |---|---|---|
//! | lmkd mode | PSI lmkd on Android ≥ 10 with a PSI kernel (≥ 4.20, or the 4.9/4.14/4.19 Android common kernels that backport it); else the in-kernel `lowmemorykiller` driver (kernels ≤ 4.19 still carry it in staging on Android, removed upstream in 4.12) | source.android.com "Low memory killer daemon": "Android 10 and higher support a new lmkd mode that uses kernel pressure stall information (PSI) monitors ... The PSI patchset in the upstream kernel (backported to 4.9 and 4.14 kernels)"; lmkd README: "Since Linux Kernel 4.12 the lowmemorykiller driver has been removed" |
//! | lmkd kill path | always on (`lmkd_kills = false` turns userspace lmkd's kills off: the Fleet artifact's evaluation builds) | Fleet artifact `src/common/lmkd.c`, `mp_event_common`: `bool disable_kill = true; ... if (disable_kill) { return; }` |
//! | lmkd LOW_MEM rule | Android ≥ 13 | estimate (unverified exact release; REFERENCE.md lists it for recent lmkd, absent from the Android 10–12 lmkd) |
//! | cached-app compaction | Android ≥ 13 | `CachedAppOptimizer.DEFAULT_USE_COMPACTION`: `false` in the Android 11/12 sources (the class exists since 11; AppCompactor in 10), `true` in the Android 14 sources; the flip release (13) is an estimate |
//! | foreground heap growth multiplier | 3.0 on Android ≥ 8 (ART CC: `kDefaultHeapGrowthMultiplier` 2.0 + `kExtraDefaultHeapGrowthMultiplier` 1.0 with the read barrier), 2.0 on Android 5–7 (CMS, no extra), 1.0 on Android ≤ 4.4 (Dalvik has no multiplier) | art/runtime/gc/heap.h, runtime.cc (REFERENCE.md) |
//! | background heap growth multiplier | 1.0 | ART `Heap::HeapGrowthMultiplier` (1.0 when pause times do not matter) |
//! | Java heap page release | Android ≤ 4.4 (Dalvik): free heap pages stay resident for reuse and are returned only by the heap trim, 5 s after a GC with no GC since; Android ≥ 5 (ART): at each GC | dalvik/vm/alloc/HeapSource.cpp (4.2): `gcDaemonThread` waits `HEAP_TRIM_IDLE_TIME_MS` (5 s) after a concurrent GC, then `trimHeaps` (`mspace_trim` + `madvise(MADV_DONTNEED)` of whole free pages); ART's `RegionSpace::ClearFromSpace` releases evacuated regions at once |
//!
//! Simplified: Android 8/9 devices ran userspace lmkd in vmpressure mode or the kernel driver;
//! both are modelled as the driver (the same minfree/adj table). Unknown release strings are a
//! one-line error naming the key.

use serde::{Deserialize, Serialize};

use crate::{AndroidProfile, DeviceProfile};

impl AndroidProfile {
    /// The first invalid key: `(key, what was expected, what was found)`.
    pub fn problem(&self) -> Option<(&'static str, String, String)> {
        for (key, value, known) in [
            ("android_release", &self.android_release, ANDROID_RELEASES),
            ("kernel_release", &self.kernel_release, KERNEL_RELEASES),
        ] {
            if let Some(s) = value {
                if Release::parse(s, known).is_none() {
                    return Some((
                        key,
                        format!("a known release ({})", known.join(", ")),
                        format!("{s:?}"),
                    ));
                }
            }
        }
        if let Some(m) = &self.lmkd {
            if LmkdMode::parse(m).is_none() {
                return Some(("lmkd", "psi, minfree or lowmemorykiller".into(), format!("{m:?}")));
            }
        }
        for (key, x) in [
            (
                "foreground_heap_growth_multiplier",
                self.foreground_heap_growth_multiplier,
            ),
            (
                "background_heap_growth_multiplier",
                self.background_heap_growth_multiplier,
            ),
        ] {
            if let Some(x) = x.filter(|x| !(x.is_finite() && (1.0..=100.0).contains(x))) {
                return Some((key, "a growth multiplier from 1 to 100".into(), x.to_string()));
            }
        }
        None
    }

    /// `other`'s explicit keys replace this section's (a scenario's `[android]` overrides).
    pub fn merge(&mut self, other: &AndroidProfile) {
        let o = other.clone();
        self.android_release = o.android_release.or(self.android_release.take());
        self.kernel_release = o.kernel_release.or(self.kernel_release.take());
        self.lmkd = o.lmkd.or(self.lmkd.take());
        self.lmkd_kills = o.lmkd_kills.or(self.lmkd_kills);
        self.app_compaction = o.app_compaction.or(self.app_compaction);
        self.lmkd_low_mem = o.lmkd_low_mem.or(self.lmkd_low_mem);
        self.per_app_memcg = o.per_app_memcg.or(self.per_app_memcg);
        self.node_lru_by_page_age = o.node_lru_by_page_age.or(self.node_lru_by_page_age);
        self.foreground_heap_growth_multiplier = o
            .foreground_heap_growth_multiplier
            .or(self.foreground_heap_growth_multiplier);
        self.background_heap_growth_multiplier = o
            .background_heap_growth_multiplier
            .or(self.background_heap_growth_multiplier);
        self.ui_trim = o.ui_trim.or(self.ui_trim);
    }
}

/// Android releases hotlaunch knows (the values `android.android_release` accepts).
pub const ANDROID_RELEASES: &[&str] = &[
    "4.0", "4.1", "4.2", "4.3", "4.4", "5.0", "5.1", "6.0", "7.0", "7.1", "8.0", "8.1", "9", "10", "11",
    "12", "13", "14", "15",
];

/// Kernel releases Android devices shipped (the values `android.kernel_release` accepts).
pub const KERNEL_RELEASES: &[&str] = &[
    "3.0", "3.4", "3.10", "3.18", "4.4", "4.9", "4.14", "4.19", "5.4", "5.10", "5.15", "6.1", "6.6",
];

/// A `major.minor` release number (Android `10` = 10.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Release {
    pub major: u32,
    pub minor: u32,
}

impl Release {
    /// Parses `"7.1"`, `"10"`, `"7.1.1"` (patch ignored) or `"3.18.31"` against a known list
    /// (`major.minor`, or `major` alone for Android 9+). `None` when unknown.
    pub fn parse(s: &str, known: &[&str]) -> Option<Release> {
        let s = s.trim();
        let mut it = s.split('.');
        let major: u32 = it.next()?.parse().ok()?;
        let minor: u32 = match it.next() {
            Some(m) => m.parse().ok()?,
            None => 0,
        };
        if let Some(p) = it.next() {
            p.parse::<u32>().ok()?;
        }
        if it.next().is_some() {
            return None;
        }
        let r = Release { major, minor };
        known.iter().any(|k| Release::exact(k) == Some(r)).then_some(r)
    }

    fn exact(s: &str) -> Option<Release> {
        let mut it = s.split('.');
        let major = it.next()?.parse().ok()?;
        let minor = it.next().map_or(Some(0), |m| m.parse().ok())?;
        Some(Release { major, minor })
    }

    const fn new(major: u32, minor: u32) -> Release {
        Release { major, minor }
    }
}

/// Which low-memory killer a device runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LmkdMode {
    /// Userspace lmkd driven by PSI monitors (Android 10+ on a PSI kernel).
    #[serde(rename = "psi")]
    Psi,
    /// Userspace lmkd with `ro.lmk.use_minfree_levels` (free memory + file cache thresholds).
    #[serde(rename = "minfree")]
    Minfree,
    /// The kernel's `drivers/staging/android/lowmemorykiller.c`, run at shrinker (reclaim) time.
    #[serde(rename = "lowmemorykiller")]
    InKernel,
}

impl LmkdMode {
    /// Parses the `android.lmkd` spelling.
    pub fn parse(s: &str) -> Option<LmkdMode> {
        match s {
            "psi" => Some(LmkdMode::Psi),
            "minfree" => Some(LmkdMode::Minfree),
            "lowmemorykiller" => Some(LmkdMode::InKernel),
            _ => None,
        }
    }

    /// The `android.lmkd` spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            LmkdMode::Psi => "psi",
            LmkdMode::Minfree => "minfree",
            LmkdMode::InKernel => "lowmemorykiller",
        }
    }
}

/// The stock features a device runs with, after its release and explicit keys are applied.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StockFeatures {
    pub lmkd: LmkdMode,
    /// [`AndroidProfile::lmkd_kills`]; false: userspace lmkd never kills.
    pub lmkd_kills: bool,
    pub lmkd_low_mem: bool,
    /// [`AndroidProfile::per_app_memcg`]; false: one global LRU.
    pub per_app_memcg: bool,
    /// [`AndroidProfile::node_lru_by_page_age`]; false: the global LRU by process age.
    pub node_lru_by_page_age: bool,
    pub app_compaction: bool,
    pub foreground_heap_growth_multiplier: f64,
    pub background_heap_growth_multiplier: f64,
    /// Dalvik (Android ≤ 4.4): the heap keeps freed pages until its idle trim; `None` on ART
    /// (released at each GC). The delay is `HEAP_TRIM_IDLE_TIME_MS`.
    pub heap_trim_delay_ms: Option<u64>,
    /// The minfree table of the in-kernel driver / minfree lmkd: `(oom_score_adj, pages)`.
    pub minfree: [(i16, u64); 6],
    /// [`AndroidProfile::ui_trim`]: apps release their UI's memory at `TRIM_MEMORY_UI_HIDDEN`.
    pub ui_trim: bool,
}

/// Dalvik's `HEAP_TRIM_IDLE_TIME_MS` (dalvik/vm/alloc/HeapSource.cpp): how long after a GC the
/// GC daemon trims the heap if no GC was requested meanwhile.
pub const DALVIK_HEAP_TRIM_IDLE_MS: u64 = 5_000;

/// ProcessList.java's "high" minfree table in KiB (screens ≥ 1280×800 or ≥ 700 MB RAM, so every
/// device here): Android 5.0+ values (`mOomMinFreeHigh`), and the Android ≤ 4.4 values (kept in
/// later sources as `mOomMinFreeHigh32Bit`).
const MINFREE_HIGH_KB: [u64; 6] = [73728, 92160, 110592, 129024, 147456, 184320];
const MINFREE_HIGH_KB_KITKAT: [u64; 6] = [49152, 61440, 73728, 86016, 98304, 122880];
/// ProcessList's adj slots {FOREGROUND, VISIBLE, PERCEPTIBLE, BACKUP, CACHED_APP_MIN, last}.
/// Android 7.1 writes CACHED_APP_MAX_ADJ (906) last, catching the oldest cached apps of its
/// 900..906 spread; hotlaunch spreads cached apps over 900..999, so the last slot is the start of
/// the older half, 950 (CACHED_APP_LMK_FIRST_ADJ of later releases).
const MINFREE_ADJ: [i16; 6] = [0, 100, 200, 300, 900, 950];

impl DeviceProfile {
    /// The device's Android release, if its profile names one.
    pub fn android_release(&self) -> Option<Release> {
        let s = self.android.android_release.as_deref()?;
        Release::parse(s, ANDROID_RELEASES)
    }

    /// The device's kernel release, if its profile names one.
    pub fn kernel_release(&self) -> Option<Release> {
        let s = self.android.kernel_release.as_deref()?;
        Release::parse(s, KERNEL_RELEASES)
    }

    /// The stock features of the device's release, with the explicit `[android]` keys applied.
    /// Without a release: PSI lmkd without LOW_MEM, no compaction, ART's current multipliers.
    pub fn stock(&self) -> StockFeatures {
        let a = &self.android;
        let android = self.android_release();
        let kernel = self.kernel_release();
        let at_least = |r: Release| android.is_none_or(|v| v >= r);
        let psi_kernel = kernel.is_none_or(|k| k >= Release::new(4, 9));
        let lmkd = if at_least(Release::new(10, 0)) && psi_kernel {
            LmkdMode::Psi
        } else {
            LmkdMode::InKernel
        };
        let newer = |r: Release| android.is_some_and(|v| v >= r);
        let fg = if at_least(Release::new(8, 0)) {
            3.0
        } else if newer(Release::new(5, 0)) {
            2.0
        } else {
            1.0
        };
        // 64-bit kernels (every device from Android 7 on here) scale the two cached slots.
        let (table, scale64) = if at_least(Release::new(5, 0)) {
            (MINFREE_HIGH_KB, at_least(Release::new(7, 0)))
        } else {
            (MINFREE_HIGH_KB_KITKAT, false)
        };
        let mut minfree = [(0i16, 0u64); 6];
        for (i, slot) in minfree.iter_mut().enumerate() {
            let mut kb = table[i];
            if scale64 && i == 4 {
                kb = kb * 3 / 2;
            } else if scale64 && i == 5 {
                kb = kb * 7 / 4;
            }
            *slot = (MINFREE_ADJ[i], kb / 4);
        }
        StockFeatures {
            lmkd: a.lmkd.as_deref().and_then(LmkdMode::parse).unwrap_or(lmkd),
            lmkd_kills: a.lmkd_kills.unwrap_or(true),
            lmkd_low_mem: a.lmkd_low_mem.unwrap_or(newer(Release::new(13, 0))),
            per_app_memcg: a.per_app_memcg.unwrap_or(true),
            node_lru_by_page_age: a.node_lru_by_page_age.unwrap_or(false),
            app_compaction: a.app_compaction.unwrap_or(newer(Release::new(13, 0))),
            foreground_heap_growth_multiplier: a.foreground_heap_growth_multiplier.unwrap_or(fg),
            background_heap_growth_multiplier: a.background_heap_growth_multiplier.unwrap_or(1.0),
            heap_trim_delay_ms: android
                .is_some_and(|v| v < Release::new(5, 0))
                .then_some(DALVIK_HEAP_TRIM_IDLE_MS),
            minfree,
            ui_trim: a.ui_trim.unwrap_or(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_known_releases_only() {
        assert_eq!(Release::parse("10", ANDROID_RELEASES), Some(Release::new(10, 0)));
        assert_eq!(
            Release::parse("7.1.1", ANDROID_RELEASES),
            Some(Release::new(7, 1))
        );
        assert_eq!(
            Release::parse("3.18.31", KERNEL_RELEASES),
            Some(Release::new(3, 18))
        );
        assert_eq!(
            Release::parse("4.2.2", ANDROID_RELEASES),
            Some(Release::new(4, 2))
        );
        for bad in ["", "10.x", "99", "7.5", "4.9.1.1", "ten"] {
            assert_eq!(Release::parse(bad, ANDROID_RELEASES), None, "{bad}");
        }
        assert_eq!(Release::parse("4.20", KERNEL_RELEASES), None);
    }
}
