//! I/O-buffer demand of foreground apps: camera preview and display buffers allocated the way
//! Android's ION system heap does ([`kernel::Kernel::alloc_io_buffer`]: blocks of order 8, 4, 0).
//!
//! Modelled: each launch makes the foreground app allocate `per_launch` buffers (a fractional
//! rate carried over launches) of `mb` MiB each times the app's `io_buffer_scale` (profile key).
//! The first is allocated at the launch's first frame and the others evenly over the next
//! `spread_s` seconds (buffer `i` of `n` at `first_frame + i * spread_s / n`; `spread_s = 0`:
//! all at the first frame), while the app stays in the foreground; buffers due after it left are
//! not allocated. At most `live` are held at once (the oldest is released when a new one is
//! needed, like a buffer queue); every buffer still held is released when the app leaves the
//! foreground or another launch starts. Allocation runs on the kernel's (allocator's) account,
//! off the launch's critical path. Simplified: one size per app, deterministic spacing.
//!
//! With `home_window`, `Home` brings the launcher's window to the front and allocates its
//! BufferQueue (3 screen-sized RGBA_8888 buffers, `device::display`) the same way; they are
//! released when the next launch starts. Simplified: the launcher's other surfaces (wallpaper,
//! SystemUI's bars) and SurfaceFlinger's own buffers are not allocated.

use super::*;
use std::collections::VecDeque;

/// How much I/O-buffer memory foreground apps allocate (scenario `[io_buffers]`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct IoBufferDemand {
    /// Buffers allocated per launch (mean; fractional rates carry over launches).
    pub per_launch: f64,
    /// Size of each buffer, MiB.
    pub mb: f64,
    /// Most buffers held at once.
    pub live: u32,
    /// Seconds after the first frame over which a launch's buffers are spread (0: all at once).
    pub spread_s: f64,
    /// Whether the launcher's window buffers are allocated while the user is on the home
    /// screen ([`Simulation::io_home_window`]); false: Home allocates nothing.
    pub home_window: bool,
}

/// Buffers currently held, the fractional-rate carry and the current launch's pending buffers.
#[derive(Debug, Default)]
pub(super) struct IoState {
    carry: f64,
    live: VecDeque<kernel::IoBuffer>,
    /// The current launch's buffers: (first frame, count, bytes each); `next` is the next index.
    launch: (Nanos, u64, u64),
    next: u64,
}

impl Simulation {
    /// The foreground app's buffers for one launch, whose first frame is at `t`: the first now,
    /// the others scheduled over `spread_s` ([`Ev::IoBuffer`]).
    pub(super) fn io_buffers_for_launch(&mut self, t: Nanos) {
        let Some(d) = self.cfg.io_buffers else { return };
        let Some(app) = self.foreground else { return };
        let scale = self.apps[app].io_buffer_scale;
        self.release_io_buffers();
        self.io.carry += d.per_launch;
        let n = self.io.carry.floor().max(0.0);
        self.io.carry -= n;
        let bytes = (d.mb * scale * (1u64 << 20) as f64) as u64;
        self.io.launch = (t, n as u64, bytes);
        self.io.next = 0;
        let gen = self.rt[app].gen;
        if d.spread_s <= 0.0 {
            while self.io.next < n as u64 && self.next_io_buffer(t) {}
        } else if n >= 1.0 {
            self.io_buffer_due(t, app, gen);
        }
    }

    /// [`Ev::IoBuffer`]: the launch's next buffer, if the app is still in the foreground of the
    /// same launch; schedules the one after.
    pub(super) fn io_buffer_due(&mut self, t: Nanos, app: usize, gen: u32) {
        let Some(d) = self.cfg.io_buffers else { return };
        let r = &self.rt[app];
        if r.gen != gen || r.state != AppState::Foreground || self.foreground != Some(app) {
            return;
        }
        if !self.next_io_buffer(t) {
            return;
        }
        let (first, n, _) = self.io.launch;
        if self.io.next < n {
            let at = first + (d.spread_s * 1e9 * self.io.next as f64 / n as f64) as Nanos;
            self.q.push(at.max(t), Ev::IoBuffer { app, gen });
        }
    }

    /// Allocate the launch's next buffer at `t` (releasing the oldest beyond `live`); false if
    /// the allocation failed.
    fn next_io_buffer(&mut self, t: Nanos) -> bool {
        let Some(d) = self.cfg.io_buffers else {
            return false;
        };
        self.io.next += 1;
        if self.io.live.len() >= d.live.max(1) as usize {
            if let Some(b) = self.io.live.pop_front() {
                self.k.free_io_buffer(b);
            }
        }
        let ok = match self.k.alloc_io_buffer(t, Actor::Kernel, self.io.launch.2) {
            Ok(b) => {
                self.io.live.push_back(b);
                true
            }
            Err(_) => false,
        };
        self.collect_oom_kills(t);
        ok
    }

    /// `Home`: the launcher's window comes to the front and its BufferQueue's buffers are
    /// allocated (`device::display`: [`device::display::WINDOW_BUFFERS`] buffers of one
    /// screen of RGBA_8888 pixels each), held until the next launch takes the foreground
    /// ([`Simulation::release_io_buffers`] at the launch's start). Nothing without
    /// `home_window` or without a `[display]` in the device profile.
    pub(super) fn io_home_window(&mut self, t: Nanos) {
        let Some(d) = self.cfg.io_buffers else { return };
        let Some(disp) = self.device.display.filter(|_| d.home_window) else {
            return;
        };
        let n = device::display::WINDOW_BUFFERS;
        let bytes = disp.window_buffer_bytes() / n;
        for _ in 0..n {
            let b = self.k.alloc_io_buffer(t, Actor::Kernel, bytes);
            self.collect_oom_kills(t);
            match b {
                Ok(b) => self.io.live.push_back(b),
                Err(_) => break,
            }
        }
    }

    /// Release every buffer still held (the app left the foreground).
    pub(super) fn release_io_buffers(&mut self) {
        while let Some(b) = self.io.live.pop_front() {
            self.k.free_io_buffer(b);
        }
    }
}
