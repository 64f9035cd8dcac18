//! Page contents for hotlaunch.
//!
//! Every simulated page refers to a [`ContentId`]: an index into a [`ContentStore`], a pool of real
//! 4 KiB pages (from a captured corpus or a seeded synthetic generator). Many simulated pages share
//! one content page, so a 12 GB device needs only a pool of distinct pages in host memory.
//! A 64-bit checksum per content page (xxh3) lets the swap path prove that the bytes that come back
//! are the bytes that went out.

pub mod capture;
pub mod codec;
pub mod corpus;
pub mod costs;
pub mod memo;
pub mod synth;

pub use codec::Codec;
pub use corpus::Corpus;
pub use costs::CostTable;
pub use memo::{CompressionMemo, Verify};
pub use synth::SynthMix;

pub const PAGE_SIZE: usize = 4096;

/// Index of a 4 KiB content page in a [`ContentStore`].
pub type ContentId = u32;

/// A pool of distinct 4 KiB pages with a checksum each.
#[derive(Debug, Clone, Default)]
pub struct ContentStore {
    bytes: Vec<u8>,
    checksums: Vec<u64>,
}

/// Checksum of a page's bytes (xxh3-64).
pub fn checksum(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

impl ContentStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// Append one page (exactly [`PAGE_SIZE`] bytes) and return its id.
    pub fn push_page(&mut self, page: &[u8]) -> ContentId {
        assert_eq!(page.len(), PAGE_SIZE, "content pages are 4 KiB");
        self.bytes.extend_from_slice(page);
        self.checksums.push(checksum(page));
        (self.checksums.len() - 1) as ContentId
    }

    pub fn len(&self) -> usize {
        self.checksums.len()
    }

    pub fn is_empty(&self) -> bool {
        self.checksums.is_empty()
    }

    /// The bytes of page `id`.
    #[inline]
    pub fn page(&self, id: ContentId) -> &[u8] {
        let start = id as usize * PAGE_SIZE;
        &self.bytes[start..start + PAGE_SIZE]
    }

    /// The checksum of page `id` (precomputed).
    #[inline]
    pub fn checksum(&self, id: ContentId) -> u64 {
        self.checksums[id as usize]
    }
}
