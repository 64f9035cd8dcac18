import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

TINY = """name = "tiny"
device = "pixel3"
swap = "zram"
[apps]
names = ["YouTube", "Chrome"]
[workload]
kind = "script"
[[workload.events]]
launch = "YouTube"
use_s = 5
[[workload.events]]
launch = "Chrome"
use_s = 5
[[workload.events]]
launch = "YouTube"
use_s = 5
"""


@pytest.fixture(scope="session")
def cli():
    """The CLI binary (built by `cargo test --release` / `cargo build --release`)."""
    exe = pathlib.Path(os.environ.get("HOTLAUNCH_BIN", ROOT / "target" / "release" / "hotlaunch"))
    if not exe.exists():
        subprocess.run(["cargo", "build", "--release", "-p", "hotlaunch"], cwd=ROOT, check=True)
    return str(exe)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """A small scenario file (two apps, three launches): a run takes about a second."""
    d = tmp_path_factory.mktemp("scn")
    p = d / "tiny.toml"
    p.write_text(TINY)
    return str(p)
