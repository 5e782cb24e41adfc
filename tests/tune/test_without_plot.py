"""`capgap tune allreduce` in an environment without the `plot` extra (issue 15, item 13): a real
venv holding everything this one has but matplotlib (its packages linked in, matplotlib left out),
and a real CPU run in it."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="torch is not installed: the torchrun launch cannot be tested")

FAST = ("--dist-backend", "gloo", "--device", "cpu", "--repeats", "2", "--max-iters", "2")
PLOT_ONLY = ("matplotlib", "mpl_toolkits", "pylab")


def _venv_without_matplotlib(path: Path) -> str:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    python = str(path / "bin" / "python")
    theirs = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.lower().startswith(PLOT_ONLY) and not (theirs / entry.name).exists():
            (theirs / entry.name).symlink_to(entry)
    return python


def test_a_cpu_run_without_matplotlib_writes_everything_else_and_exits_0(tmp_path: Path) -> None:
    python = _venv_without_matplotlib(tmp_path / "venv")
    missing = subprocess.run([python, "-c", "import matplotlib"], capture_output=True, text=True, check=False)
    assert missing.returncode == 1 and "No module named 'matplotlib'" in missing.stderr
    out = tmp_path / "run"
    cmd = [python, "-m", "capgap", "tune", "allreduce", "--nproc", "2", "--sizes", "1K", "--out", str(out)]
    res = subprocess.run([*cmd, *FAST], capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    assert sorted(p.name for p in out.iterdir()) == ["raw.json", "summary.json", "values.json", "worker.log"]
    [line] = [ln for ln in res.stderr.splitlines() if "allreduce.png" in ln]
    assert line.startswith("allreduce.png not drawn: matplotlib is not installed (pip install 'capgap[plot]'")
