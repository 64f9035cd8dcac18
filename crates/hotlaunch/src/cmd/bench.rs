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
//! - `gc_object_visits_per_sec`: the runtime's tracing rate (see `runtime::bench`; trace replay
//!   off, so every counted visit is traced).
//! - End to end (not with `--quick`): the built-in default scenario run once per policy (all
//!   registered policies, or those given with `--policy`), one after the other on this thread.
//!   Per run: CPU-seconds, CPU-seconds per 1,000 launches, simulated page accesses per CPU-second
//!   (the kernel's `page_accesses`), GC object visits per CPU-second *inside the run* (the
//!   collector's own host CPU, measured by `runtime::bench::set_gc_clock`; the simulation never
//!   reads it; a full collection replayed from a recorded trace, `runtime::gc::replay`, counts
//!   the recorded visits in little time, so policies whose walks replay show a higher rate than
//!   their tracer's), and the run's peak RSS (`VmHWM`, reset before each run through
//!   `/proc/self/clear_refs`; shown as "—" where that is unavailable). Below each row, the
//!   simulated work per launch (GC object visits, page accesses, faults, swap-outs, pages
//!   scanned) beside the CPU per launch: what a CPU-per-launch target leaves per event.
//! - `--json FILE` writes every figure for tracking.
//!
//! What the in-run GC clock covers: all of `runtime::gc::collect` — tracing, copying, reclaim,
//! sizing, a policy's `after_gc` hook and its hints — *and* the simulated kernel work those do
//! through the page backing: faults on fresh to-space pages (frame allocation, and direct
//! reclaim when the allocation falls below the watermark), swap-ins of pages the collector
//! reads, and `MADV_DONTNEED` of the freed regions. That kernel work is simulated memory
//! management, not tracing, but it is on the clock. Measured in session 18 (`perf record -F 149
//! --call-graph dwarf`, samples inside `collect` whose stack reaches the kernel crate): default
//! day `android`, 29% of the GC clock (discard of freed regions 13%, direct reclaim 8%, faults
//! 5%, swap-ins 1%); `marvin-8.3-capacity` (use_s shortened to 50), 49% (page hits and faults
//! of touches 26%, discard 16.5%, swap-ins 3%, direct reclaim 3%). The rest is the tracer and
//! copier themselves, bound by cache misses on object records and mark words.

use engine::{Actor, NS_PER_US};
use hotlaunch::thread_cpu;
use kernel::hooks::KernelHooks;
use kernel::mm::ContentSource;
use kernel::swap::{FlashSwap, SwapBackend};
use kernel::types::PageKind;
use kernel::Kernel;
use rand::{Rng, SeedableRng};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Page accesses in the timed page-event stream.
    #[arg(long, default_value_t = 30_000_000)]
    pub events: u64,
    /// Shorter runs; skip the default-scenario benchmark.
    #[arg(long)]
    pub quick: bool,
    /// Policy of the default-day runs (repeat for several; default: every registered policy).
    #[arg(long = "policy")]
    pub policy: Vec<String>,
    /// Write every figure as JSON to this file.
    #[arg(long)]
    pub json: Option<std::path::PathBuf>,
}

/// The page-event stream's rate (printed; returned for `--json`).
fn page_events(events: u64) -> anyhow::Result<f64> {
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
    Ok(n as f64 / secs)
}

/// CPU time of the calling thread, ns (the GC probe's clock).
fn thread_cpu_ns() -> u64 {
    thread_cpu().as_nanos() as u64
}

/// Reset the process's peak RSS (`VmHWM`); false where the kernel does not allow it.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The process's peak RSS since the last reset, MiB.
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// One policy's end-to-end figures on the default day.
#[derive(Debug, serde::Serialize)]
struct DayFigures {
    policy: String,
    cpu_s: f64,
    launches: u64,
    cpu_s_per_1000_launches: f64,
    simulated_s: f64,
    page_accesses_per_cpu_s: f64,
    gc_object_visits: u64,
    gc_cpu_s: f64,
    gc_object_visits_per_cpu_s: f64,
    peak_rss_mb: Option<f64>,
    /// The simulated work behind one launch of the day (what the CPU-s per launch pays for).
    per_launch: WorkPerLaunch,
}

/// Simulated events per launch of a day: the work a run must do whatever its speed. CPU per
/// launch divided by these gives the host time per event; a target CPU per launch divided by
/// them gives the time per event it needs.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
struct WorkPerLaunch {
    cpu_us: f64,
    gc_object_visits: f64,
    page_accesses: f64,
    page_faults: f64,
    major_faults: f64,
    swap_outs: f64,
    pages_scanned: f64,
}

impl WorkPerLaunch {
    /// Per-launch figures of a run of `launches` launches (none: every figure is 0).
    fn of(cpu_s: f64, launches: u64, gc_visits: u64, vm: &kernel::VmStat) -> Self {
        let per = |x: f64| if launches == 0 { 0.0 } else { x / launches as f64 };
        Self {
            cpu_us: per(cpu_s * 1e6),
            gc_object_visits: per(gc_visits as f64),
            page_accesses: per(vm.page_accesses as f64),
            page_faults: per(vm.pgfault as f64),
            major_faults: per(vm.pgmajfault as f64),
            swap_outs: per(vm.pswpout as f64),
            pages_scanned: per((vm.pgscan_kswapd + vm.pgscan_direct) as f64),
        }
    }
}

/// The default scenario and its runs for `policies` (every registered one if empty): planned
/// before any timing, so a bad name fails at once.
fn plan_default_day(policies: &[String]) -> anyhow::Result<(hotlaunch::RunSpec, Vec<hotlaunch::RunPlan>)> {
    let r = super::run::load_scenario("default", None)?;
    let names: Vec<String> = if policies.is_empty() {
        policy::names().into_iter().map(String::from).collect()
    } else {
        policies.to_vec()
    };
    Ok((
        hotlaunch::RunSpec::from_scenario(&r),
        hotlaunch::plan_runs(&r, &names)?,
    ))
}

fn default_day(spec: &hotlaunch::RunSpec, plans: &[hotlaunch::RunPlan]) -> anyhow::Result<Vec<DayFigures>> {
    println!("default day, one run per policy on this thread:");
    println!(
        "  {:<16} {:>8} {:>9} {:>14} {:>16} {:>14} {:>9}",
        "policy", "CPU-s", "launches", "CPU-s/1000 l.", "page acc./CPU-s", "GC visits/CPU-s", "peak MiB"
    );
    let mut out = Vec::new();
    for plan in plans {
        let rss_ok = reset_peak_rss();
        runtime::bench::set_gc_clock(Some(thread_cpu_ns));
        let start = thread_cpu();
        // Each run builds its own heap blueprints, as a run on its own does.
        let own = spec.with_own_blueprints();
        let o = hotlaunch::run_policy(&own, plan.policy.as_ref(), &plan.params, plan.swap, |_, _| {})?;
        let cpu_s = (thread_cpu() - start).as_secs_f64().max(1e-9);
        let gc_cpu_s = runtime::bench::gc_host_ns() as f64 / 1e9;
        runtime::bench::set_gc_clock(None);
        let launches = o.launch_log.len() as u64;
        let f = DayFigures {
            policy: plan.label.clone(),
            cpu_s,
            launches,
            cpu_s_per_1000_launches: cpu_s * 1000.0 / launches.max(1) as f64,
            simulated_s: o.simulated as f64 / 1e9,
            page_accesses_per_cpu_s: o.kernel.vmstat.page_accesses as f64 / cpu_s,
            gc_object_visits: o.gc.visits,
            gc_cpu_s,
            gc_object_visits_per_cpu_s: o.gc.visits as f64 / gc_cpu_s.max(1e-9),
            peak_rss_mb: if rss_ok { peak_rss_mb() } else { None },
            per_launch: WorkPerLaunch::of(cpu_s, launches, o.gc.visits, &o.kernel.vmstat),
        };
        drop(o);
        println!(
            "  {:<16} {:>8.1} {:>9} {:>14.1} {:>16.0} {:>14.0} {:>9}",
            f.policy,
            f.cpu_s,
            f.launches,
            f.cpu_s_per_1000_launches,
            f.page_accesses_per_cpu_s,
            f.gc_object_visits_per_cpu_s,
            f.peak_rss_mb.map_or("—".to_string(), |m| format!("{m:.0}"))
        );
        let w = &f.per_launch;
        println!(
            "    per launch: {:.0} µs CPU for {:.0} GC object visits, {:.0} page accesses, {:.0} faults \
             ({:.0} major), {:.0} swap-outs, {:.0} pages scanned",
            w.cpu_us,
            w.gc_object_visits,
            w.page_accesses,
            w.page_faults,
            w.major_faults,
            w.swap_outs,
            w.pages_scanned
        );
        out.push(f);
    }
    Ok(out)
}

pub fn run(args: Args) -> anyhow::Result<()> {
    use anyhow::Context;
    if let Some(path) = &args.json {
        report::check_writable_file(path)
            .with_context(|| format!("--json {}: cannot write there", path.display()))?;
    }
    let day_plan = if args.quick {
        None
    } else {
        Some(plan_default_day(&args.policy)?)
    };
    let events = if args.quick {
        args.events.min(5_000_000)
    } else {
        args.events
    };
    let page_rate = page_events(events)?;
    let gc_rate = runtime::bench::gc_object_visits_per_sec(if args.quick { 0.5 } else { 2.0 }, thread_cpu);
    println!("gc_object_visits_per_sec: {gc_rate:.0}");
    let day = match &day_plan {
        Some((spec, plans)) => default_day(spec, plans)?,
        None => Vec::new(),
    };
    if let Some(path) = &args.json {
        let v = serde_json::json!({
            "page_events_per_sec": page_rate,
            "gc_object_visits_per_sec": gc_rate,
            "default_day": day,
        });
        report::write_atomic(path, serde_json::to_string_pretty(&v)?)
            .with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::WorkPerLaunch;

    /// Each count is divided by the launches (reclaim's two scan counters added); a run without
    /// launches reports zeros, not infinities.
    #[test]
    fn work_per_launch_divides_each_count_by_the_launches() {
        let vm = kernel::VmStat {
            page_accesses: 1_000,
            pgfault: 100,
            pgmajfault: 40,
            pswpout: 30,
            pgscan_kswapd: 12,
            pgscan_direct: 8,
            ..Default::default()
        };
        let w = WorkPerLaunch::of(2.0, 4, 400, &vm);
        assert_eq!(
            w,
            WorkPerLaunch {
                cpu_us: 500_000.0,
                gc_object_visits: 100.0,
                page_accesses: 250.0,
                page_faults: 25.0,
                major_faults: 10.0,
                swap_outs: 7.5,
                pages_scanned: 5.0,
            }
        );
        let none = WorkPerLaunch::of(2.0, 0, 400, &vm);
        assert_eq!(none.cpu_us, 0.0);
        assert_eq!(none.page_accesses, 0.0);
    }
}
