//! Swap integrity at volume (issue 13): at least 10^7 pages swapped out and faulted back through
//! the kernel's own paths — `madvise(PAGEOUT)` → reclaim's swap-out batch → `SwapBackend::store`,
//! then write faults → swap-in (`load_batch`, readahead of chunk-mates) → the fault path's
//! checksum comparison (`Kernel::integrity`) — across backends (zram with every codec and chunk
//! sizes from 512 B sub-page chunks to 128 KiB multi-page chunks, zram written back to flash, a
//! flash swap partition), with 0 mismatches.
//!
//! Speed comes from a content store of repeated pages (4,096 distinct synthetic pages behind a
//! 128 MB mapping): compression is memoised by content, but every zram load runs with
//! `Verify::Always`, i.e. really decompresses the stored blob and checksums the recovered bytes.
//! A mutation check shows the comparison is on the loaded bytes: one flipped byte in one stored
//! blob (or flash slot) is reported as exactly one mismatch.
//!
//! Not covered by byte checks (by design of the model): zram same-filled pages (a fill value),
//! zram huge pages stored raw (their bytes are the content page's), and flash slots (a checksum
//! per slot): for these the test proves the handle → page mapping, not the bytes.

use content::{Codec, ContentStore, CostTable, SynthMix};
use device::DeviceProfile;
use engine::Actor;
use hotlaunch_kernel as kernel;
use kernel::hooks::KernelHooks;
use kernel::mm::ContentSource;
use kernel::swap::{FlashSwap, SwapBackend, SwapMaintenance, WritebackMode};
use kernel::types::*;
use kernel::zram::{FixedPlanner, Zram, ZramConfig};
use kernel::Kernel;

/// Pages in the test mapping (128 MB): fits in DRAM, so only PAGEOUT moves pages.
const MAP_PAGES: u32 = 32_768;
/// Distinct content pages behind the mapping.
const CONTENT_PAGES: usize = 4_096;

#[derive(Clone, Copy, Debug)]
enum Backend {
    /// zram with a codec and a fixed chunk size (bytes); `writeback`: half the rounds first
    /// write idle chunks to the flash backing device (`Some(compressed)`).
    Zram {
        codec: Codec,
        chunk: u32,
        writeback: Option<bool>,
    },
    Flash,
}

fn device() -> DeviceProfile {
    let mut d = DeviceProfile::builtin("pixel3").unwrap();
    d.memory.dram_mb = 512;
    d.memory.kernel_reserve_mb = 32;
    d.memory.system_reserve_mb = 8;
    d
}

fn contents() -> ContentStore {
    let mut c = ContentStore::new();
    c.append_synthetic(&SynthMix::default(), CONTENT_PAGES, 13);
    c
}

fn kernel(b: Backend, store: &ContentStore) -> Kernel {
    let backend: Box<dyn SwapBackend> = match b {
        Backend::Zram {
            codec,
            chunk,
            writeback,
        } => {
            let mut cfg = ZramConfig::new(1 << 30, codec);
            cfg.writeback_compressed = writeback.unwrap_or(false);
            Box::new(Zram::with_planner(
                cfg,
                CostTable::builtin(),
                Box::new(FixedPlanner {
                    chunk_bytes: chunk,
                    codec: None,
                }),
            ))
        }
        Backend::Flash => Box::new(FlashSwap::new(MAP_PAGES * 2)),
    };
    Kernel::new(&device(), store.clone(), vec![backend], KernelHooks::default()).unwrap()
}

struct Run {
    k: Kernel,
    pid: Pid,
    first: PageIdx,
    now: u64,
}

impl Run {
    fn new(b: Backend, store: &ContentStore) -> Self {
        let mut k = kernel(b, store);
        let pid = k.spawn("integrity", 900, 1);
        let src = ContentSource {
            base: 0,
            len: CONTENT_PAGES as u32,
            seed: 77,
        };
        let first = k.mmap(pid, MAP_PAGES, PageKind::NativeAnon, false, src).unwrap();
        let mut r = Run {
            k,
            pid,
            first,
            now: 0,
        };
        r.touch();
        r
    }

    /// Write-touch the whole mapping: every swapped page faults back (a write fault also drops
    /// the swap copy, so the next PAGEOUT stores every page again).
    fn touch(&mut self) {
        let st = self
            .k
            .access_range(self.now, Actor::AppMain(self.pid), self.first, MAP_PAGES, true)
            .expect("mapping fits in DRAM");
        self.now += st.ns;
    }

    fn pageout(&mut self) {
        self.now += self
            .k
            .madvise(
                self.now,
                Actor::AppMain(self.pid),
                self.first,
                MAP_PAGES,
                Advice::PageOut,
            )
            .ns;
        // Let flash writes complete (pages under writeback become swapped).
        self.now += 5_000_000_000;
        self.k.advance_to(self.now);
    }
}

/// Swap the mapping out and back `rounds` times; returns (pages swapped in, mismatches).
fn cycle(b: Backend, store: &ContentStore, rounds: u32) -> (u64, u64) {
    let mut r = Run::new(b, store);
    for round in 0..rounds {
        r.pageout();
        let swapped = r.k.meminfo().swapped;
        assert!(
            swapped >= MAP_PAGES as u64 * 9 / 10,
            "{b:?}: only {swapped} pages swapped out"
        );
        if let (
            Backend::Zram {
                writeback: Some(_), ..
            },
            1,
        ) = (b, round % 2)
        {
            let (now, actor) = (r.now, Actor::Kernel);
            r.k.swap_maintenance(now, actor, 0, SwapMaintenance::MarkIdle);
            let op = SwapMaintenance::Writeback {
                mode: WritebackMode::Idle,
                max_pages: MAP_PAGES as u64 / 2,
            };
            r.now += r.k.swap_maintenance(now, actor, 0, op).ns + 5_000_000_000;
            r.k.advance_to(r.now);
        }
        r.touch();
        assert_eq!(r.k.meminfo().swapped, 0, "{b:?}: pages left in swap");
    }
    r.k.check_invariants().unwrap();
    (r.k.integrity.pages_swapped_in, r.k.integrity.checksum_mismatches)
}

const fn z(codec: Codec, chunk: u32) -> Backend {
    Backend::Zram {
        codec,
        chunk,
        writeback: None,
    }
}

/// (backend, rounds of MAP_PAGES pages each).
const PLAN: [(Backend, u32); 12] = [
    (z(Codec::Lz4, 4096), 40),
    (z(Codec::Lz4, 512), 12),
    (z(Codec::Lz4, 16_384), 40),
    (z(Codec::Lz4, 131_072), 60),
    (z(Codec::Zstd, 4096), 20),
    (z(Codec::Zstd, 1024), 8),
    (z(Codec::Zstd, 65_536), 30),
    (z(Codec::LzoRle, 4096), 8),
    (z(Codec::Lzo, 2048), 6),
    (
        Backend::Zram {
            codec: Codec::Lz4,
            chunk: 8192,
            writeback: Some(false),
        },
        30,
    ),
    (
        Backend::Zram {
            codec: Codec::Zstd,
            chunk: 16_384,
            writeback: Some(true),
        },
        20,
    ),
    (Backend::Flash, 80),
];

#[test]
fn ten_million_pages_swap_out_and_back_with_zero_mismatches() {
    // A longer run: HOTLAUNCH_INTEGRITY_SCALE=10 checks 10x as many pages.
    let scale: u32 = std::env::var("HOTLAUNCH_INTEGRITY_SCALE").map_or(1, |v| v.parse().expect("a number"));
    let store = contents();
    let mut total = 0;
    for (b, rounds) in PLAN {
        let t = std::time::Instant::now();
        let rounds = rounds * scale;
        let (pages, bad) = cycle(b, &store, rounds);
        println!(
            "{b:?}: {pages} pages checked, {bad} mismatches, {:.1} s",
            t.elapsed().as_secs_f64()
        );
        assert_eq!(bad, 0, "{b:?}");
        assert!(
            pages >= rounds as u64 * MAP_PAGES as u64 * 9 / 10,
            "{b:?}: {pages} pages"
        );
        total += pages;
    }
    println!("integrity: {total} pages swapped out and back, 0 mismatches");
    assert!(total >= 10_000_000 * scale as u64, "only {total} pages checked");
}

/// The check is on the loaded bytes: damaging one stored copy gives exactly one mismatch, for
/// each kind of backend storage that holds bytes.
#[test]
fn one_corrupted_stored_byte_is_one_mismatch() {
    let store = contents();
    for b in [
        z(Codec::Lz4, 4096),
        z(Codec::Zstd, 1024),
        z(Codec::LzoRle, 4096),
        z(Codec::Lz4, 131_072),
        Backend::Flash,
    ] {
        let mut r = Run::new(b, &store);
        r.pageout();
        // The first page whose backend holds bytes of its own (not same-filled or raw).
        let hit = (r.first..r.first + MAP_PAGES)
            .find(|&idx| r.k.corrupt_swapped_page(idx))
            .expect("some page has stored bytes");
        assert!(!r.k.corrupt_swapped_page(r.first + MAP_PAGES), "unmapped page");
        r.touch();
        println!("{b:?}: corrupted page {hit}: {:?}", r.k.integrity);
        // A multi-page chunk is one compressed stream: its damage may reach all of its pages.
        let chunk_pages = match b {
            Backend::Zram { chunk, .. } => (chunk as u64 / 4096).max(1),
            Backend::Flash => 1,
        };
        let bad = r.k.integrity.checksum_mismatches;
        assert!((1..=chunk_pages).contains(&bad), "{b:?}: {bad} mismatches");
        // The damage stays with that copy: the next round is clean again.
        r.pageout();
        r.touch();
        assert_eq!(r.k.integrity.checksum_mismatches, bad, "{b:?}");
    }
}
