//! Generators: determinism and the statistics they are meant to have.

use apps::AppProfile;
use hotlaunch_workload::user::{self, Action, LiveLabParams, ProtocolParams, Timeline};

fn apps(n: usize) -> Vec<AppProfile> {
    apps::builtin_names()
        .into_iter()
        .take(n)
        .map(|a| AppProfile::builtin(a).unwrap())
        .collect()
}

fn launches(t: &Timeline) -> Vec<(usize, usize, u64)> {
    t.events
        .iter()
        .filter_map(|e| {
            if let Action::Launch { app, context } = e.action {
                Some((app, context, e.at_ns))
            } else {
                None
            }
        })
        .collect()
}

#[test]
fn livelab_is_deterministic_and_has_its_statistics() {
    let a = apps(20);
    let p = LiveLabParams::default();
    let t = user::livelab(&a, 2000, 7, &p);
    assert_eq!(t, user::livelab(&a, 2000, 7, &p));
    assert_ne!(t, user::livelab(&a, 2000, 8, &p));
    let l = launches(&t);
    assert_eq!(l.len(), 2000);
    // Popularity: rank 1 more frequent than rank 5, more than rank 20.
    let count = |i| l.iter().filter(|x| x.0 == i).count();
    assert!(
        count(0) > count(4) && count(4) > count(19),
        "{} {} {}",
        count(0),
        count(4),
        count(19)
    );
    // Locality: returning to one of the last 4 distinct apps is more frequent with locality on.
    let recent_share = |t: &Timeline| {
        let l = launches(t);
        let mut recent: Vec<usize> = Vec::new();
        let mut hits = 0;
        for &(a, _, _) in &l {
            if recent.iter().skip(1).take(3).any(|&r| r == a) {
                hits += 1;
            }
            recent.retain(|&r| r != a);
            recent.insert(0, a);
        }
        hits as f64 / l.len() as f64
    };
    let none = user::livelab(
        &a,
        2000,
        7,
        &LiveLabParams {
            locality_p: 0.0,
            ..p.clone()
        },
    );
    assert!(
        recent_share(&t) > recent_share(&none) + 0.1,
        "{} vs {}",
        recent_share(&t),
        recent_share(&none)
    );
    // Dwell: median of (next event − launch) for direct dwell ≈ 30 s.
    let mut dwell: Vec<f64> = t
        .events
        .windows(2)
        .filter(|w| matches!(w[0].action, Action::Launch { .. }))
        .map(|w| (w[1].at_ns - w[0].at_ns) as f64 / 1e9)
        .collect();
    dwell.sort_by(f64::total_cmp);
    let med = dwell[dwell.len() / 2];
    assert!((24.0..37.0).contains(&med), "median dwell {med}");
    // Sessions: ~3 launches per session, exponential gaps of mean 4500 s → ~1 day per 55 launches.
    let days = t.end_ns as f64 / 86_400e9;
    let per_day = 2000.0 / days;
    assert!((35.0..80.0).contains(&per_day), "{per_day} launches/day");
    // Contexts: some launches use the second context.
    assert!(l.iter().any(|x| x.1 == 1));
}

#[test]
fn protocols() {
    let p = ProtocolParams::default();
    let t = user::relaunch_after(0, &[1, 2, 3], 5, 4, &p);
    let l = launches(&t);
    assert_eq!(l.len(), 1 + 4 * 6);
    assert_eq!(l.iter().filter(|x| x.0 == 0).count(), 5);
    assert_eq!(
        l[1..6].iter().map(|x| x.0).collect::<Vec<_>>(),
        vec![1, 2, 3, 1, 2]
    );
    assert!(l.windows(2).all(|w| w[1].2 - w[0].2 == 30_000_000_000));
    let t = user::round_robin(
        &[0, 1, 2],
        2,
        &ProtocolParams {
            use_s: 10.0,
            home_wait_s: Some(5.0),
        },
    );
    let l = launches(&t);
    assert_eq!(l.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 1, 2, 0, 1, 2]);
    assert!(l.windows(2).all(|w| w[1].2 - w[0].2 == 15_000_000_000));
    assert_eq!(
        t.events.iter().filter(|e| e.action == Action::Home).count(),
        6 + 1
    );
    let t = user::launch_one_more(&[3, 1, 4], &p);
    assert_eq!(
        launches(&t).iter().map(|x| x.0).collect::<Vec<_>>(),
        vec![3, 1, 4]
    );
}
