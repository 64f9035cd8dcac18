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
            "scenario s.toml, line 11: key policy.flet: expected a known policy (android, android-swap, marvin), got \"flet\"",
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
        );
    }
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
