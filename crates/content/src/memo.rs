//! Memoised compression of chunks of content pages.
//!
//! What is modelled: compressing a *chunk* — a sub-page slice of one content page (128 B … 2 KiB),
//! one page, or several consecutive pages compressed together (8 KiB … 128 KiB) — with a real
//! codec on the real bytes. Many simulated pages share a content page, so results are memoised by
//! [`ChunkKey`] = (codec, chunk size, offset in the first page, content ids). The compressed bytes
//! are kept so that a swap-in really decompresses them.
//!
//! Storage (issue 14: no per-chunk heap allocation): blobs live in a dense table addressed by
//! [`BlobId`]; their compressed bytes are packed into 1 MiB blocks and their keys' content ids into
//! one shared vector. A lookup borrows the caller's ids ([`ChunkKey`] holds a slice): it hashes
//! the key once and compares it against the stored keys with that hash, never cloning it. The memo
//! never evicts, so nothing is freed before it is dropped.
//!
//! Verification ([`Verify`]): `Always` decompresses the stored bytes on every load and checksums
//! the recovered page (tests use this). `Memoised` decompresses each distinct blob once, checks the
//! recovered bytes against the checksum of the blob's input, and afterwards trusts the blob (a load
//! then returns the checksum of the content page): a long simulation pays one real decompression
//! per distinct chunk, not per fault. A blob that failed verification keeps failing.
//!
//! Determinism: lookups only (never iteration) in a hash map; blob ids are assigned in insertion
//! order; results do not depend on the hash function.

use crate::{checksum, Codec, ContentId, ContentStore, PAGE_SIZE};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// How loads prove identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verify {
    /// Decompress and checksum on every load.
    #[default]
    Always,
    /// Decompress and checksum each distinct blob once, then trust the recorded checksums.
    Memoised,
}

/// Identity of a chunk's input bytes (borrowed: looking it up copies nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChunkKey<'a> {
    pub codec: Codec,
    /// Bytes of input (≤ 4096 for a sub-page chunk, a multiple of 4096 otherwise).
    pub chunk_bytes: u32,
    /// Byte offset in the (single) page for a sub-page chunk; 0 otherwise.
    pub offset: u32,
    /// Content ids of the pages in the chunk (one for sub-page and 4 KiB chunks).
    pub ids: &'a [ContentId],
}

/// Index of a blob in its [`CompressionMemo`].
pub type BlobId = u32;

/// A compressed chunk (its bytes are in the memo: [`CompressionMemo::bytes`]).
#[derive(Debug, Clone, Copy)]
pub struct Blob {
    pub codec: Codec,
    /// Uncompressed length.
    pub orig_len: u32,
    /// Checksum of the input bytes (to verify a decompression).
    pub input_sum: u64,
    /// Compressed bytes: block, offset in it, length.
    block: u32,
    at: u32,
    len: u32,
    /// 0 = not verified yet, 1 = a decompression reproduced the input, 2 = it did not.
    state: u8,
}

impl Blob {
    pub fn compressed_len(&self) -> usize {
        self.len as usize
    }

    /// Whether a decompression of this blob has been verified against its input checksum.
    pub fn verified(&self) -> Option<bool> {
        match self.state {
            0 => None,
            s => Some(s == 1),
        }
    }
}

/// Counters of a [`CompressionMemo`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemoStats {
    pub hits: u64,
    pub misses: u64,
    pub decompressions: u64,
    pub compressed_bytes_held: u64,
}

/// The stored key of a blob, its ids in `CompressionMemo::key_ids`.
#[derive(Debug, Clone, Copy)]
struct Entry {
    codec: Codec,
    chunk_bytes: u32,
    offset: u32,
    ids_at: u32,
    ids_len: u32,
    /// Next blob with the same key hash (`NONE` ends the chain).
    next: BlobId,
}

const NONE: BlobId = BlobId::MAX;
/// Size of a block of compressed bytes (a larger blob gets a block of its own).
const BLOCK: usize = 1 << 20;

/// The map's keys are already hashes: pass them through.
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | b as u64;
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// A fast multiplicative hasher (FxHash-style) for keys.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        // Final avalanche so the map's low bits depend on every input word.
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^ (h >> 33)
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.write_u64(u64::from_le_bytes(w.try_into().expect("8 bytes")));
        }
        for &b in words.remainder() {
            self.write_u64(b as u64);
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

fn key_hash(key: &ChunkKey) -> u64 {
    let mut h = KeyHasher::default();
    key.hash(&mut h);
    h.finish()
}

/// Memo of compressed chunks.
#[derive(Default)]
pub struct CompressionMemo {
    /// Key hash → first blob with that hash.
    index: HashMap<u64, BlobId, BuildHasherDefault<PassThrough>>,
    entries: Vec<Entry>,
    blobs: Vec<Blob>,
    key_ids: Vec<ContentId>,
    blocks: Vec<Vec<u8>>,
    buf: Vec<u8>,
    out: Vec<u8>,
    pub stats: MemoStats,
}

impl std::fmt::Debug for CompressionMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompressionMemo")
            .field("blobs", &self.blobs.len())
            .field("stats", &self.stats)
            .finish()
    }
}

/// The input bytes of a chunk, gathered from the store.
pub fn gather(store: &ContentStore, key: &ChunkKey, buf: &mut Vec<u8>) {
    buf.clear();
    if key.chunk_bytes as usize <= PAGE_SIZE && key.ids.len() == 1 {
        let o = key.offset as usize;
        buf.extend_from_slice(&store.page(key.ids[0])[o..o + key.chunk_bytes as usize]);
    } else {
        for &id in key.ids.iter() {
            buf.extend_from_slice(store.page(id));
        }
    }
}

impl CompressionMemo {
    pub fn new() -> Self {
        Self::default()
    }

    fn find(&self, hash: u64, key: &ChunkKey) -> Option<BlobId> {
        let mut b = *self.index.get(&hash)?;
        while b != NONE {
            let e = &self.entries[b as usize];
            if e.codec == key.codec
                && e.chunk_bytes == key.chunk_bytes
                && e.offset == key.offset
                && self.key_ids[e.ids_at as usize..(e.ids_at + e.ids_len) as usize] == *key.ids
            {
                return Some(b);
            }
            b = e.next;
        }
        None
    }

    /// Copy `bytes` into the block arena; returns (block, offset).
    fn keep_bytes(blocks: &mut Vec<Vec<u8>>, bytes: &[u8]) -> (u32, u32) {
        let fits = blocks
            .last()
            .is_some_and(|b| b.capacity() - b.len() >= bytes.len());
        if !fits {
            blocks.push(Vec::with_capacity(BLOCK.max(bytes.len())));
        }
        let block = blocks.last_mut().expect("a block");
        let at = block.len() as u32;
        block.extend_from_slice(bytes);
        ((blocks.len() - 1) as u32, at)
    }

    /// The compressed blob for `key`, compressing on first use.
    pub fn get(&mut self, store: &ContentStore, key: &ChunkKey) -> BlobId {
        let hash = key_hash(key);
        if let Some(b) = self.find(hash, key) {
            self.stats.hits += 1;
            return b;
        }
        self.stats.misses += 1;
        gather(store, key, &mut self.buf);
        key.codec.compress(&self.buf, &mut self.out);
        self.stats.compressed_bytes_held += self.out.len() as u64;
        let (block, at) = Self::keep_bytes(&mut self.blocks, &self.out);
        let id = self.blobs.len() as BlobId;
        self.blobs.push(Blob {
            codec: key.codec,
            orig_len: self.buf.len() as u32,
            input_sum: checksum(&self.buf),
            block,
            at,
            len: self.out.len() as u32,
            state: 0,
        });
        let head = self.index.entry(hash).or_insert(NONE);
        self.entries.push(Entry {
            codec: key.codec,
            chunk_bytes: key.chunk_bytes,
            offset: key.offset,
            ids_at: self.key_ids.len() as u32,
            ids_len: key.ids.len() as u32,
            next: *head,
        });
        *head = id;
        self.key_ids.extend_from_slice(key.ids);
        id
    }

    /// A copy of blob `id` with compressed byte `at` inverted and not yet verified, which no key
    /// finds: fault injection for integrity tests (a load of it must report a checksum mismatch;
    /// chunks sharing the original keep the intact blob).
    pub fn flipped_copy(&mut self, id: BlobId, at: usize) -> BlobId {
        let mut bytes = self.bytes(id).to_vec();
        if let Some(b) = bytes.get_mut(at) {
            *b = !*b;
        }
        let (block, at) = Self::keep_bytes(&mut self.blocks, &bytes);
        let orig = self.blobs[id as usize];
        let copy = self.blobs.len() as BlobId;
        self.blobs.push(Blob {
            block,
            at,
            len: bytes.len() as u32,
            state: 0,
            ..orig
        });
        self.entries.push(Entry {
            ids_len: 0,
            next: NONE,
            ..self.entries[id as usize]
        });
        copy
    }

    pub fn blob(&self, id: BlobId) -> &Blob {
        &self.blobs[id as usize]
    }

    /// The compressed bytes of blob `id`.
    pub fn bytes(&self, id: BlobId) -> &[u8] {
        let b = &self.blobs[id as usize];
        &self.blocks[b.block as usize][b.at as usize..(b.at + b.len) as usize]
    }

    /// Decompress blob `id` into `out` (resized to its original length) and record whether the
    /// bytes match its input checksum. Returns that verdict (false also on a decoder error).
    pub fn decompress_into(&mut self, id: BlobId, out: &mut Vec<u8>) -> bool {
        self.stats.decompressions += 1;
        let blob = &self.blobs[id as usize];
        let ok = blob
            .codec
            .decompress(self.bytes(id), out, blob.orig_len as usize)
            .is_ok()
            && checksum(out) == blob.input_sum;
        if !ok {
            out.clear();
            out.resize(blob.orig_len as usize, 0);
        }
        self.blobs[id as usize].state = if ok { 1 } else { 2 };
        ok
    }

    pub fn len(&self) -> usize {
        self.blobs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.blobs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SynthMix;

    #[test]
    fn lookups_find_equal_keys_and_only_them() {
        let mut store = ContentStore::new();
        let ids: Vec<ContentId> = store.append_synthetic(&SynthMix::default(), 600, 3).collect();
        let mut m = CompressionMemo::new();
        fn key(ids: &[ContentId], offset: u32) -> ChunkKey<'_> {
            ChunkKey {
                codec: Codec::Lz4,
                chunk_bytes: if ids.len() > 1 {
                    ids.len() as u32 * 4096
                } else {
                    1024
                },
                offset,
                ids,
            }
        }
        // Single pages at two offsets and pairs: all distinct keys; pairs hold > 1 MiB of input,
        // so the compressed bytes span several blocks.
        let mut made = Vec::new();
        for w in ids.windows(2) {
            made.push((m.get(&store, &key(&w[..1], 0)), w[..1].to_vec(), 0));
            made.push((m.get(&store, &key(&w[..1], 1024)), w[..1].to_vec(), 1024));
            made.push((m.get(&store, &key(w, 0)), w.to_vec(), 0));
        }
        let distinct = m.len();
        let misses = m.stats.misses;
        let mut buf = Vec::new();
        let mut input = Vec::new();
        for (b, ids, offset) in &made {
            let k = key(ids, *offset);
            assert_eq!(m.get(&store, &k), *b, "an equal key finds its blob");
            gather(&store, &k, &mut input);
            assert!(m.decompress_into(*b, &mut buf));
            assert_eq!(buf, input);
            assert_eq!(m.blob(*b).verified(), Some(true));
        }
        assert_eq!((m.len(), m.stats.misses), (distinct, misses), "hits add nothing");
        assert!(m.blocks.len() > 1, "test must span blocks");
        // Synthetic pages repeat content, so equal keys were shared; distinct keys never were.
        let mut keys: Vec<_> = made.iter().map(|(_, i, o)| (i.clone(), *o)).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), distinct);
    }
}
