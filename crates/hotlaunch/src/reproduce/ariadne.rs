//! `ariadne`: the rows of `../shared/specs/ariadne-checks.md` (Ariadne, HPCA'25), plus the
//! small-chunk speed claim measured by the cost table (logged, expected to fail with real codecs).
//!
//! The relaunch rows (1-3, 5-8) share one set of runs of `ariadne-6.1-relaunch` (DRAM, ZRAM,
//! the stock-ZRAM hot-list recorder `zram-trace` that rows 5-6 read, as the artifact scores its
//! hot lists on stock-kernel traces, Ariadne EHL and AL at 1K-2K-16K, and the ZRAM / EHL pair with
//! LZO), run once per process and `quick` setting. `--quick` keeps one target and one ordering
//! with short use times.

use super::{status, Check, CheckList};
use crate::{plan_runs, run_policy, RunSpec};
use anyhow::Context;
use content::{Codec, CostTable, PAGE_SIZE};
use engine::Category;
use framework::sim::{LaunchRecord, LaunchSplit, SimOutput};
use policy::ariadne::{Ariadne, Stats};
use policy::Probe;
use std::cell::RefCell;
use std::rc::Rc;

pub(super) fn checks() -> CheckList {
    vec![
        ("ariadne-1-relaunch", relaunch_vs_zram),
        ("ariadne-2-vs-dram", relaunch_vs_dram),
        ("ariadne-3-cpu", cpu_ratio),
        ("ariadne-4-zram-dram", zram_vs_dram),
        ("ariadne-5-hotlist", hot_list),
        ("ariadne-6-similarity", similarity),
        ("ariadne-7-locality", locality),
        ("ariadne-8-decompression", decompression),
        ("ariadne-9-chunk-ratio", chunk_ratio),
        ("ariadne-10-energy", energy),
        ("ariadne-small-chunk-speed", small_chunk_speed),
    ]
}

const TARGETS: [&str; 5] = ["YouTube", "Twitter", "Firefox", "GoogleEarth", "BangDream"];

/// What the checks read of one run (a `SimOutput` holds the whole kernel: not kept).
struct Summary {
    /// Per target app with a scored relaunch: mean latency (ms) and mean split of its scored
    /// relaunches ([`scored_relaunches`]).
    relaunch_ms: Vec<(&'static str, f64)>,
    split_ms: Vec<(&'static str, LaunchSplit)>,
    compress_ns: f64,
    decompress_ns: f64,
    reclaim_ns: f64,
    energy_j: f64,
}

/// The relaunches the rows score: hot launches that follow a hot launch of the same app (the
/// artifact's "hot round", whose hotness history is the previous round's relaunch; a relaunch
/// right after the cold launch has only the start footprint as its hot list).
fn scored_relaunches(o: &SimOutput, app: usize) -> impl Iterator<Item = &LaunchRecord> {
    let mut prev_hot = false;
    o.launch_log
        .iter()
        .filter(move |l| l.app as usize == app)
        .filter(move |l| std::mem::replace(&mut prev_hot, l.hot) && l.hot)
}

impl Summary {
    fn of(o: &SimOutput) -> Self {
        let cpu = |c| o.kernel.cpu.by_category(c) as f64;
        let mut relaunch_ms = Vec::new();
        let mut split_ms = Vec::new();
        for a in TARGETS {
            let Some(i) = o.per_app.iter().position(|x| x.app.eq_ignore_ascii_case(a)) else {
                continue;
            };
            let mut sum = LaunchSplit::default();
            let mut n = 0u64;
            let mut wall = 0u64;
            for l in scored_relaunches(o, i) {
                sum.add(&l.split);
                wall += l.end - l.t;
                n += 1;
            }
            if n > 0 {
                relaunch_ms.push((a, wall as f64 / n as f64 / 1e6));
                split_ms.push((a, sum.scaled(1.0 / n as f64)));
            }
        }
        Summary {
            relaunch_ms,
            split_ms,
            compress_ns: cpu(Category::Compress),
            decompress_ns: cpu(Category::Decompress),
            reclaim_ns: cpu(Category::Reclaim),
            energy_j: o.energy_j,
        }
    }

    fn empty() -> Self {
        Summary {
            relaunch_ms: Vec::new(),
            split_ms: Vec::new(),
            compress_ns: 0.0,
            decompress_ns: 0.0,
            reclaim_ns: 0.0,
            energy_j: 0.0,
        }
    }

    /// Mean split over the target apps, ms per part.
    fn mean_split(&self) -> Vec<(&'static str, f64)> {
        let n = self.split_ms.len().max(1) as f64;
        let mut total = LaunchSplit::default();
        for (_, s) in &self.split_ms {
            total.add(s);
        }
        total.parts().iter().map(|(k, v)| (*k, v / n / 1e6)).collect()
    }
}

/// One run: label, summary, Ariadne's metrics (Ariadne runs only).
type Run = (String, Summary, Option<Stats>);

/// Cached runs: (scenario, quick, runs).
type Cached = (String, bool, Rc<Vec<Run>>);

thread_local! {
    static RUNS: RefCell<Vec<Cached>> = const { RefCell::new(Vec::new()) };
}

/// Every variant of a built-in scenario, Ariadne runs with a metrics sink; cached per process.
fn runs(name: &str, quick: bool) -> anyhow::Result<Rc<Vec<Run>>> {
    if let Some(r) = RUNS.with(|c| {
        c.borrow()
            .iter()
            .find(|(n, q, _)| n == name && *q == quick)
            .map(|(_, _, r)| r.clone())
    }) {
        return Ok(r);
    }
    let mut sc = workload::scenario::Scenario::builtin(name)?;
    if quick {
        use workload::scenario::WorkloadSpec::*;
        match &mut sc.workload {
            RelaunchAfter {
                targets,
                repeats,
                n_between,
                params,
                ..
            } => {
                targets.truncate(1);
                // Two relaunches: the second is the one scored (see `scored_relaunches`).
                *repeats = 2;
                *n_between = (*n_between).min(4);
                params.use_s = params.use_s.min(5.0);
            }
            w => super::shrink(w),
        }
    }
    let r = sc.resolve()?;
    let spec = RunSpec::from_scenario(&r);
    let mut out = Vec::new();
    for mut p in plan_runs(&r, &[])? {
        let sink = (p.policy.name() == "ariadne").then(|| {
            let s = Probe::new(Stats::default());
            p.policy = Box::new(Ariadne {
                stats: Some(s.clone()),
            });
            s
        });
        let o = run_policy(
            &spec.for_plan(&p),
            p.policy.as_ref(),
            &p.params,
            p.swap,
            |_, _| {},
        )
        .with_context(|| format!("scenario {name}, run {}", p.label))?;
        if std::env::var_os("HOTLAUNCH_DEBUG").is_some() {
            eprintln!(
                "{name}/{}: {:?}",
                p.label,
                sink.as_ref().map(|s| s.with(|x| x.clone()))
            );
        }
        out.push((
            p.label.clone(),
            Summary::of(&o),
            sink.map(|s| s.with(|x| x.clone())),
        ));
    }
    let rc = Rc::new(out);
    RUNS.with(|c| c.borrow_mut().push((name.into(), quick, rc.clone())));
    Ok(rc)
}

fn relaunch(quick: bool) -> anyhow::Result<Rc<Vec<Run>>> {
    runs("ariadne-6.1-relaunch", quick)
}

/// The LZO pair (ZRAM-LZO, EHL-LZO); not run with `--quick` (the LZO codec is several times
/// slower on the host at 16 KiB chunks than LZ4, too slow for the smoke test).
fn lzo(quick: bool) -> anyhow::Result<Option<Rc<Vec<Run>>>> {
    if quick {
        return Ok(None);
    }
    runs("ariadne-6.1-lzo", quick).map(Some)
}

/// `f` of the LZO runs, or "not run" in `--quick`.
fn with_lzo(quick: bool, f: impl Fn(&[Run]) -> anyhow::Result<String>) -> anyhow::Result<String> {
    match lzo(quick)? {
        Some(l) => f(&l),
        None => Ok("LZO not run in --quick".into()),
    }
}

fn out<'a>(runs: &'a [Run], label: &str) -> anyhow::Result<&'a Summary> {
    runs.iter()
        .find(|(l, _, _)| l == label)
        .map(|(_, o, _)| o)
        .with_context(|| format!("no run labelled {label}"))
}

fn stats<'a>(runs: &'a [Run], label: &str) -> anyhow::Result<&'a Stats> {
    runs.iter()
        .find(|(l, _, _)| l == label)
        .and_then(|(_, _, s)| s.as_ref())
        .with_context(|| format!("no Ariadne metrics for run {label}"))
}

/// Mean over apps of `f(app's ms in a, in b)` for apps present in both.
fn paired(a: &Summary, b: &Summary, f: impl Fn(f64, f64) -> f64) -> f64 {
    let pb = &b.relaunch_ms;
    let v: Vec<f64> = a
        .relaunch_ms
        .iter()
        .filter_map(|(n, x)| pb.iter().find(|(m, _)| m == n).map(|(_, y)| f(*x, *y)))
        .collect();
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Mean relaunch latency over the target apps, ms.
fn mean_ms(s: &Summary) -> f64 {
    let n = s.relaunch_ms.len().max(1) as f64;
    s.relaunch_ms.iter().map(|(_, x)| x).sum::<f64>() / n
}

fn pct(x: f64) -> String {
    format!("{:+.0}%", x * 100.0)
}

/// The artifact's relaunch latency (`extract_eva.py`): the measured DRAM latency plus the
/// decompression time of the run's relaunch swap-ins, per target app. Only DRAM and ZRAM are
/// measured end to end on the phone; Ariadne's figures are computed this way.
fn artifact_latency(dram: &Summary, run: &Summary) -> Summary {
    Summary {
        relaunch_ms: run
            .split_ms
            .iter()
            .filter_map(|(n, x)| {
                let d = dram.relaunch_ms.iter().find(|(m, _)| m == n)?.1;
                Some((*n, d + x.decompress_ns as f64 / 1e6))
            })
            .collect(),
        ..Summary::empty()
    }
}

/// Row 1: relaunch latency −50% vs ZRAM (EHL, AL, EHL with LZO).
fn relaunch_vs_zram(quick: bool) -> anyhow::Result<Check> {
    let r = relaunch(quick)?;
    let zram = out(&r, "zram")?;
    let dram = out(&r, "dram")?;
    let red = |l: &str, base: &Summary| -> anyhow::Result<f64> {
        Ok(paired(out(&r, l)?, base, |a, z| a / z - 1.0))
    };
    let ehl = red("ehl", zram)?;
    let al = red("al", zram)?;
    let lzo = with_lzo(quick, |l| {
        Ok(format!(
            "EHL {} (LZO)",
            pct(paired(out(l, "ehl-lzo")?, out(l, "zram-lzo")?, |a, z| a / z - 1.0))
        ))
    })?;
    let bound = paired(dram, zram, |d, z| d / z - 1.0);
    let ok = [ehl, al].iter().all(|x| (-0.60..=-0.35).contains(x)) && ehl >= bound - 0.02;
    let artifact = |l: &str| -> anyhow::Result<f64> {
        Ok(paired(&artifact_latency(dram, out(&r, l)?), zram, |a, z| {
            a / z - 1.0
        }))
    };
    // The same method on both sides: ZRAM's own DRAM + decompression figure (how much of the
    // artifact-method gain is the measured-vs-computed difference, not Ariadne).
    let same_method = |l: &str| -> anyhow::Result<f64> {
        let z = artifact_latency(dram, zram);
        Ok(paired(&artifact_latency(dram, out(&r, l)?), &z, |a, z| {
            a / z - 1.0
        }))
    };
    let split = |l: &str| -> anyhow::Result<String> {
        let s = out(&r, l)?;
        let parts: Vec<String> = s
            .mean_split()
            .iter()
            .filter(|(_, v)| *v >= 0.5)
            .map(|(k, v)| format!("{k} {v:.0}"))
            .collect();
        Ok(format!("{l} {:.0} ms = {}", mean_ms(s), parts.join(" + ")))
    };
    Ok(Check {
        check: "relaunch latency vs ZRAM, Ariadne 1K-2K-16K (mean of target apps)".into(),
        paper: "≈ −50% (§6.1; YouTube 122→73/75 ms)".into(),
        simulated: format!(
            "EHL {}, AL {} (LZ4); {lzo}; bound 1−DRAM/ZRAM {}. What the paper measures \
             (artifact extract_eva.py): DRAM and ZRAM end to end on the phone (am start -W: app \
             work, fault handling, decompression, flash reads, reclaim), Ariadne computed as DRAM \
             + decompression of the TTID swap-ins only (no fault handling, flash or reclaim). \
             Artifact method vs measured ZRAM: EHL {}, AL {}; the same method on both sides (ZRAM \
             = DRAM + its decompression): EHL {}, AL {}. Split (mean ms per relaunch): {}; {}; \
             {}; {} (flash = file-page refaults, which no ZRAM scheme avoids, plus for Ariadne reads \
             of written-back cold chunks: pages the previous relaunch did not touch (hot-list \
             misprediction) or touched while their swap copy stayed in a cold chunk; fault = \
             per-fault handling)",
            pct(ehl),
            pct(al),
            pct(bound),
            pct(artifact("ehl")?),
            pct(artifact("al")?),
            pct(same_method("ehl")?),
            pct(same_method("al")?),
            split("dram")?,
            split("zram")?,
            split("ehl")?,
            split("al")?
        ),
        tolerance: "−35%..−60%, not beyond the DRAM bound".into(),
        status: status(ok),
    })
}

/// Row 2: Ariadne within 10% (≤ 1.20) of DRAM.
fn relaunch_vs_dram(quick: bool) -> anyhow::Result<Check> {
    let r = relaunch(quick)?;
    let dram = out(&r, "dram")?;
    let ehl = paired(out(&r, "ehl")?, dram, |a, d| a / d);
    let al = paired(out(&r, "al")?, dram, |a, d| a / d);
    let art = |l: &str| -> anyhow::Result<f64> {
        Ok(paired(&artifact_latency(dram, out(&r, l)?), dram, |a, d| a / d))
    };
    Ok(Check {
        check: "Ariadne relaunch latency / DRAM (mean of target apps)".into(),
        paper: "within 10% (§6.1); YouTube 73/63 = 1.16".into(),
        simulated: format!(
            "EHL {ehl:.2}x, AL {al:.2}x end to end; the artifact's computed figure (DRAM + \
             decompression of the TTID swap-ins, which leaves out fault handling, flash reads and \
             reclaim): EHL {:.2}x, AL {:.2}x",
            art("ehl")?,
            art("al")?
        ),
        tolerance: "≤ 1.20 on average".into(),
        status: status(ehl <= 1.20 && al <= 1.20),
    })
}

fn codec_cpu(o: &Summary) -> f64 {
    o.compress_ns + o.decompress_ns
}

/// Row 3: compress + decompress CPU normalised to ZRAM.
fn cpu_ratio(quick: bool) -> anyhow::Result<Check> {
    let r = relaunch(quick)?;
    let z = codec_cpu(out(&r, "zram")?);

    let ehl = codec_cpu(out(&r, "ehl")?) / z;
    let al = codec_cpu(out(&r, "al")?) / z;
    let lzo = with_lzo(quick, |l| {
        Ok(format!(
            "EHL {:.2} (LZO)",
            codec_cpu(out(l, "ehl-lzo")?) / codec_cpu(out(l, "zram-lzo")?)
        ))
    })?;
    let mean = (ehl + al) / 2.0;
    Ok(Check {
        check: "(de)compression CPU over the run / ZRAM".into(),
        paper: "≈ 0.85 average; EHL YouTube 0.75, Twitter 0.70 (Fig. 11)".into(),
        simulated: format!(
            "EHL {ehl:.2}, AL {al:.2} (LZ4); {lzo} (the paper's saving rests on small chunks being \
             faster; with real codecs they are not, see the small-chunk row)"
        ),
        tolerance: "0.70–0.95 on average (EHL, AL)".into(),
        status: status((0.70..=0.95).contains(&mean)),
    })
}

/// Row 4: baseline ZRAM / DRAM relaunch.
fn zram_vs_dram(quick: bool) -> anyhow::Result<Check> {
    let r = relaunch(quick)?;
    let ratio = paired(out(&r, "zram")?, out(&r, "dram")?, |z, d| z / d);
    let dram = out(&r, "dram")?;
    let lzo = with_lzo(quick, |l| {
        Ok(format!(
            "{:.2}x (LZO)",
            paired(out(l, "zram-lzo")?, dram, |z, d| z / d)
        ))
    })?;
    Ok(Check {
        check: "baseline: ZRAM relaunch / DRAM relaunch (mean of target apps)".into(),
        paper: "2.1x (§2.3); artifact 1.94–2.66x".into(),
        simulated: format!("{ratio:.2}x (LZ4), {lzo}"),
        tolerance: "1.6–2.7x".into(),
        status: status((1.6..=2.7).contains(&ratio)),
    })
}

/// Row 5: hot-list coverage and accuracy as the artifact's `get_cov_acc.py` defines them, on
/// the stock-ZRAM run with the hot-list recorder (`zram-trace`): coverage = share of the
/// relaunch's TTID swap-ins that were in the hot list; accuracy = share of the hot list not
/// left swapped out once the app leaves the foreground after the relaunch.
fn hot_list(quick: bool) -> anyhow::Result<Check> {
    let r = relaunch(quick)?;
    let s = stats(&r, "zram-trace")?;
    let (c, a) = (s.coverage(), s.accuracy());
    let (hot, touched, ttid) = s.mean_sizes();
    let (ov_t, ov_h) = s.overlap();
    let same = paired(out(&r, "zram-trace")?, out(&r, "zram")?, |t, z| t / z);
    Ok(Check {
        check: "hot list (previous relaunch's first pages) vs TTID swap-ins, stock ZRAM trace".into(),
        paper: "coverage ≈ 70%, accuracy ≈ 92% (Fig. 14; artifact get_cov_acc.py)".into(),
        simulated: format!(
            "coverage {:.0}% ({} relaunches with swap-ins), accuracy {:.0}% ({} lists); hot list \
             {hot:.0} pages (cap hot_list_pages), {ttid:.0} TTID swap-ins and {touched:.0} anon \
             pages touched per relaunch (artifact bound: TTID set ≤ hot_list_len / coverage ≈ \
             14k pages at 10k, 70%); launch-set overlap (not the paper's metric): {:.0}% of the \
             touched pages in the list, {:.0}% of the list touched; trace run latency {same:.3}x \
             the ZRAM run's{}",
            c * 100.0,
            s.coverage_n,
            a * 100.0,
            s.accuracy_n,
            ov_t * 100.0,
            ov_h * 100.0,
            if quick {
                "; --quick: one scored relaunch (the second; a relaunch right after the cold \
                 launch is not scored)"
            } else {
                ""
            }
        ),
        tolerance: "coverage 55–85%, accuracy ≥ 85%".into(),
        status: status((0.55..=0.85).contains(&c) && a >= 0.85),
    })
}

/// Row 6: hot-data similarity and reuse between consecutive relaunches (Fig. 5), over whole
/// launch sets (the data a relaunch uses, not capped at the hot-list size).
fn similarity(quick: bool) -> anyhow::Result<Check> {
    let r = relaunch(quick)?;
    let s = stats(&r, "zram-trace")?;
    let (sim, reused) = s.similarity();
    Ok(Check {
        check: "consecutive relaunches: hot-data similarity; reused fraction".into(),
        paper: "70%; 98% (Fig. 5)".into(),
        simulated: format!(
            "similarity {:.0}%, reused {:.0}% over {} pairs of relaunches (anon launch sets; \
             reused = share of the earlier set resident when the app leaves the foreground after \
             the later relaunch: used at its TTID, TTFD or later, the paper's hot ∪ warm){}",
            sim * 100.0,
            reused * 100.0,
            s.pairs,
            if quick {
                "; --quick: 5 s of use after the relaunch (paper 150–300 s), so less of the \
                 earlier set is used again"
            } else {
                ""
            }
        ),
        tolerance: "60–85%; ≥ 90%".into(),
        status: status((0.60..=0.85).contains(&sim) && reused >= 0.90),
    })
}

/// Row 7: swap-in locality in zpool order and the PreDecomp hit rate.
fn locality(quick: bool) -> anyhow::Result<Check> {
    let r = relaunch(quick)?;
    let s = stats(&r, "al")?;
    let e = stats(&r, "ehl")?;
    let (p2, p4) = (s.p2(), s.p4());
    let drop = if p2 > 0.0 { 1.0 - p4 / p2 } else { f64::NAN };
    Ok(Check {
        check: "relaunch swap-ins: P(2 / 4 consecutive zpool pages); PreDecomp hit rate".into(),
        paper: "P2 0.61–0.86, P4 0.33–0.72 (Table 3); hit rate ≈ P2".into(),
        simulated: format!(
            "AL: P2 {p2:.2}, P4 {p4:.2} ({} windows of faults + used pre-loads), hits {:.0}% of {}; EHL hits {:.0}% of {}",
            s.windows,
            s.predecomp_hit_rate() * 100.0,
            s.predecomp_loaded,
            e.predecomp_hit_rate() * 100.0,
            e.predecomp_loaded
        ),
        tolerance: "P2 in [0.5, 0.9], P4 below P2 by 15–50%".into(),
        status: status((0.5..=0.9).contains(&p2) && (0.15..=0.50).contains(&drop)),
    })
}

/// Row 8: decompression time, Ariadne 1K-2K-16K vs the 4 KiB baseline.
fn decompression(quick: bool) -> anyhow::Result<Check> {
    let r = relaunch(quick)?;
    let d = |l: &str| -> anyhow::Result<f64> { Ok(out(&r, l)?.decompress_ns) };
    let ehl = d("ehl")? / d("zram")? - 1.0;
    let al = d("al")? / d("zram")? - 1.0;
    let lzo = with_lzo(quick, |l| {
        Ok(format!(
            "EHL {} (LZO)",
            pct(out(l, "ehl-lzo")?.decompress_ns / out(l, "zram-lzo")?.decompress_ns - 1.0)
        ))
    })?;
    Ok(Check {
        check: "decompression CPU, 1K-2K-16K vs 4 KiB ZRAM (whole run)".into(),
        paper: "YouTube/Twitter −60%, BangDream −90% (Fig. 12, LZO)".into(),
        simulated: format!(
            "EHL {}, AL {} (LZ4); {lzo} (real codecs: 1–2 KiB chunks cost more per byte than \
             4 KiB, see the small-chunk row; unused pre-decompressions add to it)",
            pct(ehl),
            pct(al)
        ),
        tolerance: "a reduction of ≥ 30% (EHL)".into(),
        status: status(ehl <= -0.30),
    })
}

/// Row 9: compression ratio vs chunk size on generated anonymous-page bytes, LZ4 and LZO.
fn chunk_ratio(quick: bool) -> anyhow::Result<Check> {
    let mib = if quick { 4 } else { 128 };
    let data = anon_bytes(mib * 256);
    let sizes = [128usize, 512, 2048, 4096, 16384, 131072];
    let mut parts = Vec::new();
    let mut ok = true;
    for codec in [Codec::Lz4, Codec::Lzo] {
        let ratios: Vec<f64> = sizes.iter().map(|&s| ratio(&data, codec, s)).collect();
        ok &= ratios.windows(2).all(|w| w[1] >= w[0] - 0.01);
        ok &= (ratios[0] - 1.7).abs() <= 0.4 && (ratios[sizes.len() - 1] - 3.9).abs() <= 0.4;
        let v: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
        parts.push(format!("{} {}", codec.name(), v.join("→")));
    }
    Ok(Check {
        check: format!(
            "compression ratio at 128 B, 512 B, 2K, 4K, 16K, 128 KiB ({mib} MiB of generated app pages)"
        ),
        paper: "1.7 → 3.9 from 128 B to 128 KiB (Fig. 6)".into(),
        simulated: parts.join("; "),
        tolerance: "monotone; endpoints ±0.4".into(),
        status: status(ok),
    })
}

/// Non-same-filled pages of the synthetic app-content generator (stand-in for captured
/// anonymous memory; `content::synth`).
fn anon_bytes(pages: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(pages * PAGE_SIZE);
    let mix = content::synth::SynthMix::default();
    content::synth::generate(&mix, pages, 17, |_, p| {
        if kernel::zram::same_filled(p).is_none() {
            v.extend_from_slice(p);
        }
    });
    v
}

/// Original / compressed over `data` in chunks of `chunk` bytes (a chunk that does not shrink
/// counts at its raw size, as zram stores it).
fn ratio(data: &[u8], codec: Codec, chunk: usize) -> f64 {
    let mut buf = Vec::new();
    let mut stored = 0usize;
    for c in data.chunks(chunk) {
        codec.compress(c, &mut buf);
        stored += buf.len().min(c.len());
    }
    data.len() as f64 / stored.max(1) as f64
}

/// Row 10: energy and kswapd CPU of ZRAM vs DRAM, light and heavy switching.
fn energy(quick: bool) -> anyhow::Result<Check> {
    let mut parts = Vec::new();
    let mut ok = true;
    for (name, paper) in [("ariadne-table2-light", 1.122), ("ariadne-table2-heavy", 1.195)] {
        let r = runs(name, quick)?;
        let d = out(&r, "dram")?;
        let z = out(&r, "zram")?;
        let e = z.energy_j / d.energy_j;
        ok &= (e - paper).abs() <= 0.05;
        parts.push(format!(
            "{}: energy {e:.3}x, reclaim CPU {}",
            &name[15..],
            reclaim_cpu(d.reclaim_ns, z.reclaim_ns)
        ));
    }
    Ok(Check {
        check: "energy and reclaim CPU, ZRAM vs DRAM, light / heavy 60 s switching".into(),
        paper: "energy +12.2% light, +19.5% heavy (Table 2); kswapd CPU 2.6x DRAM (Fig. 3)".into(),
        simulated: format!(
            "{} (energy = CPU + flash only: the Power Rails' display / idle baseline, ~3 W in the \
             paper, is not modelled, so the ZRAM increment is not diluted)",
            parts.join("; ")
        ),
        tolerance: "energy ±5 pp".into(),
        status: status(ok),
    })
}

/// Reclaim CPU of DRAM and ZRAM: a ratio only when DRAM reclaimed at all (all-in-DRAM has no
/// swap, so its reclaim CPU is often zero and a ratio would divide by ~0).
fn reclaim_cpu(dram_ns: f64, zram_ns: f64) -> String {
    let ms = |ns: f64| ns / 1e6;
    if dram_ns >= 1e6 {
        format!(
            "{:.1}x ({:.0} / {:.0} ms)",
            zram_ns / dram_ns,
            ms(zram_ns),
            ms(dram_ns)
        )
    } else {
        format!(
            "ZRAM {:.0} ms, DRAM {:.1} ms (no ratio: DRAM barely reclaims)",
            ms(zram_ns),
            ms(dram_ns)
        )
    }
}

/// The small-chunk speed claim against the cost table (logged, not expected to hold).
fn small_chunk_speed(_quick: bool) -> anyhow::Result<Check> {
    let t = CostTable::builtin();
    let total = |c: Codec, chunk: usize| t.compress_ns(c, chunk) * (131072 / chunk) as f64;
    let lz4 = total(Codec::Lz4, 131072) / total(Codec::Lz4, 128);
    let lzo = total(Codec::Lzo, 131072) / total(Codec::Lzo, 128);
    Ok(Check {
        check: "compress 128 KiB of data in 128 B chunks vs one 128 KiB chunk (cost table)".into(),
        paper: "128 B chunks 59.2x (LZ4) / 41.8x (LZO) faster (§3)".into(),
        simulated: format!(
            "128 B chunks {lz4:.2}x (LZ4), {lzo:.2}x (LZO) as fast (< 1: slower; LZO is lzokay, whose cost per \
             byte grows with the chunk unlike the kernel's lzo1x_1: see content::codec)"
        ),
        tolerance: "not gated: expected to fail with real codecs (spec §5)".into(),
        status: status((29.6..=118.4).contains(&lz4) && (20.9..=83.6).contains(&lzo)),
    })
}
