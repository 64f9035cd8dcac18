//! `hotlaunch bench`: rates of the simulator's hot paths (never a timed test).
//!
//! `page_events_per_sec`: page accesses handed to the kernel per wall-clock second on one core,
//! under memory pressure: processes whose footprint exceeds DRAM touch pages with a skewed
//! pattern, so the stream mixes resident hits, anonymous first-touch faults, swap-ins (with
//! readahead), LRU aging and reclaim (kswapd and direct). The flash swap backend is used so that
//! the figure measures the kernel's page path, not codec speed (codec costs are in `compress-study`).
//! `sim_seconds_per_wall_second`: the default scenario's simulated time over its run time.

use engine::{Actor, NS_PER_US};
use kernel::hooks::KernelHooks;
use kernel::mm::ContentSource;
use kernel::swap::{FlashSwap, SwapBackend};
use kernel::types::PageKind;
use kernel::Kernel;
use rand::{Rng, SeedableRng};
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Page accesses in the page-event benchmark.
    #[arg(long, default_value_t = 30_000_000)]
    pub events: u64,
    /// Skip the default-scenario benchmark.
    #[arg(long)]
    pub quick: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let device = device::DeviceProfile::builtin("pixel3")?;
    let mut contents = content::ContentStore::new();
    let range = contents.append_synthetic(&content::SynthMix::default(), 256, 7);
    let swap: Vec<Box<dyn SwapBackend>> = vec![Box::new(FlashSwap::new(4 << 20))];
    let mut k = Kernel::new(&device, contents, swap, KernelHooks::default())?;
    let managed = device.managed_pages() as u32;
    // Eight processes, together 1.5x the managed memory.
    let per = managed * 3 / 2 / 8;
    let mut maps = Vec::new();
    for i in 0..8 {
        let pid = k.spawn(&format!("bench{i}"), 900, 8);
        let src = ContentSource { base: range.start, len: range.end - range.start, seed: i };
        maps.push((pid, k.mmap(pid, per, PageKind::NativeAnon, false, src)?));
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    // Pre-generate the access stream so the timed loop measures the kernel only.
    let n = args.events as usize;
    let mut stream = Vec::with_capacity(n);
    let hot = per / 5;
    for _ in 0..n {
        let (pid, first) = maps[rng.gen_range(0..maps.len())];
        // 90% of accesses to a hot fifth of each process.
        let off = if rng.gen_bool(0.9) { rng.gen_range(0..hot) } else { rng.gen_range(0..per) };
        stream.push((pid, first + off, rng.gen_bool(0.3)));
    }
    let mut now = 0u64;
    let start = Instant::now();
    for &(pid, idx, write) in &stream {
        let s = k.access(now, Actor::AppMain(pid), idx, write)?;
        now += s.ns + NS_PER_US / 10;
        if s.ns > 0 {
            k.advance_to(now);
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let v = &k.vmstat;
    println!("page_events_per_sec: {:.0}", n as f64 / secs);
    println!(
        "  ({} accesses in {:.2} s: {} faults, {} major, {} swap-outs, {} pages scanned, {} direct reclaims)",
        n, secs, v.pgfault, v.pgmajfault, v.pswpout, v.pgscan_kswapd + v.pgscan_direct, v.allocstall
    );
    if !args.quick {
        let sc = super::run::scenario_from(&super::run::Args { device: "pixel3".into(), seed: 1, ..Default::default() })?;
        let start = Instant::now();
        let r = sc.run(|_, _| {}).map_err(anyhow::Error::msg)?;
        let secs = start.elapsed().as_secs_f64();
        println!("sim_seconds_per_wall_second: {:.0}", r.simulated_seconds / secs);
        println!("  (default scenario: {:.0} simulated s in {:.2} s wall)", r.simulated_seconds, secs);
    }
    Ok(())
}
