"""Fixtures for the binary-audit tests: committed small binaries, nvcc-built ones, cuobjdump."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
BUILD_SCRIPT = REPO / "scripts" / "build_cuda_fixtures.py"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


def _nvcc() -> str | None:
    for candidate in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture(scope="session")
def built_fixtures() -> Path:
    """Every fixture of scripts/build_cuda_fixtures.py, built once per script version and cached."""
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found (PATH or /usr/local/cuda/bin): cannot build CUDA fixture libraries")
    key = hashlib.sha256(BUILD_SCRIPT.read_bytes()).hexdigest()[:12]
    base = Path(os.environ.get("CAPGAP_TEST_FIXTURES", Path.home() / ".cache" / "capgap-test-fixtures"))
    dest = base / key
    if (dest / ".complete").exists():
        return dest
    tmp = base / f"{key}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    proc = subprocess.run(
        [sys.executable, str(BUILD_SCRIPT), str(tmp), "--nvcc", nvcc], capture_output=True, text=True
    )
    if proc.returncode != 0:
        pytest.fail(f"building CUDA fixtures failed: {proc.stderr[-2000:]}")
    (tmp / ".complete").write_text(proc.stdout)
    if dest.exists():
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        tmp.rename(dest)
    return dest


def find_cuobjdump() -> str | None:
    scripts = Path(sysconfig.get_paths()["purelib"]) / "nvidia"
    wheel_bins = sorted(scripts.glob("*/bin/cuobjdump")) if scripts.is_dir() else []
    for candidate in (shutil.which("cuobjdump"), "/usr/local/cuda/bin/cuobjdump", *map(str, wheel_bins)):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture(scope="session")
def cuobjdump() -> str:
    exe = find_cuobjdump()
    if exe is None:
        pytest.skip("cuobjdump not found (PATH, /usr/local/cuda/bin, or `pip install nvidia-cuda-cuobjdump`)")
    return exe


def cuobjdump_listing(exe: str, path: Path) -> str:
    """`--list-elf` then `--list-ptx`, as recorded in tests/binaries/data/*.cuobjdump.txt."""
    out = []
    for flag in ("--list-elf", "--list-ptx"):
        proc = subprocess.run([exe, flag, str(path)], capture_output=True, text=True, timeout=300)
        out.append(proc.stdout)
    return "".join(out)
