//! ZRAM: a compressed swap device in DRAM, on real page contents.
//!
//! What is modelled (Linux `drivers/block/zram/zram_drv.c`, `mm/zsmalloc.c`, 6.x):
//! - **Slots**: one per stored 4 KiB page (the swap handle is the slot index). Slots come from the
//!   swap layer's cluster allocator ([`crate::swapmap::SwapMap`], `scan_swap_map_slots`), in the
//!   order of the store batch, so pages swapped out together sit in adjacent slots. Capacity = `disksize / 4096`; a store that
//!   does not fit returns [`SwapError::Full`] (the kernel then must kill, not lose data).
//! - **Same-filled pages** (every 64-bit word equal, `page_same_filled`): stored as the fill value
//!   only (`ZRAM_SAME`), no pool memory, counted in `same_pages` and `orig_data_size`.
//! - **Chunks**: the unit of compression. By default one 4 KiB page (as Linux); a
//!   [`ChunkPlanner`] may split a page into sub-page chunks of 128 B … 2 KiB (each compressed and
//!   allocated separately: a fault pays every sub-chunk's call) or group up to 32 consecutive pages
//!   of a store batch into one chunk of 8 KiB … 128 KiB (a fault on one page decompresses the
//!   whole chunk). Each chunk has its own codec. Compression is real ([`content::Codec`]),
//!   memoised by (content ids, codec, chunk size) in a [`CompressionMemo`]; the compressed bytes
//!   are kept and really decompressed on load, and the checksum of the recovered page is returned.
//! - **Huge pages**: a 4 KiB chunk whose compressed size is ≥ `huge_class_size` is stored raw
//!   (4096 B, `ZRAM_HUGE`), counted in `huge_pages` / `huge_pages_since`; `compr_data_size` grows by
//!   4096 for it (as Linux). Generalisation (not in Linux): a multi-page chunk is stored raw when its
//!   compressed size is ≥ `pages × huge_class_size`, a sub-page chunk when it does not shrink; a
//!   sub-page-split page whose compressed parts sum to ≥ `huge_class_size` is stored raw whole.
//! - **Pool memory**: zsmalloc accounting ([`zsmalloc::ZsPool`]): every object pays the 8-byte
//!   handle, lands in a 16-byte-step size class packed into zspages of 1..8 pages; `mem_used_total`
//!   = pages held by zspages. A compressed multi-page chunk larger than 4 KiB is stored as 4 KiB
//!   objects plus a tail object (zsmalloc cannot allocate more than a page).
//! - **`mm_stat`** ([`MmStat`]) and **`bd_stat`** ([`BdStat`]) with Linux's field names and units.
//! - **Writeback** ([`Zram::writeback`]) to the flash backing device (`CONFIG_ZRAM_WRITEBACK`):
//!   selected chunks (huge, idle, huge+idle, all, or given handles) leave the pool. As Linux, the
//!   default writes each live page decompressed (4 KiB per page, decompression charged to the
//!   writer, later loads read 4 KiB from flash with no decompression); with
//!   `writeback_compressed` the compressed chunk is written in 4 KiB blocks instead (ZSWAP-like:
//!   loads read the blocks and decompress). Flash I/O goes through the shared [`FlashDevice`] queue.
//! - **Costs**: compress/decompress CPU from the [`CostTable`] × `cpu_factor`; raw (huge) and
//!   same-filled pages cost a page copy/fill (`copy_ns_per_page` × `cpu_factor`).
//!
//! Simplified vs Linux: no recompression, no per-slot locking or `ZRAM_INCOMPRESSIBLE` marking, no
//! zsmalloc compaction (`pages_compacted` stays 0; [`Zram::compactable_pages`] says how much a
//! compaction could release), idle marking is per chunk. The slot table's own memory is not in
//! `mem_used_total` (nor is it in Linux).
//!
//! Sources: Linux 6.x `zram_drv.c` (`zram_write_page`, `zram_free_page`, `mm_stat_show`,
//! `bd_stat_show`, `writeback_store`), `zsmalloc.c`; Ariadne (chunk sizes, §3 / Fig. 6);
//! REFERENCE.md "zram and zsmalloc".

pub mod linux;
pub mod zsmalloc;

use crate::swap::{
    BackendEnv, BackendUsage, IoCost, Loaded, SwapBackend, SwapError, SwapMaintenance, SwapOutPage,
    WritebackMode,
};
use crate::swapmap::SwapMap;
use crate::types::SwapHandle;
use content::memo::{Blob, ChunkKey};
use content::{checksum, Codec, CompressionMemo, ContentId, ContentStore, CostTable, Verify, PAGE_SIZE};
use engine::Nanos;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use zsmalloc::{ObjLoc, ZsPool};

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

    fn validate(&self) -> Result<(), String> {
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

/// Configuration of a zram device.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ZramConfig {
    /// `disksize`: uncompressed capacity in bytes (rounded down to pages).
    pub disksize_bytes: u64,
    /// `comp_algorithm`.
    pub codec: Codec,
    /// `mem_limit` in bytes; 0 = unlimited. A store is refused (`NoMemory`) once the pool
    /// reaches it.
    pub mem_limit_bytes: u64,
    /// `CONFIG_ZSMALLOC_CHAIN_SIZE` (max pages per zspage); 8 on current kernels, 4 before 6.3.
    pub zspage_max_pages: usize,
    /// How loads prove identity (see [`content::memo`]).
    pub verify: Verify,
    /// Write compressed chunks on writeback instead of decompressed pages (not Linux).
    pub writeback_compressed: bool,
    /// Host ns to copy or fill one 4 KiB page (huge and same-filled pages); default 150 ns,
    /// roughly a 4 KiB memcpy at ~27 GB/s on this host class.
    pub copy_ns_per_page: f64,
}

impl ZramConfig {
    pub fn new(disksize_bytes: u64, codec: Codec) -> Self {
        Self {
            disksize_bytes,
            codec,
            mem_limit_bytes: 0,
            zspage_max_pages: 8,
            verify: Verify::Always,
            writeback_compressed: false,
            copy_ns_per_page: 150.0,
        }
    }

    /// From a device profile: `swap.zram_disksize_mb` and `swap.zram_codec`.
    pub fn from_profile(d: &device::DeviceProfile) -> Self {
        let codec: Codec = d
            .swap
            .zram_codec
            .as_str()
            .parse()
            .expect("device codecs are zram codecs");
        Self::new(d.swap.zram_disksize_mb * 1024 * 1024, codec)
    }
}

/// `/sys/block/zramN/mm_stat` (bytes except the page counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MmStat {
    pub orig_data_size: u64,
    pub compr_data_size: u64,
    pub mem_used_total: u64,
    pub mem_limit: u64,
    pub mem_used_max: u64,
    pub same_pages: u64,
    pub pages_compacted: u64,
    pub huge_pages: u64,
    pub huge_pages_since: u64,
}

impl MmStat {
    /// Parse the kernel's `mm_stat` line (9 or more numbers; extra fields ignored).
    pub fn parse(line: &str) -> Option<Self> {
        let v: Vec<u64> = line
            .split_whitespace()
            .map(|t| t.parse().ok())
            .collect::<Option<_>>()?;
        if v.len() < 8 {
            return None;
        }
        Some(Self {
            orig_data_size: v[0],
            compr_data_size: v[1],
            mem_used_total: v[2],
            mem_limit: v[3],
            mem_used_max: v[4],
            same_pages: v[5],
            pages_compacted: v[6],
            huge_pages: v[7],
            huge_pages_since: v.get(8).copied().unwrap_or(0),
        })
    }
}

/// `/sys/block/zramN/bd_stat` (4 KiB units).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BdStat {
    /// Blocks currently on the backing device.
    pub bd_count: u64,
    /// Blocks read back (cumulative).
    pub bd_reads: u64,
    /// Blocks written (cumulative).
    pub bd_writes: u64,
}

/// Which chunks [`Zram::writeback`] moves (`/sys/block/zramN/writeback` modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WritebackSelect<'a> {
    Huge,
    Idle,
    HugeIdle,
    All,
    /// The chunks holding these handles (`page_index=N`).
    Handles(&'a [SwapHandle]),
}

#[derive(Debug, Clone, Copy)]
enum Slot {
    Free,
    Same(u64),
    InChunk { chunk: u32, index: u16 },
}

#[derive(Debug)]
struct Part {
    blob: Arc<Blob>,
    /// Bytes counted in `compr_data_size`.
    stored: u32,
    allocs: Vec<ObjLoc>,
}

#[derive(Debug)]
enum Location {
    Pool,
    /// Written back decompressed: one block per page; checksums of the bytes written.
    BackingRaw {
        sums: Vec<u64>,
    },
    /// Written back compressed, in `blocks` 4 KiB blocks.
    BackingCompressed {
        blocks: u32,
    },
}

#[derive(Debug)]
struct Chunk {
    ids: Box<[ContentId]>,
    handles: Vec<SwapHandle>,
    live: u16,
    sub_bytes: u32,
    /// Stored uncompressed (huge).
    raw: bool,
    parts: Vec<Part>,
    loc: Location,
    idle: bool,
}

/// The zram device model. See the module docs.
pub struct Zram {
    cfg: ZramConfig,
    costs: CostTable,
    planner: Box<dyn ChunkPlanner>,
    memo: CompressionMemo,
    pool: ZsPool,
    slots: Vec<Slot>,
    map: SwapMap,
    chunks: Vec<Option<Chunk>>,
    free_chunks: Vec<u32>,
    capacity: u64,
    pages_stored: u64,
    compr_data_size: u64,
    same_pages: u64,
    huge_pages: u64,
    huge_pages_since: u64,
    mem_used_max_pages: u64,
    bd: BdStat,
    bytes_read: u64,
    bytes_written: u64,
    /// Same-fill value per content id (None = not same-filled), computed once per content.
    same_cache: Vec<Option<Option<u64>>>,
    buf: Vec<u8>,
    page_buf: Vec<u8>,
    plans: Vec<ChunkPlan>,
    rest: Vec<SwapOutPage>,
    rest_idx: Vec<usize>,
}

/// The fill value if every 64-bit word of `page` is equal (`page_same_filled`).
pub fn same_filled(page: &[u8]) -> Option<u64> {
    let first = u64::from_le_bytes(page[..8].try_into().expect("8 bytes"));
    page.chunks_exact(8)
        .all(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")) == first)
        .then_some(first)
}

fn filled_checksum(v: u64) -> u64 {
    let mut p = [0u8; PAGE_SIZE];
    for w in p.chunks_exact_mut(8) {
        w.copy_from_slice(&v.to_le_bytes());
    }
    checksum(&p)
}

fn ns(x: f64) -> Nanos {
    x.round().max(0.0) as Nanos
}

impl Zram {
    /// A zram device with the Linux chunking (one page per chunk).
    pub fn new(cfg: ZramConfig, costs: CostTable) -> Self {
        Self::with_planner(cfg, costs, Box::new(PagePlanner))
    }

    /// From a device profile, with the built-in cost table.
    pub fn from_profile(d: &device::DeviceProfile) -> Self {
        Self::new(ZramConfig::from_profile(d), CostTable::builtin())
    }

    pub fn with_planner(cfg: ZramConfig, costs: CostTable, planner: Box<dyn ChunkPlanner>) -> Self {
        let pool = ZsPool::new(cfg.zspage_max_pages.clamp(1, 16));
        let capacity = cfg.disksize_bytes / PAGE_SIZE as u64;
        Self {
            cfg,
            costs,
            planner,
            memo: CompressionMemo::new(),
            pool,
            slots: Vec::new(),
            map: SwapMap::new(capacity.min(u32::MAX as u64) as u32),
            chunks: Vec::new(),
            free_chunks: Vec::new(),
            capacity,
            pages_stored: 0,
            compr_data_size: 0,
            same_pages: 0,
            huge_pages: 0,
            huge_pages_since: 0,
            mem_used_max_pages: 0,
            bd: BdStat::default(),
            bytes_read: 0,
            bytes_written: 0,
            same_cache: Vec::new(),
            buf: Vec::new(),
            page_buf: Vec::new(),
            plans: Vec::new(),
            rest: Vec::new(),
            rest_idx: Vec::new(),
        }
    }

    /// Replace the chunk planner (policy hook).
    pub fn set_planner(&mut self, planner: Box<dyn ChunkPlanner>) {
        self.planner = planner;
    }

    pub fn config(&self) -> &ZramConfig {
        &self.cfg
    }

    pub fn huge_class_size(&self) -> usize {
        self.pool.huge_class_size()
    }

    pub fn memo(&self) -> &CompressionMemo {
        &self.memo
    }

    pub fn mm_stat(&self) -> MmStat {
        MmStat {
            orig_data_size: self.pages_stored * PAGE_SIZE as u64,
            compr_data_size: self.compr_data_size,
            mem_used_total: self.pool.pages_allocated() * PAGE_SIZE as u64,
            mem_limit: self.cfg.mem_limit_bytes,
            mem_used_max: self.mem_used_max_pages * PAGE_SIZE as u64,
            same_pages: self.same_pages,
            pages_compacted: self.pool.pages_compacted,
            huge_pages: self.huge_pages,
            huge_pages_since: self.huge_pages_since,
        }
    }

    pub fn bd_stat(&self) -> BdStat {
        self.bd
    }

    /// Pool pages a full zsmalloc compaction would release now.
    pub fn compactable_pages(&self) -> u64 {
        self.pool.compactable_pages()
    }

    fn same_value(&mut self, contents: &ContentStore, id: ContentId) -> Option<u64> {
        let i = id as usize;
        if i >= self.same_cache.len() {
            self.same_cache.resize(contents.len().max(i + 1), None);
        }
        *self.same_cache[i].get_or_insert_with(|| same_filled(contents.page(id)))
    }

    /// Take the next slot from the cluster allocator (the caller checked the capacity).
    fn alloc_slot(&mut self) -> SwapHandle {
        let h = self
            .map
            .alloc()
            .expect("zram capacity checked before allocating slots");
        if self.slots.len() <= h as usize {
            self.slots.resize(h as usize + 1, Slot::Free);
        }
        h
    }

    /// Allocate pool objects for `comp` compressed bytes of a chunk of `orig` bytes stored as one
    /// or more zsmalloc objects; returns (allocations, bytes for compr_data_size).
    fn alloc_objects(&mut self, comp: usize, orig: usize, raw: bool) -> (Vec<ObjLoc>, u32) {
        let mut allocs = Vec::new();
        if raw {
            let mut left = orig;
            while left > 0 {
                let n = left.min(PAGE_SIZE);
                allocs.push(self.pool.alloc(n));
                left -= n;
            }
            return (allocs, orig as u32);
        }
        let mut left = comp.max(1);
        while left > PAGE_SIZE {
            allocs.push(self.pool.alloc(PAGE_SIZE));
            left -= PAGE_SIZE;
        }
        let tail = if left >= self.pool.huge_class_size() {
            PAGE_SIZE
        } else {
            left
        };
        allocs.push(self.pool.alloc(tail));
        (allocs, comp as u32)
    }

    fn store_chunk(
        &mut self,
        env: &BackendEnv,
        plan: ChunkPlan,
        pages: &[SwapOutPage],
        cost: &mut IoCost,
    ) -> u32 {
        let ids: Box<[ContentId]> = pages.iter().map(|p| p.content).collect();
        let codec = plan.codec;
        let huge = self.pool.huge_class_size();
        let mut parts = Vec::new();
        let raw;
        let mut compress_ns = 0.0;
        if plan.sub_bytes != 0 {
            let n = PAGE_SIZE as u32 >> plan.sub_bytes.trailing_zeros();
            let blobs: Vec<Arc<Blob>> = (0..n)
                .map(|k| {
                    let key = ChunkKey {
                        codec,
                        chunk_bytes: plan.sub_bytes,
                        offset: k * plan.sub_bytes,
                        ids: ids.clone(),
                    };
                    compress_ns += self.costs.compress_ns(codec, plan.sub_bytes as usize);
                    self.memo.get(env.contents, &key)
                })
                .collect();
            let total: usize = blobs
                .iter()
                .map(|b| b.compressed_len().min(plan.sub_bytes as usize))
                .sum();
            raw = total >= huge;
            if raw {
                // The page is stored whole and raw: one 4 KiB object; keep the blobs (unused).
                let (allocs, stored) = self.alloc_objects(PAGE_SIZE, PAGE_SIZE, true);
                parts.push(Part {
                    blob: blobs[0].clone(),
                    stored,
                    allocs,
                });
            } else {
                for b in blobs {
                    let c = b.compressed_len();
                    let part_raw = c >= plan.sub_bytes as usize;
                    let (allocs, stored) = self.alloc_objects(c, plan.sub_bytes as usize, part_raw);
                    parts.push(Part {
                        blob: b,
                        stored,
                        allocs,
                    });
                }
            }
        } else {
            let orig = pages.len() * PAGE_SIZE;
            let key = ChunkKey {
                codec,
                chunk_bytes: orig as u32,
                offset: 0,
                ids: ids.clone(),
            };
            compress_ns += self.costs.compress_ns(codec, orig);
            let blob = self.memo.get(env.contents, &key);
            let c = blob.compressed_len();
            raw = c >= pages.len() * huge;
            let (allocs, stored) = self.alloc_objects(c, orig, raw);
            parts.push(Part { blob, stored, allocs });
        }
        cost.compress_ns += ns(compress_ns * env.cpu_factor);
        if raw {
            let n = pages.len() as u64;
            self.huge_pages += n;
            self.huge_pages_since += n;
            cost.cpu_other_ns += ns(self.cfg.copy_ns_per_page * n as f64 * env.cpu_factor);
        }
        self.compr_data_size += parts.iter().map(|p| p.stored as u64).sum::<u64>();
        let chunk = Chunk {
            ids,
            handles: Vec::with_capacity(pages.len()),
            live: pages.len() as u16,
            sub_bytes: plan.sub_bytes,
            raw,
            parts,
            loc: Location::Pool,
            idle: false,
        };
        match self.free_chunks.pop() {
            Some(c) => {
                self.chunks[c as usize] = Some(chunk);
                c
            }
            None => {
                self.chunks.push(Some(chunk));
                (self.chunks.len() - 1) as u32
            }
        }
    }

    /// Checksum of page `index` of `chunk` recovered from the pool, and the decompression cost.
    fn recover(&mut self, contents: &ContentStore, cid: u32, index: usize, cpu_factor: f64) -> (u64, IoCost) {
        let chunk = self.chunks[cid as usize].as_mut().expect("live chunk");
        chunk.idle = false;
        let mut cost = IoCost::default();
        let id = chunk.ids[index];
        if chunk.raw {
            // Stored uncompressed: a copy of the page bytes.
            cost.cpu_other_ns += ns(self.cfg.copy_ns_per_page * cpu_factor);
            return (checksum(contents.page(id)), cost);
        }
        let mut dns = 0.0;
        for p in &chunk.parts {
            dns += self.costs.decompress_ns(p.blob.codec, p.blob.orig_len as usize);
        }
        cost.decompress_ns += ns(dns * cpu_factor);
        if self.cfg.verify == Verify::Memoised && chunk.parts.iter().all(|p| p.blob.verified() == Some(true))
        {
            return (contents.checksum(id), cost);
        }
        let sum = if chunk.sub_bytes != 0 {
            self.page_buf.clear();
            for p in &chunk.parts {
                self.memo.decompress_into(&p.blob, &mut self.buf);
                self.page_buf.extend_from_slice(&self.buf);
            }
            checksum(&self.page_buf)
        } else {
            self.memo.decompress_into(&chunk.parts[0].blob, &mut self.buf);
            checksum(&self.buf[index * PAGE_SIZE..(index + 1) * PAGE_SIZE])
        };
        (sum, cost)
    }

    fn release_chunk(&mut self, cid: u32) {
        let chunk = self.chunks[cid as usize].take().expect("live chunk");
        match chunk.loc {
            Location::Pool => {
                for p in &chunk.parts {
                    for &a in &p.allocs {
                        self.pool.free(a);
                    }
                    self.compr_data_size -= p.stored as u64;
                }
                if chunk.raw {
                    self.huge_pages -= chunk.ids.len() as u64;
                }
            }
            Location::BackingRaw { .. } => {}
            Location::BackingCompressed { blocks } => self.bd.bd_count -= blocks as u64,
        }
        self.free_chunks.push(cid);
    }

    /// Mark every chunk in the pool idle (`echo all > idle`); a load clears the mark.
    pub fn mark_idle(&mut self) {
        for c in self.chunks.iter_mut().flatten() {
            c.idle = true;
        }
    }

    /// Write selected chunks to the backing device (at most `max_pages` pages). Returns the work
    /// done (CPU for decompression in raw mode, bytes written); the writes queue on the flash.
    pub fn writeback(&mut self, env: &mut BackendEnv, select: WritebackSelect, max_pages: u64) -> IoCost {
        let mut cost = IoCost::default();
        let mut chosen: Vec<u32> = Vec::new();
        match select {
            WritebackSelect::Handles(hs) => {
                for &h in hs {
                    if let Some(Slot::InChunk { chunk, .. }) = self.slots.get(h as usize) {
                        if !chosen.contains(chunk) {
                            chosen.push(*chunk);
                        }
                    }
                }
            }
            _ => {
                for (i, c) in self.chunks.iter().enumerate() {
                    let Some(c) = c else { continue };
                    let pick = match select {
                        WritebackSelect::Huge => c.raw,
                        WritebackSelect::Idle => c.idle,
                        WritebackSelect::HugeIdle => c.raw && c.idle,
                        _ => true,
                    };
                    if pick {
                        chosen.push(i as u32);
                    }
                }
            }
        }
        let mut pages_done = 0u64;
        for cid in chosen {
            let Some(chunk) = self.chunks[cid as usize].as_ref() else {
                continue;
            };
            if !matches!(chunk.loc, Location::Pool) {
                continue;
            }
            let live = chunk.live as u64;
            if pages_done + live > max_pages {
                break;
            }
            pages_done += live;
            let new_loc = if self.cfg.writeback_compressed {
                let bytes: u64 = chunk.parts.iter().map(|p| p.stored as u64).sum();
                let blocks = bytes.div_ceil(PAGE_SIZE as u64).max(1);
                let b = blocks * PAGE_SIZE as u64;
                env.flash.write(env.now, b);
                cost.bytes_written += b;
                self.bytes_written += b;
                self.bd.bd_writes += blocks;
                self.bd.bd_count += blocks;
                Location::BackingCompressed {
                    blocks: blocks as u32,
                }
            } else {
                // Linux: read each page (decompressing) and write it as a 4 KiB block.
                let n = chunk.ids.len();
                let live_idx: Vec<usize> = (0..n)
                    .filter(|&i| matches!(self.slots[chunk.handles[i] as usize], Slot::InChunk { chunk: c, .. } if c == cid))
                    .collect();
                let mut sums = vec![0u64; n];
                let mut c2 = IoCost::default();
                let whole = chunk.sub_bytes == 0 && !chunk.raw && n > 1;
                let trusted = self.cfg.verify == Verify::Memoised
                    && chunk.parts.iter().all(|p| p.blob.verified() == Some(true));
                let ids = chunk.ids.clone();
                for (k, &i) in live_idx.iter().enumerate() {
                    if whole && k > 0 {
                        // A multi-page chunk is decompressed once for all its pages.
                        sums[i] = if trusted {
                            env.contents.checksum(ids[i])
                        } else {
                            checksum(&self.buf[i * PAGE_SIZE..(i + 1) * PAGE_SIZE])
                        };
                        continue;
                    }
                    let (s, c) = self.recover(env.contents, cid, i, env.cpu_factor);
                    sums[i] = s;
                    c2.add(&c);
                }
                cost.add(&c2);
                let b = live * PAGE_SIZE as u64;
                env.flash.write(env.now, b);
                cost.bytes_written += b;
                self.bytes_written += b;
                self.bd.bd_writes += live;
                self.bd.bd_count += live;
                Location::BackingRaw { sums }
            };
            let chunk = self.chunks[cid as usize].as_mut().expect("chunk");
            let parts = std::mem::take(&mut chunk.parts);
            let raw = chunk.raw;
            let npages = chunk.ids.len() as u64;
            chunk.loc = new_loc;
            for p in &parts {
                for &a in &p.allocs {
                    self.pool.free(a);
                }
                self.compr_data_size -= p.stored as u64;
            }
            if raw {
                self.huge_pages -= npages;
            }
            // Compressed writeback still needs the blobs to decompress on load.
            if self.cfg.writeback_compressed {
                let chunk = self.chunks[cid as usize].as_mut().expect("chunk");
                chunk.parts = parts
                    .into_iter()
                    .map(|p| Part {
                        allocs: Vec::new(),
                        stored: 0,
                        ..p
                    })
                    .collect();
            }
        }
        cost
    }
}

impl SwapBackend for Zram {
    fn name(&self) -> &'static str {
        "zram"
    }

    fn synchronous(&self) -> bool {
        true
    }

    fn store(
        &mut self,
        env: &mut BackendEnv,
        pages: &[SwapOutPage],
        handles: &mut Vec<SwapHandle>,
    ) -> Result<IoCost, SwapError> {
        if self.pages_stored + pages.len() as u64 > self.capacity {
            return Err(SwapError::Full);
        }
        if self.cfg.mem_limit_bytes > 0
            && self.pool.pages_allocated() * PAGE_SIZE as u64 >= self.cfg.mem_limit_bytes
        {
            return Err(SwapError::NoMemory);
        }
        let mut cost = IoCost::default();
        let base = handles.len();
        self.rest.clear();
        self.rest_idx.clear();
        for (i, p) in pages.iter().enumerate() {
            // Slots in batch order (`add_to_swap` per page as reclaim walks the batch).
            let h = self.alloc_slot();
            handles.push(h);
            match self.same_value(env.contents, p.content) {
                Some(v) => {
                    self.slots[h as usize] = Slot::Same(v);
                    self.same_pages += 1;
                    cost.cpu_other_ns += ns(self.cfg.copy_ns_per_page * env.cpu_factor);
                }
                None => {
                    self.rest.push(*p);
                    self.rest_idx.push(i);
                }
            }
        }
        self.pages_stored += pages.len() as u64;
        let mut plans = std::mem::take(&mut self.plans);
        plans.clear();
        let mut rest = std::mem::take(&mut self.rest);
        let mut rest_idx = std::mem::take(&mut self.rest_idx);
        if self.planner.group_by_tag() {
            let mut order: Vec<usize> = (0..rest.len()).collect();
            order.sort_by_key(|&i| rest[i].tag);
            let (r, ri): (Vec<_>, Vec<_>) = order.iter().map(|&i| (rest[i], rest_idx[i])).unzip();
            rest = r;
            rest_idx = ri;
        }
        self.planner.plan(&rest, self.cfg.codec, &mut plans);
        let covered: usize = plans.iter().map(|p| p.pages as usize).sum();
        assert_eq!(
            covered,
            rest.len(),
            "chunk planner must cover every page of the request"
        );
        let mut at = 0;
        for plan in &plans {
            if let Err(e) = plan.validate() {
                panic!("invalid chunk plan from planner: {e}");
            }
            let n = plan.pages as usize;
            let cid = self.store_chunk(env, *plan, &rest[at..at + n], &mut cost);
            for k in 0..n {
                let h = handles[base + rest_idx[at + k]];
                self.slots[h as usize] = Slot::InChunk {
                    chunk: cid,
                    index: k as u16,
                };
                self.chunks[cid as usize]
                    .as_mut()
                    .expect("new chunk")
                    .handles
                    .push(h);
            }
            at += n;
        }
        self.plans = plans;
        self.rest = rest;
        self.rest_idx = rest_idx;
        self.mem_used_max_pages = self.mem_used_max_pages.max(self.pool.pages_allocated());
        Ok(cost)
    }

    fn load(&mut self, env: &mut BackendEnv, handle: SwapHandle) -> Loaded {
        match self.slots[handle as usize] {
            Slot::Free => panic!("zram load of free handle {handle}"),
            Slot::Same(v) => Loaded {
                checksum: filled_checksum(v),
                cost: IoCost {
                    cpu_other_ns: ns(self.cfg.copy_ns_per_page * env.cpu_factor),
                    ..Default::default()
                },
            },
            Slot::InChunk { chunk, index } => {
                let c = self.chunks[chunk as usize].as_ref().expect("live chunk");
                match &c.loc {
                    Location::Pool => {
                        let (checksum, cost) =
                            self.recover(env.contents, chunk, index as usize, env.cpu_factor);
                        Loaded { checksum, cost }
                    }
                    Location::BackingRaw { sums } => {
                        let s = sums[index as usize];
                        let wait = env.flash.read(env.now, PAGE_SIZE as u64);
                        self.bd.bd_reads += 1;
                        self.bytes_read += PAGE_SIZE as u64;
                        Loaded {
                            checksum: s,
                            cost: IoCost {
                                wait_ns: wait,
                                bytes_read: PAGE_SIZE as u64,
                                ..Default::default()
                            },
                        }
                    }
                    Location::BackingCompressed { blocks } => {
                        let b = *blocks as u64 * PAGE_SIZE as u64;
                        let wait = env.flash.read(env.now, b);
                        self.bd.bd_reads += *blocks as u64;
                        self.bytes_read += b;
                        let (checksum, mut cost) =
                            self.recover(env.contents, chunk, index as usize, env.cpu_factor);
                        cost.wait_ns += wait;
                        cost.bytes_read += b;
                        Loaded { checksum, cost }
                    }
                }
            }
        }
    }

    fn load_batch(&mut self, env: &mut BackendEnv, handles: &[SwapHandle], out: &mut Vec<Loaded>) {
        // A multi-page chunk in the pool is decompressed once for all of its pages in the request
        // (the kernel asks for a faulting page's chunk-mates right after it).
        let mut whole: Option<u32> = None;
        for &h in handles {
            let Slot::InChunk { chunk, index } = self.slots[h as usize] else {
                whole = None;
                out.push(self.load(env, h));
                continue;
            };
            let c = self.chunks[chunk as usize].as_ref().expect("live chunk");
            if whole == Some(chunk) {
                let trusted = self.cfg.verify == Verify::Memoised
                    && c.parts.iter().all(|p| p.blob.verified() == Some(true));
                let i = index as usize;
                let checksum = if trusted {
                    env.contents.checksum(c.ids[i])
                } else {
                    checksum(&self.buf[i * PAGE_SIZE..(i + 1) * PAGE_SIZE])
                };
                out.push(Loaded {
                    checksum,
                    cost: IoCost::default(),
                });
                continue;
            }
            let multi = matches!(c.loc, Location::Pool) && c.sub_bytes == 0 && !c.raw && c.ids.len() > 1;
            out.push(self.load(env, h));
            whole = multi.then_some(chunk);
        }
    }

    fn maintain(&mut self, env: &mut BackendEnv, op: SwapMaintenance) -> IoCost {
        match op {
            SwapMaintenance::MarkIdle => {
                self.mark_idle();
                IoCost::default()
            }
            SwapMaintenance::Writeback { mode, max_pages } => {
                let select = match mode {
                    WritebackMode::Huge => WritebackSelect::Huge,
                    WritebackMode::Idle => WritebackSelect::Idle,
                    WritebackMode::HugeIdle => WritebackSelect::HugeIdle,
                    WritebackMode::All => WritebackSelect::All,
                };
                self.writeback(env, select, max_pages)
            }
        }
    }

    fn free(&mut self, handle: SwapHandle) {
        let slot = std::mem::replace(&mut self.slots[handle as usize], Slot::Free);
        match slot {
            Slot::Free => panic!("zram double free of handle {handle}"),
            Slot::Same(_) => self.same_pages -= 1,
            Slot::InChunk { chunk, .. } => {
                let c = self.chunks[chunk as usize].as_mut().expect("live chunk");
                c.live -= 1;
                if matches!(c.loc, Location::BackingRaw { .. }) {
                    self.bd.bd_count -= 1;
                }
                if c.live == 0 {
                    self.release_chunk(chunk);
                }
            }
        }
        self.pages_stored -= 1;
        self.map.free(handle);
    }

    fn corrupt(&mut self, handle: SwapHandle) -> bool {
        let Some(&Slot::InChunk { chunk, index }) = self.slots.get(handle as usize) else {
            return false;
        };
        let c = self.chunks[chunk as usize].as_mut().expect("live chunk");
        if let Location::BackingRaw { sums } = &mut c.loc {
            sums[index as usize] ^= 1;
            return true;
        }
        match c.parts.first_mut() {
            Some(p) if !c.raw => {
                // Flip a byte in the middle of this chunk's compressed stream (a copy: the memo
                // keeps the intact blob for other chunks with the same content).
                p.blob = Arc::new(p.blob.with_flipped_byte(p.blob.bytes.len() / 2));
                true
            }
            _ => false,
        }
    }

    fn neighbours(&self, handle: SwapHandle, max: usize, out: &mut Vec<SwapHandle>) {
        if let Some(Slot::InChunk { chunk, .. }) = self.slots.get(handle as usize) {
            let c = self.chunks[*chunk as usize].as_ref().expect("live chunk");
            for &h in &c.handles {
                if out.len() >= max {
                    break;
                }
                if h != handle
                    && matches!(self.slots[h as usize], Slot::InChunk { chunk: x, .. } if x == *chunk)
                {
                    out.push(h);
                }
            }
        }
    }

    fn usage(&self) -> BackendUsage {
        BackendUsage {
            stored_pages: self.pages_stored,
            capacity_pages: self.capacity,
            dram_pages: self.pool.pages_allocated(),
            bytes_read: self.bytes_read,
            bytes_written: self.bytes_written,
        }
    }

    fn stats(&self) -> Vec<(&'static str, u64)> {
        let m = self.mm_stat();
        let b = self.bd_stat();
        vec![
            ("orig_data_size", m.orig_data_size),
            ("compr_data_size", m.compr_data_size),
            ("mem_used_total", m.mem_used_total),
            ("mem_limit", m.mem_limit),
            ("mem_used_max", m.mem_used_max),
            ("same_pages", m.same_pages),
            ("pages_compacted", m.pages_compacted),
            ("huge_pages", m.huge_pages),
            ("huge_pages_since", m.huge_pages_since),
            ("bd_count", b.bd_count),
            ("bd_reads", b.bd_reads),
            ("bd_writes", b.bd_writes),
        ]
    }
}
