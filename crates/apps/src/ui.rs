//! `[ui]`: the memory an app's UI holds only while it is visible, released when Android tells it
//! the UI is hidden (`onTrimMemory(TRIM_MEMORY_UI_HIDDEN)`) and re-created at its next first
//! frame: the window surface's buffers and the part of HWUI's GPU cache above the background
//! limit (sizes from the device's display, `device::display`).
//!
//! The foreground GPU cache is given as a fill fraction of HWUI's cache limit (12 screens): no
//! paper or AOSP source gives per-app values, so the defaults by category are estimates:
//! image-feed apps (`social`, `shopping`) keep many decoded images as textures (0.8), media apps
//! (`multimedia`) thumbnails and artwork (0.7), everything else stays under the background limit
//! (0.4: nothing trimmed), and games (`game`) render through their own GL/Vulkan context, not
//! HWUI (0). Synthetic `benchmark` apps draw a plain activity (0.1).

use serde::{Deserialize, Serialize};

use crate::{AppProfile, PAGE_SIZE};

/// `[ui]` of an app profile. Every key is optional.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UiSection {
    /// `false`: the app keeps its UI memory in the background (releases nothing). Default true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trim: Option<bool>,
    /// Foreground HWUI GPU cache as a fraction of its limit, [0, 1]. Default: by category
    /// (module docs; estimates).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_cache_fill: Option<f64>,
}

impl UiSection {
    /// The first invalid key as (key, expected, got), if any.
    pub fn invalid(&self) -> Option<(&'static str, String, String)> {
        match self.gpu_cache_fill {
            Some(f) if !(f.is_finite() && (0.0..=1.0).contains(&f)) => {
                Some(("gpu_cache_fill", "a fraction in [0, 1]".into(), f.to_string()))
            }
            _ => None,
        }
    }
}

/// Estimated foreground GPU cache fill of an app of `category` (module docs).
pub fn default_gpu_cache_fill(category: &str) -> f64 {
    match category.trim().to_ascii_lowercase().as_str() {
        "social" | "shopping" => 0.8,
        "multimedia" => 0.7,
        "game" => 0.0,
        "benchmark" => 0.1,
        _ => 0.4,
    }
}

impl AppProfile {
    /// Foreground GPU cache fill: the profile's `ui.gpu_cache_fill`, else the category default.
    pub fn gpu_cache_fill(&self) -> f64 {
        self.ui
            .gpu_cache_fill
            .unwrap_or_else(|| default_gpu_cache_fill(&self.category))
    }

    /// Anonymous pages the app releases at `TRIM_MEMORY_UI_HIDDEN` on `device` (0 when the
    /// profile's `ui.trim` is false, the device's `android.ui_trim` is false or it has no
    /// `[display]`).
    pub fn ui_hidden_pages(&self, device: &device::DeviceProfile) -> u32 {
        let Some(d) = device
            .display
            .filter(|_| device.stock().ui_trim && self.ui.trim != Some(false))
        else {
            return 0;
        };
        d.ui_hidden_release_bytes(self.gpu_cache_fill())
            .div_ceil(PAGE_SIZE) as u32
    }
}
