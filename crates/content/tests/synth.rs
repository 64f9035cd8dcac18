use hotlaunch_content::{ContentStore, SynthMix, PAGE_SIZE};

fn lz4_ratio(bytes: &[u8], chunk: usize) -> f64 {
    let mut out = 0usize;
    for c in bytes.chunks(chunk) {
        out += lz4_flex::block::compress(c).len().min(c.len());
    }
    bytes.len() as f64 / out as f64
}

#[test]
fn synthetic_is_deterministic_and_ratio_rises_with_chunk() {
    let mut a = ContentStore::new();
    let r = a.append_synthetic(&SynthMix::default(), 2048, 7);
    assert_eq!(r, 0..2048);
    let mut b = ContentStore::new();
    b.append_synthetic(&SynthMix::default(), 2048, 7);
    for id in r.clone() {
        assert_eq!(a.checksum(id), b.checksum(id));
    }
    let mut bytes = Vec::new();
    for id in r {
        bytes.extend_from_slice(a.page(id));
    }
    // Exclude same-filled pages as zram does (they are not compressed).
    let non_same: Vec<u8> = bytes
        .chunks(PAGE_SIZE)
        .filter(|p| !p.chunks(8).all(|w| w == &p[..8]))
        .flatten()
        .copied()
        .collect();
    let mut last = 0.0;
    for chunk in [128, 256, 512, 1024, 2048, 4096, 16384, 32768, 131072] {
        let r = lz4_ratio(&non_same, chunk);
        println!("lz4 chunk {chunk:>6}: ratio {r:.2}");
        assert!(r >= last * 0.98, "ratio should rise with chunk size");
        last = r;
    }
    let r4k = lz4_ratio(&non_same, 4096);
    assert!((2.0..=4.0).contains(&r4k), "4 KiB LZ4 ratio {r4k} outside 2..4");
}

#[test]
fn per_kind_ratios() {
    use hotlaunch_content::synth::{generate, PageKind};
    for kind in [PageKind::Object, PageKind::Text] {
        let mut bytes = Vec::new();
        generate(&SynthMix::default(), 2000, 3, |k, p| {
            if k == kind {
                bytes.extend_from_slice(p)
            }
        });
        println!(
            "{kind:?}: 128 {:.2} 4k {:.2} 128k {:.2}",
            lz4_ratio(&bytes, 128),
            lz4_ratio(&bytes, 4096),
            lz4_ratio(&bytes, 131072)
        );
    }
}
