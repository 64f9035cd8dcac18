//! Structural properties of the generated access sets, measured on the sets themselves.

use hotlaunch_apps as apps;
use std::collections::BTreeSet;

use apps::{AccessModel, AppLayout, AppProfile, Region};

fn set(v: &[u32]) -> BTreeSet<u32> {
    v.iter().copied().collect()
}

fn overlap(a: &[u32], b: &[u32]) -> f64 {
    let max = a.iter().chain(b).copied().max().unwrap_or(0) as usize;
    let mut sa = vec![false; max + 1];
    for &x in a {
        sa[x as usize] = true;
    }
    let inter = b.iter().filter(|&&x| sa[x as usize]).count();
    inter as f64 / b.len() as f64
}

fn adjacency(seq: &[u32]) -> f64 {
    let adj = seq.windows(2).filter(|w| w[1] == w[0] + 1).count();
    adj as f64 / (seq.len() - 1) as f64
}

fn share(layout: &AppLayout, v: &[u32], r: Region) -> f64 {
    v.iter().filter(|&&x| layout.region_of(x) == Some(r)).count() as f64 / v.len() as f64
}

fn check_app(name: &str, seed: u64) {
    let p = AppProfile::builtin(name).unwrap();
    let a = &p.access;
    let m = AccessModel::for_profile(&p, seed).unwrap();
    let lay = *m.layout();
    let n = lay.total();
    let l_expected = (n as f64 * a.launch_set_fraction).round() as usize;
    let launches: Vec<Vec<u32>> = (0..30).map(|i| m.launch_set(0, i)).collect();
    for l in &launches {
        assert!(
            (l.len() as i64 - l_expected as i64).abs() <= 3,
            "{name}: launch size {} vs {l_expected}",
            l.len()
        );
        assert_eq!(set(l).len(), l.len(), "{name}: duplicates");
        assert!(l.iter().all(|&x| x < n));
    }
    // Same-context overlap between consecutive launches.
    let same: f64 = launches.windows(2).map(|w| overlap(&w[0], &w[1])).sum::<f64>() / 29.0;
    assert!(
        (same - a.same_context_overlap).abs() < 0.04,
        "{name}: same-context overlap {same:.3} vs {}",
        a.same_context_overlap
    );
    // Cross-context overlap.
    if p.contexts.len() > 1 {
        let cross: f64 = (0..30)
            .map(|i| overlap(&m.launch_set(0, i), &m.launch_set(1, i)))
            .sum::<f64>()
            / 30.0;
        assert!(
            (cross - a.cross_context_overlap).abs() < 0.05,
            "{name}: cross-context overlap {cross:.3} vs {}",
            a.cross_context_overlap
        );
        assert!(cross < same);
    }
    // Adjacency of the access sequence.
    let adj: f64 = launches.iter().map(|l| adjacency(l)).sum::<f64>() / 30.0;
    assert!(
        (adj - a.adjacency).abs() < 0.04,
        "{name}: adjacency {adj:.3} vs {}",
        a.adjacency
    );
    // Composition: file share = file_launch_share; Java:native as in the layout.
    let l = &launches[0];
    let f = share(&lay, l, Region::File);
    assert!((f - a.file_launch_share).abs() < 0.01, "{name}: file share {f}");
    let j = share(&lay, l, Region::Java);
    let nat = share(&lay, l, Region::Native);
    let want = lay.java_pages as f64 / lay.anon_pages() as f64;
    assert!(
        (j / (j + nat) - want).abs() < 0.01,
        "{name}: java share of anon {} vs {want}",
        j / (j + nat)
    );
    // Foreground WS contains every launch set and has the requested size.
    let ws = m.foreground_ws();
    assert_eq!(set(ws).len(), ws.len());
    let wss = set(ws);
    for ctx in 0..p.contexts.len() {
        for i in 0..5 {
            let l = m.launch_set(ctx, 100 + i);
            assert!(
                l.iter().all(|x| wss.contains(x)),
                "{name}: launch page outside foreground WS"
            );
        }
    }
    let ws_frac = ws.len() as f64 / n as f64;
    assert!(
        (ws_frac - a.foreground_ws_fraction).abs() < 0.01,
        "{name}: ws {ws_frac} vs {}",
        a.foreground_ws_fraction
    );
    for r in [Region::Java, Region::Native, Region::File] {
        let want = match r {
            Region::Java => lay.java_pages,
            Region::Native => lay.native_pages,
            Region::File => lay.file_pages,
        } as f64
            / n as f64;
        assert!(
            (share(&lay, ws, r) - want).abs() < 0.07,
            "{name}: ws share {r:?} {} vs {want}",
            share(&lay, ws, r)
        );
        assert!(
            (share(&lay, m.b2(), r) - want).abs() < 0.01,
            "{name}: b2 share {r:?}"
        );
        assert!(
            (share(&lay, m.b1(0), r) - want).abs() < 0.01,
            "{name}: b1 share {r:?}"
        );
    }
    // B1 / B2 sizes and coverage.
    let b2 = m.b2();
    assert_eq!(set(b2).len(), b2.len());
    assert!(((b2.len() as f64 / n as f64) - a.b2_fraction).abs() < 0.005);
    for ctx in 0..p.contexts.len() {
        let b1 = m.b1(ctx);
        assert_eq!(set(b1).len(), b1.len());
        assert!(((b1.len() as f64 / n as f64) - a.b1_fraction).abs() < 0.005);
        let cov = overlap(b1, b2);
        assert!(
            (cov - a.b1_covers_b2).abs() < 0.02,
            "{name}: |B1∩B2|/|B2| = {cov:.3} vs {}",
            a.b1_covers_b2
        );
    }
    // B1 differs by context but shares the common part.
    if p.contexts.len() > 1 {
        assert_ne!(set(m.b1(0)), set(m.b1(1)));
    }
}

#[test]
fn structure_matches_parameters_for_every_builtin() {
    for name in apps::builtin_names() {
        check_app(name, 1);
    }
    check_app("YouTube", 99);
    check_app("BangDream", 12345);
}

#[test]
fn deterministic_and_seed_dependent() {
    let p = AppProfile::builtin("Twitter").unwrap();
    let a = AccessModel::for_profile(&p, 5).unwrap();
    let b = AccessModel::for_profile(&p, 5).unwrap();
    let c = AccessModel::for_profile(&p, 6).unwrap();
    assert_eq!(a.launch_set(1, 3), b.launch_set(1, 3));
    assert_eq!(a.foreground_ws(), b.foreground_ws());
    assert_eq!(a.b1(0), b.b1(0));
    assert_ne!(a.launch_set(1, 3), c.launch_set(1, 3));
    // Order-independent: asking for launch 7 first gives the same as after others.
    let x = a.launch_set(0, 7);
    let _ = a.launch_set(0, 8);
    assert_eq!(a.launch_set(0, 7), x);
    assert_ne!(a.launch_set(0, 7), a.launch_set(0, 8));
    // Context index is taken modulo the number of contexts.
    assert_eq!(a.launch_set(2, 4), a.launch_set(0, 4));
}

#[test]
fn layout_regions() {
    let p = AppProfile::builtin("CandyCrush").unwrap();
    let l = AppLayout::from_profile(&p);
    assert_eq!(l.anon_pages(), 260 * 256);
    assert_eq!(l.java_pages, (260.0 * 256.0 * 0.04f64).round() as u32);
    assert_eq!(l.file_pages, 130 * 256);
    assert_eq!(l.region_of(0), Some(Region::Java));
    assert_eq!(l.region_of(l.java_pages), Some(Region::Native));
    assert_eq!(l.region_of(l.anon_pages()), Some(Region::File));
    assert_eq!(l.region_of(l.total()), None);
}

#[test]
fn a_random_set_generator_would_fail() {
    // Sanity check of the test's own measures: two independent uniform random sets of the same
    // size overlap by about their density, and have almost no adjacency.
    use rand::{seq::index::sample, SeedableRng};
    let mut rng = rand_chacha_like();
    let n = 100_000;
    let a: Vec<u32> = sample(&mut rng, n, 35_000)
        .into_iter()
        .map(|x| x as u32)
        .collect();
    let b: Vec<u32> = sample(&mut rng, n, 35_000)
        .into_iter()
        .map(|x| x as u32)
        .collect();
    assert!((overlap(&a, &b) - 0.35).abs() < 0.02);
    assert!(adjacency(&a) < 0.05);
    fn rand_chacha_like() -> engine::SimRng {
        engine::SimRng::seed_from_u64(3)
    }
}
