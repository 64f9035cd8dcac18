//! Contract tests of policy parameters: every declared table is well formed, resolution fills
//! defaults, rejects unknown keys, wrong types and out-of-range values naming the key, and the
//! parser never panics (property tests).

use hotlaunch_policy::params::{self, parse_text, resolve, ParamKind};
use hotlaunch_policy::testing::Knobs;
use hotlaunch_policy::{all, resolve_params, ParamSpec, ParamValue, Params, Policy};
use proptest::prelude::*;

fn specs() -> Vec<ParamSpec> {
    Knobs.params()
}

#[test]
fn every_policy_declares_a_valid_table() {
    let mut policies = all();
    policies.push(Box::new(Knobs));
    for p in &policies {
        let specs = p.params();
        for (i, s) in specs.iter().enumerate() {
            assert!(
                !s.name.is_empty() && !s.name.contains('='),
                "{}: name {:?}",
                p.name(),
                s.name
            );
            assert!(
                specs[..i].iter().all(|o| o.name != s.name),
                "{}: duplicate {}",
                p.name(),
                s.name
            );
            assert_eq!(
                s.kind.check(&s.default).as_ref(),
                Ok(&s.default),
                "{}.{}: default",
                p.name(),
                s.name
            );
            assert!(
                !s.about.is_empty() && !s.source.is_empty(),
                "{}.{}: about and source",
                p.name(),
                s.name
            );
        }
        // Defaults resolve, and the label of a default run is the bare name.
        let r = resolve_params(p.as_ref(), &[]).unwrap();
        assert_eq!(r.label(p.name()), p.name());
    }
    // The test policy stays out of the list the command line sees.
    assert!(all().iter().all(|p| p.name() != Knobs::NAME));
}

#[test]
fn resolution_fills_defaults_and_labels_non_defaults() {
    let p = resolve("test-knobs", &specs(), &[("D".into(), ParamValue::Int(3))]).unwrap();
    assert_eq!(p.int("D"), 3);
    assert!(p.bool("on"));
    assert_eq!(p.float("ratio"), 0.5);
    assert_eq!(p.str("codec"), "lz4");
    assert_eq!(p.label("test-knobs"), "test-knobs(D=3)");
    // Setting a default explicitly is not a non-default value; later entries win.
    let p = resolve(
        "test-knobs",
        &specs(),
        &[
            ("D".into(), ParamValue::Int(5)),
            ("D".into(), ParamValue::Int(2)),
            ("ratio".into(), ParamValue::Int(1)),
        ],
    )
    .unwrap();
    assert_eq!(p.label("test-knobs"), "test-knobs(ratio=1.0)");
    assert_eq!(p.float("ratio"), 1.0, "an integer is accepted for a float");
}

#[test]
fn bad_values_name_the_key_and_what_was_expected() {
    let cases: Vec<(&str, ParamValue, &str)> = vec![
        (
            "X",
            ParamValue::Int(1),
            "a parameter of policy test-knobs (on, D, ratio, tag, codec)",
        ),
        ("D", ParamValue::Int(9), "an integer in 1..=8"),
        ("D", ParamValue::Float(2.0), "an integer in 1..=8"),
        ("D", ParamValue::Str("2".into()), "an integer in 1..=8"),
        ("ratio", ParamValue::Float(f64::NAN), "a number in [0, 1]"),
        ("on", ParamValue::Int(1), "a boolean (true or false)"),
        ("codec", ParamValue::Str("gzip".into()), "one of lz4, zstd, lzo"),
        (
            "tag",
            ParamValue::Str(" ".into()),
            "a non-empty single-line string",
        ),
    ];
    for (k, v, expected) in cases {
        let e = resolve("test-knobs", &specs(), &[(k.into(), v.clone())]).unwrap_err();
        assert_eq!(e.key, k);
        assert_eq!(e.expected, expected, "{k} = {v:?}");
        assert!(!e.to_string().contains('\n'));
    }
    let e = resolve("android", &[], &[("D".into(), ParamValue::Int(1))]).unwrap_err();
    assert_eq!(e.expected, "no parameters (policy android has none)");
}

#[test]
fn list_lines_show_type_range_default_unit_and_source() {
    let lines = params::describe(&specs());
    assert_eq!(
        lines[1],
        "D (int, an integer in 1..=8; default 2 pages): an integer [Fleet §5.3.1 style, artifact value D=2]"
    );
    assert_eq!(lines.len(), 5);
}

/// A value of any type, including awkward floats and strings.
fn any_value() -> impl Strategy<Value = ParamValue> {
    prop_oneof![
        any::<bool>().prop_map(ParamValue::Bool),
        any::<i64>().prop_map(ParamValue::Int),
        (-3i64..12).prop_map(ParamValue::Int),
        any::<f64>().prop_map(ParamValue::Float),
        (-0.5f64..1.5).prop_map(ParamValue::Float),
        ".{0,8}".prop_map(ParamValue::Str),
        prop::sample::select(vec!["lz4", "zstd", "lzo", "gzip"]).prop_map(|s| ParamValue::Str(s.into())),
    ]
}

fn any_key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec!["on", "D", "ratio", "tag", "codec"]).prop_map(String::from),
        "[a-zA-Z._=]{0,6}",
    ]
}

/// A valid value for `spec`.
fn valid_value(kind: &ParamKind) -> BoxedStrategy<ParamValue> {
    match kind.clone() {
        ParamKind::Bool => any::<bool>().prop_map(ParamValue::Bool).boxed(),
        ParamKind::Int { min, max } => (min..=max).prop_map(ParamValue::Int).boxed(),
        ParamKind::Float { min, max } => (min..=max).prop_map(ParamValue::Float).boxed(),
        ParamKind::Str => "[a-z][a-z0-9 ]{0,6}".prop_map(ParamValue::Str).boxed(),
        ParamKind::Enum(v) => prop::sample::select(v)
            .prop_map(|s| ParamValue::Str(s.into()))
            .boxed(),
    }
}

fn valid_table() -> impl Strategy<Value = Vec<(String, ParamValue)>> {
    let s = specs();
    let per: Vec<_> = s
        .iter()
        .map(|p| (Just(p.name.clone()), valid_value(&p.kind), any::<bool>()))
        .collect();
    per.prop_map(|v| {
        v.into_iter()
            .filter(|(_, _, keep)| *keep)
            .map(|(k, v, _)| (k, v))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Arbitrary tables never panic; an error names one of the given keys, and succeeds iff every
    /// entry is valid on its own.
    #[test]
    fn arbitrary_tables_never_panic(table in prop::collection::vec((any_key(), any_value()), 0..6)) {
        let s = specs();
        let each_ok = table.iter().all(|(k, v)| {
            s.iter().find(|p| p.name == *k).map(|p| p.kind.check(v).is_ok()).unwrap_or(false)
        });
        match resolve("test-knobs", &s, &table) {
            Ok(p) => {
                prop_assert!(each_ok);
                prop_assert_eq!(p.iter().count(), s.len());
            }
            Err(e) => {
                prop_assert!(!each_ok);
                prop_assert!(table.iter().any(|(k, _)| *k == e.key), "error names a given key: {}", e);
                prop_assert!(!e.to_string().contains('\n'));
            }
        }
    }

    /// Valid tables resolve to exactly the given values (defaults elsewhere), and the values
    /// round-trip through their command-line text (`--param policy.key=<Display>`).
    #[test]
    fn valid_tables_round_trip(table in valid_table()) {
        let s = specs();
        let p = resolve("test-knobs", &s, &table).unwrap();
        for spec in &s {
            let want = table
                .iter()
                .find(|(k, _)| *k == spec.name)
                .map(|(_, v)| spec.kind.check(v).unwrap())
                .unwrap_or_else(|| spec.default.clone());
            prop_assert_eq!(p.get(&spec.name), Some(&want));
            let text = want.to_string();
            prop_assert_eq!(parse_text("test-knobs", &s, &spec.name, &text).unwrap(), want.clone());
        }
        // The label lists exactly the non-default values, and resolving them again gives the same.
        let again: Vec<(String, ParamValue)> = p.non_default().map(|(k, v)| (k.to_string(), v.clone())).collect();
        prop_assert_eq!(resolve("test-knobs", &s, &again).unwrap(), p);
    }

    /// Command-line text never panics; errors name the key.
    #[test]
    fn arbitrary_text_never_panics(key in any_key(), text in ".{0,12}") {
        if let Err(e) = parse_text("test-knobs", &specs(), &key, &text) {
            prop_assert_eq!(e.key, key);
        }
    }
}

#[test]
fn sub_tables_strip_the_prefix() {
    let mut s = specs();
    for p in &mut s {
        p.name = format!("knobs.{}", p.name);
    }
    let p: Params = resolve("unified", &s, &[("knobs.D".into(), ParamValue::Int(4))]).unwrap();
    let sub = p.sub("knobs");
    assert_eq!(sub.int("D"), 4);
    assert_eq!(sub.label("knobs"), "knobs(D=4)");
    assert!(p.sub("other").is_empty());
}

#[test]
fn a_from_default_registry_entry_is_its_policy() {
    use hotlaunch_policy::{FromDefault, Policy};
    fn shareable<T: Send + Sync>(_: &T) {}
    // A policy carrying an Rc probe is still registrable through its type.
    let entry = FromDefault::<hotlaunch_policy::fleet::Fleet>::new();
    shareable(&entry);
    let plain = hotlaunch_policy::fleet::Fleet::default();
    assert_eq!(entry.name(), plain.name());
    assert_eq!(entry.description(), plain.description());
    let names = |v: Vec<hotlaunch_policy::ParamSpec>| v.into_iter().map(|p| p.name).collect::<Vec<_>>();
    assert_eq!(names(entry.params()), names(plain.params()));
}

#[test]
fn seconds_parameters_convert_to_rounded_nanoseconds() {
    let p = resolve_params(&Knobs, &[("ratio".to_string(), ParamValue::Float(0.3))]).unwrap();
    assert_eq!(p.secs("ratio"), 300_000_000);
}
