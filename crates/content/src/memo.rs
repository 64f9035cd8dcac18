//! Memoised compression of chunks of content pages.
//!
//! What is modelled: compressing a *chunk* — a sub-page slice of one content page (128 B … 2 KiB),
//! one page, or several consecutive pages compressed together (8 KiB … 128 KiB) — with a real
//! codec on the real bytes. Many simulated pages share a content page, so results are memoised by
//! [`ChunkKey`] = (codec, chunk size, offset in the first page, content ids). The compressed bytes
//! are kept (shared as `Arc<[u8]>`) so that a swap-in really decompresses them.
//!
//! Verification ([`Verify`]): `Always` decompresses the stored bytes on every load and checksums
//! the recovered page (tests use this). `Memoised` decompresses each distinct blob once, checks the
//! recovered bytes against the checksum of the blob's input, and afterwards trusts the blob (a load
//! then returns the checksum of the content page): a long simulation pays one real decompression
//! per distinct chunk, not per fault. A blob that failed verification keeps failing.
//!
//! Determinism: lookups only (never iteration) in a hash map; results do not depend on order.

use crate::{checksum, Codec, ContentId, ContentStore, PAGE_SIZE};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

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

/// Identity of a chunk's input bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ChunkKey {
    pub codec: Codec,
    /// Bytes of input (≤ 4096 for a sub-page chunk, a multiple of 4096 otherwise).
    pub chunk_bytes: u32,
    /// Byte offset in the (single) page for a sub-page chunk; 0 otherwise.
    pub offset: u32,
    /// Content ids of the pages in the chunk (one for sub-page and 4 KiB chunks).
    pub ids: Box<[ContentId]>,
}

/// A compressed chunk.
#[derive(Debug)]
pub struct Blob {
    pub codec: Codec,
    /// The compressed bytes.
    pub bytes: Arc<[u8]>,
    /// Uncompressed length.
    pub orig_len: u32,
    /// Checksum of the input bytes (to verify a decompression).
    pub input_sum: u64,
    /// 0 = not verified yet, 1 = a decompression reproduced the input, 2 = it did not.
    state: AtomicU8,
}

impl Blob {
    pub fn compressed_len(&self) -> usize {
        self.bytes.len()
    }

    /// A copy of this blob with compressed byte `at` inverted and not yet verified: fault
    /// injection for integrity tests (a load of it must report a checksum mismatch).
    pub fn with_flipped_byte(&self, at: usize) -> Blob {
        let mut bytes = self.bytes.to_vec();
        if let Some(b) = bytes.get_mut(at) {
            *b = !*b;
        }
        Blob {
            codec: self.codec,
            bytes: Arc::from(bytes),
            orig_len: self.orig_len,
            input_sum: self.input_sum,
            state: AtomicU8::new(0),
        }
    }

    /// Whether a decompression of this blob has been verified against its input checksum.
    pub fn verified(&self) -> Option<bool> {
        match self.state.load(Ordering::Relaxed) {
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

/// Memo of compressed chunks.
#[derive(Debug, Default)]
pub struct CompressionMemo {
    map: HashMap<ChunkKey, Arc<Blob>>,
    buf: Vec<u8>,
    out: Vec<u8>,
    pub stats: MemoStats,
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

    /// The compressed blob for `key`, compressing on first use.
    pub fn get(&mut self, store: &ContentStore, key: &ChunkKey) -> Arc<Blob> {
        if let Some(b) = self.map.get(key) {
            self.stats.hits += 1;
            return b.clone();
        }
        self.stats.misses += 1;
        gather(store, key, &mut self.buf);
        key.codec.compress(&self.buf, &mut self.out);
        self.stats.compressed_bytes_held += self.out.len() as u64;
        let blob = Arc::new(Blob {
            codec: key.codec,
            bytes: Arc::from(&self.out[..]),
            orig_len: self.buf.len() as u32,
            input_sum: checksum(&self.buf),
            state: AtomicU8::new(0),
        });
        self.map.insert(key.clone(), blob.clone());
        blob
    }

    /// Decompress `blob` into `out` (resized to its original length) and record whether the bytes
    /// match its input checksum. Returns that verdict (false also on a decoder error).
    pub fn decompress_into(&mut self, blob: &Blob, out: &mut Vec<u8>) -> bool {
        self.stats.decompressions += 1;
        let ok = blob
            .codec
            .decompress(&blob.bytes, out, blob.orig_len as usize)
            .is_ok()
            && checksum(out) == blob.input_sum;
        if !ok {
            out.clear();
            out.resize(blob.orig_len as usize, 0);
        }
        blob.state.store(if ok { 1 } else { 2 }, Ordering::Relaxed);
        ok
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}
