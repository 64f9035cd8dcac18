//! HPROF heap-dump import: HotSpot "JAVA PROFILE 1.0.2" and Android "JAVA PROFILE 1.0.3" dumps
//! into an object graph (objects, shallow sizes, references, roots, classes), and from there into a
//! [`Heap`].
//!
//! Why hand-written: the only Rust crate found that parses HPROF (`jvm-hprof`, last released
//! January 2021, nom 5) yields records, not an object graph, and does not handle Android's 1.0.3
//! records (HEAP_DUMP_INFO 0xFE, roots 0x89–0x8E and 0x90, PRIMITIVE_ARRAY_NODATA 0xC3); no
//! well-kept crate does this, so the format (a flat record stream) is parsed here directly.
//!
//! Format (OpenJDK `heapDumper.cpp`, Android `perflib`/`ahat` and ART `hprof.cc`): a NUL-terminated
//! header, u4 identifier size, u8 timestamp; then records `tag u1, time u4, length u4, body`.
//! STRING 0x01, LOAD_CLASS 0x02, HEAP_DUMP 0x0C and HEAP_DUMP_SEGMENT 0x1C (sub-records, not
//! length-prefixed: roots, CLASS_DUMP 0x20, INSTANCE_DUMP 0x21, OBJECT_ARRAY_DUMP 0x22,
//! PRIMITIVE_ARRAY_DUMP 0x23), HEAP_DUMP_END 0x2C; other records are skipped by length.
//!
//! Parsing is two-pass: pass 1 walks every record and sub-record, validating lengths and
//! collecting classes, object positions and roots; pass 2 decodes each object's references
//! (instance fields via the superclass chain, field type 2 = reference) and resolves them to dense
//! object indices. References to ids absent from the dump are dropped and counted. Records are
//! self-delimiting, so a dump cut between two records would read as a smaller dump: a file must
//! hold a heap dump record, and a dump in segments must end with HEAP_DUMP_END (as both HotSpot and
//! ART write it), else it is reported as truncated. Bad input never
//! panics: every read is bounds-checked and errors name the file, the byte offset and what was
//! expected.
//!
//! **Object sizes** (shallow, as in the heap, not as encoded in the dump):
//! - HotSpot (1.0.2), modelled as a 64-bit JVM with compressed oops and compressed class pointers
//!   (the default below 32 GB heaps): 12-byte object header, 4-byte references; instance size =
//!   align8(12 + Σ field sizes over the class chain); arrays = align8(16 + length × element size);
//!   `java.lang.Class` mirrors = align8(size of a `java.lang.Class` instance + 36 bytes of
//!   VM-injected fields (klass, array_klass, oop_size, static_oop_field_count, protection_domain,
//!   signers, source_file) + static fields). This is what `jcmd GC.class_histogram` counts (it
//!   reports `oop->size()`, including headers and alignment). The sum of field sizes ignores
//!   field-layout gaps (JDK 15+ packs fields densely, so gaps are rare), hence a small tolerance.
//! - Android (1.0.3): instance size = the class's instance size from CLASS_DUMP (ART writes
//!   `Class::GetObjectSize()`, header included); arrays = align8(12 + length × element size), 16-byte
//!   header for 8-byte elements; references are 4 bytes; Class objects are estimated at 128 bytes +
//!   static fields (ART writes 0 for them).

use crate::backing::PageBacking;
use crate::heap::{ClassKind, Heap, HeapConfig, HeapError, ObjId};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt;

mod parse;
pub use parse::{parse, parse_file};

/// A parse error: file, byte offset, what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HprofError {
    pub file: String,
    pub offset: u64,
    pub what: String,
}

impl fmt::Display for HprofError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: byte {}: {}", self.file, self.offset, self.what)
    }
}

impl std::error::Error for HprofError {}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Format {
    /// "JAVA PROFILE 1.0.1" / "1.0.2" (HotSpot).
    HotSpot,
    /// "JAVA PROFILE 1.0.3" (Android ART).
    Android,
}

/// GC root kinds (HotSpot 0x01–0x08, 0xFF; Android 0x89–0x8E, 0x90).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum RootKind {
    Unknown,
    JniGlobal,
    JniLocal,
    JavaFrame,
    NativeStack,
    StickyClass,
    ThreadBlock,
    MonitorUsed,
    ThreadObject,
    InternedString,
    Finalizing,
    Debugger,
    ReferenceCleanup,
    VmInternal,
    JniMonitor,
    Unreachable,
}

/// What a dumped object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ObjKind {
    Instance,
    ObjectArray,
    /// Primitive array with its HPROF basic type.
    PrimitiveArray(u8),
    /// A class object (from CLASS_DUMP).
    Class,
}

/// A class from CLASS_DUMP (plus its LOAD_CLASS name).
#[derive(Debug, Clone, Serialize)]
pub struct DumpClass {
    pub id: u64,
    /// Java name with dots (`java.lang.String`, `[Ljava.lang.Object;`, `byte[]` for synthesized
    /// primitive array classes).
    pub name: String,
    pub super_id: u64,
    /// The instance-size field as written in the dump.
    pub dump_instance_size: u32,
    /// Instance field types declared by this class (not its superclasses).
    pub field_types: Vec<u8>,
    /// Static fields: total bytes in the heap model and reference values.
    pub static_bytes: u32,
    pub static_refs: Vec<u64>,
    pub loader_id: u64,
    /// Index of the class object among the dump's objects (NIL for synthesized classes).
    pub obj: u32,
}

/// Sizing model (see module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SizeModel {
    /// 64-bit HotSpot; `compressed`: compressed oops and class pointers.
    HotSpot {
        compressed: bool,
    },
    Art,
}

const NIL: u32 = u32::MAX;
/// Largest shallow size recorded for one object.
const MAX_OBJECT_BYTES: u64 = 1 << 31;

/// A parsed heap dump: a dense object graph.
#[derive(Debug, Clone, Serialize)]
pub struct Dump {
    pub file: String,
    pub format: Format,
    pub id_size: u32,
    pub timestamp_ms: u64,
    pub size_model: SizeModel,
    pub classes: Vec<DumpClass>,
    /// Heap names (Android: "app", "image", "zygote"...; HotSpot: "default").
    pub heap_names: Vec<String>,
    pub obj_id: Vec<u64>,
    /// Class index (into `classes`) of each object, or NIL (unknown class).
    pub obj_class: Vec<u32>,
    pub obj_kind: Vec<ObjKind>,
    pub obj_size: Vec<u32>,
    pub obj_heap: Vec<u8>,
    pub ref_start: Vec<u32>,
    pub refs: Vec<u32>,
    pub roots: Vec<(u32, RootKind)>,
    /// Root records whose object is not in the dump.
    pub unresolved_roots: u64,
    /// Non-null references to ids not in the dump.
    pub unresolved_refs: u64,
}

/// Histogram bucket.
#[derive(Debug, Clone, Serialize)]
pub struct Bucket {
    pub label: String,
    pub objects: u64,
    pub bytes: u64,
}

/// What `hotlaunch inspect` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub file: String,
    pub format: Format,
    pub id_size: u32,
    pub objects: u64,
    pub total_bytes: u64,
    pub classes: u64,
    pub root_records: u64,
    pub distinct_roots: u64,
    pub unresolved_roots: u64,
    pub unresolved_refs: u64,
    pub references: u64,
    pub heaps: Vec<Bucket>,
    /// Power-of-two size buckets.
    pub size_histogram: Vec<Bucket>,
    /// Objects by BFS depth from the roots; the last bucket is "unreachable".
    pub depth_histogram: Vec<Bucket>,
}

impl Dump {
    pub fn num_objects(&self) -> usize {
        self.obj_id.len()
    }

    pub fn refs_of(&self, i: u32) -> &[u32] {
        &self.refs[self.ref_start[i as usize] as usize..self.ref_start[i as usize + 1] as usize]
    }

    pub fn total_bytes(&self) -> u64 {
        self.obj_size.iter().map(|&s| s as u64).sum()
    }

    /// BFS depth of each object from the roots (`u32::MAX` = unreachable).
    pub fn depths(&self) -> Vec<u32> {
        let n = self.num_objects();
        let mut depth = vec![u32::MAX; n];
        let mut cur: Vec<u32> = Vec::new();
        for &(r, _) in &self.roots {
            if depth[r as usize] == u32::MAX {
                depth[r as usize] = 0;
                cur.push(r);
            }
        }
        let mut d = 0;
        let mut next = Vec::new();
        while !cur.is_empty() {
            next.clear();
            for &o in &cur {
                for &c in self.refs_of(o) {
                    if depth[c as usize] == u32::MAX {
                        depth[c as usize] = d + 1;
                        next.push(c);
                    }
                }
            }
            std::mem::swap(&mut cur, &mut next);
            d += 1;
        }
        depth
    }

    pub fn summary(&self) -> Summary {
        let mut size_h: Vec<Bucket> = Vec::new();
        for (i, &s) in self.obj_size.iter().enumerate() {
            let b = 32 - (s.max(1) - 1).leading_zeros().min(31);
            let b = b as usize;
            while size_h.len() <= b {
                let k = size_h.len();
                let label = if k == 0 {
                    "<=1 B".to_string()
                } else {
                    format!("{}-{} B", (1u64 << (k - 1)) + 1, 1u64 << k)
                };
                size_h.push(Bucket {
                    label,
                    objects: 0,
                    bytes: 0,
                });
            }
            size_h[b].objects += 1;
            size_h[b].bytes += self.obj_size[i] as u64;
        }
        size_h.retain(|b| b.objects > 0);
        let depths = self.depths();
        let maxd = depths
            .iter()
            .filter(|&&d| d != u32::MAX)
            .max()
            .copied()
            .unwrap_or(0);
        let mut depth_h: Vec<Bucket> = (0..=maxd)
            .map(|d| Bucket {
                label: d.to_string(),
                objects: 0,
                bytes: 0,
            })
            .collect();
        let mut unreach = Bucket {
            label: "unreachable".into(),
            objects: 0,
            bytes: 0,
        };
        for (i, &d) in depths.iter().enumerate() {
            let b = if d == u32::MAX {
                &mut unreach
            } else {
                &mut depth_h[d as usize]
            };
            b.objects += 1;
            b.bytes += self.obj_size[i] as u64;
        }
        if self.num_objects() == 0 {
            depth_h.clear();
        }
        depth_h.push(unreach);
        let mut heaps: Vec<Bucket> = self
            .heap_names
            .iter()
            .map(|h| Bucket {
                label: h.clone(),
                objects: 0,
                bytes: 0,
            })
            .collect();
        for (i, &h) in self.obj_heap.iter().enumerate() {
            if let Some(b) = heaps.get_mut(h as usize) {
                b.objects += 1;
                b.bytes += self.obj_size[i] as u64;
            }
        }
        let mut distinct: Vec<u32> = self.roots.iter().map(|r| r.0).collect();
        distinct.sort_unstable();
        distinct.dedup();
        Summary {
            file: self.file.clone(),
            format: self.format,
            id_size: self.id_size,
            objects: self.num_objects() as u64,
            total_bytes: self.total_bytes(),
            classes: self.classes.len() as u64,
            root_records: self.roots.len() as u64,
            distinct_roots: distinct.len() as u64,
            unresolved_roots: self.unresolved_roots,
            unresolved_refs: self.unresolved_refs,
            references: self.refs.len() as u64,
            heaps,
            size_histogram: size_h,
            depth_histogram: depth_h,
        }
    }

    /// Per-class `(name, objects, bytes)`, largest bytes first (ties by name).
    pub fn class_histogram(&self) -> Vec<(String, u64, u64)> {
        let mut per: Vec<(u64, u64)> = vec![(0, 0); self.classes.len() + 1];
        for i in 0..self.num_objects() {
            let c = self.obj_class[i];
            let k = if c == NIL { self.classes.len() } else { c as usize };
            per[k].0 += 1;
            per[k].1 += self.obj_size[i] as u64;
        }
        let mut out: Vec<(String, u64, u64)> = per
            .into_iter()
            .enumerate()
            .filter(|(_, (n, _))| *n > 0)
            .map(|(k, (n, b))| {
                let name = self
                    .classes
                    .get(k)
                    .map(|c| c.name.clone())
                    .unwrap_or_else(|| "<unknown class>".into());
                (name, n, b)
            })
            .collect();
        out.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
        out
    }

    /// The heap model's class name and kind of each dump class.
    fn class_kinds(&self) -> Vec<(String, ClassKind)> {
        self.classes
            .iter()
            .map(|c| {
                let kind = if c.name == "java.lang.String" {
                    ClassKind::String
                } else if c.name == "java.lang.Class" {
                    ClassKind::Class
                } else if let Some(rest) = c.name.strip_prefix('[') {
                    match rest.as_bytes().first() {
                        Some(b'L') | Some(b'[') => ClassKind::ObjectArray,
                        Some(b'J') | Some(b'D') => ClassKind::PrimitiveArray(8),
                        Some(b'I') | Some(b'F') => ClassKind::PrimitiveArray(4),
                        Some(b'C') | Some(b'S') => ClassKind::PrimitiveArray(2),
                        _ => ClassKind::PrimitiveArray(1),
                    }
                } else if c.name.ends_with("[]") {
                    ClassKind::PrimitiveArray(1)
                } else {
                    ClassKind::Instance
                };
                (c.name.clone(), kind)
            })
            .collect()
    }

    /// The dump as a heap recipe for a simulated app: objects in the order a compacting collector
    /// copies them from the roots (unreachable objects last; the first GC frees them), with their
    /// classes, sizes and references.
    pub fn blueprint(&self) -> crate::blueprint::Blueprint {
        let order = crate::blueprint::copy_order(self.num_objects(), &self.root_ids(), |o| self.refs_of(o));
        self.blueprint_in(&order)
    }

    /// Distinct root objects, ascending.
    fn root_ids(&self) -> Vec<u32> {
        let mut roots: Vec<u32> = self.roots.iter().map(|r| r.0).collect();
        roots.sort_unstable();
        roots.dedup();
        roots
    }

    /// The dump as a heap recipe with objects in `order`.
    fn blueprint_in(&self, order: &[u32]) -> crate::blueprint::Blueprint {
        let mut classes: Vec<crate::heap::ClassInfo> = self
            .class_kinds()
            .into_iter()
            .map(|(name, kind)| crate::heap::ClassInfo { name, kind })
            .collect();
        let unknown = classes.len() as u32;
        classes.push(crate::blueprint::class("<unknown class>", ClassKind::Instance));
        let n = self.num_objects();
        let class: Vec<u32> = (0..n)
            .map(|i| {
                let c = self.obj_class[i];
                if c == NIL {
                    return unknown;
                }
                let prim_obj = matches!(self.obj_kind[i], ObjKind::PrimitiveArray(_));
                if prim_obj && !matches!(classes[c as usize].kind, ClassKind::PrimitiveArray(_)) {
                    unknown
                } else {
                    c
                }
            })
            .collect();
        crate::blueprint::Blueprint::from_parts(
            classes,
            &class,
            &self.obj_size,
            &self.ref_start,
            &self.refs,
            &self.root_ids(),
            order,
        )
    }

    /// Load the dump into a [`Heap`] (objects in dump order, references, distinct roots). Returns
    /// the heap and the heap id of each dump object. Pages are not touched (the heap looks freshly
    /// loaded); choose `config.growth_limit` at least [`Dump::total_bytes`].
    pub fn to_heap<B: PageBacking + ?Sized>(
        &self,
        pid: u32,
        config: HeapConfig,
        backing: &mut B,
    ) -> Result<(Heap, Vec<ObjId>), HeapError> {
        let mut heap = Heap::new(pid, config);
        let order: Vec<u32> = (0..self.num_objects() as u32).collect();
        let ids = self
            .blueprint_in(&order)
            .instantiate_quiet(&mut heap, 0, backing)?;
        Ok((heap, ids))
    }
}
