//! ZRAM round trips on real bytes: every page swapped out comes back with the same checksum, at
//! several chunk sizes and codecs and through writeback; accounting returns to zero after frees.

use content::{Codec, ContentId, ContentStore, CostTable, SynthMix};
use hotlaunch_kernel::swap::{BackendEnv, FlashDevice, SwapBackend, SwapOutPage};
use hotlaunch_kernel::zram::{FixedPlanner, MmStat, WritebackSelect, Zram, ZramConfig};

struct Outcome {
    pages: u64,
    mismatches: u64,
    stat: MmStat,
    bd_reads: u64,
}

fn roundtrip(
    store: &ContentStore,
    ids: &[ContentId],
    codec: Codec,
    chunk: u32,
    writeback: Option<bool>,
) -> Outcome {
    let mut cfg = ZramConfig::new(4 << 30, codec);
    if let Some(compressed) = writeback {
        cfg.writeback_compressed = compressed;
    }
    let mut z = Zram::with_planner(
        cfg,
        CostTable::builtin(),
        Box::new(FixedPlanner {
            chunk_bytes: chunk,
            codec: None,
        }),
    );
    let mut flash = FlashDevice::new(100_000, 200_000, 2000.0, 1000.0);
    let mut handles = Vec::new();
    let mut batch = Vec::new();
    for (i, chunk_ids) in ids.chunks(32).enumerate() {
        batch.clear();
        for (k, &id) in chunk_ids.iter().enumerate() {
            batch.push(SwapOutPage {
                page: (i * 32 + k) as u32,
                pid: 1,
                content: id,
                tag: 0,
            });
        }
        let mut env = BackendEnv {
            now: 0,
            contents: store,
            cpu_factor: 1.0,
            flash: &mut flash,
        };
        z.store(&mut env, &batch, &mut handles).expect("store fits");
    }
    assert_eq!(handles.len(), ids.len());
    let stat = z.mm_stat();
    assert_eq!(stat.orig_data_size, ids.len() as u64 * 4096);
    if writeback.is_some() {
        let mut env = BackendEnv {
            now: 0,
            contents: store,
            cpu_factor: 1.0,
            flash: &mut flash,
        };
        // Half of the chunks go to flash.
        z.mark_idle();
        let sel: Vec<u32> = handles.iter().copied().step_by(2).collect();
        z.writeback(&mut env, WritebackSelect::Handles(&sel), u64::MAX);
        assert!(z.bd_stat().bd_count > 0);
    }
    let mut mismatches = 0;
    for (h, &id) in handles.iter().zip(ids) {
        let mut env = BackendEnv {
            now: 0,
            contents: store,
            cpu_factor: 1.0,
            flash: &mut flash,
        };
        let l = z.load(&mut env, *h);
        if l.checksum != store.checksum(id) {
            mismatches += 1;
        }
    }
    let bd_reads = z.bd_stat().bd_reads;
    for h in &handles {
        z.free(*h);
    }
    let end = z.mm_stat();
    assert_eq!(
        (end.orig_data_size, end.compr_data_size, end.mem_used_total),
        (0, 0, 0)
    );
    assert_eq!((end.same_pages, end.huge_pages, z.bd_stat().bd_count), (0, 0, 0));
    assert_eq!(z.usage().dram_pages, 0);
    Outcome {
        pages: ids.len() as u64,
        mismatches,
        stat,
        bd_reads,
    }
}

fn synthetic() -> (ContentStore, Vec<ContentId>) {
    let mut s = ContentStore::new();
    let mut ids = Vec::new();
    for app in 0..5u64 {
        ids.extend(s.append_synthetic(&SynthMix::default(), 5_000, 100 + app));
    }
    (s, ids)
}

const CONFIGS: [(Codec, u32, Option<bool>); 4] = [
    (Codec::Lz4, 4096, Some(false)),
    (Codec::Lz4, 512, None),
    (Codec::Zstd, 16384, Some(true)),
    (Codec::Lzo, 32768, None),
];

#[test]
fn synthetic_roundtrip_100k_pages_zero_mismatches() {
    let (store, ids) = synthetic();
    let mut total = 0;
    for (codec, chunk, wb) in CONFIGS {
        let o = roundtrip(&store, &ids, codec, chunk, wb);
        println!(
            "synthetic {codec} chunk {chunk}: ratio {:.2}, same {}, huge {}, bd_reads {}",
            o.stat.orig_data_size as f64 / o.stat.mem_used_total as f64,
            o.stat.same_pages,
            o.stat.huge_pages,
            o.bd_reads
        );
        assert_eq!(o.mismatches, 0, "{codec} chunk {chunk}");
        if wb.is_some() {
            assert!(o.bd_reads > 0);
        }
        total += o.pages;
    }
    assert!(total >= 100_000);
}

#[test]
fn real_jvm_roundtrip_100k_pages_zero_mismatches() {
    let corpus = match content::capture::capture_demo_jvm(60) {
        Ok(c) => c,
        Err(e) => {
            println!("SKIPPED: cannot capture a JVM here: {e}");
            return;
        }
    };
    let mut store = ContentStore::new();
    let mut ids = corpus.load_into(&mut store, false);
    assert!(ids.len() >= 20_000, "JVM capture has only {} pages", ids.len());
    ids.truncate(25_000);
    let mut total = 0;
    for (codec, chunk, wb) in CONFIGS {
        let o = roundtrip(&store, &ids, codec, chunk, wb);
        println!(
            "jvm {codec} chunk {chunk}: {} pages, mem ratio {:.2}, compr ratio {:.2}, same {}, huge {}",
            o.pages,
            o.stat.orig_data_size as f64 / o.stat.mem_used_total as f64,
            o.stat.orig_data_size as f64 / o.stat.compr_data_size.max(1) as f64,
            o.stat.same_pages,
            o.stat.huge_pages
        );
        assert_eq!(o.mismatches, 0, "{codec} chunk {chunk}");
        total += o.pages;
    }
    assert!(total >= 100_000);
}

#[test]
fn compression_ratio_rises_with_chunk_size() {
    let mut s = ContentStore::new();
    let ids: Vec<ContentId> = s.append_synthetic(&SynthMix::default(), 4_096, 9).collect();
    let mut last = 0.0;
    for chunk in [256, 1024, 4096, 16384, 131072] {
        let o = roundtrip(&s, &ids, Codec::Lz4, chunk, None);
        let ratio = o.stat.orig_data_size as f64 / o.stat.compr_data_size as f64;
        println!("lz4 chunk {chunk}: compr ratio {ratio:.3}");
        assert!(ratio > last, "ratio {ratio} at {chunk} not above {last}");
        last = ratio;
    }
}

#[test]
fn disksize_limit_returns_full() {
    let mut s = ContentStore::new();
    let ids: Vec<ContentId> = s.append_synthetic(&SynthMix::default(), 64, 1).collect();
    let mut z = Zram::new(ZramConfig::new(40 * 4096, Codec::Lz4), CostTable::builtin());
    let mut flash = FlashDevice::new(100_000, 200_000, 2000.0, 1000.0);
    let mut env = BackendEnv {
        now: 0,
        contents: &s,
        cpu_factor: 1.0,
        flash: &mut flash,
    };
    let batch: Vec<SwapOutPage> = ids[..32]
        .iter()
        .map(|&c| SwapOutPage {
            page: c,
            pid: 1,
            content: c,
            tag: 0,
        })
        .collect();
    let mut h = Vec::new();
    assert!(z.store(&mut env, &batch, &mut h).is_ok());
    assert_eq!(
        z.store(&mut env, &batch, &mut h),
        Err(hotlaunch_kernel::swap::SwapError::Full)
    );
    assert_eq!(h.len(), 32);
}

#[test]
fn same_and_huge_pages_are_accounted_like_linux() {
    let mut s = ContentStore::new();
    let zero = s.push_page(&[0u8; 4096]);
    let ff = s.push_page(&[0xffu8; 4096]);
    // Incompressible page: xorshift bytes.
    let mut x = 0x1234_5678_9abc_def0u64;
    let rnd: Vec<u8> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let huge = s.push_page(&rnd);
    let text = s.push_page(&b"hello zram ".repeat(373)[..4096]);
    let mut z = Zram::new(ZramConfig::new(1 << 20, Codec::Lz4), CostTable::builtin());
    let mut flash = FlashDevice::new(100_000, 200_000, 2000.0, 1000.0);
    let mut env = BackendEnv {
        now: 0,
        contents: &s,
        cpu_factor: 1.0,
        flash: &mut flash,
    };
    let batch: Vec<SwapOutPage> = [zero, ff, huge, text]
        .iter()
        .map(|&c| SwapOutPage {
            page: c,
            pid: 1,
            content: c,
            tag: 0,
        })
        .collect();
    let mut h = Vec::new();
    z.store(&mut env, &batch, &mut h).unwrap();
    let st = z.mm_stat();
    assert_eq!(st.same_pages, 2);
    assert_eq!(st.huge_pages, 1);
    assert_eq!(st.huge_pages_since, 1);
    assert_eq!(st.orig_data_size, 4 * 4096);
    // The model's LZ4 is the reference liblz4 (kernel-identical sizes).
    let mut out = Vec::new();
    Codec::Lz4.compress(s.page(text), &mut out);
    let text_len = out.len() as u64;
    assert_eq!(st.compr_data_size, 4096 + text_len);
    // Pool: one 4 KiB object (1 page) + the small text object in its class's zspage.
    let classes = hotlaunch_kernel::zram::zsmalloc::SizeClasses::new(8);
    let cl = classes.classes[classes.class_for(text_len as usize) as usize];
    assert_eq!(st.mem_used_total, (1 + cl.pages_per_zspage as u64) * 4096);
    for (hh, &c) in h.iter().zip(&[zero, ff, huge, text]) {
        assert_eq!(z.load(&mut env, *hh).checksum, s.checksum(c));
    }
}

#[test]
fn idle_large_first_writes_multi_page_chunks_before_single_pages() {
    let mut store = ContentStore::new();
    let r = store.append_synthetic(&SynthMix::default(), 64, 5);
    let ids: Vec<ContentId> = (r.start..r.end).collect();
    let fixed = |chunk_bytes| {
        Box::new(FixedPlanner {
            chunk_bytes,
            codec: None,
        })
    };
    let mut z = Zram::with_planner(
        ZramConfig::new(1 << 30, Codec::Lz4),
        CostTable::builtin(),
        fixed(4096),
    );
    let mut flash = FlashDevice::new(100_000, 200_000, 2000.0, 1000.0);
    let mut handles = Vec::new();
    // Pages 0..4 in 4 KiB chunks first (earlier in pool order), then pages 4..8 in one 16 KiB chunk.
    for (first, chunk) in [(0usize, 4096u32), (4, 16384)] {
        z.set_planner(fixed(chunk));
        let batch: Vec<SwapOutPage> = (first..first + 4)
            .map(|i| SwapOutPage {
                page: i as u32,
                pid: 1,
                content: ids[i],
                tag: 0,
            })
            .collect();
        let mut env = BackendEnv {
            now: 0,
            contents: &store,
            cpu_factor: 1.0,
            flash: &mut flash,
        };
        z.store(&mut env, &batch, &mut handles).expect("store fits");
    }
    z.mark_idle();
    let mut env = BackendEnv {
        now: 0,
        contents: &store,
        cpu_factor: 1.0,
        flash: &mut flash,
    };
    z.writeback(&mut env, WritebackSelect::IdleLargeFirst, 4);
    let from_flash: Vec<bool> = handles
        .iter()
        .map(|&h| {
            let mut env = BackendEnv {
                now: 0,
                contents: &store,
                cpu_factor: 1.0,
                flash: &mut flash,
            };
            z.load(&mut env, h).cost.wait_ns > 0
        })
        .collect();
    assert_eq!(from_flash, [false, false, false, false, true, true, true, true]);
}

#[test]
fn idle_tag_below_writes_only_chunks_of_lower_tags() {
    let mut store = ContentStore::new();
    let r = store.append_synthetic(&SynthMix::default(), 64, 6);
    let ids: Vec<ContentId> = (r.start..r.end).collect();
    let mut z = Zram::with_planner(
        ZramConfig::new(1 << 30, Codec::Lz4),
        CostTable::builtin(),
        Box::new(FixedPlanner {
            chunk_bytes: 4096,
            codec: None,
        }),
    );
    let mut flash = FlashDevice::new(100_000, 200_000, 2000.0, 1000.0);
    let mut handles = Vec::new();
    // Pages 0..8, tags alternating 1, 0: only the tag-0 pages may go to flash.
    let batch: Vec<SwapOutPage> = (0..8)
        .map(|i| SwapOutPage {
            page: i as u32,
            pid: 1,
            content: ids[i],
            tag: (i % 2 == 0) as u8,
        })
        .collect();
    let mut env = BackendEnv {
        now: 0,
        contents: &store,
        cpu_factor: 1.0,
        flash: &mut flash,
    };
    z.store(&mut env, &batch, &mut handles).expect("store fits");
    z.mark_idle();
    z.writeback(&mut env, WritebackSelect::IdleTagBelow(1), u64::MAX);
    let from_flash: Vec<bool> = handles
        .iter()
        .map(|&h| {
            let mut env = BackendEnv {
                now: 0,
                contents: &store,
                cpu_factor: 1.0,
                flash: &mut flash,
            };
            z.load(&mut env, h).cost.wait_ns > 0
        })
        .collect();
    assert_eq!(from_flash, [false, true, false, true, false, true, false, true]);
}
