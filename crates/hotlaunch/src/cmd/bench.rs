//! `hotlaunch bench`: rates of the simulator's hot paths (a command, never a timed test).
//!
//! Every rate is per **CPU-second of the measuring thread** (`CLOCK_THREAD_CPUTIME_ID`, through
//! the `cpu-time` crate): on a shared machine wall time lies (a busy host showed 5× lower
//! wall-clock rates for the same work), CPU time does not. Compare two builds by running both
//! binaries' `bench` one after the other on the same machine.
//!
//! - `page_events_per_sec`: page accesses handed to the kernel per CPU-second,
//!   under memory pressure. Eight processes whose footprints add up to 1.5× the managed memory
//!   are first touched entirely (untimed), then a pre-generated skewed stream (90% of accesses to
//!   a hot fifth of each process) mixes resident hits, swap-ins, LRU aging and reclaim (kswapd and
//!   direct). The flash swap backend is used so the figure measures the kernel's page path, not
//!   codec speed (codec costs are what `compress-study` shows).
//! - `gc_object_visits_per_sec`: the runtime's tracing rate (see `runtime::bench`).
//! - `sim_seconds_per_cpu_second`: the built-in default scenario's simulated time over the CPU
//!   time of its run (stock Android policy).

use engine::{Actor, NS_PER_US};
use kernel::hooks::KernelHooks;
use kernel::mm::ContentSource;
use kernel::swap::{FlashSwap, SwapBackend};
use kernel::types::PageKind;
use kernel::Kernel;
use rand::{Rng, SeedableRng};
use std::time::Duration;

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    cpu_time::ThreadTime::now().as_duration()
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Page accesses in the timed page-event stream.
    #[arg(long, default_value_t = 30_000_000)]
    pub events: u64,
    /// Shorter runs; skip the default-scenario benchmark.
    #[arg(long)]
    pub quick: bool,
}

fn page_events(events: u64) -> anyhow::Result<()> {
    let device = device::DeviceProfile::builtin("pixel3")?;
    let mut contents = content::ContentStore::new();
    let range = contents.append_synthetic(&content::SynthMix::default(), 256, 7);
    let swap: Vec<Box<dyn SwapBackend>> = vec![Box::new(FlashSwap::new(4 << 20))];
    let mut k = Kernel::new(&device, contents, swap, KernelHooks::default())?;
    let managed = device.managed_pages() as u32;
    let per = managed * 3 / 2 / 8;
    let mut maps = Vec::new();
    for i in 0..8 {
        let pid = k.spawn(&format!("bench{i}"), 900, 8);
        let src = ContentSource {
            base: range.start,
            len: range.end - range.start,
            seed: i,
        };
        maps.push((pid, k.mmap(pid, per, PageKind::NativeAnon, false, src)?));
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let n = events as usize;
    let mut stream = Vec::with_capacity(n);
    let hot = per / 5;
    for _ in 0..n {
        let (pid, first) = maps[rng.gen_range(0..maps.len())];
        let off = if rng.gen_bool(0.9) {
            rng.gen_range(0..hot)
        } else {
            rng.gen_range(0..per)
        };
        stream.push((pid, first + off, rng.gen_bool(0.3)));
    }
    // Warm-up (untimed): touch everything once so the timed stream runs under pressure.
    let mut now = 0u64;
    for &(pid, first) in &maps {
        now += k.access_range(now, Actor::AppMain(pid), first, per, true)?.ns;
        k.advance_to(now);
    }
    let before = k.vmstat.clone();
    let start = thread_cpu();
    for &(pid, idx, write) in &stream {
        let s = k.access(now, Actor::AppMain(pid), idx, write)?;
        now += s.ns + NS_PER_US / 10;
        if s.ns > 0 {
            k.advance_to(now);
        }
    }
    let secs = (thread_cpu() - start).as_secs_f64().max(1e-9);
    let v = &k.vmstat;
    println!("page_events_per_sec: {:.0}", n as f64 / secs);
    println!(
        "  ({n} accesses in {secs:.2} CPU-s: {} major faults, {} swap-outs, {} pages scanned, {} direct reclaims)",
        v.pgmajfault - before.pgmajfault,
        v.pswpout - before.pswpout,
        (v.pgscan_kswapd + v.pgscan_direct) - (before.pgscan_kswapd + before.pgscan_direct),
        v.allocstall - before.allocstall
    );
    Ok(())
}

pub fn run(args: Args) -> anyhow::Result<()> {
    page_events(if args.quick {
        args.events.min(5_000_000)
    } else {
        args.events
    })?;
    println!(
        "gc_object_visits_per_sec: {:.0}",
        runtime::bench::gc_object_visits_per_sec(if args.quick { 0.5 } else { 2.0 }, thread_cpu)
    );
    if !args.quick {
        let r = super::run::load_scenario("default", None)?;
        let spec = hotlaunch::RunSpec::from_scenario(&r);
        let plans = hotlaunch::plan_runs(&r, &[])?;
        let start = thread_cpu();
        let out = hotlaunch::run_policy(
            &spec,
            plans[0].policy.as_ref(),
            &plans[0].params,
            plans[0].swap,
            |_, _| {},
        )?;
        let secs = (thread_cpu() - start).as_secs_f64().max(1e-9);
        let sim = out.simulated as f64 / 1e9;
        println!("sim_seconds_per_cpu_second: {:.0}", sim / secs);
        println!(
            "  (default scenario, {}: {sim:.0} simulated s in {secs:.2} CPU-s)",
            plans[0].label
        );
    }
    Ok(())
}
