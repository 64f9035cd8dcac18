//! Ariadne's mechanisms on real bytes and its parameter errors: the AdaptiveComp planner
//! through zram (a cold multi-page chunk comes back whole from one decompression; compressed
//! writeback round-trips every page byte-identically with fewer bytes than 4 KiB per page),
//! integrity over 10^6 swapped pages, and one-line errors for bad chunk sizes and unknown keys.

use content::{Codec, ContentId, ContentStore, CostTable, SynthMix};
use hotlaunch_policy::ariadne::{AdaptivePlanner, Ariadne};
use hotlaunch_policy::{resolve_params, ParamValue, Policy, SwapOverrides};
use kernel::swap::{BackendEnv, FlashDevice, SwapBackend, SwapOutPage};
use kernel::zram::{WritebackSelect, Zram, ZramConfig};

fn planner() -> AdaptivePlanner {
    AdaptivePlanner {
        sizes: [16384, 2048, 1024],
        codec: Some(Codec::Lz4),
    }
}

fn zram(compressed_writeback: bool) -> Zram {
    let mut cfg = ZramConfig::new(8 << 30, Codec::Lz4);
    cfg.writeback_compressed = compressed_writeback;
    Zram::with_planner(cfg, CostTable::builtin(), Box::new(planner()))
}

fn contents(n: usize) -> (ContentStore, Vec<ContentId>) {
    let mut store = ContentStore::new();
    let ids: Vec<ContentId> = store.append_synthetic(&SynthMix::default(), n, 5).collect();
    (store, ids)
}

/// Store `ids` in batches of 32, tag `i % 3` per page (mixed classes); returns the handles.
fn store_all(
    z: &mut Zram,
    store: &ContentStore,
    flash: &mut FlashDevice,
    ids: &[ContentId],
    tag: impl Fn(usize) -> u8,
) -> Vec<u32> {
    let mut handles = Vec::new();
    for (b, chunk) in ids.chunks(32).enumerate() {
        let batch: Vec<SwapOutPage> = chunk
            .iter()
            .enumerate()
            .map(|(k, &id)| SwapOutPage {
                page: (b * 32 + k) as u32,
                pid: 1,
                content: id,
                tag: tag(b * 32 + k),
            })
            .collect();
        let mut env = BackendEnv {
            now: 0,
            contents: store,
            cpu_factor: 1.0,
            flash,
        };
        z.store(&mut env, &batch, &mut handles).expect("fits");
    }
    handles
}

#[test]
fn a_cold_chunk_comes_back_whole_from_one_decompression() {
    let (store, ids) = contents(8);
    let mut z = zram(false);
    let mut flash = FlashDevice::new(100_000, 200_000, 2000.0, 1000.0);
    let h = store_all(&mut z, &store, &mut flash, &ids, |_| 0);
    // 8 cold pages at 16 KiB: two chunks of four pages.
    let mut mates = Vec::new();
    z.neighbours(h[0], 32, &mut mates);
    assert_eq!(mates.len(), 3, "four pages per 16 KiB chunk");
    let mut batch = vec![h[0]];
    batch.extend(&mates);
    let mut env = BackendEnv {
        now: 0,
        contents: &store,
        cpu_factor: 1.0,
        flash: &mut flash,
    };
    let mut out = Vec::new();
    z.load_batch(&mut env, &batch, &mut out);
    assert!(out[0].cost.decompress_ns > 0);
    for (i, l) in out.iter().enumerate().skip(1) {
        assert_eq!(l.cost.decompress_ns, 0, "mate {i} needs no second decompression");
    }
    for (k, &hh) in batch.iter().enumerate() {
        let i = h.iter().position(|&x| x == hh).unwrap();
        assert_eq!(out[k].checksum, store.checksum(ids[i]));
    }
}

#[test]
fn compressed_writeback_round_trips_with_fewer_bytes() {
    let (store, ids) = contents(600);
    let mut z = zram(true);
    let mut flash = FlashDevice::new(100_000, 200_000, 2000.0, 1000.0);
    let h = store_all(&mut z, &store, &mut flash, &ids, |i| (i % 3) as u8);
    let mut env = BackendEnv {
        now: 0,
        contents: &store,
        cpu_factor: 1.0,
        flash: &mut flash,
    };
    let w = z.writeback(&mut env, WritebackSelect::All, u64::MAX);
    let non_same = ids
        .iter()
        .filter(|&&id| kernel::zram::same_filled(store.page(id)).is_none())
        .count() as u64;
    assert!(
        w.bytes_written > 0 && w.bytes_written < non_same * 4096,
        "{} B written",
        w.bytes_written
    );
    for (i, &hh) in h.iter().enumerate() {
        let l = z.load(&mut env, hh);
        assert_eq!(l.checksum, store.checksum(ids[i]), "page {i}");
    }
}

#[test]
fn a_written_back_cold_chunk_is_read_from_flash_once_for_all_its_pages() {
    let (store, ids) = contents(8);
    let mut z = zram(true);
    let mut flash = FlashDevice::new(100_000, 200_000, 2000.0, 1000.0);
    let h = store_all(&mut z, &store, &mut flash, &ids, |_| 0);
    let mut env = BackendEnv {
        now: 0,
        contents: &store,
        cpu_factor: 1.0,
        flash: &mut flash,
    };
    let w = z.writeback(&mut env, WritebackSelect::All, u64::MAX);
    assert!(w.bytes_written > 0);
    let mut batch = vec![h[0]];
    z.neighbours(h[0], 32, &mut batch);
    assert_eq!(batch.len(), 4, "four pages per 16 KiB chunk");
    let mut out = Vec::new();
    z.load_batch(&mut env, &batch, &mut out);
    let read: u64 = out.iter().map(|l| l.cost.bytes_read).sum();
    assert!(
        read > 0 && read.is_multiple_of(4096) && read < 4 * 4096,
        "{read} B read for one chunk"
    );
    assert_eq!(out.iter().filter(|l| l.cost.decompress_ns > 0).count(), 1);
    for (k, &hh) in batch.iter().enumerate() {
        let i = h.iter().position(|&x| x == hh).unwrap();
        assert_eq!(out[k].checksum, store.checksum(ids[i]), "page {i}");
    }
}

#[test]
fn a_million_swapped_pages_come_back_intact() {
    // 4096 distinct pages swapped out and in 245 times each in mixed classes (≥ 10^6 pages).
    let (store, ids) = contents(4096);
    let mut z = zram(true);
    let mut flash = FlashDevice::new(100_000, 200_000, 2000.0, 1000.0);
    let (mut pages, mut mismatches) = (0u64, 0u64);
    for round in 0..245usize {
        let h = store_all(&mut z, &store, &mut flash, &ids, |i| ((i + round) % 3) as u8);
        let mut env = BackendEnv {
            now: 0,
            contents: &store,
            cpu_factor: 1.0,
            flash: &mut flash,
        };
        if round % 50 == 0 {
            z.writeback(&mut env, WritebackSelect::All, 1024);
        }
        for (i, &hh) in h.iter().enumerate() {
            mismatches += (z.load(&mut env, hh).checksum != store.checksum(ids[i])) as u64;
            z.free(hh);
            pages += 1;
        }
    }
    assert!(pages >= 1_000_000);
    assert_eq!(mismatches, 0);
}

fn build(given: &[(&str, ParamValue)]) -> Result<(), String> {
    let g: Vec<(String, ParamValue)> = given.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    let p = resolve_params(&Ariadne::default(), &g).map_err(|e| e.to_string())?;
    let d = device::DeviceProfile::builtin("pixel7").map_err(|e| e.to_string())?;
    Ariadne::default()
        .build(&d, SwapOverrides::default(), &p)
        .map(|_| ())
}

#[test]
fn bad_parameters_are_one_line_errors() {
    assert!(build(&[]).is_ok());
    for (k, v, want) in [
        ("small_bytes", 1000, "power of two"),
        ("small_bytes", 64, "128..=131072"),
        ("large_bytes", 262144, "128..=131072"),
        ("small_bytes", 32768, "grow from hot to cold"),
        // Cold smaller than warm (and than hot's default 1 KiB).
        ("large_bytes", 512, "grow from hot to cold"),
        ("medium_bytes", 3000, "power of two"),
    ] {
        let e = build(&[(k, ParamValue::Int(v))]).unwrap_err();
        assert!(e.contains(want) && !e.contains('\n'), "{k}={v}: {e}");
    }
    let e = build(&[("chunk", ParamValue::Int(1))]).unwrap_err();
    assert!(e.contains("chunk") && !e.contains('\n'), "{e}");
    assert!(build(&[("codec", ParamValue::Str("zstd".into()))]).is_err());
}

/// A process of 64 anonymous pages swapped out by `madvise(PAGEOUT)` under an `ariadne` kernel
/// (4 KiB chunks, so PreDecomp, not a multi-page chunk, is what brings the neighbour in);
/// faults its first page and returns (kernel, first page, now, stats).
fn predecomp_kernel(
    predecomp: bool,
) -> (
    kernel::Kernel,
    kernel::types::PageIdx,
    u64,
    hotlaunch_policy::Probe<hotlaunch_policy::ariadne::Stats>,
) {
    use engine::Actor;
    use kernel::mm::ContentSource;
    use kernel::types::Advice;
    use kernel::types::PageKind;
    let stats = hotlaunch_policy::Probe::new(hotlaunch_policy::ariadne::Stats::default());
    let pol = Ariadne {
        stats: Some(stats.clone()),
    };
    let g = vec![
        ("adaptive_comp".to_string(), ParamValue::Bool(false)),
        ("predecomp".to_string(), ParamValue::Bool(predecomp)),
    ];
    let p = resolve_params(&pol, &g).unwrap();
    let mut d = device::DeviceProfile::builtin("pixel3").unwrap();
    d.memory.dram_mb = 96;
    d.memory.kernel_reserve_mb = 32;
    d.memory.system_reserve_mb = 8;
    d.kernel.min_free_kbytes = Some(1024);
    let swap = SwapOverrides {
        zram_mb: Some(64),
        ..SwapOverrides::default()
    };
    let parts = pol.build(&d, swap, &p).unwrap();
    let mut c = ContentStore::new();
    c.append_synthetic(&SynthMix::default(), 64, 3);
    let mut k = kernel::Kernel::new(&d, c, parts.backends, parts.kernel_hooks).unwrap();
    let src = ContentSource {
        base: 0,
        len: 64,
        seed: 7,
    };
    let pid = k.spawn("app", 900, 2);
    let first = k.mmap(pid, 64, PageKind::NativeAnon, false, src).unwrap();
    let mut now = k
        .access_range(0, Actor::AppMain(pid), first, 64, true)
        .unwrap()
        .ns;
    k.madvise(now, Actor::AppMain(pid), first, 64, Advice::PageOut);
    now += 1_000_000;
    k.access(now, Actor::AppMain(pid), first, false).unwrap();
    (k, first, now + 1_000_000, stats)
}

#[test]
fn a_pre_decompressed_page_is_served_without_a_codec_call() {
    use engine::{Actor, Category};
    use kernel::types::PageState;
    for predecomp in [true, false] {
        let (mut k, first, now, stats) = predecomp_kernel(predecomp);
        let pid = k.page(first).unwrap().pid;
        assert_eq!(
            k.page(first + 1).unwrap().state == PageState::Resident,
            predecomp,
            "the next page in zpool order is pre-decompressed (only with PreDecomp)"
        );
        let (majors, dec) = (k.vmstat.pgmajfault, k.cpu.by_category(Category::Decompress));
        let s = k.access(now, Actor::AppMain(pid), first + 1, false).unwrap();
        if predecomp {
            assert_eq!(stats.with(|x| x.predecomp_loaded), 1);
            assert_eq!((s.ns, k.vmstat.pgmajfault), (0, majors), "no fault, no stall");
            assert_eq!(k.cpu.by_category(Category::Decompress), dec, "no codec call");
        } else {
            assert_eq!(k.vmstat.pgmajfault, majors + 1);
            assert!(k.cpu.by_category(Category::Decompress) > dec);
        }
    }
}
