#!/usr/bin/env python3
"""Peer race: libCacheSim's LRU vs `hotlaunch replay` on one Zipf page trace (a benchmark, not a test).

Generates one Zipf page trace (4 KiB objects) in libCacheSim's oracleGeneral format, then runs, in
alternation and in the same window, libCacheSim's LRU (its Python package, `pip install
libcachesim`, installed here when absent) and `hotlaunch replay` at a cache of 10% of the unique
pages, and prints both rates (requests per CPU-second), both miss ratios and their ratio.

CPU time, not wall: libCacheSim's is this process's CPU time (`time.process_time`) around opening
the trace and `LRU.process_trace`; hotlaunch's is the child's user+sys (`RUSAGE_CHILDREN`) for the
whole `replay` command (reading the trace, building the kernel, replaying).

What is compared: libCacheSim's LRU is an exact LRU over N objects. `hotlaunch replay` runs the
kernel model (two-list active/inactive LRU with the accessed bit, kswapd and direct reclaim between
the watermarks, swap-out/in to the chosen swap device) on a device whose managed memory is N pages
rounded up to a MB; watermarks and page tables leave fewer pages resident (printed). Default swap is
`ideal` (synchronous, no cost, no memory: the kernel's reclaim alone, closest to a cache
simulator's "miss = fetch"); `--swap flash` adds the flash device's asynchronous writeback and
swap readahead; zram's compressed pool would take frames from the same memory, so at 10% of the
working set it would not compare caches of the same size.

    python3 scripts/race_libcachesim.py --requests 2000000
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time


def ensure_libcachesim():
    try:
        return importlib.import_module("libcachesim")
    except ImportError:
        pass
    print("libcachesim not installed: pip install libcachesim", flush=True)
    r = subprocess.run([sys.executable, "-m", "pip", "install", "libcachesim"])
    if r.returncode != 0:
        sys.exit("error: cannot install libcachesim from PyPI (pip install libcachesim failed); no race")
    importlib.invalidate_caches()
    try:
        return importlib.import_module("libcachesim")
    except ImportError as e:
        sys.exit(f"error: libcachesim installed but cannot be imported: {e}")


def zipf_trace(path: str, requests: int, objects: int, alpha: float, seed: int) -> int:
    """Write a Zipf(alpha) trace over `objects` pages; returns the number of distinct pages."""
    import numpy as np

    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, objects + 1, dtype=np.float64) ** alpha
    cdf = np.cumsum(p / p.sum())
    ranks = np.searchsorted(cdf, rng.random(requests), side="right").clip(0, objects - 1)
    # Popularity rank -> a random object id (popular objects are not 0, 1, 2, ...).
    ids = rng.permutation(objects).astype(np.uint64)[ranks]
    rec = np.zeros(requests, dtype=[("t", "<u4"), ("id", "<u8"), ("sz", "<u4"), ("nx", "<i8")])
    rec["t"] = np.arange(requests, dtype=np.uint64) * 1000 // requests  # a 1000 s trace
    rec["id"] = ids
    rec["sz"] = 4096
    nx = np.full(requests, -1, dtype=np.int64)
    order = np.lexsort((np.arange(requests), ids))
    same = ids[order][1:] == ids[order][:-1]
    nx[order[:-1][same]] = order[1:][same]
    rec["nx"] = nx
    rec.tofile(path)
    return int(len(np.unique(ids)))


def run_lcs(lcs, path: str, cache_pages: int) -> dict:
    t0 = time.process_time()
    reader = lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE)
    n = reader.get_num_of_req()
    cache = lcs.LRU(cache_size=cache_pages * 4096)
    miss, _byte_miss = cache.process_trace(reader)
    cpu = time.process_time() - t0
    return {"requests": n, "miss_ratio": miss, "cpu_s": cpu, "rate": n / cpu}


def run_hotlaunch(binary: str, path: str, memory_mb: int, swap: str) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        [binary, "replay", path, "--memory", str(memory_mb), "--swap", swap, "--json"],
        capture_output=True,
        text=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        sys.exit(f"hotlaunch replay failed: {out.stderr.strip()}")
    j = json.loads(out.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "requests": j["requests"],
        "miss_ratio": j["miss_ratio"],
        "cpu_s": cpu,
        "rate": j["requests"] / cpu,
        "replay_loop_rate": j["replay_requests_per_cpu_second"],
        "resident_pages_end": j["resident_pages_end"],
    }


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=20_000_000)
    ap.add_argument("--objects", type=int, default=None, help="Zipf universe (default: requests / 20)")
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=2, help="alternations of the two simulators")
    ap.add_argument("--swap", default="ideal", help="hotlaunch replay --swap (ideal, flash, zram, zram+flash)")
    ap.add_argument("--hotlaunch", default=os.path.join(here, "..", "target", "release", "hotlaunch"))
    ap.add_argument("--trace", default=None, help="keep the trace at this path")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    a = ap.parse_args()
    if not os.path.exists(a.hotlaunch):
        sys.exit(f"error: {a.hotlaunch} not found; build it with `cargo build --release -p hotlaunch`")
    lcs = ensure_libcachesim()
    objects = a.objects or max(1, a.requests // 20)
    tmp = None
    path = a.trace
    if path is None:
        tmp = tempfile.NamedTemporaryFile(suffix=".oracleGeneral.bin", delete=False)
        path = tmp.name
        tmp.close()
    try:
        t = time.time()
        unique = zipf_trace(path, a.requests, objects, a.alpha, seed=42)
        cache = max(1, unique // 10)
        memory_mb = max(1, math.ceil(cache * 4096 / 2**20))
        print(
            f"trace: {a.requests} requests, Zipf alpha {a.alpha} over {objects} pages, {unique} unique "
            f"({time.time() - t:.1f} s to generate); cache {cache} pages = {memory_mb} MB",
            flush=True,
        )
        rounds = []
        for r in range(a.rounds):
            l = run_lcs(lcs, path, cache)
            h = run_hotlaunch(a.hotlaunch, path, memory_mb, a.swap)
            assert l["requests"] == h["requests"], (l, h)
            rounds.append((l, h))
            print(
                f"round {r + 1}: libCacheSim LRU {l['rate']:,.0f} req/CPU-s (miss {l['miss_ratio']:.4f}); "
                f"hotlaunch replay {h['rate']:,.0f} req/CPU-s (miss {h['miss_ratio']:.4f}, "
                f"{h['resident_pages_end']} pages resident at the end)",
                flush=True,
            )
        best_l = max(rounds, key=lambda x: x[0]["rate"])[0]
        best_h = max(rounds, key=lambda x: x[1]["rate"])[1]
        res = {
            "requests": a.requests,
            "unique_pages": unique,
            "cache_pages": cache,
            "memory_mb": memory_mb,
            "swap": a.swap,
            "libcachesim_lru_req_per_cpu_s": best_l["rate"],
            "hotlaunch_replay_req_per_cpu_s": best_h["rate"],
            "hotlaunch_replay_loop_req_per_cpu_s": best_h["replay_loop_rate"],
            "speed_ratio": best_h["rate"] / best_l["rate"],
            "libcachesim_lru_miss_ratio": best_l["miss_ratio"],
            "hotlaunch_replay_miss_ratio": best_h["miss_ratio"],
            "miss_ratio_rel_diff": (best_h["miss_ratio"] - best_l["miss_ratio"]) / max(best_l["miss_ratio"], 1e-12),
        }
        if a.json:
            print(json.dumps(res, indent=2))
        else:
            print(f"best of {a.rounds}:")
            print(f"  libCacheSim LRU    {res['libcachesim_lru_req_per_cpu_s']:>14,.0f} req/CPU-s  miss {res['libcachesim_lru_miss_ratio']:.4f}")
            print(f"  hotlaunch replay   {res['hotlaunch_replay_req_per_cpu_s']:>14,.0f} req/CPU-s  miss {res['hotlaunch_replay_miss_ratio']:.4f}"
                  f"  (replay loop alone {res['hotlaunch_replay_loop_req_per_cpu_s']:,.0f})")
            print(f"  speed ratio (hotlaunch / libCacheSim) {res['speed_ratio']:.2f}x; "
                  f"miss ratio difference {100 * res['miss_ratio_rel_diff']:+.1f}%")
    finally:
        if tmp is not None:
            os.unlink(path)


if __name__ == "__main__":
    main()
