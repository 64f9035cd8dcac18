//! PSI memory totals aggregated over CPUs as kernel/sched/psi.c does: each CPU's stall time
//! weighted by its non-idle share of the aggregation period, FULL only for sleeping stalls.

use engine::{Actor, Nanos};
use hotlaunch_kernel::psi::{Psi, PSI_PERIOD};

const MS: Nanos = 1_000_000;
const FG: Actor = Actor::AppMain(1);
const BG: Actor = Actor::AppMain(2);

fn with_fg() -> Psi {
    let mut p = Psi::default();
    p.set_foreground(0, Some(FG));
    p
}

#[test]
fn foreground_stall_alone_counts_fully() {
    let mut p = with_fg();
    p.record(10 * MS, 0, 40 * MS, FG);
    assert_eq!((p.some_total_ns, p.full_total_ns), (40 * MS, 40 * MS));
}

#[test]
fn background_stall_during_foreground_is_weighted() {
    let mut p = with_fg();
    p.record(0, 0, 50 * MS, BG);
    // Σ state × nonidle / Σ nonidle: (50 × 50 + 0 × 100) / (50 + 100).
    let want = 50 * MS * (50 * MS) / (150 * MS);
    assert_eq!(p.full_total_ns, want);
    assert_eq!(
        p.some_total_ns, want,
        "some is weighted the same way, not a union"
    );
    assert!(p.full_total_ns < 50 * MS);
}

#[test]
fn background_stall_with_nothing_in_front_counts_fully() {
    let mut p = Psi::default();
    p.record(0, 0, 50 * MS, BG);
    assert_eq!(p.full_total_ns, 50 * MS);
}

#[test]
fn running_stall_is_some_only_before_5_16() {
    // Direct reclaim on the CPU keeps the task on the runqueue: PSI_MEM_FULL needs !NR_RUNNING.
    let mut p = with_fg();
    p.record(0, 30 * MS, 0, FG);
    assert_eq!((p.some_total_ns, p.full_total_ns), (30 * MS, 0));
    let mut p = with_fg();
    p.full_counts_running = true;
    p.record(0, 30 * MS, 0, FG);
    assert_eq!((p.some_total_ns, p.full_total_ns), (30 * MS, 30 * MS));
}

#[test]
fn kswapd_counts_to_some_weighted_and_to_full_only_alone() {
    let mut p = with_fg();
    p.record(0, 20 * MS, 0, Actor::Kswapd);
    assert_eq!(p.some_total_ns, 20 * MS * (20 * MS) / (120 * MS));
    assert_eq!(p.full_total_ns, 0);
    // kswapd alone, sleeping (throttled on writeback): its whole wait is FULL.
    let mut p = Psi::default();
    p.record(0, 0, 20 * MS, Actor::Kswapd);
    assert_eq!(p.full_total_ns, 20 * MS);
}

#[test]
fn stalls_split_across_periods() {
    let mut p = Psi::default();
    p.record(PSI_PERIOD / 2, 0, PSI_PERIOD, BG);
    assert_eq!(p.full_total_ns, PSI_PERIOD);
    // In front for the second period only: the first half counts fully, the second is weighted.
    let mut p = Psi::default();
    p.set_foreground(PSI_PERIOD, Some(FG));
    p.record(PSI_PERIOD / 2, 0, PSI_PERIOD, BG);
    let h = PSI_PERIOD / 2;
    assert_eq!(p.full_total_ns, h + h * h / (h + PSI_PERIOD));
}

#[test]
fn totals_never_decrease_and_are_deterministic() {
    let run = || {
        let mut p = with_fg();
        let mut seen = Vec::new();
        let mut x = 12345u64;
        for i in 0..2000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let task = Actor::AppMain((x >> 60) as u32);
            let start = i * 7 * MS + (x >> 40) % (300 * MS);
            let (run, sleep) = ((x >> 20) % (5 * MS), (x >> 30) % (20 * MS));
            if i % 300 == 0 {
                p.set_foreground(i * 7 * MS, Some(task));
            }
            let before = (p.some_total_ns, p.full_total_ns);
            p.record(start, run, sleep, task);
            assert!(p.some_total_ns >= before.0 && p.full_total_ns >= before.1);
            assert!(p.full_total_ns <= p.some_total_ns);
            seen.push((p.some_total_ns, p.full_total_ns));
        }
        seen
    };
    assert_eq!(run(), run());
}
