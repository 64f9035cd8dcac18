//! Ariadne (Liang et al., HPCA 2025): hotness-aware, size-adaptive compressed swap with
//! pre-decompression and compressed writeback. Spec: `../shared/specs/ariadne.md`.
//!
//! What is modelled, mechanism by mechanism (paper names):
//! - **HotnessOrg** (§4.2, [`kernel`]'s `HotnessReclaim`): every anonymous page of an app is in
//!   one of three lists, hot / warm / cold (a dense per-page class array in [`State`]). The
//!   pages a launch touches become the app's hot list (at most `hot_list_pages`, in access
//!   order, artifact `hot_list_length`); the launch's pages past that cap become warm (touched,
//!   §4.2 promotion; artifact `compression_scale_identify.py` scale 1); the previous hot list
//!   becomes warm; everything else an app creates is cold; a cold page found accessed by reclaim moves to warm (the stock
//!   inactive→active promotion). Reclaim visits background apps in app-LRU order (least recently
//!   in the foreground first), other processes next, the foreground app last and only when
//!   nothing else is left; within a pass it takes cold pages only, then warm, then (AL only)
//!   hot: the allowed class (`tier`) rises when a pass at a low priority (≤ 2, i.e. a scan of
//!   most of every list) found nothing of the allowed classes, and falls back to cold at the
//!   start of every reclaim cycle (priority 12).
//! - **AdaptiveComp** (§4.3, `AdaptivePlanner`): the zram chunk planner picks the chunk size
//!   from the page's class (its swap tag): hot `small_bytes`, warm `medium_bytes`, cold
//!   `large_bytes` (main configuration 1K-2K-16K, Table 5). Sub-page sizes split a page into
//!   independently compressed pieces; multi-page sizes group the pages of one class in
//!   swap-out order (`group_by_tag`) into one chunk that a fault decompresses once, its mates
//!   staying in the swap cache (zram's behaviour). Larger-than-page compressed blobs are stored
//!   as several zsmalloc objects (spec §1.3 option (a), zram's own choice).
//! - **PreDecomp** (§4.4, `HotnessFault`): after every major swap fault, the next
//!   `predecomp_pages` pages in zpool order (the per-class swap-out sequence: HotnessOrg stores a
//!   list's pages together, so that sequence is the "physically adjacent" slot order) are
//!   loaded as kernel work off the critical path; a later access finds them resident and pays no
//!   codec call. The FIFO buffer of `predecomp_buffer` pages is tracked for the hit rate: a page
//!   pushed out of the FIFO before use counts as wasted (simplified: it stays resident as an
//!   ordinary page rather than being re-compressed; reclaim takes it like any other).
//! - **Compressed writeback** (§4.1/§4.2, `Lifecycle::on_timer`): every `writeback_period_s`,
//!   when zram holds more than `writeback_at` of its capacity, cold-list chunks idle for a
//!   whole period (not loaded since the last idle marking) are written to flash still
//!   compressed, multi-page chunks first (`WritebackMode::IdleTagBelow`; `writeback_compressed`:
//!   blocks of the compressed size, decompressed on load), at most `writeback_max_mib` per
//!   period. Only cold data: §4.1's placement is "maintain uncompressed hot data in main memory,
//!   compress warm data into zpool, and swap compressed cold data to the flash" (an idle warm
//!   chunk of an app not used for a period would otherwise go, and its relaunch would read it
//!   from flash).
//! - **EHL / AL** (§5): `exclude_hot = true` never compresses a hot page (EHL): the hot list is
//!   mlocked from the launch that made it hot until it is demoted, so neither reclaim nor the
//!   framework's cached-app compaction (`madvise(PAGEOUT)`) takes it; false lets reclaim take
//!   hot pages as a last resort (AL).
//! - Ablations: `hotness_org`, `adaptive_comp`, `predecomp`, `writeback` each switch one
//!   mechanism off; with all four off and 4K-4K-4K the policy is stock zram (the ZRAM baseline,
//!   also with another `codec`).
//!
//! Costs: list moves (hot→warm demotion, hot-list insertion, cold→warm promotion) are charged
//! at `lru_op_ns` each to the acting thread's `policy` CPU; compression, decompression, flash
//! I/O and reclaim are charged by the kernel and zram as for stock.
//!
//! Measured (session 7, `ariadne-6.1-relaunch` with one target, 9 others, 30 s use, 3 rounds;
//! per-fault flash reads split by the faulting page's list): EHL's second YouTube relaunch waited
//! 2.1 s on flash because every chunk-mate of a written-back cold chunk re-read the whole chunk
//! (a zram bug, fixed: one read per chunk, 108 → 33 MiB, 2582 → ≤ 640 ms). What remains (~285 ms
//! of flash wait in that relaunch vs ZRAM's ~110 ms file refaults) is 6.7k pages the previous
//! relaunch did not touch (cold: hot-list misprediction, coverage ~21% with ~32k touched pages
//! against the 10k cap; ~175 ms) and 3.3k pages it did touch (warm) whose swap copy stayed in
//! its cold chunk (a clean swap-cache page is reclaimed without a re-store, keeping its cold
//! tag) and went to flash with it (~110 ms). The writeback trigger counts written-back pages as
//! stored (zram keeps their slots), not the paper's "zpool space insufficient".
//! Session 8: that ~32k-page launch set was MemSaver's 30–45% of RSS; the Pixel 7 apps now take
//! the artifact's profiled hot-list length (`crates/apps` Android 14 tables), ~8.9k anon pages
//! per YouTube relaunch, and coverage on the stock trace is ~71%.
//!
//! Hot-list metrics ([`Stats`]) follow the artifact's `get_cov_acc.py`, which scores the hot
//! list on a *stock* kernel trace: coverage = share of a relaunch's TTID swap-ins (pages
//! faulted back from swap before the first frame) that were in the hot list; accuracy = share
//! of the hot list not left swapped out once the app leaves the foreground after the relaunch.
//! With every mechanism off the policy is stock ZRAM and still records them (a relaunch's swap-ins
//! are seen by the fault hook, which then loads nothing); under EHL the hot list is never
//! swapped out, so they mean nothing there. Fig. 5's similarity compares whole launch sets.
//!
//! Simplified: the hot list is the launch's touched anonymous pages in first-touch order (the
//! artifact's access log: LRU insertions and `mark_page_accessed` of the relaunch and its use,
//! deduplicated); the profiled initial hot-list size is one cap for every app; §6.4's optional
//! demotion of the previous foreground app's hot data is not modelled.

mod framework_hooks;
mod kernel_hooks;
mod state;

pub use kernel_hooks::AdaptivePlanner;
pub use state::{Class, Stats};

use crate::{ParamSpec, Params, Policy, PolicyParts, Probe, Seams, Shared, SwapDevices, SwapOverrides};
use content::Codec;
use device::DeviceProfile;
use kernel::hooks::KernelHooks;
use kernel::swap::SwapBackend;
use kernel::zram::{ChunkPlanner, PagePlanner, Zram, ZramConfig};
use state::{Cfg, State};

/// The `ariadne` policy. `stats`, when set, receives the run's metrics (coverage, accuracy,
/// pre-decompression hits, locality); `reproduce ariadne` reads them.
#[derive(Default)]
pub struct Ariadne {
    pub stats: Option<Probe<Stats>>,
}

const SRC_T5: &str = "Ariadne Table 5 / §5: main configuration 1K-2K-16K";

impl Policy for Ariadne {
    fn name(&self) -> &'static str {
        "ariadne"
    }

    fn description(&self) -> &'static str {
        "Ariadne (HPCA'25): hot/warm/cold lists, chunk size by hotness, pre-decompression, compressed writeback"
    }

    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::int("small_bytes", 1024, 1, 1 << 20)
                .unit("B")
                .about("chunk size for hot pages (power of two, 128 B..128 KiB)")
                .source(SRC_T5),
            ParamSpec::int("medium_bytes", 2048, 1, 1 << 20)
                .unit("B")
                .about("chunk size for warm pages")
                .source(SRC_T5),
            ParamSpec::int("large_bytes", 16384, 1, 1 << 20)
                .unit("B")
                .about("chunk size for cold pages (pages grouped in swap-out order)")
                .source(SRC_T5),
            ParamSpec::one_of("codec", "device", &["device", "lz4", "lzo"])
                .about("codec of every chunk (device: the profile's zram codec)")
                .source("§5: LZO (Fig. 12) and LZ4"),
            ParamSpec::bool("exclude_hot", true)
                .about("EHL: hot pages are never compressed (false: AL, all lists)")
                .source("§5 Evaluated Schemes"),
            ParamSpec::bool("hotness_org", true)
                .about("HotnessOrg reclaim order (false: stock LRU; ablation)")
                .source("§4.2"),
            ParamSpec::bool("adaptive_comp", true)
                .about("AdaptiveComp chunk sizes (false: 4 KiB chunks; ablation)")
                .source("§4.3"),
            ParamSpec::bool("predecomp", true)
                .about("PreDecomp after swap-in faults (ablation)")
                .source("§4.4"),
            ParamSpec::int("predecomp_pages", 1, 1, 16)
                .unit("pages")
                .about("pages pre-decompressed per swap-in fault")
                .source("§4.4: exactly one page (Table 3)"),
            ParamSpec::int("predecomp_buffer", 8, 1, 4096)
                .unit("pages")
                .about("FIFO pre-decompression buffer")
                .source("estimate: the paper gives no size (§4.4 example: 1 page)"),
            ParamSpec::bool("writeback", true)
                .about("compressed writeback of idle zram chunks to flash (ablation)")
                .source("§4.1, §7: ZSWAP incorporated"),
            ParamSpec::float("writeback_at", 0.9, 0.0, 1.0)
                .about("zram fill (stored / capacity) above which writeback runs")
                .source("estimate: §4.2 'when the zpool space is insufficient'"),
            ParamSpec::float("writeback_period_s", 10.0, 0.1, 3600.0)
                .unit("s")
                .about("idle-marking and writeback period")
                .source("estimate (the paper gives none)"),
            ParamSpec::int("writeback_max_mib", 64, 1, 65536)
                .unit("MiB")
                .about("most uncompressed data written back per period")
                .source("estimate (the paper gives none)"),
            ParamSpec::int("hot_list_pages", 10000, 1, 1 << 24)
                .unit("pages")
                .about("profiled hot-list size (cap on the pages a launch makes hot)")
                .source("artifact trace_replay.sh hot_list_length (YouTube, Twitter, Firefox)"),
            ParamSpec::float("lru_op_ns", 100.0, 0.0, 1e6)
                .unit("ns")
                .about("CPU of one list move (demotion, promotion, hot-list insertion)")
                .source("estimate: §6.4 an LRU operation is ~100x cheaper than a swap"),
        ]
    }

    fn check_params(&self, params: &Params) -> Result<(), (&'static str, String)> {
        check_sizes(params).map(|_| ())
    }

    fn build(
        &self,
        device: &DeviceProfile,
        swap: SwapOverrides,
        params: &Params,
    ) -> Result<PolicyParts, String> {
        let cfg = Cfg::from_params(params)?;
        let codec = match params.str("codec") {
            "lz4" => Some(Codec::Lz4),
            "lzo" => Some(Codec::Lzo),
            _ => None,
        };
        let stats = self.stats.clone().unwrap_or_default();
        let zram_mb = swap.zram_mb.unwrap_or(device.swap.zram_disksize_mb);
        let state = Shared::new(State::new(cfg, stats, zram_mb * 256));
        let planner: Box<dyn ChunkPlanner> = if cfg.adaptive_comp {
            Box::new(AdaptivePlanner {
                sizes: [cfg.large, cfg.medium, cfg.small],
                codec,
            })
        } else {
            match codec {
                Some(c) => Box::new(AdaptivePlanner {
                    sizes: [4096; 3],
                    codec: Some(c),
                }),
                None => Box::new(PagePlanner),
            }
        };
        let backends = backends(device, swap, planner, cfg.writeback)?;
        let mut claims = Seams::SWAP_BACKENDS | Seams::FRAMEWORK | Seams::RECLAIM;
        // The fault hook also records a launch's swap-ins (coverage, locality), so it is
        // installed with PreDecomp off too; it then loads nothing and charges nothing.
        if cfg.predecomp {
            claims = claims | Seams::FAULT;
        }
        let fault: Box<dyn kernel::hooks::FaultHook> = Box::new(kernel_hooks::HotnessFault(state.clone()));
        Ok(PolicyParts {
            backends,
            kernel_hooks: KernelHooks {
                reclaim: Box::new(kernel_hooks::HotnessReclaim(state.clone())),
                fault,
                ..KernelHooks::default()
            },
            framework_hooks: Box::new(framework_hooks::Lifecycle(state)),
            runtime_hooks: framework::stock_runtime(),
            claims,
        })
    }
}

/// The swap devices: zram with the chunk planner (and compressed writeback), plus flash swap if
/// the scenario asks for it; no zram when the scenario says `swap = "none"`.
fn backends(
    device: &DeviceProfile,
    swap: SwapOverrides,
    planner: Box<dyn ChunkPlanner>,
    writeback: bool,
) -> Result<Vec<Box<dyn SwapBackend>>, String> {
    use crate::android::stock_backends;
    let devices = swap.devices.unwrap_or(SwapDevices::Zram);
    let zram_mb = swap.zram_mb.unwrap_or(device.swap.zram_disksize_mb);
    let (zram, flash) = match devices {
        SwapDevices::None => (false, false),
        SwapDevices::Zram => (true, false),
        SwapDevices::Flash => (false, true),
        SwapDevices::ZramFlash => (true, true),
    };
    let mut v: Vec<Box<dyn SwapBackend>> = Vec::new();
    if zram && zram_mb > 0 {
        let mut cfg = ZramConfig::from_profile(device);
        cfg.disksize_bytes = zram_mb << 20;
        cfg.verify = content::memo::Verify::Memoised;
        cfg.writeback_compressed = writeback;
        v.push(Box::new(Zram::with_planner(
            cfg,
            content::CostTable::builtin(),
            planner,
        )));
    }
    if flash {
        let o = SwapOverrides {
            devices: Some(SwapDevices::Flash),
            ..swap
        };
        v.extend(stock_backends(device, o, SwapDevices::Flash)?);
    }
    Ok(v)
}

/// A chunk size must be a power of two in 128 B..=128 KiB.
fn check_size(name: &'static str, v: i64) -> Result<u32, (&'static str, String)> {
    if !(128..=131072).contains(&v) || !(v as u64).is_power_of_two() {
        return Err((
            name,
            "a chunk size that is a power of two in 128..=131072 bytes".to_string(),
        ));
    }
    Ok(v as u32)
}

/// The three chunk sizes (hot, warm, cold), each valid and growing from hot to cold; an error
/// names the offending key.
pub(crate) fn check_sizes(p: &Params) -> Result<[u32; 3], (&'static str, String)> {
    let small = check_size("small_bytes", p.int("small_bytes"))?;
    let medium = check_size("medium_bytes", p.int("medium_bytes"))?;
    let large = check_size("large_bytes", p.int("large_bytes"))?;
    // An order error names the size that was set (not the default it contradicts).
    let set = |k: &str| p.non_default().any(|(n, _)| n == k);
    if small > medium {
        return Err((
            if set("small_bytes") {
                "small_bytes"
            } else {
                "medium_bytes"
            },
            format!("small_bytes ({small}) <= medium_bytes ({medium}): chunk sizes grow from hot to cold"),
        ));
    }
    if medium > large {
        return Err((
            if set("medium_bytes") {
                "medium_bytes"
            } else {
                "large_bytes"
            },
            format!("medium_bytes ({medium}) <= large_bytes ({large}): chunk sizes grow from hot to cold"),
        ));
    }
    Ok([small, medium, large])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_checked() {
        assert!(check_size("small_bytes", 1024).is_ok());
        assert!(check_size("small_bytes", 1000).is_err());
        assert!(check_size("small_bytes", 64).is_err());
        assert!(check_size("large_bytes", 262144).is_err());
        assert_eq!(check_size("large_bytes", 200).unwrap_err().0, "large_bytes");
    }
}
