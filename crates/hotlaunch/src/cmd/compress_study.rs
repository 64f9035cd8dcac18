//! `hotlaunch compress-study CORPUS [--json FILE]`: Ariadne Fig. 6 on real data.
//!
//! For each codec and chunk size: the compression ratio of the corpus's non-same-filled pages
//! (consecutive pages compressed together for chunks > 4 KiB, each page split for chunks < 4 KiB;
//! a chunk that does not shrink counts at its raw size), and from the cost table the CPU to
//! compress / decompress 4 KiB of data and to serve one 4 KiB page fault (decompress the whole
//! chunk holding the page, or all sub-page chunks of the page).

use anyhow::Context;
use content::{Codec, CostTable, PAGE_SIZE};
use serde::Serialize;
use std::path::PathBuf;

pub const CHUNKS: [usize; 9] = [128, 256, 512, 1024, 2048, 4096, 16384, 32768, 131072];

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Corpus file (.hlc).
    pub corpus: PathBuf,
    /// Also write the rows as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Cost table (default: the built-in one).
    #[arg(long)]
    pub costs: Option<PathBuf>,
    /// Use at most this many pages (0 = all).
    #[arg(long, default_value_t = 20_000)]
    pub max_pages: usize,
    /// Codecs (comma-separated).
    #[arg(long, default_value = "lzo,lzo-rle,lz4,zstd", value_delimiter = ',')]
    pub codecs: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct Row {
    pub codec: String,
    pub chunk_bytes: usize,
    pub ratio: f64,
    pub compress_ns_per_page: f64,
    pub decompress_ns_per_page: f64,
    pub fault_ns: f64,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(p) = &args.json {
        report::check_writable_file(p)
            .with_context(|| format!("--json {}: cannot write there", p.display()))?;
    }
    let codecs: Vec<Codec> = args.codecs.iter().map(|c| c.parse()).collect::<Result<_, _>>()?;
    let table = match &args.costs {
        Some(p) => CostTable::load(p)?,
        None => CostTable::builtin(),
    };
    let corpus =
        content::Corpus::read(&args.corpus).with_context(|| format!("reading {}", args.corpus.display()))?;
    let mut data = Vec::new();
    for i in 0..corpus.len() {
        let p = corpus.page(i);
        if kernel::zram::same_filled(p).is_none() {
            data.extend_from_slice(p);
            if args.max_pages > 0 && data.len() >= args.max_pages * PAGE_SIZE {
                break;
            }
        }
    }
    anyhow::ensure!(!data.is_empty(), "the corpus has no non-same-filled pages");
    let mut rows = Vec::new();
    let mut out = Vec::new();
    for &codec in &codecs {
        for &chunk in &CHUNKS {
            let mut comp = 0usize;
            for c in data.chunks(chunk) {
                codec.compress(c, &mut out);
                comp += out.len().min(c.len());
            }
            let per_page = PAGE_SIZE as f64 / chunk as f64;
            let cns = table.compress_ns(codec, chunk) * per_page;
            let dns = table.decompress_ns(codec, chunk) * per_page;
            let fault = if chunk < PAGE_SIZE {
                dns
            } else {
                table.decompress_ns(codec, chunk)
            };
            rows.push(Row {
                codec: codec.name().to_string(),
                chunk_bytes: chunk,
                ratio: data.len() as f64 / comp as f64,
                compress_ns_per_page: cns,
                decompress_ns_per_page: dns,
                fault_ns: fault,
            });
        }
    }
    println!(
        "{} non-same-filled pages of {} ({} pages); costs: {}",
        data.len() / PAGE_SIZE,
        args.corpus.display(),
        corpus.len(),
        table.file().note
    );
    println!(
        "{:<8} {:>7} {:>6} {:>12} {:>12} {:>10}",
        "codec", "chunk", "ratio", "comp ns/4K", "decomp ns/4K", "fault ns"
    );
    for r in &rows {
        println!(
            "{:<8} {:>7} {:>6.2} {:>12.0} {:>12.0} {:>10.0}",
            r.codec, r.chunk_bytes, r.ratio, r.compress_ns_per_page, r.decompress_ns_per_page, r.fault_ns
        );
    }
    if let Some(p) = &args.json {
        report::write_atomic(p, serde_json::to_string_pretty(&rows)?)
            .with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}
