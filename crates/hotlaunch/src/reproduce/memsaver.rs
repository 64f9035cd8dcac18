//! `memsaver`: the rows of `../shared/specs/memsaver-checks.md` (MemSaver, ICPE'24).
//!
//! Every run goes through the `memsaver` policy with a probe ([`policy::memsaver::Stats`]): the
//! RSS before and after each swap moment, the kind of each swap moment, and each hot launch's
//! latency, so rows compare launches at the same simulated time across variants (the script's
//! actions are at fixed times; the `ideal` variant pages nothing out). The paper ran Android 11,
//! which has no cached-app compaction: the OnePlus 9 Pro profile's `android_release = "11"` turns
//! it off, and these runs keep it off even if a profile override turns it on.
//!
//! RSS reduction (rows 1, 2) is the resident pages after the page-out against the ideal run's
//! resident pages at the same moment, not against the RSS just before the page-out: the paper's
//! detection (every anonymous page to zram before a collecting launch) leaves the pages the app
//! did not touch since in zram, so the RSS just before a retention page-out already lacks them.

use super::{shrink, status, Check, CheckList};
use crate::{plan_runs, run_policy, RunSpec};
use anyhow::Context;
use framework::sim::SimOutput;
use policy::memsaver::{LaunchRec, MemSaver, PageOutRec, Stats};
use policy::{Policy, Probe};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

pub(super) fn checks() -> CheckList {
    vec![
        ("rss-anon", rss_anon),
        ("rss-anon+file", rss_file),
        ("latency", latency),
        ("lru-b", lru_b),
        ("lru-b/lru-f", lru_f),
        ("h-overlap", h_overlap),
        ("multi-h", multi_h),
        ("b1-b2", b1_b2),
        ("h+b2", h_b2),
        ("system", system),
    ]
}

/// One run: its label, output and the policy's metrics (empty for non-MemSaver runs).
struct Run {
    label: String,
    out: SimOutput,
    stats: Stats,
}

type Runs = Rc<Vec<Run>>;

thread_local! {
    /// Runs of a scenario are shared by the rows that read them (each scenario runs once).
    static CACHE: RefCell<BTreeMap<(String, bool), Runs>> = const { RefCell::new(BTreeMap::new()) };
}

/// Run every variant of a built-in scenario with cached-app compaction off (Android 11),
/// MemSaver runs with a probe.
fn runs(name: &str, quick: bool) -> anyhow::Result<Runs> {
    let key = (name.to_string(), quick);
    if let Some(r) = CACHE.with(|c| c.borrow().get(&key).cloned()) {
        return Ok(r);
    }
    let mut sc = workload::scenario::Scenario::builtin(name)?;
    if quick {
        shrink(&mut sc.workload);
        // One repetition of the per-app script; the YouTube history needs 6 launches (1 cold, 3 filling the stack, 2 kept).
        if let workload::scenario::WorkloadSpec::Script { repeat, .. } = &mut sc.workload {
            *repeat = if name == "memsaver-fig9-youtube" { 6 } else { 1 };
        }
    }
    let r = sc.resolve()?;
    let mut spec = RunSpec::from_scenario(&r);
    spec.sim.app_compaction = false;
    let mut v = Vec::new();
    for p in plan_runs(&r, &[])? {
        let probe = Probe::new(Stats {
            record_sets: true,
            ..Stats::default()
        });
        let run_spec = spec.for_plan(&p);
        let pol: Box<dyn Policy> = if p.policy.name() == "memsaver" {
            Box::new(MemSaver::with_probe(probe.clone()))
        } else {
            p.policy
        };
        let out = run_policy(&run_spec, pol.as_ref(), &p.params, p.swap, |_, _| {})
            .with_context(|| format!("scenario {name}, run {}", p.label))?;
        let stats = probe.with(std::mem::take);
        v.push(Run {
            label: p.label.clone(),
            out,
            stats,
        });
    }
    let v = Rc::new(v);
    CACHE.with(|c| c.borrow_mut().insert(key, v.clone()));
    Ok(v)
}

fn get<'a>(runs: &'a [Run], label: &str) -> anyhow::Result<&'a Run> {
    runs.iter()
        .find(|r| r.label == label)
        .with_context(|| format!("no run labelled {label}"))
}

fn app_index(run: &Run, name: &str) -> Option<usize> {
    run.out
        .per_app
        .iter()
        .position(|a| a.app.eq_ignore_ascii_case(name))
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.iter().sum::<f64>() / v.len() as f64
}

fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    s[s.len() / 2]
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// Retention page-outs (H ∪ B1 and the like, LRU baselines) of `app` (all apps if `None`).
fn retains(run: &Run, app: Option<usize>) -> Vec<PageOutRec> {
    run.stats
        .pageouts
        .iter()
        .filter(|p| p.kind == "retain" && app.is_none_or(|a| p.app == a))
        .copied()
        .collect()
}

/// RSS reduction of each retention page-out of `run`: resident pages after it against the
/// resident pages of the `ideal` run (nothing paged out) at the same moment. The RSS just before
/// the page-out is not the base: the detection page-out before each collecting launch left every
/// anonymous page the app did not touch since in zram, so that RSS already lacks them (the
/// spec's "÷ RSS at that moment" read literally gave 2% anon-only). Without `ideal` (runs whose
/// swap moment the ideal run does not share) the base is the RSS just before.
fn reductions(run: &Run, ideal: Option<&Run>) -> Vec<(usize, usize, f64, f64)> {
    let base: Option<BTreeMap<(usize, u64), u64>> = ideal.map(|i| {
        i.stats
            .pageouts
            .iter()
            .map(|p| ((p.app, p.t), p.rss_before()))
            .collect()
    });
    retains(run, None)
        .iter()
        .filter_map(|p| {
            let b = match &base {
                Some(m) => *m.get(&(p.app, p.t))?,
                None => p.rss_before(),
            };
            let vs_ideal = if b == 0 {
                0.0
            } else {
                b.saturating_sub(p.rss_after()) as f64 / b as f64
            };
            Some((p.app, p.context, vs_ideal, p.reduction()))
        })
        .collect()
}

/// Mean reduction (see [`reductions`]) per (app, context), then the mean and max over them, the
/// number of app-contexts, and the mean of the page-out's own reduction (of the RSS just before).
fn reduction_by_app_ctx(run: &Run, ideal: Option<&Run>) -> (f64, f64, usize, f64) {
    let mut by: BTreeMap<(usize, usize), Vec<f64>> = BTreeMap::new();
    let mut own = Vec::new();
    for (app, ctx, r, o) in reductions(run, ideal) {
        by.entry((app, ctx)).or_default().push(r);
        own.push(o);
    }
    let per: Vec<f64> = by.values().map(|v| mean(v)).collect();
    (
        mean(&per),
        per.iter().copied().fold(f64::NAN, f64::max),
        per.len(),
        mean(&own),
    )
}

/// Hot launches of `run` that follow one of its retention page-outs, each with the ideal run's
/// launch at the same time: (app, measured ms, ideal ms).
fn paired(run: &Run, ideal: &Run, app: Option<usize>) -> Vec<(usize, f64, f64)> {
    let by_t: BTreeMap<(usize, u64), &LaunchRec> =
        ideal.stats.launches.iter().map(|l| ((l.app, l.t), l)).collect();
    run.stats
        .launches
        .iter()
        .filter(|l| l.after == "retain" && app.is_none_or(|a| l.app == a))
        .filter_map(|l| by_t.get(&(l.app, l.t)).map(|i| (l.app, l.ms, i.ms)))
        .collect()
}

fn fig11(quick: bool) -> anyhow::Result<Runs> {
    runs("memsaver-fig11-contexts", quick)
}

fn rss_row(quick: bool, label: &str, n: &str) -> anyhow::Result<(f64, f64, String)> {
    let rs = fig11(quick)?;
    let (avg, max, k, own) = reduction_by_app_ctx(get(&rs, label)?, Some(get(&rs, "ideal")?));
    Ok((
        avg,
        max,
        format!(
            "{n}: avg {}, max {} over {k} app-contexts vs the ideal run's RSS (the page-out itself: {} of the RSS just before)",
            pct(avg),
            pct(max),
            pct(own)
        ),
    ))
}

/// Row 1: RSS reduction, anonymous pages only.
fn rss_anon(quick: bool) -> anyhow::Result<Check> {
    let (avg, max, s) = rss_row(quick, "anon", "anon only")?;
    Ok(Check {
        check: "1 RSS reduction vs the ideal run at the swap moment, anonymous only (H1^c ∪ B1 kept)".into(),
        paper: "§4 Fig. 11: avg 23%, max 48%".into(),
        simulated: s,
        tolerance: "avg 15-35%, max <= 60%".into(),
        status: status((0.15..=0.35).contains(&avg) && max <= 0.60),
    })
}

/// Row 2: RSS reduction, anonymous + file pages.
fn rss_file(quick: bool) -> anyhow::Result<Check> {
    let (avg_a, _, _) = rss_row(quick, "anon", "anon")?;
    let (avg, max, s) = rss_row(quick, "anon+file", "anon+file")?;
    Ok(Check {
        check: "2 RSS reduction vs the ideal run at the swap moment, anonymous + file".into(),
        paper: "§4: avg 34%, max 60%".into(),
        simulated: format!("{s} (anon only avg {})", pct(avg_a)),
        tolerance: "avg 25-45% and > anon only".into(),
        status: status((0.25..=0.45).contains(&avg) && avg > avg_a && max.is_finite()),
    })
}

/// Row 3: hot-launch latency increase over the ideal.
fn latency(quick: bool) -> anyhow::Result<Check> {
    let rs = fig11(quick)?;
    let ideal = get(&rs, "ideal")?;
    let mut inc = Vec::new();
    let (mut under150, mut within50, mut n) = (0, 0, 0);
    let mut ideals = Vec::new();
    for label in ["anon", "anon+file"] {
        for (_, ms, id) in paired(get(&rs, label)?, ideal, None) {
            inc.push(ms - id);
            ideals.push(id);
            n += 1;
            under150 += (ms < 150.0) as u32;
            within50 += (ms - id <= 50.0) as u32;
        }
    }
    let med = median(&inc);
    let f50 = within50 as f64 / n.max(1) as f64;
    let collecting: Vec<f64> = {
        let by_t: BTreeMap<(usize, u64), f64> = ideal
            .stats
            .launches
            .iter()
            .map(|l| ((l.app, l.t), l.ms))
            .collect();
        get(&rs, "anon+file")?
            .stats
            .launches
            .iter()
            .filter(|l| l.collecting)
            .filter_map(|l| by_t.get(&(l.app, l.t)).map(|i| l.ms - i))
            .collect()
    };
    Ok(Check {
        check: "3 hot-launch latency - ideal after the MemSaver swap (anon and anon+file runs)".into(),
        paper: "§4: mostly +10..50 ms, usually < 150 ms; rare 200-300 ms".into(),
        simulated: format!(
            "median +{med:.0} ms over {n} launches (ideal median {:.0} ms); {} within ideal+50 ms; {} < 150 ms; collecting launches +{:.0} ms median (reported apart)",
            median(&ideals),
            pct(f50),
            pct(under150 as f64 / n.max(1) as f64),
            median(&collecting)
        ),
        tolerance: "median increase <= 50 ms; >= 80% within ideal + 50 ms (the < 150 ms share assumes a ~100 ms ideal; ours differ per app)".into(),
        status: status(n > 0 && med <= 50.0 && f50 >= 0.8),
    })
}

/// (swapped fraction, latency ratio to ideal) of YouTube under `label`.
fn youtube(rs: &[Run], label: &str) -> anyhow::Result<(f64, f64, u64)> {
    let run = get(rs, label)?;
    let ideal = get(rs, "ideal")?;
    let yt = app_index(run, "YouTube").context("no YouTube")?;
    let ps = retains(run, Some(yt));
    let red = mean(&ps.iter().map(|p| p.reduction()).collect::<Vec<_>>());
    let swapped: u64 = ps
        .iter()
        .map(|p| p.rss_before().saturating_sub(p.rss_after()))
        .sum();
    let pr = paired(run, ideal, Some(yt));
    let ratio = mean(&pr.iter().map(|&(_, m, i)| m / i).collect::<Vec<_>>());
    Ok((red, ratio, swapped / ps.len().max(1) as u64))
}

/// Row 4: LRU-background baseline.
fn lru_b(quick: bool) -> anyhow::Result<Check> {
    let rs = fig11(quick)?;
    let (red, ratio, _) = youtube(&rs, "lru-b")?;
    let (_, ms_ratio, _) = youtube(&rs, "anon+file")?;
    Ok(Check {
        check: "4 LRU-background vs MemSaver (YouTube)".into(),
        paper: "§2.1 Fig. 2: LRU-B swaps > 90% of RSS, latency > 6x the 120 ms ideal".into(),
        simulated: format!(
            "LRU-B swapped {}, latency {ratio:.2}x ideal; MemSaver {ms_ratio:.2}x ideal",
            pct(red)
        ),
        tolerance: "LRU-B swapped >= 80% and latency >= 3x; MemSaver <= 1.5x".into(),
        status: status(red >= 0.8 && ratio >= 3.0 && ms_ratio <= 1.5),
    })
}

/// Row 5: LRU-B / LRU-F swapped pages per app. LRU-F's latency gap: the fig11 scenario's uses are
/// 20 s against a 10-s window, so the launch's own pages are paged out; with a 30-s window the
/// median was still 158 vs 112 ms ideal (194k pages swapped in against 420k), the rest being the
/// launch-set differences between launches (session-6 measurement, `hotlaunch run` of the
/// scenario with ideal / lru-f / lru-f at 30 s).
fn lru_f(quick: bool) -> anyhow::Result<Check> {
    let rs = fig11(quick)?;
    let b = get(&rs, "lru-b")?;
    let f = get(&rs, "lru-f")?;
    let ideal = get(&rs, "ideal")?;
    let mut ratios = Vec::new();
    for (i, a) in b.out.per_app.iter().enumerate() {
        let sw = |r: &Run| {
            let ps = retains(r, Some(i));
            ps.iter()
                .map(|p| p.rss_before().saturating_sub(p.rss_after()))
                .sum::<u64>() as f64
                / ps.len().max(1) as f64
        };
        let (sb, sf) = (sw(b), sw(f));
        if sb > 0.0 {
            ratios.push((a.app.clone(), sb / sf.max(1.0)));
        }
    }
    let fl = paired(f, ideal, None);
    let f_ratio = mean(&fl.iter().map(|&(_, m, i)| m / i).collect::<Vec<_>>());
    let lo = ratios.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
    let hi = ratios.iter().map(|r| r.1).fold(f64::NEG_INFINITY, f64::max);
    let list: Vec<String> = ratios.iter().map(|(a, r)| format!("{a} {r:.1}x")).collect();
    Ok(Check {
        check: "5 pages swapped, LRU-B / LRU-F; LRU-F latency".into(),
        paper: "§2.1 Fig. 2: LRU-B swaps 2.1x-6.5x as many pages; LRU-F adds little latency".into(),
        simulated: format!(
            "{} ; LRU-F latency {f_ratio:.2}x ideal (LRU-F keeps what the last `lru_f_window_s` touched: \
             with uses longer than the window a launch's pages fall outside it, and launch sets differ \
             between launches, `same_context_overlap` < 1, so the next launch faults)",
            list.join(", ")
        ),
        tolerance: "every ratio within 1.5x-8x; LRU-F latency <= 1.25x ideal".into(),
        status: status(!ratios.is_empty() && lo >= 1.5 && hi <= 8.0 && f_ratio <= 1.25),
    })
}

fn overlap(a: &[u32], b: &[u32]) -> f64 {
    // |a ∩ b| / |b|, both sorted.
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n as f64 / b.len().max(1) as f64
}

/// Row 6: overlap of detected H's (YouTube, video).
fn h_overlap(quick: bool) -> anyhow::Result<Check> {
    let rs = runs("memsaver-fig9-youtube", quick)?;
    let hs: Vec<&Vec<u32>> = get(&rs, "every")?
        .stats
        .h_sets
        .iter()
        .map(|(_, _, s)| s)
        .collect();
    anyhow::ensure!(hs.len() >= 2, "only {} H collected", hs.len());
    let h1 = hs[hs.len() - 1];
    let older: Vec<f64> = hs.iter().rev().skip(1).take(4).map(|h| overlap(h, h1)).collect();
    let consec: Vec<f64> = hs.windows(2).map(|w| overlap(w[0], w[1])).collect();
    let all: Vec<f64> = older.iter().chain(&consec).copied().collect();
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Ok(Check {
        check: "6 overlap of detected H's, YouTube video (H_k with H_1; consecutive)".into(),
        paper: "Figs. 10, 3a: ~75% for k = 2..5; ~80% consecutive".into(),
        simulated: format!(
            "H_k∩H_1: {}; consecutive mean {} ({} H's)",
            older.iter().map(|x| pct(*x)).collect::<Vec<_>>().join(", "),
            pct(mean(&consec)),
            hs.len()
        ),
        tolerance: "all within 65-90%".into(),
        status: status(lo >= 0.65 && hi <= 0.90),
    })
}

/// Fault time (zram decompression, fault handling, flash waits) and the rest of each hot launch
/// of `run` that follows a retention page-out, ms, from the run's launch log.
fn fault_split(run: &Run) -> (Vec<f64>, Vec<f64>) {
    let (mut fault, mut rest) = (Vec::new(), Vec::new());
    for l in run.stats.launches.iter().filter(|l| l.after == "retain") {
        let rec = run
            .out
            .launch_log
            .iter()
            .filter(|r| r.hot && r.app as usize == l.app)
            .min_by_key(|r| r.t.abs_diff(l.t));
        if let Some(r) = rec {
            let s = r.split;
            let f = (s.decompress_ns + s.fault_ns + s.flash_ns) as f64 / 1e6;
            fault.push(f);
            rest.push((r.end - r.t) as f64 / 1e6 - f);
        }
    }
    (fault, rest)
}

/// Of each detected H_{k+1} of the `every` history: the share outside H_k, and the share of
/// those missed pages that H_{k-1} ∪ H_{k-2} hold (what keeping three H's saves a launch).
fn missed_by_h1(hs: &[&Vec<u32>]) -> (f64, f64) {
    let (mut miss, mut caught) = (Vec::new(), Vec::new());
    for k in 2..hs.len().saturating_sub(1) {
        let next = hs[k + 1];
        let out: Vec<u32> = next
            .iter()
            .copied()
            .filter(|p| hs[k].binary_search(p).is_err())
            .collect();
        miss.push(out.len() as f64 / next.len().max(1) as f64);
        let older = out
            .iter()
            .filter(|p| hs[k - 1].binary_search(p).is_ok() || hs[k - 2].binary_search(p).is_ok())
            .count();
        caught.push(older as f64 / out.len().max(1) as f64);
    }
    (mean(&miss), mean(&caught))
}

/// Row 7: keeping three H's vs one. Measured cause of the latency gain: the next launch's pages
/// outside H1 that H2 ∪ H3 still hold fault in under `one-h` (the launch-set generator's
/// consecutive overlap, row 6, is below the paper's ~80%, so H1 misses more); printed as the
/// launches' fault time against the rest, and from the `every` H history.
fn multi_h(quick: bool) -> anyhow::Result<Check> {
    let rs = runs("memsaver-fig9-youtube", quick)?;
    let ideal = get(&rs, "ideal")?;
    let sw = |r: &Run| {
        let ps = retains(r, None);
        (
            ps.iter()
                .map(|p| p.rss_before().saturating_sub(p.rss_after()))
                .sum::<u64>() as f64
                / ps.len().max(1) as f64,
            ps.len(),
        )
    };
    let (one, three) = (get(&rs, "one-h")?, get(&rs, "three-h")?);
    let ((s1, n1), (s3, n3)) = (sw(one), sw(three));
    let lat = |r: &Run| mean(&paired(r, ideal, None).iter().map(|p| p.1).collect::<Vec<_>>());
    let (l1, l3) = (lat(one), lat(three));
    let cut = 1.0 - s3 / s1;
    let ((f1, r1), (f3, r3)) = (fault_split(one), fault_split(three));
    let hs: Vec<&Vec<u32>> = get(&rs, "every")?
        .stats
        .h_sets
        .iter()
        .map(|(_, _, s)| s)
        .collect();
    let (miss, caught) = missed_by_h1(&hs);
    Ok(Check {
        check: "7 keep H1∪H2∪H3∪B1 vs H1∪B1 (YouTube video)".into(),
        paper: "Fig. 9: ~32% fewer pages swapped out, no latency gain".into(),
        simulated: format!(
            "swapped {s1:.0} vs {s3:.0} pages ({} fewer; {n1}/{n3} swap moments); latency {l1:.0} vs {l3:.0} ms \
             (fault time {:.0} vs {:.0} ms, rest {:.0} vs {:.0} ms, {}/{} launches); cause: H_k+1 has {} of its \
             pages outside H_k and H_k-1 ∪ H_k-2 hold {} of those (`every` history), so one H faults them back",
            pct(cut),
            mean(&f1),
            mean(&f3),
            mean(&r1),
            mean(&r3),
            f1.len(),
            f3.len(),
            pct(miss),
            pct(caught)
        ),
        tolerance: "swap-out reduced 20-45%; latency change <= 10 ms".into(),
        status: status((0.20..=0.45).contains(&cut) && (l1 - l3).abs() <= 10.0),
    })
}

/// Row 8: B1 covers B2; keeping B2 as well changes little.
fn b1_b2(quick: bool) -> anyhow::Result<Check> {
    let rs = fig11(quick)?;
    let late = get(&rs, "late-h+b1")?;
    let both = get(&rs, "h+b1+b2")?;
    let ideal = get(&rs, "ideal")?;
    let (b2, inb1) = late
        .stats
        .pageouts
        .iter()
        .fold((0u64, 0u64), |(a, b), p| (a + p.b2, b + p.b2_in_b1));
    let cover = inb1 as f64 / b2.max(1) as f64;
    let swapped = |r: &Run| {
        retains(r, None)
            .iter()
            .map(|p| p.rss_before().saturating_sub(p.rss_after()))
            .sum::<u64>() as f64
    };
    let lat = |r: &Run| mean(&paired(r, ideal, None).iter().map(|p| p.1).collect::<Vec<_>>());
    let ds = (swapped(both) / swapped(late) - 1.0).abs();
    let dl = (lat(both) / lat(late) - 1.0).abs();
    Ok(Check {
        check: "8 B1 covers B2; H1∪B1∪B2 vs H1∪B1".into(),
        paper: "Fig. 7: B1 covers ~95% of B2; Fig. 6b/c: no substantial change".into(),
        simulated: format!(
            "B1 ⊇ {} of B2 ({b2} B2 pages); adding B2 changes swap-out {} and latency {}",
            pct(cover),
            pct(ds),
            pct(dl)
        ),
        tolerance: "coverage >= 85%; changes <= 5%".into(),
        status: status(b2 > 0 && cover >= 0.85 && ds <= 0.05 && dl <= 0.05),
    })
}

/// Row 9: keeping H1 ∪ B2 only.
fn h_b2(quick: bool) -> anyhow::Result<Check> {
    let rs = fig11(quick)?;
    let ideal = get(&rs, "ideal")?;
    let (late, hb2) = (get(&rs, "late-h+b1")?, get(&rs, "h+b2")?);
    // Both swap 60 s after the transition end, when the ideal run has no swap moment: each
    // against its own RSS just before (both carry the same detection page-outs).
    let (r1, _, _, _) = reduction_by_app_ctx(late, None);
    let (r2, m2, _, _) = reduction_by_app_ctx(hb2, None);
    let pr = paired(hb2, ideal, None);
    let ratio = mean(&pr.iter().map(|&(_, m, i)| m / i).collect::<Vec<_>>());
    Ok(Check {
        check: "9 keep H1 ∪ B2 only (no B1)".into(),
        paper: "Fig. 6a: up to 60% RSS reduction, latency much higher than ideal".into(),
        simulated: format!(
            "H1∪B2 avg {} (max {}) vs H1∪B1 {}; latency {ratio:.2}x ideal",
            pct(r2),
            pct(m2),
            pct(r1)
        ),
        tolerance: "reduction > H1∪B1's; latency >= 1.5x ideal".into(),
        status: status(r2 > r1 && ratio >= 1.5),
    })
}

/// Row 10: background apps kept alive under pressure (an extrapolation in the paper).
/// The paper gives no device or app count for it, only the premise "a smartphone that currently
/// can hold 10 background apps" (§4, on its 12 GB OnePlus 9 Pro, where our 24 apps all stay
/// cached). Measured causes of the GAP, printed from the runs: (1) on the 4 GB Pixel 3 stock kills
/// no app for lack of memory (full run: all 20 cached; the default LiveLab day too: 1 kill, 15.6
/// cached mean for both android and memsaver), so there is nothing to save; (2) MemSaver's first
/// page-out of each app is the detection one (every anonymous page to zram, §3.2), which fills
/// the zram and adds low-memory-and-swap-full kills before retention page-outs start; (3) a
/// retention page-out needs an earlier hot launch in the same context (§3.4), and a round-robin
/// over more apps than the phone holds has none: on the 2 GB A03 Core (Android 11) stock holds
/// at most 8 (55 kills, 60 cold launches, 0 hot) and MemSaver collects 0 H's (session 7,
/// `hotlaunch run` of this scenario with `device = "a03core"`); (4) `--quick` runs one round,
/// cold launches only, so no H at all.
fn system(quick: bool) -> anyhow::Result<Check> {
    let rs = runs("memsaver-system", quick)?;
    let (a, m) = (get(&rs, "android")?, get(&rs, "memsaver")?);
    let ratio = m.out.cached_mean() / a.out.cached_mean();
    let kills = |r: &Run| {
        let why: Vec<String> = r.out.kills.iter().map(|(k, n)| format!("{k} {n}")).collect();
        format!("{} ({})", r.out.kills.values().sum::<u64>(), why.join(", "))
    };
    let hot = |r: &Run| r.out.launch_log.iter().filter(|l| l.hot).count();
    let stock_kills: u64 = a.out.kills.values().sum();
    let retain = m.stats.pageouts.iter().filter(|p| p.kind == "retain").count();
    let mut cause = Vec::new();
    if stock_kills <= 1 {
        cause.push("stock kills no app for lack of memory: nothing to save");
    }
    if retain == 0 {
        cause.push("no retention page-out: it needs an earlier same-context hot launch (§3.4)");
    }
    Ok(Check {
        check: "10 background apps kept alive, 20 apps round-robin, 4 GB Pixel 3, lmkd (not measured in the paper)".into(),
        paper: "§4 extrapolation: 10 -> 15 apps with 33% saving (arithmetic)".into(),
        simulated: format!(
            "mean cached apps {:.1} stock vs {:.1} MemSaver ({ratio:.2}x); peak {} vs {} of {} apps; kills {} vs {}; hot launches {} vs {}; MemSaver: {} H collected, page-outs {} detection (all anon to swap), {retain} retention{}",
            a.out.cached_mean(),
            m.out.cached_mean(),
            a.out.cached_peak,
            m.out.cached_peak,
            a.out.per_app.len(),
            kills(a),
            kills(m),
            hot(a),
            hot(m),
            m.stats.collections,
            m.stats.pageouts.iter().filter(|p| p.kind == "detect").count(),
            if cause.is_empty() { String::new() } else { format!("; cause: {}", cause.join("; ")) },
        ),
        tolerance: "ratio >= 1.3x (extrapolation check)".into(),
        status: status(ratio >= 1.3),
    })
}
