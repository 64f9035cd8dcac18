//! The `hotlaunch` command line.
//!
//! Each subcommand lives in its own module under `cmd/` with its `Args` and `run`.

mod cmd;
mod thp;

#[global_allocator]
static ALLOC: thp::HugeAlloc = thp::HugeAlloc;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "hotlaunch",
    version,
    about = "Deterministic simulator of mobile memory management"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario (default: the built-in `default` scenario) and print its figures.
    Run(cmd::run::Args),
    /// Run a scenario under every policy with several seeds: means, 95% intervals, the dashboard.
    Compare(cmd::compare::Args),
    /// Run the papers' observations as checks: paper figure vs simulated, PASS or GAP.
    Reproduce(cmd::reproduce::Args),
    /// List the built-in devices, apps, scenarios and policies.
    List,
    /// Benchmark the simulator's hot paths and print rates.
    Bench(cmd::bench::Args),
    /// Summarise a heap dump (HPROF): objects, bytes, classes, roots, size and depth histograms.
    Inspect(cmd::inspect::Args),
    /// Capture a process's non-zero anonymous pages into a corpus file.
    Capture(cmd::capture::Args),
    /// Measure the codec cost table on this host.
    Calibrate(cmd::calibrate::Args),
    /// Compression ratio and cost per codec and chunk size on a corpus (Ariadne Fig. 6).
    CompressStudy(cmd::compress_study::Args),
    /// Compare the zram model's mm_stat with a real zram device on a corpus.
    ZramCheck(cmd::zram_check::Args),
    /// Run a grid of scenarios × policies × parameter values × seeds (resumable); one table row per point.
    Sweep(cmd::sweep::Args),
    /// Replay a page-access trace (libCacheSim oracleGeneral or CSV) through the kernel model.
    Replay(cmd::replay::Args),
    /// Import Ariadne's swap traces as a content corpus and a replayable access sequence.
    ImportAriadne(cmd::import_ariadne::Args),
}

/// Glibc's malloc raises its mmap threshold to the largest block freed so far (up to 32 MiB), so
/// after the first big free, every multi-megabyte vector the simulator grows and drops (heap
/// metadata, GC scratch, blueprint temporaries) is carved from the arena and its pages stay
/// resident after `free`. A fixed threshold gives the big ones back to the kernel (and a growing
/// vector's untouched capacity is never resident): 4 MiB took 85 MB off the default day's peak
/// RSS; 1 MiB takes 42 MB more (748 -> 706 MB) for +0.2 s system time (256 KiB: 4 MB more).
/// Results cannot depend on it (issue 14).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune_malloc() {
    extern "C" {
        fn mallopt(param: i32, value: i32) -> i32;
    }
    const M_MMAP_THRESHOLD: i32 = -3;
    // SAFETY: mallopt only changes an allocator setting; it is called before any thread starts.
    unsafe {
        mallopt(M_MMAP_THRESHOLD, 1 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_malloc() {}

fn main() {
    thp::configure();
    tune_malloc();
    let cli = Cli::parse();
    let result = match cli.command {
        None => cmd::run::run_default(),
        Some(Command::Run(a)) => cmd::run::run(a),
        Some(Command::Compare(a)) => cmd::compare::run(a),
        Some(Command::Reproduce(a)) => cmd::reproduce::run(a),
        Some(Command::List) => cmd::reproduce::list(),
        Some(Command::Bench(a)) => cmd::bench::run(a),
        Some(Command::Inspect(a)) => cmd::inspect::run(a),
        Some(Command::Capture(a)) => cmd::capture::run(a),
        Some(Command::Calibrate(a)) => cmd::calibrate::run(a),
        Some(Command::CompressStudy(a)) => cmd::compress_study::run(a),
        Some(Command::ZramCheck(a)) => cmd::zram_check::run(a),
        Some(Command::Sweep(a)) => cmd::sweep::run(a),
        Some(Command::Replay(a)) => cmd::replay::run(a),
        Some(Command::ImportAriadne(a)) => cmd::import_ariadne::run(a),
    };
    if let Err(e) = result {
        // One line, no backtrace: errors name the file, the place and what was expected.
        // Nested errors already include their source in their own message: print each cause
        // only if the text so far does not hold it yet.
        eprintln!("error: {}", hotlaunch::error_line(&e));
        std::process::exit(1);
    }
}
