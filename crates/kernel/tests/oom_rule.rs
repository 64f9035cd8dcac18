//! The OOM decision of the device's kernel release (`oom_rule.rs`): 4.7+ `should_reclaim_retry`
//! (Pixel 3, 4.9) and the pre-4.7 `zone_reclaimable` rule (Pixel XL, 3.18). With nothing
//! reclaimable (anonymous memory, no swap) both give up after the first fruitless direct
//! reclaim; the old fixed count of 16 fruitless reclaims per allocation would stall 16 times.

mod support;

use engine::Actor;
use hotlaunch_kernel as kernel;
use kernel::types::*;
use kernel::{Kernel, OomRule};

fn kernel_on(release: &str) -> Kernel {
    let mut d = support::small_device();
    d.android.kernel_release = Some(release.into());
    Kernel::new(&d, support::contents(), Vec::new(), Default::default()).unwrap()
}

#[test]
fn the_release_decides_the_rule() {
    assert_eq!(kernel_on("4.9").params.oom_rule, OomRule::NoProgressLoops);
    assert_eq!(kernel_on("3.18").params.oom_rule, OomRule::ZoneReclaimable);
}

#[test]
fn with_nothing_reclaimable_the_first_fruitless_direct_reclaim_ends_in_a_kill() {
    for release in ["4.9", "3.18"] {
        let mut k = kernel_on(release);
        let pid = k.spawn("hog", 900, 2);
        let pages = k.buddy().nr_pages() * 2;
        let first = k
            .mmap(pid, pages, PageKind::NativeAnon, false, support::SRC)
            .unwrap();
        let r = k.access_range(0, Actor::AppMain(pid), first, pages, true);
        assert!(
            matches!(r, Err(kernel::KernelError::Killed(p)) if p == pid),
            "{release}: {r:?}"
        );
        assert_eq!(k.vmstat.oom_kill, 1, "{release}");
        // kswapd may have tried too; the allocating thread reclaimed directly once.
        assert_eq!(k.vmstat.allocstall, 1, "{release}: {:?}", k.vmstat);
        k.check_invariants().unwrap();
    }
}
