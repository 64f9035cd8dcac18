//! `hotlaunch import-ariadne DIR_OR_FILE --corpus OUT.hlc --sequence OUT.csv`: Ariadne's published
//! swap traces (`trace::ariadne`) as a hotlaunch content corpus and a replayable access sequence.
//!
//! Input: a directory holding `swapout_trace.txt` and/or `swapin_trace.txt` (the artifact's file
//! names), or one such file (a file starting with `TEST^^^#` is a swap-out file, any other a
//! swap-in file).
//!
//! - **Corpus** (`content::corpus`, what `capture` writes and `compress-study` reads): one page
//!   per swap-out record, with pid = the record's app id, process `app<id>`, mapping
//!   `ariadne-swap`, and `vaddr` = the record's swap sector (the format carries no virtual address).
//! - **Sequence** (CSV `time,obj_id,size`, for `hotlaunch replay --format csv`): the swap-out
//!   records in file order, then the swap-in records in file order, each an access to object
//!   `app << 40 | sector` (the app in the high bits, as `replay` groups processes). The format
//!   has no timestamps, so every time is 0: the sequence keeps the order only. A page is named by
//!   its swap sector, so a sector reused for another page later names the same object.

use anyhow::Context;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use trace::ariadne;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A directory with `swapout_trace.txt` / `swapin_trace.txt`, or one of those files.
    pub input: PathBuf,
    /// Write the swapped-out pages as a content corpus here.
    #[arg(long, value_name = "OUT.hlc")]
    pub corpus: Option<PathBuf>,
    /// Write the access sequence (CSV time,obj_id,size) here.
    #[arg(long, value_name = "OUT.csv")]
    pub sequence: Option<PathBuf>,
}

/// What an import read.
#[derive(Debug, Default)]
pub struct Imported {
    pub corpus: content::corpus::Corpus,
    pub time_s: Vec<u32>,
    pub obj_id: Vec<u64>,
    pub swap_outs: u64,
    pub swap_ins: u64,
}

fn obj(app: u64, sector: u64, path: &Path, what: &str, n: u64) -> anyhow::Result<u64> {
    let shift = kernel::access_log::APP_SHIFT;
    if app >= 1 << (64 - shift) || sector >= 1 << shift {
        anyhow::bail!(
            "{}: {what} record {n}: app {app} or sector {sector} out of range (app < 2^24, sector < 2^40)",
            path.display()
        );
    }
    Ok((app << shift) | sector)
}

fn open(path: &Path) -> anyhow::Result<BufReader<std::fs::File>> {
    let f = engine::fsio::open_regular(path, engine::fsio::FileKind::Trace)
        .with_context(|| format!("{}: cannot open", path.display()))?;
    Ok(BufReader::with_capacity(1 << 20, f))
}

fn read_out(path: &Path, im: &mut Imported) -> anyhow::Result<()> {
    let mut err = None;
    let n = ariadne::read_swapout(open(path)?, |h, page| {
        if err.is_some() {
            return;
        }
        match obj(h.app, h.sector, path, "swap-out", im.swap_outs) {
            Ok(id) => {
                im.corpus.push(
                    h.app as u32,
                    &format!("app{}", h.app),
                    "ariadne-swap",
                    h.sector,
                    page,
                );
                im.time_s.push(0);
                im.obj_id.push(id);
                im.swap_outs += 1;
            }
            Err(e) => err = Some(e),
        }
    })
    .map_err(|e| e.in_file(path))?;
    if let Some(e) = err {
        return Err(e);
    }
    debug_assert_eq!(n, im.swap_outs);
    Ok(())
}

fn read_in(path: &Path, im: &mut Imported) -> anyhow::Result<()> {
    let mut err = None;
    ariadne::read_swapin(open(path)?, |r| {
        if err.is_some() {
            return;
        }
        match obj(r.app, r.sector, path, "swap-in", im.swap_ins) {
            Ok(id) => {
                im.time_s.push(0);
                im.obj_id.push(id);
                im.swap_ins += 1;
            }
            Err(e) => err = Some(e),
        }
    })
    .map_err(|e| e.in_file(path))?;
    err.map_or(Ok(()), Err)
}

/// Read a directory or a file (see the module doc).
pub fn import(input: &Path) -> anyhow::Result<Imported> {
    let mut im = Imported::default();
    if input.is_dir() {
        let (o, i) = (input.join("swapout_trace.txt"), input.join("swapin_trace.txt"));
        if !o.exists() && !i.exists() {
            anyhow::bail!(
                "{}: holds neither swapout_trace.txt nor swapin_trace.txt",
                input.display()
            );
        }
        if o.exists() {
            read_out(&o, &mut im)?;
        }
        if i.exists() {
            read_in(&i, &mut im)?;
        }
    } else {
        let mut head = [0u8; 8];
        let mut f = engine::fsio::open_regular(input, engine::fsio::FileKind::Trace)
            .with_context(|| format!("{}: cannot open", input.display()))?;
        let got =
            std::io::Read::read(&mut f, &mut head).with_context(|| format!("reading {}", input.display()))?;
        if head[..got] == ariadne::MARK_OPEN[..got.min(8)] && got > 0 {
            read_out(input, &mut im)?;
        } else {
            read_in(input, &mut im)?;
        }
    }
    Ok(im)
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.corpus.is_none() && args.sequence.is_none() {
        anyhow::bail!("nothing to write: pass --corpus OUT.hlc and/or --sequence OUT.csv");
    }
    for p in args.corpus.iter().chain(args.sequence.iter()) {
        report::check_writable_file(p).with_context(|| format!("{}: cannot write there", p.display()))?;
    }
    let im = import(&args.input)?;
    println!(
        "read {} swap-outs and {} swap-ins from {}",
        im.swap_outs,
        im.swap_ins,
        args.input.display()
    );
    if let Some(p) = &args.corpus {
        im.corpus
            .write(p)
            .with_context(|| format!("writing {}", p.display()))?;
        println!("wrote {} ({} pages)", p.display(), im.corpus.len());
    }
    if let Some(p) = &args.sequence {
        let f = std::fs::File::create(p).with_context(|| format!("writing {}", p.display()))?;
        trace::csv::write_pages(&im.time_s, &im.obj_id, f)
            .with_context(|| format!("writing {}", p.display()))?;
        println!("wrote {} ({} accesses)", p.display(), im.obj_id.len());
    }
    Ok(())
}
