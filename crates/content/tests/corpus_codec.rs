//! Corpus reader robustness (never panics, clear errors) and codec round trips / names.

use hotlaunch_content::corpus::{Corpus, CorpusError};
use hotlaunch_content::{Codec, ContentStore, SynthMix};
use proptest::prelude::*;

fn sample() -> Vec<u8> {
    let mut store = ContentStore::new();
    store.append_synthetic(&SynthMix::default(), 3, 5);
    let mut c = Corpus::default();
    for id in 0..3 {
        c.push(
            42,
            "app",
            if id == 0 { "[heap]" } else { "[anon:dalvik]" },
            0x7000_0000 + id as u64 * 4096,
            store.page(id),
        );
    }
    c.to_bytes()
}

#[test]
fn corpus_round_trip_and_errors() {
    let b = sample();
    let c = Corpus::from_bytes(&b).unwrap();
    assert_eq!(c.len(), 3);
    assert_eq!(c.strings, vec!["app", "[heap]", "[anon:dalvik]"]);
    assert_eq!(c.to_bytes(), b);
    assert!(matches!(
        Corpus::from_bytes(b"NOTACORPUS______"),
        Err(CorpusError::BadMagic)
    ));
    let mut v = b.clone();
    v[8] = 9;
    assert!(matches!(Corpus::from_bytes(&v), Err(CorpusError::BadVersion(9))));
    assert!(matches!(
        Corpus::from_bytes(&b[..b.len() - 100]),
        Err(CorpusError::Truncated { .. })
    ));
    let mut v = b.clone();
    v[16] = 0xff; // page count far too large
    assert!(matches!(
        Corpus::from_bytes(&v),
        Err(CorpusError::Truncated { .. })
    ));
    let mut v = b.clone();
    let n = v.len();
    v[n - 20] ^= 1;
    let e = Corpus::from_bytes(&v).unwrap_err().to_string();
    assert!(e.contains("checksum"), "{e}");
}

#[test]
fn unknown_codec_is_a_clear_error() {
    let e = "lz5".parse::<Codec>().unwrap_err().to_string();
    assert_eq!(
        e,
        "unknown codec \"lz5\": expected one of lz4, zstd, lzo, lzo-rle"
    );
    for c in Codec::ALL {
        assert_eq!(c.name().parse::<Codec>().unwrap(), c);
    }
}

#[test]
fn codecs_round_trip_real_bytes() {
    let mut store = ContentStore::new();
    let r = store.append_synthetic(&SynthMix::default(), 64, 3);
    let mut data = Vec::new();
    for id in r {
        data.extend_from_slice(store.page(id));
    }
    let (mut comp, mut back) = (Vec::new(), Vec::new());
    for codec in Codec::ALL {
        for size in [128, 4096, 65536] {
            for chunk in data.chunks(size) {
                codec.compress(chunk, &mut comp);
                codec.decompress(&comp, &mut back, chunk.len()).unwrap();
                assert_eq!(&back[..], chunk, "{codec} {size}");
            }
        }
        assert!(codec
            .decompress(b"\xff\xff\xff\xff garbage", &mut back, 4096)
            .is_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn reader_never_panics_on_random_bytes(b in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = Corpus::from_bytes(&b);
    }

    #[test]
    fn reader_never_panics_on_truncation_or_bit_flips(cut in 0usize..20_000, flips in proptest::collection::vec((0usize..20_000, 0u8..8), 0..4)) {
        let mut b = sample();
        for (pos, bit) in flips {
            let n = b.len();
            b[pos % n] ^= 1 << bit;
        }
        let cut = cut.min(b.len());
        let r = Corpus::from_bytes(&b[..cut]);
        if cut < b.len() {
            prop_assert!(r.is_err());
        }
    }
}
