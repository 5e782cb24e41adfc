"""Real CUDA libraries from PyPI wheels agree, arch by arch, with recorded cuobjdump listings.

The listings in data/ were recorded with cuobjdump 13.5 on the exact wheels pinned here; the
wheels are downloaded at test time into the persistent wheel cache (skipped when unreachable).
"""

from __future__ import annotations

import gzip
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from capgap.binaries.compat import MISSING, NATIVE
from capgap.binaries.crosscheck import capgap_listing, compare, parse_listing
from capgap.binaries.reader import read_binary

pytestmark = pytest.mark.network

NCCL = ("nvidia-nccl-cu13==2.30.7", [], "nvidia/nccl/lib/libnccl.so.2")
TORCH = (
    "torch==2.14.1",
    ["--python-version", "3.11", "--implementation", "cp", "--platform", "manylinux_2_28_x86_64"],
    "torch/lib/libtorch_cuda.so",
)


def fetch_member(cache: Path, requirement: str, pip_args: list[str], member: str) -> Path:
    """One file of a pinned wheel, downloaded and extracted once into the test wheel cache."""
    dest = cache / requirement.replace("==", "-")
    wheels = sorted(dest.glob("*.whl"))
    if not wheels:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "-q",
            "-d",
            str(dest),
        ]
        proc = subprocess.run([*cmd, *pip_args, requirement], capture_output=True, text=True)
        wheels = sorted(dest.glob("*.whl"))
        if proc.returncode != 0 or not wheels:
            pytest.skip(f"cannot download {requirement}: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
    out = dest / "extracted" / member
    if not out.exists():
        with zipfile.ZipFile(wheels[0]) as zf:
            tmp = out.with_name(out.name + ".part")
            tmp.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(member) as src, tmp.open("wb") as dst:
                while chunk := src.read(1 << 22):
                    dst.write(chunk)
            tmp.rename(out)
    return out


def test_libnccl_agrees_with_recorded_cuobjdump(wheel_cache: Path, data_dir: Path) -> None:
    lib = fetch_member(wheel_cache, *NCCL)
    recorded = parse_listing((data_dir / "libnccl.so.2.cuobjdump.txt").read_text())
    binary = read_binary(lib)
    assert binary is not None
    agreement = compare(recorded, capgap_listing(binary))
    assert agreement.agree, [r for r in agreement.rows if not r.agree]
    assert len(recorded) == 205  # 178 cubins + 27 PTX
    # relocatable device code (__nv_relfatbin) is read but, like cuobjdump, not counted as loadable
    assert sum(1 for s, _ in binary.entries if s == "__nv_relfatbin") == 896
    assert binary.sass == ("sm_75", "sm_80", "sm_90", "sm_100", "sm_110", "sm_120")
    assert binary.ptx == ("compute_120",)


@pytest.mark.slow
def test_libtorch_cuda_agrees_with_recorded_cuobjdump(wheel_cache: Path, data_dir: Path) -> None:
    lib = fetch_member(wheel_cache, *TORCH)
    with gzip.open(data_dir / "libtorch_cuda.so.cuobjdump.txt.gz", "rt") as fh:
        recorded = parse_listing(fh.read())
    binary = read_binary(lib)
    assert binary is not None
    agreement = compare(recorded, capgap_listing(binary))
    assert agreement.agree, [r for r in agreement.rows if not r.agree]
    assert len(recorded) == 2975
    from capgap.binaries.compat import judge

    modules = binary.modules()
    assert judge(modules, 12, 0).status == NATIVE
    assert judge(modules, 9, 0).via[0] == "sm_90"
    assert judge(modules, 7, 0).status == MISSING  # Volta: dropped from CUDA 13 builds
