//! App lifecycle: cold and hot launches, foreground, background transition and stable
//! background (with cached-app compaction), and when the policy's framework hooks fire.

use super::*;

impl Simulation {
    pub(super) fn launch(&mut self, now: Nanos, app: usize, context: usize) {
        if self.foreground.is_none() {
            // From the home screen: the launcher's window buffers go (`io_home_window`).
            self.release_io_buffers();
        }
        // The previous foreground app leaves the foreground.
        if let Some(prev) = self.foreground.take() {
            if prev != app {
                self.send_to_background(now, prev);
            } else {
                self.foreground = Some(prev);
            }
        }
        // PSI's aggregation: the launching app's main thread is the busy foreground task (a cold
        // launch's process is named once spawned).
        self.k.set_foreground_task(now, self.rt[app].pid);
        let ctx = context.min(self.apps[app].access.contexts().max(1) - 1);
        self.rt[app].context = ctx;
        let was_fg = self.foreground == Some(app);
        self.launch_mark = SplitMark::read(&self.k);
        let end = if self.rt[app].pid.is_some() {
            if was_fg {
                Some(now)
            } else {
                self.per_app[app].launches_requested += 1;
                // The kernel scores the relaunch's swap-in locality (Ariadne Table 3).
                self.k.trace_swapins(self.rt[app].pid);
                let end = self.hot_launch(now, app, ctx);
                self.k.trace_swapins(None);
                end
            }
        } else {
            self.per_app[app].launches_requested += 1;
            self.cold_launch(now, app)
        };
        let Some(end) = end else {
            // No first frame: the app was killed mid-launch (or could not be mapped).
            self.per_app[app].launches_interrupted += 1;
            return;
        };
        let r = &mut self.rt[app];
        r.state = AppState::Foreground;
        r.last_fg = now;
        r.gen += 1;
        let gen = r.gen;
        self.foreground = Some(app);
        self.set_adj(app, FOREGROUND_APP_ADJ);
        let view = self.view(app, end);
        self.framework_hook(end, Actor::AppMain(view.pid), |h, k| h.on_foreground(k, &view));
        self.io_buffers_for_launch(end);
        self.q.push(end + self.cfg.fg_tick, Ev::FgTick { app, gen });
        self.update_cached(now);
    }

    pub(super) fn hot_launch(&mut self, now: Nanos, app: usize, ctx: usize) -> Option<Nanos> {
        let n = self.rt[app].launches_in_ctx[ctx];
        self.rt[app].launches_in_ctx[ctx] += 1;
        let set = self.apps[app].access.launch_set(ctx, n);
        // The app's Java code decides which objects the launch re-reads (launch bias, if any).
        let java_pages = self.apps[app].java_pages;
        let (set, biased) = match self.rt[app].java.as_mut() {
            Some(j) => j.bias_launch(&set, java_pages),
            None => (set, (0, 0)),
        };
        let work = self.apps[app].hot_resume;
        let mut touched = Vec::with_capacity(set.len());
        let now0 = now;
        let now = now + self.launch_start(now, app, LaunchKind::Hot).ns;
        // The runtime learns the app is jank-perceptible (a pending background GC is cancelled),
        // then the resumed activity allocates (GC pauses land on the launch).
        let launch_alloc = self.apps[app].java.params.launch_alloc_bytes as f64;
        let start = self.with_java(app, now, |j, k, l| {
            j.set_foreground(now, true, l);
            let gcs = j.rt.history.len();
            let c = j.alloc_garbage(now, launch_alloc, k, l);
            let new = &j.rt.history[gcs..];
            (c, new.len() as u64, new.iter().map(|g| g.pause_ns).sum::<u64>())
        });
        let start = match start {
            Some((Ok(c), n, pause)) => {
                self.gc.launch_collections += n;
                self.gc.launch_pause_ns += pause;
                now + c.main_stall.ns
            }
            _ => now,
        };
        if !self.rt[app].pid.is_some_and(|p| self.alive(p)) {
            self.collect_oom_kills(start);
            self.per_app[app].hot_killed += 1;
            return self.cold_launch(now0, app);
        }
        // The first frame re-creates the window surface and refills the GPU cache released when
        // the UI was hidden: fresh zero pages, written (not in the launch's touched set).
        let start = self.recreate_ui(app, start);
        let end = start.and_then(|s| self.touch(app, s, &set, work, false, Some(&mut touched)));
        let end = match end {
            Some(end) if biased != (0, 0) => self
                .with_java(app, end, |j, k, _| {
                    let actor = Actor::AppMain(j.pid());
                    end + j.touch_biased(end, actor, biased, k, Some(&mut touched)).ns
                })
                .filter(|_| self.rt[app].pid.is_some_and(|p| self.alive(p))),
            e => e,
        };
        match end {
            Some(end) => {
                let us = ((end - now0) / 1000).max(1);
                self.out_hot.record(us).ok();
                self.per_app[app].hot_us.record(us).ok();
                self.per_app[app].launches_hot += 1;
                self.log_launch(now0, end, app, true);
                self.launch_end(end, app, LaunchKind::Hot, &touched);
                Some(end)
            }
            // A failure that left the process alive (the kernel found no frame even after
            // OOM kills) ends the launch; relaunching cold would orphan the live process.
            None if self.rt[app].pid.is_some_and(|p| self.alive(p)) => None,
            None => {
                // Killed while launching: the user gets a cold launch instead.
                self.per_app[app].hot_killed += 1;
                self.cold_launch(now0, app)
            }
        }
    }

    fn log_launch(&mut self, t: Nanos, end: Nanos, app: usize, hot: bool) {
        self.launch_log.push(LaunchRecord {
            t,
            end,
            app: app as u32,
            context: self.rt[app].context as u32,
            hot,
            split: self.launch_mark.split(&self.k, end - t),
        });
    }

    /// The policy's `on_launch_start` at `now` on the app's main thread; returns the stall it adds
    /// to the launch (its own and that of the kernel work it queued).
    fn launch_start(&mut self, now: Nanos, app: usize, kind: LaunchKind) -> Stall {
        let view = self.view(app, now);
        let (mut s, queued) = self.framework_hook(now, Actor::AppMain(view.pid), |h, k| {
            h.on_launch_start(k, &view, kind)
        });
        s.add(queued);
        s
    }

    fn launch_end(&mut self, end: Nanos, app: usize, kind: LaunchKind, touched: &[PageIdx]) {
        let view = self.view(app, end);
        self.framework_hook(end, Actor::AppMain(view.pid), |h, k| {
            h.on_launch_end(k, &view, kind, touched)
        });
    }

    pub(super) fn cold_launch(&mut self, now: Nanos, app: usize) -> Option<Nanos> {
        let m = &self.apps[app];
        let name = m.name.clone();
        let (java, native, file, threads) = (m.java_pages, m.native_pages, m.file_pages, m.threads);
        let jm = m.java.clone();
        let src = |seed: u64| ContentSource {
            base: m.content_base,
            len: m.content_len,
            seed,
        };
        let (s1, s2, s3) = (
            src(app as u64 * 3 + 1),
            src(app as u64 * 3 + 2),
            src(app as u64 * 3 + 3),
        );
        let pid = self.k.spawn(&name, FOREGROUND_APP_ADJ, threads);
        self.k.set_foreground_task(now, Some(pid));
        let map = |k: &mut Kernel, pages: u32, kind, exec, s| k.mmap(pid, pages.max(1), kind, exec, s);
        let mapped = (|| {
            Ok::<_, KernelError>((
                map(&mut self.k, native, PageKind::NativeAnon, false, s2)?,
                map(&mut self.k, file, PageKind::File, true, s3)?,
            ))
        })();
        let data = self.apps[app].data_pages;
        let mapped = mapped.and_then(|(nf, ff)| {
            // The data files' pages come from the app's file content pool too.
            let df = if data > 0 {
                map(&mut self.k, data, PageKind::File, false, s3)?
            } else {
                0
            };
            Ok((nf, ff, df))
        });
        let Ok((nf, ff, df)) = mapped else {
            self.k.exit(pid);
            return None;
        };
        // Java heap regions are mapped by the runtime as it grows; their pages get the app's
        // Java content pool.
        self.k.set_content_source(pid, s1);
        self.seq += 1;
        let hooks = (self.runtime_hooks)(app);
        let rng = RngStreams::new(self.cfg.seed).stream("java", self.seq);
        let japp = JavaApp::new(pid, &jm, hooks, java, rng, now);
        let churn_at = japp.next_churn();
        let r = &mut self.rt[app];
        r.pid = Some(pid);
        r.java = Some(japp);
        r.native_first = nf;
        r.file_first = ff;
        r.data_first = df;
        r.write_credit = 0.0;
        r.sqlite_cached.clear();
        r.sqlite_cached
            .resize(super::writes::hot_pages(data) as usize, false);
        r.lmkd_seq = self.seq;
        let start = ((java + native) as f64 * self.apps[app].start_anon_fraction) as u32;
        r.built = start;
        // Cold launch: build the start footprint (Java then native, proportionally) and read the
        // launch files: the union of context 0's launch set file pages.
        let jstart = (start as u64 * java as u64 / (java + native).max(1) as u64) as u32;
        let r = &mut self.rt[app];
        r.ui_pages = self.apps[app].ui_pages.min(start - jstart);
        r.ui_hidden = false;
        let mut offs: Vec<u32> = (java..java + (start - jstart)).collect();
        let set = self.apps[app].access.launch_set(0, 0);
        offs.extend(set.into_iter().filter(|&o| o >= java + native));
        let t0 = now + (self.device.cpu.process_create_ms * NS_PER_MS as f64) as Nanos;
        self.k
            .cpu
            .charge(Actor::AppMain(pid), Category::Lifecycle, t0 - now);
        let t0 = t0 + self.launch_start(t0, app, LaunchKind::Cold).ns;
        if churn_at != Nanos::MAX {
            let inc = self.rt[app].lmkd_seq;
            self.q.push(churn_at, Ev::Churn { app, inc });
        }
        // The start footprint's Java objects are allocated through the runtime (GCs may run).
        let built = self.with_java(app, t0, |j, k, l| j.build_to(t0, jstart, k, l));
        let t1 = match built {
            Some(Ok(c)) if self.alive(pid) => t0 + c.main_stall.ns,
            _ => {
                self.collect_oom_kills(t0);
                return None;
            }
        };
        let work = self.apps[app].cold_init;
        let mut touched = Vec::with_capacity(offs.len());
        let end = self.touch(app, t1, &offs, work, true, Some(&mut touched))?;
        let us = ((end - now) / 1000).max(1);
        self.out_cold.record(us).ok();
        self.per_app[app].cold_us.record(us).ok();
        self.per_app[app].launches_cold += 1;
        self.log_launch(now, end, app, false);
        self.launch_end(end, app, LaunchKind::Cold, &touched);
        Some(end)
    }

    pub(super) fn send_to_background(&mut self, now: Nanos, app: usize) {
        self.release_io_buffers();
        if self.rt[app].pid.is_none() {
            return;
        }
        let r = &mut self.rt[app];
        r.state = AppState::Transition;
        r.gen += 1;
        let gen = r.gen;
        self.set_adj(app, PREVIOUS_APP_ADJ);
        // ART hears the process state change (stock: a compacting GC 5 s later).
        self.with_java(app, now, |j, _, l| j.set_foreground(now, false, l));
        let view = self.view(app, now);
        self.framework_hook(now, Actor::Kernel, |h, k| h.on_background(k, &view));
        self.q
            .push(now + self.cfg.transition / 2, Ev::B1Touch { app, gen });
        self.q
            .push(now + self.cfg.transition, Ev::TransitionEnd { app, gen });
    }

    pub(super) fn transition_end(&mut self, t: Nanos, app: usize, gen: u32) {
        if self.rt[app].gen != gen || self.rt[app].state != AppState::Transition {
            return;
        }
        self.rt[app].state = AppState::Background;
        self.release_ui(app);
        let view = self.view(app, t);
        if self.cfg.app_compaction {
            self.compact_app(t, &view);
        }
        self.framework_hook(t, Actor::Kernel, |h, k| h.on_transition_end(k, &view));
        self.update_cached(t);
        self.q.push(t + self.cfg.bg_tick, Ev::BgTick { app, gen });
    }

    /// `TRIM_MEMORY_UI_HIDDEN` (OomAdjuster, once the process's UI is no longer visible): the
    /// window surface is gone and HWUI trims its GPU cache to the background limit, so the app's
    /// UI pages are freed like `MADV_DONTNEED`/`munmap` (nothing kept, nothing swapped). The
    /// pages stay mapped: the next hot launch faults them in as new zero pages.
    fn release_ui(&mut self, app: usize) {
        let r = &mut self.rt[app];
        if r.ui_pages == 0 || r.ui_hidden || r.pid.is_none() {
            return;
        }
        r.ui_hidden = true;
        self.k.discard(r.native_first, r.ui_pages);
        self.ui_released_pages += r.ui_pages as u64;
    }

    /// The UI pages released at [`Self::release_ui`] written again from `t` on the app's main
    /// thread; the time after, or `None` if the app died meanwhile.
    fn recreate_ui(&mut self, app: usize, t: Nanos) -> Option<Nanos> {
        let r = &mut self.rt[app];
        if !r.ui_hidden {
            return Some(t);
        }
        r.ui_hidden = false;
        let java = self.apps[app].java_pages;
        let ui: Vec<u32> = (java..java + r.ui_pages).collect();
        self.touch(app, t, &ui, 0, true, None)
    }

    /// CachedAppOptimizer's full compaction (`process_madvise(MADV_PAGEOUT)` over anon and file
    /// memory, COMPACT_ACTION_ALL), run by system_server off the app's critical path; skipped
    /// for apps under `compact_full_rss_throttle_kb` (12 MB).
    pub(super) fn compact_app(&mut self, t: Nanos, v: &AppView) {
        let rss = self.k.process(v.pid).map_or(0, |p| p.rss());
        if rss * 4 < 12_000 {
            return;
        }
        self.app_compactions += 1;
        for &(first, pages) in v
            .java_ranges
            .iter()
            .chain(&[(v.native_first, v.native_pages), (v.file_first, v.file_pages)])
        {
            if pages > 0 {
                self.k.madvise(t, Actor::Kernel, first, pages, Advice::PageOut);
            }
        }
    }
}
