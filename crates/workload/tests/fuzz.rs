//! Mutation fuzzing of the scenario and app-profile parsers (issue 13): line-level mutations of
//! the built-in files. Parsing and resolving never panic, errors are one line naming the file,
//! and every input is handled within a time cap.
//!
//! Short run in the test suite; long run (documented in docs/scenario.md):
//! `PROPTEST_CASES=200000 cargo test --release -p hotlaunch-workload --test fuzz`.

use cpu_time::ThreadTime;
use hotlaunch_workload::scenario::{builtin_names, builtin_toml, Scenario};
use proptest::prelude::*;
use std::time::Duration;

/// Per-input cap on the test thread's CPU time (resolving generates the timeline, up to 10^6
/// launches). CPU time, not wall time: a loaded CI host must not turn a slow moment into a hang.
const CAP: Duration = Duration::from_secs(5);

#[derive(Debug, Clone)]
enum Mutation {
    Drop(usize),
    Duplicate(usize),
    Alter(usize, String),
    Replace(usize, String),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let value = prop_oneof![
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("1e9".to_string()),
        Just("1e300".to_string()),
        Just("nan".to_string()),
        Just("\"\"".to_string()),
        Just("\"/dev/zero\"".to_string()),
        Just("[]".to_string()),
        Just("1000000".to_string()),
        Just("\"fleet-4096\"".to_string()),
        "[a-z0-9\"./ ]{0,12}",
    ];
    prop_oneof![
        any::<usize>().prop_map(Mutation::Drop),
        any::<usize>().prop_map(Mutation::Duplicate),
        (any::<usize>(), value).prop_map(|(i, v)| Mutation::Alter(i, v)),
        (any::<usize>(), "[ -~]{0,30}").prop_map(|(i, v)| Mutation::Replace(i, v)),
    ]
}

fn apply(text: &str, muts: &[Mutation]) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
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
                let l = &mut lines[i % n];
                if let Some(eq) = l.find('=') {
                    *l = format!("{}= {v}", &l[..eq]);
                }
            }
            Mutation::Replace(i, v) => lines[i % n] = v.clone(),
        }
    }
    lines.join("\n")
}

fn one_line(msg: &str, file: &str) {
    assert!(
        !msg.contains('\n') && !msg.contains('\r'),
        "multi-line error: {msg:?}"
    );
    assert!(msg.contains(file), "{msg}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn scenario_parser_and_resolver_never_panic(
        which in 0usize..64,
        muts in proptest::collection::vec(mutation(), 1..4),
    ) {
        let names = builtin_names();
        let text = apply(builtin_toml(names[which % names.len()]).unwrap(), &muts);
        let t = ThreadTime::now();
        match Scenario::from_toml_str(&text, "fuzz.toml") {
            Err(e) => one_line(&e.to_string(), "fuzz.toml"),
            Ok(s) => {
                if let Err(e) = s.resolve() {
                    one_line(&e.to_string(), "fuzz.toml");
                }
            }
        }
        prop_assert!(t.elapsed() < CAP, "took {:?}", t.elapsed());
    }

    #[test]
    fn app_parser_never_panics(
        which in 0usize..64,
        muts in proptest::collection::vec(mutation(), 1..4),
    ) {
        let names = apps::builtin_names();
        let text = apply(apps::builtin_toml(names[which % names.len()]).unwrap(), &muts);
        let t = ThreadTime::now();
        if let Err(e) = apps::AppProfile::from_toml_str(&text, "fuzz.toml") {
            one_line(&e.to_string(), "fuzz.toml");
        }
        prop_assert!(t.elapsed() < CAP, "took {:?}", t.elapsed());
    }
}
