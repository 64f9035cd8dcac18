//! Swap backends behind one trait, and the flash device model.
//!
//! A [`SwapBackend`] stores batches of pages handed to it by reclaim (or by `madvise(PAGEOUT)`)
//! and gives them back on a fault. The kernel does not know what a backend does inside: a flash
//! swap partition ([`FlashSwap`]) keeps page contents in slots on a [`FlashDevice`]; ZRAM
//! (`crate::zram`) compresses real bytes into a zsmalloc-style pool. Every load returns the
//! checksum of the bytes it recovered, and the kernel compares it with the checksum of the page's
//! content, so a lost or mixed-up page is counted, never silent.
//!
//! Costs: a backend reports CPU work per category (charged by the kernel to the thread doing the
//! swap-out or swap-in) and the I/O latency the calling thread waits for. A swap-out to flash is
//! asynchronous: it returns the time the submitter was blocked on a full request queue
//! ([`NR_REQUESTS`]) and the time until its writes complete (`IoCost::complete_ns`); the kernel
//! keeps the pages under writeback, holding their frames, until then (`writeback.rs`). The
//! writes occupy the shared device queue, so they also delay later reads: the queueing Fleet
//! §3.1 observes.

use crate::swapmap::SwapMap;
use crate::types::{PageIdx, Pid, SwapHandle};
use content::{ContentId, ContentStore};
use engine::{Category, Nanos};

/// One page handed to a backend for swap-out.
#[derive(Debug, Clone, Copy)]
pub struct SwapOutPage {
    pub page: PageIdx,
    pub pid: Pid,
    pub content: ContentId,
    /// Policy-provided group/hotness tag (e.g. Ariadne hot/warm/cold); 0 by default.
    pub tag: u8,
}

/// Work done by a backend operation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoCost {
    /// CPU on the calling thread, by category (only Compress/Decompress/Fault are used).
    pub compress_ns: Nanos,
    pub decompress_ns: Nanos,
    pub cpu_other_ns: Nanos,
    /// Time the calling thread waits (synchronous I/O incl. queueing, or blocked submitting to a
    /// full request queue), beyond the CPU above.
    pub wait_ns: Nanos,
    /// Asynchronous writes: time from the call until the last one completes (0 = nothing left
    /// in flight). The pages stay under writeback, holding their frames, until then.
    pub complete_ns: Nanos,
    pub bytes_read: u64,
    pub bytes_written: u64,
}

impl IoCost {
    pub fn add(&mut self, o: &IoCost) {
        self.compress_ns += o.compress_ns;
        self.decompress_ns += o.decompress_ns;
        self.cpu_other_ns += o.cpu_other_ns;
        self.wait_ns += o.wait_ns;
        self.complete_ns = self.complete_ns.max(o.complete_ns);
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
    }

    /// CPU time per category, for charging.
    pub fn cpu(&self) -> [(Category, Nanos); 3] {
        [
            (Category::Compress, self.compress_ns),
            (Category::Decompress, self.decompress_ns),
            (Category::Fault, self.cpu_other_ns),
        ]
    }

    pub fn cpu_total(&self) -> Nanos {
        self.compress_ns + self.decompress_ns + self.cpu_other_ns
    }
}

/// Result of loading one page.
#[derive(Debug, Clone, Copy)]
pub struct Loaded {
    /// Checksum of the bytes recovered (compared by the kernel with the page content's checksum).
    pub checksum: u64,
    pub cost: IoCost,
}

/// Why a store failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwapError {
    /// No free slot / disksize reached.
    Full,
    /// The backend needs DRAM it could not get.
    NoMemory,
}

/// Context a backend works in. The flash device is shared by flash swap, zram writeback and
/// file reads, so all of them queue behind each other.
pub struct BackendEnv<'a> {
    pub now: Nanos,
    pub contents: &'a ContentStore,
    /// Multiplier on host-measured CPU costs (device `cpu.speed_factor`).
    pub cpu_factor: f64,
    pub flash: &'a mut FlashDevice,
}

/// Backend usage figures common to all backends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BackendUsage {
    /// Pages currently stored.
    pub stored_pages: u64,
    /// Capacity in pages (disksize or swap partition size).
    pub capacity_pages: u64,
    /// DRAM pages the backend itself occupies (zram's mem_used_total / 4 KiB; 0 for flash).
    pub dram_pages: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
}

/// Which stored chunks a writeback moves to the backing device (zram `writeback` modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WritebackMode {
    Huge,
    Idle,
    /// Idle chunks, those spanning the most pages first (a policy that stores its coldest data
    /// in multi-page chunks writes that back before single-page and sub-page chunks).
    IdleLargeFirst,
    /// Like `IdleLargeFirst`, only chunks whose pages all carry a swap tag below this bound (a
    /// policy that tags its coldest data 0 writes back nothing else).
    IdleTagBelow(u8),
    HugeIdle,
    All,
}

/// A maintenance operation on a swap device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwapMaintenance {
    /// Mark every stored chunk idle (`echo all > idle`); a load clears the mark (idle ageing).
    MarkIdle,
    /// Write up to `max_pages` pages of the selected chunks to the backing device, freeing their
    /// pool memory (`echo idle > writeback`, ...): makes room in DRAM.
    Writeback { mode: WritebackMode, max_pages: u64 },
}

/// A swap device (Linux `swap_info_struct` + its block device).
///
/// Handles are small dense integers (slot or handle-table indices, reused after `free`): the kernel
/// keeps a reverse map indexed by handle.
pub trait SwapBackend {
    /// Short name for reports ("flash", "zram").
    fn name(&self) -> &'static str;

    /// SWP_SYNCHRONOUS_IO (zram): a swap-in skips swap cache and readahead.
    fn synchronous(&self) -> bool;

    /// Store `pages` (a reclaim batch, in reclaim order). Pushes one handle per page, in order, to
    /// `handles`. On error, nothing was stored.
    fn store(
        &mut self,
        env: &mut BackendEnv,
        pages: &[SwapOutPage],
        handles: &mut Vec<SwapHandle>,
    ) -> Result<IoCost, SwapError>;

    /// Load the page stored under `handle` (the handle stays valid until `free`).
    fn load(&mut self, env: &mut BackendEnv, handle: SwapHandle) -> Loaded;

    /// Load several pages in one request (readahead: adjacent slots share one I/O). Default: one
    /// load per handle. `out` receives one result per handle, in order.
    fn load_batch(&mut self, env: &mut BackendEnv, handles: &[SwapHandle], out: &mut Vec<Loaded>) {
        for &h in handles {
            out.push(self.load(env, h));
        }
    }

    /// Release `handle` (page swapped in and dirtied, or its process died).
    fn free(&mut self, handle: SwapHandle);

    /// Hint the CPU to load what [`Self::load`] of `handle` reads at random (no effect on
    /// results; any handle is allowed). Default: nothing.
    fn prefetch(&self, _handle: SwapHandle) {}

    /// Handles stored physically next to `handle` (same chunk or adjacent slots), for readahead;
    /// at most `max` of them, excluding `handle`. Default: none.
    fn neighbours(&self, _handle: SwapHandle, _max: usize, _out: &mut Vec<SwapHandle>) {}

    fn usage(&self) -> BackendUsage;

    /// Device maintenance during a run ([`crate::Kernel::swap_maintenance`]): zram's idle
    /// marking and writeback to its backing device. Returns the work done. Default: nothing.
    fn maintain(&mut self, _env: &mut BackendEnv, _op: SwapMaintenance) -> IoCost {
        IoCost::default()
    }

    /// Fault injection for integrity tests: damage the stored bytes of `handle` so that its next
    /// load recovers different bytes. Returns whether anything was damaged (a backend may hold
    /// no bytes of its own for that handle, e.g. a zram same-filled or raw page). Default: no.
    fn corrupt(&mut self, _handle: SwapHandle) -> bool {
        false
    }

    /// Backend-specific counters by their Linux names (zram: the `mm_stat` and `bd_stat`
    /// fields), for reports. Default: none.
    fn stats(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}

/// Requests a block device queue holds before a submitter blocks (Linux `BLKDEV_MAX_RQ`, the
/// default `nr_requests` of the legacy request queue used by the 3.18-era UFS/eMMC drivers;
/// `get_request` puts the submitter to sleep while the queue is full).
pub const NR_REQUESTS: usize = 128;

/// How far back in submission time [`FlashDevice`] keeps requests (pruned once it holds
/// [`FLASH_LOG_PRUNE_AT`], or twice what the last prune kept): far more than the simulation's
/// actors drift apart (seconds).
const FLASH_LOG_NS: Nanos = 600_000_000_000;
const FLASH_LOG_PRUNE_AT: usize = 1 << 16;

/// A flash device (UFS/eMMC): per-I/O latency plus transfer time, one FIFO queue, a request
/// queue of [`NR_REQUESTS`] entries (a writer submitting to a full queue waits for the oldest
/// request to complete), and byte counters (bytes written = wear).
///
/// FIFO by *submission time*: a request starts when the request submitted last at or before it
/// completes. The simulation does not always reach the device in time order (a launch runs
/// atomically, so its reads up to its first frame are submitted before the background work of
/// the seconds it spans), and a request submitted at `t` must not wait for reads submitted
/// later in simulated time: with one busy-until time, a direct reclaimer's writes queued behind
/// a launch up to 8 s ahead, its throttle never saw them complete, and the allocation OOM-killed
/// after 16 fruitless reclaims (Fleet §7.1: all 9 kernel OOM kills, session 20). Simplified: a
/// request submitted out of order does not delay the later-submitted ones already placed (the
/// device serves both in the overlap). In time order this is the plain FIFO.
#[derive(Debug, Clone)]
pub struct FlashDevice {
    read_latency_ns: Nanos,
    write_latency_ns: Nanos,
    read_ns_per_kib: f64,
    write_ns_per_kib: f64,
    busy_until: Nanos,
    /// Requests by (submission time, order of submission) -> completion time, for the last
    /// [`FLASH_LOG_NS`] of submissions.
    log: std::collections::BTreeMap<(Nanos, u64), Nanos>,
    seq: u64,
    /// Log size at which the next prune runs.
    prune_at: usize,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub reads: u64,
    pub writes: u64,
    /// Total time requests waited for the queue.
    pub queue_wait_ns: u128,
    /// Total time writers were blocked on a full request queue.
    pub submit_block_ns: u128,
}

impl FlashDevice {
    pub fn new(read_latency_ns: Nanos, write_latency_ns: Nanos, read_mb_s: f64, write_mb_s: f64) -> Self {
        Self {
            read_latency_ns,
            write_latency_ns,
            read_ns_per_kib: 1024.0 * 1e9 / (read_mb_s * 1e6),
            write_ns_per_kib: 1024.0 * 1e9 / (write_mb_s * 1e6),
            busy_until: 0,
            log: Default::default(),
            seq: 0,
            prune_at: FLASH_LOG_PRUNE_AT,
            bytes_read: 0,
            bytes_written: 0,
            reads: 0,
            writes: 0,
            queue_wait_ns: 0,
            submit_block_ns: 0,
        }
    }

    pub fn from_profile(d: &device::DeviceProfile) -> Self {
        let f = &d.flash;
        Self::new(
            (f.read_latency_us * 1000.0) as Nanos,
            (f.write_latency_us * 1000.0) as Nanos,
            f.read_bandwidth_mb_s,
            f.write_bandwidth_mb_s,
        )
    }

    /// The requests submitted at or before `now`, latest first, as completion times.
    fn submitted_by(&self, now: Nanos) -> impl Iterator<Item = Nanos> + '_ {
        self.log.range(..=(now, u64::MAX)).rev().map(|(_, &c)| c)
    }

    fn submit(&mut self, now: Nanos, service: Nanos) -> Nanos {
        let start = now.max(self.submitted_by(now).next().unwrap_or(0));
        self.queue_wait_ns += (start - now) as u128;
        let done = start + service;
        self.seq += 1;
        self.log.insert((now, self.seq), done);
        self.busy_until = self.busy_until.max(done);
        if self.log.len() > self.prune_at {
            let keep_from = self
                .log
                .keys()
                .next_back()
                .map_or(0, |k| k.0)
                .saturating_sub(FLASH_LOG_NS);
            self.log = self.log.split_off(&(keep_from, 0));
            // Amortised: with more than the threshold inside the horizon, prune again only once
            // the log has doubled (not on every submission).
            self.prune_at = FLASH_LOG_PRUNE_AT.max(2 * self.log.len());
        }
        done - now
    }

    /// Time a submitter at `now` must wait for a free request slot (0 if the queue has room).
    pub fn submit_delay(&self, now: Nanos) -> Nanos {
        let mut live = 0;
        let mut oldest = now;
        for c in self.submitted_by(now).take_while(|&c| c > now) {
            live += 1;
            oldest = c;
        }
        if live < NR_REQUESTS {
            return 0;
        }
        // FIFO: the slot frees when the oldest live request completes.
        oldest - now
    }

    /// A synchronous read of `bytes` issued at `now`; returns the time until it completes.
    pub fn read(&mut self, now: Nanos, bytes: u64) -> Nanos {
        self.bytes_read += bytes;
        self.reads += 1;
        let service = self.read_latency_ns + (bytes as f64 / 1024.0 * self.read_ns_per_kib) as Nanos;
        self.submit(now, service)
    }

    /// An asynchronous write of `bytes` issued at `now`: occupies the queue; returns its
    /// completion delay (callers usually do not wait for it).
    pub fn write(&mut self, now: Nanos, bytes: u64) -> Nanos {
        self.bytes_written += bytes;
        self.writes += 1;
        let service = self.write_latency_ns + (bytes as f64 / 1024.0 * self.write_ns_per_kib) as Nanos;
        self.submit(now, service)
    }

    /// Submit an asynchronous write of `bytes` at `now`, first waiting for a request slot if the
    /// queue is full. Returns (time blocked before submission, completion delay from `now`).
    pub fn write_throttled(&mut self, now: Nanos, bytes: u64) -> (Nanos, Nanos) {
        let blocked = self.submit_delay(now);
        self.submit_block_ns += blocked as u128;
        let done = self.write(now + blocked, bytes);
        (blocked, blocked + done)
    }

    pub fn busy_until(&self) -> Nanos {
        self.busy_until
    }
}

/// A swap partition (or swap file) on flash: 4 KiB slots from the cluster allocator
/// ([`SwapMap`]), so a reclaim batch lands in adjacent slots; each run of adjacent slots of a
/// batch is one write request (bios for adjacent sectors merge under the reclaimer's block plug,
/// `blk_start_plug` in `shrink_lruvec`).
#[derive(Debug)]
pub struct FlashSwap {
    /// Content stored in each slot (`NO_CONTENT` = free).
    slots: Vec<ContentId>,
    /// Checksum of the bytes written to each slot (what a read gives back).
    sums: Vec<u64>,
    map: SwapMap,
    stored: u64,
    bytes_read: u64,
    bytes_written: u64,
}

const NO_CONTENT: ContentId = ContentId::MAX;

impl FlashSwap {
    pub fn new(capacity_pages: u32) -> Self {
        Self {
            slots: vec![NO_CONTENT; capacity_pages as usize],
            sums: vec![0; capacity_pages as usize],
            map: SwapMap::new(capacity_pages),
            stored: 0,
            bytes_read: 0,
            bytes_written: 0,
        }
    }
}

impl SwapBackend for FlashSwap {
    fn name(&self) -> &'static str {
        "flash"
    }

    fn synchronous(&self) -> bool {
        false
    }

    fn store(
        &mut self,
        env: &mut BackendEnv,
        pages: &[SwapOutPage],
        handles: &mut Vec<SwapHandle>,
    ) -> Result<IoCost, SwapError> {
        let free = self.slots.len() as u64 - self.stored;
        if (pages.len() as u64) > free {
            return Err(SwapError::Full);
        }
        let base = handles.len();
        for p in pages {
            let slot = self.map.alloc().ok_or(SwapError::Full)?;
            self.slots[slot as usize] = p.content;
            self.sums[slot as usize] = env.contents.checksum(p.content);
            handles.push(slot);
        }
        self.stored += pages.len() as u64;
        let bytes = pages.len() as u64 * 4096;
        self.bytes_written += bytes;
        // One write request per run of adjacent slots; the submitter blocks while the request
        // queue is full. The writes complete asynchronously (the pages stay under writeback).
        let mut cost = IoCost {
            bytes_written: bytes,
            ..IoCost::default()
        };
        let new = &handles[base..];
        let mut i = 0;
        while i < new.len() {
            let mut j = i + 1;
            while j < new.len() && new[j] == new[j - 1] + 1 {
                j += 1;
            }
            let (blocked, done) = env
                .flash
                .write_throttled(env.now + cost.wait_ns, (j - i) as u64 * 4096);
            cost.complete_ns = cost.complete_ns.max(cost.wait_ns + done);
            cost.wait_ns += blocked;
            i = j;
        }
        Ok(cost)
    }

    fn load(&mut self, env: &mut BackendEnv, handle: SwapHandle) -> Loaded {
        let wait = env.flash.read(env.now, 4096);
        self.bytes_read += 4096;
        Loaded {
            checksum: self.sums[handle as usize],
            cost: IoCost {
                wait_ns: wait,
                bytes_read: 4096,
                ..Default::default()
            },
        }
    }

    fn load_batch(&mut self, env: &mut BackendEnv, handles: &[SwapHandle], out: &mut Vec<Loaded>) {
        // One I/O for the whole readahead window: the faulting page waits for all of it.
        let bytes = handles.len() as u64 * 4096;
        let wait = env.flash.read(env.now, bytes);
        self.bytes_read += bytes;
        for (i, &h) in handles.iter().enumerate() {
            let cost = if i == 0 {
                IoCost {
                    wait_ns: wait,
                    bytes_read: bytes,
                    ..Default::default()
                }
            } else {
                IoCost::default()
            };
            out.push(Loaded {
                checksum: self.sums[h as usize],
                cost,
            });
        }
    }

    fn prefetch(&self, handle: SwapHandle) {
        engine::prefetch(&self.sums, handle as usize);
        engine::prefetch(&self.slots, handle as usize);
    }

    fn free(&mut self, handle: SwapHandle) {
        debug_assert_ne!(
            self.slots[handle as usize], NO_CONTENT,
            "double free of swap slot"
        );
        self.slots[handle as usize] = NO_CONTENT;
        self.map.free(handle);
        self.stored -= 1;
    }

    fn corrupt(&mut self, handle: SwapHandle) -> bool {
        // A slot's bytes are represented by their checksum: a bit flip changes it.
        match self.sums.get_mut(handle as usize) {
            Some(s) if self.slots[handle as usize] != NO_CONTENT => {
                *s ^= 1;
                true
            }
            _ => false,
        }
    }

    fn neighbours(&self, handle: SwapHandle, max: usize, out: &mut Vec<SwapHandle>) {
        // Linux swap readahead reads an aligned window of 2^page_cluster slots around the fault.
        let window = (max + 1).next_power_of_two() as u32;
        let start = handle & !(window - 1);
        for s in start..(start + window).min(self.slots.len() as u32) {
            if s != handle && self.slots[s as usize] != NO_CONTENT && out.len() < max {
                out.push(s);
            }
        }
    }

    fn usage(&self) -> BackendUsage {
        BackendUsage {
            stored_pages: self.stored,
            capacity_pages: self.slots.len() as u64,
            dram_pages: 0,
            bytes_read: self.bytes_read,
            bytes_written: self.bytes_written,
        }
    }
}
