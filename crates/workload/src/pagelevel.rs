//! The kernel-level scenario: apps as sets of anonymous and file pages, switched by a user.
//!
//! This is the workload the kernel layer can run on its own (before the Android framework and the
//! runtime are involved): each app is a process with an anonymous mapping and a file mapping; a
//! *launch set* (pages touched when it comes back to the foreground) made of runs of adjacent
//! pages, and a foreground *working set* (a superset of the launch set) touched at a steady rate
//! while the app is in the foreground. The user switches apps by popularity (Zipf-like weights)
//! with a dwell time per visit. Killed apps (kernel OOM kills: there is no lmkd at this layer) come
//! back with a cold start that faults their whole launch footprint in.
//!
//! What it reports is kernel-level: the stall the foreground thread sees when an app comes back
//! (the memory part of a hot launch), faults, swap traffic, reclaim CPU, PSI, fragmentation and
//! swap integrity. It is also the load behind `hotlaunch bench`.

use content::{ContentStore, SynthMix};
use device::DeviceProfile;
use engine::{ms, Actor, Nanos, RngStreams, NS_PER_MS, NS_PER_SEC};
use hdrhistogram::Histogram;
use kernel::hooks::KernelHooks;
use kernel::mm::ContentSource;
use kernel::swap::{FlashSwap, SwapBackend};
use kernel::zram::{Zram, ZramConfig};
use content::CostTable;
use kernel::types::*;
use kernel::{Integrity, Kernel, MemInfo, VmStat};
use rand::Rng;
use serde::Serialize;

/// One app of the page-level scenario.
#[derive(Debug, Clone, Serialize)]
pub struct PageApp {
    pub name: String,
    pub anon_mb: u32,
    pub file_mb: u32,
    /// Fraction of the app's pages touched when it comes to the foreground.
    pub launch_fraction: f64,
    /// Fraction of the app's pages touched while it is in the foreground (includes the launch set).
    pub working_set_fraction: f64,
    /// Relative popularity (probability of being picked at a switch ∝ weight).
    pub weight: f64,
}

/// Which swap devices the kernel gets (sizes from the device profile unless overridden).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SwapSetup {
    None,
    /// A flash swap partition of `swap.flash_swap_mb`.
    Flash,
    /// zram of `disksize_mb` (LRU + zram: stock Android).
    Zram { disksize_mb: u64 },
    /// zram first, then the flash partition when zram is full (Linux swap priorities).
    ZramThenFlash { disksize_mb: u64 },
}

impl SwapSetup {
    /// Parse `none`, `flash`, `zram`, `zram+flash`; zram takes `zram_mb` (or the device's size).
    pub fn parse(s: &str, device: &DeviceProfile, zram_mb: Option<u64>) -> Result<Self, String> {
        let mb = zram_mb.unwrap_or(device.swap.zram_disksize_mb);
        let need_zram = |mb: u64| {
            if mb == 0 {
                Err(format!(
                    "--swap {s}: device {} has no zram (swap.zram_disksize_mb = 0); give --zram-mb",
                    device.name
                ))
            } else {
                Ok(mb)
            }
        };
        let need_flash = || {
            if device.swap.flash_swap_mb == 0 {
                Err(format!("--swap {s}: device {} has no flash swap (swap.flash_swap_mb = 0)", device.name))
            } else {
                Ok(())
            }
        };
        match s {
            "none" => Ok(SwapSetup::None),
            "flash" => need_flash().map(|_| SwapSetup::Flash),
            "zram" => Ok(SwapSetup::Zram { disksize_mb: need_zram(mb)? }),
            "zram+flash" => {
                need_flash()?;
                Ok(SwapSetup::ZramThenFlash { disksize_mb: need_zram(mb)? })
            }
            other => Err(format!("--swap: unknown swap setup `{other}`; expected none, flash, zram or zram+flash")),
        }
    }
}

/// A page-level scenario.
#[derive(Debug, Clone)]
pub struct PageScenario {
    pub name: String,
    pub device: DeviceProfile,
    pub apps: Vec<PageApp>,
    pub switches: u32,
    pub dwell: Nanos,
    pub tick: Nanos,
    pub accesses_per_tick: u32,
    pub write_fraction: f64,
    pub swap: SwapSetup,
    pub seed: u64,
    /// Distinct content pages generated per app (pages share contents within an app).
    pub contents_per_app: usize,
}

/// Figures of one run (serialised to JSON; field order is fixed, so output is byte-stable).
#[derive(Debug, Clone, Serialize)]
pub struct PageReport {
    pub scenario: String,
    pub device: String,
    pub seed: u64,
    pub swap: SwapSetup,
    pub simulated_seconds: f64,
    pub switches: u64,
    pub hot_switches: u64,
    pub cold_starts: u64,
    pub oom_kills: u64,
    /// Stall of the app's main thread while its launch set is touched on a switch back (ms).
    pub hot_switch_stall_ms: Summary,
    pub cold_start_stall_ms: Summary,
    pub max_alive_apps: u64,
    pub mean_alive_apps: f64,
    pub page_events: u64,
    pub vmstat: VmStat,
    pub psi_some_ms: f64,
    pub psi_full_ms: f64,
    pub cpu_ms_by_category: Vec<(String, f64)>,
    pub cpu_ms_by_actor: Vec<(String, f64)>,
    pub flash_bytes_read: u64,
    pub flash_bytes_written: u64,
    pub meminfo_end: MemInfo,
    /// Unusable free-space index per order 0..=10 at the end (ISMM'15 Eq. 1).
    pub unusable_index_end: Vec<f64>,
    pub integrity: Integrity,
}

/// Latency summary in milliseconds.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Summary {
    pub count: u64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub mean: f64,
    pub max: f64,
}

impl Summary {
    /// Summarise a histogram recorded in microseconds.
    pub fn from_us(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Summary { count: 0, p50: 0.0, p90: 0.0, p99: 0.0, mean: 0.0, max: 0.0 };
        }
        let r = |v: f64| (v * 1000.0).round() / 1000.0;
        Summary {
            count: h.len(),
            p50: r(h.value_at_quantile(0.5) as f64 / 1000.0),
            p90: r(h.value_at_quantile(0.9) as f64 / 1000.0),
            p99: r(h.value_at_quantile(0.99) as f64 / 1000.0),
            mean: r(h.mean() / 1000.0),
            max: r(h.max() as f64 / 1000.0),
        }
    }
}

/// The built-in app set: footprints in the range of the papers' apps (Ariadne Table 1 anon sizes
/// at 10 s–5 min; file shares estimated), popularity decreasing Zipf-like (LiveLab).
pub fn default_apps() -> Vec<PageApp> {
    let spec: [(&str, u32, u32); 20] = [
        ("YouTube", 260, 90),
        ("Twitter", 230, 70),
        ("Chrome", 300, 110),
        ("Instagram", 240, 80),
        ("Facebook", 280, 100),
        ("Firefox", 560, 120),
        ("Spotify", 180, 60),
        ("GoogleMaps", 330, 120),
        ("TikTok", 300, 90),
        ("Reddit", 200, 60),
        ("GoogleEarth", 273, 110),
        ("CandyCrush", 250, 140),
        ("BangDream", 400, 150),
        ("SubwaySurfers", 260, 130),
        ("AngryBirds", 220, 120),
        ("Gmail", 150, 60),
        ("Camera", 200, 70),
        ("Messages", 120, 40),
        ("Photos", 230, 80),
        ("WhatsApp", 170, 60),
    ];
    spec.iter()
        .enumerate()
        .map(|(i, &(name, anon, file))| PageApp {
            name: name.to_string(),
            anon_mb: anon,
            file_mb: file,
            launch_fraction: 0.12,
            working_set_fraction: 0.35,
            weight: 1.0 / (i as f64 + 1.0),
        })
        .collect()
}

impl PageScenario {
    /// The default kernel-level scenario on `device`.
    pub fn default_on(device: DeviceProfile, seed: u64) -> Self {
        let device_has_flash = device.swap.flash_swap_mb > 0;
        PageScenario {
            name: "page-level default".into(),
            device,
            apps: default_apps(),
            switches: 300,
            dwell: 30 * NS_PER_SEC,
            tick: 100 * NS_PER_MS,
            accesses_per_tick: 64,
            write_fraction: 0.3,
            swap: if device_has_flash { SwapSetup::Flash } else { SwapSetup::None },
            seed,
            contents_per_app: 512,
        }
    }
}

/// Pages of an app, as offsets into its mappings (anon first, then file).
struct AppPages {
    launch: Vec<u32>,
    working: Vec<u32>,
}

/// Runs of adjacent pages covering about `fraction` of `n` pages (mean run length 4: launch
/// accesses have page-adjacency locality, Ariadne Table 3).
fn page_runs(rng: &mut impl Rng, n: u32, fraction: f64) -> Vec<u32> {
    let want = ((n as f64) * fraction) as u32;
    let mut chosen = vec![false; n as usize];
    let mut count = 0;
    while count < want {
        let start = rng.gen_range(0..n);
        let len = 1 + rng.gen_range(0..7);
        for p in start..(start + len).min(n) {
            if !chosen[p as usize] {
                chosen[p as usize] = true;
                count += 1;
            }
        }
    }
    (0..n).filter(|&p| chosen[p as usize]).collect()
}

struct AppState {
    pid: Option<Pid>,
    anon_first: PageIdx,
    file_first: PageIdx,
    anon_pages: u32,
    pages: AppPages,
    source_anon: ContentSource,
    source_file: ContentSource,
}

impl PageScenario {
    fn build_backends(&self) -> Vec<Box<dyn SwapBackend>> {
        let flash = || -> Box<dyn SwapBackend> { Box::new(FlashSwap::new((self.device.swap.flash_swap_mb * 256) as u32)) };
        let zram = |mb: u64| -> Box<dyn SwapBackend> {
            let mut cfg = ZramConfig::from_profile(&self.device);
            cfg.disksize_bytes = mb << 20;
            Box::new(Zram::new(cfg, CostTable::builtin()))
        };
        match self.swap {
            SwapSetup::None => vec![],
            SwapSetup::Flash => vec![flash()],
            SwapSetup::Zram { disksize_mb } => vec![zram(disksize_mb)],
            SwapSetup::ZramThenFlash { disksize_mb } => vec![zram(disksize_mb), flash()],
        }
    }

    /// Run the scenario. `progress(done, total)` is called after each switch.
    pub fn run(&self, mut progress: impl FnMut(u64, u64)) -> Result<PageReport, String> {
        let streams = RngStreams::new(self.seed);
        let mut contents = ContentStore::new();
        let mix = SynthMix::default();
        let mut ranges = Vec::new();
        for i in 0..self.apps.len() {
            ranges.push(contents.append_synthetic(&mix, self.contents_per_app, self.seed ^ (i as u64 + 1)));
        }
        let mut k = Kernel::new(&self.device, contents, self.build_backends(), KernelHooks::default())
            .map_err(|e| e.to_string())?;

        // The always-running system (system_server, SurfaceFlinger...): unkillable anon memory.
        let sys_pages = (self.device.memory.system_reserve_mb * 256) as u32;
        let sys = k.spawn("system", -900, 64);
        let sys_first = k
            .mmap(sys, sys_pages, PageKind::NativeAnon, false, ContentSource { base: ranges[0].start, len: 64, seed: 1 })
            .map_err(|e| e.to_string())?;
        k.access_range(0, Actor::AppMain(sys), sys_first, sys_pages, true).map_err(|e| e.to_string())?;

        let mut rng = streams.stream("pagelevel-apps", 0);
        let mut apps: Vec<AppState> = self
            .apps
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let anon = a.anon_mb * 256;
                let file = a.file_mb * 256;
                let total = anon + file;
                let launch = page_runs(&mut rng, total, a.launch_fraction);
                let mut working = page_runs(&mut rng, total, a.working_set_fraction);
                working.extend_from_slice(&launch);
                working.sort_unstable();
                working.dedup();
                let r = &ranges[i];
                AppState {
                    pid: None,
                    anon_first: 0,
                    file_first: 0,
                    anon_pages: anon,
                    pages: AppPages { launch, working },
                    source_anon: ContentSource { base: r.start, len: r.end - r.start, seed: i as u64 * 7 + 1 },
                    source_file: ContentSource { base: r.start, len: r.end - r.start, seed: i as u64 * 7 + 2 },
                }
            })
            .collect();

        let mut hot = Histogram::<u64>::new(3).expect("histogram");
        let mut cold = Histogram::<u64>::new(3).expect("histogram");
        let mut pick = streams.stream("pagelevel-switch", 0);
        let mut touch = streams.stream("pagelevel-touch", 0);
        let total_weight: f64 = self.apps.iter().map(|a| a.weight).sum();
        let mut now: Nanos = NS_PER_SEC;
        let (mut hot_n, mut cold_n, mut oom_kills) = (0u64, 0u64, 0u64);
        let (mut max_alive, mut alive_sum) = (0u64, 0u64);
        let mut prev: Option<usize> = None;

        for s in 0..self.switches {
            // Pick the next app (never the current one).
            let app = loop {
                let mut x = pick.gen::<f64>() * total_weight;
                let mut chosen = self.apps.len() - 1;
                for (i, a) in self.apps.iter().enumerate() {
                    if x < a.weight {
                        chosen = i;
                        break;
                    }
                    x -= a.weight;
                }
                if Some(chosen) != prev || self.apps.len() == 1 {
                    break chosen;
                }
            };
            prev = Some(app);
            k.advance_to(now);
            for pid in k.take_oom_kills() {
                oom_kills += 1;
                if let Some(a) = apps.iter_mut().find(|a| a.pid == Some(pid)) {
                    a.pid = None;
                }
            }

            // Launch: cold start if not running, else hot switch.
            let st = &mut apps[app];
            let is_cold = st.pid.is_none();
            if is_cold {
                let spec = &self.apps[app];
                let pid = k.spawn(&spec.name, 900, 40);
                st.anon_first = k.mmap(pid, st.anon_pages, PageKind::NativeAnon, false, st.source_anon).map_err(|e| e.to_string())?;
                st.file_first = k
                    .mmap(pid, spec.file_mb * 256, PageKind::File, true, st.source_file)
                    .map_err(|e| e.to_string())?;
                st.pid = Some(pid);
            }
            let pid = st.pid.expect("running");
            let actor = Actor::AppMain(pid);
            let mut stall: Nanos = 0;
            // A cold start builds the whole anonymous footprint and reads the launch files.
            let cold_set: Vec<u32>;
            let launch = if is_cold {
                cold_set = (0..st.anon_pages)
                    .chain(st.pages.launch.iter().copied().filter(|&o| o >= st.anon_pages))
                    .collect();
                &cold_set
            } else {
                &st.pages.launch
            };
            let mut killed = false;
            for &off in launch {
                let (idx, write) = if off < st.anon_pages {
                    (st.anon_first + off, is_cold)
                } else {
                    (st.file_first + off - st.anon_pages, false)
                };
                match k.access(now + stall, actor, idx, write) {
                    Ok(st) => stall += st.ns,
                    Err(_) => {
                        killed = true;
                        break;
                    }
                }
            }
            if killed {
                apps[app].pid = None;
                oom_kills += 1;
                for pid in k.take_oom_kills() {
                    if let Some(a) = apps.iter_mut().find(|a| a.pid == Some(pid)) {
                        a.pid = None;
                    }
                }
                now += stall;
                progress(s as u64 + 1, self.switches as u64);
                continue;
            }
            if is_cold {
                cold_n += 1;
                cold.record((stall / 1000).max(1)).ok();
            } else {
                hot_n += 1;
                hot.record((stall / 1000).max(1)).ok();
            }
            now += stall;
            let alive = k.processes().iter().filter(|p| p.alive && p.oom_score_adj >= 0).count() as u64;
            max_alive = max_alive.max(alive);
            alive_sum += alive;

            // Foreground use: touch the working set at a steady rate.
            let end = now + self.dwell;
            let st = &apps[app];
            'fg: while now < end {
                k.advance_to(now);
                let mut t = now;
                for _ in 0..self.accesses_per_tick {
                    let off = st.pages.working[touch.gen_range(0..st.pages.working.len())];
                    let write = touch.gen::<f64>() < self.write_fraction;
                    let (idx, write) = if off < st.anon_pages {
                        (st.anon_first + off, write)
                    } else {
                        (st.file_first + off - st.anon_pages, false)
                    };
                    match k.access(t, actor, idx, write) {
                        Ok(s) => t += s.ns,
                        Err(_) => break 'fg,
                    }
                }
                now = t.max(now + self.tick);
            }
            now = now.max(end);
            for pid in k.take_oom_kills() {
                oom_kills += 1;
                if let Some(a) = apps.iter_mut().find(|a| a.pid == Some(pid)) {
                    a.pid = None;
                }
            }
            if !k.process(pid).is_some_and(|p| p.alive) {
                apps[app].pid = None;
            }
            progress(s as u64 + 1, self.switches as u64);
        }
        k.advance_to(now);

        let free_counts = k.buddy().free_block_counts();
        let unusable = (0..=MAX_ORDER).map(|o| kernel::buddy::unusable_index(&free_counts, o)).collect();
        let to_ms = |v: Vec<(&'static str, Nanos)>| v.into_iter().map(|(n, ns)| (n.to_string(), ms(ns))).collect();
        Ok(PageReport {
            scenario: self.name.clone(),
            device: self.device.name.clone(),
            seed: self.seed,
            swap: self.swap,
            simulated_seconds: now as f64 / NS_PER_SEC as f64,
            switches: self.switches as u64,
            hot_switches: hot_n,
            cold_starts: cold_n,
            oom_kills,
            hot_switch_stall_ms: Summary::from_us(&hot),
            cold_start_stall_ms: Summary::from_us(&cold),
            max_alive_apps: max_alive,
            mean_alive_apps: alive_sum as f64 / self.switches.max(1) as f64,
            page_events: k.vmstat.page_accesses,
            vmstat: k.vmstat.clone(),
            psi_some_ms: ms(k.psi.some_total_ns),
            psi_full_ms: ms(k.psi.full_total_ns),
            cpu_ms_by_category: to_ms(k.cpu.categories()),
            cpu_ms_by_actor: to_ms(k.cpu.by_actor_kind()),
            flash_bytes_read: k.flash.bytes_read,
            flash_bytes_written: k.flash.bytes_written,
            meminfo_end: k.meminfo(),
            unusable_index_end: unusable,
            integrity: k.integrity,
        })
    }
}
