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
