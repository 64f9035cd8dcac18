//! libCacheSim's `oracleGeneral` binary trace format.
//!
//! Each request is one 24-byte little-endian record, no file header:
//!
//! ```text
//! offset  size  field
//! 0       4     clock_time         u32  time of the request (seconds)
//! 4       8     obj_id             u64
//! 12      4     obj_size           u32  bytes (4096 for a page)
//! 16      8     next_access_vtime  i64  index of the next request to the same obj_id, -1 if none
//! ```
//!
//! Source: libCacheSim (github.com/1a1a11a/libCacheSim, commit aa0fc409),
//! `libCacheSim/traceReader/customizedReader/oracle/oracleGeneralBin.h`: `oracleGeneralBin_setup`
//! sets `item_size = 24` and `n_total_req = file_size / item_size`; `oracleGeneralBin_read_one_req`
//! reads `clock_time` at 0, `obj_id` at 4, `obj_size` at 12 and `next_access_vtime` at 16 and maps
//! both -1 and `INT64_MAX` to "never". The vtime is the request's absolute index: the generator
//! (`bin/dep/oracleTraceGen/oracleReuseTraceGen.h`) writes the trace backwards and turns each
//! `next_access_vtime_` into `n_total_req - 1 - vtime`.
//!
//! The reader here is stricter than libCacheSim's (which silently drops a trailing partial
//! record): a length that is not a multiple of 24 is an error naming the offset of the partial
//! record, and so is a next-access index that does not point after its own request.

use crate::{Request, TraceError, PAGE_SIZE};
use std::collections::HashMap;
use std::io::{Read, Write};

/// Bytes per record.
pub const RECORD: usize = 24;

/// One record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub clock_time: u32,
    pub obj_id: u64,
    pub obj_size: u32,
    pub next_access_vtime: i64,
}

impl Record {
    pub fn to_bytes(&self) -> [u8; RECORD] {
        let mut b = [0u8; RECORD];
        b[0..4].copy_from_slice(&self.clock_time.to_le_bytes());
        b[4..12].copy_from_slice(&self.obj_id.to_le_bytes());
        b[12..16].copy_from_slice(&self.obj_size.to_le_bytes());
        b[16..24].copy_from_slice(&self.next_access_vtime.to_le_bytes());
        b
    }

    pub fn from_bytes(b: &[u8; RECORD]) -> Self {
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let u64_at = |o: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[o..o + 8]);
            u64::from_le_bytes(x)
        };
        Record {
            clock_time: u32_at(0),
            obj_id: u64_at(4),
            obj_size: u32_at(12),
            next_access_vtime: u64_at(16) as i64,
        }
    }
}

/// The next-access index of every request of `obj_ids` (-1 for the last access to an object):
/// one backward pass with a map from object to its latest-seen index (8 bytes per request for
/// the result, about 16–32 bytes per distinct object for the map).
pub fn next_access(obj_ids: &[u64]) -> Vec<i64> {
    let mut next = vec![-1i64; obj_ids.len()];
    let mut seen: HashMap<u64, i64> = HashMap::new();
    for i in (0..obj_ids.len()).rev() {
        if let Some(n) = seen.insert(obj_ids[i], i as i64) {
            next[i] = n;
        }
    }
    next
}

/// Write the page stream `(time_s, obj_id)` as oracleGeneral records of 4096-byte objects,
/// with next-access indices filled by [`next_access`].
pub fn write_pages(time_s: &[u32], obj_ids: &[u64], w: impl Write) -> std::io::Result<()> {
    assert_eq!(time_s.len(), obj_ids.len(), "one time per request");
    let next = next_access(obj_ids);
    let mut w = std::io::BufWriter::with_capacity(1 << 20, w);
    for i in 0..obj_ids.len() {
        let r = Record {
            clock_time: time_s[i],
            obj_id: obj_ids[i],
            obj_size: PAGE_SIZE,
            next_access_vtime: next[i],
        };
        w.write_all(&r.to_bytes())?;
    }
    w.flush()
}

/// Read an oracleGeneral stream, calling `f` per request; returns the number of requests.
pub fn read(mut r: impl Read, mut f: impl FnMut(Request)) -> Result<u64, TraceError> {
    // Larger than `for_each_request`'s 1 MiB `BufReader`, whose reads then bypass its buffer
    // (one copy from the file instead of two).
    let mut buf = vec![0u8; RECORD * (1 << 16)];
    let mut have = 0usize; // bytes in `buf`
    let mut index: u64 = 0;
    loop {
        let n = match r.read(&mut buf[have..]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(TraceError::Io {
                    path: String::new(),
                    source: e,
                })
            }
        };
        have += n;
        let whole = have / RECORD * RECORD;
        for chunk in buf[..whole].chunks_exact(RECORD) {
            let rec = Record::from_bytes(chunk.try_into().expect("chunks of RECORD bytes"));
            let nx = rec.next_access_vtime;
            if nx != -1 && nx != i64::MAX && (nx < 0 || nx as u64 <= index) {
                return Err(TraceError::malformed(
                    "oracleGeneral record",
                    index * RECORD as u64 + 16,
                    format!(
                        "next_access_vtime {nx} of request {index} is neither -1 nor a later request index"
                    ),
                ));
            }
            f(Request {
                time_s: rec.clock_time,
                obj_id: rec.obj_id,
                obj_size: rec.obj_size,
                next: (nx != -1 && nx != i64::MAX).then_some(nx as u64),
            });
            index += 1;
        }
        buf.copy_within(whole..have, 0);
        have -= whole;
        if n == 0 {
            if have != 0 {
                return Err(TraceError::malformed(
                    "truncated oracleGeneral record",
                    index * RECORD as u64,
                    format!("{have} of {RECORD} bytes"),
                ));
            }
            return Ok(index);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_libcachesim() {
        let r = Record {
            clock_time: 0x0102_0304,
            obj_id: 0x1112_1314_1516_1718,
            obj_size: 4096,
            next_access_vtime: -1,
        };
        let b = r.to_bytes();
        assert_eq!(&b[0..4], &[4, 3, 2, 1]);
        assert_eq!(&b[4..12], &[0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11]);
        assert_eq!(&b[12..16], &4096u32.to_le_bytes());
        assert_eq!(&b[16..24], &[0xFF; 8]);
        assert_eq!(Record::from_bytes(&b), r);
    }

    #[test]
    fn next_access_points_at_the_next_request_of_the_same_object() {
        assert_eq!(next_access(&[7, 8, 7, 9, 8, 7]), vec![2, 4, 5, -1, -1, -1]);
    }

    #[test]
    fn round_trip_and_errors_name_the_offset() {
        let mut out = Vec::new();
        write_pages(&[0, 0, 1], &[5, 6, 5], &mut out).unwrap();
        assert_eq!(out.len(), 72);
        let mut got = Vec::new();
        assert_eq!(read(&out[..], |r| got.push(r.obj_id)).unwrap(), 3);
        assert_eq!(got, vec![5, 6, 5]);
        let e = read(&out[..60], |_| {}).unwrap_err().to_string();
        assert_eq!(
            e,
            "truncated oracleGeneral record at byte offset 48: 12 of 24 bytes"
        );
        let mut bad = out.clone();
        bad[16..24].copy_from_slice(&0i64.to_le_bytes());
        let e = read(&bad[..], |_| {}).unwrap_err().to_string();
        assert!(e.contains("byte offset 16"), "{e}");
    }
}
