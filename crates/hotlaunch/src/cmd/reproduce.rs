//! `hotlaunch reproduce [GROUP|all] [--json FILE]` and `hotlaunch list`.

use anyhow::Context;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Check group (baseline, fleet, marvin, ariadne, memsaver, ismm15; alias regions = ismm15),
    /// or `all` for every group in one table with a PASS/GAP summary per paper (default:
    /// baseline).
    #[arg(default_value = "baseline")]
    pub group: String,
    /// Write `{"checks": [...]}` to this file (`all`: also `"groups"`, the summary per paper, and
    /// each check's `"group"`).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Fewer repetitions per scenario (smoke test).
    #[arg(long)]
    pub quick: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(p) = &args.json {
        report::check_writable_file(p)
            .with_context(|| format!("--json {}: cannot write there", p.display()))?;
    }
    if args.group == hotlaunch::reproduce::ALL {
        return run_all(&args);
    }
    let checks = hotlaunch::reproduce::run_group(&args.group, args.quick, |p| eprintln!("{p}"))?;
    let rows: Vec<Vec<String>> = checks.iter().map(row).collect();
    print_table(
        &["check", "paper figure", "simulated", "tolerance", "status"],
        &rows,
    );
    if let Some(path) = &args.json {
        write_json(path, &serde_json::json!({ "checks": checks }))?;
    }
    Ok(())
}

fn row(c: &hotlaunch::reproduce::Check) -> Vec<String> {
    vec![
        c.check.clone(),
        c.paper.clone(),
        c.simulated.clone(),
        c.tolerance.clone(),
        c.status.clone(),
    ]
}

/// `a | b | c` rows, each column as wide as its widest cell (the last column unpadded).
fn print_table(header: &[&str], rows: &[Vec<String>]) {
    let n = header.len();
    let widths: Vec<usize> = (0..n)
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([header[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        let mut out = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == n {
                out.push_str(c);
            } else {
                out.push_str(&format!("{c:w$} | ", w = widths[i]));
            }
        }
        println!("{out}");
    };
    line(header.to_vec());
    for r in rows {
        line(r.iter().map(String::as_str).collect());
    }
}

fn write_json(path: &std::path::Path, v: &serde_json::Value) -> anyhow::Result<()> {
    report::write_atomic(path, serde_json::to_string_pretty(v)? + "\n")
        .with_context(|| format!("writing {}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

/// Every group's checks in one table, then PASS/GAP per paper.
fn run_all(args: &Args) -> anyhow::Result<()> {
    let groups = hotlaunch::reproduce::run_all(args.quick, |p| eprintln!("{p}"));
    let rows: Vec<Vec<String>> = groups
        .iter()
        .flat_map(|(g, checks)| {
            checks.iter().map(move |c| {
                let mut r = vec![g.clone()];
                r.extend(row(c));
                r
            })
        })
        .collect();
    print_table(
        &[
            "group",
            "check",
            "paper figure",
            "simulated",
            "tolerance",
            "status",
        ],
        &rows,
    );
    let summary = hotlaunch::reproduce::summarize(&groups);
    println!();
    let rows: Vec<Vec<String>> = summary
        .iter()
        .map(|s| {
            vec![
                s.group.clone(),
                s.paper.clone(),
                s.pass.to_string(),
                s.gap.to_string(),
            ]
        })
        .collect();
    print_table(&["group", "paper", "PASS", "GAP"], &rows);
    let (pass, gap) = summary.iter().fold((0, 0), |(p, g), s| (p + s.pass, g + s.gap));
    println!("all: {pass} PASS, {gap} GAP");
    if let Some(path) = &args.json {
        let checks: Vec<serde_json::Value> = groups
            .iter()
            .flat_map(|(g, checks)| {
                checks.iter().map(move |c| {
                    let mut v = serde_json::to_value(c).unwrap_or_default();
                    if let Some(o) = v.as_object_mut() {
                        o.insert("group".into(), serde_json::Value::from(g.as_str()));
                    }
                    v
                })
            })
            .collect();
        write_json(path, &serde_json::json!({ "groups": summary, "checks": checks }))?;
    }
    Ok(())
}

pub fn list() -> anyhow::Result<()> {
    println!("devices:   {}", device::builtin_names().join(", "));
    println!("apps:      {}", apps::builtin_names().join(", "));
    println!("scenarios: {}", workload::scenario::builtin_names().join(", "));
    println!("policies:  {}", policy::names().join(", "));
    // Each policy's parameters: `[policy.<name>]` keys and `--param <name>.<key>=<value>`.
    for p in policy::all() {
        println!("  {}: {}", p.name(), p.description());
        let specs = p.params();
        if specs.is_empty() {
            println!("    (no parameters)");
        }
        for line in policy::params::describe(&specs) {
            println!("    {line}");
        }
    }
    println!(
        "checks:    {} (aliases: {}; or {} for every group)",
        hotlaunch::reproduce::GROUPS.join(", "),
        hotlaunch::reproduce::aliases_text(),
        hotlaunch::reproduce::ALL
    );
    Ok(())
}
