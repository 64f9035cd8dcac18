//! Page traces: `run --page-trace` export read back by `replay` (same request count, both
//! formats), reader errors as one line with the byte offset, and `import-ariadne` on a small
//! synthetic trace in the artifact's format.

use std::path::{Path, PathBuf};

mod cmdline;
use cmdline::hotlaunch;

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    cmdline::fresh_dir("traces", name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn replay_json(trace: &Path, format: &str, memory: &str) -> serde_json::Value {
    let (code, out, err) = hotlaunch(&[
        "replay",
        s(trace),
        "--memory",
        memory,
        "--format",
        format,
        "--swap",
        "flash",
        "--json",
    ]);
    assert_eq!(code, 0, "replay failed: {err}");
    serde_json::from_str(&out).expect("replay --json prints JSON")
}

#[test]
fn exported_trace_replays_with_the_same_request_count() {
    let d = dir("export");
    // One repetition of Fleet Fig. 2's protocol: a short run.
    let sc = workload::scenario::builtin_toml("fleet-fig2-twitter")
        .unwrap()
        .replacen("repeat = 20", "repeat = 1", 1);
    let sc_path = d.join("short.toml");
    std::fs::write(&sc_path, sc).unwrap();
    for format in ["oracle", "csv"] {
        let trace = d.join(format!("t.{format}"));
        let (code, out, err) = hotlaunch(&[
            "run",
            s(&sc_path),
            "--page-trace",
            s(&trace),
            "--page-trace-format",
            format,
        ]);
        assert_eq!(code, 0, "run failed: {err}");
        let line = out.lines().find(|l| l.starts_with("wrote ")).expect("wrote line");
        let n: u64 = line
            .split('(')
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(n > 10_000, "a run touches pages: {line}");
        if format == "oracle" {
            assert_eq!(std::fs::metadata(&trace).unwrap().len(), n * 24);
        }
        let j = replay_json(&trace, format, "256");
        assert_eq!(j["requests"].as_u64(), Some(n), "{format}");
        let unique = j["unique_objects"].as_u64().unwrap();
        assert!(unique > 1000 && unique < n, "{unique}");
        // Every object's first request is a miss: at least `unique` misses.
        assert!(j["misses"].as_u64().unwrap() >= unique);
    }
}

#[test]
fn replay_misses_more_with_less_memory() {
    // A cyclic scan over 6,000 pages (23 MiB): at 64 MB it fits, at 12 MB LRU-like reclaim
    // misses on nearly every request after the first pass.
    let d = dir("cyclic");
    let ids: Vec<u64> = (0..60_000u64).map(|i| i % 6000).collect();
    let path = d.join("scan.bin");
    trace::oracle::write_pages(&vec![0; ids.len()], &ids, std::fs::File::create(&path).unwrap()).unwrap();
    let big = replay_json(&path, "oracle", "64");
    let small = replay_json(&path, "oracle", "12");
    assert_eq!(big["misses"].as_u64(), Some(6000), "{big}");
    assert!(small["miss_ratio"].as_f64().unwrap() > 0.9, "{small}");
}

#[test]
fn malformed_traces_give_one_line_naming_the_offset() {
    let d = dir("bad");
    let path = d.join("cut.bin");
    let mut bytes = Vec::new();
    trace::oracle::write_pages(&[0, 0, 0], &[1, 2, 1], &mut bytes).unwrap();
    std::fs::write(&path, &bytes[..60]).unwrap();
    let (code, _, err) = hotlaunch(&["replay", s(&path), "--memory", "64"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "error: {}: truncated oracleGeneral record at byte offset 48: 12 of 24 bytes",
            path.display()
        )
    );
    let csv = d.join("bad.csv");
    std::fs::write(&csv, "time,obj_id,size\n0,1,4096\n0,-1,4096\n").unwrap();
    let (code, _, err) = hotlaunch(&["replay", s(&csv), "--memory", "64", "--format", "csv"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("byte offset 28"), "{err}");
}

#[test]
fn ariadne_swap_traces_import_as_corpus_and_sequence() {
    use trace::ariadne::{swapout_header, SwapOut, PAGE};
    let d = dir("ariadne");
    let mut out = Vec::new();
    for i in 0..4u64 {
        out.extend_from_slice(&swapout_header(&SwapOut {
            app: 10_100 + i % 2,
            pfn: 5000 + i,
            sector: 8 * i,
        }));
        out.extend((0..PAGE).map(|b| (b as u64 * (i + 1)) as u8));
    }
    std::fs::write(d.join("swapout_trace.txt"), &out).unwrap();
    std::fs::write(d.join("swapin_trace.txt"), "10101,8\n10100,0\n\n10101,24\n").unwrap();
    let (corpus, seq) = (d.join("a.hlc"), d.join("a.csv"));
    let (code, stdout, err) = hotlaunch(&[
        "import-ariadne",
        s(&d),
        "--corpus",
        s(&corpus),
        "--sequence",
        s(&seq),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("read 4 swap-outs and 3 swap-ins"), "{stdout}");
    let c = content::corpus::Corpus::read(&corpus).unwrap();
    assert_eq!(c.len(), 4);
    assert_eq!(c.page(2)[1], 3);
    assert_eq!(c.origins[3].vaddr, 24);
    assert_eq!(c.strings[c.origins[1].process as usize], "app10101");
    let text = std::fs::read_to_string(&seq).unwrap();
    assert_eq!(
        text.lines().nth(5),
        Some(&*format!("0,{},4096", (10_101u64 << 40) | 8))
    );
    let j = replay_json(&seq, "csv", "64");
    assert_eq!(j["requests"].as_u64(), Some(7));
    assert_eq!(j["unique_objects"].as_u64(), Some(4));
    assert_eq!(j["processes"].as_u64(), Some(2));
    // The corpus is what compress-study reads.
    let (code, _, err) = hotlaunch(&["compress-study", s(&corpus)]);
    assert_eq!(code, 0, "{err}");
    // A truncated swap-out file: one line naming the offset.
    std::fs::write(d.join("cut.txt"), &out[..4146 + 30]).unwrap();
    let (code, _, err) = hotlaunch(&["import-ariadne", s(&d.join("cut.txt")), "--sequence", s(&seq)]);
    assert_eq!(code, 1);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("truncated Ariadne swap-out header at byte offset 4146"),
        "{err}"
    );
}
