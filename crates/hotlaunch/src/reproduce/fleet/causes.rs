//! The measured causes `reproduce fleet` prints beside a GAP: read from the row's own runs (per-app
//! hot-launch samples and flash waits, kills and their reasons, memory at the peak and at the first
//! kill, the grouping GC's depth histogram), never prose written in advance.

use super::Run;
use framework::sim::SimOutput;
use policy::fleet::{FleetStats, DEPTH_BUCKETS, FGO_GCS};

const MIB_PER_PAGE: f64 = 4096.0 / (1 << 20) as f64;

/// One app's hot launches in one run.
#[derive(Clone, Debug)]
pub(super) struct AppDetail {
    pub app: String,
    pub hot: u64,
    /// Mean flash wait per hot launch (ms).
    pub flash_ms: f64,
    /// Kills of the app that were not the user's.
    pub kills: u64,
}

/// Memory when something happened (the sample at or just before it), MiB.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Mem {
    pub t_s: f64,
    pub cached: u32,
    pub anon: f64,
    pub swapped: f64,
    pub free: f64,
}

/// What the causes need from a run (kept in [`Run`]).
#[derive(Clone, Debug, Default)]
pub(super) struct Detail {
    pub apps: Vec<AppDetail>,
    /// Non-user kill reasons with their counts.
    pub reasons: Vec<(&'static str, u64)>,
    /// Memory at the first non-user kill, and at the first sample with the most cached apps.
    pub first_kill: Option<(Mem, &'static str)>,
    pub peak: Mem,
    /// Mean cached apps over the second half of the run (the commercial mix's second cycle).
    pub cached_late_mean: f64,
}

fn mem_at(o: &SimOutput, t: u64) -> Mem {
    let s = o
        .samples
        .iter()
        .take_while(|s| s.t <= t)
        .last()
        .or(o.samples.first());
    s.map_or(Mem::default(), |s| Mem {
        t_s: s.t as f64 / 1e9,
        cached: s.cached_apps,
        anon: s.anon_pages as f64 * MIB_PER_PAGE,
        swapped: s.swapped_pages as f64 * MIB_PER_PAGE,
        free: s.free_pages as f64 * MIB_PER_PAGE,
    })
}

impl Detail {
    pub fn of(o: &SimOutput) -> Detail {
        let apps = o
            .per_app
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let hot: Vec<_> = o
                    .launch_log
                    .iter()
                    .filter(|l| l.hot && l.app as usize == i)
                    .collect();
                let flash = hot.iter().map(|l| l.split.flash_ns as f64).sum::<f64>() / 1e6;
                AppDetail {
                    app: a.app.clone(),
                    hot: hot.len() as u64,
                    flash_ms: flash / hot.len().max(1) as f64,
                    kills: o
                        .kill_log
                        .iter()
                        .filter(|k| k.app as usize == i && k.reason != "user")
                        .count() as u64,
                }
            })
            .collect();
        let mut reasons: Vec<(&'static str, u64)> = Vec::new();
        for k in o.kill_log.iter().filter(|k| k.reason != "user") {
            match reasons.iter_mut().find(|(r, _)| *r == k.reason) {
                Some(x) => x.1 += 1,
                None => reasons.push((k.reason, 1)),
            }
        }
        let first_kill = o
            .kill_log
            .iter()
            .find(|k| k.reason != "user")
            .map(|k| (mem_at(o, k.t), k.reason));
        let peak_t = o
            .samples
            .iter()
            .find(|s| s.cached_apps == o.samples.iter().map(|s| s.cached_apps).max().unwrap_or(0))
            .map_or(0, |s| s.t);
        let late = &o.samples[o.samples.len() / 2..];
        Detail {
            apps,
            reasons,
            first_kill,
            peak: mem_at(o, peak_t),
            cached_late_mean: late.iter().map(|s| f64::from(s.cached_apps)).sum::<f64>()
                / late.len().max(1) as f64,
        }
    }

    fn app(&self, name: &str) -> Option<&AppDetail> {
        self.apps.iter().find(|a| a.app == name)
    }

    pub fn kills_text(&self) -> String {
        if self.reasons.is_empty() {
            return "no kills".into();
        }
        self.reasons
            .iter()
            .map(|(r, n)| format!("{n} {r}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Rows 1, 2 and 7: per-app samples, and the apps where `fleet` is slower than `base` at quantile
/// `q` with their hot-launch counts, flash waits and kills in each arm.
pub(super) fn hot_cause(base: &Run, fleet: &Run, q: f64, bname: &str) -> String {
    let v = super::per_app(base, fleet, q);
    let (b, f) = (&base.detail, &fleet.detail);
    let range = |d: &Detail| {
        let n: Vec<u64> = v.iter().filter_map(|(a, ..)| d.app(a).map(|x| x.hot)).collect();
        format!(
            "{}-{}",
            n.iter().min().unwrap_or(&0),
            n.iter().max().unwrap_or(&0)
        )
    };
    let losers: Vec<String> = v
        .iter()
        .filter(|(_, bq, fq)| fq > bq)
        .filter_map(|(a, bq, fq)| {
            let (x, y) = (b.app(a)?, f.app(a)?);
            Some(format!(
                "{a} ({bname} {bq:.0} ms/{} hot/flash {:.0} ms/{} kills vs Fleet {fq:.0}/{}/{:.0}/{})",
                x.hot, x.flash_ms, x.kills, y.hot, y.flash_ms, y.kills
            ))
        })
        .collect();
    format!(
        "hot launches per app: {bname} {}, Fleet {}; kills: {bname} {}, Fleet {}; slower with Fleet: {}",
        range(b),
        range(f),
        b.kills_text(),
        f.kills_text(),
        if losers.is_empty() {
            "none".into()
        } else {
            losers.join("; ")
        }
    )
}

/// Rows 3-5: where each arm's capacity stopped: its peak and its first kill.
pub(super) fn capacity_cause(arms: &[(&str, &Run)]) -> String {
    arms.iter()
        .map(|(name, r)| {
            let d = &r.detail;
            let fk = d.first_kill.map_or("no kill".into(), |(m, why)| {
                format!(
                    "first kill ({why}) at {:.0} s with {} cached, swap used {:.0} MiB, anon {:.0} MiB, free {:.0} MiB",
                    m.t_s, m.cached, m.swapped, m.anon, m.free
                )
            });
            format!(
                "{name}: peak {} cached at {:.0} s (anon {:.0} MiB, swap {:.0} MiB, free {:.0} MiB); {fk}; kills {}; mean cached over the 2nd half {:.1}",
                d.peak.cached,
                d.peak.t_s,
                d.peak.anon,
                d.peak.swapped,
                d.peak.free,
                d.kills_text(),
                d.cached_late_mean
            )
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Row 8: the grouped heap's BFS-level histogram (share of bytes and objects at levels 0..).
pub(super) fn depth_text(st: &FleetStats, d: u32) -> String {
    let tb: u64 = st.depth_bytes.iter().sum();
    let to: u64 = st.depth_objects.iter().sum();
    let pct = |x: u64, t: u64| 100.0 * x as f64 / t.max(1) as f64;
    let levels: Vec<String> = (0..DEPTH_BUCKETS)
        .map(|l| {
            format!(
                "L{l}{} {:.1}%/{:.1}%",
                if l == DEPTH_BUCKETS - 1 { "+" } else { "" },
                pct(st.depth_bytes[l], tb),
                pct(st.depth_objects[l], to)
            )
        })
        .collect();
    let nro: u64 = st.depth_bytes[..=(d as usize).min(DEPTH_BUCKETS - 1)]
        .iter()
        .sum();
    format!(
        "grouped heap by BFS level (bytes/objects): {}; levels 0-{d} hold {:.1}% of the bytes in {:.1}% of the objects ({:.0} objects per grouping)",
        levels.join(", "),
        pct(nro, tb),
        pct(st.depth_objects[..=(d as usize).min(DEPTH_BUCKETS - 1)].iter().sum(), to),
        to as f64 / st.groupings.max(1) as f64
    )
}

/// Row 9: FGO survival after the k-th stock background GC (`bgc = false` runs): the deepest k any
/// episode reached, with its survival, and survival at 15 GCs if reached.
pub(super) fn fgo_survival(st: &FleetStats) -> Option<(usize, f64)> {
    (0..FGO_GCS)
        .rev()
        .find(|&k| st.fgo_base[k] > 0)
        .map(|k| (k + 1, st.fgo_alive[k] as f64 / st.fgo_base[k] as f64))
}
