//! CPU cost table of the codecs: codec × chunk size × {compress, decompress}.
//!
//! What is modelled: the CPU time of one codec call on a chunk of `n` bytes,
//! `fixed_ns + ns_per_byte × n`, measured on the host by `hotlaunch calibrate` (see
//! [`measure`]) and shipped as `crates/content/costs/default.toml` ([`CostTable::builtin`]).
//! Simulations read only the table, never the clock, so they stay deterministic; a device's
//! `cpu.speed_factor` multiplies the result (done by the caller, e.g. zram's `cpu_factor`).
//!
//! Fit: for each codec and operation, the time per call is measured (median of repeated runs) at
//! every chunk size 128 B … 128 KiB on corpus data. The per-call overhead `fixed_ns` is the
//! intercept of the line through the two smallest sizes (clamped ≥ 0); each size then gets its
//! own `ns_per_byte = (t(size) − fixed) / size`, so the table reproduces every measurement exactly
//! and still separates "calls" from "bytes". For a size between two table rows, `ns_per_byte` is
//! interpolated linearly in log2(size); outside the range the nearest row is used.
//!
//! Simplified: one host core, warm caches (repeated runs over a few MiB of data), no frequency
//! scaling model; the CPU factor is a single scalar per device.

use crate::Codec;
use engine::text::{line_of, one_line};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Chunk sizes measured by `calibrate` (bytes).
pub const CHUNK_SIZES: [u32; 11] = [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072];

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostEntry {
    pub codec: Codec,
    pub chunk_bytes: u32,
    pub compress_fixed_ns: f64,
    pub compress_ns_per_byte: f64,
    pub decompress_fixed_ns: f64,
    pub decompress_ns_per_byte: f64,
    /// Compression ratio measured on the calibration data at this size (informative).
    #[serde(default)]
    pub ratio: f64,
}

/// The serialised table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostFile {
    /// Where and how it was measured (host, corpus, repetitions).
    pub note: String,
    pub entry: Vec<CostEntry>,
}

/// Errors reading a table.
#[derive(Debug, thiserror::Error)]
pub enum CostError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}: invalid cost table: {msg}")]
    Parse { path: String, msg: String },
}

/// A cost table indexed for lookups.
#[derive(Debug, Clone, PartialEq)]
pub struct CostTable {
    file: CostFile,
    /// Rows per codec (index = codec order in [`Codec::ALL`]), sorted by chunk size.
    by_codec: [Vec<CostEntry>; 4],
}

fn codec_index(c: Codec) -> usize {
    Codec::ALL.iter().position(|&x| x == c).expect("codec in ALL")
}

const DEFAULT_TOML: &str = include_str!("../costs/default.toml");

impl CostTable {
    /// Build from rows; every codec needs at least one row with positive sizes.
    pub fn from_file(file: CostFile) -> Result<Self, String> {
        let mut by_codec: [Vec<CostEntry>; 4] = Default::default();
        for e in &file.entry {
            if e.chunk_bytes == 0 {
                return Err(format!("{} row with chunk_bytes 0", e.codec));
            }
            let vals = [
                e.compress_fixed_ns,
                e.compress_ns_per_byte,
                e.decompress_fixed_ns,
                e.decompress_ns_per_byte,
            ];
            if vals.iter().any(|v| !v.is_finite() || *v < 0.0) {
                return Err(format!(
                    "{} chunk {}: costs must be finite and ≥ 0",
                    e.codec, e.chunk_bytes
                ));
            }
            by_codec[codec_index(e.codec)].push(e.clone());
        }
        for (i, rows) in by_codec.iter_mut().enumerate() {
            if rows.is_empty() {
                return Err(format!("no rows for codec {}", Codec::ALL[i]));
            }
            rows.sort_by_key(|e| e.chunk_bytes);
            if rows.windows(2).any(|w| w[0].chunk_bytes == w[1].chunk_bytes) {
                return Err(format!("duplicate chunk size for codec {}", Codec::ALL[i]));
            }
        }
        Ok(Self { file, by_codec })
    }

    /// The table measured on this machine kind and shipped with the project.
    pub fn builtin() -> Self {
        Self::from_toml_str(DEFAULT_TOML, "<builtin costs/default.toml>")
            .expect("builtin cost table is valid")
    }

    pub fn from_toml_str(s: &str, path: &str) -> Result<Self, CostError> {
        // toml's own Display is a multi-line snippet; errors here are one line naming the line.
        let file: CostFile = toml::from_str(s).map_err(|e| {
            let at = e
                .span()
                .map(|r| format!("line {}: ", line_of(s, r.start)))
                .unwrap_or_default();
            CostError::Parse {
                path: one_line(path),
                msg: format!("{at}{}", one_line(e.message())),
            }
        })?;
        Self::from_file(file).map_err(|msg| CostError::Parse {
            path: one_line(path),
            msg: one_line(&msg),
        })
    }

    pub fn load(path: &Path) -> Result<Self, CostError> {
        let p = path.display().to_string();
        let s = engine::fsio::read_capped_string(path, engine::fsio::FileKind::Costs).map_err(|source| {
            CostError::Io {
                path: p.clone(),
                source,
            }
        })?;
        Self::from_toml_str(&s, &p)
    }

    pub fn to_toml_string(&self) -> String {
        toml::to_string(&self.file).expect("cost table serialises")
    }

    pub fn file(&self) -> &CostFile {
        &self.file
    }

    fn lookup(&self, codec: Codec, bytes: usize, pick: impl Fn(&CostEntry) -> (f64, f64)) -> f64 {
        let rows = &self.by_codec[codec_index(codec)];
        let n = bytes as f64;
        let i = rows.partition_point(|e| (e.chunk_bytes as usize) < bytes);
        let (fixed, per_byte) = if i == 0 {
            pick(&rows[0])
        } else if i == rows.len() {
            pick(&rows[rows.len() - 1])
        } else if rows[i].chunk_bytes as usize == bytes {
            pick(&rows[i])
        } else {
            let (lo, hi) = (&rows[i - 1], &rows[i]);
            let (f0, b0) = pick(lo);
            let (f1, b1) = pick(hi);
            let t = (n.log2() - (lo.chunk_bytes as f64).log2())
                / ((hi.chunk_bytes as f64).log2() - (lo.chunk_bytes as f64).log2());
            (f0 + (f1 - f0) * t, b0 + (b1 - b0) * t)
        };
        fixed + per_byte * n
    }

    /// Host nanoseconds to compress `bytes` bytes in one call.
    pub fn compress_ns(&self, codec: Codec, bytes: usize) -> f64 {
        self.lookup(codec, bytes, |e| (e.compress_fixed_ns, e.compress_ns_per_byte))
    }

    /// Host nanoseconds to decompress a chunk of `bytes` original bytes in one call.
    pub fn decompress_ns(&self, codec: Codec, bytes: usize) -> f64 {
        self.lookup(codec, bytes, |e| {
            (e.decompress_fixed_ns, e.decompress_ns_per_byte)
        })
    }
}

impl Default for CostTable {
    fn default() -> Self {
        Self::builtin()
    }
}

/// Measure a cost table on `data` (a multiple of 4 KiB; e.g. the non-same-filled pages of a
/// corpus). Uses the wall clock: only for `hotlaunch calibrate`, never in a simulation.
/// `budget_bytes` bounds the data used per measurement, `reps` the repetitions (median taken).
pub fn measure(data: &[u8], codecs: &[Codec], reps: usize, budget_bytes: usize, note: &str) -> CostFile {
    use std::time::Instant;
    let mut entries = Vec::new();
    let mut out = Vec::new();
    let mut back = Vec::new();
    for &codec in codecs {
        let mut per_call_c = Vec::new();
        let mut per_call_d = Vec::new();
        let mut ratios = Vec::new();
        for &size in &CHUNK_SIZES {
            let size = size as usize;
            let usable = data.len().min(budget_bytes.max(size)) / size * size;
            let chunks: Vec<&[u8]> = data[..usable].chunks(size).collect();
            // Pre-compress once (also warms up) to get the blobs for decompression.
            let blobs: Vec<Vec<u8>> = chunks
                .iter()
                .map(|c| {
                    codec.compress(c, &mut out);
                    out.clone()
                })
                .collect();
            let comp: usize = blobs.iter().map(|b| b.len().min(size)).sum();
            ratios.push(usable as f64 / comp.max(1) as f64);
            let mut tc = Vec::new();
            let mut td = Vec::new();
            for _ in 0..reps.max(1) {
                let t0 = Instant::now();
                for c in &chunks {
                    codec.compress(c, &mut out);
                }
                tc.push(t0.elapsed().as_nanos() as f64 / chunks.len() as f64);
                let t0 = Instant::now();
                for b in &blobs {
                    codec.decompress(b, &mut back, size).expect("round trip");
                }
                td.push(t0.elapsed().as_nanos() as f64 / chunks.len() as f64);
            }
            per_call_c.push(median(&mut tc));
            per_call_d.push(median(&mut td));
        }
        let fit = |t: &[f64]| {
            let (s0, s1) = (CHUNK_SIZES[0] as f64, CHUNK_SIZES[1] as f64);
            let slope = (t[1] - t[0]) / (s1 - s0);
            (t[0] - slope * s0).max(0.0)
        };
        let (fc, fd) = (fit(&per_call_c), fit(&per_call_d));
        for (i, &size) in CHUNK_SIZES.iter().enumerate() {
            let s = size as f64;
            entries.push(CostEntry {
                codec,
                chunk_bytes: size,
                compress_fixed_ns: round3(fc),
                compress_ns_per_byte: round3(((per_call_c[i] - fc) / s).max(0.0)),
                decompress_fixed_ns: round3(fd),
                decompress_ns_per_byte: round3(((per_call_d[i] - fd) / s).max(0.0)),
                ratio: round3(ratios[i]),
            });
        }
    }
    CostFile {
        note: note.to_string(),
        entry: entries,
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_one_line_naming_file_and_line() {
        // Found by hotlaunch-fuzz: toml's Display is a multi-line snippet.
        for (text, line) in [("a = 1\ncompress\n", "line 2"), ("codecs = 3\n", "line 1")] {
            let e = CostTable::from_toml_str(text, "my costs.toml")
                .unwrap_err()
                .to_string();
            assert!(!e.contains('\n'), "{e:?}");
            assert!(e.starts_with("my costs.toml: invalid cost table: "), "{e}");
            assert!(e.contains(line), "{e}");
        }
    }
}
