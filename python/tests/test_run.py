"""hotlaunch.run / compare / scenarios / policies: DataFrames equal the CLI's JSON, errors are
the CLI's one-line messages, runs release the GIL."""

import json
import subprocess
import threading
import time

import numpy as np
import pytest

import hotlaunch


def cli_json(cli, tmp_path, *args):
    out = tmp_path / "cli.json"
    subprocess.run([cli, "run", *args, "--json", str(out)], check=True, capture_output=True)
    return json.loads(out.read_text())


def check_equal_to_cli(r, cli_report):
    # The report is the CLI's JSON, and every summary figure comes from it.
    assert r.report == cli_report
    for i, p in enumerate(cli_report["policies"]):
        s = r.summary.iloc[i]
        assert s.policy == p["policy"]
        assert s.launches_hot == p["launches"]["hot"]
        assert s.launches_cold == p["launches"]["cold"]
        if p["launches"]["hot"]:
            assert s.hot_p50_ms == pytest.approx(p["hot_launch_ms"]["p50"], abs=1e-9)
            assert s.hot_p90_ms == pytest.approx(p["hot_launch_ms"]["p90"], abs=1e-9)
        assert s.kills_total == p["kills"]["total"]
        assert s.cached_mean == pytest.approx(p["cached_apps"]["mean"], abs=1e-9)
        assert s.energy_j == pytest.approx(p["energy_j"], abs=1e-9)
        # One launch row per launch, hot and cold as counted; their latencies give the same
        # median as the histogram (3 significant digits).
        l = r.launches[r.launches.policy == p["policy"]]
        assert (l.kind == "hot").sum() == p["launches"]["hot"]
        assert (l.kind == "cold").sum() == p["launches"]["cold"]
        hot = np.sort(l[l.kind == "hot"].latency_ms.to_numpy())
        if len(hot):
            # The histogram's p50 is the highest value equivalent to the median sample.
            med = hot[int(np.ceil(0.5 * len(hot))) - 1]
            assert p["hot_launch_ms"]["p50"] == pytest.approx(med, rel=2e-3)
        g = r.gcs[r.gcs.policy == p["policy"]]
        assert len(g) == len(p["gcs"]) == p["gc"]["collections"]
        k = r.kills[(r.kills.policy == p["policy"]) & (r.kills.reason != "user")]
        assert len(k) == p["kills"]["total"]
        smp = r.samples[r.samples.policy == p["policy"]]
        assert list(smp.t_s) == p["timeseries"]["t_s"]
        assert list(smp.free_mb) == p["timeseries"]["free_mb"]


def test_run_tiny_equals_cli(cli, tiny, tmp_path):
    r = hotlaunch.run(tiny, policies=["android", "android-swap"], seed=3)
    check_equal_to_cli(r, cli_json(cli, tmp_path, tiny, "--policy", "android", "--policy", "android-swap", "--seed", "3"))
    assert list(r.launches.columns) == ["time_s", "app", "context", "kind", "latency_ms", "policy", "seed"]
    assert set(r.launches.seed) == {3}
    # Same seed, same result; threads do not matter.
    r2 = hotlaunch.run(tiny, policies=["android", "android-swap"], seed=3, threads=1)
    assert r2.report == r.report
    assert r2.launches.equals(r.launches)


def test_run_default_equals_cli(cli, tmp_path):
    """The acceptance check: hotlaunch.run("default") figures equal the CLI's JSON (same seed)."""
    r = hotlaunch.run("default", seed=1)
    check_equal_to_cli(r, cli_json(cli, tmp_path, "default", "--seed", "1"))
    assert len(r.launches) > 100


def test_params_and_compare(tiny):
    r = hotlaunch.compare(tiny, policies=["android", "fleet"], params={"fleet": {"D": 3}}, seed=1)
    assert list(r.summary.policy) == ["android", "fleet(D=3)"]
    assert r.summary.loc[1, "param.D"] == 3
    r2 = hotlaunch.run(tiny, policies=["fleet"], params={"fleet.D": 3}, seed=1)
    assert r2.report["policies"][0] == r.report["policies"][1]


def test_scenarios_and_policies():
    assert "default" in hotlaunch.scenarios()
    p = hotlaunch.policies()
    assert {"android", "fleet", "marvin", "ariadne", "memsaver", "regions"} <= set(p.policy)
    d = p[(p.policy == "fleet") & (p.param == "D")].iloc[0]
    assert d.default == "2" and d.source


def test_errors_are_the_cli_one_line_messages(cli, tiny):
    cases = [
        (["nope-scenario"], dict(scenario="nope-scenario")),
        ([tiny, "--policy", "flet"], dict(scenario=tiny, policies=["flet"])),
        ([tiny, "--policy", "fleet", "--param", "fleet.D=99"], dict(scenario=tiny, policies=["fleet"], params={"fleet.D": 99})),
    ]
    for args, kw in cases:
        p = subprocess.run([cli, "run", *args], capture_output=True, text=True)
        assert p.returncode != 0
        want = p.stderr.strip()
        assert want.startswith("error: ") and "\n" not in want
        with pytest.raises(hotlaunch.HotlaunchError) as e:
            hotlaunch.run(**kw)
        assert str(e.value) == want[len("error: ") :]


def test_gil_is_released_during_a_run(tiny):
    ticks = 0
    done = threading.Event()

    def work():
        hotlaunch.run(tiny, policies=["android"], seed=1, threads=1)
        done.set()

    t = threading.Thread(target=work)
    t0 = time.perf_counter()
    t.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    # With the GIL held for the whole run, this loop could not tick until the run ended.
    assert time.perf_counter() - t0 > 0.05
    assert ticks > 10
