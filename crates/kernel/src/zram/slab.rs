//! Dense storage of short runs of records for zram's per-chunk bookkeeping (issue 14).
//!
//! A chunk owns a few small lists (its pages, its blobs, its zsmalloc objects); a `Vec` each would
//! cost heap allocations on every stored page. A [`RangeSlab`] keeps all runs of one record type in
//! one vector and recycles a freed run through a free list per run length, so a steady state of
//! stores and frees allocates nothing. A list of one record (most chunks: stock zram stores pages
//! one by one) is kept inline in a [`Packed`] instead, so storing, loading and freeing a one-page
//! chunk touches the chunk record and not three slabs. Host memory only: no simulated quantity
//! depends on it.

/// A run in a [`RangeSlab`]: start index and length.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Run {
    pub at: u32,
    pub len: u32,
}

impl Run {
    pub const EMPTY: Run = Run { at: 0, len: 0 };

    fn range(self) -> std::ops::Range<usize> {
        self.at as usize..(self.at + self.len) as usize
    }
}

/// A list of `T`: one record inline, or a run in a [`RangeSlab`] (empty or two and more).
#[derive(Debug, Clone, Copy)]
pub enum Packed<T> {
    One(T),
    Many(Run),
}

impl<T: Copy> Packed<T> {
    pub const EMPTY: Packed<T> = Packed::Many(Run::EMPTY);

    pub fn len(&self) -> usize {
        match self {
            Packed::One(_) => 1,
            Packed::Many(r) => r.len as usize,
        }
    }

    /// The records, read from `slab` unless inline.
    pub fn get<'a>(&'a self, slab: &'a RangeSlab<T>) -> &'a [T] {
        match self {
            Packed::One(x) => std::slice::from_ref(x),
            Packed::Many(r) => slab.get(*r),
        }
    }

    pub fn get_mut<'a>(&'a mut self, slab: &'a mut RangeSlab<T>) -> &'a mut [T] {
        match self {
            Packed::One(x) => std::slice::from_mut(x),
            Packed::Many(r) => slab.get_mut(*r),
        }
    }
}

/// Runs of `T` in one vector, with a free list per run length.
#[derive(Debug, Clone, Default)]
pub struct RangeSlab<T> {
    items: Vec<T>,
    free: Vec<Vec<u32>>,
}

impl<T: Copy> RangeSlab<T> {
    pub fn new() -> Self {
        Self {
            items: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Store a copy of `xs`; an empty slice takes no space.
    pub fn insert(&mut self, xs: &[T]) -> Run {
        let len = xs.len();
        if len == 0 {
            return Run::EMPTY;
        }
        let at = match self.free.get_mut(len).and_then(|f| f.pop()) {
            Some(at) => {
                self.items[at as usize..at as usize + len].copy_from_slice(xs);
                at
            }
            None => {
                let at = self.items.len();
                self.items.extend_from_slice(xs);
                u32::try_from(at).expect("zram slab below 2^32 records")
            }
        };
        Run { at, len: len as u32 }
    }

    /// Give `run` back for reuse by a run of the same length.
    pub fn remove(&mut self, run: Run) {
        if run.len == 0 {
            return;
        }
        let len = run.len as usize;
        if self.free.len() <= len {
            self.free.resize_with(len + 1, Vec::new);
        }
        self.free[len].push(run.at);
    }

    /// Store a copy of `xs`: inline if it is one record, else as a run.
    pub fn pack(&mut self, xs: &[T]) -> Packed<T> {
        match xs {
            [x] => Packed::One(*x),
            _ => Packed::Many(self.insert(xs)),
        }
    }

    /// Give back the run of `p` (nothing for an inline record).
    pub fn unpack(&mut self, p: Packed<T>) {
        if let Packed::Many(r) = p {
            self.remove(r);
        }
    }

    pub fn get(&self, run: Run) -> &[T] {
        &self.items[run.range()]
    }

    pub fn get_mut(&mut self, run: Run) -> &mut [T] {
        &mut self.items[run.range()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_runs_are_reused_by_equal_lengths_only() {
        let mut s = RangeSlab::new();
        let a = s.insert(&[1u32, 2, 3]);
        let b = s.insert(&[4u32]);
        assert_eq!((s.get(a), s.get(b)), (&[1, 2, 3][..], &[4][..]));
        s.remove(a);
        let c = s.insert(&[9u32, 9]);
        assert_ne!(c.at, a.at, "a 2-run must not take a freed 3-run");
        let d = s.insert(&[7u32, 8, 9]);
        assert_eq!(d.at, a.at);
        s.get_mut(d)[0] = 5;
        assert_eq!(s.get(d), &[5, 8, 9]);
        assert_eq!(s.get(b), &[4]);
        assert_eq!(s.insert(&[]), Run::EMPTY);
    }

    #[test]
    fn one_record_is_packed_inline_and_takes_no_slab_space() {
        let mut s = RangeSlab::new();
        let mut one = s.pack(&[7u32]);
        assert!(matches!(one, Packed::One(7)));
        assert!(s.items.is_empty(), "an inline record must not enter the slab");
        one.get_mut(&mut s)[0] = 8;
        assert_eq!((one.get(&s), one.len()), (&[8][..], 1));
        let mut two = s.pack(&[1u32, 2]);
        assert!(matches!(two, Packed::Many(Run { at: 0, len: 2 })));
        two.get_mut(&mut s)[1] = 5;
        assert_eq!((two.get(&s), two.len()), (&[1, 5][..], 2));
        let none = s.pack(&[]);
        assert_eq!((none.get(&s), none.len()), (&[][..], 0));
        s.unpack(one);
        s.unpack(two);
        assert_eq!(s.free[2], vec![0], "the freed 2-run is reusable");
        assert!(s.free.get(1).is_none_or(|f| f.is_empty()));
    }
}
