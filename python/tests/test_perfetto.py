"""`hotlaunch run --perfetto FILE`: the trace is Chrome JSON trace events with the expected tracks.

Perfetto's trace processor (PyPI `perfetto`) downloads its `trace_processor_shell` binary at run
time, which this machine (package registries only) cannot do: the trace is then checked against
the Trace Event Format's field requirements; where the processor runs, it loads the trace too."""

import json
import pathlib
import subprocess
from collections import Counter

import pytest

PRESS = pathlib.Path(__file__).resolve().parents[2] / "crates" / "hotlaunch" / "tests" / "support" / "press.toml"


@pytest.fixture(scope="module")
def trace(cli, tmp_path_factory):
    d = tmp_path_factory.mktemp("perfetto")
    out = d / "trace.json"
    rep = d / "r.json"
    subprocess.run([cli, "run", str(PRESS), "--perfetto", str(out), "--json", str(rep)], check=True, capture_output=True)
    return out, json.loads(rep.read_text())


def test_trace_format_and_tracks(trace):
    path, report = trace
    t = json.loads(path.read_text())
    ev = t["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    for e in ev:
        assert e["ph"] in {"M", "X", "i", "C"}
        assert e["pid"] in procs
        if e["ph"] in "Xi":
            assert isinstance(e["ts"], int) and (e["pid"], e["tid"]) in threads
        if e["ph"] == "X":
            assert e["dur"] >= 1
        if e["ph"] == "i":
            assert e["s"] in "gpt"
        if e["ph"] == "C":
            assert isinstance(e["args"]["value"], (int, float))
    p = report["policies"][0]
    apps = [a["app"] for a in p["per_app"]]
    assert sorted(v for v in procs.values()) == sorted([f"{p['policy']}: system"] + [f"{p['policy']}: {a}" for a in apps])
    assert sorted(set(threads.values())) == ["gc", "kswapd", "launches", "lmkd"]
    n = Counter((e["ph"], e.get("cat")) for e in ev)
    assert n[("X", "launch")] == p["launches"]["hot"] + p["launches"]["cold"]
    assert n[("X", "gc")] == p["gc"]["collections"]
    assert n[("X", "reclaim")] == p["vmstat"]["kswapd_wakeups"] > 0
    assert {e["name"] for e in ev if e["ph"] == "C"} == {"free memory (MiB)", "zram (MiB)", "cached apps", "PSI some total (ms)"}


def test_trace_processor_loads_it_where_it_can_run(trace):
    tp_mod = pytest.importorskip("perfetto.trace_processor")
    try:
        tp = tp_mod.TraceProcessor(trace=str(trace[0]))
    except Exception as e:  # the shell binary cannot be downloaded offline
        pytest.skip(f"trace_processor_shell unavailable here: {type(e).__name__}")
    path, report = trace
    p = report["policies"][0]
    q = tp.query("select count(*) as n from slice where category = 'launch'").as_pandas_dataframe()
    assert int(q.n[0]) == p["launches"]["hot"] + p["launches"]["cold"]
    tp.close()
