"""hotlaunch.sweep: local and Ray backends give the same table row for row, equal to the CLI's
sweep.csv; Parquet round trip."""

import os
import pathlib
import subprocess

import pandas as pd
import pytest

import hotlaunch


@pytest.fixture(scope="module")
def grid(tiny, tmp_path_factory):
    d = tmp_path_factory.mktemp("sweep")
    second = d / "tiny2.toml"
    second.write_text(pathlib.Path(tiny).read_text().replace('name = "tiny"', 'name = "tiny2"').replace("use_s = 5", "use_s = 8"))
    (d / "tiny.toml").write_text(pathlib.Path(tiny).read_text())
    path = d / "grid.toml"
    # 2 scenarios × 2 policies × 2 seeds.
    path.write_text('scenarios = ["tiny.toml", "tiny2.toml"]\npolicies = ["android", "android-swap"]\nseeds = [1, 2]\n')
    return path


def test_local_sweep_equals_cli(grid, cli, tmp_path):
    df = hotlaunch.sweep(str(grid), parquet=str(tmp_path / "t.parquet"))
    assert len(df) == 8
    assert df.id.is_unique
    out = tmp_path / "cli"
    subprocess.run([cli, "sweep", str(grid), "--out", str(out)], check=True, capture_output=True, cwd=grid.parent)
    csv = pd.read_csv(out / "sweep.csv", keep_default_na=False, na_values=[""])
    pd.testing.assert_frame_equal(df, csv)
    back = pd.read_parquet(tmp_path / "t.parquet")
    pd.testing.assert_frame_equal(back, df)
    subprocess.run(["python", "-m", "hotlaunch.table", str(out / "sweep.csv")], check=True)
    pd.testing.assert_frame_equal(pd.read_parquet(out / "sweep.parquet"), csv)


def test_ray_sweep_equals_local_row_for_row(grid):
    ray = pytest.importorskip("ray")
    local = hotlaunch.sweep(str(grid), threads=1)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = hotlaunch.sweep(str(grid), backend="ray")
    finally:
        ray.shutdown()
    pd.testing.assert_frame_equal(remote, local)


def test_dict_grid_and_errors(tiny):
    d = os.path.dirname(tiny)
    cwd = os.getcwd()
    os.chdir(d)
    try:
        df = hotlaunch.sweep({"scenarios": ["tiny.toml"], "policies": ["android"], "seeds": [5]})
        assert list(df.seed) == [5]
        with pytest.raises(hotlaunch.HotlaunchError, match="key policies: expected known policies"):
            hotlaunch.sweep({"scenarios": ["tiny.toml"], "policies": ["nope"], "seeds": [5]})
        with pytest.raises(ValueError, match="backend"):
            hotlaunch.sweep({"scenarios": ["tiny.toml"], "policies": ["android"], "seeds": [5]}, backend="slurm")
    finally:
        os.chdir(cwd)


def test_interrupted_sweep_resumes_without_redoing_points(grid, tmp_path):
    """Kill a resumable sweep midway (SIGKILL, after its first finished point), re-run it: the
    finished points are kept and not run again, the rest run, and the table equals a fresh one."""
    import json
    import signal
    import sys
    import time

    out = tmp_path / "resume"
    log = out / "points.jsonl"
    code = f"import hotlaunch; hotlaunch.sweep({str(grid)!r}, threads=1, out={str(out)!r})"
    child = subprocess.Popen([sys.executable, "-c", code], cwd=grid.parent)
    try:
        deadline = time.time() + 120
        while time.time() < deadline and child.poll() is None:
            if log.exists() and log.read_text().count("\n") >= 1:
                break
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait()
    before = [json.loads(l)["id"] for l in log.read_text().splitlines()]
    assert 1 <= len(before) < 8, f"interrupted midway: {len(before)} of 8 points were done"
    df = hotlaunch.sweep(str(grid), threads=1, out=str(out))
    after = [json.loads(l)["id"] for l in log.read_text().splitlines()]
    assert after[: len(before)] == before, "finished points are kept"
    assert len(after) == 8 and len(set(after)) == 8, "each point ran once: none redone, none lost"
    assert sorted(after) == sorted(df.id)
    fresh = hotlaunch.sweep(str(grid), threads=1)
    pd.testing.assert_frame_equal(df, fresh)
    # A third run finds everything done and runs nothing.
    again = hotlaunch.sweep(str(grid), threads=1, out=str(out))
    assert log.read_text().count("\n") == 8
    pd.testing.assert_frame_equal(again, fresh)
