//! `[policy.<name>]` and `[variants.params.<name>]` tables: their shape is checked, every value
//! keeps its line, nested tables flatten into dotted keys, and no input panics.

use hotlaunch_workload::policy_tables::key_line;
use hotlaunch_workload::scenario::{ParamEntry, ScalarValue, Scenario};
use proptest::prelude::*;

const HEAD: &str = r#"name = "t"
device = "pixel3"
[apps]
names = ["YouTube"]
[workload]
kind = "round-robin"
"#;

fn parse(tail: &str) -> Result<Scenario, String> {
    Scenario::from_toml_str(&format!("{HEAD}{tail}"), "s.toml").map_err(|e| e.to_string())
}

fn entry(key: &str, value: ScalarValue, line: usize) -> ParamEntry {
    ParamEntry {
        key: key.into(),
        value,
        line: Some(line),
    }
}

#[test]
fn top_level_tables_keep_values_and_lines() {
    let s = parse(
        "[policy.fleet]\nD = 3\nratio = 0.5\non = true\ncodec = \"zstd\"\n[policy.unified]\nfleet.D = 2\n[policy.unified.marvin]\nT = 5\n",
    )
    .unwrap();
    assert_eq!(s.policy_params.len(), 2);
    let f = &s.policy_params[0];
    assert_eq!(
        (f.policy.as_str(), f.path.as_str(), f.line),
        ("fleet", "policy.fleet", Some(7))
    );
    assert_eq!(
        f.entries,
        vec![
            entry("D", ScalarValue::Int(3), 8),
            entry("codec", ScalarValue::Str("zstd".into()), 11),
            entry("on", ScalarValue::Bool(true), 10),
            entry("ratio", ScalarValue::Float(0.5), 9),
        ],
        "keys in TOML table order (sorted)"
    );
    let u = &s.policy_params[1];
    assert_eq!(
        u.entries,
        vec![
            entry("fleet.D", ScalarValue::Int(2), 13),
            entry("marvin.T", ScalarValue::Int(5), 15)
        ]
    );
}

#[test]
fn variant_tables_are_per_variant_with_their_own_lines() {
    let s = parse(
        "[[variants]]\nname = \"a\"\npolicy = \"fleet\"\n[variants.params.fleet]\nD = 1\n\
         [[variants]]\nname = \"b\"\npolicy = \"fleet\"\nparams.fleet.D = 4\n\
         [[variants]]\nname = \"c\"\npolicy = \"fleet\"\n[variants.params.fleet]\nD = 5\n",
    )
    .unwrap();
    let lines: Vec<(String, Option<usize>, Vec<ParamEntry>)> = s
        .variants
        .iter()
        .flat_map(|v| {
            v.params
                .iter()
                .map(|t| (t.path.clone(), t.line, t.entries.clone()))
        })
        .collect();
    assert_eq!(
        lines,
        vec![
            (
                "variants[0].params.fleet".into(),
                Some(10),
                vec![entry("D", ScalarValue::Int(1), 11)]
            ),
            // A table written only as dotted keys has no header: its variant's line.
            (
                "variants[1].params.fleet".into(),
                Some(12),
                vec![entry("D", ScalarValue::Int(4), 15)]
            ),
            (
                "variants[2].params.fleet".into(),
                Some(19),
                vec![entry("D", ScalarValue::Int(5), 20)]
            ),
        ]
    );
    assert!(parse("[policy]\n").unwrap().policy_params.is_empty());
}

#[test]
fn bad_shapes_are_one_line_errors_naming_line_and_key() {
    let cases = [
        (
            "[policy.fleet]\nD = [1, 2]\n",
            "scenario s.toml, line 8: key policy.fleet.D: expected a boolean, integer, float or string, got an array",
        ),
        (
            "[policy]\nfleet = 3\n",
            "scenario s.toml, line 8: key policy.fleet: expected a table of parameters ([policy.fleet]), got an integer",
        ),
        (
            "[policy.fleet]\nwhen = 1979-05-27\n",
            "scenario s.toml, line 8: key policy.fleet.when: expected a boolean, integer, float or string, got a datetime",
        ),
        (
            "[[variants]]\nname = \"a\"\n[variants.params.fleet]\nD = { x = [1] }\n",
            "scenario s.toml, line 10: key variants[0].params.fleet.D.x: expected a boolean, integer, float or string, got an array",
        ),
        (
            "[policy.\"\"]\nD = 1\n",
            "scenario s.toml, line 7: key policy.: expected a policy name, got \"\"",
        ),
    ];
    for (tail, want) in cases {
        assert_eq!(parse(tail).unwrap_err(), want, "{tail}");
    }
}

#[test]
fn key_lines_fall_back_to_the_closest_written_parent() {
    let text = "a = 1\n[policy.fleet]\nD = 1\ninline = { x = 1 }\n";
    assert_eq!(key_line(text, "policy.fleet.D"), Some(3));
    assert_eq!(key_line(text, "policy.fleet.inline.x"), Some(4));
    assert_eq!(key_line(text, "policy.fleet.missing"), Some(2));
    assert_eq!(key_line(text, "other.x"), None);
}

fn toml_value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<bool>().prop_map(|b| b.to_string()),
        any::<i64>().prop_map(|x| x.to_string()),
        (-1e6f64..1e6).prop_map(|x| format!("{x:?}")),
        "[a-z ]{0,6}".prop_map(|s| format!("{s:?}")),
        Just("[1, 2]".to_string()),
        Just("{ y = 1 }".to_string()),
        Just("1979-05-27".to_string()),
    ]
}

proptest! {
    /// Arbitrary `[policy.<name>]` tables never panic; scalar ones round-trip with their lines.
    #[test]
    fn arbitrary_tables_never_panic(
        name in "[a-z][a-z-]{0,8}",
        kv in prop::collection::btree_map("[a-zA-Z_][a-zA-Z0-9_]{0,6}", toml_value(), 0..6),
    ) {
        let body: String = kv.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
        match parse(&format!("[policy.{name}]\n{body}")) {
            Ok(s) => {
                let t = &s.policy_params[0];
                prop_assert_eq!(&t.policy, &name);
                prop_assert_eq!(t.line, Some(7));
                for e in &t.entries {
                    let line = e.line.expect("line");
                    let (k0, _) = e.key.split_once('.').unwrap_or((&e.key, ""));
                    let written = kv.keys().position(|k| k == k0).expect("written key") + 8;
                    prop_assert_eq!(line, written);
                    if let (ScalarValue::Int(x), Some(w)) = (&e.value, kv.get(&e.key)) {
                        prop_assert_eq!(w, &x.to_string());
                    }
                }
            }
            Err(e) => {
                prop_assert!(!e.contains('\n'));
                prop_assert!(e.contains(&format!("key policy.{name}.")), "{}", e);
            }
        }
    }
}
