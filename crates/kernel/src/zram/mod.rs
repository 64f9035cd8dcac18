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
//! Host storage (no simulated effect): a chunk's pages, blobs and zsmalloc objects are runs in
//! `slab::RangeSlab`s, or inline in the chunk record when a list has one entry (a one-page chunk,
//! Linux's only kind, then touches neither slab), and its compressed bytes stay in the memo, so a
//! steady state of stores and frees makes no heap allocation per page (`tests/zram_allocs.rs`).
//!
//! Sources: Linux 6.x `zram_drv.c` (`zram_write_page`, `zram_free_page`, `mm_stat_show`,
//! `bd_stat_show`, `writeback_store`), `zsmalloc.c`; Ariadne (chunk sizes, §3 / Fig. 6);
//! REFERENCE.md "zram and zsmalloc".

mod config;
pub mod linux;
mod plan;
mod slab;
mod writeback;
pub mod zsmalloc;

pub use config::{BdStat, MmStat, ZramConfig};
pub use plan::{ChunkPlan, ChunkPlanner, FixedPlanner, PagePlanner, MAX_CHUNK_PAGES, MIN_SUB_CHUNK};
pub use writeback::WritebackSelect;

use crate::swap::{
    BackendEnv, BackendUsage, IoCost, Loaded, SwapBackend, SwapError, SwapMaintenance, SwapOutPage,
    WritebackMode,
};
use crate::swapmap::SwapMap;
use crate::types::SwapHandle;
use content::memo::{BlobId, ChunkKey};
use content::{checksum, Codec, CompressionMemo, ContentId, ContentStore, CostTable, Verify, PAGE_SIZE};
use engine::Nanos;
use serde::{Deserialize, Serialize};
use slab::{Packed, RangeSlab};
use zsmalloc::{ObjLoc, ZsPool};

#[derive(Debug, Clone, Copy)]
enum Slot {
    Free,
    Same(u64),
    /// Page `index` of `chunk`; `alone`: the chunk has no other page (no chunk-mates to look up,
    /// so a fault on it need not load the chunk's records; host-side shortcut, no effect on results).
    InChunk {
        chunk: u32,
        index: u16,
        alone: bool,
    },
}

/// One page of a chunk (records in [`Zram::page_recs`]). Packed to 4-byte alignment (16 bytes)
/// so that a [`Chunk`] fits one cache line.
#[derive(Debug, Clone, Copy)]
#[repr(C, packed(4))]
struct PageRec {
    id: ContentId,
    handle: SwapHandle,
    /// Checksum of the block written back for it (`Location::BackingRaw`).
    sum: u64,
}

#[derive(Debug, Clone, Copy)]
enum Location {
    Pool,
    /// Written back decompressed: one block per page (checksums in the page records).
    BackingRaw,
    /// Written back compressed, in `blocks` 4 KiB blocks.
    BackingCompressed {
        /// At most 33 (a 128 KiB chunk stored raw).
        blocks: u8,
    },
}

/// A chunk's bookkeeping: its lists are inline (one entry) or runs in Zram's slabs, so storing a
/// chunk allocates no heap memory of its own (issue 14). One cache line (64 bytes, aligned), so a
/// load or free of a one-page chunk misses once here, not twice (host-side only).
#[derive(Debug)]
#[repr(align(64))]
struct Chunk {
    /// Pages in chunk order.
    pages: Packed<PageRec>,
    live: u16,
    /// Sub-page chunk size (128..=2048), 0 for whole pages.
    sub_bytes: u16,
    /// Stored uncompressed (huge).
    raw: bool,
    /// Memo blobs: one per sub-page part, or one for the chunk (kept for compressed writeback).
    blobs: Packed<BlobId>,
    /// zsmalloc objects held in the pool.
    allocs: Packed<ObjLoc>,
    /// Bytes counted in `compr_data_size`.
    stored: u32,
    loc: Location,
    /// `Zram::idle_epoch` at its creation or last load: idle once a later marking bumped the
    /// epoch (marking is O(1), not a walk of every chunk).
    used_epoch: u32,
    /// Highest swap tag of its pages (writeback by tag).
    tag: u8,
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
    page_recs: RangeSlab<PageRec>,
    blob_runs: RangeSlab<BlobId>,
    obj_runs: RangeSlab<ObjLoc>,
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
    /// Bumped by each idle marking (`echo all > idle`).
    idle_epoch: u32,
    /// Same-fill value per content id (None = not same-filled), computed once per content.
    same_cache: Vec<Option<Option<u64>>>,
    buf: Vec<u8>,
    page_buf: Vec<u8>,
    plans: Vec<ChunkPlan>,
    rest: Vec<SwapOutPage>,
    rest_idx: Vec<usize>,
    /// Scratch lists of the chunk being stored.
    new_recs: Vec<PageRec>,
    new_ids: Vec<ContentId>,
    new_blobs: Vec<BlobId>,
    new_objs: Vec<ObjLoc>,
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
            page_recs: RangeSlab::new(),
            blob_runs: RangeSlab::new(),
            obj_runs: RangeSlab::new(),
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
            idle_epoch: 0,
            same_cache: Vec::new(),
            buf: Vec::new(),
            page_buf: Vec::new(),
            plans: Vec::new(),
            rest: Vec::new(),
            rest_idx: Vec::new(),
            new_recs: Vec::new(),
            new_ids: Vec::new(),
            new_blobs: Vec::new(),
            new_objs: Vec::new(),
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

    /// Allocate pool objects (appended to `new_objs`) for `comp` compressed bytes of a chunk of
    /// `orig` bytes stored as one or more zsmalloc objects; returns bytes for compr_data_size.
    fn alloc_objects(&mut self, comp: usize, orig: usize, raw: bool) -> u32 {
        if raw {
            let mut left = orig;
            while left > 0 {
                let n = left.min(PAGE_SIZE);
                self.new_objs.push(self.pool.alloc(n));
                left -= n;
            }
            return orig as u32;
        }
        let mut left = comp.max(1);
        while left > PAGE_SIZE {
            self.new_objs.push(self.pool.alloc(PAGE_SIZE));
            left -= PAGE_SIZE;
        }
        let tail = if left >= self.pool.huge_class_size() {
            PAGE_SIZE
        } else {
            left
        };
        self.new_objs.push(self.pool.alloc(tail));
        comp as u32
    }

    fn store_chunk(
        &mut self,
        env: &BackendEnv,
        plan: ChunkPlan,
        pages: &[SwapOutPage],
        cost: &mut IoCost,
    ) -> u32 {
        let mut ids = std::mem::take(&mut self.new_ids);
        ids.clear();
        ids.extend(pages.iter().map(|p| p.content));
        let mut blobs = std::mem::take(&mut self.new_blobs);
        blobs.clear();
        self.new_objs.clear();
        let codec = plan.codec;
        let huge = self.pool.huge_class_size();
        let mut stored = 0u32;
        let raw;
        let mut compress_ns = 0.0;
        if plan.sub_bytes != 0 {
            let sub = plan.sub_bytes as usize;
            let n = PAGE_SIZE as u32 >> plan.sub_bytes.trailing_zeros();
            for k in 0..n {
                let key = ChunkKey {
                    codec,
                    chunk_bytes: plan.sub_bytes,
                    offset: k * plan.sub_bytes,
                    ids: &ids,
                };
                compress_ns += self.costs.compress_ns(codec, sub);
                blobs.push(self.memo.get(env.contents, &key));
            }
            let total: usize = blobs
                .iter()
                .map(|&b| self.memo.blob(b).compressed_len().min(sub))
                .sum();
            raw = total >= huge;
            if raw {
                // The page is stored whole and raw: one 4 KiB object; keep the first blob (unused).
                blobs.truncate(1);
                stored += self.alloc_objects(PAGE_SIZE, PAGE_SIZE, true);
            } else {
                for &b in &blobs {
                    let c = self.memo.blob(b).compressed_len();
                    stored += self.alloc_objects(c, sub, c >= sub);
                }
            }
        } else {
            let orig = pages.len() * PAGE_SIZE;
            let key = ChunkKey {
                codec,
                chunk_bytes: orig as u32,
                offset: 0,
                ids: &ids,
            };
            compress_ns += self.costs.compress_ns(codec, orig);
            let blob = self.memo.get(env.contents, &key);
            blobs.push(blob);
            let c = self.memo.blob(blob).compressed_len();
            raw = c >= pages.len() * huge;
            stored += self.alloc_objects(c, orig, raw);
        }
        cost.compress_ns += ns(compress_ns * env.cpu_factor);
        if raw {
            let n = pages.len() as u64;
            self.huge_pages += n;
            self.huge_pages_since += n;
            cost.cpu_other_ns += ns(self.cfg.copy_ns_per_page * n as f64 * env.cpu_factor);
        }
        self.compr_data_size += stored as u64;
        // Handles are filled in by `store` once the slots point at the chunk.
        self.new_recs.clear();
        self.new_recs.extend(ids.iter().map(|&id| PageRec {
            id,
            handle: 0,
            sum: 0,
        }));
        let chunk = Chunk {
            pages: self.page_recs.pack(&self.new_recs),
            live: pages.len() as u16,
            sub_bytes: u16::try_from(plan.sub_bytes).expect("sub-page chunk below 64 KiB"),
            raw,
            blobs: self.blob_runs.pack(&blobs),
            allocs: self.obj_runs.pack(&self.new_objs),
            stored,
            loc: Location::Pool,
            used_epoch: self.idle_epoch,
            tag: pages.iter().map(|p| p.tag).max().unwrap_or(0),
        };
        self.new_ids = ids;
        self.new_blobs = blobs;
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

    /// Whether every blob of a chunk has been verified (`Verify::Memoised` then trusts them).
    fn trusted(&self, blobs: &Packed<BlobId>) -> bool {
        self.cfg.verify == Verify::Memoised
            && blobs
                .get(&self.blob_runs)
                .iter()
                .all(|&b| self.memo.blob(b).verified() == Some(true))
    }

    /// Checksum of page `index` of `chunk` recovered from the pool, and the decompression cost.
    fn recover(&mut self, contents: &ContentStore, cid: u32, index: usize, cpu_factor: f64) -> (u64, IoCost) {
        let chunk = self.chunks[cid as usize].as_mut().expect("live chunk");
        chunk.used_epoch = self.idle_epoch;
        let (raw, sub_bytes, blobs) = (chunk.raw, chunk.sub_bytes, chunk.blobs);
        let mut cost = IoCost::default();
        let id = chunk.pages.get(&self.page_recs)[index].id;
        if raw {
            // Stored uncompressed: a copy of the page bytes.
            cost.cpu_other_ns += ns(self.cfg.copy_ns_per_page * cpu_factor);
            return (checksum(contents.page(id)), cost);
        }
        let mut dns = 0.0;
        for &b in blobs.get(&self.blob_runs) {
            let blob = self.memo.blob(b);
            dns += self.costs.decompress_ns(blob.codec, blob.orig_len as usize);
        }
        cost.decompress_ns += ns(dns * cpu_factor);
        if self.trusted(&blobs) {
            return (contents.checksum(id), cost);
        }
        let sum = if sub_bytes != 0 {
            self.page_buf.clear();
            for &b in blobs.get(&self.blob_runs) {
                self.memo.decompress_into(b, &mut self.buf);
                self.page_buf.extend_from_slice(&self.buf);
            }
            checksum(&self.page_buf)
        } else {
            self.memo
                .decompress_into(blobs.get(&self.blob_runs)[0], &mut self.buf);
            checksum(&self.buf[index * PAGE_SIZE..(index + 1) * PAGE_SIZE])
        };
        (sum, cost)
    }

    /// Free a chunk's pool objects (its bytes leave `compr_data_size`, a raw chunk's pages leave
    /// `huge_pages`); the chunk then holds none.
    fn free_objects(&mut self, cid: u32) {
        let chunk = self.chunks[cid as usize].as_mut().expect("live chunk");
        let allocs = std::mem::replace(&mut chunk.allocs, Packed::EMPTY);
        self.compr_data_size -= std::mem::take(&mut chunk.stored) as u64;
        if chunk.raw {
            self.huge_pages -= chunk.pages.len() as u64;
        }
        for &a in allocs.get(&self.obj_runs) {
            self.pool.free(a);
        }
        self.obj_runs.unpack(allocs);
    }

    fn release_chunk(&mut self, cid: u32) {
        let loc = self.chunks[cid as usize].as_ref().expect("live chunk").loc;
        match loc {
            Location::Pool => self.free_objects(cid),
            Location::BackingRaw => {}
            Location::BackingCompressed { blocks } => self.bd.bd_count -= blocks as u64,
        }
        let chunk = self.chunks[cid as usize].take().expect("live chunk");
        self.obj_runs.unpack(chunk.allocs);
        self.blob_runs.unpack(chunk.blobs);
        self.page_recs.unpack(chunk.pages);
        self.free_chunks.push(cid);
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
        // The same-page cache entries (indexed by content) and the chunk records the new chunks
        // will reuse are scattered: fetch them ahead (no effect on results).
        for p in pages {
            engine::prefetch(&self.same_cache, p.content as usize);
        }
        for &c in self.free_chunks.iter().rev().take(pages.len()) {
            engine::prefetch(&self.chunks, c as usize);
        }
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
            let recs = &mut self.chunks[cid as usize].as_mut().expect("new chunk").pages;
            let recs = recs.get_mut(&mut self.page_recs);
            for k in 0..n {
                let h = handles[base + rest_idx[at + k]];
                self.slots[h as usize] = Slot::InChunk {
                    chunk: cid,
                    index: k as u16,
                    alone: n == 1,
                };
                recs[k].handle = h;
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
            Slot::InChunk { chunk, index, .. } => {
                let c = self.chunks[chunk as usize].as_ref().expect("live chunk");
                match &c.loc {
                    Location::Pool => {
                        let (checksum, cost) =
                            self.recover(env.contents, chunk, index as usize, env.cpu_factor);
                        Loaded { checksum, cost }
                    }
                    Location::BackingRaw => {
                        let s = c.pages.get(&self.page_recs)[index as usize].sum;
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
        // A multi-page chunk is decompressed once for all of its pages in the request (the kernel
        // asks for a faulting page's chunk-mates right after it); one written back compressed is
        // also read from flash once (its blocks hold the whole chunk).
        let mut whole: Option<u32> = None;
        for &h in handles {
            let Slot::InChunk { chunk, index, .. } = self.slots[h as usize] else {
                whole = None;
                out.push(self.load(env, h));
                continue;
            };
            let c = self.chunks[chunk as usize].as_ref().expect("live chunk");
            if whole == Some(chunk) {
                let i = index as usize;
                let checksum = if self.trusted(&c.blobs) {
                    env.contents.checksum(c.pages.get(&self.page_recs)[i].id)
                } else {
                    checksum(&self.buf[i * PAGE_SIZE..(i + 1) * PAGE_SIZE])
                };
                out.push(Loaded {
                    checksum,
                    cost: IoCost::default(),
                });
                continue;
            }
            let multi = matches!(c.loc, Location::Pool | Location::BackingCompressed { .. })
                && c.sub_bytes == 0
                && !c.raw
                && c.pages.len() > 1;
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
                    WritebackMode::IdleLargeFirst => WritebackSelect::IdleLargeFirst,
                    WritebackMode::IdleTagBelow(b) => WritebackSelect::IdleTagBelow(b),
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
                if matches!(c.loc, Location::BackingRaw) {
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
        let Some(&Slot::InChunk { chunk, index, .. }) = self.slots.get(handle as usize) else {
            return false;
        };
        let c = self.chunks[chunk as usize].as_mut().expect("live chunk");
        if matches!(c.loc, Location::BackingRaw) {
            c.pages.get_mut(&mut self.page_recs)[index as usize].sum ^= 1;
            return true;
        }
        if c.raw || c.blobs.len() == 0 {
            return false;
        }
        // Flip a byte in the middle of this chunk's first compressed stream (a copy: the memo
        // keeps the intact blob for other chunks with the same content).
        let slot = &mut c.blobs.get_mut(&mut self.blob_runs)[0];
        let len = self.memo.bytes(*slot).len();
        *slot = self.memo.flipped_copy(*slot, len / 2);
        true
    }

    fn neighbours(&self, handle: SwapHandle, max: usize, out: &mut Vec<SwapHandle>) {
        if let Some(Slot::InChunk {
            chunk, alone: false, ..
        }) = self.slots.get(handle as usize)
        {
            let c = self.chunks[*chunk as usize].as_ref().expect("live chunk");
            for rec in c.pages.get(&self.page_recs) {
                let h = rec.handle;
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

#[cfg(test)]
mod tests {
    #[test]
    fn a_chunk_record_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Option<super::Chunk>>(), 64);
        assert_eq!(std::mem::align_of::<super::Chunk>(), 64);
    }
}
