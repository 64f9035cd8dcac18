//! Zone watermarks (mm/page_alloc.c `__setup_per_zone_wmarks`), one zone per node.

use serde::Serialize;

/// Zone watermarks in pages.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Watermarks {
    pub min: u64,
    pub low: u64,
    pub high: u64,
}

impl Watermarks {
    /// Linux `__setup_per_zone_wmarks` for one zone.
    pub fn linux(managed_pages: u64, min_free_kbytes: u64, watermark_scale_factor: u64) -> Self {
        let min = min_free_kbytes / 4;
        let tmp = (min / 4).max(managed_pages * watermark_scale_factor / 10_000);
        Watermarks {
            min,
            low: min + tmp,
            high: min + 2 * tmp,
        }
    }
}
