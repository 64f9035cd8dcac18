//! `hotlaunch replay TRACE --memory MB`: a page-access trace (libCacheSim `oracleGeneral` or CSV,
//! crate `hotlaunch-trace`) replayed through the kernel model at a given memory size.
//!
//! What is modelled: each distinct `obj_id >> 40` (the app number of `run --page-trace` ids) is a
//! process with one anonymous mapping holding all of its objects (one 4 KiB page per object,
//! whatever `obj_size` says), in first-seen order; every request is a read access
//! ([`kernel::Kernel::access`]) by that process's main thread, so the kernel's two-list
//! (inactive/active) LRU with second chance, kswapd and direct reclaim, and swap-out to the
//! policy's swap devices (zram on real bytes for `android`, or `--swap flash`) act exactly as in
//! a run; `--swap ideal` replaces them with a synchronous device that costs nothing ([`IdealSwap`]). A policy contributes its kernel hooks and swap devices only (no apps, no framework).
//! The device profile (`--device`, default pixel3) gives costs and watermarks; its DRAM is set
//! so that managed memory is `--memory` MB. Simulated time follows the trace's seconds, with
//! 100 ns between requests on top of any stall (estimate: a few dozen instructions of app work
//! between two touches of different pages), so background reclaim interleaves as in a run.
//!
//! vs libCacheSim's LRU: its cache holds exactly N objects and evicts the least recently used.
//! Here the kernel keeps free memory between the low and high watermarks (so fewer pages are
//! resident than `--memory` holds), page tables take frames, zram's compressed pool takes frames
//! from the same memory, and reclaim approximates LRU with the active/inactive lists and the
//! accessed bit (a page touched twice while inactive is promoted; one touched once is evicted
//! in FIFO order of its insertion). `miss_ratio` counts requests that found their page not
//! resident (first touches included, as libCacheSim counts compulsory misses);
//! `major_fault_ratio` only swap-ins.
//!
//! Rates are per CPU-second of this thread (`cpu-time`): `requests_per_cpu_second` covers the
//! whole command (reading the trace, building the kernel, replaying), `replay_…` the replay loop.

use anyhow::Context;
use engine::{Actor, NS_PER_SEC};
use hotlaunch::thread_cpu;
use kernel::mm::ContentSource;
use kernel::types::{PageKind, PageState};
use kernel::Kernel;
use policy::{SwapDevices, SwapOverrides};
use runtime::gc::prefetch;
use std::collections::HashMap;
use std::path::PathBuf;

/// `--swap ideal`: a synchronous swap device that stores nothing but each slot's checksum and
/// costs nothing (no I/O, no compression, no DRAM): the kernel's reclaim and fault paths alone,
/// the closest the kernel model gets to a pure cache simulator's "miss = fetch". No real device
/// behaves so; it exists for replays that study reclaim rather than swap devices.
#[derive(Debug, Default)]
struct IdealSwap {
    sums: Vec<u64>,
    free_slots: Vec<kernel::types::SwapHandle>,
    stored: u64,
    capacity: u64,
}

impl kernel::swap::SwapBackend for IdealSwap {
    fn name(&self) -> &'static str {
        "ideal"
    }
    fn synchronous(&self) -> bool {
        true
    }
    fn store(
        &mut self,
        env: &mut kernel::swap::BackendEnv,
        pages: &[kernel::swap::SwapOutPage],
        handles: &mut Vec<kernel::types::SwapHandle>,
    ) -> Result<kernel::swap::IoCost, kernel::swap::SwapError> {
        if self.stored + pages.len() as u64 > self.capacity {
            return Err(kernel::swap::SwapError::Full);
        }
        for p in pages {
            let sum = env.contents.checksum(p.content);
            let h = match self.free_slots.pop() {
                Some(h) => {
                    self.sums[h as usize] = sum;
                    h
                }
                None => {
                    self.sums.push(sum);
                    self.sums.len() as u32 - 1
                }
            };
            handles.push(h);
        }
        self.stored += pages.len() as u64;
        Ok(kernel::swap::IoCost::default())
    }
    fn load(
        &mut self,
        _env: &mut kernel::swap::BackendEnv,
        handle: kernel::types::SwapHandle,
    ) -> kernel::swap::Loaded {
        kernel::swap::Loaded {
            checksum: self.sums[handle as usize],
            cost: kernel::swap::IoCost::default(),
        }
    }
    fn prefetch(&self, handle: kernel::types::SwapHandle) {
        prefetch(&self.sums, handle as usize);
    }
    fn free(&mut self, handle: kernel::types::SwapHandle) {
        self.free_slots.push(handle);
        self.stored -= 1;
    }
    fn usage(&self) -> kernel::swap::BackendUsage {
        kernel::swap::BackendUsage {
            stored_pages: self.stored,
            capacity_pages: self.capacity,
            ..Default::default()
        }
    }
}

/// Time between two requests on top of their stalls (see the module doc).
const REQUEST_GAP_NS: u64 = 100;

/// How many requests ahead the replay loop prefetches a page-table entry (twice as far: the
/// object's page number; half as far: a swapped page's slot). About one DRAM latency's worth of
/// resident hits.
const PREFETCH_AHEAD: usize = 16;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Trace file.
    pub trace: PathBuf,
    /// Managed memory of the replaying device, MB.
    #[arg(long)]
    pub memory: u64,
    /// Policy whose kernel hooks and swap devices are used.
    #[arg(long, default_value = "android")]
    pub policy: String,
    /// Trace format: `oracle` (libCacheSim oracleGeneral) or `csv` (time,obj_id,size).
    #[arg(long, default_value = "oracle", value_name = "oracle|csv")]
    pub format: String,
    /// Swap devices: `zram`, `flash`, `zram+flash` (default: the policy's), or `ideal` (a
    /// synchronous device that costs nothing: reclaim alone).
    #[arg(long)]
    pub swap: Option<String>,
    /// Device profile (built-in name) for costs and watermarks.
    #[arg(long, default_value = "pixel3")]
    pub device: String,
    /// Print the figures as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// The trace, in replayable form.
struct Loaded {
    /// Per request: dense object number.
    obj: Vec<u32>,
    /// The trace's time, s, as `(first request index, time)` at each change.
    time_s: Vec<(u64, u32)>,
    /// Per dense object: (process slot, page offset in the process's mapping).
    place: Vec<(u32, u32)>,
    /// Per process slot: its key (`obj_id >> 40`) and page count.
    procs: Vec<(u64, u32)>,
}

/// Object ids to dense numbers in first-seen order: an open-addressing table (linear probing,
/// splitmix64 of the id) written by hand because the id of every request is looked up and the
/// ids are known ahead: [`Self::dense_of_all`] prefetches the slots of one batch of ids while it
/// probes the previous batch's, which no general-purpose map (std, hashbrown) offers. A slot
/// holds its id and dense number together (one cache line per probe). Lookups only: no result
/// depends on the table's layout.
struct DenseIds {
    slots: Vec<Slot>,
    len: usize,
    /// Ids whose slots were prefetched, to be looked up by the next [`Self::dense_of_all`].
    pending: Vec<u64>,
}

#[derive(Clone, Copy)]
struct Slot {
    id: u64,
    /// Dense number, or [`DenseIds::EMPTY`].
    dense: u32,
}

impl DenseIds {
    const EMPTY: u32 = u32::MAX;

    fn with_capacity(n: usize) -> Self {
        let slots = (n.max(8) * 2).next_power_of_two();
        Self {
            slots: vec![
                Slot {
                    id: 0,
                    dense: Self::EMPTY
                };
                slots
            ],
            len: 0,
            pending: Vec::with_capacity(ID_BATCH),
        }
    }

    fn slot(&self, id: u64) -> usize {
        engine::splitmix64(id) as usize & (self.slots.len() - 1)
    }

    /// The dense number of `id`; a new id gets the next one and `on_new(id)` is called.
    fn dense_of(&mut self, id: u64, on_new: &mut impl FnMut(u64)) -> u32 {
        let mask = self.slots.len() - 1;
        let mut i = self.slot(id);
        loop {
            let s = self.slots[i];
            if s.dense == Self::EMPTY {
                break;
            }
            if s.id == id {
                return s.dense;
            }
            i = (i + 1) & mask;
        }
        let d = self.len as u32;
        self.slots[i] = Slot { id, dense: d };
        self.len += 1;
        on_new(id);
        if self.len * 2 > self.slots.len() {
            self.grow();
        }
        d
    }

    /// Prefetch the slots of `ids`, then append to `out` the dense numbers ([`Self::dense_of`])
    /// of the ids given to the previous call, in order. Call with an empty slice to finish.
    fn dense_of_all(&mut self, ids: &[u64], out: &mut Vec<u32>, on_new: &mut impl FnMut(u64)) {
        for &id in ids {
            prefetch(&self.slots, self.slot(id));
        }
        let mut pending = std::mem::take(&mut self.pending);
        out.extend(pending.iter().map(|&id| self.dense_of(id, on_new)));
        pending.clear();
        pending.extend_from_slice(ids);
        self.pending = pending;
    }

    fn grow(&mut self) {
        let bigger = vec![
            Slot {
                id: 0,
                dense: Self::EMPTY
            };
            self.slots.len() * 2
        ];
        let old = std::mem::replace(&mut self.slots, bigger);
        let mask = self.slots.len() - 1;
        for s in old.into_iter().filter(|s| s.dense != Self::EMPTY) {
            let mut i = self.slot(s.id);
            while self.slots[i].dense != Self::EMPTY {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
        }
    }
}

/// Requests whose ids are looked up together ([`DenseIds::dense_of_all`]).
const ID_BATCH: usize = 64;

fn load(path: &std::path::Path, format: trace::Format) -> anyhow::Result<Loaded> {
    // Capacity from the file size (oracle records are 24 bytes; CSV lines at least 6).
    let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let n_guess = match format {
        trace::Format::Oracle => len / trace::oracle::RECORD as u64,
        trace::Format::Csv => len / 16,
    } as usize;
    let mut l = Loaded {
        obj: Vec::with_capacity(n_guess),
        time_s: Vec::new(),
        place: Vec::new(),
        procs: Vec::new(),
    };
    // Distinct ids are far fewer than requests: size for a twentieth, grow as needed.
    let mut ids = DenseIds::with_capacity(n_guess / 20);
    let mut slot_of: HashMap<u64, u32> = HashMap::new();
    let mut batch: Vec<u64> = Vec::with_capacity(ID_BATCH);
    let mut new_id = |id: u64| {
        let key = id >> kernel::access_log::APP_SHIFT;
        let slot = *slot_of.entry(key).or_insert_with(|| {
            l.procs.push((key, 0));
            l.procs.len() as u32 - 1
        });
        let off = l.procs[slot as usize].1;
        l.procs[slot as usize].1 += 1;
        l.place.push((slot, off));
    };
    let mut obj = std::mem::take(&mut l.obj);
    let mut time_s: Vec<(u64, u32)> = Vec::new();
    let mut n = 0u64;
    trace::for_each_request(path, format, |r| {
        if time_s.last().is_none_or(|&(_, t)| t != r.time_s) {
            time_s.push((n, r.time_s));
        }
        n += 1;
        batch.push(r.obj_id);
        if batch.len() == ID_BATCH {
            ids.dense_of_all(&batch, &mut obj, &mut new_id);
            batch.clear();
        }
    })?;
    ids.dense_of_all(&batch, &mut obj, &mut new_id);
    ids.dense_of_all(&[], &mut obj, &mut new_id);
    if ids.len >= u32::MAX as usize / 2 {
        anyhow::bail!("{}: more than 2^31 distinct objects", path.display());
    }
    l.obj = obj;
    l.time_s = time_s;
    Ok(l)
}

/// What a replay measured.
#[derive(Debug, serde::Serialize)]
pub struct Figures {
    pub trace: String,
    pub format: String,
    pub policy: String,
    pub swap: Vec<String>,
    pub memory_mb: u64,
    pub requests: u64,
    pub unique_objects: u64,
    pub processes: u64,
    pub misses: u64,
    pub miss_ratio: f64,
    pub major_faults: u64,
    pub major_fault_ratio: f64,
    pub resident_pages_end: u64,
    pub cpu_seconds: f64,
    pub requests_per_cpu_second: f64,
    pub replay_cpu_seconds: f64,
    pub replay_requests_per_cpu_second: f64,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let start = thread_cpu();
    let format: trace::Format = args
        .format
        .parse()
        .map_err(|e: String| anyhow::anyhow!("--format: {e}"))?;
    if args.memory == 0 {
        anyhow::bail!("--memory must be at least 1 MB");
    }
    let devices = match args.swap.as_deref() {
        None => None,
        Some("zram") => Some(SwapDevices::Zram),
        Some("flash") => Some(SwapDevices::Flash),
        Some("zram+flash") => Some(SwapDevices::ZramFlash),
        Some("ideal") => Some(SwapDevices::None),
        Some(o) => anyhow::bail!("--swap {o}: expected zram, flash, zram+flash or ideal"),
    };
    let pol = policy::by_name(&args.policy).map_err(anyhow::Error::msg)?;
    let l = load(&args.trace, format)?;
    let mut device = device::DeviceProfile::builtin(&args.device)?;
    device.memory.dram_mb = args.memory + device.memory.kernel_reserve_mb;
    // Watermarks from Linux's formula for this memory size (`init_per_zone_wmark_min`:
    // sqrt(lowmem_kbytes × 16)), not the profile's value for its own DRAM.
    device.kernel.min_free_kbytes = None;
    // Swap sized to hold every object of the trace twice over (a replay must not fail on a
    // full swap device), at least the profile's.
    let need_mb = (l.place.len() as u64 * 2).div_ceil(256) + 64;
    let swap = SwapOverrides {
        devices,
        zram_mb: Some(need_mb.max(device.swap.zram_disksize_mb)),
        flash_mb: Some(need_mb.max(device.swap.flash_swap_mb)),
    };
    let params = policy::resolve_params(pol.as_ref(), &[]).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut parts = pol.build(&device, swap, &params).map_err(anyhow::Error::msg)?;
    if args.swap.as_deref() == Some("ideal") {
        parts.backends = vec![Box::new(IdealSwap {
            capacity: need_mb * 256,
            ..Default::default()
        })];
    }
    let swap_names: Vec<String> = parts.backends.iter().map(|b| b.name().to_string()).collect();
    let mut contents = content::ContentStore::new();
    let range = contents.append_synthetic(&content::SynthMix::default(), hotlaunch::CONTENTS_PER_APP, 1);
    let mut k = Kernel::new(&device, contents, parts.backends, parts.kernel_hooks)
        .with_context(|| format!("device {} with {} MB", device.name, args.memory))?;
    let mut maps = Vec::with_capacity(l.procs.len());
    for (i, &(key, pages)) in l.procs.iter().enumerate() {
        let pid = k.spawn(&format!("trace-{key}"), 0, 1);
        let src = ContentSource {
            base: range.start,
            len: range.end - range.start,
            seed: i as u64,
        };
        maps.push((pid, k.mmap(pid, pages, PageKind::NativeAnon, false, src)?));
    }
    // Dense object -> page index (its process is the page's owner).
    let page_of: Vec<u32> = l
        .place
        .iter()
        .map(|&(slot, off)| maps[slot as usize].1 + off)
        .collect();
    let before = k.vmstat.pgmajfault;
    let loop_start = thread_cpu();
    let mut now = 0u64;
    let mut misses = 0u64;
    let mut times = l.time_s.iter().peekable();
    for (i, &o) in l.obj.iter().enumerate() {
        while let Some(&(_, t)) = times.next_if(|&&(from, _)| from <= i as u64) {
            now = now.max(t as u64 * NS_PER_SEC);
        }
        // The trace is known ahead: start loading the dense-object slot, then the page-table
        // entry, then a swapped page's slot, of requests a little ahead, so their cache misses
        // overlap this request's work (no effect on results).
        if let Some(&ahead) = l.obj.get(i + 2 * PREFETCH_AHEAD) {
            prefetch(&page_of, ahead as usize);
        }
        if let Some(&ahead) = l.obj.get(i + PREFETCH_AHEAD) {
            k.prefetch_page(page_of[ahead as usize]);
        }
        if let Some(&ahead) = l.obj.get(i + PREFETCH_AHEAD / 2) {
            k.prefetch_swap_in(page_of[ahead as usize]);
        }
        let idx = page_of[o as usize];
        let Some(page) = k.page(idx) else {
            anyhow::bail!("internal error: request {i}'s page {idx} is not mapped")
        };
        let pid = page.pid;
        if page.state != PageState::Resident {
            misses += 1;
        }
        let s = match k.access(now, Actor::AppMain(pid), idx, false) {
            Ok(s) => s,
            Err(kernel::KernelError::Killed(_)) | Err(kernel::KernelError::OutOfMemory) => anyhow::bail!(
                "request {i} of {}: out of memory at --memory {} MB with swap {} (zram's compressed \
                 pool takes frames from the same memory: try a larger --memory or --swap flash)",
                args.trace.display(),
                args.memory,
                swap_names.join("+")
            ),
            Err(e) => {
                return Err(anyhow::Error::new(e).context(format!("request {i} of {}", args.trace.display())))
            }
        };
        now += s.ns + REQUEST_GAP_NS;
        if s.ns > 0 {
            k.advance_to(now);
        }
    }
    let end = thread_cpu();
    let n = l.obj.len() as u64;
    let ratio = |x: u64| if n == 0 { 0.0 } else { x as f64 / n as f64 };
    let cpu = (end - start).as_secs_f64().max(1e-9);
    let loop_cpu = (end - loop_start).as_secs_f64().max(1e-9);
    let major = k.vmstat.pgmajfault - before;
    let f = Figures {
        trace: args.trace.display().to_string(),
        format: args.format.clone(),
        policy: args.policy.clone(),
        swap: swap_names.clone(),
        memory_mb: args.memory,
        requests: n,
        unique_objects: l.place.len() as u64,
        processes: l.procs.len() as u64,
        misses,
        miss_ratio: ratio(misses),
        major_faults: major,
        major_fault_ratio: ratio(major),
        resident_pages_end: k.meminfo().anon_resident,
        cpu_seconds: cpu,
        requests_per_cpu_second: n as f64 / cpu,
        replay_cpu_seconds: loop_cpu,
        replay_requests_per_cpu_second: n as f64 / loop_cpu,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&f)?);
    } else {
        println!("trace                    {} ({})", f.trace, f.format);
        println!("requests                 {}", f.requests);
        println!(
            "unique objects           {} in {} processes",
            f.unique_objects, f.processes
        );
        println!(
            "memory                   {} MB managed ({} pages resident at the end)",
            f.memory_mb, f.resident_pages_end
        );
        println!(
            "policy                   {} (swap: {})",
            f.policy,
            f.swap.join(", ")
        );
        println!(
            "miss ratio               {:.4} ({} misses, first touches included)",
            f.miss_ratio, f.misses
        );
        println!(
            "major-fault ratio        {:.4} ({} swap-ins)",
            f.major_fault_ratio, f.major_faults
        );
        println!(
            "requests per CPU-second  {:.0} (whole command, {:.2} CPU-s; replay loop {:.0}/s)",
            f.requests_per_cpu_second, f.cpu_seconds, f.replay_requests_per_cpu_second
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Dense numbers are first-seen order, as a map would give them, through every growth
        /// of the table and whatever the batch boundaries; each new id is reported once, in order.
        #[test]
        fn dense_ids_number_ids_in_first_seen_order(
            ids in proptest::collection::vec(prop_oneof![0u64..40, any::<u64>()], 0..600),
            batch in 1usize..100,
        ) {
            let mut want: HashMap<u64, u32> = HashMap::new();
            let mut want_new = Vec::new();
            let want_dense: Vec<u32> = ids
                .iter()
                .map(|&id| {
                    let n = want.len() as u32;
                    *want.entry(id).or_insert_with(|| {
                        want_new.push(id);
                        n
                    })
                })
                .collect();
            let mut t = DenseIds::with_capacity(1);
            let (mut got, mut got_new) = (Vec::new(), Vec::new());
            for chunk in ids.chunks(batch) {
                t.dense_of_all(chunk, &mut got, &mut |id| got_new.push(id));
            }
            // The last batch is looked up by the finishing call.
            t.dense_of_all(&[], &mut got, &mut |id| got_new.push(id));
            prop_assert_eq!(got, want_dense);
            prop_assert_eq!(got_new, want_new);
            prop_assert_eq!(t.len, want.len());
        }
    }
}
