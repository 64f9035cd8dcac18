//! The parser never panics, and its errors are always one line.

use hotlaunch_device::{builtin_names, builtin_toml, DeviceProfile};
use proptest::prelude::*;

fn check(text: &str) {
    if let Err(e) = DeviceProfile::from_toml_str(text, "fuzz.toml") {
        let msg = e.to_string();
        assert!(
            !msg.contains('\n') && !msg.contains('\r'),
            "multi-line error: {msg:?}"
        );
        assert!(msg.contains("fuzz.toml"), "{msg}");
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Drop(usize),
    Duplicate(usize),
    /// Replace the value of line `.0` with `.1`.
    Alter(usize, String),
    /// Replace line `.0` with arbitrary text.
    Replace(usize, String),
    Swap(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let value = prop_oneof![
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("1e400".to_string()),
        Just("nan".to_string()),
        Just("\"\"".to_string()),
        Just("[1, 2]".to_string()),
        Just("{ a = 1 }".to_string()),
        Just("18446744073709551616".to_string()),
        Just("\"lz5\\n\"".to_string()),
        any::<i64>().prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| v.to_string()),
        "[ -~]{0,12}",
    ];
    prop_oneof![
        any::<usize>().prop_map(Mutation::Drop),
        any::<usize>().prop_map(Mutation::Duplicate),
        (any::<usize>(), value).prop_map(|(i, v)| Mutation::Alter(i, v)),
        (any::<usize>(), "\\PC{0,20}").prop_map(|(i, s)| Mutation::Replace(i, s)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, j)| Mutation::Swap(i, j)),
    ]
}

fn apply(text: &str, muts: &[Mutation]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for m in muts {
        if lines.is_empty() {
            break;
        }
        let n = lines.len();
        match m {
            Mutation::Drop(i) => {
                lines.remove(i % n);
            }
            Mutation::Duplicate(i) => {
                let l = lines[i % n].clone();
                lines.insert(i % n, l);
            }
            Mutation::Alter(i, v) => {
                let l = &lines[i % n];
                if let Some((k, _)) = l.split_once('=') {
                    lines[i % n] = format!("{k}= {v}");
                }
            }
            Mutation::Replace(i, s) => lines[i % n] = s.clone(),
            Mutation::Swap(i, j) => lines.swap(i % n, j % n),
        }
    }
    lines.join("\n")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_strings_never_panic(s in "\\PC{0,300}") {
        check(&s);
    }

    #[test]
    fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..300)) {
        check(&String::from_utf8_lossy(&b));
    }

    #[test]
    fn mutated_profiles_never_panic(
        which in 0..5usize,
        muts in proptest::collection::vec(mutation(), 1..6),
    ) {
        let text = builtin_toml(builtin_names()[which]).unwrap();
        check(&apply(text, &muts));
    }
}
