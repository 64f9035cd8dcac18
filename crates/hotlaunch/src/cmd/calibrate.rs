//! `hotlaunch calibrate -o costs.toml [--corpus FILE]`: measure the codec cost table on this host.

use anyhow::Context;
use content::{costs, Codec, ContentStore, Corpus, SynthMix, PAGE_SIZE};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Output TOML file.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Corpus to measure on (default: 4096 synthetic pages of the default mix).
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// Repetitions per measurement (the median is kept).
    #[arg(long, default_value_t = 5)]
    pub reps: usize,
    /// Data per measurement, in MiB.
    #[arg(long, default_value_t = 2)]
    pub budget_mb: usize,
}

/// Non-same-filled pages of a corpus or synthetic data, concatenated.
pub fn sample_data(corpus: Option<&PathBuf>) -> anyhow::Result<(Vec<u8>, String)> {
    let mut store = ContentStore::new();
    let what = match corpus {
        Some(p) => {
            let c = Corpus::read(p).with_context(|| format!("reading corpus {}", p.display()))?;
            c.load_into(&mut store, false);
            format!("corpus {}", p.display())
        }
        None => {
            store.append_synthetic(&SynthMix::default(), 4096, 1);
            "synthetic default mix, 4096 pages, seed 1".to_string()
        }
    };
    let mut data = Vec::new();
    for id in 0..store.len() as u32 {
        let p = store.page(id);
        if kernel::zram::same_filled(p).is_none() {
            data.extend_from_slice(p);
        }
    }
    anyhow::ensure!(
        data.len() >= 32 * PAGE_SIZE,
        "need at least 32 non-same-filled pages"
    );
    Ok((data, what))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    report::check_writable_file(&args.output)
        .with_context(|| format!("-o {}: cannot write there", args.output.display()))?;
    let (data, what) = sample_data(args.corpus.as_ref())?;
    let note = format!(
        "measured by `hotlaunch calibrate` on {what}; median of {} runs over {} MiB per cell",
        args.reps, args.budget_mb
    );
    let file = costs::measure(&data, &Codec::ALL, args.reps, args.budget_mb << 20, &note);
    let table = content::CostTable::from_file(file).map_err(anyhow::Error::msg)?;
    report::write_atomic(&args.output, table.to_toml_string())
        .with_context(|| format!("writing {}", args.output.display()))?;
    println!(
        "{:<8} {:>7} {:>10} {:>10} {:>10} {:>10} {:>6}",
        "codec", "chunk", "c_fixed", "c_ns/B", "d_fixed", "d_ns/B", "ratio"
    );
    for e in &table.file().entry {
        println!(
            "{:<8} {:>7} {:>10.1} {:>10.3} {:>10.1} {:>10.3} {:>6.2}",
            e.codec.name(),
            e.chunk_bytes,
            e.compress_fixed_ns,
            e.compress_ns_per_byte,
            e.decompress_fixed_ns,
            e.decompress_ns_per_byte,
            e.ratio
        );
    }
    println!("wrote {}", args.output.display());
    Ok(())
}
