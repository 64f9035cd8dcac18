//! The readers never panic: random bytes, and valid files cut at any length or with one byte
//! changed, give either requests or a one-line error naming a byte offset.

use hotlaunch_trace::{ariadne, csv, oracle};
use proptest::prelude::*;

fn check(r: Result<u64, hotlaunch_trace::TraceError>) {
    if let Err(e) = r {
        let s = e.to_string();
        assert!(!s.contains('\n'), "one line: {s}");
        assert!(s.contains("byte offset"), "names the offset: {s}");
    }
}

fn oracle_file(ids: &[u64]) -> Vec<u8> {
    let mut out = Vec::new();
    oracle::write_pages(&vec![0; ids.len()], ids, &mut out).unwrap();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        check(oracle::read(&bytes[..], |_| {}));
        check(csv::read(&bytes[..], |_| {}));
        check(ariadne::read_swapin(&bytes[..], |_| {}));
        check(ariadne::read_swapout(&bytes[..], |_, _| {}));
    }

    #[test]
    fn cut_or_changed_oracle(ids in proptest::collection::vec(0u64..20, 1..40), cut in any::<prop::sample::Index>(), pos in any::<prop::sample::Index>(), b in any::<u8>()) {
        let file = oracle_file(&ids);
        let n = cut.index(file.len() + 1);
        let r = oracle::read(&file[..n], |_| {});
        if n % oracle::RECORD == 0 {
            prop_assert_eq!(r.unwrap(), (n / oracle::RECORD) as u64);
        } else {
            prop_assert!(r.is_err());
            check(r);
        }
        let mut changed = file.clone();
        changed[pos.index(file.len())] = b;
        check(oracle::read(&changed[..], |_| {}));
    }

    #[test]
    fn cut_or_changed_csv_and_ariadne(ids in proptest::collection::vec(any::<u64>(), 1..20), cut in any::<prop::sample::Index>(), pos in any::<prop::sample::Index>(), b in any::<u8>()) {
        let mut text = Vec::new();
        csv::write_pages(&vec![1; ids.len()], &ids, &mut text).unwrap();
        check(csv::read(&text[..cut.index(text.len() + 1)], |_| {}));
        let mut changed = text.clone();
        changed[pos.index(text.len())] = b;
        check(csv::read(&changed[..], |_| {}));

        let mut out = Vec::new();
        for (i, &id) in ids.iter().take(3).enumerate() {
            out.extend_from_slice(&ariadne::swapout_header(&ariadne::SwapOut { app: id, pfn: i as u64, sector: id / 3 }));
            out.extend(std::iter::repeat_n(i as u8, ariadne::PAGE));
        }
        check(ariadne::read_swapout(&out[..cut.index(out.len() + 1)], |_, _| {}));
        let mut changed = out.clone();
        changed[pos.index(ariadne::HEADER)] = b;
        check(ariadne::read_swapout(&changed[..], |_, _| {}));
    }
}
