//! The page-content corpus file format (`.hlc`), version 1.
//!
//! A corpus holds 4 KiB pages captured from real processes (`hotlaunch capture`) with the origin of
//! each page. All integers are little-endian.
//!
//! ```text
//! offset  size              field
//! 0       8                 magic  "HLCORPUS"
//! 8       4                 version (u32) = 1
//! 12      4                 flags (u32) = 0 (reserved; readers reject other values)
//! 16      8                 page_count (u64)
//! 24      4                 string_count (u32)
//! 28      4                 reserved (u32) = 0
//! 32      …                 string table: string_count × { len: u32, bytes: [u8; len] (UTF-8) }
//! …       page_count × 24   page origins: { pid: u32, process: u32 (string index),
//!                             mapping: u32 (string index), reserved: u32 = 0, vaddr: u64 }
//! …       page_count × 4096 page bytes, in the same order
//! end-8   8                 xxh3-64 of every preceding byte
//! ```
//!
//! `process` is the process name (`/proc/<pid>/comm`), `mapping` the mapping's name from
//! `/proc/<pid>/maps` (`[heap]`, `[anon:dalvik-main space]`, a file path, or "" for anonymous).
//! The reader ([`Corpus::from_bytes`]) validates every field and length before use and returns a
//! [`CorpusError`] naming the place; it never panics on any input (property-tested).

use crate::{checksum, ContentId, ContentStore, PAGE_SIZE};
use std::collections::HashMap;
use std::path::Path;

pub const MAGIC: &[u8; 8] = b"HLCORPUS";
pub const VERSION: u32 = 1;
const HEADER: usize = 32;
const ORIGIN: usize = 24;

/// Where a page came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageOrigin {
    pub pid: u32,
    /// Index into [`Corpus::strings`] of the process name.
    pub process: u32,
    /// Index into [`Corpus::strings`] of the mapping name.
    pub mapping: u32,
    pub vaddr: u64,
}

/// A corpus in memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Corpus {
    pub strings: Vec<String>,
    pub origins: Vec<PageOrigin>,
    /// `origins.len() × 4096` bytes.
    pub data: Vec<u8>,
}

/// A corpus file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("not a hotlaunch corpus (bad magic; expected \"HLCORPUS\")")]
    BadMagic,
    #[error("unsupported corpus version {0} (this build reads version {VERSION})")]
    BadVersion(u32),
    #[error("truncated corpus: {what} needs {need} bytes at offset {offset}, file has {len}")]
    Truncated {
        what: &'static str,
        offset: u64,
        need: u64,
        len: u64,
    },
    #[error("corrupt corpus: {0}")]
    Corrupt(String),
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: u64, what: &'static str) -> Result<&'a [u8], CorpusError> {
        let avail = (self.b.len() - self.pos) as u64;
        if n > avail {
            return Err(CorpusError::Truncated {
                what,
                offset: self.pos as u64,
                need: n,
                len: self.b.len() as u64,
            });
        }
        let s = &self.b[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, CorpusError> {
        Ok(u32::from_le_bytes(
            self.take(4, what)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self, what: &'static str) -> Result<u64, CorpusError> {
        Ok(u64::from_le_bytes(
            self.take(8, what)?.try_into().expect("8 bytes"),
        ))
    }
}

impl Corpus {
    pub fn len(&self) -> usize {
        self.origins.len()
    }

    pub fn is_empty(&self) -> bool {
        self.origins.is_empty()
    }

    pub fn page(&self, i: usize) -> &[u8] {
        &self.data[i * PAGE_SIZE..(i + 1) * PAGE_SIZE]
    }

    /// Intern `s` in the string table.
    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(i) = self.strings.iter().position(|x| x == s) {
            return i as u32;
        }
        self.strings.push(s.to_string());
        (self.strings.len() - 1) as u32
    }

    /// Append a page (4096 bytes) with its origin.
    pub fn push(&mut self, pid: u32, process: &str, mapping: &str, vaddr: u64, page: &[u8]) {
        assert_eq!(page.len(), PAGE_SIZE, "corpus pages are 4 KiB");
        let process = self.intern(process);
        let mapping = self.intern(mapping);
        self.origins.push(PageOrigin {
            pid,
            process,
            mapping,
            vaddr,
        });
        self.data.extend_from_slice(page);
    }

    /// Serialise (format above).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(HEADER + self.data.len() + self.origins.len() * ORIGIN + 64);
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&VERSION.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&(self.origins.len() as u64).to_le_bytes());
        b.extend_from_slice(&(self.strings.len() as u32).to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        for s in &self.strings {
            b.extend_from_slice(&(s.len() as u32).to_le_bytes());
            b.extend_from_slice(s.as_bytes());
        }
        for o in &self.origins {
            for v in [o.pid, o.process, o.mapping, 0] {
                b.extend_from_slice(&v.to_le_bytes());
            }
            b.extend_from_slice(&o.vaddr.to_le_bytes());
        }
        b.extend_from_slice(&self.data);
        let sum = checksum(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        b
    }

    /// Parse a corpus file's bytes, validating everything; never panics.
    pub fn from_bytes(b: &[u8]) -> Result<Self, CorpusError> {
        let mut r = Reader { b, pos: 0 };
        if r.take(8, "magic")? != MAGIC {
            return Err(CorpusError::BadMagic);
        }
        let version = r.u32("version")?;
        if version != VERSION {
            return Err(CorpusError::BadVersion(version));
        }
        let flags = r.u32("flags")?;
        if flags != 0 {
            return Err(CorpusError::Corrupt(format!(
                "flags {flags:#x} at offset 12 (expected 0)"
            )));
        }
        let page_count = r.u64("page count")?;
        let string_count = r.u32("string count")?;
        let reserved = r.u32("reserved")?;
        if reserved != 0 {
            return Err(CorpusError::Corrupt(format!(
                "reserved field {reserved:#x} at offset 28 (expected 0)"
            )));
        }
        // Bound the counts by the file size before allocating anything.
        let rest = (b.len() - r.pos) as u64;
        if string_count as u64 > rest / 4 {
            return Err(CorpusError::Corrupt(format!(
                "string count {string_count} does not fit in a {}-byte file",
                b.len()
            )));
        }
        let per_page = (ORIGIN + PAGE_SIZE) as u64;
        if page_count > rest / per_page {
            return Err(CorpusError::Truncated {
                what: "page origins and data",
                offset: r.pos as u64,
                need: page_count.saturating_mul(per_page).saturating_add(8),
                len: b.len() as u64,
            });
        }
        let mut strings = Vec::with_capacity(string_count as usize);
        for i in 0..string_count {
            let len = r.u32("string length")?;
            let at = r.pos;
            let s = r.take(len as u64, "string bytes")?;
            let s = std::str::from_utf8(s)
                .map_err(|_| CorpusError::Corrupt(format!("string {i} at offset {at} is not UTF-8")))?;
            strings.push(s.to_string());
        }
        let mut origins = Vec::with_capacity(page_count as usize);
        for i in 0..page_count {
            let at = r.pos;
            let pid = r.u32("page origin")?;
            let process = r.u32("page origin")?;
            let mapping = r.u32("page origin")?;
            let reserved = r.u32("page origin")?;
            let vaddr = r.u64("page origin")?;
            if process as usize >= strings.len() || mapping as usize >= strings.len() || reserved != 0 {
                return Err(CorpusError::Corrupt(format!(
                    "page {i} origin at offset {at}: string index out of range or reserved field set"
                )));
            }
            origins.push(PageOrigin {
                pid,
                process,
                mapping,
                vaddr,
            });
        }
        let data = r.take(page_count * PAGE_SIZE as u64, "page data")?.to_vec();
        let body_end = r.pos;
        let sum = r.u64("trailing checksum")?;
        if r.pos != b.len() {
            return Err(CorpusError::Corrupt(format!(
                "{} unexpected bytes after the checksum at offset {}",
                b.len() - r.pos,
                r.pos
            )));
        }
        if checksum(&b[..body_end]) != sum {
            return Err(CorpusError::Corrupt("checksum mismatch (file damaged)".into()));
        }
        Ok(Corpus {
            strings,
            origins,
            data,
        })
    }

    pub fn read(path: &Path) -> Result<Self, CorpusError> {
        let b = engine::fsio::read_capped(path, engine::fsio::FileKind::Corpus).map_err(|source| {
            CorpusError::Io {
                path: path.display().to_string(),
                source,
            }
        })?;
        Self::from_bytes(&b)
    }

    pub fn write(&self, path: &Path) -> Result<(), CorpusError> {
        std::fs::write(path, self.to_bytes()).map_err(|source| CorpusError::Io {
            path: path.display().to_string(),
            source,
        })
    }

    /// Add the corpus pages to `store`; returns the content id of every corpus page, in order. With
    /// `dedup`, identical pages (same bytes) share one content id.
    pub fn load_into(&self, store: &mut ContentStore, dedup: bool) -> Vec<ContentId> {
        let mut seen: HashMap<u64, Vec<ContentId>> = HashMap::new();
        let mut ids = Vec::with_capacity(self.len());
        for i in 0..self.len() {
            let p = self.page(i);
            if dedup {
                let h = checksum(p);
                let cands = seen.entry(h).or_default();
                if let Some(&id) = cands.iter().find(|&&id| store.page(id) == p) {
                    ids.push(id);
                    continue;
                }
                let id = store.push_page(p);
                cands.push(id);
                ids.push(id);
            } else {
                ids.push(store.push_page(p));
            }
        }
        ids
    }
}
