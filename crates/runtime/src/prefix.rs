//! Compact storage for the blueprint's per-object columns (issue 14: blueprints held a quarter of
//! the default day's peak memory).
//!
//! - [`Prefix`]: a non-decreasing sequence (offsets into another array, running totals) in about
//!   2.25 bytes per entry instead of 4 or 8: entries are grouped in blocks of [`BLOCK`], each
//!   storing its first value in full and every entry as a 16-bit difference from it. A block whose
//!   values span more than 16 bits (one huge object) keeps its entries in full instead.
//! - [`Column`]: small unsigned values (class ids) in the narrowest of 1, 2 or 4 bytes that holds
//!   the largest.

/// Entries per [`Prefix`] block.
const BLOCK: usize = 32;
/// [`Block::wide`] of a block stored as 16-bit differences.
const NARROW: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, Default)]
struct Block {
    /// The block's first value.
    base: u64,
    /// Index in [`Prefix::wide`] of the block's first entry, or [`NARROW`].
    wide: u32,
}

/// A non-decreasing sequence of `u64` (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct Prefix {
    blocks: Vec<Block>,
    /// Entry minus its block's base (0 in wide blocks).
    delta: Vec<u16>,
    /// Entries of the blocks whose span does not fit 16 bits.
    wide: Vec<u64>,
}

impl Prefix {
    /// Store `values`, which must be non-decreasing.
    pub fn new(values: &[u64]) -> Self {
        debug_assert!(values.windows(2).all(|w| w[0] <= w[1]));
        let mut p = Prefix {
            blocks: Vec::with_capacity(values.len().div_ceil(BLOCK)),
            delta: Vec::with_capacity(values.len()),
            wide: Vec::new(),
        };
        for chunk in values.chunks(BLOCK) {
            let base = chunk[0];
            if chunk[chunk.len() - 1] - base <= u16::MAX as u64 {
                p.blocks.push(Block { base, wide: NARROW });
                p.delta.extend(chunk.iter().map(|&v| (v - base) as u16));
            } else {
                let wide = u32::try_from(p.wide.len()).expect("fewer than 4 G wide entries");
                p.blocks.push(Block { base, wide });
                p.delta.extend(std::iter::repeat_n(0, chunk.len()));
                p.wide.extend_from_slice(chunk);
            }
        }
        p
    }

    pub fn len(&self) -> usize {
        self.delta.len()
    }

    pub fn is_empty(&self) -> bool {
        self.delta.is_empty()
    }

    /// Entry `i`.
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        let b = self.blocks[i / BLOCK];
        if b.wide == NARROW {
            b.base + self.delta[i] as u64
        } else {
            self.wide[b.wide as usize + i % BLOCK]
        }
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
