//! zram idle marking and writeback to the backing device (`CONFIG_ZRAM_WRITEBACK`; see the
//! module docs of [`crate::zram`]).

use super::slab::Packed;
use super::{Location, Slot, Zram};
use crate::swap::{BackendEnv, IoCost};
use crate::types::SwapHandle;
use content::{checksum, PAGE_SIZE};

/// Which chunks [`Zram::writeback`] moves (`/sys/block/zramN/writeback` modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WritebackSelect<'a> {
    Huge,
    Idle,
    /// Idle chunks, most pages first (stable: pool order among equals).
    IdleLargeFirst,
    /// Idle chunks whose pages' swap tags are all below the bound, most pages first.
    IdleTagBelow(u8),
    HugeIdle,
    All,
    /// The chunks holding these handles (`page_index=N`).
    Handles(&'a [SwapHandle]),
}

impl Zram {
    /// Mark every chunk in the pool idle (`echo all > idle`); a load clears the mark.
    pub fn mark_idle(&mut self) {
        self.idle_epoch += 1;
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
                    let idle = c.used_epoch < self.idle_epoch;
                    let pick = match select {
                        WritebackSelect::Huge => c.raw,
                        WritebackSelect::Idle | WritebackSelect::IdleLargeFirst => idle,
                        WritebackSelect::IdleTagBelow(b) => idle && c.tag < b,
                        WritebackSelect::HugeIdle => c.raw && idle,
                        _ => true,
                    };
                    if pick {
                        chosen.push(i as u32);
                    }
                }
                if matches!(
                    select,
                    WritebackSelect::IdleLargeFirst | WritebackSelect::IdleTagBelow(_)
                ) {
                    let len = |i: &u32| self.chunks[*i as usize].as_ref().map_or(0, |c| c.pages.len());
                    chosen.sort_by_key(|i| std::cmp::Reverse(len(i)));
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
            let (pages, blobs, sub_bytes, raw) = (chunk.pages, chunk.blobs, chunk.sub_bytes, chunk.raw);
            let n = pages.len();
            let new_loc = if self.cfg.writeback_compressed {
                let bytes = chunk.stored as u64;
                let blocks = bytes.div_ceil(PAGE_SIZE as u64).max(1);
                let b = blocks * PAGE_SIZE as u64;
                env.flash.write(env.now, b);
                cost.bytes_written += b;
                self.bytes_written += b;
                self.bd.bd_writes += blocks;
                self.bd.bd_count += blocks;
                Location::BackingCompressed {
                    blocks: u8::try_from(blocks).expect("a chunk spans at most 33 blocks"),
                }
            } else {
                // Linux: read each live page (decompressing) and write it as a 4 KiB block.
                let whole = sub_bytes == 0 && !raw && n > 1;
                let trusted = self.trusted(&blobs);
                let mut first = true;
                for i in 0..n {
                    let rec = pages.get(&self.page_recs)[i];
                    let here =
                        matches!(self.slots[rec.handle as usize], Slot::InChunk { chunk: c, .. } if c == cid);
                    if !here {
                        continue;
                    }
                    let sum = if whole && !first {
                        // A multi-page chunk is decompressed once for all its pages.
                        if trusted {
                            env.contents.checksum(rec.id)
                        } else {
                            checksum(&self.buf[i * PAGE_SIZE..(i + 1) * PAGE_SIZE])
                        }
                    } else {
                        let (s, c) = self.recover(env.contents, cid, i, env.cpu_factor);
                        cost.add(&c);
                        s
                    };
                    first = false;
                    let chunk = self.chunks[cid as usize].as_mut().expect("chunk");
                    chunk.pages.get_mut(&mut self.page_recs)[i].sum = sum;
                }
                let b = live * PAGE_SIZE as u64;
                env.flash.write(env.now, b);
                cost.bytes_written += b;
                self.bytes_written += b;
                self.bd.bd_writes += live;
                self.bd.bd_count += live;
                Location::BackingRaw
            };
            self.free_objects(cid);
            let chunk = self.chunks[cid as usize].as_mut().expect("chunk");
            chunk.loc = new_loc;
            // Compressed writeback still needs the blobs to decompress on load.
            if !self.cfg.writeback_compressed {
                self.blob_runs
                    .unpack(std::mem::replace(&mut chunk.blobs, Packed::EMPTY));
            }
        }
        cost
    }
}
