//! `hotlaunch reproduce [GROUP] [--json FILE]` and `hotlaunch list`.

use anyhow::Context;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Check group (default: baseline).
    #[arg(default_value = "baseline")]
    pub group: String,
    /// Write `{"checks": [...]}` to this file.
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
    let checks =
        hotlaunch::reproduce::run_group(&args.group, args.quick, |name| eprintln!("running {name} ..."))?;
    let w = |f: fn(&hotlaunch::reproduce::Check) -> &str| {
        checks.iter().map(|c| f(c).chars().count()).max().unwrap_or(0)
    };
    let widths = [
        w(|c| &c.check),
        w(|c| &c.paper),
        w(|c| &c.simulated),
        w(|c| &c.tolerance),
    ];
    println!(
        "{:w0$} | {:w1$} | {:w2$} | {:w3$} | status",
        "check",
        "paper figure",
        "simulated",
        "tolerance",
        w0 = widths[0],
        w1 = widths[1],
        w2 = widths[2],
        w3 = widths[3]
    );
    for c in &checks {
        println!(
            "{:w0$} | {:w1$} | {:w2$} | {:w3$} | {}",
            c.check,
            c.paper,
            c.simulated,
            c.tolerance,
            c.status,
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3]
        );
    }
    if let Some(path) = &args.json {
        let v = serde_json::json!({ "checks": checks });
        report::write_atomic(path, serde_json::to_string_pretty(&v)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", path.display());
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
    println!("checks:    {}", hotlaunch::reproduce::GROUPS.join(", "));
    Ok(())
}
