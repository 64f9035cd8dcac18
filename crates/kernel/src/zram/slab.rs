//! Dense storage of short runs of records for zram's per-chunk bookkeeping (issue 14).
//!
//! A chunk owns a few small lists (its pages, its blobs, its zsmalloc objects); a `Vec` each would
//! cost heap allocations on every stored page. A [`RangeSlab`] keeps all runs of one record type in
//! one vector and recycles a freed run through a free list per run length, so a steady state of
//! stores and frees allocates nothing. Host memory only: no simulated quantity depends on it.

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
}
