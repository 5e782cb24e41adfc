"""A real venv with a few tiny hand-built wheels installed by pip, shared by the stack tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.wheel_build import build_wheel

# (dist name, version, {path in the wheel: text}) — stand-ins for an engine env's packages.
FAKE_DISTS = [
    (
        "torch",
        "2.11.0+cu130",
        {
            "torch/__init__.py": "raise ImportError('never imported')\n",
            "torch/version.py": "__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\n",
        },
    ),
    ("flashinfer_python", "0.5.2", {"flashinfer/__init__.py": ""}),
    ("flashinfer_cubin", "0.5.1", {"flashinfer_cubin/__init__.py": ""}),
    ("nvidia_nccl_cu13", "2.28.3", {"nvidia/nccl/__init__.py": ""}),
    ("nvidia_cublas", "13.0.2.14", {"nvidia/cublas/__init__.py": ""}),
]


@pytest.fixture(scope="session")
def engine_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Path of the python of a fresh venv (no pip in it) that pip filled with FAKE_DISTS."""
    root = tmp_path_factory.mktemp("engine-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True)
    python = root / "venv" / "bin" / "python"
    wheels = [str(build_wheel(root, n, v, f)) for n, v, f in FAKE_DISTS]
    # --isolated: no user/site pip config (constraints, indexes); the wheels are local files.
    pip = [sys.executable, "-m", "pip", "--isolated", "--python", str(python), "install", "-q"]
    subprocess.run([*pip, "--no-index", "--no-deps", "--no-cache-dir", *wheels], check=True)
    return python
