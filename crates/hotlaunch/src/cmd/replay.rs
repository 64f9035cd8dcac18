//! `hotlaunch replay TRACE --memory MB`: a page-access trace (libCacheSim `oracleGeneral` or CSV,
//! crate `hotlaunch-trace`) replayed through the kernel model at a given memory size.
//!
//! What is modelled: each distinct `obj_id >> 40` (the app number of `run --page-trace` ids) is a
//! process with one anonymous mapping holding all of its objects (one 4 KiB page per object,
//! whatever `obj_size` says), in first-seen order; every request is a read access
//! ([`kernel::Kernel::access`]) by that process's main thread, so the kernel's two-list
//! (inactive/active) LRU with second chance, kswapd and direct reclaim, and swap-out to the
//! policy's swap devices (zram on real bytes for `android`, or `--swap flash`) act exactly as in
//! a run. A policy contributes its kernel hooks and swap devices only (no apps, no framework).
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
use kernel::mm::ContentSource;
use kernel::types::{PageKind, PageState};
use kernel::Kernel;
use policy::{SwapDevices, SwapOverrides};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

/// Time between two requests on top of their stalls (see the module doc).
const REQUEST_GAP_NS: u64 = 100;

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
    /// Swap devices: `zram`, `flash`, `zram+flash` (default: the policy's).
    #[arg(long)]
    pub swap: Option<String>,
    /// Device profile (built-in name) for costs and watermarks.
    #[arg(long, default_value = "pixel3")]
    pub device: String,
    /// Print the figures as one JSON object.
    #[arg(long)]
    pub json: bool,
}

fn thread_cpu() -> Duration {
    cpu_time::ThreadTime::now().as_duration()
}

/// The trace, in replayable form.
struct Loaded {
    /// Per request: dense object number.
    obj: Vec<u32>,
    /// Per request: time, s.
    time_s: Vec<u32>,
    /// Per dense object: (process slot, page offset in the process's mapping).
    place: Vec<(u32, u32)>,
    /// Per process slot: its key (`obj_id >> 40`) and page count.
    procs: Vec<(u64, u32)>,
}

fn load(path: &std::path::Path, format: trace::Format) -> anyhow::Result<Loaded> {
    let mut ids: HashMap<u64, u32> = HashMap::new();
    let mut slot_of: HashMap<u64, u32> = HashMap::new();
    let mut l = Loaded {
        obj: Vec::new(),
        time_s: Vec::new(),
        place: Vec::new(),
        procs: Vec::new(),
    };
    let mut too_many = false;
    trace::for_each_request(path, format, |r| {
        let next = l.place.len() as u32;
        let dense = *ids.entry(r.obj_id).or_insert_with(|| {
            let key = r.obj_id >> kernel::access_log::APP_SHIFT;
            let slot = *slot_of.entry(key).or_insert_with(|| {
                l.procs.push((key, 0));
                l.procs.len() as u32 - 1
            });
            let off = l.procs[slot as usize].1;
            l.procs[slot as usize].1 += 1;
            l.place.push((slot, off));
            next
        });
        too_many |= l.place.len() >= u32::MAX as usize / 2;
        l.obj.push(dense);
        l.time_s.push(r.time_s);
    })?;
    if too_many {
        anyhow::bail!("{}: more than 2^31 distinct objects", path.display());
    }
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
        Some(o) => anyhow::bail!("--swap {o}: expected zram, flash or zram+flash"),
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
    let parts = pol.build(&device, swap, &params).map_err(anyhow::Error::msg)?;
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
    // Dense object -> (pid, page index).
    let pages: Vec<(u32, u32)> = l
        .place
        .iter()
        .map(|&(slot, off)| (maps[slot as usize].0, maps[slot as usize].1 + off))
        .collect();
    let before = k.vmstat.pgmajfault;
    let loop_start = thread_cpu();
    let mut now = 0u64;
    let mut misses = 0u64;
    for (i, &o) in l.obj.iter().enumerate() {
        let (pid, idx) = pages[o as usize];
        now = now.max(l.time_s[i] as u64 * NS_PER_SEC);
        if k.page(idx).is_some_and(|p| p.state != PageState::Resident) {
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
