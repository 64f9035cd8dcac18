//! Compact storage for the blueprint's per-object columns (issue 14: blueprints held a quarter of
//! the default day's peak memory).
//!
//! - [`Prefix`]: a non-decreasing sequence (offsets into another array, running totals) in about
//!   1.5 bytes per entry instead of 4 or 8: entries are grouped in blocks of [`BLOCK`], each
//!   storing its first value in full and every entry as a difference from it, in 8 bits when the
//!   block's values span at most 255 (most blocks: small objects, few slots each), else in 16
//!   bits. A block whose values span more than 16 bits (one huge object) keeps its entries in
//!   full instead. (16-bit differences everywhere were 2.25 bytes per entry; issue 14.)
//! - [`Column`]: small unsigned values (class ids) in the narrowest of 1, 2 or 4 bytes that holds
//!   the largest.

/// Entries per [`Prefix`] block.
const BLOCK: usize = 32;

/// How a [`Prefix`] block stores its entries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Width {
    /// Differences from the base in [`Prefix::d8`].
    #[default]
    W8,
    /// Differences from the base in [`Prefix::d16`].
    W16,
    /// Entries in full in [`Prefix::wide`].
    Full,
}

#[derive(Debug, Clone, Copy, Default)]
struct Block {
    /// The block's first value.
    base: u64,
    /// Index of the block's first entry in the store its width selects.
    at: u32,
    width: Width,
}

/// A non-decreasing sequence of `u64` (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct Prefix {
    blocks: Vec<Block>,
    len: usize,
    d8: Vec<u8>,
    d16: Vec<u16>,
    wide: Vec<u64>,
}

impl Prefix {
    /// Store `values`, which must be non-decreasing.
    pub fn new(values: &[u64]) -> Self {
        let mut b = PrefixBuilder::default();
        for &v in values {
            b.push(v);
        }
        b.finish()
    }

    fn push_block(&mut self, chunk: &[u64]) {
        debug_assert!(chunk.windows(2).all(|w| w[0] <= w[1]));
        let base = chunk[0];
        let span = chunk[chunk.len() - 1] - base;
        let (width, at) = if span <= u8::MAX as u64 {
            let at = self.d8.len();
            self.d8.extend(chunk.iter().map(|&v| (v - base) as u8));
            (Width::W8, at)
        } else if span <= u16::MAX as u64 {
            let at = self.d16.len();
            self.d16.extend(chunk.iter().map(|&v| (v - base) as u16));
            (Width::W16, at)
        } else {
            let at = self.wide.len();
            self.wide.extend_from_slice(chunk);
            (Width::Full, at)
        };
        let at = u32::try_from(at).expect("fewer than 4 G entries of one width");
        self.blocks.push(Block { base, at, width });
        self.len += chunk.len();
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entry `i`.
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        debug_assert!(i < self.len);
        let (b, j) = self.locate(i);
        match b.width {
            Width::W8 => b.base + self.d8[j] as u64,
            Width::W16 => b.base + self.d16[j] as u64,
            Width::Full => self.wide[j],
        }
    }

    /// Entry `i`'s block and its index in the store the block's width selects.
    #[inline(always)]
    fn locate(&self, i: usize) -> (Block, usize) {
        let b = self.blocks[i / BLOCK];
        (b, b.at as usize + i % BLOCK)
    }

    /// Hint the CPU to load the block of entry `i` (no effect on results; any `i` is allowed).
    #[inline]
    pub fn prefetch_block(&self, i: usize) {
        engine::prefetch(&self.blocks, i / BLOCK);
    }

    /// Hint the CPU to load entry `i` itself (its block is read now: fetch it first with
    /// [`Self::prefetch_block`]). No effect on results; `i` must be below the length.
    #[inline]
    pub fn prefetch_entry(&self, i: usize) {
        let (b, j) = self.locate(i);
        match b.width {
            Width::W8 => engine::prefetch(&self.d8, j),
            Width::W16 => engine::prefetch(&self.d16, j),
            Width::Full => engine::prefetch(&self.wide, j),
        }
    }

    /// Bytes held (for tests and memory accounting).
    pub fn heap_bytes(&self) -> usize {
        self.blocks.capacity() * std::mem::size_of::<Block>()
            + self.d8.capacity()
            + self.d16.capacity() * 2
            + self.wide.capacity() * 8
    }

    /// Number of leading entries among the first `n` for which `pred` holds (`pred` must hold
    /// for a prefix of them, as for [`slice::partition_point`]).
    pub fn partition_point(&self, n: usize, pred: impl Fn(u64) -> bool) -> usize {
        let (mut lo, mut hi) = (0, n.min(self.len()));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.get(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// Builds a [`Prefix`] one value at a time, a block at a time, without holding the whole
/// sequence (the blueprint builder's `u64` temporaries were 24 bytes per object; issue 14).
#[derive(Debug, Default)]
pub struct PrefixBuilder {
    p: Prefix,
    buf: Vec<u64>,
}

impl PrefixBuilder {
    /// A builder that will hold about `n` values.
    pub fn with_capacity(n: usize) -> Self {
        let mut b = Self::default();
        b.p.blocks.reserve_exact(n.div_ceil(BLOCK));
        b.buf.reserve_exact(BLOCK);
        b
    }

    /// Append `v` (at least the last value pushed).
    pub fn push(&mut self, v: u64) {
        debug_assert!(self.buf.last().is_none_or(|&l| l <= v));
        self.buf.push(v);
        if self.buf.len() == BLOCK {
            self.p.push_block(&self.buf);
            self.buf.clear();
        }
    }

    pub fn finish(mut self) -> Prefix {
        if !self.buf.is_empty() {
            self.p.push_block(&self.buf);
        }
        self.p.d8.shrink_to_fit();
        self.p.d16.shrink_to_fit();
        self.p.wide.shrink_to_fit();
        self.p.blocks.shrink_to_fit();
        self.p
    }
}

/// Unsigned values in the narrowest width that holds the largest (see the module docs).
#[derive(Debug, Clone)]
pub enum Column {
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
}

impl Default for Column {
    fn default() -> Self {
        Column::U8(Vec::new())
    }
}

impl Column {
    pub fn new(values: &[u32]) -> Self {
        let max = values.iter().copied().max().unwrap_or(0);
        if max <= u8::MAX as u32 {
            Column::U8(values.iter().map(|&v| v as u8).collect())
        } else if max <= u16::MAX as u32 {
            Column::U16(values.iter().map(|&v| v as u16).collect())
        } else {
            Column::U32(values.to_vec())
        }
    }

    /// Hint the CPU to load entry `i` (no effect on results; any `i` is allowed).
    #[inline]
    pub fn prefetch(&self, i: usize) {
        match self {
            Column::U8(v) => engine::prefetch(v, i),
            Column::U16(v) => engine::prefetch(v, i),
            Column::U32(v) => engine::prefetch(v, i),
        }
    }

    #[inline]
    pub fn get(&self, i: usize) -> u32 {
        match self {
            Column::U8(v) => v[i] as u32,
            Column::U16(v) => v[i] as u32,
            Column::U32(v) => v[i],
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Column::U8(v) => v.len(),
            Column::U16(v) => v.len(),
            Column::U32(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_round_trips_narrow_and_wide_blocks() {
        // Small steps, then one huge step inside a block, then more small steps.
        let mut v = Vec::new();
        let mut x = 5u64;
        for i in 0..200u64 {
            x += if i == 70 { 1 << 40 } else { i % 7 };
            v.push(x);
        }
        let p = Prefix::new(&v);
        assert_eq!(p.len(), v.len());
        assert!(!p.wide.is_empty() && p.wide.len() < v.len());
        for (i, &x) in v.iter().enumerate() {
            assert_eq!(p.get(i), x, "entry {i}");
        }
        for probe in [0, 5, 6, 300, v[69], v[70], v[70] + 1, u64::MAX] {
            let want = v.partition_point(|&s| s <= probe);
            assert_eq!(p.partition_point(v.len(), |s| s <= probe), want, "probe {probe}");
        }
        assert_eq!(p.partition_point(10, |_| true), 10);
    }

    /// Blocks spanning at most 255 take 8-bit differences, up to 65535 16-bit ones, beyond that
    /// full entries; all read back, and a builder fed one value at a time builds the same.
    #[test]
    fn prefix_picks_each_blocks_width() {
        let mut v = Vec::new();
        let mut x = 0u64;
        // Block 0: steps of 1 (8-bit); block 1: steps of 1000 (16-bit); block 2: one 2^20 step
        // (full); block 3, partial: steps of 8 (8-bit, span 31 * 8 = 248).
        for i in 0..(3 * BLOCK + 20) {
            x += match i / BLOCK {
                0 => 1,
                1 => 1000,
                2 if i % BLOCK == 5 => 1 << 20,
                2 => 0,
                _ => 8,
            };
            v.push(x);
        }
        let p = Prefix::new(&v);
        let widths: Vec<Width> = p.blocks.iter().map(|b| b.width).collect();
        assert_eq!(widths, [Width::W8, Width::W16, Width::Full, Width::W8]);
        assert_eq!(
            (p.d8.len(), p.d16.len(), p.wide.len()),
            (BLOCK + 20, BLOCK, BLOCK)
        );
        for (i, &x) in v.iter().enumerate() {
            assert_eq!(p.get(i), x, "entry {i}");
        }
        let mut b = PrefixBuilder::with_capacity(v.len());
        v.iter().for_each(|&x| b.push(x));
        let q = b.finish();
        assert_eq!(q.len(), v.len());
        assert!((0..v.len()).all(|i| q.get(i) == v[i]));
        assert!(Prefix::new(&[]).is_empty());
    }

    #[test]
    fn column_picks_the_narrowest_width() {
        for (vals, width) in [(vec![0, 255], 1), (vec![3, 256], 2), (vec![1, 70_000], 4)] {
            let c = Column::new(&vals);
            let w = match &c {
                Column::U8(_) => 1,
                Column::U16(_) => 2,
                Column::U32(_) => 4,
            };
            assert_eq!(w, width);
            assert_eq!((0..c.len()).map(|i| c.get(i)).collect::<Vec<_>>(), vals);
        }
    }
}
