//! Policy parameters end to end: scenario tables, variant tables and `--param` resolve against
//! the policy's table before anything runs; labels and JSON carry them; bad input is a one-line
//! error naming the file, the line and the key (never a panic), from the library and the CLI.

use hotlaunch::{plan_runs_with, simulate, RunPlan, RunSpec};
use policy::testing;
use proptest::prelude::*;
use std::process::Command;
use workload::scenario::Scenario;

const HEAD: &str = r#"name = "t"
device = "pixel3"
swap = "zram"
[apps]
names = ["YouTube"]
[workload]
kind = "script"
[[workload.events]]
launch = "YouTube"
use_s = 5
"#;

fn plan(tail: &str, policies: &[&str], cli: &[&str]) -> Result<Vec<RunPlan>, String> {
    let s = Scenario::from_toml_str(&format!("{HEAD}{tail}"), "s.toml").map_err(|e| e.to_string())?;
    let r = s.resolve().map_err(|e| e.to_string())?;
    let policies: Vec<String> = policies.iter().map(|s| s.to_string()).collect();
    let cli: Vec<String> = cli.iter().map(|s| s.to_string()).collect();
    plan_runs_with(&r, &policies, &cli, &testing::by_name).map_err(|e| format!("{e:#}"))
}

#[test]
fn tables_variants_and_cli_resolve_in_that_order() {
    let p = plan(
        "[policy.test-knobs]\nD = 3\nratio = 1\n",
        &["test-knobs", "android"],
        &[],
    )
    .unwrap();
    assert_eq!(p[0].label, "test-knobs(D=3,ratio=1.0)");
    assert_eq!(p[0].params.int("D"), 3);
    assert_eq!(p[1].label, "android");
    assert!(p[1].params.is_empty());

    let p = plan(
        "[policy.test-knobs]\nD = 3\n",
        &["test-knobs"],
        &["test-knobs.D=4", "test-knobs.codec=zstd"],
    )
    .unwrap();
    assert_eq!(p[0].label, "test-knobs(D=4,codec=zstd)");

    let variants = "[policy.test-knobs]\nD = 3\non = false\n\
        [[variants]]\nname = \"plain\"\npolicy = \"test-knobs\"\n\
        [[variants]]\nname = \"tuned\"\npolicy = \"test-knobs\"\n[variants.params.test-knobs]\nD = 7\n";
    let p = plan(variants, &[], &[]).unwrap();
    let got: Vec<(String, i64, bool)> = p
        .iter()
        .map(|r| (r.label.clone(), r.params.int("D"), r.params.bool("on")))
        .collect();
    assert_eq!(
        got,
        vec![("plain".to_string(), 3, false), ("tuned".to_string(), 7, false)],
        "variants keep their names as labels; a variant table overrides the scenario's key by key"
    );
    let p = plan(variants, &[], &["test-knobs.D=1"]).unwrap();
    assert!(
        p.iter().all(|r| r.params.int("D") == 1),
        "the command line overrides both"
    );
}

#[test]
fn bad_tables_name_file_line_and_key() {
    let cases = [
        (
            "[policy.test-knobs]\nD = 12\n",
            "scenario s.toml, line 12: key policy.test-knobs.D: expected an integer in 1..=8, got the integer 12",
        ),
        (
            "[policy.test-knobs]\nD = 2\nDD = 2\n",
            "scenario s.toml, line 13: key policy.test-knobs.DD: expected a parameter of policy test-knobs \
             (on, D, ratio, tag, codec), got unknown key \"DD\"",
        ),
        (
            "[policy.test-knobs]\non = \"yes\"\n",
            "scenario s.toml, line 12: key policy.test-knobs.on: expected a boolean (true or false), got the string \"yes\"",
        ),
        (
            "[policy.flet]\nD = 2\n",
            "scenario s.toml, line 11: key policy.flet: expected a known policy (KNOWN), got \"flet\"",
        ),
        (
            "[policy.android]\nD = 2\n",
            "scenario s.toml, line 12: key policy.android.D: expected no parameters (policy android has none), \
             got unknown key \"D\"",
        ),
        (
            "[[variants]]\nname = \"v\"\npolicy = \"android\"\n[variants.params.test-knobs]\nD = 2\n",
            "scenario s.toml, line 14: key variants[0].params.test-knobs: expected parameters of android, \
             the policy this variant runs, got test-knobs",
        ),
        (
            "[[variants]]\nname = \"v\"\npolicy = \"test-knobs\"\n[variants.params.test-knobs]\ncodec = \"gz\"\n",
            "scenario s.toml, line 15: key variants[0].params.test-knobs.codec: expected one of lz4, zstd, lzo, \
             got the string \"gz\"",
        ),
    ];
    for (tail, want) in cases {
        // A table is checked even when its policy does not run.
        assert_eq!(
            plan(tail, &["android"], &[]).err().as_deref().unwrap_or("ok"),
            want.replace("  ", "")
                .replace("KNOWN", &policy::names().join(", "))
        );
    }
}

#[test]
fn marvin_table_errors_name_file_line_and_key() {
    // Issue 16: unknown keys, a zero threshold and negative periods in `[policy.marvin]`.
    let cases = [
        (
            "bogus = 1",
            "key policy.marvin.bogus: expected a parameter of policy marvin (",
        ),
        (
            "stub_threshold = 0",
            "key policy.marvin.stub_threshold: expected an integer in 1..=1073741824, got the integer 0",
        ),
        (
            "bg_period_s = -5.0",
            "key policy.marvin.bg_period_s: expected a number in [0.1, 86400], got the float -5",
        ),
        (
            "fg_period_s = -1",
            "key policy.marvin.fg_period_s: expected a number in [0.1, 86400], got the integer -1",
        ),
    ];
    for (line, want) in cases {
        let e = plan(&format!("[policy.marvin]\n{line}\n"), &["android"], &[])
            .err()
            .unwrap_or_default();
        assert!(!e.contains('\n'), "{e}");
        assert!(e.starts_with("scenario s.toml, line 12: "), "{e}");
        assert!(e.contains(want), "{e}");
    }
}

#[test]
fn ariadne_chunk_sizes_are_checked_before_any_run() {
    let sizes = "chunk sizes grow from hot to cold";
    let cases = [
        (
            "[policy.ariadne]\nsmall_bytes = 1000\n",
            "line 12: key policy.ariadne.small_bytes: expected a chunk size that is a power of two in \
             128..=131072 bytes, got the integer 1000"
                .to_string(),
        ),
        (
            "[policy.ariadne]\nlarge_bytes = 262144\n",
            "line 12: key policy.ariadne.large_bytes: expected a chunk size that is a power of two in \
             128..=131072 bytes, got the integer 262144"
                .to_string(),
        ),
        (
            "[policy.ariadne]\nsmall_bytes = 65536\n",
            format!("line 12: key policy.ariadne.small_bytes: expected small_bytes (65536) <= medium_bytes (2048): {sizes}, got the integer 65536"),
        ),
        (
            "[policy.ariadne]\nmedium_bytes = 512\n",
            format!("line 12: key policy.ariadne.medium_bytes: expected small_bytes (1024) <= medium_bytes (512): {sizes}, got the integer 512"),
        ),
    ];
    for (tail, want) in cases {
        let got = plan(tail, &["ariadne"], &[]).err().unwrap_or_default();
        assert_eq!(got, format!("scenario s.toml, {want}"));
    }
    let got = plan("", &["ariadne"], &["ariadne.large_bytes=200"])
        .err()
        .unwrap_or_default();
    assert_eq!(
        got,
        "--param ariadne.large_bytes: expected a chunk size that is a power of two in 128..=131072 bytes, \
         got the integer 200"
    );
}

#[test]
fn bad_command_line_parameters_name_the_argument() {
    let cases = [
        ("test-knobs.D=x", "--param \"test-knobs.D=x\": key D: expected an integer in 1..=8, got \"x\""),
        ("test-knobs.D", "--param \"test-knobs.D\": expected <policy>.<key>=<value>"),
        ("D=3", "--param \"D=3\": expected <policy>.<key>=<value>"),
        ("fleet.D=3", "--param \"fleet.D=3\": no run uses policy \"fleet\" (runs: test-knobs)"),
        (
            "test-knobs.E=3",
            "--param \"test-knobs.E=3\": key E: expected a parameter of policy test-knobs (on, D, ratio, tag, codec), \
             got unknown key \"E\"",
        ),
    ];
    for (arg, want) in cases {
        assert_eq!(
            plan("", &["test-knobs"], &[arg]).err().as_deref().unwrap_or("ok"),
            want.replace("  ", "")
                .replace("KNOWN", &policy::names().join(", "))
        );
    }
}

#[test]
fn the_report_records_resolved_parameters() {
    let plans = plan("", &["test-knobs", "android"], &["test-knobs.ratio=0.25"]).unwrap();
    let s = Scenario::from_toml_str(HEAD, "s.toml")
        .unwrap()
        .resolve()
        .unwrap();
    let rep = simulate(&RunSpec::from_scenario(&s), &plans, |_, _, _| {}).unwrap();
    let json: serde_json::Value = serde_json::from_str(&report::to_json_string(&rep)).unwrap();
    let knobs = &json["policies"][0];
    assert_eq!(knobs["policy"], "test-knobs(ratio=0.25)");
    assert_eq!(
        knobs["params"],
        serde_json::json!({"on": true, "D": 2, "ratio": 0.25, "tag": "x", "codec": "lz4"})
    );
    assert!(
        json["policies"][1].get("params").is_none(),
        "no key for a policy without parameters"
    );
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<bool>().prop_map(|b| b.to_string()),
        (-20i64..20).prop_map(|x| x.to_string()),
        any::<i64>().prop_map(|x| x.to_string()),
        (-2f64..2.0).prop_map(|x| format!("{x:?}")),
        prop::sample::select(vec!["\"lz4\"", "\"zstd\"", "\"gz\"", "\"\"", "\"x y\""]).prop_map(String::from),
        Just("[1]".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Arbitrary tables never panic; an error is one line naming the file and a key of the
    /// table; success gives exactly the written values.
    #[test]
    fn arbitrary_tables_never_panic(
        kv in prop::collection::btree_map(
            prop::sample::select(vec!["on", "D", "ratio", "tag", "codec", "X", "d"]),
            value(),
            0..5,
        ),
    ) {
        let body: String = kv.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
        match plan(&format!("[policy.test-knobs]\n{body}"), &["test-knobs"], &[]) {
            Ok(p) => {
                for (k, v) in &kv {
                    let got = p[0].params.get(k).expect("declared").to_string();
                    let written = v.trim_matches('"');
                    prop_assert!(got == written || got.parse::<f64>().ok() == written.parse::<f64>().ok(),
                        "{} = {} resolved to {}", k, v, got);
                }
            }
            Err(e) => {
                prop_assert!(!e.contains('\n'));
                prop_assert!(e.starts_with("scenario s.toml"), "{}", e);
                prop_assert!(kv.keys().any(|k| e.contains(&format!("key policy.test-knobs.{k}:"))), "{}", e);
            }
        }
    }
}

fn hotlaunch(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hotlaunch"))
        .args(args)
        .output()
        .expect("run hotlaunch");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_command_line_rejects_bad_parameters_in_one_line() {
    let dir = std::env::temp_dir().join(format!("hotlaunch-params-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad-param.toml");
    std::fs::write(&path, format!("{HEAD}[policy.android]\nzram_ratio = 2\n")).unwrap();
    let (code, err) = hotlaunch(&["run", path.to_str().unwrap()]);
    assert!(code != 0 && code != 101, "fails without panicking: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("bad-param.toml, line 12: key policy.android.zram_ratio"),
        "{err}"
    );

    let (code, err) = hotlaunch(&["run", "fleet-fig2-twitter", "--param", "android.D=3"]);
    assert!(code != 0 && code != 101, "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("--param \"android.D=3\": key D"), "{err}");
}

/// ISMM'15 `regions`: a region order outside 5..8 or an unknown key, in a scenario table or on
/// the command line, is a one-line error naming the place before anything runs.
#[test]
fn regions_order_outside_5_to_8_and_unknown_keys_are_one_line_errors() {
    for (tail, want) in [
        (
            "[policy.regions]\norder = 4\n",
            "line 12: key policy.regions.order: expected an integer in 5..=8, got the integer 4",
        ),
        (
            "[policy.regions]\norder = 9\n",
            "line 12: key policy.regions.order: expected an integer in 5..=8, got the integer 9",
        ),
        (
            "[policy.regions]\nregion_order = 6\n",
            "line 12: key policy.regions.region_order: expected a parameter of policy regions",
        ),
    ] {
        let e = plan(tail, &["regions"], &[]).err().unwrap_or_default();
        assert!(
            e.starts_with("scenario s.toml, ") && e.contains(want) && !e.contains('\n'),
            "{e}"
        );
    }
    let e = plan("", &["regions"], &["regions.order=3"])
        .err()
        .unwrap_or_default();
    assert!(
        e.contains("--param \"regions.order=3\": key order") && !e.contains('\n'),
        "{e}"
    );
}
