//! `hotlaunch sweep FILE.toml`: run a grid of scenarios × policies × parameter values × seeds on
//! all cores, resumably, and write one table (`sweep.csv`) with a row per point.
//!
//! Output folder (default `<file stem>-sweep/`): `points.jsonl` (the resume log, one line per
//! finished point, flushed as each finishes) and `sweep.csv` (every point in grid order, written
//! when all are done). Parquet is written by the Python package (`hotlaunch.sweep`, or
//! `python -m hotlaunch.table DIR/sweep.csv`) with pyarrow, to keep the Rust build light.

use hotlaunch::sweep::{run_point, table_csv, ResumeLog, SweepGrid};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The sweep file (TOML; see examples/sweep.toml).
    pub file: PathBuf,
    /// Output folder (default: `<file stem>-sweep` in the current folder).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// List the points (id per line) and whether each is done, without running anything.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let grid = SweepGrid::load(&args.file)?;
    let out = args.out.clone().unwrap_or_else(|| {
        let stem = args
            .file
            .file_stem()
            .map_or("sweep".into(), |s| s.to_string_lossy().to_string());
        PathBuf::from(format!("{stem}-sweep"))
    });
    report::check_writable_dir(&out)
        .and_then(|()| std::fs::create_dir_all(&out))
        .map_err(|e| anyhow::anyhow!("--out {}: cannot create: {e}", out.display()))?;
    let log = ResumeLog::open(&out.join("points.jsonl"))?;
    let points = grid.points();
    let todo: Vec<usize> = (0..points.len())
        .filter(|&i| !log.done.contains_key(&points[i].id()))
        .collect();
    if args.dry_run {
        for p in &points {
            let state = if log.done.contains_key(&p.id()) {
                "done"
            } else {
                "todo"
            };
            println!("{state} {}", p.id());
        }
        return Ok(());
    }
    eprintln!(
        "sweep {}: {} points, {} already done, {} to run on {} threads",
        args.file.display(),
        points.len(),
        points.len() - todo.len(),
        todo.len(),
        hotlaunch::jobs().min(todo.len().max(1))
    );
    let bar = if std::io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new(points.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{bar:40}] {pos}/{len} points (eta {eta}) {msg}",
            )
            .expect("template")
            .progress_chars("=> "),
        );
        b.set_position((points.len() - todo.len()) as u64);
        Some(b)
    } else {
        None
    };
    let results = hotlaunch::par_map(todo.len(), hotlaunch::jobs(), |j| {
        let p = &points[todo[j]];
        let r = run_point(p).map_err(|e| anyhow::anyhow!("point {}: {e:#}", p.id()))?;
        log.append(&p.id(), &r.row)?;
        match &bar {
            Some(b) => {
                b.inc(1);
                b.set_message(p.id());
            }
            None => eprintln!("done {}", p.id()),
        }
        Ok::<_, anyhow::Error>(r.row)
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut rows = log.done;
    let mut first_err = None;
    for (j, r) in results.into_iter().enumerate() {
        match r {
            Ok(row) => {
                rows.insert(points[todo[j]].id(), row);
            }
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_err {
        return Err(e.context("sweep incomplete (finished points are kept; re-run to resume)"));
    }
    let table: Vec<_> = points.iter().filter_map(|p| rows.get(&p.id()).cloned()).collect();
    let path = out.join("sweep.csv");
    report::write_atomic(&path, table_csv(&grid.columns(), &table))?;
    println!("wrote {} ({} rows)", path.display(), table.len());
    Ok(())
}
