//! HPROF import: a real HotSpot dump checked against the JVM's class histogram; synthetic Android
//! 1.0.3 dumps; truncation / corruption / random-bytes robustness.

use proptest::prelude::*;
use runtime::hprof::{parse, Format, ObjKind, RootKind};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

// ---------------------------------------------------------------- a tiny 1.0.3 dump writer

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
}

/// An Android-style dump (id size 4) with heap names, a class with a reference field, instances,
/// an object array, a primitive array, a NODATA array and Android roots.
fn android_dump() -> Vec<u8> {
    let mut w = W { b: Vec::new() };
    w.b.extend_from_slice(b"JAVA PROFILE 1.0.3\0");
    w.u4(4);
    w.u4(0);
    w.u4(1234);
    let rec = |w: &mut W, tag: u8, body: &[u8]| {
        w.u1(tag);
        w.u4(0);
        w.u4(body.len() as u32);
        w.b.extend_from_slice(body);
    };
    let string = |id: u32, s: &str| {
        let mut v = id.to_be_bytes().to_vec();
        v.extend_from_slice(s.as_bytes());
        v
    };
    rec(&mut w, 0x01, &string(1, "com/example/Node"));
    rec(&mut w, 0x01, &string(2, "app"));
    rec(&mut w, 0x01, &string(3, "next"));
    rec(&mut w, 0x01, &string(4, "[Ljava/lang/Object;"));
    rec(&mut w, 0x01, &string(5, "zygote"));
    let mut lc = W { b: Vec::new() };
    lc.u4(1);
    lc.u4(0x100);
    lc.u4(0);
    lc.u4(1);
    rec(&mut w, 0x02, &lc.b);
    let mut lc = W { b: Vec::new() };
    lc.u4(2);
    lc.u4(0x200);
    lc.u4(0);
    lc.u4(4);
    rec(&mut w, 0x02, &lc.b);
    let mut h = W { b: Vec::new() };
    // HEAP_DUMP_INFO zygote
    h.u1(0xFE);
    h.u4(1);
    h.u4(5);
    // CLASS_DUMP Node: one reference field, one int.
    h.u1(0x20);
    h.u4(0x100);
    h.u4(0);
    for _ in 0..6 {
        h.u4(0);
    }
    h.u4(16); // ART object size
    h.u2(0);
    h.u2(0);
    h.u2(2);
    h.u4(3);
    h.u1(2);
    h.u4(3);
    h.u1(10);
    // CLASS_DUMP Object[]
    h.u1(0x20);
    h.u4(0x200);
    h.u4(0);
    for _ in 0..6 {
        h.u4(0);
    }
    h.u4(0);
    h.u2(0);
    h.u2(0);
    h.u2(0);
    // HEAP_DUMP_INFO app
    h.u1(0xFE);
    h.u4(2);
    h.u4(2);
    // Three Nodes: 0x1000 -> 0x1001 -> 0x1002 -> null
    for (id, next) in [(0x1000u32, 0x1001u32), (0x1001, 0x1002), (0x1002, 0)] {
        h.u1(0x21);
        h.u4(id);
        h.u4(0);
        h.u4(0x100);
        h.u4(8);
        h.u4(next);
        h.u4(7);
    }
    // Object[] {0x1000, 0x3000(primitive), 0xdead(missing)}
    h.u1(0x22);
    h.u4(0x2000);
    h.u4(0);
    h.u4(3);
    h.u4(0x200);
    h.u4(0x1000);
    h.u4(0x3000);
    h.u4(0xdead);
    // byte[5]
    h.u1(0x23);
    h.u4(0x3000);
    h.u4(0);
    h.u4(5);
    h.u1(8);
    h.b.extend_from_slice(&[1, 2, 3, 4, 5]);
    // NODATA long[100]
    h.u1(0xC3);
    h.u4(0x3001);
    h.u4(0);
    h.u4(100);
    h.u1(11);
    // Roots: interned string (0x89), vm internal (0x8D), jni monitor (0x8E, id + 8 bytes), unreachable (0x90)
    h.u1(0x89);
    h.u4(0x3000);
    h.u1(0x8D);
    h.u4(0x2000);
    h.u1(0x8E);
    h.u4(0x1000);
    h.u4(1);
    h.u4(2);
    h.u1(0x90);
    h.u4(0x3001);
    h.u1(0x03); // java frame: id, thread serial, frame
    h.u4(0x1002);
    h.u4(1);
    h.u4(0);
    rec(&mut w, 0x1C, &h.b);
    rec(&mut w, 0x2C, &[]);
    w.b
}

#[test]
fn android_dump_parses_with_heaps_roots_and_sizes() {
    let d = parse(&android_dump(), "android.hprof").unwrap();
    assert_eq!(d.format, Format::Android);
    assert_eq!(d.id_size, 4);
    assert_eq!(d.heap_names, vec!["zygote".to_string(), "app".to_string()]);
    // 2 class objects + 3 nodes + Object[] + byte[] + long[]
    assert_eq!(d.num_objects(), 8);
    let node = d.obj_id.iter().position(|&i| i == 0x1000).unwrap() as u32;
    assert_eq!(d.obj_size[node as usize], 16);
    assert_eq!(d.refs_of(node).len(), 1);
    let arr = d.obj_id.iter().position(|&i| i == 0x2000).unwrap();
    assert_eq!(d.obj_kind[arr], ObjKind::ObjectArray);
    assert_eq!(d.obj_size[arr], 24); // align8(12 + 3*4)
    assert_eq!(d.refs_of(arr as u32).len(), 2);
    assert_eq!(d.unresolved_refs, 1);
    let b = d.obj_id.iter().position(|&i| i == 0x3000).unwrap();
    assert_eq!(d.obj_size[b], 24); // align8(12 + 5)
    let l = d.obj_id.iter().position(|&i| i == 0x3001).unwrap();
    assert_eq!(d.obj_kind[l], ObjKind::PrimitiveArray(11));
    assert_eq!(d.obj_size[l], 816); // 16 + 800
    assert_eq!(d.roots.len(), 5);
    assert!(d.roots.iter().any(|r| r.1 == RootKind::JniMonitor));
    assert!(d.roots.iter().any(|r| r.1 == RootKind::Unreachable));
    assert_eq!(d.obj_heap[node as usize], 1);
    assert_eq!(
        d.classes[d.obj_class[node as usize] as usize].name,
        "com.example.Node"
    );
    let s = d.summary();
    assert_eq!(s.objects, 8);
    // Depths: roots 0x3000,0x2000,0x1000,0x3001,0x1002 at 0; 0x1001 at 1; class objects unreachable.
    assert_eq!(s.depth_histogram[0].objects, 5);
    assert_eq!(s.depth_histogram[1].objects, 1);
    assert_eq!(s.depth_histogram.last().unwrap().objects, 2);
    // Into a heap.
    let (heap, ids) = d
        .to_heap(1, Default::default(), &mut runtime::NullBacking::default())
        .unwrap();
    assert_eq!(heap.live_objects, 8);
    assert_eq!(
        heap.refs_of(ids[node as usize])[0],
        ids[d.refs_of(node)[0] as usize]
    );
    assert_eq!(heap.roots.len(), 5);
}

#[test]
fn truncated_and_corrupted_dumps_give_clear_errors() {
    let full = android_dump();
    // Every proper prefix is an error, including cuts at record boundaries (a prefix that ends
    // between records would otherwise parse as a smaller dump).
    for cut in 0..full.len() {
        let e = parse(&full[..cut], "t.hprof").unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("t.hprof: byte "), "{msg}");
        assert!(
            msg.contains("expected") || msg.contains("declares"),
            "cut {cut}: {msg}"
        );
    }
    let mut bad = full.clone();
    bad[0] = b'X';
    assert!(parse(&bad, "x").unwrap_err().to_string().contains("JAVA PROFILE"));
    // Unknown sub-record tag: find the HEAP_DUMP_SEGMENT's first sub-record and break it.
    let seg = full
        .windows(5)
        .position(|w| w[0] == 0x1C && w[1..5] == [0, 0, 0, 0])
        .unwrap();
    let mut bad = full.clone();
    bad[seg + 9] = 0x77;
    let e = parse(&bad, "y").unwrap_err();
    assert_eq!(e.offset, (seg + 9) as u64);
    assert!(e.what.contains("0x77"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]
    #[test]
    fn parser_never_panics_on_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let mut v = b"JAVA PROFILE 1.0.3\0\0\0\0\x04".to_vec();
        v.extend_from_slice(&bytes);
        let _ = parse(&v, "r");
        let _ = parse(&bytes, "r");
    }

    #[test]
    fn parser_never_panics_on_bit_flips(flips in proptest::collection::vec((any::<usize>(), 0u8..8), 1..8), cut in any::<usize>()) {
        let mut v = android_dump();
        for (i, bit) in flips {
            let i = i % v.len();
            v[i] ^= 1 << bit;
        }
        let cut = cut % (v.len() + 1);
        if let Ok(d) = parse(&v[..cut], "f") {
            let _ = d.summary();
        }
    }
}

// ---------------------------------------------------------------- real JVM dump

struct JvmDump {
    dump: PathBuf,
    histogram: String,
}

fn jvm_dump() -> Option<&'static JvmDump> {
    static D: OnceLock<Option<JvmDump>> = OnceLock::new();
    D.get_or_init(|| {
        let have = |c: &str| {
            Command::new(c)
                .arg("-version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok()
        };
        if !have("java") || !have("javac") {
            eprintln!("SKIP: java/javac not found");
            return None;
        }
        let dir = std::env::temp_dir().join(format!("hotlaunch-hprof-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/HeapHolder.java");
        let ok = Command::new("javac")
            .arg("-d")
            .arg(&dir)
            .arg(&src)
            .status()
            .unwrap()
            .success();
        assert!(ok, "javac failed");
        let mut child = Command::new("java")
            .args(["-Xmx64m", "-XX:+UseSerialGC", "-cp"])
            .arg(&dir)
            .arg("HeapHolder")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "READY");
        let pid = child.id().to_string();
        let dump = dir.join("heap.hprof");
        let out = Command::new("jcmd")
            .args([&pid, "GC.heap_dump"])
            .arg(&dump)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "jcmd GC.heap_dump: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let out = Command::new("jcmd")
            .args([&pid, "GC.class_histogram"])
            .output()
            .unwrap();
        let histogram = String::from_utf8_lossy(&out.stdout).into_owned();
        let _ = child.kill();
        let _ = child.wait();
        Some(JvmDump { dump, histogram })
    })
    .as_ref()
}

/// `(instances, bytes)` from the histogram's "Total" line, and per-class rows.
fn histogram_totals(h: &str) -> (u64, u64, Vec<(String, u64, u64)>) {
    let mut rows = Vec::new();
    let mut total = (0, 0);
    for l in h.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.first() == Some(&"Total") && f.len() >= 3 {
            total = (f[1].parse().unwrap(), f[2].parse().unwrap());
        } else if f.len() >= 4 && f[0].ends_with(':') {
            rows.push((f[3].to_string(), f[1].parse().unwrap(), f[2].parse().unwrap()));
        }
    }
    (total.0, total.1, rows)
}

#[test]
fn hotspot_dump_matches_class_histogram() {
    let Some(j) = jvm_dump() else { return };
    let d = runtime::hprof::parse_file(&j.dump).unwrap();
    assert_eq!(d.format, Format::HotSpot);
    let s = d.summary();
    let (hn, hb, rows) = histogram_totals(&j.histogram);
    assert!(hn > 0, "histogram parsed: {}", j.histogram);
    let dn = s.objects as f64 / hn as f64 - 1.0;
    let db = s.total_bytes as f64 / hb as f64 - 1.0;
    eprintln!(
        "dump: {} objects, {} bytes; histogram: {} objects, {} bytes; diff {:+.3}% objects, {:+.3}% bytes",
        s.objects,
        s.total_bytes,
        hn,
        hb,
        dn * 100.0,
        db * 100.0
    );
    // Per-class comparison for diagnosis.
    let mine = d.class_histogram();
    for (name, n, b) in rows.iter().take(12) {
        let m = mine
            .iter()
            .find(|x| &x.0 == name)
            .map(|x| (x.1, x.2))
            .unwrap_or((0, 0));
        eprintln!("  {name:40} hist {n:>7} {b:>9}   dump {:>7} {:>9}", m.0, m.1);
    }
    assert!(dn.abs() < 0.02, "object count within 2%");
    assert!(db.abs() < 0.03, "bytes within 3%");
    // The held graph is there: 20000 Nodes.
    let node = mine.iter().find(|x| x.0 == "HeapHolder$Node").unwrap();
    assert_eq!(node.1, 20000);
    assert_eq!(node.2, 20000 * 40); // align8(12 header + 3 refs*4 + int + long) = 40
    assert!(s.distinct_roots > 0 && s.depth_histogram.len() > 3);
}

/// Offsets of the top-level records of an HPROF file (after the header).
fn record_offsets(buf: &[u8]) -> Vec<usize> {
    let mut at = buf.iter().position(|&b| b == 0).unwrap() + 1 + 12;
    let mut out = Vec::new();
    while at + 9 <= buf.len() {
        out.push(at);
        let len = u32::from_be_bytes(buf[at + 5..at + 9].try_into().unwrap()) as usize;
        at += 9 + len;
    }
    out
}

#[test]
fn truncated_real_dump_errors_name_offset() {
    let Some(j) = jvm_dump() else { return };
    let buf = std::fs::read(&j.dump).unwrap();
    // Cuts inside records, and at the record boundaries a fraction may hit (the dump's size
    // varies from run to run): just before HEAP DUMP END (a 9-byte record, the last one), and
    // before the first heap dump segment.
    let first_segment = record_offsets(&buf)
        .into_iter()
        .find(|&at| buf[at] == 0x1C)
        .expect("a segmented heap dump");
    assert_eq!(buf[buf.len() - 9], 0x2C, "the dump ends with HEAP DUMP END");
    let cuts = [0.1, 0.5, 0.9, 0.999].map(|f| (buf.len() as f64 * f) as usize);
    for cut in cuts.into_iter().chain([buf.len() - 9, first_segment]) {
        let e = parse(&buf[..cut], "real.hprof").unwrap_err();
        assert!(e.to_string().starts_with("real.hprof: byte "), "{e}");
    }
    // Random bit flips in the real dump never panic.
    let mut v = buf.clone();
    let mut x = 12345u64;
    for _ in 0..64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let i = (x >> 33) as usize % v.len();
        v[i] ^= 1 << ((x >> 20) & 7);
        let _ = parse(&v, "flipped.hprof");
    }
}
