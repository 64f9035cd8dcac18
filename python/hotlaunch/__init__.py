"""hotlaunch from Python: runs, comparisons and sweeps of the simulator as pandas DataFrames.

The simulation runs in Rust (the extension module ``hotlaunch._hotlaunch``, with the GIL released);
it hands back the same JSON report ``hotlaunch run --json`` writes plus per-launch and per-death
rows, and the DataFrames here are built from that, so every figure equals the CLI's.

    >>> import hotlaunch
    >>> r = hotlaunch.run("fleet-fig2-twitter", policies=["android", "fleet"], seed=1)
    >>> r.summary[["policy", "hot_p50_ms"]]
    >>> r.launches.groupby(["policy", "kind"]).latency_ms.median()
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from . import _hotlaunch
from ._hotlaunch import HotlaunchError

__version__ = _hotlaunch.__version__

__all__ = [
    "HotlaunchError",
    "Result",
    "run",
    "compare",
    "scenarios",
    "policies",
    "sweep",
    "write_parquet",
]

@dataclass
class Result:
    """One run: the JSON report (``.report``, a dict equal to the CLI's ``--json``) and
    DataFrames built from it."""

    report: dict
    events: list
    summary: pd.DataFrame
    launches: pd.DataFrame
    kills: pd.DataFrame
    samples: pd.DataFrame
    gcs: pd.DataFrame

    @property
    def seed(self) -> int:
        return self.report["seed"]

    def __repr__(self) -> str:
        pols = ", ".join(p["policy"] for p in self.report["policies"])
        return f"<hotlaunch.Result {self.report['scenario']} seed={self.seed} policies=[{pols}]>"


def _summary(report: dict, text: str) -> pd.DataFrame:
    # The CLI summary table's columns and cell text (built in Rust from the same report), then
    # the policy's resolved parameters.
    df = pd.read_csv(io.StringIO(_hotlaunch.summary_csv(text)), keep_default_na=False, na_values=[""])
    params = pd.DataFrame(
        [{f"param.{k}": v for k, v in sorted(p.get("params", {}).items())} for p in report["policies"]],
        index=df.index,
    )
    return pd.concat([df, params], axis=1)


def _launches(report: dict, events: list) -> pd.DataFrame:
    cols = ["time_s", "app", "context", "kind", "latency_ms", "policy", "seed"]
    rows = [
        (l["t_us"] / 1e6, l["app"], l["context"], l["kind"], l["latency_us"] / 1e3, e["policy"], report["seed"])
        for e in events
        for l in e["launches"]
    ]
    return pd.DataFrame(rows, columns=cols)


def _kills(report: dict, events: list) -> pd.DataFrame:
    cols = ["time_s", "app", "reason", "policy", "seed"]
    rows = [(k["t_us"] / 1e6, k["app"], k["reason"], e["policy"], report["seed"]) for e in events for k in e["kills"]]
    return pd.DataFrame(rows, columns=cols)


def _samples(report: dict) -> pd.DataFrame:
    frames = []
    for p in report["policies"]:
        ts = dict(p["timeseries"])
        ui = ts.pop("unusable_index", [])
        df = pd.DataFrame({k: v for k, v in ts.items() if len(v) == len(ts["t_s"])})
        # Unusable free-space index per order: one column per order.
        for o in range(len(ui[0]) if ui else 0):
            df[f"unusable_index_{o}"] = [u[o] for u in ui]
        df.insert(0, "policy", p["policy"])
        df.insert(1, "seed", report["seed"])
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _gcs(report: dict) -> pd.DataFrame:
    rows = [dict(g, policy=p["policy"], seed=report["seed"]) for p in report["policies"] for g in p.get("gcs", [])]
    return pd.DataFrame(rows)


def _params_args(params: Mapping[str, Any] | None) -> list[str]:
    """`{"fleet.D": 3}` or `{"fleet": {"D": 3}}` → `["fleet.D=3"]` (the CLI's --param text)."""
    out = []
    for k, v in (params or {}).items():
        if isinstance(v, Mapping):
            out.extend(f"{k}.{kk}={_text(vv)}" for kk, vv in v.items())
        else:
            out.append(f"{k}={_text(v)}")
    return out


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def run(
    scenario: str = "default",
    policies: Iterable[str] | None = None,
    seed: int | None = None,
    params: Mapping[str, Any] | None = None,
    threads: int | None = None,
) -> Result:
    """Run ``scenario`` (built-in name or scenario file) under ``policies`` (default: the
    scenario's own choice, as ``hotlaunch run``), with policy ``params`` (``{"fleet.D": 3}`` or
    ``{"fleet": {"D": 3}}``) and an optional master ``seed``. Raises ``HotlaunchError`` with the
    CLI's one-line message on bad input."""
    text, ev = _hotlaunch.run_json(str(scenario), list(policies or []), _params_args(params), seed, threads)
    report = json.loads(text)
    events = json.loads(ev)
    return Result(
        report=report,
        events=events,
        summary=_summary(report, text),
        launches=_launches(report, events),
        kills=_kills(report, events),
        samples=_samples(report),
        gcs=_gcs(report),
    )


def compare(scenario: str, policies: Iterable[str] | None = None, **kw: Any) -> Result:
    """Every policy (or the ones given) on the same workload, like ``hotlaunch compare``."""
    if policies is None:
        policies = [p["policy"] for p in _policies_list()]
    return run(scenario, policies=policies, **kw)


def scenarios() -> list[str]:
    """Built-in scenario names."""
    return list(_hotlaunch.scenarios())


def _policies_list() -> list[dict]:
    return json.loads(_hotlaunch.policies_json())


def policies() -> pd.DataFrame:
    """Every policy with its parameters: one row per (policy, parameter); a policy without
    parameters has one row with an empty ``param``."""
    rows = []
    for p in _policies_list():
        if not p["params"]:
            rows.append({"policy": p["policy"], "description": p["description"], "param": None})
        for s in p["params"]:
            rows.append(
                {
                    "policy": p["policy"],
                    "description": p["description"],
                    "param": s["name"],
                    "default": s["default"],
                    "expected": s["expected"],
                    "unit": s["unit"],
                    "about": s["about"],
                    "source": s["source"],
                }
            )
    return pd.DataFrame(rows)


def _grid_points(grid: Any) -> tuple[list[str], list[str]]:
    if isinstance(grid, Mapping):
        return _hotlaunch.sweep_points(json.dumps(grid), "<dict>", os.getcwd(), True)
    path = os.fspath(grid)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return _hotlaunch.sweep_points(text, path, os.path.dirname(os.path.abspath(path)), False)


def _table(columns: list[str], rows: list[str]) -> pd.DataFrame:
    csv = _hotlaunch.sweep_table_csv(columns, rows)
    return pd.read_csv(io.StringIO(csv), keep_default_na=False, na_values=[""])


def sweep(
    grid: Any,
    backend: str = "local",
    threads: int | None = None,
    parquet: str | None = None,
    out: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """Run a sweep grid: a sweep file path (``examples/sweep.toml``) or a dict of the same keys
    (``{"scenarios": [...], "policies": [...], "seeds": [...], "params": {"fleet": {"D": [2, 3]}}}``).

    ``backend="local"`` runs the points on all cores of this machine; ``backend="ray"`` submits
    one Ray task per point to the current Ray cluster (``ray.init()`` first, or a local one is
    started). Returns one row per point, the columns of the CLI's ``sweep.csv``; with
    ``parquet=PATH`` also writes it as Parquet.

    With ``out=DIR`` the sweep is resumable (local backend), as ``hotlaunch sweep --out DIR``:
    each finished point is appended to ``DIR/points.jsonl`` (the CLI's resume log, same format),
    and a re-run after an interruption runs only the points not in it."""
    points, columns = _grid_points(grid)
    if backend == "local":
        log = None
        if out is not None:
            os.makedirs(out, exist_ok=True)
            log = os.path.join(os.fspath(out), "points.jsonl")
        rows = _hotlaunch.sweep_run_points(points, threads, log)
    elif backend == "ray":
        if out is not None:
            raise ValueError("out= (resume) is supported by the local backend only")
        import ray

        if not ray.is_initialized():
            ray.init()
        task = ray.remote(num_cpus=1)(_ray_point)
        rows = ray.get([task.remote(p) for p in points])
    else:
        raise ValueError(f"backend {backend!r}: expected 'local' or 'ray'")
    df = _table(columns, rows)
    if parquet:
        write_parquet(df, parquet)
    return df


def _ray_point(point: str) -> str:
    # Runs inside a Ray worker: one simulation per task.
    from hotlaunch import _hotlaunch as ext

    return ext.sweep_run_point(point)


def write_parquet(table: pd.DataFrame | str, path: str) -> str:
    """Write a sweep table (DataFrame, or the path of a ``sweep.csv``) as Parquet (pyarrow)."""
    if not isinstance(table, pd.DataFrame):
        table = pd.read_csv(table, keep_default_na=False, na_values=[""])
    table.to_parquet(path, engine="pyarrow", index=False)
    return path
