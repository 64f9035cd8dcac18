//! Hostile, huge and odd inputs (issue 13): each gives a one-line error or finishes, quickly and
//! within bounded memory. Each case runs the binary under a 5 s wall-clock limit.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

struct Out {
    code: i32,
    stderr: String,
    /// CPU time the process had used at the last poll before it exited.
    cpu: Duration,
    /// Peak resident set (VmHWM) at the last poll before it exited, bytes.
    peak_rss: u64,
}

fn hotlaunch(args: &[&str]) -> Out {
    hotlaunch_within(args, Duration::from_secs(5))
}

/// Runs hotlaunch, failing the test if it uses more than `cpu_limit` of CPU time.
fn hotlaunch_within(args: &[&str], cpu_limit: Duration) -> Out {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hotlaunch"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run hotlaunch");
    // Hang guard on the child's CPU time, not wall time: the test machines are shared, and a
    // loaded host must not turn a quick refusal into a failure (wall time only as a backstop).
    let t = Instant::now();
    let (mut cpu, mut peak_rss) = (Duration::ZERO, 0);
    loop {
        cpu = child_cpu(child.id()).unwrap_or(cpu);
        peak_rss = child_peak_rss(child.id()).unwrap_or(peak_rss);
        if let Some(status) = child.try_wait().expect("wait") {
            let out = child.wait_with_output().expect("output");
            return Out {
                code: status.code().unwrap_or(-1),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                cpu,
                peak_rss,
            };
        }
        if cpu > cpu_limit || t.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            panic!(
                "hotlaunch {args:?} used more than {cpu_limit:?} of CPU ({cpu:?}, {:?} wall)",
                t.elapsed()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// User + system CPU time of a running process (`/proc/<pid>/stat` fields 14 and 15, in clock
/// ticks of 1/100 s); `None` once it is gone or off Linux.
fn child_cpu(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may contain spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Peak resident set of a running process (`VmHWM` in `/proc/<pid>/status`), bytes.
fn child_peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb = line.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    Some(kb * 1024)
}

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hotlaunch-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Exactly one line on stderr, starting with "error:", containing every `needle`.
fn one_line_error(o: &Out, needles: &[&str]) {
    assert_eq!(o.code, 1, "stderr: {}", o.stderr);
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected: {}", o.stderr);
    assert!(lines[0].starts_with("error: "), "{}", o.stderr);
    for n in needles {
        assert!(lines[0].contains(n), "{n:?} missing from: {}", o.stderr);
    }
}

fn fifo(d: &Path) -> PathBuf {
    let p = d.join("fifo");
    let ok = Command::new("mkfifo").arg(&p).status().is_ok_and(|s| s.success());
    assert!(ok, "mkfifo");
    p
}

fn scenario(d: &Path, device: &str, apps: &str, events: &str) -> PathBuf {
    let p = d.join("s.toml");
    std::fs::write(
        &p,
        format!(
            "name = \"s\"\ndevice = \"{device}\"\npolicies = [\"android\"]\n[apps]\nnames = [{apps}]\n\
             [workload]\nkind = \"script\"\n{events}"
        ),
    )
    .unwrap();
    p
}

const LAUNCH: &str = "[[workload.events]]\nlaunch = \"Twitter\"\nuse_s = 1\n";

fn app_profile(d: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    let text = apps::builtin_toml("Twitter").unwrap().to_string();
    let p = d.join("app.toml");
    std::fs::write(&p, edit(text)).unwrap();
    p
}

#[test]
fn special_files_are_refused_for_every_input_path() {
    let d = dir("special");
    let f = fifo(&d);
    let f = f.to_str().unwrap();
    for bad in ["/dev/zero", f] {
        one_line_error(&hotlaunch(&["run", bad]), &["not a regular file"]);
        one_line_error(&hotlaunch(&["inspect", bad]), &["not a regular file"]);
        one_line_error(&hotlaunch(&["compress-study", bad]), &["not a regular file"]);
        one_line_error(
            &hotlaunch(&["compress-study", "/nonexistent", "--costs", bad]),
            &["not a regular file"],
        );
        let s = scenario(&d, bad, "\"Twitter\"", LAUNCH);
        one_line_error(
            &hotlaunch(&["run", s.to_str().unwrap()]),
            &["key device", "not a regular file"],
        );
        let s = scenario(&d, "pixel3", &format!("{bad:?}"), LAUNCH);
        one_line_error(
            &hotlaunch(&["run", s.to_str().unwrap()]),
            &["apps.names[0]", "not a regular file"],
        );
        let app = app_profile(&d, |t| format!("{t}\n[java]\nheap = {bad:?}\n"));
        let s = scenario(&d, "pixel3", &format!("{:?}", app.to_str().unwrap()), LAUNCH);
        one_line_error(&hotlaunch(&["run", s.to_str().unwrap()]), &["not a regular file"]);
    }
    one_line_error(&hotlaunch(&["run", d.to_str().unwrap()]), &["directory"]);
}

#[test]
fn oversized_files_are_refused_before_reading() {
    let d = dir("big");
    let p = d.join("big.toml");
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(64 << 20).unwrap(); // sparse: no disk used
    one_line_error(&hotlaunch(&["run", p.to_str().unwrap()]), &["limit"]);
    let s = scenario(&d, "big.toml", "\"Twitter\"", LAUNCH);
    one_line_error(
        &hotlaunch(&["run", s.to_str().unwrap()]),
        &["key device", "limit"],
    );
}

#[test]
fn huge_footprints_are_refused_before_building() {
    let d = dir("footprint");
    let app = app_profile(&d, |t| {
        t.lines()
            .map(|l| {
                if l.starts_with("anon_mb_start") {
                    "anon_mb_start = 60000".to_string()
                } else if l.starts_with("anon_mb_steady") {
                    "anon_mb_steady = 60000".to_string()
                } else if l.starts_with("file_launch_share") {
                    "file_launch_share = 0.0".to_string()
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    });
    let s = scenario(&d, "pixel3", &format!("{:?}", app.to_str().unwrap()), LAUNCH);
    one_line_error(&hotlaunch(&["run", s.to_str().unwrap()]), &["growth limit"]);
}

#[test]
fn endless_runs_and_huge_allocations_are_refused() {
    let d = dir("endless");
    let waits: String = (0..25).map(|_| "[[workload.events]]\nwait_s = 1e9\n").collect();
    let s = scenario(&d, "pixel3", "\"Twitter\"", &format!("{LAUNCH}{waits}"));
    one_line_error(
        &hotlaunch(&["run", s.to_str().unwrap()]),
        &["key workload", "days"],
    );
    let s = scenario(
        &d,
        "pixel3",
        "\"Twitter\"",
        &format!("{LAUNCH}[[workload.events]]\nwait_s = 1e9\n"),
    );
    one_line_error(
        &hotlaunch(&["run", s.to_str().unwrap()]),
        &["key workload", "days"],
    );
    let s = scenario(
        &d,
        "pixel3",
        "\"Twitter\"",
        &format!("{LAUNCH}[[workload.events]]\nalloc_mb = 1000000\n"),
    );
    one_line_error(
        &hotlaunch(&["run", s.to_str().unwrap()]),
        &["line 12", "workload.events[1].alloc_mb", "DRAM"],
    );
}

#[test]
fn misspelt_names_are_reported_as_written() {
    let d = dir("names");
    let s = scenario(&d, "pixel9", "\"Twitter\"", LAUNCH);
    let o = hotlaunch(&["run", s.to_str().unwrap()]);
    one_line_error(&o, &["key device", "pixel9"]);
    let joined = d.join("pixel9");
    assert!(
        !o.stderr.contains(joined.to_str().unwrap()),
        "joined path shown: {}",
        o.stderr
    );
    let s = scenario(&d, "pixel3", "\"Twiter\"", LAUNCH);
    let o = hotlaunch(&["run", s.to_str().unwrap()]);
    one_line_error(&o, &["apps.names[0]", "app profile Twiter:"]);
    let app = app_profile(&d, |t| format!("{t}\n[java]\nheap = \"fleet-4096\"\n"));
    let s = scenario(&d, "pixel3", &format!("{:?}", app.to_str().unwrap()), LAUNCH);
    one_line_error(
        &hotlaunch(&["run", s.to_str().unwrap()]),
        &["java.heap", "fleet-512", "\"fleet-4096\""],
    );
}

#[test]
fn nested_errors_are_printed_once() {
    let d = dir("once");
    let s = scenario(&d, "pixel3", "\"nope.toml\"", LAUNCH);
    let o = hotlaunch(&["run", s.to_str().unwrap()]);
    one_line_error(&o, &["nope.toml"]);
    assert_eq!(o.stderr.matches("No such file").count(), 1, "{}", o.stderr);
    let o = hotlaunch(&["compress-study", "/nonexistent/x.hlc"]);
    one_line_error(&o, &["x.hlc"]);
    assert_eq!(o.stderr.matches("No such file").count(), 1, "{}", o.stderr);
}

#[test]
fn bad_output_paths_fail_before_the_run() {
    let d = dir("outputs");
    let file = d.join("file");
    std::fs::write(&file, "x").unwrap();
    // A directory below a regular file can never be created: the run must not start.
    let bad = file.join("out.json");
    let o = hotlaunch(&["run", "fleet-fig2-twitter", "--json", bad.to_str().unwrap()]);
    one_line_error(&o, &["--json", "cannot write there"]);
    let o2 = hotlaunch(&["run", "fleet-fig2-twitter", "--report", bad.to_str().unwrap()]);
    one_line_error(&o2, &["--report", "cannot write there"]);
    assert!(
        o.cpu + o2.cpu < Duration::from_secs(3),
        "the run started: {:?} CPU",
        o.cpu + o2.cpu
    );
    let o = hotlaunch(&["run", "fleet-fig2-twitter", "--json", d.to_str().unwrap()]);
    one_line_error(&o, &["--json", "is a directory"]);
}

#[test]
fn zram_check_without_a_device_fails() {
    let d = dir("zram");
    let mut c = content::Corpus::default();
    c.push(1, "p", "m", 0, &[7u8; 4096]);
    let path = d.join("c.hlc");
    c.write(&path).unwrap();
    let o = hotlaunch(&["zram-check", path.to_str().unwrap(), "--device", "/dev/null"]);
    one_line_error(&o, &["nothing compared"]);
}

#[test]
fn streamed_inputs_refuse_special_files() {
    let d = dir("streamed");
    let f = fifo(&d);
    let f = f.to_str().unwrap();
    for bad in ["/dev/zero", f] {
        for fmt in ["oracle", "csv"] {
            one_line_error(
                &hotlaunch(&["replay", bad, "--memory", "64", "--format", fmt]),
                &[bad, "not a regular file"],
            );
        }
        let seq = d.join("seq.csv");
        let seq = seq.to_str().unwrap();
        one_line_error(
            &hotlaunch(&["import-ariadne", bad, "--sequence", seq]),
            &[bad, "not a regular file"],
        );
        one_line_error(&hotlaunch(&["sweep", bad]), &[bad, "not a regular file"]);
    }
    // A directory whose trace files are special files.
    let seq = d.join("seq.csv");
    let seq = seq.to_str().unwrap();
    let a = d.join("ariadne");
    std::fs::create_dir_all(&a).unwrap();
    std::os::unix::fs::symlink("/dev/zero", a.join("swapout_trace.txt")).unwrap();
    one_line_error(
        &hotlaunch(&["import-ariadne", a.to_str().unwrap(), "--sequence", seq]),
        &["swapout_trace.txt", "not a regular file"],
    );
}

#[test]
fn a_thousand_declared_apps_run_in_bounded_time_and_memory() {
    // The documented maximum; only one is launched, so only one heap and access model is built.
    let d = dir("thousand");
    let names = vec!["\"Twitter\""; 1000].join(", ");
    let s = scenario(&d, "pixel3", &names, LAUNCH);
    let o = hotlaunch_within(&["run", s.to_str().unwrap()], Duration::from_secs(20));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.peak_rss < 2 << 30, "peak RSS {} MiB", o.peak_rss >> 20);
}
