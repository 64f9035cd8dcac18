//! I/O-buffer demand of foreground apps: camera preview and display buffers allocated the way
//! Android's ION system heap does ([`kernel::Kernel::alloc_io_buffer`]: blocks of order 8, 4, 0).
//!
//! Modelled: each launch makes the foreground app allocate `per_launch` buffers (a fractional
//! rate carried over launches) of `mb` MiB each times the app's `io_buffer_scale` (profile key),
//! one after another at the launch's first frame; at most `live` are held at once (the oldest is
//! released when a new one is needed, like a buffer queue); every buffer still held is released
//! when the app leaves the foreground or another launch starts. Allocation runs on the kernel's (allocator's) account, off the launch's
//! critical path. Simplified: one size, no spreading of allocations over the dwell.

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
}

/// Buffers currently held and the fractional-rate carry.
#[derive(Debug, Default)]
pub(super) struct IoState {
    carry: f64,
    live: VecDeque<kernel::IoBuffer>,
}

impl Simulation {
    /// The foreground app's buffers for one launch, at its first frame `t`.
    pub(super) fn io_buffers_for_launch(&mut self, t: Nanos) {
        let Some(d) = self.cfg.io_buffers else { return };
        let scale = self.foreground.map_or(1.0, |a| self.apps[a].io_buffer_scale);
        self.release_io_buffers();
        self.io.carry += d.per_launch;
        let n = self.io.carry.floor().max(0.0);
        self.io.carry -= n;
        let bytes = (d.mb * scale * (1u64 << 20) as f64) as u64;
        for _ in 0..n as u64 {
            if self.io.live.len() >= d.live.max(1) as usize {
                if let Some(b) = self.io.live.pop_front() {
                    self.k.free_io_buffer(b);
                }
            }
            match self.k.alloc_io_buffer(t, Actor::Kernel, bytes) {
                Ok(b) => self.io.live.push_back(b),
                Err(_) => break,
            }
        }
        self.collect_oom_kills(t);
    }

    /// Release every buffer still held (the app left the foreground).
    pub(super) fn release_io_buffers(&mut self) {
        while let Some(b) = self.io.live.pop_front() {
            self.k.free_io_buffer(b);
        }
    }
}
