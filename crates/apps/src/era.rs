//! App sizes per phone generation ("era"): `[era."<android release>"]` tables.
//!
//! Each paper measured its apps on one phone running one Android release, and apps were much
//! smaller on a 2013 tablet than on a 2022 phone: ISMM'15 kills "a cached app of about 110 MB" on
//! a Nexus 10 (Android 4.2), Fleet's Pixel 3 (Android 10, 4 GB) keeps about ten commercial apps in
//! the background (Fleet §7.1–§7.2), Ariadne Table 1 measures YouTube at 177 → 358 MB of
//! anonymous memory on a Pixel 7 (Android 14). A profile's base sections hold the Android 14 /
//! Pixel 7 sizes; an optional table
//!
//! ```toml
//! [era."10".footprint]      # Fleet's Pixel 3, Android 10
//! anon_mb_start = 150
//! java_heap_share = 0.25
//! ```
//!
//! overrides some of the size keys for the phones running that release. The table is chosen by
//! the Android release of the scenario's device ([`release_of_device`]); a profile without a
//! table for that release keeps its base sizes.
//!
//! Only sizes can be overridden (the keys of [`FootprintEra`], [`LaunchEra`], [`AccessEra`]);
//! behaviour (contexts, overlaps, adjacency, compressibility) is the app's own in every era.

use serde::{Deserialize, Serialize};

use crate::AppProfile;

/// Android releases an era table may name (the device crate's list: the same names a device's
/// `android_release` may take).
pub use device::release::ANDROID_RELEASES;

/// The Android release the device runs, which selects the apps' era tables.
///
/// The device profile's `[android] android_release` (e.g. Nexus 10 4.2, Pixel XL 7.1, Pixel 3 10,
/// OnePlus 9 Pro 11, Pixel 7 14: sources in the device profiles). `None` for a device without
/// one (base sizes).
pub fn release_of_device(device: &device::DeviceProfile) -> Option<&'static str> {
    let r = device.android.android_release.as_deref()?;
    ANDROID_RELEASES.iter().copied().find(|x| *x == r)
}

/// `[era."<release>"]`: the size keys this app has on phones running that release. Every key is
/// optional; absent keys keep the base value.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EraOverride {
    /// `[era."<release>".footprint]`.
    pub footprint: FootprintEra,
    /// `[era."<release>".launch]`.
    pub launch: LaunchEra,
    /// `[era."<release>".access]`.
    pub access: AccessEra,
}

/// Footprint keys of an era (same meaning, units and ranges as `[footprint]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FootprintEra {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anon_mb_start: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anon_mb_steady: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub java_heap_share: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_mb: Option<f64>,
}

/// Launch-cost keys of an era (same meaning as `[launch]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LaunchEra {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cold_launch_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hot_launch_ms: Option<f64>,
}

/// Access-set size keys of an era (same meaning as `[access]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AccessEra {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_set_fraction: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_launch_share: Option<f64>,
}

impl EraOverride {
    /// Writes the keys this table sets into `p`.
    pub fn apply(&self, p: &mut AppProfile) {
        let set = |dst: &mut f64, v: Option<f64>| {
            if let Some(v) = v {
                *dst = v;
            }
        };
        let (f, l, a) = (&self.footprint, &self.launch, &self.access);
        set(&mut p.footprint.anon_mb_start, f.anon_mb_start);
        set(&mut p.footprint.anon_mb_steady, f.anon_mb_steady);
        set(&mut p.footprint.java_heap_share, f.java_heap_share);
        set(&mut p.footprint.file_mb, f.file_mb);
        set(&mut p.launch.cold_launch_ms, l.cold_launch_ms);
        set(&mut p.launch.hot_launch_ms, l.hot_launch_ms);
        set(&mut p.access.launch_set_fraction, a.launch_set_fraction);
        set(&mut p.access.file_launch_share, a.file_launch_share);
    }
}
