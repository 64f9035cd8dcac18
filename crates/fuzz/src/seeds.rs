//! Seed inputs per target: the repository's real files where it has them (every built-in
//! scenario, device and app TOML), otherwise valid files built in code with the crates' own
//! writers (corpus, traces) or a small HPROF writer (the repo ships no dump; a real HotSpot dump is
//! only made at test time when a JDK is present, see `runtime/tests/hprof.rs`).

use content::Corpus;
use trace::{ariadne, csv, oracle};

pub fn scenario() -> Vec<Vec<u8>> {
    let names = workload::scenario::builtin_names();
    names
        .iter()
        .filter_map(|n| workload::scenario::builtin_toml(n))
        .map(|t| t.as_bytes().to_vec())
        .collect()
}

pub fn device() -> Vec<Vec<u8>> {
    device::builtin_names()
        .iter()
        .filter_map(|n| device::builtin_toml(n))
        .map(|t| t.as_bytes().to_vec())
        .collect()
}

pub fn app() -> Vec<Vec<u8>> {
    apps::builtin_names()
        .iter()
        .filter_map(|n| apps::builtin_toml(n))
        .map(|t| t.as_bytes().to_vec())
        .collect()
}

pub fn corpus() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    out.push(Corpus::default().to_bytes());
    let mut c = Corpus::default();
    let mut page = vec![0u8; 4096];
    for (i, b) in page.iter_mut().enumerate() {
        *b = (i % 251) as u8;
    }
    c.push(100, "com.example", "[anon:dalvik-main space]", 0x7000_0000, &page);
    c.push(100, "com.example", "", 0x7000_1000, &[0u8; 4096]);
    c.push(200, "system_server", "[heap]", 0x5000, &page);
    out.push(c.to_bytes());
    out
}

pub fn trace() -> Vec<Vec<u8>> {
    let ids: Vec<u64> = vec![1, 2, 1, 3, 2, 1, 4, 0, u64::MAX];
    let times: Vec<u32> = (0..ids.len() as u32).collect();
    let mut o = Vec::new();
    oracle::write_pages(&times, &ids, &mut o).expect("writing to a Vec");
    let mut c = Vec::new();
    csv::write_pages(&times, &ids, &mut c).expect("writing to a Vec");
    let mut so = Vec::new();
    for (i, &id) in ids.iter().take(2).enumerate() {
        so.extend_from_slice(&ariadne::swapout_header(&ariadne::SwapOut {
            app: id,
            pfn: 777 + i as u64,
            sector: 8 * i as u64,
        }));
        so.extend(std::iter::repeat_n(i as u8, ariadne::PAGE));
    }
    let si = b"10123,8\n[12.5] 10123,16\n\n10124,0\n".to_vec();
    vec![o, c, so, si]
}

pub fn hprof() -> Vec<Vec<u8>> {
    vec![hprof_dump(4), hprof_dump(8), hprof_chain()]
}

/// Big-endian HPROF writer with a given identifier size.
struct W {
    b: Vec<u8>,
    id: usize,
}
impl W {
    fn new(id: usize) -> Self {
        W { b: Vec::new(), id }
    }
    fn u1(&mut self, v: u8) {
        self.b.push(v)
    }
    fn u2(&mut self, v: u16) {
        self.b.extend_from_slice(&v.to_be_bytes())
    }
    fn u4(&mut self, v: u32) {
        self.b.extend_from_slice(&v.to_be_bytes())
    }
    fn id(&mut self, v: u64) {
        let be = v.to_be_bytes();
        self.b.extend_from_slice(&be[8 - self.id..]);
    }
    fn rec(&mut self, tag: u8, body: &[u8]) {
        self.u1(tag);
        self.u4(0);
        self.u4(body.len() as u32);
        self.b.extend_from_slice(body);
    }
    fn header(id: usize) -> Self {
        let mut w = W::new(id);
        w.b.extend_from_slice(b"JAVA PROFILE 1.0.3\0");
        w.u4(id as u32);
        w.u4(0);
        w.u4(1234);
        w
    }
    /// CLASS_DUMP without static fields; `fields` are (name string id, basic type).
    fn class(&mut self, id: u64, sup: u64, inst_size: u32, fields: &[(u64, u8)]) {
        self.u1(0x20);
        self.id(id);
        self.u4(0);
        self.id(sup);
        for _ in 0..5 {
            self.id(0);
        }
        self.u4(inst_size);
        self.u2(0);
        self.u2(0);
        self.u2(fields.len() as u16);
        for &(n, t) in fields {
            self.id(n);
            self.u1(t);
        }
    }
}

/// An Android-style dump: strings, loaded classes, heap names, a class with a reference and an
/// int field, a chain of instances, an object array, a primitive array, a NODATA array, roots.
fn hprof_dump(idsz: usize) -> Vec<u8> {
    let mut w = W::header(idsz);
    for (sid, s) in [
        (1u64, "com/example/Node"),
        (2, "app"),
        (3, "next"),
        (4, "[Ljava/lang/Object;"),
        (5, "zygote"),
    ] {
        let mut v = W::new(idsz);
        v.id(sid);
        v.b.extend_from_slice(s.as_bytes());
        w.rec(0x01, &v.b);
    }
    for (serial, class, name) in [(1u32, 0x100u64, 1u64), (2, 0x200, 4)] {
        let mut v = W::new(idsz);
        v.u4(serial);
        v.id(class);
        v.u4(0);
        v.id(name);
        w.rec(0x02, &v.b);
    }
    let mut h = W::new(idsz);
    h.u1(0xFE);
    h.u4(1);
    h.id(5);
    h.class(0x100, 0, 16, &[(3, 2), (3, 10)]);
    h.class(0x200, 0, 0, &[]);
    h.u1(0xFE);
    h.u4(2);
    h.id(2);
    for (id, next) in [(0x1000u64, 0x1001u64), (0x1001, 0x1002), (0x1002, 0)] {
        h.u1(0x21);
        h.id(id);
        h.u4(0);
        h.id(0x100);
        h.u4(idsz as u32 + 4);
        h.id(next);
        h.u4(7);
    }
    h.u1(0x22);
    h.id(0x2000);
    h.u4(0);
    h.u4(3);
    h.id(0x200);
    for r in [0x1000, 0x3000, 0xdead] {
        h.id(r);
    }
    h.u1(0x23);
    h.id(0x3000);
    h.u4(0);
    h.u4(5);
    h.u1(8);
    h.b.extend_from_slice(&[1, 2, 3, 4, 5]);
    h.u1(0xC3);
    h.id(0x3001);
    h.u4(0);
    h.u4(100);
    h.u1(11);
    h.u1(0x89);
    h.id(0x3000);
    h.u1(0x8D);
    h.id(0x2000);
    h.u1(0x8E);
    h.id(0x1000);
    h.u4(1);
    h.u4(2);
    h.u1(0x90);
    h.id(0x3001);
    h.u1(0x03);
    h.id(0x1002);
    h.u4(1);
    h.u4(0);
    h.u1(0xFF); // unknown root: ROOT_UNKNOWN
    h.id(0x1000);
    w.rec(0x1C, &h.b);
    w.rec(0x2C, &[]);
    w.b
}

/// A short superclass chain with instances of the deepest class (exercises inherited layouts).
fn hprof_chain() -> Vec<u8> {
    let mut w = W::header(4);
    let mut h = W::new(4);
    for c in 0..6u64 {
        let sup = if c == 0 { 0 } else { 0x100 + c - 1 };
        h.class(0x100 + c, sup, 0, &[(1, 2)]);
    }
    for i in 0..3u64 {
        h.u1(0x21);
        h.id(0x1000 + i);
        h.u4(0);
        h.id(0x105);
        h.u4(24);
        for _ in 0..6 {
            h.id(0x1000);
        }
    }
    w.rec(0x1C, &h.b);
    w.rec(0x2C, &[]);
    w.b
}
