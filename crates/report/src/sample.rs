//! A synthetic [`RunReport`] for tests, examples and demos of the writers. The numbers are made up
//! (plausible shapes, not simulated): nothing here is a result of hotlaunch.

use crate::model::*;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// splitmix64: a tiny deterministic generator, so this module needs no RNG dependency.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Approximately standard normal (Irwin–Hall with 12 uniforms).
    fn normal(&mut self) -> f64 {
        (0..12).map(|_| self.unit()).sum::<f64>() - 6.0
    }

    /// Log-normal with the given median and log-space sigma.
    fn lognormal(&mut self, median: f64, sigma: f64) -> f64 {
        median * (sigma * self.normal()).exp()
    }
}

const APPS: [&str; 8] = [
    "youtube",
    "twitter",
    "firefox",
    "chrome",
    "tiktok",
    "spotify",
    "google_maps",
    "candy_crush",
];

/// A two-policy report (`android`, `android-swap`) with `samples` time-series points over one
/// simulated hour. Deterministic in `seed`.
pub fn synthetic_report(seed: u64, samples: usize) -> RunReport {
    let mut report = RunReport::new("synthetic", "pixel-4gb", seed);
    report.simulated_seconds = 3600.0;
    let policies = [("android", 1.0, false), ("android-swap", 1.6, true)];
    for (pi, (name, slow, swap)) in policies.into_iter().enumerate() {
        let mut rng = Rng(seed ^ (pi as u64 + 1).wrapping_mul(0x1234_5678_9abc_def1));
        report.policies.push(policy(
            &mut rng,
            name,
            slow,
            swap,
            samples,
            report.simulated_seconds,
        ));
    }
    report
}

fn histogram() -> Histogram<u64> {
    // µs resolution up to 1000 s, 3 significant digits.
    Histogram::new_with_bounds(1, 1_000_000_000, 3).expect("valid histogram bounds")
}

fn policy(rng: &mut Rng, name: &str, slow: f64, swap: bool, samples: usize, seconds: f64) -> PolicyResult {
    let mut hot_all = histogram();
    let mut cold_all = histogram();
    let mut per_app = Vec::new();
    let mut kills_by_app = Vec::new();
    for (ai, app) in APPS.iter().enumerate() {
        let mut hot = histogram();
        let mut cold = histogram();
        let base = 120.0 + 40.0 * ai as f64;
        let n_hot = 20 + (rng.unit() * 30.0) as u64 + if swap { 10 } else { 0 };
        let n_cold = 3 + (rng.unit() * 8.0) as u64 - if swap { 2 } else { 0 };
        for _ in 0..n_hot {
            let ms = rng.lognormal(base * slow, if swap { 0.8 } else { 0.35 });
            hot.record((ms * 1000.0) as u64).unwrap();
        }
        for _ in 0..n_cold {
            let ms = rng.lognormal(1500.0 + 200.0 * ai as f64, 0.25);
            cold.record((ms * 1000.0) as u64).unwrap();
        }
        hot_all.add(&hot).unwrap();
        cold_all.add(&cold).unwrap();
        let kills = n_cold.saturating_sub(1);
        kills_by_app.push(kills);
        per_app.push(AppResult {
            app: app.to_string(),
            launches_hot: n_hot,
            launches_cold: n_cold,
            launches_interrupted: 0,
            kills,
            hot_launch_ms: LatencySummary::from_histogram(&hot, 1000),
            cold_launch_ms: LatencySummary::from_histogram(&cold, 1000),
            hot_launch_split_ms: Default::default(),
        });
    }
    let kills_total: u64 = kills_by_app.iter().sum();
    let mut by_reason = BTreeMap::new();
    let psi_kills = kills_total * 2 / 3;
    by_reason.insert("low_mem_and_thrashing".to_string(), psi_kills / 2);
    by_reason.insert("low_mem_and_swap_util".to_string(), psi_kills - psi_kills / 2);
    by_reason.insert("critical_pressure".to_string(), kills_total - psi_kills);

    let mut ts = TimeSeries::default();
    let (mut cached, mut cached_max, mut cached_sum) = (0u32, 0u32, 0.0);
    let (mut swapped, mut psi) = (0.0f64, 0.0f64);
    let cap = if swap { 14 } else { 8 };
    for i in 0..samples {
        let t = seconds * i as f64 / (samples.max(2) - 1) as f64;
        if rng.unit() < 0.3 {
            cached = if rng.unit() < 0.7 {
                (cached + 1).min(cap)
            } else {
                cached.saturating_sub(2)
            };
        }
        cached_max = cached_max.max(cached);
        cached_sum += cached as f64;
        let anon = 600.0 + 140.0 * cached as f64 + 30.0 * rng.unit();
        let file = 900.0 - 20.0 * cached as f64 + 40.0 * rng.unit();
        if swap {
            swapped = (swapped + 4.0 * rng.unit()).min(1500.0);
        } else {
            swapped = (swapped + 2.0 * rng.unit()).min(600.0);
        }
        psi += if cached >= cap - 1 {
            50.0 * rng.unit()
        } else {
            2.0 * rng.unit()
        };
        let zram = swapped / 3.0;
        let kernel = 700.0;
        ts.t_s.push(round3(t));
        ts.cached_apps.push(cached);
        ts.free_mb
            .push(round3((4096.0 - anon - file - zram - kernel).max(60.0)));
        ts.anon_mb.push(round3(anon));
        ts.file_mb.push(round3(file));
        ts.swapped_mb.push(round3(swapped));
        ts.zram_mb.push(round3(zram));
        ts.kernel_mb.push(kernel);
        ts.psi_some_ms.push(round3(psi));
        ts.unusable_index.push(
            (0..=10)
                .map(|o| round3(((o as f64 + 1.0) / 11.0 * (1.0 + t / seconds) / 2.0).min(1.0)))
                .collect(),
        );
        ts.zram_orig_mb.push(round3(swapped));
        ts.zram_compr_mb.push(round3(zram));
        ts.zram_same_pages.push((swapped * 256.0 / 20.0) as u64);
        ts.zram_huge_pages.push(12);
        ts.policy_cpu_ms.push(0.0);
    }
    let gcs = (0..12)
        .map(|i| GcRow {
            t_s: round3(seconds * i as f64 / 12.0),
            app: APPS[i % APPS.len()].to_string(),
            state: ["foreground", "transition", "background"][i % 3].to_string(),
            cause: if i % 3 == 1 { "transition" } else { "background" }.to_string(),
            kind: if i % 4 == 0 { "full" } else { "sticky" }.to_string(),
            compacting: i % 4 == 0,
            objects_visited: 50_000 + 10_000 * (i as u64 % 5),
            mb_copied: round3(2.0 + rng.unit()),
            pages_touched: 900 + i as u64,
            cpu_ms: round3(20.0 + 10.0 * rng.unit()),
            fault_stall_ms: round3(3.0 * slow * rng.unit()),
            pause_ms: 0.2,
        })
        .collect();

    let mut by_category = BTreeMap::new();
    for (k, v) in [
        ("app", 410_000.0),
        ("reclaim", 5200.0 * slow),
        ("fault", 2100.0 * slow),
        ("compaction", 800.0),
        ("compress", 3900.0 * slow),
        ("decompress", 2400.0 * slow),
        ("gc", 1700.0),
        ("lifecycle", 900.0 / slow),
    ] {
        by_category.insert(k.to_string(), round3(v));
    }
    let mut by_actor = BTreeMap::new();
    for (k, v) in [
        ("app_main", 412_000.0),
        ("app_gc", 1700.0),
        ("kswapd", 8300.0 * slow),
        ("lmkd", 400.0),
    ] {
        by_actor.insert(k.to_string(), round3(v));
    }
    let orig = (swapped * BYTES_PER_MB) as u64;
    let mut vmstat = BTreeMap::new();
    vmstat.insert("pswpin".to_string(), orig / 4096 / 2);
    vmstat.insert("pswpout".to_string(), orig / 4096);
    vmstat.insert("pgsteal_kswapd".to_string(), 123_456);
    vmstat.insert("pgsteal_direct".to_string(), if swap { 4_321 } else { 1_234 });
    let unusable_index = (0..=10)
        .map(|o| round3((o as f64 / 10.0).powf(if swap { 1.5 } else { 2.5 })))
        .collect();
    let mean_cached = if samples == 0 {
        0.0
    } else {
        cached_sum / samples as f64
    };

    PolicyResult {
        policy: name.to_string(),
        params: Default::default(),
        hot_launch_ms: LatencySummary::from_histogram(&hot_all, 1000),
        cold_launch_ms: LatencySummary::from_histogram(&cold_all, 1000),
        launches: Launches {
            hot: hot_all.len(),
            cold: cold_all.len(),
            interrupted: 0,
            hot_killed: 0,
            requested: hot_all.len() + cold_all.len(),
        },
        cached_apps: CachedApps {
            max: cached_max,
            mean: round3(mean_cached),
        },
        kills: Kills::from_reasons(by_reason),
        cpu_ms: CpuMs {
            by_category,
            by_actor,
        },
        energy_j: round3(118.0 + 9.0 * slow),
        flash: Flash {
            bytes_read: 700 << 20,
            bytes_written: if swap { 900 << 20 } else { 35 << 20 },
        },
        zram: ZramStat {
            orig_data_size: orig,
            compr_data_size: orig / 3,
            mem_used_total: orig / 3 + (2 << 20),
            mem_limit: 0,
            mem_used_max: orig / 3 + (6 << 20),
            same_pages: orig / 4096 / 20,
            pages_compacted: 77,
            huge_pages: 12,
            huge_pages_since: 40,
        },
        integrity: Integrity {
            pages_swapped_in: orig / 4096 / 2,
            checksum_mismatches: 0,
        },
        gc: Gc {
            collections: 120,
            full: 20,
            sticky: 100,
            background: 30,
            objects_visited: 9_000_000,
            mb_copied: 410.5,
            mb_freed: 900.25,
            cpu_ms: 1234.5,
            fault_stall_ms: 321.0,
            launch_collections: 4,
            launch_pause_ms: 0.8,
        },
        per_app,
        hot_launch_cdf: cdf_from_histogram(&hot_all, 1000, MAX_CDF_POINTS),
        unusable_index,
        psi: Psi {
            some_ms: round3(psi),
            full_ms: round3(psi / 4.0),
        },
        vmstat,
        timeseries: ts,
        io_buffers: IoBuffers {
            allocations: 130,
            latency_ms: LatencySummary::from_histogram(
                &{
                    let mut h = histogram();
                    for i in 0..130u64 {
                        h.record(400 + 50 * (i % 20) * if swap { 1 } else { 10 }).unwrap();
                    }
                    h
                },
                1000,
            ),
            blocks_by_order: [
                ("0".to_string(), 900),
                ("4".to_string(), 40),
                ("8".to_string(), 30),
            ]
            .into_iter()
            .collect(),
            mb: 1430.0,
            order0_share: round3(900.0 / 970.0),
            failed_by_order: [("8".to_string(), 120)].into_iter().collect(),
            compactions: 25,
            compaction_ms: 12.5,
        },
        gcs,
        alloc_ms: Vec::new(),
        policy_metrics: BTreeMap::new(),
    }
}

/// A synthetic comparison (`hotlaunch compare`'s report) of four made-up rows over `seeds` seeds,
/// built from [`synthetic_report`]s: `android` and `android-swap` as there, and `fleet` /
/// `marvin` labels on independently generated runs. For tests and demos of the dashboard only.
pub fn synthetic_compare(seeds: usize) -> crate::compare::CompareReport {
    use crate::compare::{build, CompareMeta, RowInput, RunSample};
    let labels = ["android", "android-swap", "fleet", "marvin"];
    let rows = labels
        .iter()
        .enumerate()
        .map(|(i, label)| RowInput {
            label: label.to_string(),
            policy: label.to_string(),
            variant: false,
            params: BTreeMap::new(),
            runs: (0..seeds as u64)
                .map(|s| {
                    let r = synthetic_report(s * 7 + 1 + (i as u64 / 2) * 1000, 120);
                    RunSample::of(&r.policies[i % 2])
                })
                .collect(),
        })
        .collect();
    build(
        CompareMeta {
            scenario: "synthetic".into(),
            device: "pixel-4gb".into(),
            seeds: (0..seeds as u64).collect(),
            simulated_seconds: 3600.0,
            baseline: "android".into(),
        },
        rows,
    )
}
