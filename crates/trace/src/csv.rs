//! A page-access trace as plain CSV: a header line `time,obj_id,size`, then one request per
//! line (`time` in whole seconds, `obj_id` a u64, `size` in bytes). The same columns libCacheSim's
//! CSV reader takes with `time-col=1, obj-id-col=2, obj-size-col=3, has-header=true`.

use crate::{Request, TraceError, PAGE_SIZE};
use std::io::{BufRead, Write};

pub const HEADER: &str = "time,obj_id,size";

/// Write the page stream `(time_s, obj_id)` as CSV (size 4096).
pub fn write_pages(time_s: &[u32], obj_ids: &[u64], w: impl Write) -> std::io::Result<()> {
    assert_eq!(time_s.len(), obj_ids.len(), "one time per request");
    let mut w = std::io::BufWriter::with_capacity(1 << 20, w);
    writeln!(w, "{HEADER}")?;
    for (t, id) in time_s.iter().zip(obj_ids) {
        writeln!(w, "{t},{id},{PAGE_SIZE}")?;
    }
    w.flush()
}

/// Read a CSV trace, calling `f` per request; returns the number of requests. The header line
/// is optional; empty lines are skipped.
pub fn read(mut r: impl BufRead, mut f: impl FnMut(Request)) -> Result<u64, TraceError> {
    let mut line = Vec::new();
    let mut offset: u64 = 0;
    let mut n: u64 = 0;
    let mut first = true;
    loop {
        line.clear();
        let got = r.read_until(b'\n', &mut line).map_err(|e| TraceError::Io {
            path: String::new(),
            source: e,
        })?;
        if got == 0 {
            return Ok(n);
        }
        let start = offset;
        offset += got as u64;
        let text = match std::str::from_utf8(&line) {
            Ok(t) => t.trim_end_matches(['\n', '\r']),
            Err(e) => {
                return Err(TraceError::malformed(
                    "CSV trace",
                    start + e.valid_up_to() as u64,
                    "not UTF-8 text",
                ))
            }
        };
        if text.trim().is_empty() {
            continue;
        }
        if first {
            first = false;
            if text.trim() == HEADER {
                continue;
            }
        }
        let mut fields = text.split(',');
        let mut col = 0u64;
        let mut field = |name: &str| -> Result<u64, TraceError> {
            let at = start + col;
            let s = fields.next().ok_or_else(|| {
                TraceError::malformed(
                    "CSV trace line",
                    at,
                    format!("missing field `{name}`; expected {HEADER}"),
                )
            })?;
            col += s.len() as u64 + 1;
            s.trim().parse::<u64>().map_err(|_| {
                TraceError::malformed(
                    "CSV trace line",
                    at,
                    format!("field `{name}` is {s:?}, expected an unsigned integer"),
                )
            })
        };
        let time = field("time")?;
        let obj_id = field("obj_id")?;
        let size = field("size")?;
        if fields.next().is_some() {
            return Err(TraceError::malformed(
                "CSV trace line",
                start + col,
                format!("more than three fields; expected {HEADER}"),
            ));
        }
        let (Ok(time_s), Ok(obj_size)) = (u32::try_from(time), u32::try_from(size)) else {
            return Err(TraceError::malformed(
                "CSV trace line",
                start,
                "time or size exceeds 32 bits",
            ));
        };
        f(Request {
            time_s,
            obj_id,
            obj_size,
            next: None,
        });
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let mut out = Vec::new();
        write_pages(&[0, 2], &[9, 10], &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out.clone()).unwrap(),
            "time,obj_id,size\n0,9,4096\n2,10,4096\n"
        );
        let mut ids = Vec::new();
        assert_eq!(read(&out[..], |r| ids.push(r.obj_id)).unwrap(), 2);
        assert_eq!(ids, vec![9, 10]);
        let e = read(&b"time,obj_id,size\n1,x,4096\n"[..], |_| {})
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "CSV trace line at byte offset 19: field `obj_id` is \"x\", expected an unsigned integer"
        );
    }
}
