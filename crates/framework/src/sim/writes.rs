//! App file writes (profile `[writes]`): every foreground tick and every background tick dirties
//! `rate × tick` pages of the app's data files (SQLite databases and WAL, `shared_prefs`, cache
//! files), fractions carried over to the next tick. The kernel's flusher writes them back to
//! flash 30 s later (`kernel::dirty`).
//!
//! Which page: 80% of writes go to the first 20% of the data pages (the hot database pages and
//! WAL: IEEE Access 2021, "Characterizing file accesses in Android applications": the top 20% of
//! blocks take 80% of accesses, mostly SQLite), the rest uniformly to the others; drawn from a
//! stream of its own so writes do not shift the other events' draws.
//!
//! Each write is SQLite's update of one database page. AOSP builds SQLite with
//! `SQLITE_MAX_MMAP_SIZE=0`, so it reads and writes with `pread`/`pwrite`, not page faults.
//! SQLite needs the page's content first: a hot page is read once per process life and then
//! kept in SQLite's own page cache (default `cache_size` -2000: ~2 MB per connection, which holds
//! the hot fifth of every built-in profile's `data_mb`); a cold page is read each time. A `pread`
//! of a page not in the kernel's page cache reads that page only (a small random read gets no
//! readahead, `Kernel::read_file_page`). The page is written back whole (SQLite's page size is
//! the file system's 4 KiB block, `SQLITE_DEFAULT_PAGE_SIZE` 4096, so `write_begin` reads
//! nothing: `PageWrite::Whole`). Journal/WAL appends (never read: they are beyond EOF) are folded
//! into these page writes. Simplified: no syscall CPU and no fsync (see the apps crate's `writes`
//! module); SQLite's page cache is anonymous memory already inside the app's native footprint.

use super::*;
use kernel::dirty::PageWrite;

/// Share of writes to the hot fifth of the data pages.
const HOT_SHARE: f64 = 0.8;

/// The hot fifth of `data` data pages (at least one page).
pub(super) fn hot_pages(data: u32) -> u32 {
    (data / 5).max(1)
}

impl Simulation {
    /// The writes of `dt` of foreground (`fg`) or background time of `app`, issued from `t`.
    /// Returns the end time (later if a page had to be read in), or `None` if the app died.
    pub(super) fn write_files(&mut self, app: usize, t: Nanos, dt: Nanos, fg: bool) -> Option<Nanos> {
        let m = &self.apps[app];
        let (data, rate) = if fg {
            (m.data_pages, m.fg_write_pages_per_s)
        } else {
            (m.data_pages, m.bg_write_pages_per_s)
        };
        if data == 0 || rate <= 0.0 {
            return Some(t);
        }
        let pid = self.rt[app].pid?;
        let r = &mut self.rt[app];
        r.write_credit += rate * dt as f64 / NS_PER_SEC as f64;
        let n = r.write_credit.floor();
        r.write_credit -= n;
        let first = r.data_first;
        let hot = hot_pages(data);
        let actor = Actor::AppMain(pid);
        let mut now = t;
        for _ in 0..n as u64 {
            let off = if hot == data || self.write_rng.gen_bool(HOT_SHARE) {
                self.write_rng.gen_range(0..hot)
            } else {
                self.write_rng.gen_range(hot..data)
            };
            let idx = first + off;
            // Hot pages stay in SQLite's page cache once read; cold ones are read every time.
            let cached = off < hot && std::mem::replace(&mut self.rt[app].sqlite_cached[off as usize], true);
            let read = if cached {
                Ok(Stall::ZERO)
            } else {
                self.k.read_file_page(now, actor, idx)
            };
            let rmw = read.and_then(|r| {
                Ok(r.ns
                    + self
                        .k
                        .write_file_page(now + r.ns, actor, idx, PageWrite::Whole)?
                        .ns)
            });
            match rmw {
                Ok(ns) => now += ns,
                Err(KernelError::Killed(_)) | Err(KernelError::NotMapped(_)) => {
                    self.collect_oom_kills(now);
                    return None;
                }
                Err(_) => return None,
            }
        }
        Some(now)
    }
}
