//! The `regions` policy's use of the kernel's `block_wanted` seam (parameter `region_effort`):
//! when a process needs a new region and the free lists hold no block of the region order, the
//! kernel reclaims (here: a whole clean cache-domain region, §4.2) and compacts for one, so the
//! process gets a region; without the effort it gets a single "stray" buddy page.

use content::{synth::SynthMix, ContentStore};
use engine::Actor;
use hotlaunch_policy as policy;
use kernel::mm::ContentSource;
use kernel::types::*;
use kernel::Kernel;
use policy::regions::{hooks, state, Options, Probe};

const SRC: ContentSource = ContentSource {
    base: 0,
    len: 64,
    seed: 3,
};

fn kernel(opts: Options) -> (Kernel, Probe) {
    let mut d = device::DeviceProfile::builtin("nexus10").unwrap();
    d.memory.dram_mb = 96;
    d.memory.kernel_reserve_mb = 32;
    d.memory.system_reserve_mb = 8;
    d.kernel.min_free_kbytes = Some(1024);
    let mut c = ContentStore::new();
    c.append_synthetic(&SynthMix::default(), 64, 3);
    let (kh, _, probe) = hooks(opts);
    (Kernel::new(&d, c, Vec::new(), kh).unwrap(), probe)
}

/// Put 20 regions of clean file pages in the cache domain, then leave no free block of the
/// region order (6): take every order-5 block the kernel gives and free one of each pair whose
/// buddy half stays taken, then take what is left at order 6. A new process then touches one anonymous page. Returns (the page's
/// domain, the counters, direct-reclaim rounds).
fn new_region_when_none_is_free(effort: bool) -> (u32, state::Counters, u64) {
    let mut o = Options::rg(6);
    o.region_effort = effort;
    let (mut k, probe) = kernel(o);
    let f = k.spawn("files", 0, 1);
    let file = k.mmap(f, 20 * 64, PageKind::File, false, SRC).unwrap();
    k.access_range(0, Actor::AppMain(f), file, 20 * 64, false)
        .unwrap();
    let mut taken = std::collections::BTreeSet::new();
    while let (Some(p), _) = k.alloc_kernel(0, Actor::Kernel, 5) {
        taken.insert(p);
    }
    for &p in &taken {
        if p & 32 != 0 && taken.contains(&(p ^ 32)) {
            k.free_kernel(p, 5);
        }
    }
    // What the watermark kept back at the end (now free memory is plentiful).
    while k.buddy().free_block_counts()[6..].iter().any(|&c| c > 0) {
        k.alloc_kernel(0, Actor::Kernel, 6)
            .0
            .expect("a free order-6 block");
    }
    let counts = k.buddy().free_block_counts();
    assert!(
        counts[6..].iter().all(|&c| c == 0),
        "set-up: no order-6 block {counts:?}"
    );
    assert!(
        k.free_pages() > 1000,
        "set-up: plenty of free memory {}",
        k.free_pages()
    );
    let stalls = k.vmstat.allocstall;
    let t = k.spawn("app", 0, 1);
    let a = k.mmap(t, 1, PageKind::NativeAnon, false, SRC).unwrap();
    k.access(0, Actor::AppMain(t), a, true).unwrap();
    k.check_invariants().unwrap();
    let pfn = k.page(a).unwrap().loc;
    (
        probe.domain_of(pfn),
        probe.counters(),
        k.vmstat.allocstall - stalls,
    )
}

#[test]
fn a_new_region_is_reclaimed_for_before_a_stray_page_is_taken() {
    let (d_on, c_on, st_on) = new_region_when_none_is_free(true);
    let (d_off, c_off, st_off) = new_region_when_none_is_free(false);
    assert_ne!(d_on, NIL, "with the effort the page is in a region");
    assert_ne!(d_on, state::CACHE, "of its own domain");
    assert_eq!(c_on.stray_pages, 0);
    assert_eq!(st_on, 1, "one bounded round of direct reclaim");
    assert!(
        c_on.reclaim_units_freed > 0 && c_on.regions_returned > 0,
        "reclaim emptied whole cache regions: {c_on:?}"
    );
    assert_eq!(d_off, NIL, "without it, a stray buddy page");
    assert_eq!((c_off.stray_pages, c_off.regions_wanted, st_off), (1, 0, 0));
}
