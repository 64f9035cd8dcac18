//! `marvin`: the rows of `../shared/specs/marvin-checks.md` (Marvin, ATC'20), each with the
//! paper's figure, the simulated one, the tolerance and PASS/GAP.
//!
//! Active apps (§8.3): an app is active at time T if one of its churn rounds completed in
//! (T − 20 s, T] (marvin-code `parse-allocatoractivity-log.pl`, INACTIVE_TIMEOUT = 20). A round's
//! completion is taken on a serialised main thread: it cannot finish before the previous round
//! did (completion = max(start, previous completion) + the round's stall), so a thrashing app falls
//! behind and goes inactive.

use super::{status, Check, CheckList};
use anyhow::Context;
use framework::sim::{ChurnRound, SimOutput};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use workload::scenario::{Scenario, WorkloadSpec};

pub(super) fn checks() -> CheckList {
    vec![
        ("marvin-1-active-4k", active_4k),
        ("marvin-2-active-mix", active_mix),
        ("marvin-3-swap-file", swap_file),
        ("marvin-4-reclaim-latency", reclaim_latency),
        ("marvin-5-alloc-pressure", alloc_pressure),
        ("marvin-6-vs-swap", versus_swap),
        ("marvin-7-eager-restore", eager_restore),
        ("marvin-8-interposition", interposition),
        ("marvin-9-small-objects", small_objects),
        ("marvin-10-hot-launch-tails", hot_launch_tails),
    ]
}

const S: u64 = 1_000_000_000;
/// Inactive after 20 s without a completed round (marvin-code INACTIVE_TIMEOUT).
const INACTIVE_NS: u64 = 20 * S;

/// App instances the quick launch-one-more runs keep: past stock Android's ~10 (Marvin §8.3), so
/// memory gets tight and the rows measure something (3 instances never did: no kills).
const QUICK_APPS: usize = 16;
/// Seconds between instances in quick runs (the paper: 10 min).
const QUICK_USE_S: f64 = 60.0;

/// A built-in scenario; `quick` keeps [`QUICK_APPS`] instances of the §8.3 launch-one-more
/// scenarios, [`QUICK_USE_S`] apart, and shrinks the others as every group does (the reclaim scenario,
/// a few CPU-seconds, runs whole: with fewer apps memory never gets tight).
fn load(name: &str, quick: bool) -> anyhow::Result<Scenario> {
    let mut sc = Scenario::builtin(name)?;
    if !quick {
        return Ok(sc);
    }
    match &mut sc.workload {
        WorkloadSpec::LaunchOneMore { order, params, .. } if name.starts_with("marvin-8.3") => {
            sc.apps.truncate(QUICK_APPS);
            order.clear();
            params.use_s = params.use_s.min(QUICK_USE_S);
        }
        _ => super::shrink(&mut sc.workload),
    }
    Ok(sc)
}

/// What a quick launch-one-more row ran, for its printed line.
fn quick_note(quick: bool) -> String {
    if quick {
        format!(" [quick: {QUICK_APPS} instances {QUICK_USE_S:.0} s apart]")
    } else {
        String::new()
    }
}

/// What the rows read of one run: the figures, not the run's kernel (a whole `SimOutput` holds
/// the kernel's page tables and content store, hundreds of MB per run; caching those made the
/// quick group peak at 4.5 GB).
struct Run {
    churn_rounds: Vec<ChurnRound>,
    /// Live apps at the last sample.
    alive_end: u32,
    simulated: u64,
    alive_peak: u32,
    cached_peak: u32,
    kills: BTreeMap<&'static str, u64>,
    policy_metrics: BTreeMap<String, f64>,
    alloc_ms: Vec<f64>,
    /// Pages the kernel zapped for shrinkers (Marvin's reclamation table) and its CPU for them,
    /// ns (vmstat `shrinker_zap_*`: the shrinker path's own cost, not the LRU's).
    zap_pages: u64,
    zap_ranges: u64,
    zap_ns: u64,
    /// The device's per-page zap cost (`cpu.zap_page_ns`), ns.
    zap_page_ns: u64,
    app_cpu_ns: u64,
    app_names: Vec<String>,
    /// (app index, ms) of every hot launch, in launch order.
    hot_launches: Vec<(usize, f64)>,
}

impl Run {
    fn of(o: &SimOutput) -> Self {
        let v = &o.kernel.vmstat;
        Run {
            churn_rounds: o.churn_rounds.clone(),
            alive_end: o.samples.last().map_or(0, |s| s.alive_apps),
            simulated: o.simulated,
            alive_peak: o.alive_peak,
            cached_peak: o.cached_peak,
            kills: o.kills.clone(),
            policy_metrics: o.policy_metrics.clone(),
            alloc_ms: o.alloc_ms.clone(),
            zap_pages: v.shrinker_zap_pages,
            zap_ranges: v.shrinker_zap_ranges,
            zap_ns: v.shrinker_zap_ns,
            zap_page_ns: o.kernel.params.zap_page_ns,
            app_cpu_ns: o.kernel.cpu.by_category(engine::Category::App),
            app_names: o.per_app.iter().map(|a| a.app.clone()).collect(),
            hot_launches: o
                .launch_log
                .iter()
                .filter(|l| l.hot)
                .map(|l| (l.app as usize, (l.end - l.t) as f64 / 1e6))
                .collect(),
        }
    }
}

type Runs = Arc<Vec<(String, Run)>>;

/// Several rows read the same scenario's runs: run each (scenario, quick) once per process.
static CACHE: Mutex<BTreeMap<(String, bool), Runs>> = Mutex::new(BTreeMap::new());

fn run(name: &str, quick: bool) -> anyhow::Result<Runs> {
    let key = (name.to_string(), quick);
    if let Some(r) = CACHE.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(r.clone());
    }
    let mut runs = Vec::new();
    let sc = load(name, quick)?;
    // One run at a time: only its figures are kept.
    let r = sc.resolve()?;
    let spec = crate::RunSpec::from_scenario(&r);
    for p in crate::plan_runs(&r, &[])? {
        let out = crate::run_policy(
            &spec.for_plan(&p),
            p.policy.as_ref(),
            &p.params,
            p.swap,
            |_, _| {},
        )
        .with_context(|| format!("scenario {name}, run {}", p.label))?;
        runs.push((p.label.clone(), Run::of(&out)));
    }
    let runs = Arc::new(runs);
    CACHE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, runs.clone());
    Ok(runs)
}

fn get<'a>(runs: &'a [(String, Run)], label: &str) -> anyhow::Result<&'a Run> {
    runs.iter()
        .find(|(l, _)| l == label)
        .map(|(_, r)| r)
        .ok_or_else(|| anyhow::anyhow!("no run labelled `{label}`"))
}

/// Completion times of each app's rounds on a serialised main thread.
fn completions(rounds: &[ChurnRound]) -> Vec<(u64, u32)> {
    let mut last: std::collections::BTreeMap<u32, u64> = Default::default();
    let mut v: Vec<(u64, u32)> = rounds
        .iter()
        .map(|r| {
            let prev = last.get(&r.app).copied().unwrap_or(0);
            let done = r.start.max(prev) + (r.end - r.start);
            last.insert(r.app, done);
            (done, r.app)
        })
        .collect();
    v.sort_unstable();
    v
}

/// Apps with a completion in (t − 20 s, t].
fn active_at(c: &[(u64, u32)], t: u64) -> usize {
    let lo = t.saturating_sub(INACTIVE_NS);
    let mut apps: Vec<u32> = c
        .iter()
        .filter(|&&(d, _)| d > lo && d <= t)
        .map(|&(_, a)| a)
        .collect();
    apps.sort_unstable();
    apps.dedup();
    apps.len()
}

/// Most concurrently active apps over the run.
fn active_max(out: &Run) -> usize {
    active_max_of(&out.churn_rounds)
}

/// Most concurrently active apps (§8.3 definition) over a run's churn rounds; the baseline's
/// §8.3 row counts the same way.
pub(crate) fn active_max_of(rounds: &[ChurnRound]) -> usize {
    let c = completions(rounds);
    let mut best = 0;
    let mut lo = 0;
    let mut counts: std::collections::BTreeMap<u32, u32> = Default::default();
    // Sliding window over completion times.
    for hi in 0..c.len() {
        *counts.entry(c[hi].1).or_default() += 1;
        while c[lo].0 + INACTIVE_NS <= c[hi].0 {
            let e = counts.get_mut(&c[lo].1).expect("counted");
            *e -= 1;
            if *e == 0 {
                counts.remove(&c[lo].1);
            }
            lo += 1;
        }
        best = best.max(counts.len());
    }
    best
}

/// Share of live apps that are inactive at the end of the run.
fn inactive_share_at_end(out: &Run) -> f64 {
    let alive = out.alive_end as f64;
    let c = completions(&out.churn_rounds);
    let active = active_at(&c, out.simulated) as f64;
    if alive == 0.0 {
        0.0
    } else {
        (1.0 - active / alive).max(0.0)
    }
}

fn metric(out: &Run, k: &str) -> f64 {
    out.policy_metrics.get(k).copied().unwrap_or(f64::NAN)
}

fn summary(label: &str, out: &Run) -> String {
    format!(
        "{label}: {} active (alive peak {}, kills {})",
        active_max(out),
        out.alive_peak,
        lmkd_kills(out)
    )
}

/// #1: active apps, 4 KiB arrays: Marvin 27 vs Android 10.
fn active_4k(quick: bool) -> anyhow::Result<Check> {
    let runs = run("marvin-8.3-active", quick)?;
    let a = get(&runs, "android")?;
    let m = get(&runs, "marvin")?;
    let ratio = active_max(m) as f64 / active_max(a).max(1) as f64;
    Ok(Check {
        check: "#1 active apps, 220 MB 4 KiB-array apps, one more every 10 min (Pixel XL)".into(),
        paper: "Marvin §8.3: Marvin 27 vs Android 10 (>2x)".into(),
        simulated: format!(
            "{}; {}; ratio {ratio:.2}; saved {:.0} MB, reclaimed {:.0} MB, object faults {}{}",
            summary("android", a),
            summary("marvin", m),
            metric(m, "marvin.saved_mb"),
            metric(m, "marvin.reclaimed_mb"),
            metric(m, "marvin.object_faults"),
            quick_note(quick),
        ),
        tolerance: "Marvin/Android in [2.0, 3.2]".into(),
        status: status((2.0..=3.2).contains(&ratio)),
    })
}

/// #2: the 4 KiB / 1 MiB mix: Marvin 30, Android+swap briefly 20, Android 10.
fn active_mix(quick: bool) -> anyhow::Result<Check> {
    let runs = run("marvin-8.3-mix", quick)?;
    let a = get(&runs, "android")?;
    let w = get(&runs, "swap-file")?;
    let m = get(&runs, "marvin")?;
    let ratio = active_max(m) as f64 / active_max(w).max(1) as f64;
    Ok(Check {
        check: "#2 active apps, 4 KiB / 1 MiB mix".into(),
        paper: "Marvin §8.3: Marvin 30; Android+swap briefly 20; Android 10".into(),
        simulated: format!(
            "{}; {}; {}; Marvin/swap {ratio:.2}{}",
            summary("android", a),
            summary("swap-file", w),
            summary("marvin", m),
            quick_note(quick)
        ),
        tolerance: "Marvin/Android+swap in [1.3, 1.8]".into(),
        status: status((1.3..=1.8).contains(&ratio)),
    })
}

/// #3: Android + swap file, 4 KiB: briefly 13; most apps inactive by the end.
fn swap_file(quick: bool) -> anyhow::Result<Check> {
    let runs = run("marvin-8.3-active", quick)?;
    let w = get(&runs, "swap-file")?;
    let m = get(&runs, "marvin")?;
    let ratio = active_max(m) as f64 / active_max(w).max(1) as f64;
    let share = inactive_share_at_end(w);
    Ok(Check {
        check: "#3 Android + flash swap file vs Marvin, 4 KiB arrays".into(),
        paper: "Marvin §8.3: Android+swap briefly 13 active; most apps inactive (thrashing)".into(),
        simulated: format!(
            "{}; {}; Marvin/swap {ratio:.2}; swap-file inactive share at end {:.0}%{}",
            summary("swap-file", w),
            summary("marvin", m),
            share * 100.0,
            quick_note(quick)
        ),
        tolerance: "Marvin/Android+swap in [1.7, 2.5] and inactive share > 50%".into(),
        status: status((1.7..=2.5).contains(&ratio) && share > 0.5),
    })
}

/// Reclaim times (250 MB, 500 MB) in ms: the kernel's work for that many pages at the run's
/// measured cost per page of Marvin's shrinker path alone (zap CPU / pages zapped: each clean
/// saved object's range dropped like the artifact's per-object `madvise(MADV_DONTNEED)`, no I/O;
/// the LRU's own reclaim is not mixed in). The shrinker's table scan (policy CPU, `rte_scan_ns`
/// per entry) is left out: ~1% of it. `Err(cause)` when the run did not measure it: Marvin's
/// shrinker was never asked (memory never got tight).
fn reclaim_ms(out: &Run) -> Result<(f64, f64), String> {
    let shrunk = metric(out, "marvin.shrinker_reclaimed_mb");
    if shrunk.is_nan() || shrunk <= 0.0 || out.zap_pages == 0 {
        return Err("memory never got tight: Marvin's shrinker reclaimed nothing".into());
    }
    let ms_per_mb = out.zap_ns as f64 / out.zap_pages as f64 * 256.0 / 1e6;
    Ok((250.0 * ms_per_mb, 500.0 * ms_per_mb))
}

/// Extra time the allocations took under pressure (under pressure − with free memory), ms.
fn alloc_stall_ms(out: &Run) -> Option<(f64, f64)> {
    let a = &out.alloc_ms;
    (a.len() >= 4).then(|| (a[2] - a[0], a[3] - a[1]))
}

/// #4: 250 MB in 52 ms, 500 MB in 108 ms.
fn reclaim_latency(quick: bool) -> anyhow::Result<Check> {
    let runs = run("marvin-8.2-reclaim", quick)?;
    let m = &runs[0].1;
    let stall = match alloc_stall_ms(m) {
        Some((a, b)) => format!("allocation stall under pressure {a:.0} / {b:.0} ms (kswapd keeps ahead)"),
        None => format!("{} of the 4 allocations ran", m.alloc_ms.len()),
    };
    let detail = format!(
        "{stall}; shrinker reclaimed {:.0} MB in {:.0} calls, lmkd kills {}",
        metric(m, "marvin.shrinker_reclaimed_mb"),
        metric(m, "marvin.shrinker_calls"),
        lmkd_kills(m)
    );
    let (simulated, ok) = match reclaim_ms(m) {
        Ok((r250, r500)) => {
            let ok = (26.0..=104.0).contains(&r250) && (54.0..=216.0).contains(&r500);
            // Why it misses when it does: the cost is the device profile's range-zap figures
            // (host-measured MADV_DONTNEED x speed_factor) over the objects' page ranges, not a
            // Marvin figure.
            let us_page = r250 * 1000.0 / (250.0 * 256.0);
            let per_range = m.zap_pages as f64 / m.zap_ranges.max(1) as f64;
            let cause = if ok {
                String::new()
            } else {
                format!(
                    " (GAP cause: the artifact drops object by object (one madvise each) and these \
                     objects are {per_range:.1} page(s), so each page pays a whole range zap: the \
                     device's cpu.zap_range_ns + cpu.zap_page_ns, a one-page MADV_DONTNEED measured \
                     on the simulator's host (Xeon VM guest, ~1.1 us without the syscall) x \
                     speed_factor, give {us_page:.2} us/page; the paper's 52 ms is ~0.8 us/page, i.e. \
                     this path is ~{:.0}x cheaper on the Pixel XL than the host figure x speed_factor, \
                     or Fig. 6's app (object sizes not given) had multi-page objects: at the per-page \
                     cost alone 250 MB takes {:.0} ms)",
                    us_page / 0.8,
                    m.zap_page_ns as f64 * 250.0 * 256.0 / 1e6
                )
            };
            (
                format!(
                    "reclaim work 250 MB {r250:.0} ms, 500 MB {r500:.0} ms (shrinker zaps only: {:.0} MB in {} \
                     ranges, {us_page:.2} us/page, linear){cause}; {detail}",
                    m.zap_pages as f64 / 256.0,
                    m.zap_ranges
                ),
                ok,
            )
        }
        Err(cause) => (format!("not measured: {cause}; {detail}"), false),
    };
    Ok(Check {
        check: "#4 reclamation latency from background Marvin apps (kernel reclaim work under pressure)"
            .into(),
        paper: "Marvin §8.2 Fig. 6: 250 MB in 52 ms, 500 MB in 108 ms".into(),
        simulated,
        tolerance: "each within ×/÷ 2 (linear by construction: one cost per page)".into(),
        status: status(ok),
    })
}

/// Kills by the low-memory killer (not the script's own force-stops, reason "user").
fn lmkd_kills(out: &Run) -> u64 {
    out.kills
        .iter()
        .filter(|(r, _)| **r != "user")
        .map(|(_, n)| n)
        .sum()
}

/// Android + swap file: 512 MB under pressure (the baseline's Fig. 3 scenario), ms.
fn swap_alloc(quick: bool) -> anyhow::Result<(f64, f64)> {
    let runs = run("marvin-fig3-alloc", quick)?;
    let a = &runs[0].1.alloc_ms;
    Ok((
        a.first().copied().unwrap_or(f64::NAN),
        a.get(1).copied().unwrap_or(f64::NAN),
    ))
}

/// #5: 450 ms free vs ~8 s under pressure with a swap file (stock calibration).
fn alloc_pressure(quick: bool) -> anyhow::Result<Check> {
    let (free, pressure) = swap_alloc(quick)?;
    let ratio = pressure / free;
    Ok(Check {
        check: "#5 allocate 512 MB: free vs under pressure with a swap file (stock, Pixel XL)".into(),
        paper: "Marvin Fig. 3: 450 ms vs ~8 s".into(),
        simulated: format!(
            "{free:.0} ms free, {:.2} s under pressure ({ratio:.1}x)",
            pressure / 1000.0
        ),
        tolerance: "pressure 8 s ± 40%, ratio >= 10x".into(),
        status: status((4800.0..=11200.0).contains(&pressure) && ratio >= 10.0),
    })
}

/// #6: Android+swap 512 MB under pressure / Marvin's 500 MB reclaim: >60x.
fn versus_swap(quick: bool) -> anyhow::Result<Check> {
    let (_, pressure) = swap_alloc(quick)?;
    let runs = run("marvin-8.2-reclaim", quick)?;
    let (simulated, ok) = match reclaim_ms(&runs[0].1) {
        Ok((_, r500)) if r500 > 0.0 => {
            let ratio = pressure / r500;
            let cause = if ratio >= 30.0 {
                ""
            } else {
                " (GAP cause: row #4's per-page zap cost; the paper's 108 ms would give ~60x)"
            };
            (
                format!("{:.2} s / {r500:.0} ms = {ratio:.0}x{cause}", pressure / 1000.0),
                ratio >= 30.0,
            )
        }
        Ok((_, r500)) => (
            format!("not measured: Marvin's 500 MB reclaim took {r500:.0} ms"),
            false,
        ),
        Err(cause) => (format!("not measured: row #4 {cause}"), false),
    };
    Ok(Check {
        check: "#6 Android+swap allocation under pressure vs Marvin reclaim (500 MB)".into(),
        paper: "Marvin §8.2: over 60x faster (~8 s / 108 ms)".into(),
        simulated,
        tolerance: ">= 30x".into(),
        status: status(ok),
    })
}

/// #7: eager restore at ~100 MB/s: slope of the hot-launch time over the restored MB.
fn eager_restore(quick: bool) -> anyhow::Result<Check> {
    let runs = run("marvin-8.2-reclaim", quick)?;
    let m = &runs[0].1;
    // (restored MB, hot launch ms) of every hot launch of an array app: the k-th hot launch of
    // app i in the launch log restored `marvin.app{i}.restore{k}_mb`. The scenario relaunches
    // each app once more a few seconds later (little to restore), so the points span X.
    let pts: Vec<(f64, f64)> = m
        .app_names
        .iter()
        .enumerate()
        .filter(|(_, a)| a.starts_with("Marvin4KBuckets"))
        .flat_map(|(i, _)| {
            m.hot_launches
                .iter()
                .filter(move |l| l.0 == i)
                .enumerate()
                .map(move |(k, l)| (metric(m, &format!("marvin.app{i}.restore{k}_mb")), l.1))
        })
        .filter(|(x, _)| x.is_finite())
        .collect();
    let n = pts.len() as f64;
    let (mx, my) = (
        pts.iter().map(|p| p.0).sum::<f64>() / n,
        pts.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    // MB per second: 1000 / (ms per MB).
    let rate = if sxx > 1.0 { 1000.0 / (sxy / sxx) } else { f64::NAN };
    Ok(Check {
        check: "#7 foreground restore cost vs reclaimed MB (eager restore at hot launch)".into(),
        paper: "Marvin §8.4: ~100 MB/s (260 MB/s optimistic)".into(),
        simulated: format!(
            "{:.0} MB/s from {} hot launches (restored {:.0}..{:.0} MB, launch {:.0}..{:.0} ms)",
            rate,
            pts.len(),
            pts.iter().map(|p| p.0).fold(f64::INFINITY, f64::min),
            pts.iter().map(|p| p.0).fold(0.0, f64::max),
            pts.iter().map(|p| p.1).fold(f64::INFINITY, f64::min),
            pts.iter().map(|p| p.1).fold(0.0, f64::max),
        ),
        tolerance: "slope within 70..260 MB/s".into(),
        status: status((70.0..=260.0).contains(&rate)),
    })
}

/// #8: interposition overhead. The synthetic instruction mix is the barrier cost model itself
/// (`barrier_ns` per object access vs ~1 ns per other instruction); the "PCMark-like" figure is
/// the share of app CPU the barrier adds in the reclaim scenario's apps.
fn interposition(quick: bool) -> anyhow::Result<Check> {
    use policy::Policy;
    let barrier_ns = policy::marvin::Marvin
        .params()
        .iter()
        .find(|p| p.name == "barrier_ns")
        .and_then(|p| match &p.default {
            policy::ParamValue::Float(x) => Some(*x),
            _ => None,
        })
        .unwrap_or(f64::NAN);
    let at = |f: f64| f * barrier_ns / 1.0 * 100.0;
    let runs = run("marvin-8.2-reclaim", quick)?;
    let m = &runs[0].1;
    let barrier_ms = metric(m, "marvin.barrier_accesses") * barrier_ns / 1e6;
    let app_ms = m.app_cpu_ns as f64 / 1e6;
    let share = barrier_ms / (app_ms - barrier_ms).max(1e-9) * 100.0;
    let ok = (5.0..=20.0).contains(&at(0.01)) && (200.0..=500.0).contains(&at(0.40)) && share <= 20.0;
    Ok(Check {
        check: "#8 interposition overhead (barrier on every object access)".into(),
        paper: "Marvin §8.4: +10% at 1% object accesses, +350% at 40%; PCMark Data Manipulation -15%".into(),
        simulated: format!(
            "+{:.0}% at 1%, +{:.0}% at 40% (cost model, calibrated on the 1% point); workload app CPU +{share:.1}%",
            at(0.01),
            at(0.40)
        ),
        tolerance: "1%: 5-20%; 40%: 200-500%; workload <= 20%".into(),
        status: status(ok),
    })
}

/// #9: Marvin vs Fleet on the Fleet-paper synthetic apps (`fleet-7.1-synthetic-*`, Marvin with
/// a 1 KiB stub threshold as the Fleet paper ran it).
fn small_objects(quick: bool) -> anyhow::Result<Check> {
    // (Marvin peak, Fleet peak, apps the scenario launches, Marvin's kills).
    let peaks = |size: u32| -> anyhow::Result<(u32, u32, usize, u64)> {
        let runs = run(&format!("fleet-7.1-synthetic-{size}"), quick)?;
        let m = get(&runs, super::fleet::MARVIN_1K)?;
        Ok((
            m.cached_peak,
            get(&runs, "fleet")?.cached_peak,
            m.app_names.len(),
            m.kills.values().sum(),
        ))
    };
    let (m512, f512, _, _) = peaks(512)?;
    let (m2048, f2048, launched, m_kills) = peaks(2048)?;
    let small = m512 as f64 / f512.max(1) as f64;
    let large = m2048 as f64 / f2048.max(1) as f64;
    let ok = small <= 0.6 && (0.9..=1.1).contains(&large);
    // Marvin's 2048 B figure is censored when it kept every app the scenario launches: its
    // capacity is then at least that, not a measured maximum (the paper's 18 of both systems, and
    // Fleet's 18 on both object sizes, look like the same kind of ceiling).
    let cause = if !ok && m2048 as usize >= launched.saturating_sub(1) && m_kills == 0 {
        format!(
            " (GAP cause: on 2048 B Marvin kept all {m2048} of the {launched} launched apps with no kill: \
             its capacity is above what the scenario launches, a lower bound, not a maximum; every \
             object is >= the 1 KiB stub threshold, so background heaps go to its swap files)"
        )
    } else {
        String::new()
    };
    Ok(Check {
        check: "#9 Marvin vs Fleet caching, 512 B / 2048 B synthetic apps".into(),
        paper: "Fleet §7.1: Marvin 9 vs Fleet 18 (512 B); 18 vs 18 (2048 B)".into(),
        simulated: format!(
            "512 B: Marvin {m512} vs Fleet {f512} ({small:.2}x); 2048 B: Marvin {m2048} vs Fleet {f2048} ({large:.2}x){cause}"
        ),
        tolerance: "Marvin <= 0.6x Fleet (512 B); ±10% (2048 B)".into(),
        status: status(ok),
    })
}

/// #10: hot-launch tails vs Fleet on Fleet's §7.2 protocol (`fleet-7.2-hotlaunch`, its
/// `marvin-flash` variant; the runs are shared with `reproduce fleet` row 7).
fn hot_launch_tails(quick: bool) -> anyhow::Result<Check> {
    let t = super::fleet::marvin_tails(quick)?;
    Ok(Check {
        check: "#10 Marvin hot-launch tails (Fleet §7.2 protocol)".into(),
        paper: "Fleet §7.2: Fleet 4.45x (P90), 2.62x (median) faster than Marvin; Marvin median slower than Android".into(),
        simulated: format!(
            "Marvin P90 = {:.2}x Fleet's, median {:.2}x, over {} apps; Marvin median / Android {:.2}x",
            t.p90, t.median, t.apps, t.marvin_vs_android_median
        ),
        tolerance: "Marvin P90 >= 2x Fleet P90".into(),
        status: status(t.p90 >= 2.0),
    })
}

#[cfg(test)]
mod tests {
    /// Row #4 times a reclaim the kernel asked for: memory gets tight, Marvin's shrinker drops
    /// saved objects (lmkd kills none) and both reclaim times are positive (quick = full here).
    #[test]
    fn reclaim_row_measures_the_shrinker() {
        let runs = super::run("marvin-8.2-reclaim", true).unwrap();
        let m = &runs[0].1;
        assert!(super::metric(m, "marvin.shrinker_reclaimed_mb") > 500.0);
        assert_eq!(super::lmkd_kills(m), 0, "{:?}", m.kills);
        assert!(m.zap_pages > 0 && m.zap_ns > 0);
        let (r250, r500) = super::reclaim_ms(m).unwrap();
        assert!(r250 > 0.0 && (r500 / r250 - 2.0).abs() < 1e-9, "{r250} {r500}");
        let row = super::reclaim_latency(true).unwrap();
        eprintln!("{}", row.simulated);
        assert!(!row.simulated.contains("NaN") && !row.simulated.contains("inf"));
    }
}
