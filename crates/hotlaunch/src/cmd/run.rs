//! `hotlaunch run`: run a scenario and print its figures.
//!
//! Until the Android framework layer lands, this runs the kernel-level page scenario
//! (`workload::pagelevel`): apps as anonymous and file page sets switched by a simulated user.

use anyhow::Context;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;
use workload::pagelevel::{PageReport, PageScenario, SwapSetup};

#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// Device profile: a built-in name (pixel3, pixelxl, pixel7, oneplus9pro, nexus10) or a TOML file.
    #[arg(long, default_value = "pixel3")]
    pub device: String,
    /// Master seed of every random stream.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Number of app switches (default: the scenario's).
    #[arg(long)]
    pub switches: Option<u32>,
    /// Swap devices: none, flash, zram or zram+flash (default: the device's flash swap).
    #[arg(long)]
    pub swap: Option<String>,
    /// zram disksize in MB (default: the device profile's `swap.zram_disksize_mb`).
    #[arg(long)]
    pub zram_mb: Option<u64>,
    /// Write the full results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// A progress bar that appears only after one second, and only on a terminal.
pub struct LazyProgress {
    start: Instant,
    bar: Option<indicatif::ProgressBar>,
    enabled: bool,
}

impl LazyProgress {
    pub fn new() -> Self {
        Self { start: Instant::now(), bar: None, enabled: std::io::stderr().is_terminal() }
    }

    pub fn update(&mut self, done: u64, total: u64) {
        if !self.enabled {
            return;
        }
        if self.bar.is_none() && self.start.elapsed().as_secs_f64() > 1.0 {
            let bar = indicatif::ProgressBar::new(total);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} {msg}")
                    .expect("template")
                    .progress_chars("=> "),
            );
            self.bar = Some(bar);
        }
        if let Some(b) = &self.bar {
            b.set_position(done);
        }
    }

    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl Default for LazyProgress {
    fn default() -> Self {
        Self::new()
    }
}

pub fn scenario_from(args: &Args) -> anyhow::Result<PageScenario> {
    let device = device::DeviceProfile::resolve(&args.device)?;
    let mut sc = PageScenario::default_on(device, args.seed);
    if let Some(n) = args.switches {
        anyhow::ensure!(n > 0, "--switches: expected a positive number of switches, got 0");
        sc.switches = n;
    }
    if let Some(swap) = &args.swap {
        sc.swap = SwapSetup::parse(swap, &sc.device, args.zram_mb).map_err(anyhow::Error::msg)?;
    }
    Ok(sc)
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let args = if args.device.is_empty() { Args { device: "pixel3".into(), seed: 1, ..args } } else { args };
    let sc = scenario_from(&args)?;
    let mut progress = LazyProgress::new();
    let report = sc.run(|d, t| progress.update(d, t)).map_err(anyhow::Error::msg)?;
    progress.finish();
    print_summary(&report);
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

fn print_summary(r: &PageReport) {
    println!("hotlaunch — {} on {} (seed {}, swap {:?})", r.scenario, r.device, r.seed, r.swap);
    println!("  simulated time            {:>10.1} s", r.simulated_seconds);
    println!("  switches (hot / cold)     {:>10} ({} / {})", r.switches, r.hot_switches, r.cold_starts);
    println!("  alive apps (max / mean)   {:>10} / {:.1}", r.max_alive_apps, r.mean_alive_apps);
    println!("  kernel OOM kills          {:>10}", r.oom_kills);
    let h = &r.hot_switch_stall_ms;
    println!("  hot-switch stall ms       p50 {:.2}  p90 {:.2}  p99 {:.2}  mean {:.2}", h.p50, h.p90, h.p99, h.mean);
    let c = &r.cold_start_stall_ms;
    println!("  cold-start stall ms       p50 {:.2}  p90 {:.2}  p99 {:.2}  mean {:.2}", c.p50, c.p90, c.p99, c.mean);
    println!("  major faults              {:>10}", r.vmstat.pgmajfault);
    println!("  pswpin / pswpout          {:>10} / {}", r.vmstat.pswpin, r.vmstat.pswpout);
    println!("  flash MB read / written   {:>10.1} / {:.1}", r.flash_bytes_read as f64 / 1e6, r.flash_bytes_written as f64 / 1e6);
    println!("  PSI some / full ms        {:>10.1} / {:.1}", r.psi_some_ms, r.psi_full_ms);
    let cpu: Vec<String> = r.cpu_ms_by_category.iter().filter(|(_, v)| *v > 0.0).map(|(k, v)| format!("{k} {v:.0}")).collect();
    println!("  CPU ms by category        {}", cpu.join(", "));
    let ui: Vec<String> = r.unusable_index_end.iter().map(|v| format!("{v:.2}")).collect();
    println!("  unusable index o0..o10    {}", ui.join(" "));
    println!(
        "  integrity                 {} pages swapped in, {} checksum mismatches",
        r.integrity.pages_swapped_in, r.integrity.checksum_mismatches
    );
}
