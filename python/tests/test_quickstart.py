"""examples/quickstart.py runs and draws its plot."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_quickstart_runs(tiny, tmp_path):
    png = tmp_path / "cdf.png"
    p = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py"), tiny, str(png)],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    assert "wrote" in p.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
