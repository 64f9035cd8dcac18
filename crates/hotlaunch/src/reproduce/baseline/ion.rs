//! Baseline rows about I/O buffers, kernel allocations and physical-memory fragmentation
//! (ISMM'15 §3 and §6 on the Nexus 10), all from one stock-Android run of `ismm15-livelab`
//! (1,000 launches of 22 apps with the §6.3 I/O-buffer demand; `--quick`: 30 launches). The run
//! is shared by the three rows (they run on different threads: the first computes, the others
//! wait for it).
//!
//! The demand (scenario `[io_buffers]`): 13.3 buffers of 11 MB per launch (§6.3), spread over
//! 12 s of the app's foreground and held until it leaves (estimates: the paper gives no times;
//! Table 1 / Fig. 4 rank I/O buffers the second-largest memory use), on a Dalvik heap that keeps
//! the pages it frees until its idle trim (Android 4.2; `device::release`).
//!
//! Session 9 (1,000 launches, `hotlaunch run ismm15-livelab`), before -> after those two causes
//! were fixed: median buffer 0.071 -> 0.97 ms, p90 0.51 -> 39.9 ms, direct compactions inside
//! allocations 1,883 -> 16,139; order-0 share of units 77% -> 88%; UI(4..8) after 100 min 0.71
//! -> 0.61, UI(8) 0.78 -> 0.77; young UI(4..8) 0.00 -> 0.01; lmk kills 61 -> 75. Each cause
//! alone (300 launches): the Dalvik heap leaves the median at 0.071 ms (free memory is held up by
//! the lowmemorykiller's minfree, not by the heap's churn: median free 44 -> 52 MiB); spreading
//! with `live = 3` gives p90 0.49 ms, with `live = 14` 30.7 ms, the median staying 0.071 ms until
//! both are in.
//!
//! Session 9, second pass (1,000 launches), two model fixes: the cost of a buffer depends on its
//! blocks' orders (a call per block + a `struct page` preparation per page, was a flat minor
//! fault of 6.5 µs per block: `kernel::ion`), and a failed order-8 attempt no longer runs a
//! direct-reclaim round when compaction could already run (3.4 `compaction_ready`). Stock:
//! median 0.97 -> 0.30 ms, p90 39.9 -> 42.8 ms, mean 12.1 -> 10.9 ms; 55% of buffers are whole
//! 1 MiB blocks (0.19 ms each), 27% fall back to order 4 (0.31 ms without stalls; the median
//! buffer is one of them, its compaction deferred), 18% reach 4 KiB pages (~2 ms of blocks plus
//! a median 2.8 ms stall); 17,390 compactions of 7.7 ms each are on the latencies of 25% of the
//! buffers (the earlier "70%" was runs per buffer). Order-0 share 88% -> 89% of units, 14% of
//! bytes; lmk kills 75 -> 72.
//!
//! Why the rows are still GAPs: (1) the median buffer still finds whole 1 MiB blocks more often
//! than the paper's (its 5.87 ms median implies most buffers compact or fall back): the first
//! buffers of a launch take the blocks the previous app released at its background transition
//! (Linux hands them back the same way, `__rmqueue_smallest`); the paper's device also ran the
//! launcher's, SurfaceFlinger's and SystemUI's buffers, whose other lifetimes are not modelled.
//! (2) Fig. 10 counts units, and a buffer of 4 KiB pages has 2,816 of them against 11 for one of
//! 1 MiB blocks, so the 18% of buffers that reach order 0 make 89% of the units (14% of the
//! bytes); the paper's ~60% needs most buffers to take a few 4 KiB pages after many 64 KiB ones,
//! not a minority to take thousands. Holding every buffer until the app leaves raises the
//! order-0 share above Fig. 10's ~60% (88%): the held 146 MiB squeezes the large blocks; the lifetime is an estimate and a shorter
//! one (`live = 3`, 300 launches) gave 76% but a p90 of 0.49 ms. (3) UI(8) stays ~0.77 rather
//! than saturating (cause not isolated; lmk kills, 75 per 1,000 launches, return whole
//! processes' memory). `crates/
//! kernel/tests/ion.rs` pins the buddy-side mechanism (recycling while small blocks last,
//! fallback into the freed blocks once the Movable lists run dry).
//!
//! Where the Nexus 10's memory goes (`hotlaunch run ismm15-livelab`, 1,000
//! launches; medians of the 10 s samples): 0-5 min free 1,074 MiB (anon 559, file 227, kernel
//! incl. ION 47), 5-10 min 621 MiB free, 10-30 min 152, from 100 min on 151 (anon 1,533, file
//! 163, kernel 51; 15 cached apps, 72 lmk kills). The `--quick` run (30 launches, 10 min) never
//! fills: its LiveLab order starts only 8 of the 22 apps, so 470-770 MiB stay free after 5 min
//! and the quick rows read a young phone (the paper's Fig. 2 needs ~100 min to saturate). Aged,
//! the free memory is bimodal: samples taken while the foreground app holds its buffers have 74
//! MiB free and UI(4..8) 0.90, samples on the home screen (its 150 MiB of buffers just released)
//! 162 MiB and 0.68, so the mean is 0.78. The 21 service processes ISMM'15 §4.2 counts at boot
//! (not in the device's 400 MiB system reserve) were tried as +250 MiB of reserve (estimate:
//! ~12 MiB each): 250 MiB less free in the first 10 min, but aged UI 0.74, median 0.31 ms (not kept).
//! The launcher's window buffers on the home screen (`[io_buffers] home_window`, 3 buffers of
//! 2560 x 1600 RGBA_8888 = 15.6 MiB, counted inside the paper's 13,300 allocations / 147 GB:
//! `per_launch = 10.3`, `mb = 9.65`): aged UI 0.78 -> 0.86, aged median free 151 -> 67 MiB,
//! but the median buffer 0.57 -> 0.33 ms (the launcher's buffers take the 1 MiB blocks the app
//! just released) and order-0 share 93% -> 93%; left off in the scenarios (it moves Fig. 2
//! toward the paper and Fig. 11 away; `ismm15-regions` shares the demand and was not re-run).

use super::super::{run_scenario, status, Check, CheckList};
use std::sync::{Arc, Mutex};

pub(super) fn checks() -> CheckList {
    vec![
        ("ismm15-fig2", fig2_unusable),
        ("ismm15-fig10", fig10_order0),
        ("ismm15-fig11", fig11_latency),
    ]
}

/// What the rows read from the run.
#[derive(Debug, Clone)]
struct Figures {
    /// Simulated minutes of the run.
    minutes: f64,
    /// (minute, mean unusable index over orders 4..=8, free MiB) per sample.
    ui4: Vec<(f64, f64, f64)>,
    /// ION allocation units per order 0, 4, 8.
    units: [u64; 3],
    /// Median I/O-buffer allocation, ms.
    median_ms: f64,
    allocations: u64,
    /// Compactions run inside I/O-buffer allocations and their total time, ms.
    compactions: u64,
    /// Buffers that ran at least one of those compactions.
    compacted_buffers: u64,
    compact_ms: f64,
    /// Median MiB free in blocks of order >= 8 when a buffer's allocation started, and the
    /// share of buffers that found at least their own size there (no fallback needed).
    megablock_median_mb: f64,
    megablock_covered: f64,
}

type Cache = Mutex<Option<(bool, Arc<Figures>)>>;
static RUN: Cache = Mutex::new(None);

fn figures(quick: bool) -> anyhow::Result<Arc<Figures>> {
    let mut guard = RUN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((q, f)) = guard.as_ref() {
        if *q == quick {
            return Ok(f.clone());
        }
    }
    let runs = run_scenario("ismm15-livelab", quick)?;
    let out = &runs[0].1;
    let io = &out.kernel.io_buffers;
    let mut lat = io.latencies_ns.clone();
    lat.sort_unstable();
    let median_ms = lat.get(lat.len() / 2).map_or(f64::NAN, |&ns| ns as f64 / 1e6);
    let mut mega = io.megablock_free_pages.clone();
    mega.sort_unstable();
    let megablock_median_mb = mega.get(mega.len() / 2).map_or(f64::NAN, |&p| p as f64 / 256.0);
    let need = (io.bytes / io.allocations.max(1)).div_ceil(4096);
    let covered = io.megablock_free_pages.iter().filter(|&&p| p >= need).count();
    let megablock_covered = covered as f64 / io.megablock_free_pages.len().max(1) as f64;
    let f = Arc::new(Figures {
        minutes: out.simulated as f64 / 60e9,
        ui4: out
            .samples
            .iter()
            .map(|s| {
                let ui = (4..=8).map(|o| s.unusable_index[o]).sum::<f64>() / 5.0;
                (s.t as f64 / 60e9, ui, s.free_pages as f64 / 256.0)
            })
            .collect(),
        units: [
            io.blocks_by_order[0],
            io.blocks_by_order[4],
            io.blocks_by_order[8],
        ],
        median_ms,
        allocations: io.allocations,
        compactions: io.compact_stalls,
        compacted_buffers: io.compacted_buffers,
        compact_ms: io.compact_ns as f64 / 1e6,
        megablock_median_mb,
        megablock_covered,
    });
    *guard = Some((quick, f.clone()));
    Ok(f)
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (n, s) = v.fold((0usize, 0.0), |(n, s), x| (n + 1, s + x));
    if n == 0 {
        f64::NAN
    } else {
        s / n as f64
    }
}

/// ISMM'15 Fig. 2: the unusable index of large orders saturates after ~100 minutes. The row
/// prints the aged index split at the aged samples' median free memory: the index is high when
/// memory is tight (the foreground app holds its buffers) and lower on the home screen, whose
/// released buffers leave more free (module docs: bimodal free memory, the cause of the GAP).
fn fig2_unusable(quick: bool) -> anyhow::Result<Check> {
    let f = figures(quick)?;
    // Young: the first 5 minutes (about 15 launches). Aged: from 100 minutes on (quick: the
    // second half of a 10-minute run, so the quick row checks the direction only).
    let (young_to, aged_from) = if quick {
        (2.0, f.minutes / 2.0)
    } else {
        (5.0, 100.0)
    };
    let young = mean(f.ui4.iter().filter(|s| s.0 <= young_to).map(|s| s.1));
    let aged: Vec<_> = f.ui4.iter().filter(|s| s.0 >= aged_from).collect();
    let ui_aged = mean(aged.iter().map(|s| s.1));
    // What the aged index depends on: free memory, bimodal once aged (module docs). Split the
    // aged samples at their median free memory.
    let mut free: Vec<f64> = aged.iter().map(|s| s.2).collect();
    free.sort_unstable_by(f64::total_cmp);
    let median_free = free.get(free.len() / 2).copied().unwrap_or(f64::NAN);
    let tight = mean(aged.iter().filter(|s| s.2 < median_free).map(|s| s.1));
    let roomy = mean(aged.iter().filter(|s| s.2 >= median_free).map(|s| s.1));
    Ok(Check {
        check: "unusable index of orders 4..8 (mean), young vs aged (Nexus 10, stock)".into(),
        paper: "ISMM'15 Fig. 2: large orders saturate at 1 after ~100 min".into(),
        simulated: format!(
            "young (<= {young_to:.0} min) {young:.2}; aged (>= {aged_from:.0} min) {ui_aged:.2}: \
             {tight:.2} in the aged samples with less than their median {median_free:.0} MiB \
             free, {roomy:.2} in the others"
        ),
        tolerance: "aged >= 0.95; young <= 0.1".into(),
        status: status(ui_aged >= 0.95 && young <= 0.1),
    })
}

/// ISMM'15 Fig. 10: about 60% of the ION allocation units are order 0 under the stock kernel.
fn fig10_order0(quick: bool) -> anyhow::Result<Check> {
    let f = figures(quick)?;
    let total: u64 = f.units.iter().sum();
    let share = |i: usize| f.units[i] as f64 / total.max(1) as f64;
    let s0 = share(0);
    // The same units weighted by their pages: a buffer of 4 KiB pages has 256 units per MiB,
    // one of 1 MiB blocks one, so a few fallen-back buffers dominate the count.
    let pages = f.units[0] + 16 * f.units[1] + 256 * f.units[2];
    let bytes0 = f.units[0] as f64 / pages.max(1) as f64;
    Ok(Check {
        check: "ION allocation units by order (ismm15-livelab, stock)".into(),
        paper: "ISMM'15 Fig. 10 (VAN): ~60% of allocation units at order 0".into(),
        simulated: format!(
            "order 0 {:.0}%, order 4 {:.0}%, order 8 {:.0}% of {total} units; by bytes order 0 \
             is {:.0}% (a unit count is dominated by the few buffers that fell back to 4 KiB \
             pages: 2,816 units per 11 MB buffer against 11; Fig. 10 counts units)",
            s0 * 100.0,
            share(1) * 100.0,
            share(2) * 100.0,
            bytes0 * 100.0
        ),
        tolerance: "order 0 within 40-75%".into(),
        status: status(total > 0 && (0.40..=0.75).contains(&s0)),
    })
}

/// ISMM'15 Fig. 11: median I/O-buffer allocation 5.871 ms under the stock kernel.
fn fig11_latency(quick: bool) -> anyhow::Result<Check> {
    let f = figures(quick)?;
    let m = f.median_ms;
    Ok(Check {
        check: "median I/O-buffer allocation (ismm15-livelab, stock)".into(),
        paper: "ISMM'15 Fig. 11 (VAN): median 5.871 ms over 13,300 allocations".into(),
        simulated: format!(
            "median {m:.2} ms over {} allocations; {} direct compactions inside them ({:.0} ms, \
             in {:.0}% of the buffers); \
             at its start the median buffer found {:.0} MiB free in blocks >= 1 MiB, and {:.0}% \
             found at least their own size there",
            f.allocations,
            f.compactions,
            f.compact_ms,
            f.compacted_buffers as f64 * 100.0 / f.allocations.max(1) as f64,
            f.megablock_median_mb,
            f.megablock_covered * 100.0
        ),
        tolerance: "×/÷ 2 (2.9-11.7 ms)".into(),
        status: status((5.871 / 2.0..=5.871 * 2.0).contains(&m)),
    })
}
