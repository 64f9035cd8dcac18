//! Real compression codecs, as zram uses them.
//!
//! What is modelled: the compressors zram offers (`comp_algorithm`): `lz4`, `zstd`, `lzo` and
//! `lzo-rle`, run on real bytes. Compressed bytes are real and decompress back to the input.
//!
//! - **LZ4**: the LZ4 *block* format (no frame), compressed by the reference liblz4 (`lz4` crate,
//!   `LZ4_compress_default` = the kernel's `LZ4_compress_fast` with acceleration 1, same hash
//!   table), decompressed by `lz4_flex`. (With `lz4_flex`'s own compressor, whose match finder
//!   differs, 31 of 51,835 JVM pages crossed the huge threshold differently from the kernel.)
//! - **zstd**: the `zstd` crate (libzstd), level 3: zram's default (`zstd_default_clevel()`, and
//!   `ZSTD_DEF_LEVEL 3` in older `crypto/zstd.c`), producing a normal zstd frame.
//! - **LZO**: LZO1X via `lzokay` (pure Rust, MIT). lzokay's compressor searches matches more
//!   thoroughly than the kernel's `lzo1x_1_compress`, so it compresses somewhat *better* and slower
//!   than the kernel; the format is the same LZO1X stream. Its cost per byte also grows with the
//!   chunk (the shipped cost table: 19 ns/B at 128 B, 62 ns/B at 4 KiB, 93 ns/B at 8 KiB), where
//!   `lzo1x_1`'s is about flat, so chunk-size comparisons under LZO (Ariadne's small-chunk row)
//!   favour small chunks more than the kernel's LZO would. Ports of `lzo1x_1` (`lzo1x`,
//!   `rust-lzo`) are GPL-2.0 and cannot be linked into this Apache-2.0 project.
//! - **LZO-RLE**: no Rust crate implements the kernel's lzo-rle variant (LZO1X with a run-length
//!   encoding of zero runs, Linux 5.1+). It is **substituted by LZO** (same bytes, same sizes);
//!   on real pages the two differ by a few percent in size (lzo-rle is smaller on zero runs) and
//!   lzo-rle compresses faster. The substitution is reported by [`Codec::substituted_by`].
//!
//! Sources: Linux `drivers/block/zram/backend_*.c`, `crypto/zstd.c`, `lib/lzo/`.

use std::cell::RefCell;
use std::fmt;
use std::str::FromStr;

/// A compression algorithm (zram `comp_algorithm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum Codec {
    #[serde(rename = "lz4")]
    Lz4,
    #[serde(rename = "zstd")]
    Zstd,
    #[serde(rename = "lzo")]
    Lzo,
    #[serde(rename = "lzo-rle")]
    LzoRle,
}

/// zram's default zstd level.
pub const ZSTD_LEVEL: i32 = 3;

/// An unknown codec name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown codec {0:?}: expected one of lz4, zstd, lzo, lzo-rle")]
pub struct UnknownCodec(pub String);

/// Decompression failed (corrupt or mismatched compressed bytes).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{codec} decompression failed: {detail}")]
pub struct DecompressError {
    pub codec: Codec,
    pub detail: String,
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Codec {
    type Err = UnknownCodec;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "lz4" => Ok(Codec::Lz4),
            "zstd" => Ok(Codec::Zstd),
            "lzo" => Ok(Codec::Lzo),
            "lzo-rle" | "lzo_rle" => Ok(Codec::LzoRle),
            other => Err(UnknownCodec(other.to_string())),
        }
    }
}

thread_local! {
    static ZSTD_C: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    static ZSTD_D: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
    static LZO_DICT: RefCell<Option<Box<lzokay::compress::Dict>>> = const { RefCell::new(None) };
}

impl Codec {
    pub const ALL: [Codec; 4] = [Codec::Lzo, Codec::LzoRle, Codec::Lz4, Codec::Zstd];

    /// The zram name (`/sys/block/zramN/comp_algorithm`).
    pub fn name(self) -> &'static str {
        match self {
            Codec::Lz4 => "lz4",
            Codec::Zstd => "zstd",
            Codec::Lzo => "lzo",
            Codec::LzoRle => "lzo-rle",
        }
    }

    /// The codec whose implementation stands in for this one, if any (lzo-rle → lzo).
    pub fn substituted_by(self) -> Option<Codec> {
        match self {
            Codec::LzoRle => Some(Codec::Lzo),
            _ => None,
        }
    }

    /// Compress `src` into `dst` (cleared first). Always succeeds; the output may be larger than
    /// the input for incompressible data (zram then stores the page raw).
    pub fn compress(self, src: &[u8], dst: &mut Vec<u8>) {
        dst.clear();
        match self {
            Codec::Lz4 => {
                // Reference liblz4 (`LZ4_compress_default`, acceleration 1): the same match finder
                // as the kernel's lib/lz4 port, hence the same compressed sizes.
                dst.resize(lz4_flex::block::get_maximum_output_size(src.len()), 0);
                let n = lz4::block::compress_to_buffer(src, None, false, dst)
                    .expect("lz4 output sized to the bound");
                dst.truncate(n);
            }
            Codec::Zstd => ZSTD_C.with(|c| {
                let mut c = c.borrow_mut();
                let c = c.get_or_insert_with(|| {
                    zstd::bulk::Compressor::new(ZSTD_LEVEL).expect("zstd compressor context")
                });
                dst.resize(zstd::zstd_safe::compress_bound(src.len()), 0);
                let n = c
                    .compress_to_buffer(src, &mut dst[..])
                    .expect("zstd output sized to the bound");
                dst.truncate(n);
            }),
            Codec::Lzo | Codec::LzoRle => LZO_DICT.with(|d| {
                let mut d = d.borrow_mut();
                let d = d.get_or_insert_with(lzokay::compress::Dict::new);
                dst.resize(lzokay::compress::compress_worst_size(src.len()), 0);
                let n = lzokay::compress::compress_no_alloc(src, &mut dst[..], d)
                    .expect("lzo output sized to the bound");
                dst.truncate(n);
            }),
        }
    }

    /// Decompress `src` into `dst` (cleared first), expecting exactly `orig_len` bytes.
    pub fn decompress(self, src: &[u8], dst: &mut Vec<u8>, orig_len: usize) -> Result<(), DecompressError> {
        dst.clear();
        dst.resize(orig_len, 0);
        let err = |detail: String| DecompressError { codec: self, detail };
        let n = match self {
            Codec::Lz4 => lz4_flex::block::decompress_into(src, dst).map_err(|e| err(e.to_string()))?,
            Codec::Zstd => ZSTD_D.with(|d| {
                let mut d = d.borrow_mut();
                let d = d.get_or_insert_with(|| zstd::bulk::Decompressor::new().expect("zstd dctx"));
                d.decompress_to_buffer(src, &mut dst[..])
                    .map_err(|e| err(e.to_string()))
            })?,
            Codec::Lzo | Codec::LzoRle => {
                lzokay::decompress::decompress(src, dst).map_err(|e| err(format!("{e:?}")))?
            }
        };
        if n != orig_len {
            return Err(err(format!("got {n} bytes, expected {orig_len}")));
        }
        Ok(())
    }
}
