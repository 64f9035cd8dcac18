//! Worker and supervisor. The worker runs inputs `from..to` of a target in-process, writing
//! `S <i> <accepted so far>` before input `i` (so the supervisor knows which input a dead worker
//! was on), `C <i> <message>` for a panic or contract breach, `H <i> <ms>` for an input over the
//! time cap (CPU time of the worker process, so a loaded host does not turn slow wall-clock
//! moments into hangs), and `D <i> <accepted>` when it stops (time budget or count reached) with `i` the
//! next input. The supervisor rebuilds any reported input from (seed, index) and saves it.

use crate::mutate;
use crate::targets::Target;
use std::io::{BufRead, BufReader, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Findings of one kind saved (and printed) per target; later ones are only counted.
pub const SAVE_PER_KIND: usize = 20;

/// Address-space limit of a worker.
pub const MEMORY_CAP: u64 = 2 << 30;

/// How a run is bounded and where crashes go.
#[derive(Debug, Clone)]
pub struct Config {
    pub seed: u64,
    /// Wall-clock budget per target.
    pub seconds: f64,
    /// Stop after this many inputs per target.
    pub max_inputs: u64,
    /// Inputs using more CPU time than this are hangs.
    pub cap: Duration,
    /// A worker silent for this long is killed and its input recorded as a hang.
    pub kill_after: Duration,
    pub crash_dir: PathBuf,
}

/// What happened to one finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FindingKind {
    Crash,
    Hang,
    Abort,
}

#[derive(Debug, Clone)]
pub struct Finding {
    pub kind: FindingKind,
    pub index: u64,
    pub detail: String,
    pub file: PathBuf,
}

/// Per-target result.
#[derive(Debug, Clone)]
pub struct Stats {
    pub target: Target,
    pub inputs: u64,
    /// Inputs the parser accepted (the rest were rejected with an error or crashed).
    pub accepted: u64,
    pub elapsed: Duration,
    pub findings: Vec<Finding>,
}

impl Stats {
    pub fn count(&self, k: FindingKind) -> usize {
        self.findings.iter().filter(|f| f.kind == k).count()
    }
    pub fn line(&self) -> String {
        let s = self.elapsed.as_secs_f64();
        format!(
            "{:<9} inputs {:>10}  {:>8.0}/s  accepted {:>5.1}%  crashes {}  hangs {}  aborts {}",
            self.target.name(),
            self.inputs,
            self.inputs as f64 / s.max(1e-9),
            100.0 * self.accepted as f64 / (self.inputs as f64).max(1.0),
            self.count(FindingKind::Crash),
            self.count(FindingKind::Hang),
            self.count(FindingKind::Abort)
        )
    }
}

/// Input `index` of target `t` for run seed `seed`.
pub fn input(t: Target, seeds: &[Vec<u8>], seed: u64, index: u64) -> Vec<u8> {
    let mut b = mutate::input(
        seeds,
        t.kind(),
        seed ^ (t as u64).wrapping_mul(0x9E37_79B9),
        index,
    );
    t.fix_up(&mut b, index);
    b
}

/// Limit this process's address space (the worker calls it on itself).
pub fn limit_memory(bytes: u64) -> Result<(), String> {
    let lim = libc::rlimit {
        rlim_cur: bytes as libc::rlim_t,
        rlim_max: bytes as libc::rlim_t,
    };
    // SAFETY: setrlimit reads a valid, initialised struct.
    let rc = unsafe { libc::setrlimit(libc::RLIMIT_AS, &lim) };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!(
            "setrlimit(RLIMIT_AS): {}",
            std::io::Error::last_os_error()
        ))
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    let m = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic".into());
    format!("panic: {}", m.replace('\n', " "))
}

/// CPU time this process has used (all its threads).
pub fn process_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into a valid timespec; CLOCK_PROCESS_CPUTIME_ID always exists
    // on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec.max(0) as u64, ts.tv_nsec.clamp(0, 999_999_999) as u32)
}

/// Make this process's crashes quick: no core dump (a dump of a worker that hit the memory cap
/// can take seconds, long enough for the supervisor to call the abort a hang).
pub fn no_core_dumps() {
    let zero = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain syscalls on this process with valid arguments; failure only means a dump.
    unsafe {
        libc::setrlimit(libc::RLIMIT_CORE, &zero);
        // Also covers a core_pattern that pipes to a helper (RLIMIT_CORE does not stop those).
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

/// Run one input, catching panics: whether it was accepted, or a crash description.
pub fn run_one(t: Target, b: &[u8]) -> Result<bool, String> {
    match catch_unwind(AssertUnwindSafe(|| t.run(b))) {
        Ok(r) => r,
        Err(p) => Err(panic_message(&*p)),
    }
}

/// The worker loop (in the child). Returns when the budget or the count is used up.
pub fn worker(
    t: Target,
    seed: u64,
    from: u64,
    to: u64,
    budget: Duration,
    cap: Duration,
) -> std::io::Result<()> {
    std::panic::set_hook(Box::new(|_| {}));
    let seeds = t.seeds();
    let out = std::io::stdout();
    let mut out = out.lock();
    let selftest = self_test();
    let start = Instant::now();
    let mut i = from;
    let mut accepted = 0u64;
    while i < to && start.elapsed() < budget {
        let b = input(t, &seeds, seed, i);
        writeln!(out, "S {i} {accepted}")?;
        out.flush()?;
        let t0 = process_cpu_time();
        let r = match &selftest {
            Some((what, at)) if *at == i => catch_unwind(|| misbehave(what))
                .map(|()| false)
                .map_err(|p| panic_message(&*p)),
            _ => run_one(t, &b),
        };
        accepted += u64::from(r == Ok(true));
        let took = process_cpu_time().saturating_sub(t0);
        if let Err(e) = &r {
            writeln!(out, "C {i} {e}")?;
        }
        if took > cap {
            writeln!(out, "H {i} {}", took.as_millis())?;
        }
        i += 1;
    }
    writeln!(out, "D {i} {accepted}")?;
    out.flush()
}

/// `HOTLAUNCH_FUZZ_SELFTEST=<panic|oom|hang|exit>:<index>` makes the worker misbehave on that
/// input instead of running it, so tests can check the supervisor catches each failure mode.
fn self_test() -> Option<(String, u64)> {
    let v = std::env::var("HOTLAUNCH_FUZZ_SELFTEST").ok()?;
    let (what, at) = v.split_once(':')?;
    Some((what.to_string(), at.parse().ok()?))
}

fn misbehave(what: &str) {
    match what {
        "panic" => panic!("self-test panic"),
        "oom" => {
            // More than the address-space cap: allocation fails and Rust aborts.
            let v = vec![1u8; (MEMORY_CAP * 2) as usize];
            std::hint::black_box(&v);
        }
        "hang" => std::thread::sleep(Duration::from_secs(3600)),
        _ => std::process::exit(3),
    }
}

fn save(dir: &Path, t: Target, kind: &str, seed: u64, index: u64, bytes: &[u8]) -> PathBuf {
    let dir = dir.join(t.name());
    let file = dir.join(format!("{kind}-seed{seed}-{index}.bin"));
    if let Err(e) = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&file, bytes)) {
        eprintln!("hotlaunch-fuzz: could not save {}: {e}", file.display());
    }
    file
}

/// Fuzz one target through worker processes of `exe`, restarting after an abort or hang.
pub fn supervise(exe: &Path, t: Target, cfg: &Config) -> std::io::Result<Stats> {
    let seeds = t.seeds();
    let start = Instant::now();
    let budget = Duration::from_secs_f64(cfg.seconds);
    let mut findings = Vec::new();
    let mut next = 0u64;
    let mut accepted = 0u64;
    let record = |kind: FindingKind, index: u64, detail: String, findings: &mut Vec<Finding>| {
        let tag = match kind {
            FindingKind::Crash => "crash",
            FindingKind::Hang => "hang",
            FindingKind::Abort => "abort",
        };
        // Keep the first few of each kind: one bug usually fails thousands of inputs.
        let seen = findings.iter().filter(|f| f.kind == kind).count();
        let file = if seen < SAVE_PER_KIND {
            let bytes = input(t, &seeds, cfg.seed, index);
            let file = save(&cfg.crash_dir, t, tag, cfg.seed, index, &bytes);
            eprintln!(
                "{} {tag} at input {index}: {detail} -> {}",
                t.name(),
                file.display()
            );
            file
        } else {
            PathBuf::new()
        };
        findings.push(Finding {
            kind,
            index,
            detail,
            file,
        });
    };
    while next < cfg.max_inputs && start.elapsed() < budget {
        let left = budget.saturating_sub(start.elapsed());
        let mut child = Command::new(exe)
            .args(["--worker", t.name(), "--seed", &cfg.seed.to_string()])
            .args(["--from", &next.to_string(), "--to", &cfg.max_inputs.to_string()])
            .args(["--seconds", &left.as_secs_f64().to_string()])
            .args(["--cap-ms", &cfg.cap.as_millis().to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut current: Option<u64> = None;
        // Inputs this worker accepted so far (kept if it dies).
        let mut worker_accepted = 0u64;
        let mut done = false;
        loop {
            match rx.recv_timeout(cfg.kill_after) {
                Ok(line) => {
                    let mut parts = line.splitn(3, ' ');
                    let (tag, idx, rest) = (parts.next(), parts.next(), parts.next().unwrap_or(""));
                    let idx: u64 = idx.and_then(|s| s.parse().ok()).unwrap_or(0);
                    match tag {
                        Some("S") => {
                            current = Some(idx);
                            worker_accepted = rest.parse().unwrap_or(0);
                        }
                        Some("C") => record(FindingKind::Crash, idx, rest.to_string(), &mut findings),
                        Some("H") => record(FindingKind::Hang, idx, format!("took {rest} ms"), &mut findings),
                        Some("D") => {
                            next = idx;
                            worker_accepted = rest.parse().unwrap_or(0);
                            done = true;
                        }
                        _ => {}
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    // Our own child, by its handle.
                    let _ = child.kill();
                    let i = current.unwrap_or(next);
                    record(
                        FindingKind::Hang,
                        i,
                        format!("no progress for {:?}; killed", cfg.kill_after),
                        &mut findings,
                    );
                    next = i + 1;
                    break;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        let status = child.wait()?;
        accepted += worker_accepted;
        let _ = reader.join();
        if done {
            break;
        }
        let Some(i) = current else {
            return Err(std::io::Error::other(format!(
                "worker for {} exited ({status}) before running an input",
                t.name()
            )));
        };
        // Killed for a hang (already recorded), or died on input `i`.
        if findings.last().map(|f| (f.index, &f.kind)) != Some((i, &FindingKind::Hang)) {
            record(
                FindingKind::Abort,
                i,
                format!("worker died: {status}"),
                &mut findings,
            );
            next = i + 1;
        }
    }
    Ok(Stats {
        target: t,
        inputs: next,
        accepted,
        elapsed: start.elapsed(),
        findings,
    })
}
