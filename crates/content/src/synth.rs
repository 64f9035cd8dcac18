//! Seeded synthetic page contents with a per-app compressibility mix.
//!
//! What is modelled: the anonymous memory of one app process as a mix of page kinds, each drawn
//! from an app-wide "world" derived from the seed, so that pages of one app share structure the way
//! real heaps do (the same object layouts, class pointers, string vocabulary and pointer ranges
//! recur on many pages). Because the structure is shared *across* pages, a compressor that sees more
//! pages at once (a larger chunk) finds more matches: the compression ratio rises with chunk size,
//! as Ariadne (§3, Fig. 6) reports on real traces.
//!
//! Page kinds ([`SynthMix`] fractions, normalised to sum 1):
//! - **zero**: all-zero pages (untouched-but-dirtied heap, zeroed buffers) — zram stores them as
//!   ZRAM_SAME with no memory;
//! - **same_filled**: one non-zero 64-bit word repeated (e.g. `0xffff…` bitmaps, memset patterns) —
//!   also ZRAM_SAME;
//! - **object**: pointer-rich managed/native heap pages: a run of objects laid out by one of
//!   `classes` per-app layouts (class word, 32-bit compressed references into a region-space heap
//!   near each other, 64-bit tagged native pointers, small integers, zero fields, per-class
//!   constants), with a zero tail on some pages (partly filled TLABs / allocation regions);
//! - **text**: strings from a per-app vocabulary of `vocabulary` pseudo-words (Zipf-distributed),
//!   as Latin-1 or UTF-16 (Java strings), with separators and small length prefixes;
//! - **incompressible**: uniformly random bytes (already-compressed images, media, crypto state).
//!
//! Default mix (per app, documented source: the range of LZ4 ratios per 4 KiB page seen on real app
//! anonymous memory, ~2–4, and Android zram same-page shares of a few percent):
//! zero 0.04, same_filled 0.02, object 0.73, text 0.16, incompressible 0.05. With these, LZ4 on
//! the non-same-filled pages gives a ratio of about 1.4 at 128 B chunks, 2.1 at 4 KiB and 2.5 at
//! 128 KiB (`tests/synth.rs` checks 2..4 at 4 KiB and the rise with chunk size). Object pages alone:
//! 1.6 / 2.4 / 3.0; text pages: 1.1 / 2.1 / 3.0.
//!
//! Simplified: no real object graph or GC semantics; the generator is only about byte statistics.
//! Deterministic: a pure function of (mix, n_pages, seed); uses its own SplitMix64 stream.

use crate::{ContentId, ContentStore, PAGE_SIZE};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// Compressibility mix of one app's anonymous memory. Fractions need not sum to 1 (they are
/// normalised); all must be ≥ 0 and at least one > 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SynthMix {
    /// Fraction of all-zero pages.
    pub zero: f64,
    /// Fraction of pages filled with one repeated non-zero 64-bit word.
    pub same_filled: f64,
    /// Fraction of pointer-rich object pages (managed or native heap).
    pub object: f64,
    /// Fraction of text/string pages.
    pub text: f64,
    /// Fraction of random (incompressible) pages.
    pub incompressible: f64,
    /// Number of distinct object layouts ("classes") in the app; fewer = more repetition.
    pub classes: u32,
    /// Number of distinct words in the app's string vocabulary.
    pub vocabulary: u32,
}

impl Default for SynthMix {
    fn default() -> Self {
        Self {
            zero: 0.04,
            same_filled: 0.02,
            object: 0.73,
            text: 0.16,
            incompressible: 0.05,
            classes: 64,
            vocabulary: 2000,
        }
    }
}

/// The kind of a generated page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageKind {
    Zero,
    SameFilled,
    Object,
    Text,
    Incompressible,
}

/// SplitMix64: tiny, fast, fully specified (deterministic across platforms and crate versions).
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n (n > 0).
    fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Zipf-like index in 0..n: skewed towards small indices.
    fn skewed(&mut self, n: u64) -> u64 {
        let u = self.unit();
        ((n as f64).powf(u) - 1.0).floor().min((n - 1) as f64) as u64
    }
}

#[derive(Debug, Clone, Copy)]
enum Field {
    /// 32-bit class reference (fixed per class).
    Class(u32),
    /// 32-bit compressed reference into the managed heap (near the previous one).
    Ref32,
    /// 64-bit tagged native pointer (two slots).
    Ptr64,
    /// Small integer.
    Small,
    /// Always zero (null, unused lock word, default field).
    Zero,
    /// Per-class constant 32-bit value.
    Const(u32),
    /// Random 32-bit value (hash codes, floats).
    Noise,
}

#[derive(Debug, Clone)]
struct Class {
    fields: Vec<Field>,
}

/// Per-app world: structure shared by all pages of the app.
#[derive(Debug, Clone)]
struct World {
    classes: Vec<Class>,
    words: Vec<Vec<u8>>,
    /// App-wide strings (resource names, URLs, keys) made of 1..8 words, reused across pages.
    strings: Vec<Vec<u8>>,
    heap_base: u32,
    native_base: u64,
    /// Frequently referenced managed objects (singletons, interned strings, classes' statics).
    hot_refs: Vec<u32>,
    /// Frequently referenced native objects (vtables, allocator arenas).
    hot_ptrs: Vec<u64>,
}

impl World {
    fn new(mix: &SynthMix, rng: &mut Rng) -> Self {
        let n_classes = mix.classes.max(1);
        let classes = (0..n_classes)
            .map(|_| {
                // 8..64 bytes of fields after the class word (in 4-byte slots).
                let slots = 2 + rng.skewed(14) as usize;
                let class_ref = 0x7000_0000 | (rng.below(0x0100_0000) as u32 & !7);
                let mut fields = vec![Field::Class(class_ref), Field::Zero]; // class + lock word
                let mut i = 0;
                while i < slots {
                    let f = match rng.below(100) {
                        0..=29 => Field::Ref32,
                        30..=37 if i + 1 < slots => {
                            i += 1;
                            Field::Ptr64
                        }
                        30..=49 => Field::Small,
                        50..=82 => Field::Zero,
                        83..=96 => Field::Const(rng.next() as u32),
                        _ => Field::Noise,
                    };
                    fields.push(f);
                    i += 1;
                }
                Class { fields }
            })
            .collect();
        let n_words = mix.vocabulary.max(1);
        let words: Vec<Vec<u8>> = (0..n_words)
            .map(|_| {
                let len = 2 + rng.skewed(12) as usize;
                (0..len)
                    .map(|k| {
                        if k == 0 && rng.below(4) == 0 {
                            b'A' + rng.below(26) as u8
                        } else {
                            // letters weighted towards common ones
                            const COMMON: &[u8] = b"etaoinshrdlucmfwypvbgkqjxz";
                            COMMON[rng.skewed(26) as usize]
                        }
                    })
                    .collect()
            })
            .collect();
        let heap_base = 0x1300_0000 + (rng.below(0x100) as u32) * 0x10_0000;
        let native_base = 0xb400_0070_0000_0000 | (rng.below(0x1000) << 24);
        let hot_refs = (0..256)
            .map(|_| heap_base + (rng.below(0x0400_0000) as u32 & !7))
            .collect();
        let hot_ptrs = (0..64)
            .map(|_| native_base + (rng.below(0x0100_0000) & !15))
            .collect();
        let strings = (0..(n_words / 2).max(1))
            .map(|_| {
                let n = 1 + rng.skewed(8) as usize;
                let mut st: Vec<u8> = Vec::new();
                for k in 0..n {
                    if k > 0 {
                        st.push(b"  ._/"[rng.below(5) as usize]);
                    }
                    st.extend_from_slice(&words[rng.skewed(words.len() as u64) as usize]);
                }
                st
            })
            .collect();
        Self {
            classes,
            words,
            strings,
            heap_base,
            native_base,
            hot_refs,
            hot_ptrs,
        }
    }
}

fn pick_kind(mix: &SynthMix, rng: &mut Rng) -> PageKind {
    let w = [
        mix.zero,
        mix.same_filled,
        mix.object,
        mix.text,
        mix.incompressible,
    ];
    let total: f64 = w.iter().map(|x| x.max(0.0)).sum();
    let mut u = rng.unit() * total;
    let kinds = [
        PageKind::Zero,
        PageKind::SameFilled,
        PageKind::Object,
        PageKind::Text,
        PageKind::Incompressible,
    ];
    for (k, x) in kinds.iter().zip(w) {
        let x = x.max(0.0);
        if u < x {
            return *k;
        }
        u -= x;
    }
    PageKind::Object
}

fn fill_object(world: &World, rng: &mut Rng, page: &mut [u8]) {
    // Partly filled pages: a zero tail on a third of them.
    let used = if rng.below(3) == 0 {
        1024 + rng.below(3072) as usize
    } else {
        PAGE_SIZE
    };
    let mut off = 0;
    let mut last_ref = world.heap_base + (rng.below(0x0400_0000) as u32 & !7);
    let mut last_ptr = world.native_base + (rng.below(0x0100_0000) & !15);
    // A page is mostly allocated from a few classes (same allocation site / TLAB).
    let mut recent = [last_ref; 8];
    let local: Vec<usize> = (0..4)
        .map(|_| rng.skewed(world.classes.len() as u64) as usize)
        .collect();
    'outer: while off < used {
        let class = if rng.below(4) == 0 {
            &world.classes[rng.below(world.classes.len() as u64) as usize]
        } else {
            &world.classes[local[rng.below(4) as usize]]
        };
        for f in &class.fields {
            let (v, width): (u64, usize) = match *f {
                Field::Class(c) => (c as u64, 4),
                Field::Zero => (0, 4),
                Field::Const(c) => (c as u64, 4),
                Field::Small => (rng.skewed(16), 4),
                Field::Noise => (rng.next() & 0xffff_ffff, 4),
                Field::Ref32 => match rng.below(10) {
                    0..=3 => (0, 4), // null
                    4..=5 => (
                        world.hot_refs[rng.skewed(world.hot_refs.len() as u64) as usize] as u64,
                        4,
                    ),
                    6..=7 => (recent[rng.below(recent.len() as u64) as usize] as u64, 4),
                    _ => {
                        // Objects allocated together point near each other.
                        last_ref = last_ref.wrapping_add((rng.skewed(512) as u32 + 1) * 8);
                        recent[rng.below(recent.len() as u64) as usize] = last_ref;
                        (last_ref as u64, 4)
                    }
                },
                Field::Ptr64 => {
                    if rng.below(2) == 0 {
                        (
                            world.hot_ptrs[rng.skewed(world.hot_ptrs.len() as u64) as usize],
                            8,
                        )
                    } else {
                        last_ptr = last_ptr.wrapping_add((rng.skewed(256) + 1) * 16);
                        (last_ptr, 8)
                    }
                }
            };
            if off + width > used {
                break 'outer;
            }
            page[off..off + width].copy_from_slice(&v.to_le_bytes()[..width]);
            off += width;
        }
        // Objects are 8-byte aligned.
        off = (off + 7) & !7;
    }
}

fn fill_text(world: &World, rng: &mut Rng, page: &mut [u8]) {
    let utf16 = rng.below(2) == 0;
    let mut off = 0;
    while off < PAGE_SIZE {
        // String header: small length prefix and a class word, as in a managed heap.
        if rng.below(6) == 0 && off + 8 <= PAGE_SIZE {
            let n = rng.skewed(64) as u32;
            page[off..off + 4].copy_from_slice(&0x7000_1230u32.to_le_bytes());
            page[off + 4..off + 8].copy_from_slice(&n.to_le_bytes());
            off += 8;
        }
        // Mostly whole app-wide strings, sometimes a fresh word.
        let w = if rng.below(10) < 7 {
            &world.strings[rng.skewed(world.strings.len() as u64) as usize]
        } else {
            &world.words[rng.skewed(world.words.len() as u64) as usize]
        };
        let sep = match rng.below(10) {
            0 => b'\n',
            1 => b'.',
            2 => b'/',
            3 => 0,
            _ => b' ',
        };
        for &c in w.iter().chain(std::iter::once(&sep)) {
            if utf16 {
                if off + 2 > PAGE_SIZE {
                    return;
                }
                page[off] = c;
                page[off + 1] = 0;
                off += 2;
            } else {
                if off >= PAGE_SIZE {
                    return;
                }
                page[off] = c;
                off += 1;
            }
        }
    }
}

/// Fill `page` (4 KiB) with a page of `kind` from `world`.
fn fill_page(world: &World, kind: PageKind, rng: &mut Rng, page: &mut [u8]) {
    page.fill(0);
    match kind {
        PageKind::Zero => {}
        PageKind::SameFilled => {
            let v = match rng.below(3) {
                0 => u64::MAX,
                1 => 0x0101_0101_0101_0101 * (1 + rng.below(255)),
                _ => rng.next() | 1,
            };
            for w in page.chunks_exact_mut(8) {
                w.copy_from_slice(&v.to_le_bytes());
            }
        }
        PageKind::Object => fill_object(world, rng, page),
        PageKind::Text => fill_text(world, rng, page),
        PageKind::Incompressible => {
            for w in page.chunks_exact_mut(8) {
                w.copy_from_slice(&rng.next().to_le_bytes());
            }
        }
    }
}

/// Generate `n_pages` pages of one app (a pure function of its arguments); calls `sink` with each
/// page's kind and bytes, in order.
pub fn generate(mix: &SynthMix, n_pages: usize, seed: u64, mut sink: impl FnMut(PageKind, &[u8])) {
    let mut rng = Rng(seed ^ 0x6a09_e667_f3bc_c908);
    let world = World::new(mix, &mut rng);
    let mut page = vec![0u8; PAGE_SIZE];
    for _ in 0..n_pages {
        let kind = pick_kind(mix, &mut rng);
        fill_page(&world, kind, &mut rng, &mut page);
        sink(kind, &page);
    }
}

impl ContentStore {
    /// Append `n_pages` synthetic pages of one app with compressibility `mix`, generated from
    /// `seed` (same arguments ⇒ same bytes). Returns the ids of the new pages (contiguous; no
    /// deduplication, so a zero page appears once per generated zero page).
    pub fn append_synthetic(&mut self, mix: &SynthMix, n_pages: usize, seed: u64) -> Range<ContentId> {
        let start = self.len() as ContentId;
        generate(mix, n_pages, seed, |_, p| {
            self.push_page(p);
        });
        start..self.len() as ContentId
    }
}
