//! Mechanism tests of the `regions` policy (ISMM'15): frame conservation with region domains
//! under random operation sequences (every frame in exactly one place: buddy, a region's free
//! pages, or a page), domain compaction moving exactly the source regions' pages with their
//! contents, a killed process returning all its regions, vmalloc regions on unmovable pageblocks,
//! and bad parameters.

use content::{synth::SynthMix, ContentStore};
use engine::Actor;
use hotlaunch_policy as policy;
use kernel::hooks::AllocPurpose;
use kernel::mm::ContentSource;
use kernel::types::*;
use kernel::Kernel;
use policy::regions::{hooks, state, Options, Probe, Regions};
use policy::{resolve_params, ParamValue};
use proptest::prelude::*;

const SRC: ContentSource = ContentSource {
    base: 0,
    len: 64,
    seed: 3,
};

fn small_device() -> device::DeviceProfile {
    let mut d = device::DeviceProfile::builtin("nexus10").unwrap();
    d.memory.dram_mb = 96;
    d.memory.kernel_reserve_mb = 32;
    d.memory.system_reserve_mb = 8;
    d.kernel.min_free_kbytes = Some(1024);
    d
}

/// The page contents every test kernel holds (a twin gives the tests the pages' byte checksums).
fn contents() -> ContentStore {
    let mut c = ContentStore::new();
    c.append_synthetic(&SynthMix::default(), 64, 3);
    c
}

fn kernel(opts: Options) -> (Kernel, Probe) {
    let (kh, _, probe) = hooks(opts);
    (
        Kernel::new(&small_device(), contents(), Vec::new(), kh).unwrap(),
        probe,
    )
}

/// Every frame is in exactly one place: free in the buddy allocator, free inside a region
/// (held), or backing exactly one resident page / kernel allocation.
fn check_frames(k: &Kernel, probe: &Probe, pages: &[(PageIdx, u32)]) -> Result<(), String> {
    k.check_invariants()?;
    let n = k.buddy().nr_pages() as usize;
    let mut used = vec![0u8; n];
    let held = probe.held_frames();
    if held.len() as u64 != probe.held_pages() {
        return Err(format!(
            "held count {} != {} held frames",
            probe.held_pages(),
            held.len()
        ));
    }
    for &f in &held {
        if k.buddy().is_free(f) {
            return Err(format!("held frame {f} is also free in the buddy allocator"));
        }
        used[f as usize] += 1;
    }
    for &(first, len) in pages {
        for idx in first..first + len {
            let Some(p) = k.page(idx) else { continue };
            if p.state != PageState::Resident {
                continue;
            }
            if k.buddy().is_free(p.loc) {
                return Err(format!("page {idx} in buddy-free frame {}", p.loc));
            }
            used[p.loc as usize] += 1;
        }
    }
    if let Some(f) = used.iter().position(|&u| u > 1) {
        return Err(format!("frame {f} is in {} places", used[f]));
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum Op {
    Spawn(u8),
    Map {
        proc: usize,
        pages: u32,
        file: bool,
    },
    Touch {
        proc: usize,
        map: usize,
        start: u32,
        len: u32,
    },
    Unmap {
        proc: usize,
        map: usize,
    },
    Exit {
        proc: usize,
    },
    Compact {
        proc: usize,
    },
    Vmalloc,
    Vfree,
    /// Read a file larger than memory: reclaim runs, region by region in the cache domain.
    Flood {
        proc: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..3).prop_map(Op::Spawn),
        (0usize..6, 1u32..300, any::<bool>()).prop_map(|(proc, pages, file)| Op::Map { proc, pages, file }),
        (0usize..6, 0usize..4, 0u32..300, 1u32..300).prop_map(|(proc, map, start, len)| Op::Touch {
            proc,
            map,
            start,
            len
        }),
        (0usize..6, 0usize..4).prop_map(|(proc, map)| Op::Unmap { proc, map }),
        (0usize..6).prop_map(|proc| Op::Exit { proc }),
        (0usize..6).prop_map(|proc| Op::Compact { proc }),
        Just(Op::Vmalloc),
        Just(Op::Vfree),
        (0usize..6).prop_map(|proc| Op::Flood { proc }),
    ]
}

fn run_ops(order: u8, ops: &[Op]) -> Result<state::Counters, String> {
    let (mut k, probe) = kernel(Options::rg(order));
    let mut procs: Vec<(Pid, Vec<(PageIdx, u32)>)> = Vec::new();
    let mut vm: Vec<Pfn> = Vec::new();
    for (i, o) in ops.iter().enumerate() {
        let now = i as u64 * 1_000_000;
        match *o {
            Op::Spawn(c) => {
                let pid = k.spawn("p", 900, 1);
                k.set_proc_class(
                    pid,
                    [ProcClass::App, ProcClass::Persistent, ProcClass::Service][c as usize],
                );
                procs.push((pid, Vec::new()));
            }
            Op::Map { proc, pages, file } => {
                if let Some((pid, maps)) = procs.get_mut(proc) {
                    let kind = if file {
                        PageKind::File
                    } else {
                        PageKind::NativeAnon
                    };
                    if let Ok(first) = k.mmap(*pid, pages, kind, false, SRC) {
                        maps.push((first, pages));
                    }
                }
            }
            Op::Touch {
                proc,
                map,
                start,
                len,
            } => {
                if let Some((pid, maps)) = procs.get(proc) {
                    if let Some(&(first, n)) = maps.get(map) {
                        let s = start.min(n - 1);
                        let _ = k.access_range(now, Actor::AppMain(*pid), first + s, len.min(n - s), true);
                    }
                }
            }
            Op::Unmap { proc, map } => {
                if let Some((pid, maps)) = procs.get_mut(proc) {
                    if map < maps.len() {
                        let (first, _) = maps.remove(map);
                        k.munmap(*pid, first).map_err(|e| e.to_string())?;
                    }
                }
            }
            Op::Exit { proc } => {
                if proc < procs.len() {
                    let (pid, _) = procs.remove(proc);
                    k.exit(pid);
                }
            }
            Op::Compact { proc } => {
                if let Some(&(pid, _)) = procs.get(proc) {
                    probe.0.with(|s| {
                        s.st.clear_evac();
                        for d in 0..s.st.domains.len() as u32 {
                            s.st.plan_compaction(d);
                        }
                    });
                    k.policy_kernel(now, Actor::Kernel).compact_process(pid);
                    k.apply_policy_cmds();
                }
            }
            Op::Vmalloc => {
                if let (Some(p), _) = k.alloc_kernel_as(now, Actor::Kernel, 0, AllocPurpose::Vmalloc) {
                    vm.push(p);
                }
            }
            Op::Flood { proc } => {
                if let Some((pid, maps)) = procs.get_mut(proc) {
                    let n = k.buddy().nr_pages();
                    if let Ok(first) = k.mmap(*pid, n, PageKind::File, false, SRC) {
                        let _ = k.access_range(now, Actor::AppMain(*pid), first, n, false);
                        maps.push((first, n));
                    }
                }
            }
            Op::Vfree => {
                if let Some(p) = vm.pop() {
                    k.free_kernel_as(p, 0, AllocPurpose::Vmalloc);
                }
            }
        }
        // Only live mappings: the kernel recycles an unmapped range's page indices.
        let live: Vec<(PageIdx, u32)> = procs.iter().flat_map(|(_, m)| m.iter().copied()).collect();
        check_frames(&k, &probe, &live).map_err(|e| format!("after op {i} {o:?}: {e}"))?;
    }
    for (pid, _) in procs {
        k.exit(pid);
    }
    for p in vm {
        k.free_kernel_as(p, 0, AllocPurpose::Vmalloc);
    }
    check_frames(&k, &probe, &[])?;
    if probe.held_pages() != 0 || probe.regions_per_domain().iter().any(|&r| r > 0) {
        return Err(format!(
            "regions left after every process exited: {:?}",
            probe.regions_per_domain()
        ));
    }
    Ok(probe.counters())
}

/// The case CI found: an unmapped range's page index is reused by the next mapping.
#[test]
fn a_recycled_page_index_is_counted_once() {
    let ops = [
        Op::Spawn(0),
        Op::Spawn(0),
        Op::Map {
            proc: 1,
            pages: 1,
            file: false,
        },
        Op::Unmap { proc: 1, map: 0 },
        Op::Map {
            proc: 0,
            pages: 1,
            file: false,
        },
        Op::Touch {
            proc: 0,
            map: 0,
            start: 0,
            len: 1,
        },
    ];
    run_ops(5, &ops).unwrap();
}

/// Conservation through region-granular file reclaim: dirty file pages in every region, then a
/// file larger than memory.
#[test]
fn reclaim_units_keep_every_frame_in_one_place() {
    let ops = [
        Op::Spawn(0),
        Op::Spawn(2),
        Op::Map {
            proc: 0,
            pages: 200,
            file: true,
        },
        Op::Map {
            proc: 1,
            pages: 200,
            file: true,
        },
        Op::Touch {
            proc: 0,
            map: 0,
            start: 0,
            len: 200,
        },
        Op::Touch {
            proc: 1,
            map: 0,
            start: 0,
            len: 200,
        },
        Op::Unmap { proc: 1, map: 0 },
        Op::Flood { proc: 1 },
    ];
    for order in 5..=8 {
        let c = run_ops(order, &ops).unwrap();
        assert!(
            c.reclaim_units > 0 && c.reclaim_units_freed > 0,
            "order {order}: {c:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn every_frame_is_in_exactly_one_place_with_region_domains(
        order in 5u8..=8,
        ops in prop::collection::vec(op(), 1..50),
    ) {
        run_ops(order, &ops).map_err(TestCaseError::fail)?;
    }
}

/// One app with interleaved live and garbage pages; the garbage is unmapped.
fn fragmented_app(k: &mut Kernel, pages: u32) -> (Pid, PageIdx) {
    let pid = k.spawn("app", 900, 1);
    let live = k.mmap(pid, pages, PageKind::NativeAnon, false, SRC).unwrap();
    let dead = k.mmap(pid, pages, PageKind::NativeAnon, false, SRC).unwrap();
    for j in 0..pages {
        k.access(0, Actor::AppMain(pid), live + j, true).unwrap();
        k.access(0, Actor::AppMain(pid), dead + j, true).unwrap();
    }
    k.munmap(pid, dead).unwrap();
    (pid, live)
}

#[test]
fn domain_compaction_packs_the_domain_and_keeps_every_page_content() {
    let (mut k, probe) = kernel(Options::rg(6));
    let (pid, live) = fragmented_app(&mut k, 640);
    let d = probe.domain_of(k.page(live).unwrap().loc);
    assert!(d >= state::SPECIAL);
    // Half of every region is a hole: 20 regions for 640 pages.
    assert_eq!(probe.regions_per_domain()[d as usize], 20);
    // A page's bytes are its content's bytes: their checksum before and after the move.
    let bytes = contents();
    let sum = |k: &Kernel, i: PageIdx| bytes.checksum(k.page(i).unwrap().content);
    let before: Vec<(Pfn, u64)> = (live..live + 640)
        .map(|i| (k.page(i).unwrap().loc, sum(&k, i)))
        .collect();
    let free0 = k.buddy().nr_free_pages();
    let moving = probe.0.with(|s| s.st.plan_compaction(d));
    assert_eq!(moving, 320, "the 10 emptiest regions' pages move");
    k.policy_kernel(0, Actor::Kernel).compact_process(pid);
    k.apply_policy_cmds();
    assert_eq!(
        probe.regions_per_domain()[d as usize],
        10,
        "640 pages fill 10 regions"
    );
    assert_eq!(probe.held_pages(), 0);
    assert_eq!(
        k.buddy().nr_free_pages(),
        free0 + 10 * 64,
        "emptied regions went back whole"
    );
    assert_eq!(
        k.vmstat.pgmigrate_success, 320,
        "only the source regions' pages moved"
    );
    for (i, idx) in (live..live + 640).enumerate() {
        let p = k.page(idx).unwrap();
        assert_eq!(sum(&k, idx), before[i].1, "page {i} keeps its bytes");
        assert_eq!(probe.domain_of(p.loc), d);
    }
    check_frames(&k, &probe, &[(live, 640)]).unwrap();
}

#[test]
fn a_killed_process_returns_all_its_regions_as_whole_blocks() {
    let (mut k, probe) = kernel(Options::rg(6));
    let free0 = k.buddy().nr_free_pages();
    let (pid, _) = fragmented_app(&mut k, 400);
    assert!(probe.held_pages() > 0);
    let before = k.buddy().free_block_counts();
    k.exit(pid);
    assert_eq!(probe.held_pages(), 0);
    assert!(probe.regions_per_domain().iter().all(|&r| r == 0));
    let after = k.buddy().free_block_counts();
    let gained: i64 = (6..after.len())
        .map(|o| (after[o] as i64 - before[o] as i64).max(0) << o)
        .sum();
    assert!(
        gained >= 400,
        "whole regions (order >= 6) came back: {gained} pages"
    );
    assert!(
        k.buddy().nr_free_pages() + 64 >= free0,
        "all memory back but page tables"
    );
}

#[test]
fn vmalloc_and_gpu_pages_live_in_unmovable_regions() {
    let (mut k, probe) = kernel(Options::rg(6));
    let (a, _) = k.alloc_kernel_as(0, Actor::Kernel, 0, AllocPurpose::Vmalloc);
    let (b, _) = k.alloc_kernel_as(0, Actor::Kernel, 0, AllocPurpose::Gpu);
    for p in [a.unwrap(), b.unwrap()] {
        assert_eq!(probe.domain_of(p), state::VMALLOC);
        assert_eq!(k.buddy().pageblock_type(p), MigrateType::Unmovable);
    }
    assert_eq!(a.unwrap() >> 6, b.unwrap() >> 6, "one region for both");
    // Without the vmalloc domain they come from the buddy allocator.
    let mut o = Options::rg(6);
    o.vmalloc_domain = false;
    let (mut k2, p2) = kernel(o);
    let (c, _) = k2.alloc_kernel_as(0, Actor::Kernel, 0, AllocPurpose::Vmalloc);
    assert_eq!(p2.domain_of(c.unwrap()), NIL);
}

#[test]
fn sharing_puts_persistent_and_service_processes_in_two_domains() {
    for (sharing, want) in [(true, 2), (false, 6)] {
        let mut o = Options::rg(5);
        o.sharing = sharing;
        let (mut k, probe) = kernel(o);
        for class in [ProcClass::Persistent, ProcClass::Service] {
            for _ in 0..3 {
                let pid = k.spawn("sys", -800, 1);
                k.set_proc_class(pid, class);
                let f = k.mmap(pid, 10, PageKind::NativeAnon, false, SRC).unwrap();
                k.access_range(0, Actor::AppMain(pid), f, 10, true).unwrap();
            }
        }
        assert_eq!(probe.domains_in_use(), want, "sharing = {sharing}");
    }
}

#[test]
fn bad_parameters_are_one_line_errors() {
    for (k, v) in [
        ("order", ParamValue::Int(4)),
        ("order", ParamValue::Int(9)),
        ("nope", ParamValue::Int(1)),
    ] {
        let e = resolve_params(&Regions, &[(k.to_string(), v)])
            .unwrap_err()
            .to_string();
        assert!(!e.contains('\n') && e.contains(k), "{e}");
    }
    let p = resolve_params(&Regions, &[("order".into(), ParamValue::Int(8))]).unwrap();
    assert_eq!(p.label("regions"), "regions(order=8)");
}

/// §4.2: reclaim of a cache-domain file page empties its whole region (clean inactive pages
/// dropped, dirty ones migrated into other cache regions with their contents) and the region goes
/// back to the buddy allocator; with `region_reclaim` off, file reclaim stays per page.
#[test]
fn file_reclaim_frees_whole_cache_regions() {
    let mut freed = Vec::new();
    let mut layouts = Vec::new();
    for on in [true, false, true] {
        let mut o = Options::rg(6);
        o.region_reclaim = on;
        let (mut k, probe) = kernel(o);
        let pid = k.spawn("files", 900, 1);
        let n = 1024;
        let file = k.mmap(pid, n, PageKind::File, false, SRC).unwrap();
        // Interleaved with a second file that is unmapped: every cache region is half used, so
        // a unit's dirty pages have room in the others.
        let gone = k.mmap(pid, n, PageKind::File, false, SRC).unwrap();
        for j in 0..n {
            k.access(0, Actor::AppMain(pid), file + j, j % 16 == 0).unwrap();
            k.access(0, Actor::AppMain(pid), gone + j, false).unwrap();
        }
        k.munmap(pid, gone).unwrap();
        let content: Vec<u32> = (file..file + n).map(|i| k.page(i).unwrap().content).collect();
        let filler = k.spawn("filler", 0, 1);
        let m = k.buddy().nr_pages();
        let anon = k.mmap(filler, m, PageKind::NativeAnon, false, SRC).unwrap();
        let mut now = 1_000;
        for j in 0..m {
            match k.access(now, Actor::AppMain(filler), anon + j, true) {
                Ok(s) => now += s.ns,
                Err(_) => break,
            }
            if probe.counters().reclaim_units_freed >= 4
                || k.vmstat.pgsteal_kswapd + k.vmstat.pgsteal_direct > 512
            {
                break;
            }
        }
        let c = probe.counters();
        for (j, idx) in (file..file + n).enumerate() {
            let p = k.page(idx).unwrap();
            if p.state == PageState::Resident {
                assert_eq!(p.content, content[j], "page {j} keeps its content");
                assert_eq!(probe.domain_of(p.loc), state::CACHE);
            }
        }
        check_frames(&k, &probe, &[(file, n), (anon, m)]).unwrap();
        freed.push((c.reclaim_units, c.reclaim_units_freed, k.vmstat.pgmigrate_success));
        layouts.push(
            (file..file + n)
                .map(|i| (k.page(i).unwrap().state, k.page(i).unwrap().loc))
                .collect::<Vec<_>>(),
        );
    }
    let (units, whole, moved) = freed[0];
    assert!(
        units > 0 && whole >= 4,
        "on: {units} units, {whole} regions freed whole"
    );
    assert!(moved > 0, "dirty pages of the units were migrated");
    assert_eq!(freed[1].0, 0, "off: no unit is named");
    assert_eq!((freed[0], &layouts[0]), (freed[2], &layouts[2]), "deterministic");
}

/// Domain compaction must come after the runtime returned the heap pages the app frees in the
/// background, or those pages leave holes in the compacted regions: on ART after the stock
/// collector transition (5 s), on Dalvik (Android 4.2, the paper's) after the heap trim 5 s
/// after that GC plus the GC's duration (at most ~0.3 s on the Nexus 10 workload).
#[test]
fn domain_compaction_waits_for_the_runtime_to_return_background_heap_pages() {
    use policy::Policy;
    let p = policy::Params::defaults(&Regions.params());
    let delay = Options::from_params(&p).compact_delay;
    let mut cx_timers = engine::Timers::default();
    let mut ledger = engine::CpuLedger::default();
    let mut cx = engine::HookCx::new(0, Actor::Kernel, &mut ledger, &mut cx_timers);
    let heap = runtime::Heap::new(1, runtime::HeapConfig::default());
    let (gc_after, _) = runtime::RuntimeHooks::on_state_change(&mut runtime::StockArt, &mut cx, &heap, false)
        .expect("stock schedules a background GC");
    let dalvik = device::DeviceProfile::builtin("nexus10").unwrap().stock();
    let trim_ms = dalvik.heap_trim_delay_ms.expect("Android 4.2 is Dalvik");
    let gc_and_trim = gc_after + trim_ms * 1_000_000 + 300_000_000;
    assert!(
        delay >= gc_and_trim,
        "compaction at {delay} ns, trim done at {gc_and_trim} ns"
    );
}
