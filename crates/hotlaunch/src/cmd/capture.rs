//! `hotlaunch capture <pid> -o FILE`: write a process's non-zero anonymous pages to a corpus.

use anyhow::Context;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Process id to capture (needs ptrace access: root or same user).
    pub pid: u32,
    /// Output corpus file (.hlc).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Also capture file-backed mappings.
    #[arg(long)]
    pub file_backed: bool,
    /// Stop after this many pages (0 = all).
    #[arg(long, default_value_t = 0)]
    pub max_pages: usize,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    report::check_writable_file(&args.output)
        .with_context(|| format!("-o {}: cannot write there", args.output.display()))?;
    let corpus = content::capture::capture_pid(args.pid, args.file_backed, args.max_pages)?;
    if corpus.is_empty() {
        anyhow::bail!("process {} has no readable non-zero pages", args.pid);
    }
    corpus
        .write(&args.output)
        .with_context(|| format!("writing {}", args.output.display()))?;
    let mut per_mapping: Vec<(String, usize)> = Vec::new();
    for o in &corpus.origins {
        let name = corpus.strings[o.mapping as usize].clone();
        match per_mapping.iter_mut().find(|(n, _)| *n == name) {
            Some(e) => e.1 += 1,
            None => per_mapping.push((name, 1)),
        }
    }
    per_mapping.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    println!(
        "captured {} non-zero pages of pid {} to {}",
        corpus.len(),
        args.pid,
        args.output.display()
    );
    for (name, n) in per_mapping.iter().take(8) {
        println!(
            "  {:>8} pages  {}",
            n,
            if name.is_empty() { "[anon]" } else { name }
        );
    }
    Ok(())
}
