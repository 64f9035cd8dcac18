//! `hotlaunch inspect FILE.hprof [--json FILE]`: summarise a heap dump (HotSpot 1.0.2 or Android
//! 1.0.3): object count, total shallow bytes, class count, roots, an object-size histogram and a
//! depth-from-roots histogram.

use anyhow::Context;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Heap dump to inspect (`.hprof`).
    pub file: PathBuf,
    /// Also write the summary as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Print the N largest classes by bytes.
    #[arg(long, default_value_t = 10)]
    pub top_classes: usize,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(p) = &args.json {
        report::check_writable_file(p)
            .with_context(|| format!("--json {}: cannot write there", p.display()))?;
    }
    let dump = runtime::hprof::parse_file(&args.file)?;
    let s = dump.summary();
    println!("file:            {}", s.file);
    println!("format:          {:?} (id size {})", s.format, s.id_size);
    println!("objects:         {}", s.objects);
    println!(
        "total bytes:     {} ({:.1} MiB)",
        s.total_bytes,
        s.total_bytes as f64 / (1 << 20) as f64
    );
    println!("classes:         {}", s.classes);
    println!(
        "roots:           {} records, {} distinct objects ({} unresolved)",
        s.root_records, s.distinct_roots, s.unresolved_roots
    );
    println!(
        "references:      {} ({} to objects missing from the dump)",
        s.references, s.unresolved_refs
    );
    println!("heaps:");
    for h in &s.heaps {
        println!(
            "  {:<12} {:>10} objects {:>14} bytes",
            h.label, h.objects, h.bytes
        );
    }
    println!("object sizes:");
    for b in &s.size_histogram {
        println!(
            "  {:<18} {:>10} objects {:>14} bytes",
            b.label, b.objects, b.bytes
        );
    }
    println!("depth from roots:");
    for b in &s.depth_histogram {
        println!(
            "  {:<18} {:>10} objects {:>14} bytes",
            b.label, b.objects, b.bytes
        );
    }
    if args.top_classes > 0 {
        println!("largest classes:");
        for (name, n, b) in dump.class_histogram().into_iter().take(args.top_classes) {
            println!("  {:<48} {:>10} objects {:>14} bytes", name, n, b);
        }
    }
    if let Some(p) = &args.json {
        let text = serde_json::to_string_pretty(&s)? + "\n";
        report::write_atomic(p, text).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}
