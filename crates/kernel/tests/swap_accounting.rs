//! Per-process swap counts (`counters.swap`, `VmSwap`) follow the pages: a swap-in's readahead
//! may bring in another process's pages (adjacent slots are not per process), and their swap
//! count is that process's, not the faulting one's. `check_invariants` recounts both.

mod support;

use engine::Actor;
use hotlaunch_kernel as kernel;
use kernel::types::*;
use kernel::Kernel;

#[test]
fn readahead_of_another_process_page_moves_that_process_swap_count() {
    let mut d = support::small_device();
    d.kernel.page_cluster = 3; // an 8-slot readahead window
    let mut k = Kernel::new(&d, support::contents(), support::flash(4096), Default::default()).unwrap();
    let mut now = 0;
    let (a, fa) = support::resident_proc(&mut k, "a", 900, 4, &mut now);
    let (b, fb) = support::resident_proc(&mut k, "b", 900, 4, &mut now);
    // Swap A's pages out, then B's: their slots are adjacent in one window.
    for (pid, first) in [(a, fa), (b, fb)] {
        now += k.madvise(now, Actor::AppMain(pid), first, 4, Advice::PageOut).ns;
    }
    k.advance_to(now + 1_000_000_000);
    let swapped = |k: &Kernel, pid| k.process(pid).unwrap().counters.swap;
    assert_eq!((swapped(&k, a), swapped(&k, b)), (4, 4));
    // A faults its last page: the window brings B's pages too.
    now += 2_000_000_000;
    k.access(now, Actor::AppMain(a), fa + 3, false).unwrap();
    assert!(k.vmstat.swapin_readahead_pages >= 4, "{:?}", k.vmstat);
    let still = |k: &Kernel, first: PageIdx| {
        (first..first + 4)
            .filter(|&i| k.page(i).unwrap().state == PageState::Swapped)
            .count() as u64
    };
    assert_eq!(swapped(&k, a), still(&k, fa));
    assert_eq!(swapped(&k, b), still(&k, fb));
    assert!(still(&k, fb) < 4, "B's pages came in with A's fault");
    k.check_invariants().unwrap();
    // Exit frees B's remaining slots without the count going below zero.
    k.exit(b);
    k.exit(a);
    k.check_invariants().unwrap();
}
