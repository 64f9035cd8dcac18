//! A zram device's configuration ([`ZramConfig`]) and its sysfs statistics ([`MmStat`],
//! [`BdStat`]).

use super::*;

/// Configuration of a zram device.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ZramConfig {
    /// `disksize`: uncompressed capacity in bytes (rounded down to pages).
    pub disksize_bytes: u64,
    /// `comp_algorithm`.
    pub codec: Codec,
    /// `mem_limit` in bytes; 0 = unlimited. A store is refused (`NoMemory`) once the pool
    /// reaches it.
    pub mem_limit_bytes: u64,
    /// `CONFIG_ZSMALLOC_CHAIN_SIZE` (max pages per zspage); 8 on current kernels, 4 before 6.3.
    pub zspage_max_pages: usize,
    /// How loads prove identity (see [`content::memo`]).
    pub verify: Verify,
    /// Write compressed chunks on writeback instead of decompressed pages (not Linux).
    pub writeback_compressed: bool,
    /// Host ns to copy or fill one 4 KiB page (huge and same-filled pages); default 150 ns,
    /// roughly a 4 KiB memcpy at ~27 GB/s on this host class.
    pub copy_ns_per_page: f64,
}

impl ZramConfig {
    pub fn new(disksize_bytes: u64, codec: Codec) -> Self {
        Self {
            disksize_bytes,
            codec,
            mem_limit_bytes: 0,
            zspage_max_pages: 8,
            verify: Verify::Always,
            writeback_compressed: false,
            copy_ns_per_page: 150.0,
        }
    }

    /// From a device profile: `swap.zram_disksize_mb` and `swap.zram_codec`.
    pub fn from_profile(d: &device::DeviceProfile) -> Self {
        let codec: Codec = d
            .swap
            .zram_codec
            .as_str()
            .parse()
            .expect("device codecs are zram codecs");
        Self::new(d.swap.zram_disksize_mb * 1024 * 1024, codec)
    }
}

/// `/sys/block/zramN/mm_stat` (bytes except the page counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MmStat {
    pub orig_data_size: u64,
    pub compr_data_size: u64,
    pub mem_used_total: u64,
    pub mem_limit: u64,
    pub mem_used_max: u64,
    pub same_pages: u64,
    pub pages_compacted: u64,
    pub huge_pages: u64,
    pub huge_pages_since: u64,
}

impl MmStat {
    /// Parse the kernel's `mm_stat` line (9 or more numbers; extra fields ignored).
    pub fn parse(line: &str) -> Option<Self> {
        let v: Vec<u64> = line
            .split_whitespace()
            .map(|t| t.parse().ok())
            .collect::<Option<_>>()?;
        if v.len() < 8 {
            return None;
        }
        Some(Self {
            orig_data_size: v[0],
            compr_data_size: v[1],
            mem_used_total: v[2],
            mem_limit: v[3],
            mem_used_max: v[4],
            same_pages: v[5],
            pages_compacted: v[6],
            huge_pages: v[7],
            huge_pages_since: v.get(8).copied().unwrap_or(0),
        })
    }
}

/// `/sys/block/zramN/bd_stat` (4 KiB units).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BdStat {
    /// Blocks currently on the backing device.
    pub bd_count: u64,
    /// Blocks read back (cumulative).
    pub bd_reads: u64,
    /// Blocks written (cumulative).
    pub bd_writes: u64,
}
