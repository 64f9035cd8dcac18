//! The managed runtime inside whole-stack runs: GCs run in launches and in the background, a GC
//! over a swapped-out heap stalls on faults, and a scenario can give an app a heap from an HPROF
//! dump.

use hotlaunch::{plan_runs, simulate, RunSpec};
use report::model::PolicyResult;
use workload::scenario::{Scenario, WorkloadSpec};

fn run(sc: &Scenario, policies: &[&str]) -> Vec<PolicyResult> {
    let r = sc.resolve().unwrap();
    let spec = RunSpec::from_scenario(&r);
    let names: Vec<String> = policies.iter().map(|s| s.to_string()).collect();
    let plans = plan_runs(&r, &names).unwrap();
    simulate(&spec, &plans, |_, _, _| {}).unwrap().policies
}

#[test]
fn collections_run_in_the_foreground_in_launches_and_in_the_background() {
    let mut sc = Scenario::builtin("default").unwrap();
    if let WorkloadSpec::LiveLab { launches, .. } = &mut sc.workload {
        *launches = 60;
    }
    let p = &run(&sc, &["android"])[0];
    let g = &p.gc;
    assert!(g.collections > 20, "{g:?}");
    assert!(g.full > 0 && g.sticky > 0, "{g:?}");
    assert!(
        g.background > 0,
        "collector transitions of backgrounded apps: {g:?}"
    );
    assert!(g.objects_visited > 100_000 && g.mb_freed > 1.0, "{g:?}");
    let gc_cpu = p.cpu_ms.by_category.get("gc").copied().unwrap_or(0.0);
    assert!(
        (gc_cpu - g.cpu_ms).abs() / g.cpu_ms < 0.2 || gc_cpu >= g.cpu_ms,
        "ledger {gc_cpu} vs {}",
        g.cpu_ms
    );
}

#[test]
fn a_gc_over_a_paged_out_heap_swaps_it_back_in_on_the_gc_thread() {
    use engine::{Actor, CpuLedger, RngStreams};
    use runtime::gen::GraphSpec;
    use runtime::{GcCause, GcKind, HeapConfig, JavaApp, JavaModel, JavaParams, StockArt};
    let device = device::DeviceProfile::builtin("pixel3").unwrap();
    let parts = policy::by_name("android")
        .unwrap()
        .build(&device, Default::default(), &Default::default())
        .unwrap();
    let mut contents = content::ContentStore::new();
    let range = contents.append_synthetic(&content::SynthMix::default(), 512, 9);
    let mut k = kernel::Kernel::new(&device, contents, parts.backends, parts.kernel_hooks).unwrap();
    let pid = k.spawn("app", 900, 10);
    k.set_content_source(
        pid,
        kernel::mm::ContentSource {
            base: range.start,
            len: range.end - range.start,
            seed: 3,
        },
    );
    let mut rng = RngStreams::new(4).stream("bp", 0);
    // Objects up to 4 KiB: all in the region space (large objects are not moved by compaction).
    let mut sizes = runtime::gen::SizeDist::commercial_apps();
    sizes.buckets.truncate(6);
    let bp = GraphSpec {
        bytes: 16 << 20,
        sizes,
        ..GraphSpec::default()
    }
    .blueprint(&mut rng);
    let pages = (bp.total_bytes() / 4096) as u32;
    let model = JavaModel {
        blueprint: std::sync::Arc::new(bp).into(),
        config: HeapConfig::pixel3(),
        params: JavaParams::default(),
    };
    let mut j = JavaApp::new(pid, &model, Box::new(StockArt), pages, rng, 0);
    let mut l = CpuLedger::default();
    j.build_to(0, pages, &mut k, &mut l).unwrap();
    for (f, n) in j.mapped_ranges() {
        k.madvise(1_000_000, Actor::Kernel, f, n, kernel::types::Advice::PageOut);
    }
    let swapped = k.meminfo().swapped;
    assert!(swapped as u32 > pages / 2, "heap paged out: {swapped} of {pages}");
    let (pswpin, gc_cpu) = (k.vmstat.pswpin, k.cpu.by_actor_kind()[1].1);
    let st = j.rt.collect(
        2_000_000_000,
        GcCause::Explicit,
        Some(GcKind::Full { compact: false }),
        &mut k,
        &mut l,
    );
    // Marking in place reads an object's header page, and all its pages only if it has
    // reference fields: large primitive arrays' interiors stay out.
    let swapped_in = k.vmstat.pswpin - pswpin;
    assert!(
        swapped_in > swapped / 4,
        "the GC touched the heap: {swapped_in} of {swapped} pages swapped in"
    );
    assert!(
        st.stall_ns > swapped_in * 1000,
        "fault stalls on the GC thread: {} ns",
        st.stall_ns
    );
    assert!(
        k.cpu.by_actor_kind()[1].1 > gc_cpu,
        "decompression is charged to the GC thread"
    );
    // A compacting GC copies every live object: it reads all of them.
    for (f, n) in j.mapped_ranges() {
        k.madvise(3_000_000_000, Actor::Kernel, f, n, kernel::types::Advice::PageOut);
    }
    let (swapped, pswpin) = (k.meminfo().swapped, k.vmstat.pswpin);
    j.rt.collect(
        4_000_000_000,
        GcCause::Explicit,
        Some(GcKind::Full { compact: true }),
        &mut k,
        &mut l,
    );
    let swapped_in = k.vmstat.pswpin - pswpin;
    assert!(
        swapped_in * 10 > swapped * 9,
        "compaction read the heap: {swapped_in} of {swapped}"
    );
    assert_eq!(k.integrity.checksum_mismatches, 0);
    k.check_invariants().unwrap();
}

// ---------------------------------------------------------------- an app with an HPROF heap

struct W(Vec<u8>);
impl W {
    fn u1(&mut self, v: u8) {
        self.0.push(v)
    }
    fn u2(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_be_bytes())
    }
    fn u4(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_be_bytes())
    }
    fn rec(&mut self, tag: u8, body: &[u8]) {
        self.u1(tag);
        self.u4(0);
        self.u4(body.len() as u32);
        self.0.extend_from_slice(body);
    }
}

/// A HotSpot-format dump (id size 4): `n` instances of a class with one reference field, in
/// chains of 50 whose heads are JNI global roots.
fn chain_dump(n: u32) -> Vec<u8> {
    let mut w = W(b"JAVA PROFILE 1.0.2\0".to_vec());
    w.u4(4);
    w.u4(0);
    w.u4(0);
    let string = |id: u32, s: &str| [id.to_be_bytes().to_vec(), s.as_bytes().to_vec()].concat();
    w.rec(0x01, &string(1, "com/example/Node"));
    w.rec(0x01, &string(2, "next"));
    let mut lc = W(Vec::new());
    for v in [1, 0x100, 0, 1] {
        lc.u4(v);
    }
    w.rec(0x02, &lc.0);
    let mut h = W(Vec::new());
    h.u1(0x20); // CLASS_DUMP: id, stack serial, super, loader, signers, domain, 2 reserved
    h.u4(0x100);
    h.u4(0);
    for _ in 0..6 {
        h.u4(0);
    }
    h.u4(4); // instance size
    h.u2(0);
    h.u2(0);
    h.u2(1);
    h.u4(2);
    h.u1(2); // object field
    for i in 0..n {
        let next = if (i + 1) % 50 == 0 || i + 1 == n {
            0
        } else {
            0x1000 + i + 1
        };
        h.u1(0x21);
        h.u4(0x1000 + i);
        h.u4(0);
        h.u4(0x100);
        h.u4(4);
        h.u4(next);
        if i % 50 == 0 {
            // (written after the instance: roots may come anywhere in the segment)
        }
    }
    for i in (0..n).step_by(50) {
        h.u1(0x01); // ROOT_JNI_GLOBAL: object, global ref id
        h.u4(0x1000 + i);
        h.u4(i);
    }
    w.rec(0x0C, &h.0);
    w.rec(0x2C, &[]);
    w.0
}

#[test]
fn a_scenario_app_can_take_its_heap_from_an_hprof_dump() {
    let dir = std::env::temp_dir().join(format!("hl-hprof-scenario-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("dumps")).unwrap();
    std::fs::write(dir.join("dumps/node.hprof"), chain_dump(20_000)).unwrap();
    let twitter = apps::builtin_toml("Twitter")
        .unwrap()
        .replace("name = \"Twitter\"", "name = \"Dumped\"");
    std::fs::write(
        dir.join("dumped.toml"),
        format!("{twitter}\n[java]\nheap = \"dumps/node.hprof\"\n"),
    )
    .unwrap();
    let scenario = |apps: &str| {
        format!(
            "name = \"hprof\"\nseed = 1\ndevice = \"pixel3\"\nswap = \"zram\"\n\n[apps]\nnames = [{apps}]\n\n\
             [workload]\nkind = \"round-robin\"\nrounds = 3\nuse_s = 20\n"
        )
    };
    std::fs::write(dir.join("s.toml"), scenario("\"dumped.toml\", \"YouTube\"")).unwrap();
    let sc = Scenario::load(&dir.join("s.toml")).unwrap();
    let p = run(&sc, &["android"]).remove(0);
    assert!(p.launches.hot >= 2, "{:?}", p.launches);
    assert!(
        p.gc.collections > 0 && p.gc.objects_visited > 20_000,
        "{:?}",
        p.gc
    );
    // A missing dump is a clear error naming the profile's key and the file, before anything runs.
    std::fs::remove_file(dir.join("dumps/node.hprof")).unwrap();
    let e = Scenario::load(&dir.join("s.toml"))
        .unwrap()
        .resolve()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("dumped.toml") && e.contains("java.heap") && e.contains("node.hprof"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
