//! HPROF record parsing (see the [`super`] module doc for the format and the size model):
//! a bounds-checked reader, the two passes over the record stream, and the instance-field layouts
//! of the class chain.

use super::*;

fn basic_size(t: u8, id_size: u32) -> Option<u32> {
    Some(match t {
        2 => id_size,
        4 | 8 => 1,
        5 | 9 => 2,
        6 | 10 => 4,
        7 | 11 => 8,
        _ => return None,
    })
}

fn prim_name(t: u8) -> &'static str {
    match t {
        4 => "boolean[]",
        5 => "char[]",
        6 => "float[]",
        7 => "double[]",
        8 => "byte[]",
        9 => "short[]",
        10 => "int[]",
        11 => "long[]",
        _ => "unknown[]",
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    end: usize,
    file: &'a str,
    id_size: u32,
}

impl<'a> Reader<'a> {
    fn err(&self, at: usize, what: impl Into<String>) -> HprofError {
        HprofError {
            file: self.file.to_string(),
            offset: at as u64,
            what: what.into(),
        }
    }
    #[inline]
    fn need(&self, n: usize, what: &str) -> Result<(), HprofError> {
        let left = self.end.saturating_sub(self.pos);
        if left < n {
            Err(self.err(
                self.pos,
                format!("expected {n} bytes of {what}, but only {left} remain in the enclosing record"),
            ))
        } else {
            Ok(())
        }
    }
    #[inline]
    fn u1(&mut self, what: &str) -> Result<u8, HprofError> {
        self.need(1, what)?;
        self.pos += 1;
        Ok(self.buf[self.pos - 1])
    }
    #[inline]
    fn u2(&mut self, what: &str) -> Result<u16, HprofError> {
        self.need(2, what)?;
        let v = u16::from_be_bytes([self.buf[self.pos], self.buf[self.pos + 1]]);
        self.pos += 2;
        Ok(v)
    }
    #[inline]
    fn u4(&mut self, what: &str) -> Result<u32, HprofError> {
        self.need(4, what)?;
        let b = &self.buf[self.pos..self.pos + 4];
        self.pos += 4;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    #[inline]
    fn id(&mut self, what: &str) -> Result<u64, HprofError> {
        if self.id_size == 4 {
            Ok(self.u4(what)? as u64)
        } else {
            let hi = self.u4(what)? as u64;
            let lo = self.u4(what)? as u64;
            Ok(hi << 32 | lo)
        }
    }
    #[inline]
    fn skip(&mut self, n: u64, what: &str) -> Result<(), HprofError> {
        if ((self.end - self.pos) as u64) < n {
            return Err(self.err(
                self.pos,
                format!(
                    "expected {n} bytes of {what}, but only {} remain in the enclosing record",
                    self.end - self.pos
                ),
            ));
        }
        self.pos += n as usize;
        Ok(())
    }
}

/// Per-object data gathered in pass 1.
struct Pending {
    body: usize,
    class_raw: u64,
    len: u32,
}

/// Parse a dump file.
pub fn parse_file(path: &std::path::Path) -> Result<Dump, HprofError> {
    let name = path.display().to_string();
    let buf = engine::fsio::read_capped(path, engine::fsio::FileKind::HeapDump).map_err(|e| HprofError {
        file: name.clone(),
        offset: 0,
        what: format!("cannot read file: {e}"),
    })?;
    parse(&buf, &name)
}

/// Parse a dump held in memory; `file` names it in errors.
pub fn parse(buf: &[u8], file: &str) -> Result<Dump, HprofError> {
    let mut r = Reader {
        buf,
        pos: 0,
        end: buf.len(),
        file,
        id_size: 4,
    };
    // Header.
    let nul = buf.iter().take(64).position(|&b| b == 0).ok_or_else(|| {
        r.err(
            0,
            "expected a NUL-terminated \"JAVA PROFILE 1.0.x\" header in the first 64 bytes",
        )
    })?;
    let header = &buf[..nul];
    let format = match header {
        b"JAVA PROFILE 1.0.1" | b"JAVA PROFILE 1.0.2" => Format::HotSpot,
        b"JAVA PROFILE 1.0.3" => Format::Android,
        _ => {
            return Err(r.err(
                0,
                format!(
                    "expected header \"JAVA PROFILE 1.0.2\" or \"JAVA PROFILE 1.0.3\", found {:?}",
                    String::from_utf8_lossy(header)
                ),
            ))
        }
    };
    r.pos = nul + 1;
    let id_size = r.u4("identifier size")?;
    if id_size != 4 && id_size != 8 {
        return Err(r.err(
            r.pos - 4,
            format!("expected identifier size 4 or 8, found {id_size}"),
        ));
    }
    r.id_size = id_size;
    let hi = r.u4("timestamp")? as u64;
    let lo = r.u4("timestamp")? as u64;
    let timestamp_ms = hi << 32 | lo;
    let size_model = match format {
        Format::HotSpot => SizeModel::HotSpot { compressed: true },
        Format::Android => SizeModel::Art,
    };

    let mut strings: HashMap<u64, (usize, usize)> = HashMap::new();
    let mut class_names: HashMap<u64, u64> = HashMap::new();
    let mut classes: Vec<DumpClass> = Vec::new();
    let mut class_index: HashMap<u64, u32> = HashMap::new();
    let mut pend: Vec<Pending> = Vec::new();
    let mut obj_id: Vec<u64> = Vec::new();
    let mut obj_kind: Vec<ObjKind> = Vec::new();
    let mut obj_heap: Vec<u8> = Vec::new();
    let mut raw_roots: Vec<(u64, RootKind)> = Vec::new();
    let mut heap_name_ids: Vec<(u32, u64)> = Vec::new();
    let mut cur_heap: u8 = 0;

    // Pass 1: records. A dump cut at a record boundary parses as a shorter dump, so whether the
    // heap dump was complete is checked at the end: a HEAP DUMP (0x0C) record is whole, a dump in
    // HEAP DUMP SEGMENTs (0x1C) must end with HEAP DUMP END (0x2C), as HotSpot and ART write it.
    let mut heap_records = 0u64;
    let mut open_segments = false;
    while r.pos < buf.len() {
        let rec_at = r.pos;
        r.end = buf.len();
        let tag = r.u1("record tag")?;
        let _time = r.u4("record time")?;
        let len = r.u4("record length")? as usize;
        if buf.len() - r.pos < len {
            return Err(r.err(
                rec_at,
                format!(
                    "record with tag 0x{tag:02X} declares {len} bytes but only {} remain in the file (truncated dump?)",
                    buf.len() - r.pos
                ),
            ));
        }
        let body_end = r.pos + len;
        r.end = body_end;
        match tag {
            0x0C => heap_records += 1,
            0x1C => {
                heap_records += 1;
                open_segments = true;
            }
            0x2C => open_segments = false,
            _ => {}
        }
        match tag {
            0x01 => {
                let sid = r.id("STRING id")?;
                strings.insert(sid, (r.pos, body_end));
            }
            0x02 => {
                let _serial = r.u4("LOAD_CLASS serial")?;
                let cid = r.id("LOAD_CLASS class id")?;
                let _st = r.u4("LOAD_CLASS stack serial")?;
                let nid = r.id("LOAD_CLASS name id")?;
                class_names.insert(cid, nid);
            }
            0x0C | 0x1C => {
                while r.pos < body_end {
                    let sub_at = r.pos;
                    let st = r.u1("heap dump sub-record tag")?;
                    let mut root = |kind: RootKind, extra: u64, r: &mut Reader| -> Result<(), HprofError> {
                        let id = r.id("root object id")?;
                        r.skip(extra, "root record fields")?;
                        raw_roots.push((id, kind));
                        Ok(())
                    };
                    let ids = id_size as u64;
                    match st {
                        0xFF => root(RootKind::Unknown, 0, &mut r)?,
                        0x01 => root(RootKind::JniGlobal, ids, &mut r)?,
                        0x02 => root(RootKind::JniLocal, 8, &mut r)?,
                        0x03 => root(RootKind::JavaFrame, 8, &mut r)?,
                        0x04 => root(RootKind::NativeStack, 4, &mut r)?,
                        0x05 => root(RootKind::StickyClass, 0, &mut r)?,
                        0x06 => root(RootKind::ThreadBlock, 4, &mut r)?,
                        0x07 => root(RootKind::MonitorUsed, 0, &mut r)?,
                        0x08 => root(RootKind::ThreadObject, 8, &mut r)?,
                        0x89 => root(RootKind::InternedString, 0, &mut r)?,
                        0x8A => root(RootKind::Finalizing, 0, &mut r)?,
                        0x8B => root(RootKind::Debugger, 0, &mut r)?,
                        0x8C => root(RootKind::ReferenceCleanup, 0, &mut r)?,
                        0x8D => root(RootKind::VmInternal, 0, &mut r)?,
                        0x8E => root(RootKind::JniMonitor, 8, &mut r)?,
                        0x90 => root(RootKind::Unreachable, 0, &mut r)?,
                        0xFE => {
                            let hid = r.u4("HEAP_DUMP_INFO heap id")?;
                            let nid = r.id("HEAP_DUMP_INFO name id")?;
                            let idx = match heap_name_ids.iter().position(|&(h, _)| h == hid) {
                                Some(i) => i,
                                None => {
                                    heap_name_ids.push((hid, nid));
                                    heap_name_ids.len() - 1
                                }
                            };
                            cur_heap = idx.min(255) as u8;
                        }
                        0x20 => {
                            let cid = r.id("CLASS_DUMP class id")?;
                            let _stack = r.u4("CLASS_DUMP stack serial")?;
                            let super_id = r.id("CLASS_DUMP superclass id")?;
                            let loader_id = r.id("CLASS_DUMP class loader id")?;
                            r.skip(ids * 4, "CLASS_DUMP signers/protection domain/reserved ids")?;
                            let inst = r.u4("CLASS_DUMP instance size")?;
                            let ncp = r.u2("CLASS_DUMP constant pool count")?;
                            for _ in 0..ncp {
                                let _i = r.u2("constant pool index")?;
                                let at = r.pos;
                                let t = r.u1("constant pool entry type")?;
                                let s = basic_size(t, id_size)
                                    .ok_or_else(|| r.err(at, format!("expected a basic type (2, 4-11), found {t}")))?;
                                r.skip(s as u64, "constant pool value")?;
                            }
                            let nst = r.u2("CLASS_DUMP static field count")?;
                            let mut static_bytes = 0u32;
                            let mut static_refs = Vec::new();
                            for _ in 0..nst {
                                let _name = r.id("static field name id")?;
                                let at = r.pos;
                                let t = r.u1("static field type")?;
                                let s = basic_size(t, id_size)
                                    .ok_or_else(|| r.err(at, format!("expected a basic type (2, 4-11), found {t}")))?;
                                if t == 2 {
                                    static_refs.push(r.id("static field value")?);
                                    static_bytes += 4;
                                } else {
                                    r.skip(s as u64, "static field value")?;
                                    static_bytes += s;
                                }
                            }
                            let nif = r.u2("CLASS_DUMP instance field count")?;
                            let mut field_types = Vec::with_capacity(nif as usize);
                            for _ in 0..nif {
                                let _name = r.id("instance field name id")?;
                                let at = r.pos;
                                let t = r.u1("instance field type")?;
                                basic_size(t, id_size)
                                    .ok_or_else(|| r.err(at, format!("expected a basic type (2, 4-11), found {t}")))?;
                                field_types.push(t);
                            }
                            if class_index.contains_key(&cid) {
                                return Err(r.err(sub_at, format!("duplicate CLASS_DUMP for class id 0x{cid:x}")));
                            }
                            class_index.insert(cid, classes.len() as u32);
                            classes.push(DumpClass {
                                id: cid,
                                name: String::new(),
                                super_id,
                                dump_instance_size: inst,
                                field_types,
                                static_bytes,
                                static_refs,
                                loader_id,
                                obj: obj_id.len() as u32,
                            });
                            pend.push(Pending { body: sub_at + 1, class_raw: cid, len: 0 });
                            obj_id.push(cid);
                            obj_kind.push(ObjKind::Class);
                            obj_heap.push(cur_heap);
                        }
                        0x21 => {
                            let oid = r.id("INSTANCE_DUMP object id")?;
                            let _stack = r.u4("INSTANCE_DUMP stack serial")?;
                            let cid = r.id("INSTANCE_DUMP class id")?;
                            let n = r.u4("INSTANCE_DUMP field byte count")?;
                            let body = r.pos;
                            r.skip(n as u64, "INSTANCE_DUMP field values")?;
                            pend.push(Pending { body, class_raw: cid, len: n });
                            obj_id.push(oid);
                            obj_kind.push(ObjKind::Instance);
                            obj_heap.push(cur_heap);
                        }
                        0x22 => {
                            let oid = r.id("OBJECT_ARRAY_DUMP array id")?;
                            let _stack = r.u4("OBJECT_ARRAY_DUMP stack serial")?;
                            let n = r.u4("OBJECT_ARRAY_DUMP length")?;
                            let cid = r.id("OBJECT_ARRAY_DUMP array class id")?;
                            let body = r.pos;
                            r.skip(n as u64 * ids, "OBJECT_ARRAY_DUMP elements")?;
                            pend.push(Pending { body, class_raw: cid, len: n });
                            obj_id.push(oid);
                            obj_kind.push(ObjKind::ObjectArray);
                            obj_heap.push(cur_heap);
                        }
                        0x23 | 0xC3 => {
                            let oid = r.id("PRIMITIVE_ARRAY_DUMP array id")?;
                            let _stack = r.u4("PRIMITIVE_ARRAY_DUMP stack serial")?;
                            let n = r.u4("PRIMITIVE_ARRAY_DUMP length")?;
                            let at = r.pos;
                            let t = r.u1("PRIMITIVE_ARRAY_DUMP element type")?;
                            let s = match basic_size(t, id_size) {
                                Some(s) if t != 2 => s,
                                _ => return Err(r.err(at, format!("expected a primitive element type (4-11), found {t}"))),
                            };
                            if st == 0x23 {
                                r.skip(n as u64 * s as u64, "PRIMITIVE_ARRAY_DUMP elements")?;
                            }
                            pend.push(Pending { body: 0, class_raw: 0, len: n });
                            obj_id.push(oid);
                            obj_kind.push(ObjKind::PrimitiveArray(t));
                            obj_heap.push(cur_heap);
                        }
                        _ => {
                            return Err(r.err(
                                sub_at,
                                format!(
                                    "expected a heap dump sub-record tag (roots 0x01-0x08/0x89-0x8E/0x90/0xFF, 0x20-0x23, 0xC3, 0xFE), found 0x{st:02X}"
                                ),
                            ))
                        }
                    }
                }
            }
            _ => {}
        }
        r.pos = body_end;
    }
    if heap_records == 0 {
        return Err(r.err(
            buf.len(),
            "expected a HEAP DUMP (0x0C) or HEAP DUMP SEGMENT (0x1C) record, found the end of the file (not a heap dump, or truncated)",
        ));
    }
    if open_segments {
        return Err(r.err(
            buf.len(),
            "expected a HEAP DUMP END (0x2C) record after the last HEAP DUMP SEGMENT, found the end of the file (truncated dump?)",
        ));
    }

    // Names.
    let string_at = |sid: u64| -> Option<String> {
        strings
            .get(&sid)
            .map(|&(a, b)| String::from_utf8_lossy(&buf[a..b]).into_owned())
    };
    for c in classes.iter_mut() {
        let raw = class_names
            .get(&c.id)
            .and_then(|&nid| string_at(nid))
            .unwrap_or_else(|| format!("class@0x{:x}", c.id));
        c.name = raw.replace('/', ".");
    }
    let mut heap_names: Vec<String> = heap_name_ids
        .iter()
        .map(|&(h, nid)| string_at(nid).unwrap_or_else(|| format!("heap{h}")))
        .collect();
    if heap_names.is_empty() {
        heap_names.push("default".into());
    }

    // Object index.
    let n = obj_id.len();
    let mut index: HashMap<u64, u32> = HashMap::with_capacity(n);
    for (i, &id) in obj_id.iter().enumerate() {
        index.entry(id).or_insert(i as u32);
    }
    // Synthesized primitive array classes.
    let mut prim_class = [NIL; 12];
    for (i, c) in classes.iter().enumerate() {
        let t = match c.name.as_str() {
            "[Z" | "boolean[]" => 4,
            "[C" | "char[]" => 5,
            "[F" | "float[]" => 6,
            "[D" | "double[]" => 7,
            "[B" | "byte[]" => 8,
            "[S" | "short[]" => 9,
            "[I" | "int[]" => 10,
            "[J" | "long[]" => 11,
            _ => continue,
        };
        prim_class[t] = i as u32;
    }
    for &k in &obj_kind {
        if let ObjKind::PrimitiveArray(t) = k {
            if prim_class[t as usize] == NIL {
                prim_class[t as usize] = classes.len() as u32;
                classes.push(DumpClass {
                    id: 0,
                    name: prim_name(t).into(),
                    super_id: 0,
                    dump_instance_size: 0,
                    field_types: Vec::new(),
                    static_bytes: 0,
                    static_refs: Vec::new(),
                    loader_id: 0,
                    obj: NIL,
                });
            }
        }
    }
    // Instance layouts over the superclass chain, computed once per class in O(classes) (a dump
    // can chain thousands of classes, so copying the chain's offsets per class would be quadratic)
    // and rejecting superclass cycles. Instance field bytes hold the class's own fields, then its
    // superclass's, and so on.
    let ref_heap = match size_model {
        SizeModel::HotSpot { compressed: true } | SizeModel::Art => 4,
        SizeModel::HotSpot { compressed: false } => 8,
    };
    let layout = Layouts::build(&classes, &class_index, id_size, ref_heap as u64).map_err(|c| {
        r.err(
            0,
            format!(
                "superclass chain of class id 0x{:x} loops back on itself",
                classes[c as usize].id
            ),
        )
    })?;
    let class_class = classes
        .iter()
        .position(|c| c.name == "java.lang.Class")
        .map(|i| i as u32)
        .unwrap_or(NIL);
    // Sizes are capped at 2 GiB so the heap's own alignment arithmetic cannot overflow on crafted
    // sizes; no heap holds such an object, so loading it fails cleanly.
    let align8 = |x: u64| ((x.min(MAX_OBJECT_BYTES) + 7) & !7) as u32;
    let (obj_header, arr_header) = match size_model {
        SizeModel::HotSpot { compressed: true } => (12u64, 16u64),
        SizeModel::HotSpot { compressed: false } => (16, 20),
        SizeModel::Art => (8, 12),
    };

    // Pass 2: sizes and references.
    let mut obj_class = Vec::with_capacity(n);
    let mut obj_size = Vec::with_capacity(n);
    let mut ref_start = Vec::with_capacity(n + 1);
    let mut refs: Vec<u32> = Vec::new();
    let mut unresolved_refs = 0u64;
    let mut push_ref = |id: u64, refs: &mut Vec<u32>| {
        if id != 0 {
            match index.get(&id) {
                Some(&i) => refs.push(i),
                None => unresolved_refs += 1,
            }
        }
    };
    for i in 0..n {
        ref_start.push(refs.len() as u32);
        let p = &pend[i];
        match obj_kind[i] {
            ObjKind::Instance => {
                let ci = class_index.get(&p.class_raw).copied().unwrap_or(NIL);
                obj_class.push(ci);
                let mut rr = Reader {
                    buf,
                    pos: p.body,
                    end: p.body + p.len as usize,
                    file,
                    id_size,
                };
                if ci == NIL {
                    obj_size.push(align8(obj_header + p.len as u64));
                    continue;
                }
                let heap_bytes = layout.heap_bytes[ci as usize];
                let size = match size_model {
                    SizeModel::Art => {
                        let s = classes[ci as usize].dump_instance_size as u64;
                        if s == 0 {
                            align8(obj_header.saturating_add(heap_bytes))
                        } else {
                            align8(s)
                        }
                    }
                    _ => align8(obj_header.saturating_add(heap_bytes)),
                };
                obj_size.push(size);
                // Walk the chain's classes that declare fields: each adds at least one byte, so
                // the walk stops within the instance's length (a reference past it is an error).
                let mut cur = layout.next_declaring[ci as usize];
                let mut base = 0u64;
                while cur != NIL {
                    if base > p.len as u64 {
                        if layout.has_refs[cur as usize] {
                            rr.pos = rr.end;
                            rr.id("instance reference field")?;
                        }
                        break;
                    }
                    let c = cur as usize;
                    for &o in &layout.own_refs[layout.own_start[c] as usize..layout.own_start[c + 1] as usize]
                    {
                        rr.pos = p.body + (base + o as u64) as usize;
                        let id = rr.id("instance reference field")?;
                        push_ref(id, &mut refs);
                    }
                    base += layout.own_bytes[c] as u64;
                    cur = layout.next_after[c];
                }
            }
            ObjKind::ObjectArray => {
                obj_class.push(class_index.get(&p.class_raw).copied().unwrap_or(NIL));
                obj_size.push(align8(arr_header + p.len as u64 * ref_heap as u64));
                let mut rr = Reader {
                    buf,
                    pos: p.body,
                    end: buf.len(),
                    file,
                    id_size,
                };
                for _ in 0..p.len {
                    let id = rr.id("array element")?;
                    push_ref(id, &mut refs);
                }
            }
            ObjKind::PrimitiveArray(t) => {
                obj_class.push(prim_class[t as usize]);
                let es = basic_size(t, id_size).unwrap_or(1) as u64;
                let hdr = if es == 8 {
                    (arr_header + 7) & !7
                } else {
                    arr_header
                };
                obj_size.push(align8(hdr + p.len as u64 * es));
            }
            ObjKind::Class => {
                let ci = class_index.get(&p.class_raw).copied().unwrap_or(NIL);
                obj_class.push(class_class);
                let (statics, sup, loader) = match ci {
                    NIL => (0, 0, 0),
                    c => {
                        let c = &classes[c as usize];
                        (c.static_bytes as u64, c.super_id, c.loader_id)
                    }
                };
                let base = match size_model {
                    SizeModel::Art => 128,
                    _ if class_class != NIL => obj_header + layout.heap_bytes[class_class as usize] + 36,
                    _ => 96,
                };
                obj_size.push(align8(base + statics));
                if ci != NIL {
                    for k in 0..classes[ci as usize].static_refs.len() {
                        push_ref(classes[ci as usize].static_refs[k], &mut refs);
                    }
                }
                push_ref(sup, &mut refs);
                push_ref(loader, &mut refs);
            }
        }
    }
    ref_start.push(refs.len() as u32);
    // A blueprint indexes its logical heap in 32 bits of 8-byte units; crafted sizes can claim more.
    let total: u64 = obj_size
        .iter()
        .map(|&s| crate::heap::Heap::aligned(s) as u64)
        .sum();
    if total > crate::blueprint::MAX_TOTAL_BYTES {
        return Err(r.err(
            0,
            format!(
                "objects total {total} bytes; at most {} supported",
                crate::blueprint::MAX_TOTAL_BYTES
            ),
        ));
    }
    let mut roots = Vec::with_capacity(raw_roots.len());
    let mut unresolved_roots = 0;
    for (id, k) in raw_roots {
        match index.get(&id) {
            Some(&i) => roots.push((i, k)),
            None => unresolved_roots += 1,
        }
    }
    Ok(Dump {
        file: file.to_string(),
        format,
        id_size,
        timestamp_ms,
        size_model,
        classes,
        heap_names,
        obj_id,
        obj_class,
        obj_kind,
        obj_size,
        obj_heap,
        ref_start,
        refs,
        roots,
        unresolved_roots,
        unresolved_refs,
    })
}

/// Per-class instance layouts over the superclass chain, each computed once.
struct Layouts {
    /// Offsets of the class's own reference fields within its own field bytes (arena).
    own_refs: Vec<u32>,
    /// `own_refs[own_start[c]..own_start[c + 1]]` belongs to class `c`.
    own_start: Vec<u32>,
    /// Bytes of the class's own fields in the dump.
    own_bytes: Vec<u32>,
    /// In-heap bytes of the fields over the whole chain (saturating).
    heap_bytes: Vec<u64>,
    /// The first class of the chain starting at `c` (inclusive) that declares fields, or `NIL`.
    next_declaring: Vec<u32>,
    /// The same, strictly above `c`.
    next_after: Vec<u32>,
    /// Whether the chain starting at `c` declares any reference field.
    has_refs: Vec<bool>,
}

impl Layouts {
    /// Returns `Err(class)` for a class whose superclass chain is a cycle.
    fn build(
        classes: &[DumpClass],
        class_index: &HashMap<u64, u32>,
        id_size: u32,
        ref_heap: u64,
    ) -> Result<Layouts, u32> {
        let n = classes.len();
        let mut own_refs = Vec::new();
        let mut own_start = Vec::with_capacity(n + 1);
        let mut own_bytes = Vec::with_capacity(n);
        let mut own_heap = Vec::with_capacity(n);
        for c in classes {
            own_start.push(own_refs.len() as u32);
            let (mut dump, mut heap) = (0u32, 0u64);
            for &t in &c.field_types {
                let s = basic_size(t, id_size).unwrap_or(1);
                if t == 2 {
                    own_refs.push(dump);
                    heap += ref_heap;
                } else {
                    heap += s as u64;
                }
                // At most 65535 fields of at most 8 bytes: no overflow.
                dump += s;
            }
            own_bytes.push(dump);
            own_heap.push(heap);
        }
        own_start.push(own_refs.len() as u32);
        let sup = |c: usize| -> u32 {
            match classes[c].super_id {
                0 => NIL,
                s => class_index.get(&s).copied().unwrap_or(NIL),
            }
        };
        let mut l = Layouts {
            own_refs,
            own_start,
            own_bytes,
            heap_bytes: vec![0; n],
            next_declaring: vec![NIL; n],
            next_after: vec![NIL; n],
            has_refs: vec![false; n],
        };
        // 0 = not visited, 1 = on the current path, 2 = done.
        let mut state = vec![0u8; n];
        let mut path = Vec::new();
        for c in 0..n {
            let mut cur = c as u32;
            while cur != NIL && state[cur as usize] == 0 {
                state[cur as usize] = 1;
                path.push(cur);
                cur = sup(cur as usize);
            }
            if cur != NIL && state[cur as usize] == 1 {
                return Err(cur);
            }
            // `cur` is NIL or done: fill the path from the top down.
            while let Some(k) = path.pop() {
                let k = k as usize;
                let (above_heap, above_next, above_refs) = match cur {
                    NIL => (0, NIL, false),
                    s => {
                        let s = s as usize;
                        (l.heap_bytes[s], l.next_declaring[s], l.has_refs[s])
                    }
                };
                let declares = l.own_bytes[k] > 0;
                l.heap_bytes[k] = own_heap[k].saturating_add(above_heap);
                l.next_after[k] = above_next;
                l.next_declaring[k] = if declares { k as u32 } else { above_next };
                l.has_refs[k] = above_refs || l.own_start[k] < l.own_start[k + 1];
                state[k] = 2;
                cur = k as u32;
            }
        }
        Ok(l)
    }
}
