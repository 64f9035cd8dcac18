//! `[writes]`: the app's own file writes (SQLite databases and their journal/WAL,
//! `shared_prefs`, cache files) through the page cache.
//!
//! Modelled: each write dirties one 4 KiB page of the app's `data_mb` region (Lee & Won,
//! EMSOFT'12: 4 KiB writes are ~70% of all writes, 60–80% of data writes random, SQLite the main
//! writer); the simulator picks the page with an 80/20 skew (IEEE Access 2021, "Characterizing
//! file accesses in Android applications": the top 20% of blocks take 80% of accesses, mostly
//! SQLite). A write is SQLite's update of a database page: a whole, page-aligned 4 KiB `pwrite`
//! (no read in the kernel's `write_begin`), after a one-page `pread` when SQLite does not hold the
//! page in its own cache (hot pages: once per process life; see the framework's `writes.rs`).
//! The kernel's flusher writes a dirty page back 30 s after it was first dirtied (once,
//! however often it was rewritten meanwhile), so flash traffic per app is at most `data_mb` per
//! 30 s. Simplified: no `fsync` (SQLite commits write synchronously and several times per
//! transaction — journal, database, ext4 journal: ≥ 11 writes per insert, EMSOFT'12 — which
//! this model folds into the page-write rate); the written files are mapped into the app's page
//! space, so they count in its RSS and are dropped (written back first) when it dies.

use serde::{Deserialize, Serialize};

use crate::PAGES_PER_MB;

/// `[writes]` of an app profile. Every key is optional (default 0: no writes).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WriteSection {
    /// Size of the written files, MiB. [0, 4096]; at least one page when a rate is set.
    pub data_mb: f64,
    /// Page writes while in the foreground, KiB/s. [0, 100000].
    pub fg_kb_per_s: f64,
    /// Page writes while cached in the background (sync jobs, downloads), KiB/s. [0, 100000].
    pub bg_kb_per_s: f64,
}

impl WriteSection {
    /// Pages of the written files.
    pub fn data_pages(&self) -> u32 {
        (self.data_mb * PAGES_PER_MB).round() as u32
    }

    /// The first invalid key as (key, expected, got), if any.
    pub(crate) fn invalid(&self) -> Option<(&'static str, String, String)> {
        for (key, x, hi) in [
            ("data_mb", self.data_mb, 4096.0),
            ("fg_kb_per_s", self.fg_kb_per_s, 100_000.0),
            ("bg_kb_per_s", self.bg_kb_per_s, 100_000.0),
        ] {
            if !(x.is_finite() && (0.0..=hi).contains(&x)) {
                return Some((key, format!("a number in [0, {hi}]"), x.to_string()));
            }
        }
        if (self.fg_kb_per_s > 0.0 || self.bg_kb_per_s > 0.0) && self.data_pages() == 0 {
            return Some((
                "data_mb",
                "at least one page (1/256 MiB) when a write rate is set".into(),
                self.data_mb.to_string(),
            ));
        }
        None
    }
}
