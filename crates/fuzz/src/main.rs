//! `hotlaunch-fuzz <target|all> --seconds N --seed S`: fuzz hotlaunch's parsers (see the crate
//! docs). Exits 1 if any input crashed, hung or aborted; the inputs are saved under
//! `--crash-dir/<target>/`.

use clap::Parser;
use hotlaunch_fuzz::supervise::{self, Config, MEMORY_CAP};
use hotlaunch_fuzz::{Target, ALL};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "hotlaunch-fuzz",
    about = "Fuzz hotlaunch's parsers (scenario, device, app, hprof, corpus, trace)"
)]
struct Args {
    /// A target (scenario, device, app, hprof, corpus, trace) or "all".
    target: String,
    /// Wall-clock seconds per target.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Stop each target after this many inputs.
    #[arg(long, default_value_t = u64::MAX)]
    inputs: u64,
    /// Inputs using more than this many milliseconds of CPU time are reported as hangs.
    #[arg(long, default_value_t = 2000)]
    cap_ms: u64,
    /// A worker silent this long is killed (its input a hang).
    #[arg(long, default_value_t = 10_000)]
    kill_after_ms: u64,
    #[arg(long, default_value = "fuzz/crashes")]
    crash_dir: PathBuf,
    /// Internal: run as a worker.
    #[arg(long, hide = true)]
    worker: bool,
    #[arg(long, hide = true, default_value_t = 0)]
    from: u64,
    #[arg(long, hide = true, default_value_t = u64::MAX)]
    to: u64,
}

fn main() -> ExitCode {
    let a = Args::parse();
    let targets: Vec<Target> = if a.target == "all" {
        ALL.to_vec()
    } else if let Some(t) = Target::from_name(&a.target) {
        vec![t]
    } else {
        let names: Vec<_> = ALL.iter().map(|t| t.name()).collect();
        eprintln!(
            "hotlaunch-fuzz: unknown target {:?}; expected one of {} or all",
            a.target,
            names.join(", ")
        );
        return ExitCode::from(2);
    };
    if !(a.seconds >= 0.0 && a.seconds.is_finite()) {
        eprintln!(
            "hotlaunch-fuzz: --seconds {}: expected a finite number >= 0",
            a.seconds
        );
        return ExitCode::from(2);
    }
    let cap = Duration::from_millis(a.cap_ms);
    if a.worker {
        supervise::no_core_dumps();
        if let Err(e) = supervise::limit_memory(MEMORY_CAP) {
            eprintln!("hotlaunch-fuzz worker: {e}");
            return ExitCode::from(2);
        }
        let budget = Duration::from_secs_f64(a.seconds);
        return match supervise::worker(targets[0], a.seed, a.from, a.to, budget, cap) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("hotlaunch-fuzz worker: {e}");
                ExitCode::from(2)
            }
        };
    }
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("hotlaunch-fuzz: cannot find own executable: {e}");
            return ExitCode::from(2);
        }
    };
    let cfg = Config {
        seed: a.seed,
        seconds: a.seconds,
        max_inputs: a.inputs,
        cap,
        kill_after: Duration::from_millis(a.kill_after_ms.max(a.cap_ms)),
        crash_dir: a.crash_dir,
    };
    println!(
        "seed {}, memory cap {} MiB, time cap {} ms CPU per input",
        cfg.seed,
        MEMORY_CAP >> 20,
        a.cap_ms
    );
    let mut bad = 0;
    for t in targets {
        match supervise::supervise(&exe, t, &cfg) {
            Ok(s) => {
                println!("{}", s.line());
                bad += s.findings.len();
            }
            Err(e) => {
                eprintln!("hotlaunch-fuzz: {}: {e}", t.name());
                return ExitCode::from(2);
            }
        }
    }
    if bad > 0 {
        println!("{bad} finding(s); inputs saved under {}", cfg.crash_dir.display());
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
