//! Ariadne's published swap traces (Liang et al., HPCA'25; artifact github.com/CMU-SAFARI/Ariadne).
//!
//! Two files per collection, written by the artifact's kernel (`gs_google/mm/swap_tracing.c`):
//!
//! - **swap-out** (`swapout_trace.txt`, binary): one record per page written to swap, a 50-byte
//!   text header (`SWAP_TRACE_DATA_OFS = 50`) followed by the page's 4096 bytes. The kernel
//!   zeroes the record and `sprintf`s `"TEST^^^#%lu,%lu,%llu#^^^\n"` with `appid, pfn, sector`
//!   into the header, so the header is that text padded with NUL bytes.
//! - **swap-in** (`swapin_trace.txt`, text): one line `"%lu,%llu\n"` (`appid, sector`) per
//!   swap-in; the artifact's `trace_swapin_parser.py` keeps the last space-separated token of the
//!   first field, so a `[timestamp] ` prefix (a variant the kernel source has commented out) is
//!   accepted here too.
//!
//! The artifact's parsers (`AppTrace/*/scripts/trace_swapout_parser.py`,
//! `trace_swapin_parser.py`) skip records they cannot parse; these readers instead stop with an
//! error naming the byte offset of the bad record (a trace that does not parse is more likely
//! the wrong file than noise worth dropping silently). Empty swap-in lines are skipped as there.

use crate::TraceError;
use std::io::{BufRead, Read};

/// Header bytes before a swap-out record's page data (`SWAP_TRACE_DATA_OFS`).
pub const HEADER: usize = 50;
/// Page bytes per swap-out record.
pub const PAGE: usize = 4096;
/// Bytes per swap-out record.
pub const RECORD: usize = HEADER + PAGE;
/// The header's opening marker.
pub const MARK_OPEN: &[u8] = b"TEST^^^#";
const MARK_CLOSE: &[u8] = b"#^^^";

/// One swap-out record's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwapOut {
    pub app: u64,
    pub pfn: u64,
    pub sector: u64,
}

/// One swap-in record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwapIn {
    pub app: u64,
    pub sector: u64,
}

/// The bytes of a swap-out header for `r` (as the artifact's kernel writes it).
pub fn swapout_header(r: &SwapOut) -> [u8; HEADER] {
    let text = format!("TEST^^^#{},{},{}#^^^\n", r.app, r.pfn, r.sector);
    let mut h = [0u8; HEADER];
    let n = text.len().min(HEADER);
    h[..n].copy_from_slice(&text.as_bytes()[..n]);
    h
}

fn parse_header(h: &[u8], offset: u64) -> Result<SwapOut, TraceError> {
    let bad = |detail: String| TraceError::malformed("Ariadne swap-out header", offset, detail);
    let end = h.iter().position(|&b| b == 0).unwrap_or(h.len());
    let text = std::str::from_utf8(&h[..end]).map_err(|_| bad("not text".into()))?;
    let text = text.trim_end();
    let inner = text
        .strip_prefix(std::str::from_utf8(MARK_OPEN).expect("ascii"))
        .and_then(|t| t.strip_suffix(std::str::from_utf8(MARK_CLOSE).expect("ascii")))
        .ok_or_else(|| bad(format!("{text:?} is not TEST^^^#app,pfn,sector#^^^")))?;
    let f: Vec<&str> = inner.split(',').collect();
    let num = |s: &str| s.parse::<u64>().ok();
    match f.as_slice() {
        [a, p, s] => match (num(a), num(p), num(s)) {
            (Some(app), Some(pfn), Some(sector)) => Ok(SwapOut { app, pfn, sector }),
            _ => Err(bad(format!(
                "{inner:?}: app, pfn and sector must be unsigned integers"
            ))),
        },
        _ => Err(bad(format!("{inner:?}: expected three fields app,pfn,sector"))),
    }
}

/// Read a swap-out file, calling `f(record, page bytes)` per record; returns the record count.
pub fn read_swapout(mut r: impl Read, mut f: impl FnMut(SwapOut, &[u8])) -> Result<u64, TraceError> {
    let mut rec = vec![0u8; RECORD];
    let mut n: u64 = 0;
    loop {
        let offset = n * RECORD as u64;
        let mut have = 0;
        while have < RECORD {
            match r.read(&mut rec[have..]) {
                Ok(0) => break,
                Ok(k) => have += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(TraceError::Io {
                        path: String::new(),
                        source: e,
                    })
                }
            }
        }
        if have == 0 {
            return Ok(n);
        }
        if have < HEADER {
            return Err(TraceError::malformed(
                "truncated Ariadne swap-out header",
                offset,
                format!("{have} of {HEADER} bytes"),
            ));
        }
        let head = parse_header(&rec[..HEADER], offset)?;
        if have < RECORD {
            return Err(TraceError::malformed(
                "truncated Ariadne swap-out page",
                offset + HEADER as u64,
                format!("{} of {PAGE} bytes", have - HEADER),
            ));
        }
        f(head, &rec[HEADER..]);
        n += 1;
    }
}

/// Read a swap-in file, calling `f` per record; returns the record count.
pub fn read_swapin(mut r: impl BufRead, mut f: impl FnMut(SwapIn)) -> Result<u64, TraceError> {
    let mut line = Vec::new();
    let mut offset: u64 = 0;
    let mut n: u64 = 0;
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
        let bad = |detail: String| TraceError::malformed("Ariadne swap-in line", start, detail);
        let text = std::str::from_utf8(&line).map_err(|_| bad("not UTF-8 text".into()))?;
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let f2: Vec<&str> = text.split(',').collect();
        let [a, s] = f2.as_slice() else {
            return Err(bad(format!("{text:?}: expected two fields app,sector")));
        };
        let a = a.split(' ').next_back().unwrap_or("");
        match (a.trim().parse::<u64>(), s.trim().parse::<u64>()) {
            (Ok(app), Ok(sector)) => f(SwapIn { app, sector }),
            _ => return Err(bad(format!("{text:?}: app and sector must be unsigned integers"))),
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swapout_records_parse_and_truncation_names_the_offset() {
        let mut file = Vec::new();
        for (i, fill) in [(0u64, 0xAAu8), (1, 0x55)] {
            file.extend_from_slice(&swapout_header(&SwapOut {
                app: 10123,
                pfn: 777 + i,
                sector: 8 * i,
            }));
            file.extend(std::iter::repeat_n(fill, PAGE));
        }
        assert!(file.starts_with(b"TEST^^^#10123,777,0#^^^\n\0"));
        let mut got = Vec::new();
        let n = read_swapout(&file[..], |h, page| got.push((h, page[0]))).unwrap();
        assert_eq!(n, 2);
        assert_eq!(
            got[1],
            (
                SwapOut {
                    app: 10123,
                    pfn: 778,
                    sector: 8
                },
                0x55
            )
        );
        let e = read_swapout(&file[..RECORD + 100], |_, _| {})
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "truncated Ariadne swap-out page at byte offset 4196: 50 of 4096 bytes"
        );
        let mut bad = file.clone();
        bad[RECORD + 8] = b'x';
        let e = read_swapout(&bad[..], |_, _| {}).unwrap_err().to_string();
        assert!(
            e.starts_with("Ariadne swap-out header at byte offset 4146"),
            "{e}"
        );
    }

    #[test]
    fn swapin_lines_parse_with_an_optional_prefix() {
        let text = b"10123,8\n\n[123] 10124,16\n";
        let mut got = Vec::new();
        assert_eq!(read_swapin(&text[..], |r| got.push(r)).unwrap(), 2);
        assert_eq!(
            got[1],
            SwapIn {
                app: 10124,
                sector: 16
            }
        );
        let e = read_swapin(&b"1,2\n1;2\n"[..], |_| {}).unwrap_err().to_string();
        assert_eq!(
            e,
            "Ariadne swap-in line at byte offset 4: \"1;2\": expected two fields app,sector"
        );
    }
}
