//! Which runs a scenario asks for, each with its policy, resolved policy parameters and swap
//! overrides: [`plan_runs`].
//!
//! Parameters come from three places, later ones overriding earlier ones key by key: the
//! scenario's `[policy.<name>]` tables, the running variant's `[variants.params.<name>]` tables,
//! and the command line's `--param <name>.<key>=<value>`. Every table is checked against its
//! policy's parameter table before anything runs, whether or not that policy runs (a typo in a
//! table is an error, not a silent default); errors are one line naming the file, the line, the
//! dotted key and what was expected.

use policy::{ParamValue, Params, SwapDevices, SwapOverrides};
use workload::scenario::{PolicyTable, ResolvedScenario, ScalarValue, ScenarioError, SwapMode, Variant};

/// One run to do: a label, the policy with its resolved parameters and the swap overrides. The
/// label is the variant's name for a variant, else the policy's name with its non-default
/// parameters (`fleet(D=3)`).
pub struct RunPlan {
    pub label: String,
    pub policy: policy::PolicyBox,
    pub params: Params,
    pub swap: SwapOverrides,
    /// The variant's `all_in_dram`: no swap (already in `swap`) and no cached-app compaction
    /// (applied by [`crate::RunSpec::for_plan`]).
    pub all_in_dram: bool,
    /// The variant's `lmk_minfree` (pages), applied by [`crate::RunSpec::for_plan`].
    pub lmk_minfree: Option<[u64; 6]>,
}

/// Finds a policy by name (the built-in list, or more in tests).
pub type Lookup<'a> = &'a dyn Fn(&str) -> Result<policy::PolicyBox, String>;

/// For each plan, the first earlier plan whose runs are the same computation (`None`: its own
/// runs): the same policy once a composition is resolved to the policy it builds exactly
/// ([`policy::Policy::runs_as`], e.g. `unified` with only its MemSaver part on is `memsaver`), the
/// same parameter values, swap overrides, all-in-DRAM switch and lmkd minfree. A run is a pure
/// function of those and its spec and seed, so such a plan's results are the earlier plan's and
/// `compare` runs it once.
pub fn same_runs(plans: &[&RunPlan], device: &device::DeviceProfile) -> anyhow::Result<Vec<Option<usize>>> {
    let resolved: Vec<(&str, Params)> = plans
        .iter()
        .map(|p| {
            let as_other = p
                .policy
                .runs_as(device, p.swap, &p.params)
                .map_err(|e| anyhow::anyhow!("{}: {e}", p.label))?;
            Ok(as_other.unwrap_or_else(|| (p.policy.name(), p.params.clone())))
        })
        .collect::<anyhow::Result<_>>()?;
    let same = |i: usize, j: usize| {
        let (a, b) = (plans[i], plans[j]);
        resolved[i].0 == resolved[j].0
            && resolved[i].1.same_values(&resolved[j].1)
            && a.swap == b.swap
            && a.all_in_dram == b.all_in_dram
            && a.lmk_minfree == b.lmk_minfree
    };
    Ok((0..plans.len()).map(|i| (0..i).find(|&j| same(i, j))).collect())
}

fn swap_devices(m: SwapMode) -> SwapDevices {
    match m {
        SwapMode::None => SwapDevices::None,
        SwapMode::Zram => SwapDevices::Zram,
        SwapMode::Flash => SwapDevices::Flash,
        SwapMode::ZramFlash => SwapDevices::ZramFlash,
    }
}

/// The runs a scenario asks for: `policies` if given (e.g. from the command line), else the
/// scenario's variants, else its policies, else `android`; no command-line parameters.
pub fn plan_runs(r: &ResolvedScenario, policies: &[String]) -> anyhow::Result<Vec<RunPlan>> {
    plan_runs_with(r, policies, &[], &policy::by_name)
}

/// [`plan_runs`] with command-line parameters (`fleet.D=3`, each applied to every run of that
/// policy) and a policy lookup. Named `policies` on a scenario with `[[variants]]` are refused:
/// they would silently run a different experiment (the variants' swap and parameters dropped).
pub fn plan_runs_with(
    r: &ResolvedScenario,
    policies: &[String],
    cli_params: &[String],
    lookup: Lookup,
) -> anyhow::Result<Vec<RunPlan>> {
    // Every table is checked first, so a mistake in one is reported before the refusal.
    let plans = plan_policies_beside_variants(r, policies, cli_params, lookup)?;
    if !policies.is_empty() && !r.variants.is_empty() {
        let names: Vec<&str> = r.variants.iter().map(|v| v.name.as_str()).collect();
        anyhow::bail!(
            "scenario {} ({}) defines [[variants]] ({}) that naming policies would drop; run it \
             without naming policies (its variants run), or with `hotlaunch compare` (policies and \
             variants side by side)",
            r.name,
            r.origin,
            names.join(", ")
        );
    }
    Ok(plans)
}

/// [`plan_runs_with`] for callers that run a scenario's variants themselves, as separate rows
/// (`hotlaunch compare`): named `policies` run with the scenario's own swap settings.
pub fn plan_policies_beside_variants(
    r: &ResolvedScenario,
    policies: &[String],
    cli_params: &[String],
    lookup: Lookup,
) -> anyhow::Result<Vec<RunPlan>> {
    let base = SwapOverrides {
        devices: r.swap.map(swap_devices),
        zram_mb: r.zram_mb,
        flash_mb: r.flash_mb,
    };
    // (policy name, variant index, swap overrides) of each run.
    // The policy a variant runs: its own, else the scenario's first, else `android`.
    let variant_policy = |v: &Variant| {
        v.policy
            .clone()
            .or_else(|| r.policies.first().cloned())
            .unwrap_or_else(|| "android".into())
    };
    // (policy name, variant index, swap overrides) of each run.
    let runs: Vec<(String, Option<usize>, SwapOverrides)> = if !policies.is_empty() {
        policies.iter().map(|n| (n.clone(), None, base)).collect()
    } else if !r.variants.is_empty() {
        r.variants
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let swap = SwapOverrides {
                    devices: if v.all_in_dram {
                        Some(SwapDevices::None)
                    } else {
                        v.swap.or(r.swap).map(swap_devices)
                    },
                    zram_mb: v.zram_mb.or(r.zram_mb),
                    flash_mb: r.flash_mb,
                };
                (variant_policy(v), Some(i), swap)
            })
            .collect()
    } else if r.policies.is_empty() {
        vec![("android".to_string(), None, base)]
    } else {
        r.policies.iter().map(|n| (n.clone(), None, base)).collect()
    };
    // An unknown name is reported where the user wrote it: the scenario's `policies` or a
    // variant's `policy` key (a command-line name has no place, only the name).
    let known = |n: &str, variant: Option<usize>| {
        lookup(n).map_err(|e| -> anyhow::Error {
            let expected = format!("a known policy ({})", policy::names().join(", "));
            match variant {
                Some(i) if r.variants[i].policy.as_deref() == Some(n) => {
                    let key = format!("variants[{i}].policy");
                    invalid(r, r.variants[i].policy_line, &key, &expected, n).into()
                }
                _ if policies.is_empty() && r.policies.iter().any(|p| p == n) => {
                    invalid(r, r.policies_line, "policies", &expected, n).into()
                }
                _ => anyhow::Error::msg(e),
            }
        })
    };

    // Check every table on its own, so each error names its own line.
    for t in &r.policy_params {
        checked_table(r, t, lookup)?;
    }
    for v in &r.variants {
        let p = variant_policy(v);
        for t in &v.params {
            if t.policy != p {
                let expected = format!("parameters of {p}, the policy this variant runs");
                return Err(invalid(r, t.line, &t.path, &expected, &t.policy).into());
            }
            checked_table(r, t, lookup)?;
        }
    }
    let cli = cli_entries(cli_params, &runs, lookup)?;

    runs.into_iter()
        .map(|(name, variant, swap)| {
            let policy = known(&name, variant)?;
            let mut given: Vec<(String, ParamValue)> = Vec::new();
            let variant_tables = variant.map(|i| r.variants[i].params.as_slice()).unwrap_or(&[]);
            for t in r
                .policy_params
                .iter()
                .chain(variant_tables)
                .filter(|t| t.policy == name)
            {
                given.extend(t.entries.iter().map(|e| (e.key.clone(), value(&e.value))));
            }
            given.extend(
                cli.iter()
                    .filter(|(p, _, _)| *p == name)
                    .map(|(_, k, v)| (k.clone(), v.clone())),
            );
            let params = policy::resolve_params(policy.as_ref(), &given)
                .map_err(|e| anyhow::anyhow!("policy {name}: {e}"))?;
            if let Err((key, expected)) = policy.check_params(&params) {
                let got = params.get(key).map(|v| v.describe()).unwrap_or_default();
                // Where the value was set: the last scenario entry for it, or the command line.
                let at = r
                    .policy_params
                    .iter()
                    .chain(variant_tables)
                    .filter(|t| t.policy == name)
                    .flat_map(|t| t.entries.iter().map(move |e| (t, e)))
                    .rfind(|(_, e)| e.key == key);
                let from_cli = cli.iter().any(|(p, k, _)| *p == name && k == key);
                return Err(match at {
                    _ if from_cli => anyhow::anyhow!("--param {name}.{key}: expected {expected}, got {got}"),
                    Some((t, e)) => invalid(r, e.line, &format!("{}.{key}", t.path), &expected, &got).into(),
                    // A default that the other values make invalid.
                    None => invalid(
                        r,
                        None,
                        &format!("policy.{name}.{key} (default)"),
                        &expected,
                        &got,
                    )
                    .into(),
                });
            }
            let label = match variant {
                Some(i) => r.variants[i].name.clone(),
                None => params.label(&name),
            };
            Ok(RunPlan {
                label,
                policy,
                params,
                swap,
                all_in_dram: variant.is_some_and(|i| r.variants[i].all_in_dram),
                lmk_minfree: variant.and_then(|i| r.variants[i].lmk_minfree),
            })
        })
        .collect()
}

fn value(v: &ScalarValue) -> ParamValue {
    match v {
        ScalarValue::Bool(b) => ParamValue::Bool(*b),
        ScalarValue::Int(x) => ParamValue::Int(*x),
        ScalarValue::Float(x) => ParamValue::Float(*x),
        ScalarValue::Str(s) => ParamValue::Str(s.clone()),
    }
}

fn invalid(r: &ResolvedScenario, line: Option<usize>, key: &str, expected: &str, got: &str) -> ScenarioError {
    ScenarioError::Invalid {
        origin: r.origin.clone(),
        line,
        key: key.to_string(),
        expected: expected.to_string(),
        got: got.to_string(),
    }
}

/// Checks one table against its policy (unknown policy, unknown key, wrong type, out of range).
fn checked_table(r: &ResolvedScenario, t: &PolicyTable, lookup: Lookup) -> Result<(), ScenarioError> {
    let p = lookup(&t.policy).map_err(|_| {
        let names = policy::names().join(", ");
        invalid(
            r,
            t.line,
            &t.path,
            &format!("a known policy ({names})"),
            &format!("{:?}", t.policy),
        )
    })?;
    let specs = p.params();
    for e in &t.entries {
        let one = [(e.key.clone(), value(&e.value))];
        policy::params::resolve(&t.policy, &specs, &one).map_err(|err| {
            invalid(
                r,
                e.line,
                &format!("{}.{}", t.path, e.key),
                &err.expected,
                &err.got,
            )
        })?;
    }
    Ok(())
}

/// `policy.key=value` arguments: (policy, key, checked value). The policy must be one of the runs.
fn cli_entries(
    args: &[String],
    runs: &[(String, Option<usize>, SwapOverrides)],
    lookup: Lookup,
) -> anyhow::Result<Vec<(String, String, ParamValue)>> {
    let mut out = Vec::with_capacity(args.len());
    for a in args {
        let bad = |what: &str| anyhow::anyhow!("--param {a:?}: {what}");
        let (lhs, text) = a
            .split_once('=')
            .ok_or_else(|| bad("expected <policy>.<key>=<value>"))?;
        let (name, key) = lhs
            .trim()
            .split_once('.')
            .ok_or_else(|| bad("expected <policy>.<key>=<value>"))?;
        if !runs.iter().any(|(p, _, _)| p == name) {
            let mut run: Vec<&str> = runs.iter().map(|(p, _, _)| p.as_str()).collect();
            run.dedup();
            return Err(bad(&format!(
                "no run uses policy {name:?} (runs: {})",
                run.join(", ")
            )));
        }
        let p = lookup(name).map_err(|e| bad(&e))?;
        let v = policy::params::parse_text(name, &p.params(), key, text).map_err(|e| bad(&e.to_string()))?;
        out.push((name.to_string(), key.to_string(), v));
    }
    Ok(out)
}
