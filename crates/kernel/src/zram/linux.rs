//! Drive a real Linux zram device with corpus pages and compare its `mm_stat` with the model.
//!
//! Used by `hotlaunch zram-check` and the `zram_vs_linux` test. Procedure (REFERENCE.md): the
//! device must be unused (`disksize` 0); set `comp_algorithm`, then `disksize`; write the pages as
//! whole 4 KiB blocks with `O_DIRECT`, in order; `fsync`; read `mm_stat`; finally write `1` to
//! `reset` — done by a guard, so the device is reset even on error or panic.

use super::{MmStat, Zram, ZramConfig};
use crate::swap::{BackendEnv, FlashDevice, SwapBackend, SwapOutPage};
use content::{Codec, ContentId, ContentStore, CostTable, PAGE_SIZE};
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Why the kernel side could not run.
#[derive(Debug, thiserror::Error)]
pub enum ZramDeviceError {
    #[error("no zram device at {0}")]
    Missing(String),
    #[error("{0} is in use (disksize is not 0); reset it or pick another device")]
    Busy(String),
    #[error("{0} does not offer {1} (comp_algorithm: {2})")]
    NoCodec(String, Codec, String),
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("cannot parse {path}: {text:?}")]
    Parse { path: String, text: String },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ZramDeviceError + '_ {
    move |source| ZramDeviceError::Io {
        path: path.display().to_string(),
        source,
    }
}

fn sysfs_write(path: &Path, v: &str) -> Result<(), ZramDeviceError> {
    let mut f = OpenOptions::new().write(true).open(path).map_err(io(path))?;
    f.write_all(v.as_bytes()).map_err(io(path))
}

fn sysfs_read(path: &Path) -> Result<String, ZramDeviceError> {
    std::fs::read_to_string(path).map_err(io(path))
}

struct ResetGuard(PathBuf);

impl Drop for ResetGuard {
    fn drop(&mut self) {
        let _ = sysfs_write(&self.0.join("reset"), "1");
    }
}

/// The sysfs directory of a device node (`/dev/zram0` → `/sys/block/zram0`).
pub fn sysfs_dir(device: &Path) -> Result<PathBuf, ZramDeviceError> {
    let name = device.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let dir = PathBuf::from("/sys/block").join(name);
    if !device.exists() || !name.starts_with("zram") || !dir.exists() {
        return Err(ZramDeviceError::Missing(device.display().to_string()));
    }
    Ok(dir)
}

/// Whether `device` exists and is unused.
pub fn device_free(device: &Path) -> Result<(), ZramDeviceError> {
    let dir = sysfs_dir(device)?;
    let p = dir.join("disksize");
    let ds = sysfs_read(&p)?;
    if ds.trim() != "0" {
        return Err(ZramDeviceError::Busy(device.display().to_string()));
    }
    Ok(())
}

/// Write `pages` (each 4096 bytes) to the real device with `codec` and return its `mm_stat`.
pub fn kernel_mm_stat(device: &Path, codec: Codec, pages: &[&[u8]]) -> Result<MmStat, ZramDeviceError> {
    device_free(device)?;
    let dir = sysfs_dir(device)?;
    let algs = sysfs_read(&dir.join("comp_algorithm"))?;
    if !algs
        .split_whitespace()
        .any(|a| a.trim_matches(|c| c == '[' || c == ']') == codec.name())
    {
        return Err(ZramDeviceError::NoCodec(
            device.display().to_string(),
            codec,
            algs.trim().to_string(),
        ));
    }
    let guard = ResetGuard(dir.clone());
    sysfs_write(&dir.join("comp_algorithm"), codec.name())?;
    let disksize = (pages.len() as u64 + 256) * PAGE_SIZE as u64;
    sysfs_write(&dir.join("disksize"), &disksize.to_string())?;
    {
        let f = OpenOptions::new()
            .write(true)
            .custom_flags(libc_o_direct())
            .open(device)
            .map_err(io(device))?;
        // O_DIRECT needs an aligned buffer: carve a 4 KiB-aligned window out of a larger Vec.
        const BATCH: usize = 64;
        let mut raw = vec![0u8; (BATCH + 1) * PAGE_SIZE];
        let off = raw.as_ptr().align_offset(PAGE_SIZE);
        let buf = &mut raw[off..off + BATCH * PAGE_SIZE];
        for (b, group) in pages.chunks(BATCH).enumerate() {
            for (k, p) in group.iter().enumerate() {
                buf[k * PAGE_SIZE..(k + 1) * PAGE_SIZE].copy_from_slice(p);
            }
            let n = group.len() * PAGE_SIZE;
            f.write_all_at(&buf[..n], (b * BATCH * PAGE_SIZE) as u64)
                .map_err(io(device))?;
        }
        f.sync_all().map_err(io(device))?;
    }
    let p = dir.join("mm_stat");
    let text = sysfs_read(&p)?;
    let stat = MmStat::parse(&text).ok_or(ZramDeviceError::Parse {
        path: p.display().to_string(),
        text,
    })?;
    drop(guard);
    Ok(stat)
}

fn libc_o_direct() -> i32 {
    // O_DIRECT: 0o40000 on x86/x86-64 and most architectures; 0o200000 on arm/aarch64.
    if cfg!(any(target_arch = "aarch64", target_arch = "arm")) {
        0o200000
    } else {
        0o40000
    }
}

/// The model's `mm_stat` for the same pages stored in order (batches of 32, Linux chunking).
pub fn model_mm_stat(store: &ContentStore, ids: &[ContentId], codec: Codec) -> MmStat {
    let disksize = (ids.len() as u64 + 256) * PAGE_SIZE as u64;
    let mut z = Zram::new(ZramConfig::new(disksize, codec), CostTable::builtin());
    let mut flash = FlashDevice::new(100_000, 200_000, 2000.0, 1000.0);
    let mut handles = Vec::with_capacity(ids.len());
    for (i, group) in ids.chunks(32).enumerate() {
        let batch: Vec<SwapOutPage> = group
            .iter()
            .enumerate()
            .map(|(k, &c)| SwapOutPage {
                page: (i * 32 + k) as u32,
                pid: 0,
                content: c,
                tag: 0,
            })
            .collect();
        let mut env = BackendEnv {
            now: 0,
            contents: store,
            cpu_factor: 1.0,
            flash: &mut flash,
        };
        z.store(&mut env, &batch, &mut handles)
            .expect("disksize sized to the pages");
    }
    z.mm_stat()
}
