//! Crafted HPROF dumps that used to exhaust memory or panic (issue 13): long superclass chains,
//! superclass cycles, huge instance sizes. Each must finish quickly with a result or an error.

use runtime::hprof::parse;
use std::time::Duration;

#[derive(Default)]
struct W {
    b: Vec<u8>,
}
impl W {
    fn u1(&mut self, v: u8) {
        self.b.push(v)
    }
    fn u2(&mut self, v: u16) {
        self.b.extend_from_slice(&v.to_be_bytes())
    }
    fn u4(&mut self, v: u32) {
        self.b.extend_from_slice(&v.to_be_bytes())
    }
    /// CLASS_DUMP with instance fields of the given types (id size 4).
    fn class(&mut self, id: u32, sup: u32, inst_size: u32, fields: &[u8]) {
        self.u1(0x20);
        self.u4(id);
        self.u4(0);
        self.u4(sup);
        for _ in 0..5 {
            self.u4(0);
        }
        self.u4(inst_size);
        self.u2(0);
        self.u2(0);
        self.u2(fields.len() as u16);
        for &t in fields {
            self.u4(1);
            self.u1(t);
        }
    }
    fn instance(&mut self, id: u32, class: u32, body: &[u8]) {
        self.u1(0x21);
        self.u4(id);
        self.u4(0);
        self.u4(class);
        self.u4(body.len() as u32);
        self.b.extend_from_slice(body);
    }
}

/// A 1.0.3 dump (id size 4) holding `heap` as one HEAP_DUMP_SEGMENT.
fn dump(heap: &W) -> Vec<u8> {
    let mut w = W::default();
    w.b.extend_from_slice(b"JAVA PROFILE 1.0.3\0");
    w.u4(4);
    w.u4(0);
    w.u4(0);
    w.u1(0x1C);
    w.u4(0);
    w.u4(heap.b.len() as u32);
    w.b.extend_from_slice(&heap.b);
    w.u1(0x2C);
    w.u4(0);
    w.u4(0);
    w.b
}

/// Run `f` and check it used under 5 s of this thread's CPU time (not wall time: a loaded CI
/// host must not fail a linear-time parse).
fn timed<T>(f: impl FnOnce() -> T) -> T {
    let t = cpu_time::ThreadTime::now();
    let r = f();
    assert!(t.elapsed() < Duration::from_secs(5), "took {:?}", t.elapsed());
    r
}

#[test]
fn long_superclass_chain_is_linear() {
    // 200,000 classes in one chain, each declaring four reference fields: the old per-class copy
    // of the chain's offsets needed ~13 GB here.
    let n = 200_000u32;
    let mut h = W::default();
    for c in 0..n {
        let sup = if c == 0 { 0 } else { 0x10_0000 + c - 1 };
        h.class(0x10_0000 + c, sup, 0, &[2, 2, 2, 2]);
    }
    // An instance of the deepest class, too short for its chain (an error), and a valid instance
    // of a class 3 levels deep: 4 classes × 4 references.
    h.instance(0x900_0000, 0x10_0000 + n - 1, &[0; 64]);
    let d = dump(&h);
    let e = timed(|| parse(&d, "chain.hprof")).unwrap_err();
    assert!(e.what.contains("instance reference field"), "{e}");

    let mut h = W::default();
    for c in 0..n {
        let sup = if c == 0 { 0 } else { 0x10_0000 + c - 1 };
        h.class(0x10_0000 + c, sup, 0, &[2, 2, 2, 2]);
    }
    let mut body = Vec::new();
    for k in 0..16u32 {
        // Every reference points at the class object of the chain's root.
        let _ = k;
        body.extend_from_slice(&0x10_0000u32.to_be_bytes());
    }
    h.instance(0x900_0000, 0x10_0000 + 3, &body);
    let d = dump(&h);
    let dump = timed(|| parse(&d, "chain.hprof")).unwrap();
    let inst = dump.num_objects() - 1;
    assert_eq!(dump.refs_of(inst as u32).len(), 16);
}

#[test]
fn chain_of_empty_classes_is_linear() {
    // Many classes that declare nothing: walking them per instance would be quadratic.
    let n = 300_000u32;
    let mut h = W::default();
    for c in 0..n {
        let sup = if c == 0 { 0 } else { 0x10_0000 + c - 1 };
        let fields: &[u8] = if c == 0 { &[2] } else { &[] };
        h.class(0x10_0000 + c, sup, 0, fields);
    }
    for i in 0..50_000u32 {
        h.instance(0x900_0000 + i, 0x10_0000 + n - 1, &0x10_0000u32.to_be_bytes());
    }
    let d = dump(&h);
    let dump = timed(|| parse(&d, "empty-chain.hprof")).unwrap();
    assert_eq!(dump.refs_of(dump.num_objects() as u32 - 1).len(), 1);
}

#[test]
fn superclass_cycle_is_an_error() {
    let mut h = W::default();
    h.class(0x100, 0x102, 0, &[2]);
    h.class(0x101, 0x100, 0, &[2]);
    h.class(0x102, 0x101, 0, &[10]);
    h.instance(0x1000, 0x101, &[0; 8]);
    let d = dump(&h);
    let e = timed(|| parse(&d, "cycle.hprof")).unwrap_err();
    assert!(e.what.contains("loops back"), "{e}");
    // A class that is its own superclass.
    let mut h = W::default();
    h.class(0x100, 0x100, 0, &[2]);
    let d = dump(&h);
    assert!(parse(&d, "self.hprof").is_err());
}

#[test]
fn reference_field_past_the_instance_is_an_error() {
    // Fields: int, int, ref; the instance holds 6 bytes: the reference starts past its end.
    let mut h = W::default();
    h.class(0x100, 0, 0, &[10, 10, 2]);
    h.instance(0x1000, 0x100, &[0; 6]);
    let d = dump(&h);
    let e = parse(&d, "short.hprof").unwrap_err();
    assert!(e.what.contains("instance reference field"), "{e}");
}

#[test]
fn huge_instance_size_loads_or_errors_without_overflow() {
    // ART's instance size is taken from CLASS_DUMP: a crafted 0xFFFF_FFF8 must neither overflow
    // (debug builds panicked in the heap's alignment) nor allocate gigabytes.
    for size in [0xFFFF_FFFFu32, 0xFFFF_F000, 0x8000_0000, 0x4000_0001] {
        let mut h = W::default();
        h.class(0x100, 0, size, &[2]);
        h.instance(0x1000, 0x100, &[0; 4]);
        h.u1(0x8D);
        h.u4(0x1000);
        let d = dump(&h);
        let dump = parse(&d, "huge.hprof").unwrap();
        let cfg = runtime::heap::HeapConfig {
            capacity: 256 << 20,
            growth_limit: 256 << 20,
            ..Default::default()
        };
        let mut b = runtime::backing::NullBacking::default();
        let r = timed(|| dump.to_heap(1, cfg, &mut b));
        assert!(r.is_err(), "a {size}-byte object cannot fit a 256 MB heap");
    }
}

#[test]
fn object_alignment_saturates_instead_of_overflowing() {
    // Run in a debug build too: unchecked `x + a - 1` panicked there on u32::MAX.
    use runtime::heap::Heap;
    assert_eq!(Heap::aligned(u32::MAX), 0xFFFF_FFF8);
    assert_eq!(Heap::aligned(u32::MAX - 7), 0xFFFF_FFF8);
    assert_eq!(Heap::aligned(13), 16);
    let cfg = runtime::heap::HeapConfig {
        capacity: 256 << 20,
        growth_limit: 256 << 20,
        ..Default::default()
    };
    let mut heap = Heap::new(1, cfg);
    let c = heap.class_named("huge", runtime::ClassKind::Instance);
    let mut b = runtime::backing::NullBacking::default();
    assert!(heap.alloc_quiet(0, c, u32::MAX, 0, 0, &mut b).is_err());
}

#[test]
fn dump_claiming_more_than_a_blueprint_indexes_is_an_error() {
    // 17 objects whose class claims 2 GiB each total past the blueprint's 32 GiB of offsets: the
    // parser must refuse the dump (naming it) instead of the blueprint panicking later.
    let mut h = W::default();
    h.class(0x100, 0, 0x8000_0000, &[2]);
    for k in 0..17u32 {
        h.instance(0x1000 + 16 * k, 0x100, &[0; 4]);
    }
    let e = parse(&dump(&h), "huge.hprof")
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(e.contains("huge.hprof") && e.contains("at most"), "{e}");
    // 15 such objects (and their class object) still parse, and build a blueprint.
    let mut h = W::default();
    h.class(0x100, 0, 0x8000_0000, &[2]);
    for k in 0..15u32 {
        h.instance(0x1000 + 16 * k, 0x100, &[0; 4]);
    }
    let d = parse(&dump(&h), "big.hprof").unwrap();
    let bp = d.blueprint();
    assert!(bp.total_bytes() >= 15 << 31, "{}", bp.total_bytes());
    assert_eq!((0..bp.len()).filter(|&i| bp.size(i) == 1 << 31).count(), 15);
}
