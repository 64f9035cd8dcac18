//! Capture a live process's memory into a [`Corpus`] (Linux `/proc/<pid>/maps` + `/proc/<pid>/mem`).
//!
//! What is captured: every readable mapping that is anonymous (no backing inode: `[heap]`,
//! `[stack]`, `[anon:…]`, unnamed) — and, with `file_backed`, file mappings too — read page by
//! page; pages that are entirely zero are skipped (untouched anonymous memory reads as zeros, and
//! zram would store a zero page for free anyway). The kernel's special mappings (`[vvar]`,
//! `[vdso]`, `[vsyscall]`, …) are skipped. Regions that cannot be read (I/O error, guard pages)
//! are skipped.
//!
//! Reading `/proc/<pid>/mem` needs ptrace access to the process (same user with
//! `kernel.yama.ptrace_scope` 0, or root). Reading does not change the target, except that untouched
//! anonymous pages are read through the shared zero page.

use crate::corpus::Corpus;
use crate::PAGE_SIZE;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::FileExt;

/// Why a capture failed.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("no process with pid {0} (/proc/{0} does not exist)")]
    NoProcess(u32),
    #[error("permission denied reading {path}: run as root or as the process's user with ptrace access")]
    Permission { path: String },
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("/proc/{pid}/maps line {line}: cannot parse {text:?}")]
    BadMaps { pid: u32, line: usize, text: String },
}

/// One line of `/proc/<pid>/maps`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapsEntry {
    pub start: u64,
    pub end: u64,
    pub readable: bool,
    pub inode: u64,
    pub name: String,
}

impl MapsEntry {
    /// Anonymous memory (no file behind it).
    pub fn is_anonymous(&self) -> bool {
        self.inode == 0
            && (self.name.is_empty() || self.name.starts_with('[') || self.name.starts_with("/dev/zero"))
    }

    fn is_special(&self) -> bool {
        matches!(
            self.name.as_str(),
            "[vvar]" | "[vdso]" | "[vsyscall]" | "[vvar_vclock]" | "[uprobes]"
        )
    }
}

/// Parse one maps line.
pub fn parse_maps_line(l: &str) -> Option<MapsEntry> {
    let mut it = l.splitn(6, ' ');
    let range = it.next()?;
    let perms = it.next()?;
    let _off = it.next()?;
    let _dev = it.next()?;
    let inode = it.next()?.parse().ok()?;
    let name = it.next().unwrap_or("").trim().to_string();
    let (a, b) = range.split_once('-')?;
    Some(MapsEntry {
        start: u64::from_str_radix(a, 16).ok()?,
        end: u64::from_str_radix(b, 16).ok()?,
        readable: perms.starts_with('r'),
        inode,
        name,
    })
}

fn io_err(path: &str, e: std::io::Error, pid: u32) -> CaptureError {
    match e.kind() {
        std::io::ErrorKind::NotFound => CaptureError::NoProcess(pid),
        std::io::ErrorKind::PermissionDenied => CaptureError::Permission {
            path: path.to_string(),
        },
        _ => CaptureError::Io {
            path: path.to_string(),
            source: e,
        },
    }
}

/// Capture the non-zero pages of `pid` (anonymous; plus file-backed with `file_backed`), at most
/// `max_pages` of them (0 = no limit).
pub fn capture_pid(pid: u32, file_backed: bool, max_pages: usize) -> Result<Corpus, CaptureError> {
    if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
        return Err(CaptureError::NoProcess(pid));
    }
    let maps_path = format!("/proc/{pid}/maps");
    let maps = File::open(&maps_path).map_err(|e| io_err(&maps_path, e, pid))?;
    let mut entries = Vec::new();
    for (i, line) in BufReader::new(maps).lines().enumerate() {
        let line = line.map_err(|e| io_err(&maps_path, e, pid))?;
        let e = parse_maps_line(&line).ok_or_else(|| CaptureError::BadMaps {
            pid,
            line: i + 1,
            text: line.clone(),
        })?;
        entries.push(e);
    }
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string();
    let mem_path = format!("/proc/{pid}/mem");
    let mem = File::open(&mem_path).map_err(|e| io_err(&mem_path, e, pid))?;
    let mut corpus = Corpus::default();
    let mut buf = vec![0u8; 64 * PAGE_SIZE];
    let mut any_read = false;
    let mut perm_error = None;
    'outer: for e in entries
        .iter()
        .filter(|e| e.readable && !e.is_special() && (file_backed || e.is_anonymous()))
    {
        let mut addr = e.start;
        while addr < e.end {
            let n = ((e.end - addr) as usize).min(buf.len());
            match mem.read_at(&mut buf[..n], addr) {
                Ok(got) if got > 0 => {
                    any_read = true;
                    for (k, page) in buf[..got - got % PAGE_SIZE].chunks_exact(PAGE_SIZE).enumerate() {
                        if page.iter().all(|&b| b == 0) {
                            continue;
                        }
                        corpus.push(pid, &comm, &e.name, addr + (k * PAGE_SIZE) as u64, page);
                        if max_pages > 0 && corpus.len() >= max_pages {
                            break 'outer;
                        }
                    }
                    addr += (got - got % PAGE_SIZE).max(PAGE_SIZE) as u64;
                }
                Ok(_) => break,
                Err(err) if err.kind() == std::io::ErrorKind::PermissionDenied => {
                    perm_error = Some(err);
                    break 'outer;
                }
                // Unreadable region part (guard page, I/O error): skip a page.
                Err(_) => addr += PAGE_SIZE as u64,
            }
        }
    }
    if !any_read {
        if let Some(_e) = perm_error {
            return Err(CaptureError::Permission { path: mem_path });
        }
    }
    Ok(corpus)
}

/// Java source of the demo workload used by tests (`testdata/Alloc.java`).
pub const DEMO_JAVA: &str = include_str!("../testdata/Alloc.java");

/// For tests and demos: start `java` on [`DEMO_JAVA`] building about `heap_mb` MiB of objects,
/// wait until it is ready, capture its anonymous memory, and kill it (also on error).
pub fn capture_demo_jvm(heap_mb: u32) -> Result<Corpus, String> {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    struct KillOnDrop(std::process::Child);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let dir = std::env::temp_dir().join(format!("hotlaunch-jvm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let src = dir.join("Alloc.java");
    std::fs::write(&src, DEMO_JAVA).map_err(|e| format!("{}: {e}", src.display()))?;
    let child = Command::new("java")
        .args(["-Xmx1g", "-XX:+UseSerialGC", "-XX:-UsePerfData"])
        .arg(&src)
        .arg(heap_mb.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start java: {e}"))?;
    let mut child = KillOnDrop(child);
    let stdout = child.0.stdout.take().ok_or("no stdout from java")?;
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .map_err(|e| format!("reading java output: {e}"))?;
    if !line.starts_with("READY") {
        return Err(format!("java did not become ready (said {line:?})"));
    }
    let corpus = capture_pid(child.0.id(), false, 0).map_err(|e| e.to_string());
    let _ = std::fs::remove_dir_all(&dir);
    corpus
}
