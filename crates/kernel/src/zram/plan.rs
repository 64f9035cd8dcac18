//! Chunk plans: how zram groups or splits the pages of a store batch into compression chunks
//! (see the module docs of [`crate::zram`]).

use crate::swap::SwapOutPage;
use content::{Codec, PAGE_SIZE};

/// Largest multi-page chunk (pages).
pub const MAX_CHUNK_PAGES: u16 = 32;
/// Smallest sub-page chunk (bytes).
pub const MIN_SUB_CHUNK: u32 = 128;

/// How to compress a run of pages of a store batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkPlan {
    /// Consecutive pages of the batch covered (1..=32). With `sub_bytes > 0`, must be 1.
    pub pages: u16,
    /// 0: the pages form one chunk of `pages × 4096` bytes. Otherwise the (single) page is split
    /// into `4096 / sub_bytes` chunks (power of two, 128..=2048).
    pub sub_bytes: u32,
    pub codec: Codec,
}

impl ChunkPlan {
    /// `pages` whole pages compressed together.
    pub fn pages(pages: u16, codec: Codec) -> Self {
        Self {
            pages,
            sub_bytes: 0,
            codec,
        }
    }

    /// One page split into chunks of `sub_bytes`.
    pub fn sub_page(sub_bytes: u32, codec: Codec) -> Self {
        Self {
            pages: 1,
            sub_bytes,
            codec,
        }
    }

    pub(super) fn validate(&self) -> Result<(), String> {
        if self.pages == 0 || self.pages > MAX_CHUNK_PAGES {
            return Err(format!("chunk of {} pages (1..={MAX_CHUNK_PAGES})", self.pages));
        }
        if self.sub_bytes != 0
            && (self.pages != 1
                || !self.sub_bytes.is_power_of_two()
                || !(MIN_SUB_CHUNK..PAGE_SIZE as u32).contains(&self.sub_bytes))
        {
            return Err(format!(
                "sub-page chunk of {} B over {} pages",
                self.sub_bytes, self.pages
            ));
        }
        Ok(())
    }
}

/// Chooses chunking and codec for the pages of a store request (the non-same-filled ones, in
/// batch order). A policy (e.g. Ariadne: small chunks for hot data, large for cold) implements it,
/// typically from [`SwapOutPage::tag`]. Plans must cover `pages` exactly, in order.
pub trait ChunkPlanner: Send {
    fn plan(&mut self, pages: &[SwapOutPage], device_codec: Codec, out: &mut Vec<ChunkPlan>);

    /// Group the request's pages by tag before planning (stable: batch order within a tag), so a
    /// chunk can hold non-adjacent pages of one class. Default: no (Linux order).
    fn group_by_tag(&self) -> bool {
        false
    }
}

/// Linux behaviour: one 4 KiB chunk per page with the device codec.
#[derive(Debug, Clone, Copy, Default)]
pub struct PagePlanner;

impl ChunkPlanner for PagePlanner {
    fn plan(&mut self, pages: &[SwapOutPage], codec: Codec, out: &mut Vec<ChunkPlan>) {
        out.extend(pages.iter().map(|_| ChunkPlan::pages(1, codec)));
    }
}

/// A fixed chunk size for every request (studies, tests): `chunk_bytes` < 4096 splits pages,
/// larger groups consecutive pages (the batch's last group may be shorter).
#[derive(Debug, Clone, Copy)]
pub struct FixedPlanner {
    pub chunk_bytes: u32,
    /// `None` = the device codec.
    pub codec: Option<Codec>,
}

impl ChunkPlanner for FixedPlanner {
    fn plan(&mut self, pages: &[SwapOutPage], device_codec: Codec, out: &mut Vec<ChunkPlan>) {
        let codec = self.codec.unwrap_or(device_codec);
        if (self.chunk_bytes as usize) < PAGE_SIZE {
            out.extend(pages.iter().map(|_| ChunkPlan::sub_page(self.chunk_bytes, codec)));
        } else {
            let per = (self.chunk_bytes as usize / PAGE_SIZE).clamp(1, MAX_CHUNK_PAGES as usize);
            let mut left = pages.len();
            while left > 0 {
                let n = left.min(per);
                out.push(ChunkPlan::pages(n as u16, codec));
                left -= n;
            }
        }
    }
}
