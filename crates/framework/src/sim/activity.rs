//! What a running app touches: the main thread's page accesses, foreground use and growth,
//! the transition working set B1, background B2 touches (each tick also writes the app's data
//! files, `writes.rs`), and scripted allocations.

use super::*;

/// How many accesses ahead [`Simulation::touch`] fetches their page-table entry or memo slot.
const TOUCH_AHEAD: usize = 4;

impl Simulation {
    /// Touch `offs` of `app` on its main thread starting at `t`, spreading `work` of CPU across
    /// the accesses; returns the end time, or `None` if the app died meanwhile.
    pub(super) fn touch(
        &mut self,
        app: usize,
        t: Nanos,
        offs: &[u32],
        work: Nanos,
        write: bool,
        touched: Option<&mut Vec<PageIdx>>,
    ) -> Option<Nanos> {
        let pid = self.rt[app].pid?;
        let actor = Actor::AppMain(pid);
        let per = if offs.is_empty() {
            0
        } else {
            work / offs.len() as u64
        };
        let mut now = t;
        let mut touched = touched;
        let anon = self.apps[app].anon_pages();
        let java = self.apps[app].java_pages;
        for (i, &off) in offs.iter().enumerate() {
            // Page-table entries and memo slots are scattered: fetch ahead (no effect on results).
            if let Some(&a) = offs.get(i + TOUCH_AHEAD) {
                if a < java {
                    if let Some(j) = self.rt[app].java.as_ref() {
                        j.prefetch_logical(a);
                    }
                } else {
                    // Wrapping: a later offset may belong to a mapping gone by then (the app
                    // died); a prefetch of any address is harmless.
                    let (r, m) = (&self.rt[app], &self.apps[app]);
                    let (base, from) = if a < m.java_pages + m.native_pages {
                        (r.native_first, m.java_pages)
                    } else {
                        (r.file_first, m.java_pages + m.native_pages)
                    };
                    self.k.prefetch_page(base.wrapping_add(a.wrapping_sub(from)));
                }
            }
            now += per;
            if off < java {
                let japp = self.rt[app].java.as_mut()?;
                let s = japp.touch_logical(now, actor, &[off], write, &mut self.k, touched.as_deref_mut());
                now += s.ns;
                if !self.alive(pid) {
                    self.collect_oom_kills(now);
                    return None;
                }
                continue;
            }
            let idx = self.page_of(app, off);
            // File mappings (code, resources) are read-only: writes only go to anonymous memory.
            match self.k.access(now, actor, idx, write && off < anon) {
                Ok(s) => now += s.ns,
                Err(KernelError::Killed(_)) | Err(KernelError::NotMapped(_)) => {
                    self.collect_oom_kills(now);
                    return None;
                }
                Err(_) => return None,
            }
            if let Some(v) = touched.as_deref_mut() {
                v.push(idx);
            }
        }
        self.k.cpu.charge(actor, Category::App, per * offs.len() as u64);
        Some(now)
    }

    pub(super) fn b1_touch(&mut self, t: Nanos, app: usize, gen: u32) {
        if self.rt[app].gen != gen || self.rt[app].state != AppState::Transition {
            return;
        }
        let b1 = self.apps[app].access.b1(self.rt[app].context).to_vec();
        let b1: Vec<u32> = b1.into_iter().filter(|&o| self.is_built(app, o)).collect();
        self.touch(app, t, &b1, 0, false, None);
    }

    /// Anonymous pages beyond the built footprint do not exist yet, nor UI pages released while
    /// the UI is hidden.
    pub(super) fn is_built(&self, app: usize, off: u32) -> bool {
        let m = &self.apps[app];
        let anon = m.anon_pages();
        if off >= anon {
            return true;
        }
        let built = self.rt[app].built;
        let jbuilt = (built as u64 * m.java_pages as u64 / anon.max(1) as u64) as u32;
        if off < m.java_pages {
            self.rt[app].java.as_ref().is_some_and(|j| j.is_built(off))
        } else {
            let n = off - m.java_pages;
            let r = &self.rt[app];
            !(r.ui_hidden && n < r.ui_pages) && n < built - jbuilt
        }
    }

    pub(super) fn fg_tick(&mut self, t: Nanos, app: usize, gen: u32) {
        let r = &self.rt[app];
        if r.gen != gen || r.state != AppState::Foreground {
            return;
        }
        // Footprint growth toward the steady size.
        let m = &self.apps[app];
        let anon = m.anon_pages();
        let mut offs = Vec::new();
        let mut java_to = None;
        if r.built < anon {
            let ticks = (m.growth / self.cfg.fg_tick).max(1);
            let start = (anon as f64 * m.start_anon_fraction) as u32;
            let step = ((anon - start) as u64).div_ceil(ticks) as u32;
            let new_built = (r.built + step.max(1)).min(anon);
            let jold = (r.built as u64 * m.java_pages as u64 / anon as u64) as u32;
            let jnew = (new_built as u64 * m.java_pages as u64 / anon as u64) as u32;
            let nold = r.built - jold;
            let nnew = new_built - jnew;
            offs.extend(m.java_pages + nold..m.java_pages + nnew);
            self.rt[app].built = new_built;
            if jnew > jold {
                java_to = Some(jnew);
            }
        }
        let ws = self.apps[app].access.foreground_ws();
        if !ws.is_empty() {
            for _ in 0..self.cfg.fg_pages_per_tick {
                let o = ws[self.rng.gen_range(0..ws.len())];
                offs.push(o);
            }
        }
        // The Java code allocates: long-lived objects as the footprint grows, short-lived ones at
        // the foreground rate.
        let garbage = self.apps[app].java.params.fg_alloc_bytes_per_s * self.cfg.fg_tick as f64 / 1e9;
        let Some(t) = self.java_step(app, t, |j, k, l| {
            let mut c = match java_to {
                Some(p) => j.build_to(t, p, k, l)?,
                None => Default::default(),
            };
            let g = j.alloc_garbage(t + c.main_stall.ns, garbage, k, l)?;
            c.main_stall.add(g.main_stall);
            Ok(c)
        }) else {
            return;
        };
        let offs: Vec<u32> = offs.into_iter().filter(|&o| self.is_built(app, o)).collect();
        let write = self.rng.gen_bool(0.3);
        let end = self
            .touch(app, t, &offs, 0, write, None)
            .and_then(|end| self.write_files(app, end, self.cfg.fg_tick, true));
        if let Some(end) = end {
            self.fg_stall_ns += end - t;
            self.q
                .push(end.max(t + self.cfg.fg_tick), Ev::FgTick { app, gen });
        }
    }

    pub(super) fn bg_tick(&mut self, t: Nanos, app: usize, gen: u32) {
        if self.rt[app].gen != gen || self.rt[app].state != AppState::Background {
            return;
        }
        let b2 = self.apps[app].access.b2();
        let mut offs = Vec::new();
        if !b2.is_empty() {
            for _ in 0..self.cfg.bg_pages_per_tick {
                offs.push(b2[self.rng.gen_range(0..b2.len())]);
            }
        }
        let garbage = self.apps[app].java.params.bg_alloc_bytes_per_s * self.cfg.bg_tick as f64 / 1e9;
        let Some(t) = self.java_step(app, t, |j, k, l| j.alloc_garbage(t, garbage, k, l)) else {
            return;
        };
        let offs: Vec<u32> = offs.into_iter().filter(|&o| self.is_built(app, o)).collect();
        let end = self
            .touch(app, t, &offs, 0, false, None)
            .and_then(|end| self.write_files(app, end, self.cfg.bg_tick, false));
        if let Some(end) = end {
            // The next batch cannot start before this one's faults completed.
            self.q
                .push((t + self.cfg.bg_tick).max(end), Ev::BgTick { app, gen });
        }
    }

    pub(super) fn alloc(&mut self, now: Nanos, app: usize, pages: u32) {
        let Some(pid) = self.rt[app].pid else { return };
        let src = ContentSource {
            base: self.apps[app].content_base,
            len: self.apps[app].content_len,
            seed: now,
        };
        let Ok(first) = self.k.mmap(pid, pages.max(1), PageKind::JavaHeap, false, src) else {
            return;
        };
        match self.k.access_range(now, Actor::AppMain(pid), first, pages, true) {
            Ok(s) => {
                // The app's own work per page (Java array allocation and initialisation) comes on
                // top of the kernel's fault cost.
                self.out_alloc.record((s.ns / 1000).max(1)).ok();
                self.alloc_ms.push(engine::ms(s.ns));
            }
            Err(_) => self.collect_oom_kills(now),
        }
    }
}
