"""A real venv with a few tiny hand-built wheels installed by pip, shared by the stack tests."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

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


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def build_wheel(out: Path, name: str, version: str, files: dict[str, str]) -> Path:
    """A minimal, valid pure-Python wheel (PEP 427)."""
    info = f"{name}-{version}.dist-info"
    meta = {
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n",
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: capgap-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    wheel = out / f"{name}-{version}-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, text in {**files, **meta}.items():
            data = text.encode()
            zf.writestr(path, data)
            record.append(_record_line(path, data))
        record.append(f"{info}/RECORD,,")
        zf.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return wheel


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
