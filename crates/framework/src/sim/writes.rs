//! App file writes (profile `[writes]`): every foreground tick and every background tick dirties
//! `rate × tick` pages of the app's data files (SQLite databases and WAL, `shared_prefs`, cache
//! files), fractions carried over to the next tick. The kernel's flusher writes them back to
//! flash 30 s later (`kernel::dirty`).
//!
//! Which page: 80% of writes go to the first 20% of the data pages (the hot database pages and
//! WAL: IEEE Access 2021, "Characterizing file accesses in Android applications": the top 20% of
//! blocks take 80% of accesses, mostly SQLite), the rest uniformly to the others; drawn from a
//! stream of its own so writes do not shift the other events' draws. Simplified: no write()
//! syscall CPU and no fsync (see the apps crate's `writes` module); a write to a page not in
//! memory first reads it in (read-modify-write of a database page).

use super::*;

/// Share of writes to the hot fifth of the data pages.
const HOT_SHARE: f64 = 0.8;

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
        let hot = (data / 5).max(1);
        let actor = Actor::AppMain(pid);
        let mut now = t;
        for _ in 0..n as u64 {
            let off = if hot == data || self.write_rng.gen_bool(HOT_SHARE) {
                self.write_rng.gen_range(0..hot)
            } else {
                self.write_rng.gen_range(hot..data)
            };
            match self.k.access(now, actor, first + off, true) {
                Ok(s) => now += s.ns,
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
