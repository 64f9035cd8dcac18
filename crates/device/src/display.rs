//! `[display]`: the panel's size, and what an app's UI holds because of it: the window surface's
//! buffers and HWUI's GPU resource cache (what a backgrounded app releases when it gets
//! `onTrimMemory(TRIM_MEMORY_UI_HIDDEN)`; the framework's lifecycle applies it).
//!
//! Sources (AOSP android-10.0.0):
//! - window buffers: frameworks/native/services/surfaceflinger/BufferQueueLayer.cpp `onFirstRef`
//!   sets `setMaxDequeuedBufferCount(2)` unless triple buffering is disabled, plus the one buffer
//!   SurfaceFlinger holds acquired: 3 buffers of `width × height` RGBA_8888 (4 B) pixels;
//! - GPU cache: frameworks/base/libs/hwui/renderthread/CacheManager.cpp,
//!   `SURFACE_SIZE_MULTIPLIER (12.0f * 4.0f)` (the cache limit is 12 screens of 4-byte pixels)
//!   and `BACKGROUND_RETENTION_PERCENTAGE (0.5f)`; `trimMemory(TrimMemoryMode::UiHidden)` purges
//!   the unlocked resources down to the background limit.
//!
//! Simplified: one window per app (dialogs, SurfaceViews and the wallpaper are not counted);
//! the same constants for every Android release (older releases' OpenGL renderer had other
//! caches); unlocked scratch resources beyond the background limit are not counted separately.

use serde::{Deserialize, Serialize};

/// Buffers of one window's BufferQueue with triple buffering (2 dequeued + 1 acquired).
pub const WINDOW_BUFFERS: u64 = 3;
/// Bytes per pixel of a window buffer (RGBA_8888).
pub const BYTES_PER_PIXEL: u64 = 4;
/// HWUI's GPU cache limit in screens of 4-byte pixels (`SURFACE_SIZE_MULTIPLIER` / 4).
pub const GPU_CACHE_SCREENS: u64 = 12;
/// Share of the GPU cache limit kept after `TRIM_MEMORY_UI_HIDDEN`.
pub const GPU_BACKGROUND_RETENTION: f64 = 0.5;

/// `[display]`: the panel in pixels (portrait: width ≤ height is not required).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DisplayProfile {
    /// Panel width in pixels. 1..=16384. Source: the phone's specification.
    pub width_px: u32,
    /// Panel height in pixels. 1..=16384. Source: the phone's specification.
    pub height_px: u32,
}

impl DisplayProfile {
    fn screen_bytes(&self) -> u64 {
        self.width_px as u64 * self.height_px as u64 * BYTES_PER_PIXEL
    }

    /// Bytes of one window surface's buffers.
    pub fn window_buffer_bytes(&self) -> u64 {
        WINDOW_BUFFERS * self.screen_bytes()
    }

    /// HWUI's GPU resource cache limit (`mMaxResourceBytes`).
    pub fn gpu_cache_bytes(&self) -> u64 {
        GPU_CACHE_SCREENS * self.screen_bytes()
    }

    /// The GPU cache kept after `TRIM_MEMORY_UI_HIDDEN` (`mBackgroundResourceBytes`).
    pub fn gpu_background_bytes(&self) -> u64 {
        (self.gpu_cache_bytes() as f64 * GPU_BACKGROUND_RETENTION) as u64
    }

    /// Bytes an app releases at `TRIM_MEMORY_UI_HIDDEN` whose foreground GPU cache holds
    /// `gpu_fill` (0..=1) of the limit: its window buffers, and its GPU cache above the
    /// background limit.
    pub fn ui_hidden_release_bytes(&self, gpu_fill: f64) -> u64 {
        let fg = (self.gpu_cache_bytes() as f64 * gpu_fill.clamp(0.0, 1.0)) as u64;
        self.window_buffer_bytes() + fg.saturating_sub(self.gpu_background_bytes())
    }
}
