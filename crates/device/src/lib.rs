//! Device profiles: the hardware and kernel configuration a simulation runs on.
//!
//! A [`DeviceProfile`] describes one phone as the rest of the stack sees it (DESIGN.md §3.2):
//!
//! * **memory** — DRAM size and bandwidth, the frames the kernel never hands to the buddy
//!   allocator (kernel image, firmware carve-outs) and the memory held by the always-running
//!   Android system (system_server, SurfaceFlinger, persistent and native services), which the
//!   framework allocates as unkillable processes;
//! * **kernel** — the `vm.*` sysctls and block settings that shape reclaim: `min_free_kbytes`,
//!   `watermark_scale_factor`, `swappiness`, `page-cluster`, pageblock order, file readahead;
//! * **cpu** — how much slower than the host the phone's cores are (a multiplier on the
//!   host-measured cost table), core count and power, and the fixed costs of kernel paths
//!   (page faults, reclaim scanning and unmapping, zygote process creation);
//! * **flash** — per-I/O latency, bandwidth and energy of the UFS/eMMC device that serves swap,
//!   zram writeback and file reads;
//! * **swap** — zram size and codec, flash swap size.
//!
//! Profiles are TOML files; five built-in ones reproduce the phones of the papers (Pixel 3 —
//! Fleet, Pixel XL — Marvin, Pixel 7 — Ariadne, OnePlus 9 Pro — MemSaver, Nexus 10 — ISMM'15),
//! each value commented with its source. Every table rejects unknown keys, and every value is
//! range-checked after parsing ([`DeviceProfile::validate`]); errors are one line naming the
//! file, the line, the dotted key and what was expected (DESIGN.md §2 principle 5).
//!
//! Units are in the field names: `_mb` sizes are MiB (2^20 bytes), `_kb`/`_kbytes` KiB,
//! `_mb_s` rates are 10^6 bytes per second (as `tinymembench`, FIO and spec sheets report
//! them), `_ns`/`_us`/`_ms` times, `_mw` milliwatts, `_nj_per_kb` nanojoules per KiB.

pub mod display;
mod error;
pub mod release;
pub mod tomlerr;
mod validate;

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use display::DisplayProfile;
pub use error::DeviceError;
pub use release::{LmkdMode, Release, StockFeatures};

/// Bytes per page (4 KiB).
pub const PAGE_SIZE: u64 = 4096;
/// Pages per MiB.
pub const PAGES_PER_MB: u64 = (1 << 20) / PAGE_SIZE;

/// A device: DRAM, kernel parameters, CPU, flash and swap configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceProfile {
    /// Short identifier, e.g. `pixel3` (the built-in profiles use their built-in name).
    /// Must be non-empty.
    pub name: String,
    /// One-sentence human description: the phone, SoC and which paper's setup it reproduces.
    pub description: String,
    /// DRAM and the memory permanently taken from it.
    pub memory: MemoryProfile,
    /// Kernel (`vm.*` sysctl and block-layer) parameters.
    pub kernel: KernelProfile,
    /// CPU speed, power and the fixed costs of kernel paths.
    pub cpu: CpuProfile,
    /// The flash storage device (swap partition, zram backing device, file reads).
    pub flash: FlashProfile,
    /// Swap configuration: zram and flash swap.
    pub swap: SwapProfile,
    /// Android framework settings of the device's OS release (optional section).
    #[serde(default)]
    pub android: AndroidProfile,
    /// The panel (optional section; absent: apps hold no window buffers or GPU cache sized by
    /// the screen, so nothing is released at `TRIM_MEMORY_UI_HIDDEN`; see [`display`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display: Option<DisplayProfile>,
}

/// `[android]`: the Android and kernel release the device runs, and explicit overrides of the
/// stock features that release decides (see [`release`] and [`DeviceProfile::stock`]). Every key
/// is optional; an explicit feature key wins over the release's default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct AndroidProfile {
    /// Android release, e.g. `"10"`, `"7.1"`, `"4.2"` (one of [`release::ANDROID_RELEASES`];
    /// a patch level such as `"7.1.1"` is accepted and ignored). Absent: the current stack
    /// (PSI lmkd, ART CC multipliers) with compaction and LOW_MEM off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub android_release: Option<String>,
    /// Linux kernel release, e.g. `"4.9"`, `"3.18"` (one of [`release::KERNEL_RELEASES`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_release: Option<String>,
    /// Low-memory killer: `"psi"` (userspace lmkd with PSI monitors), `"minfree"` (userspace
    /// lmkd, `ro.lmk.use_minfree_levels`) or `"lowmemorykiller"` (the in-kernel driver).
    /// Default: decided by the releases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lmkd: Option<String>,
    /// Whether userspace lmkd kills (`lmkd_kills = false`: lmkd runs and receives its pressure
    /// events but its handler returns at once, as in the Fleet artifact's `src/common/lmkd.c`,
    /// whose `mp_event_common` starts with `if (disable_kill) return;`). The in-kernel
    /// `lowmemorykiller` driver, ActivityManager's cached-process limit and the kernel OOM killer
    /// are not lmkd and still kill. Default: true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lmkd_kills: Option<bool>,
    /// ActivityManager's cached-app compaction (`CachedAppOptimizer`, `use_compaction`): when an
    /// app becomes cached, system_server pages its memory out with `process_madvise(PAGEOUT)`
    /// ("full" compaction). This is how zram fills on 12 GB phones without memory pressure
    /// (Ariadne §3: "some vendors, such as Google, aggressively free up memory by proactively
    /// and periodically compressing data"). Default: on for Android ≥ 13.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_compaction: Option<bool>,
    /// lmkd's LOW_MEM kill (kill a cached app, adj ≥ `ro.lmk.lowmem_min_oom_score` = 701, when
    /// free memory is below the high watermark at a PSI event). Present in recent lmkd
    /// (REFERENCE.md); absent from the Android 10–12 lmkd, whose last PSI rule is
    /// LOW_FILECACHE_AFTER_THRASHING. Default: on for Android ≥ 13 (estimate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lmkd_low_mem: Option<bool>,
    /// `ro.config.per_app_memcg`: each app in its own memory cgroup, so reclaim scans every
    /// app's LRU lists in proportion to their sizes; `false`: every app is charged to the root
    /// memcg and reclaim takes the oldest pages of one global LRU (the app used longest ago
    /// first). AOSP's default is `ro.config.low_ram` (libprocessgroup `UsePerAppMemcg`, lmkd
    /// `per_app_memcg`), i.e. false on every phone here that is not a low-RAM device. Default
    /// when absent: true (hotlaunch's per-app lruvecs; profiles set the AOSP value explicitly).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_app_memcg: Option<bool>,
    /// With one global LRU (`per_app_memcg = false`): order the node's lists by page age, as
    /// Linux's single node lruvec does (every page stamped when put at a list head; reclaim takes
    /// the oldest tail across all processes). `false` (default): the older approximation that
    /// reclaims whole processes in `oom_score_adj` order (oldest cached app first, system
    /// processes last). No effect with per-app memcgs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_lru_by_page_age: Option<bool>,
    /// ART's heap growth multiplier while an app is in the foreground (`-XX:ForegroundHeap
    /// GrowthMultiplier`, `dalvik.vm.foreground-heap-growth-multiplier`); at least 1. Default:
    /// 3.0 on Android ≥ 8 (2.0 + 1.0 extra with CC), 2.0 on Android 5–7, 1.0 before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreground_heap_growth_multiplier: Option<f64>,
    /// ART's heap growth multiplier in the background; at least 1. Default 1.0 (ART).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background_heap_growth_multiplier: Option<f64>,
    /// Apps release their window buffers and trim HWUI's GPU cache when their UI is hidden
    /// (`TRIM_MEMORY_UI_HIDDEN`, [`display`]); `false` keeps every foreground page in the
    /// background. Default: false (on, it breaks Fleet Fig. 11c's capacity: see the apps README,
    /// "UI memory released in the background").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui_trim: Option<bool>,
}

/// `[memory]`: DRAM and the memory permanently taken from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryProfile {
    /// Installed DRAM in MiB (marketing size: 4 GB = 4096). No default; > 0.
    /// Source: each paper's platform description.
    pub dram_mb: u64,
    /// DRAM copy bandwidth in 10^6 B/s, used for page copies (migration, compaction,
    /// uncompressed zram pages). No default; > 0. Source: Fleet §3.2 measured 9182.7 MB/s on
    /// the Pixel 3 with tinymembench; other devices are estimates.
    pub dram_bandwidth_mb_s: f64,
    /// MiB of DRAM never given to the buddy allocator: kernel image, reserved memory
    /// carve-outs (modem, DSP, GPU/video firmware, TrustZone), `memmap`. DRAM minus this is
    /// `MemTotal` in `/proc/meminfo`. No default; may be 0. Source: estimates from `MemTotal`.
    pub kernel_reserve_mb: u64,
    /// MiB held by the always-running Android system (system_server, SystemUI, SurfaceFlinger,
    /// persistent apps and native services); the framework allocates it as unkillable
    /// processes. No default; may be 0. `kernel_reserve_mb + system_reserve_mb` must be less
    /// than `dram_mb`. Source: estimates.
    pub system_reserve_mb: u64,
    /// MiB of `system_reserve_mb` that are file pages of the system processes (code and
    /// resources of system_server, SystemUI, persistent apps, native daemons: `.oat`, `.art`,
    /// `.so`, `.apk` mappings): clean, on the file LRU and reclaimable like any file page; the
    /// rest stays unevictable. Default 0; at most `system_reserve_mb`. Source: estimates per
    /// device.
    #[serde(default)]
    pub system_file_mb: u64,
}

/// `[kernel]`: Linux memory-management parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelProfile {
    /// `vm.min_free_kbytes` in KiB: the min watermark. Optional: when absent the kernel's
    /// boot-time formula is used (see [`DeviceProfile::min_free_kbytes`]). When given:
    /// 1 ..= a quarter of managed memory. Source: REFERENCE.md gives 27386 for Pixel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_free_kbytes: Option<u64>,
    /// `vm.watermark_scale_factor` in units of 1/10000 of managed memory: the distance
    /// min→low→high. Default 10 (Linux `mm/page_alloc.c`); range 1..=3000 (Linux sysctl limit).
    #[serde(default = "default_watermark_scale_factor")]
    pub watermark_scale_factor: u32,
    /// `vm.swappiness`: relative cost of reclaiming anon vs file pages. Range 0..=200.
    /// Linux default 60; Pixel `init.hardware.rc` sets 100. No default.
    pub swappiness: u32,
    /// `vm.page-cluster`: log2 of the swap readahead window in pages. Range 0..=10. Linux
    /// default 3 (8 pages); Android sets 0 when swapping to zram. No default.
    pub page_cluster: u32,
    /// Pageblock order (migrate-type granularity of the buddy allocator): 9 (2 MiB, kernels
    /// with hugetlb on 4 KiB pages) or 10 (4 MiB, `MAX_ORDER - 1` without hugetlb).
    /// No default.
    pub pageblock_order: u32,
    /// File readahead window in KiB (`/sys/block/*/queue/read_ahead_kb`). Default 128
    /// (Linux `VM_READAHEAD_PAGES`); range 0..=16384; 0 disables readahead.
    #[serde(default = "default_read_ahead_kb")]
    pub read_ahead_kb: u32,
    /// Android's `vm.min_free_order_shift` (Android common kernels 3.x, `mm/page_alloc.c`): in
    /// the high-order watermark check the required reserve is shifted right by this per order
    /// below the request. Default 1 (Android's default, upstream's fixed `min >>= 1`); range
    /// 0..=10. ISMM'15 §6.1 runs its stock baseline (VAN) with 2.
    #[serde(default = "default_min_free_order_shift")]
    pub min_free_order_shift: u32,
}

fn default_watermark_scale_factor() -> u32 {
    10
}

fn default_min_free_order_shift() -> u32 {
    1
}

fn default_read_ahead_kb() -> u32 {
    128
}

/// `[cpu]`: CPU speed relative to the host, power, and fixed kernel-path costs.
///
/// The `_ns`/`_ms` costs here are already **device** times (they are not multiplied by
/// `speed_factor`); `speed_factor` applies to costs measured on the host, such as the
/// compression cost table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuProfile {
    /// Multiplier on host-measured CPU costs: 1.0 = as fast as the host, 3.0 = three times
    /// slower. Range 0.05..=100. No default. Source: estimates; REFERENCE.md gives LZ4 zram
    /// reads of 9.4 µs per 4 KiB on a Cortex-A72 vs 1.7 µs on an x86 desktop (5.5×).
    pub speed_factor: f64,
    /// Number of CPU cores. Range 1..=256. No default. Source: paper / SoC spec.
    pub cores: u32,
    /// Power of one busy core in mW, for CPU energy (energy = busy time × this). Range
    /// (0, 20000]. No default. Source: estimates.
    pub active_power_mw: f64,
    /// Cost of a minor page fault (first touch / mapping an already-resident page) in ns.
    /// Range 1..=10^8. No default. Source: ~1 µs on x86 (REFERENCE.md) × speed factor.
    pub minor_fault_ns: u64,
    /// Kernel path of a swap-in (major fault) in ns, excluding flash I/O and decompression:
    /// swap-cache lookup, page allocation, rmap, PTE install, LRU insertion. Range 1..=10^8.
    /// No default. Source: estimates.
    pub major_fault_overhead_ns: u64,
    /// Reclaim cost per page scanned on an LRU list (isolate, referenced check, putback) in
    /// ns. Range 1..=10^8. No default. Source: estimates.
    pub reclaim_scan_ns: u64,
    /// Reclaim cost per page actually reclaimed (rmap walk, unmap, TLB flush, swap-entry
    /// install) in ns, excluding compression and I/O. Range 1..=10^8. No default.
    /// Source: estimates.
    pub reclaim_unmap_ns: u64,
    /// Range zap (`madvise(MADV_DONTNEED)`-like drop of a named range of one address space:
    /// page-table walk over the range, PTE clear, page freed) per present page, in ns: no LRU
    /// isolation and no rmap walk. Range 1..=10^8. No default. Source: host measurement
    /// (`scripts/zap_bench.c`: one MADV_DONTNEED of 256 MiB of resident anon pages: ~130 ns on the host) ×
    /// speed factor.
    pub zap_page_ns: u64,
    /// Fixed cost of one range zap in ns (page-table walk start, TLB flush of the range,
    /// freeing the gathered pages, LRU drain), excluding the syscall entry. Range 1..=10^8. No
    /// default. Source: host measurement (`scripts/zap_bench.c`: MADV_DONTNEED of one resident
    /// page minus one of an unmapped page and minus `zap_page_ns`: ~1.0 µs on the host) × speed
    /// factor.
    pub zap_range_ns: u64,
    /// Zygote fork + specialize time in ms, on the critical path of a cold launch.
    /// Range (0, 100000]. No default. Source: estimates.
    pub process_create_ms: f64,
}

/// `[flash]`: the UFS/eMMC device. The time of one I/O is
/// `latency + bytes / bandwidth` ([`DeviceProfile::flash_read_ns`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlashProfile {
    /// Fixed cost of one read I/O in µs (command, FTL lookup, NAND page read), at queue depth
    /// 1. Range (0, 10^6]. No default.
    pub read_latency_us: f64,
    /// Fixed cost of one write I/O in µs. Range (0, 10^6]. No default.
    pub write_latency_us: f64,
    /// Sequential read bandwidth in 10^6 B/s. Range (0, 10^6]. No default. With
    /// `read_latency_us` it must reproduce the measured random 4 KiB rate: Fleet §3.2 measured
    /// the Pixel 3 swap partition at 20.3 MB/s, which is an *effective random 4 KiB swap read
    /// rate* (latency-dominated), not the sequential bandwidth.
    pub read_bandwidth_mb_s: f64,
    /// Sequential write bandwidth in 10^6 B/s. Range (0, 10^6]. No default.
    pub write_bandwidth_mb_s: f64,
    /// Energy per KiB read, in nJ. Range (0, 10^7]. No default. Source: estimates.
    pub read_energy_nj_per_kb: f64,
    /// Energy per KiB written, in nJ. Range (0, 10^7]. No default. Source: estimates.
    pub write_energy_nj_per_kb: f64,
}

/// `[swap]`: zram and flash swap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwapProfile {
    /// zram `disksize` in MiB (uncompressed capacity); 0 = no zram. At most 4 × `dram_mb`.
    /// No default.
    pub zram_disksize_mb: u64,
    /// zram `comp_algorithm`: `"lzo-rle"`, `"lzo"`, `"lz4"` or `"zstd"`. Required even when
    /// zram is off (it is the codec a scenario gets if it enables zram). No default.
    pub zram_codec: ZramCodec,
    /// Flash swap space in MiB; 0 = none. Without zram it is a swap partition/file; with zram
    /// it is the space available to zram writeback (the backing device). No default.
    pub flash_swap_mb: u64,
}

/// A zram compression algorithm (`/sys/block/zram0/comp_algorithm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ZramCodec {
    /// `lzo-rle` (Linux ≥ 5.1 default).
    #[serde(rename = "lzo-rle")]
    LzoRle,
    /// `lzo` (older kernels' default).
    #[serde(rename = "lzo")]
    Lzo,
    /// `lz4` (Pixel devices).
    #[serde(rename = "lz4")]
    Lz4,
    /// `zstd`.
    #[serde(rename = "zstd")]
    Zstd,
}

impl ZramCodec {
    /// The kernel's name for the codec.
    pub fn as_str(self) -> &'static str {
        match self {
            ZramCodec::LzoRle => "lzo-rle",
            ZramCodec::Lzo => "lzo",
            ZramCodec::Lz4 => "lz4",
            ZramCodec::Zstd => "zstd",
        }
    }
}

impl std::fmt::Display for ZramCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The profile's schema: each table and its keys (key names are unique across tables).
const SCHEMA: &[(&str, &[&str])] = &[
    (
        "",
        &[
            "name",
            "description",
            "memory",
            "kernel",
            "cpu",
            "flash",
            "swap",
            "android",
            "display",
        ],
    ),
    (
        "memory",
        &[
            "dram_mb",
            "dram_bandwidth_mb_s",
            "kernel_reserve_mb",
            "system_reserve_mb",
            "system_file_mb",
        ],
    ),
    (
        "kernel",
        &[
            "min_free_kbytes",
            "watermark_scale_factor",
            "swappiness",
            "page_cluster",
            "pageblock_order",
            "read_ahead_kb",
            "min_free_order_shift",
        ],
    ),
    (
        "cpu",
        &[
            "speed_factor",
            "cores",
            "active_power_mw",
            "minor_fault_ns",
            "major_fault_overhead_ns",
            "reclaim_scan_ns",
            "reclaim_unmap_ns",
            "zap_page_ns",
            "zap_range_ns",
            "process_create_ms",
        ],
    ),
    (
        "flash",
        &[
            "read_latency_us",
            "write_latency_us",
            "read_bandwidth_mb_s",
            "write_bandwidth_mb_s",
            "read_energy_nj_per_kb",
            "write_energy_nj_per_kb",
        ],
    ),
    ("swap", &["zram_disksize_mb", "zram_codec", "flash_swap_mb"]),
    (
        "android",
        &[
            "android_release",
            "kernel_release",
            "lmkd",
            "app_compaction",
            "lmkd_low_mem",
            "per_app_memcg",
            "node_lru_by_page_age",
            "foreground_heap_growth_multiplier",
            "background_heap_growth_multiplier",
            "ui_trim",
        ],
    ),
    ("display", &["width_px", "height_px"]),
];

/// The table a schema key belongs to (`""` = top level).
pub(crate) fn schema_section_of(key: &str) -> Option<&'static str> {
    SCHEMA
        .iter()
        .find(|(_, keys)| keys.contains(&key))
        .map(|(s, _)| *s)
}

/// Built-in profiles: name and TOML text.
const BUILTINS: &[(&str, &str)] = &[
    ("pixel3", include_str!("../profiles/pixel3.toml")),
    ("pixelxl", include_str!("../profiles/pixelxl.toml")),
    ("pixel7", include_str!("../profiles/pixel7.toml")),
    ("oneplus9pro", include_str!("../profiles/oneplus9pro.toml")),
    ("nexus10", include_str!("../profiles/nexus10.toml")),
    ("pixel8pro", include_str!("../profiles/pixel8pro.toml")),
    ("a03core", include_str!("../profiles/a03core.toml")),
];

const BUILTIN_NAMES: &[&str] = &[
    "pixel3",
    "pixelxl",
    "pixel7",
    "oneplus9pro",
    "nexus10",
    "pixel8pro",
    "a03core",
];

/// Names of the built-in profiles, in a fixed order.
pub fn builtin_names() -> &'static [&'static str] {
    BUILTIN_NAMES
}

/// The TOML text of a built-in profile (e.g. to show or copy it), if `name` is one.
pub fn builtin_toml(name: &str) -> Option<&'static str> {
    BUILTINS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

impl DeviceProfile {
    /// Parses and validates a profile from TOML text. `origin` names the source (a file name)
    /// in error messages.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Self, DeviceError> {
        let profile: DeviceProfile =
            toml::from_str(text).map_err(|e| error::from_toml(origin, text, e.message(), e.span()))?;
        profile.validate_in(text, origin)?;
        Ok(profile)
    }

    /// Reads, parses and validates a profile file. Errors name the path as given.
    pub fn load(path: &Path) -> Result<Self, DeviceError> {
        let origin = path.display().to_string();
        let text = engine::fsio::read_capped_string(path, engine::fsio::FileKind::Device).map_err(|e| {
            DeviceError::Io {
                origin: error::one_line(&origin),
                message: error::one_line(&e.to_string()),
            }
        })?;
        Self::from_toml_str(&text, &origin)
    }

    /// A built-in profile by name (`pixel3`, `pixelxl`, `pixel7`, `oneplus9pro`, `nexus10`).
    /// The error lists the known names.
    pub fn builtin(name: &str) -> Result<Self, DeviceError> {
        match builtin_toml(name) {
            Some(text) => Self::from_toml_str(text, &format!("{name}.toml")),
            None => Err(DeviceError::UnknownBuiltin {
                name: error::one_line(name),
                known: BUILTIN_NAMES.join(", "),
                io: None,
            }),
        }
    }

    /// A built-in profile if `name_or_path` is a built-in name, otherwise the file at that
    /// path. When it is neither, the error lists the built-in names and the file error.
    pub fn resolve(name_or_path: &str) -> Result<Self, DeviceError> {
        if builtin_toml(name_or_path).is_some() {
            return Self::builtin(name_or_path);
        }
        let path = Path::new(name_or_path);
        match engine::fsio::read_capped_string(path, engine::fsio::FileKind::Device) {
            Ok(text) => Self::from_toml_str(&text, name_or_path),
            Err(e) => Err(DeviceError::UnknownBuiltin {
                name: error::one_line(name_or_path),
                known: BUILTIN_NAMES.join(", "),
                io: Some(error::one_line(&e.to_string())),
            }),
        }
    }

    /// DRAM size in 4 KiB pages.
    pub fn total_pages(&self) -> u64 {
        self.memory.dram_mb * PAGES_PER_MB
    }

    /// Pages managed by the buddy allocator: DRAM minus the kernel reserve (`MemTotal`).
    pub fn managed_pages(&self) -> u64 {
        self.memory.dram_mb.saturating_sub(self.memory.kernel_reserve_mb) * PAGES_PER_MB
    }

    /// Pages of the system reserve that are reclaimable file pages (`memory.system_file_mb`).
    pub fn system_file_pages(&self) -> u64 {
        self.memory.system_file_mb * PAGES_PER_MB
    }

    /// Pages held by the always-running Android system (`memory.system_reserve_mb`).
    pub fn system_reserve_pages(&self) -> u64 {
        self.memory.system_reserve_mb * PAGES_PER_MB
    }

    /// The min watermark in KiB: `kernel.min_free_kbytes` if set, else Linux's boot-time
    /// formula (`calculate_min_free_kbytes` in `mm/page_alloc.c`):
    /// `int_sqrt(lowmem_kbytes * 16)` clamped to [128, 262144], with lowmem = managed memory.
    pub fn min_free_kbytes(&self) -> u64 {
        self.kernel.min_free_kbytes.unwrap_or_else(|| {
            let lowmem_kbytes = self.managed_pages() * (PAGE_SIZE / 1024);
            int_sqrt(lowmem_kbytes.saturating_mul(16)).clamp(128, 262_144)
        })
    }

    /// Time to copy one 4 KiB page at DRAM bandwidth, in ns (at least 1).
    pub fn page_copy_ns(&self) -> u64 {
        transfer_ns(PAGE_SIZE, self.memory.dram_bandwidth_mb_s).max(1)
    }

    /// Service time of one flash read of `bytes`, in ns: latency + bytes / bandwidth.
    pub fn flash_read_ns(&self, bytes: u64) -> u64 {
        us_to_ns(self.flash.read_latency_us) + transfer_ns(bytes, self.flash.read_bandwidth_mb_s)
    }

    /// Service time of one flash write of `bytes`, in ns: latency + bytes / bandwidth.
    pub fn flash_write_ns(&self, bytes: u64) -> u64 {
        us_to_ns(self.flash.write_latency_us) + transfer_ns(bytes, self.flash.write_bandwidth_mb_s)
    }

    /// A host-measured CPU cost scaled to this device (`× cpu.speed_factor`), in ns.
    pub fn scale_host_ns(&self, host_ns: u64) -> u64 {
        (host_ns as f64 * self.cpu.speed_factor).round() as u64
    }

    /// Energy in nJ of one core busy for `busy_ns` (`cpu.active_power_mw`).
    pub fn cpu_energy_nj(&self, busy_ns: u64) -> f64 {
        // mW × ns = 1e-12 J = 1e-3 nJ.
        busy_ns as f64 * self.cpu.active_power_mw * 1e-3
    }

    /// Energy in nJ of reading `bytes` from flash.
    pub fn flash_read_energy_nj(&self, bytes: u64) -> f64 {
        bytes as f64 / 1024.0 * self.flash.read_energy_nj_per_kb
    }

    /// Energy in nJ of writing `bytes` to flash.
    pub fn flash_write_energy_nj(&self, bytes: u64) -> f64 {
        bytes as f64 / 1024.0 * self.flash.write_energy_nj_per_kb
    }
}

/// ns to move `bytes` at `mb_s` × 10^6 B/s (rounded to nearest).
fn transfer_ns(bytes: u64, mb_s: f64) -> u64 {
    // bytes / (mb_s * 1e6) s = bytes * 1000 / mb_s ns.
    (bytes as f64 * 1000.0 / mb_s).round() as u64
}

fn us_to_ns(us: f64) -> u64 {
    (us * 1000.0).round() as u64
}

/// Integer square root (floor), as the kernel's `int_sqrt`.
fn int_sqrt(x: u64) -> u64 {
    let fits = |r: u64| r.checked_mul(r).is_some_and(|sq| sq <= x);
    let mut r = ((x as f64).sqrt() as u64).min(u32::MAX as u64);
    while !fits(r) {
        r -= 1;
    }
    while r < u32::MAX as u64 && fits(r + 1) {
        r += 1;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_sqrt_matches_floor() {
        for x in [0u64, 1, 2, 3, 4, 15, 16, 17, 99, 100, 101, u64::MAX / 3, u64::MAX] {
            let r = int_sqrt(x);
            assert!(r.checked_mul(r).is_some_and(|v| v <= x), "{x}");
            let next_sq = (r + 1).checked_mul(r + 1);
            assert!(next_sq.is_none() || next_sq > Some(x), "{x}");
        }
    }

    #[test]
    fn schema_matches_builtins() {
        // Every schema key appears in the pixel7 profile (the one that sets min_free_kbytes).
        let text = builtin_toml("pixel7").unwrap();
        for (section, keys) in SCHEMA {
            for key in *keys {
                // The feature overrides are optional; pixel7 leaves them to its release.
                if *section == "android" && !key.ends_with("_release") {
                    continue;
                }
                if section.is_empty()
                    && ["memory", "kernel", "cpu", "flash", "swap", "android", "display"].contains(key)
                {
                    assert!(text.contains(&format!("[{key}]")), "{key}");
                } else {
                    assert!(
                        error::find_key_line(text, section, key).is_some(),
                        "{section}.{key}"
                    );
                }
            }
        }
    }
}
