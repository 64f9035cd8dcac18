//! `hotlaunch zram-check CORPUS [--device /dev/zram0] [--codec lz4] [--json FILE]`: the real
//! kernel's zram `mm_stat` next to the model's for the same pages and codec.

use anyhow::Context;
use content::{Codec, ContentStore, Corpus};
use kernel::zram::linux::{device_free, kernel_mm_stat, model_mm_stat};
use kernel::zram::MmStat;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Corpus file (.hlc).
    pub corpus: PathBuf,
    /// zram device node (must be unused).
    #[arg(long, default_value = "/dev/zram0")]
    pub device: PathBuf,
    /// comp_algorithm: lz4, lzo, lzo-rle, zstd.
    #[arg(long, default_value = "lz4")]
    pub codec: String,
    /// Write {"kernel": {...}, "model": {...}}.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

fn fields(m: &MmStat) -> serde_json::Value {
    serde_json::json!({
        "orig_data_size": m.orig_data_size,
        "compr_data_size": m.compr_data_size,
        "mem_used_total": m.mem_used_total,
        "same_pages": m.same_pages,
        "huge_pages": m.huge_pages,
    })
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let codec: Codec = args.codec.parse()?;
    let corpus = Corpus::read(&args.corpus).with_context(|| format!("reading {}", args.corpus.display()))?;
    if let Some(p) = &args.json {
        report::check_writable_file(p)
            .with_context(|| format!("--json {}: cannot write there", p.display()))?;
    }
    // Exiting 0 having compared nothing would read as agreement.
    if let Err(e) = device_free(&args.device) {
        anyhow::bail!("zram-check: {e}; nothing compared");
    }
    let pages: Vec<&[u8]> = (0..corpus.len()).map(|i| corpus.page(i)).collect();
    let k = kernel_mm_stat(&args.device, codec, &pages)?;
    let mut store = ContentStore::new();
    let ids = corpus.load_into(&mut store, false);
    let m = model_mm_stat(&store, &ids, codec);
    println!(
        "{} pages, codec {codec} on {}",
        pages.len(),
        args.device.display()
    );
    if let Some(s) = codec.substituted_by() {
        println!("note: the model runs {s} for {codec} (no Rust lzo-rle implementation)");
    }
    println!("{:<16} {:>14} {:>14} {:>8}", "field", "kernel", "model", "diff %");
    for (name, a, b) in [
        ("orig_data_size", k.orig_data_size, m.orig_data_size),
        ("compr_data_size", k.compr_data_size, m.compr_data_size),
        ("mem_used_total", k.mem_used_total, m.mem_used_total),
        ("same_pages", k.same_pages, m.same_pages),
        ("huge_pages", k.huge_pages, m.huge_pages),
    ] {
        let d = if a == 0 {
            0.0
        } else {
            100.0 * (b as f64 - a as f64) / a as f64
        };
        println!("{name:<16} {a:>14} {b:>14} {d:>+8.2}");
    }
    if let Some(p) = &args.json {
        let v = serde_json::json!({ "kernel": fields(&k), "model": fields(&m) });
        report::write_atomic(p, serde_json::to_string_pretty(&v)?)
            .with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}
