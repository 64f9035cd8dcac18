//! What the user does: a flat, time-ordered list of actions, and generators that produce it.
//!
//! The framework consumes a [`Timeline`]: [`UserEvent`]s sorted by time (`at_ns`, ties keep list
//! order) and an end time. Actions:
//! * [`Action::Launch`] brings an app to the foreground in a context (cold launch if it is not
//!   running, hot launch otherwise); the previous foreground app goes to the background. The
//!   app is *used* until the next action.
//! * [`Action::Home`]: the foreground app goes to the background; the launcher is in front.
//!   A stretch of time after `Home` is idle time (screen off or on the home screen).
//! * [`Action::Alloc`]: an app allocates `mb` MiB of anonymous memory at once (Marvin Fig. 3:
//!   the time to allocate 512 MB with free memory vs under pressure with a swap file).
//! * [`Action::Kill`]: the app is force-stopped (`am force-stop`), e.g. to measure a cold launch
//!   (Fleet §2.1: "the cold-launch time is obtained by explicitly terminating apps").
//!
//! Generators (all deterministic; the random one draws from `engine::RngStreams`):
//! * [`livelab`]: LiveLab-like sessions (ISMM'15 §6 built its 1,000-launch, 22-app workload from
//!   the LiveLab traces [Shepard et al., SIGMETRICS PER 2011]; 1,000 launches ≈ 18.2 days of
//!   uptime): Zipf-like app popularity, switch locality (return to one of the last k apps),
//!   log-normal dwell times, sessions of a few apps separated by screen-off gaps;
//! * [`launch_one_more`]: launch apps one after another (Fleet §7.1, Marvin §8.3: count the
//!   cached apps after each launch; the framework detects the kills);
//! * [`relaunch_after`]: use N other apps for 30 s each, then relaunch the target (Fleet §3.1,
//!   §7.2; Ariadne §5 relaunches a target after nine other apps);
//! * [`round_robin`]: all apps in order, for a number of rounds (Fleet §7.1 commercial apps:
//!   two cycles, 30 s each).

use apps::AppProfile;
use engine::{Nanos, RngStreams, NS_PER_SEC};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// One user action at a time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UserEvent {
    /// Simulated time of the action, ns since the start of the run.
    pub at_ns: Nanos,
    /// What happens.
    pub action: Action,
}

/// A user action. `app` is an index into the scenario's app list
/// ([`crate::scenario::ResolvedScenario::apps`]); `context` an index into that app's
/// `contexts`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Bring `app` to the foreground in `context` (cold launch if not running, else hot).
    Launch { app: usize, context: usize },
    /// Go to the home screen: the foreground app (if any) moves to the background.
    Home,
    /// `app` allocates `mb` MiB of anonymous memory now (the framework measures how long it takes).
    Alloc { app: usize, mb: f64 },
    /// Force-stop `app` (it is not running afterwards; the next launch is cold).
    Kill { app: usize },
}

/// The user's actions, sorted by time, and when the run ends.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Timeline {
    /// Actions in time order.
    pub events: Vec<UserEvent>,
    /// End of the run (ns), ≥ the last event's time.
    pub end_ns: Nanos,
}

impl Timeline {
    /// Number of launches.
    pub fn launches(&self) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e.action, Action::Launch { .. }))
            .count()
    }
}

/// Seconds → ns (negative and NaN → 0, saturating).
pub fn secs(s: f64) -> Nanos {
    if s.is_finite() && s > 0.0 {
        (s * NS_PER_SEC as f64).round().min(u64::MAX as f64) as Nanos
    } else {
        0
    }
}

/// Builds a timeline by appending actions and advancing a clock.
#[derive(Debug, Clone, Default)]
pub struct TimelineBuilder {
    now: Nanos,
    events: Vec<UserEvent>,
}

impl TimelineBuilder {
    /// An empty timeline starting at 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Current time (ns).
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Moves the clock to `at` if it is later.
    pub fn at(&mut self, at: Nanos) -> &mut Self {
        self.now = self.now.max(at);
        self
    }

    /// Advances the clock by `s` seconds.
    pub fn wait(&mut self, s: f64) -> &mut Self {
        self.now = self.now.saturating_add(secs(s));
        self
    }

    fn push(&mut self, action: Action) -> &mut Self {
        self.events.push(UserEvent {
            at_ns: self.now,
            action,
        });
        self
    }

    /// Launches `app` in `context` and uses it for `use_s` seconds.
    pub fn launch(&mut self, app: usize, context: usize, use_s: f64) -> &mut Self {
        self.push(Action::Launch { app, context }).wait(use_s)
    }

    /// Goes home.
    pub fn home(&mut self) -> &mut Self {
        self.push(Action::Home)
    }

    /// `app` allocates `mb` MiB.
    pub fn alloc(&mut self, app: usize, mb: f64) -> &mut Self {
        self.push(Action::Alloc { app, mb })
    }

    /// Force-stops `app`.
    pub fn kill(&mut self, app: usize) -> &mut Self {
        self.push(Action::Kill { app })
    }

    /// The timeline, ending `tail_s` seconds after the current time.
    pub fn finish(mut self, tail_s: f64) -> Timeline {
        self.wait(tail_s);
        Timeline {
            events: self.events,
            end_ns: self.now,
        }
    }
}

/// Parameters of the fixed protocols (launch-one-more, relaunch-after, round-robin).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProtocolParams {
    /// Seconds each app is used after its launch (Fleet §7.2: 30 s).
    pub use_s: f64,
    /// If set, go home after each use and wait this many seconds before the next launch
    /// (ISMM'15 §6.1: 15 s of use, then 5 s on the launcher); if unset, switch directly.
    pub home_wait_s: Option<f64>,
}

impl Default for ProtocolParams {
    fn default() -> Self {
        ProtocolParams {
            use_s: 30.0,
            home_wait_s: None,
        }
    }
}

fn step(b: &mut TimelineBuilder, app: usize, p: &ProtocolParams) {
    b.launch(app, 0, p.use_s);
    if let Some(w) = p.home_wait_s {
        b.home().wait(w);
    }
}

fn end(mut b: TimelineBuilder) -> Timeline {
    b.home();
    b.finish(5.0)
}

/// Launches the apps of `order` (indices) one after another, each used `use_s`, in context 0.
/// The framework counts cached apps after each launch and detects kills (Fleet §7.1,
/// Marvin §8.3).
pub fn launch_one_more(order: &[usize], p: &ProtocolParams) -> Timeline {
    let mut b = TimelineBuilder::new();
    for &a in order {
        step(&mut b, a, p);
    }
    end(b)
}

/// Fleet §3.1/§7.2 protocol: use `target`, then `repeats` times: use `n_between` apps of
/// `others` (cycling through the list) for `use_s` each, then relaunch `target`.
pub fn relaunch_after(
    target: usize,
    others: &[usize],
    n_between: usize,
    repeats: usize,
    p: &ProtocolParams,
) -> Timeline {
    let mut b = TimelineBuilder::new();
    relaunch_after_into(&mut b, target, others, n_between, repeats, p);
    end(b)
}

/// [`relaunch_after`] appended to an existing builder (for several targets in a row).
pub fn relaunch_after_into(
    b: &mut TimelineBuilder,
    target: usize,
    others: &[usize],
    n_between: usize,
    repeats: usize,
    p: &ProtocolParams,
) {
    step(b, target, p);
    let mut next = 0usize;
    for _ in 0..repeats {
        if !others.is_empty() {
            for _ in 0..n_between {
                step(b, others[next % others.len()], p);
                next += 1;
            }
        }
        step(b, target, p);
    }
}

/// All apps of `order` in turn, `rounds` times (Fleet §7.1: two cycles of 30 s each).
pub fn round_robin(order: &[usize], rounds: usize, p: &ProtocolParams) -> Timeline {
    let mut b = TimelineBuilder::new();
    for _ in 0..rounds {
        for &a in order {
            step(&mut b, a, p);
        }
    }
    end(b)
}

/// Parameters of the LiveLab-like generator. Defaults and their sources are documented per
/// field; `docs/scenario.md` lists them too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveLabParams {
    /// Exponent `s` of the Zipf-like popularity: the i-th app of the list (0-based) has weight
    /// `1 / (i + 1)^s`. Default 1.0 (estimate: app usage in LiveLab and similar studies is
    /// heavy-tailed, a few apps dominate).
    pub zipf_exponent: f64,
    /// Explicit popularity weights, one per app (overrides `zipf_exponent`).
    pub weights: Option<Vec<f64>>,
    /// Switch locality: with probability `locality_p` the next app is one of the last
    /// `locality_k` distinct apps used (other than the current one). Defaults 0.4 and 4
    /// (estimate: users return to recently used apps; Android's recents list).
    pub locality_p: f64,
    /// See `locality_p`.
    pub locality_k: usize,
    /// Median dwell (use) time of an app visit, s. Default 30 (estimate: Böhmer et al.,
    /// MobileHCI'11, report a mean app session of ~72 s; a log-normal with median 30 s and
    /// sigma 1.2 has mean ≈ 62 s).
    pub dwell_median_s: f64,
    /// Log-normal sigma of dwell times. Default 1.2. 0 = every visit lasts the median.
    pub dwell_sigma: f64,
    /// Dwell times are capped at this, s. Default 1800.
    pub dwell_max_s: f64,
    /// Mean number of app visits per session (geometric). Default 3 (estimate).
    pub session_apps_mean: f64,
    /// Within a session, probability the next app is reached directly (recents / a link)
    /// rather than via the home screen. Default 0.5 (estimate).
    pub direct_switch_p: f64,
    /// Seconds on the home screen when switching via home. Default 3 (estimate).
    pub home_pause_s: f64,
    /// Mean screen-off gap between sessions (exponential), s. Default 4500 (ISMM'15 §6: 1,000
    /// launches ≈ 18.2 days, i.e. ~55 launches/day; at 3 apps per session that is a session
    /// every ~80 min).
    pub gap_mean_s: f64,
    /// Probability a hot launch resumes in the app's previous context (else a uniformly random
    /// one). Default 0.7 (estimate; MemSaver §3.2: a hot launch resumes the context the app
    /// was left in — other contexts come from use in between).
    pub same_context_p: f64,
}

impl Default for LiveLabParams {
    fn default() -> Self {
        LiveLabParams {
            zipf_exponent: 1.0,
            weights: None,
            locality_p: 0.4,
            locality_k: 4,
            dwell_median_s: 30.0,
            dwell_sigma: 1.2,
            dwell_max_s: 1800.0,
            session_apps_mean: 3.0,
            direct_switch_p: 0.5,
            home_pause_s: 3.0,
            gap_mean_s: 4500.0,
            same_context_p: 0.7,
        }
    }
}

fn pick_weighted<R: Rng>(rng: &mut R, w: &[f64], exclude: Option<usize>) -> usize {
    let total: f64 = w
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != exclude)
        .map(|(_, x)| x)
        .sum();
    if total <= 0.0 {
        return (0..w.len()).find(|&i| Some(i) != exclude).unwrap_or(0);
    }
    let mut u = rng.gen::<f64>() * total;
    let mut last = 0;
    for (i, &x) in w.iter().enumerate() {
        if Some(i) == exclude || x <= 0.0 {
            continue;
        }
        last = i;
        if u < x {
            return i;
        }
        u -= x;
    }
    last
}

fn normal<R: Rng>(rng: &mut R) -> f64 {
    // Box–Muller (deterministic given the RNG).
    let u1 = rng.gen::<f64>().max(1e-300);
    let u2 = rng.gen::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// LiveLab-like sessions over `apps` with `launches` launches in total. Deterministic in
/// `seed` (stream `"workload.livelab"`).
pub fn livelab(apps: &[AppProfile], launches: usize, seed: u64, p: &LiveLabParams) -> Timeline {
    let n = apps.len();
    let mut b = TimelineBuilder::new();
    if n == 0 || launches == 0 {
        return b.finish(0.0);
    }
    let mut rng = RngStreams::new(seed).stream("workload.livelab", 0);
    let weights: Vec<f64> = match &p.weights {
        Some(w) if w.len() == n => w.clone(),
        _ => (0..n)
            .map(|i| 1.0 / ((i + 1) as f64).powf(p.zipf_exponent))
            .collect(),
    };
    let mut recent: Vec<usize> = Vec::new();
    let mut last_ctx: Vec<Option<usize>> = vec![None; n];
    let mut current: Option<usize> = None;
    let mut done = 0usize;
    let p_continue = if p.session_apps_mean > 1.0 {
        1.0 - 1.0 / p.session_apps_mean
    } else {
        0.0
    };
    while done < launches {
        // One session.
        loop {
            let app = if n == 1 {
                0
            } else if rng.gen::<f64>() < p.locality_p
                && recent.iter().take(p.locality_k).any(|&a| Some(a) != current)
            {
                let cands: Vec<usize> = recent
                    .iter()
                    .take(p.locality_k)
                    .copied()
                    .filter(|&a| Some(a) != current)
                    .collect();
                cands[rng.gen_range(0..cands.len())]
            } else {
                pick_weighted(&mut rng, &weights, current)
            };
            let n_ctx = apps[app].contexts.len().max(1);
            let ctx = match last_ctx[app] {
                Some(c) if rng.gen::<f64>() < p.same_context_p => c,
                Some(_) => rng.gen_range(0..n_ctx),
                None => 0,
            };
            last_ctx[app] = Some(ctx);
            let dwell = (p.dwell_median_s * (p.dwell_sigma * normal(&mut rng)).exp())
                .clamp(1.0, p.dwell_max_s.max(1.0));
            b.launch(app, ctx, dwell);
            current = Some(app);
            recent.retain(|&a| a != app);
            recent.insert(0, app);
            done += 1;
            if done >= launches || rng.gen::<f64>() >= p_continue {
                break;
            }
            if rng.gen::<f64>() >= p.direct_switch_p {
                b.home().wait(p.home_pause_s);
                current = None;
            }
        }
        b.home();
        current = None;
        if done < launches {
            let u: f64 = rng.gen::<f64>().max(1e-12);
            b.wait(-u.ln() * p.gap_mean_s);
        }
    }
    b.finish(5.0)
}
