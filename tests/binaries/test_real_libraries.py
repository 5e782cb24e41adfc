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
XFORMERS = (
    "xformers==0.0.31.post1",
    ["--python-version", "3.11", "--implementation", "cp", "--platform", "manylinux_2_28_x86_64"],
)
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
    recorded = _listing(data_dir / "libtorch_cuda.so.cuobjdump.txt.gz")
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


def _listing(path: Path) -> list[tuple[str, str]]:
    if path.suffix == ".gz":
        with gzip.open(path, "rt") as fh:
            return parse_listing(fh.read())
    return parse_listing(path.read_text())


@pytest.mark.parametrize(
    ("member", "listing", "images"),
    [
        ("xformers/_C.so", "xformers_C.so.cuobjdump.txt", 72),
        ("xformers/flash_attn_3/_C.so", "xformers_flash_attn_3_C.so.cuobjdump.txt.gz", 459),
    ],
)
def test_cuda_12_built_xformers_agrees_with_recorded_cuobjdump(
    wheel_cache: Path, data_dir: Path, member: str, listing: str, images: int
) -> None:
    lib = fetch_member(wheel_cache, *XFORMERS, member)
    recorded = _listing(data_dir / listing)
    binary = read_binary(lib)
    assert binary is not None
    agreement = compare(recorded, capgap_listing(binary))
    assert agreement.agree, [r for r in agreement.rows if not r.agree]
    assert len(recorded) == images
    assert {e.ptx_version for e in binary.loadable if e.kind == "ptx"} == {(8, 7)}  # CUDA 12.8
    assert {e.compression for e in binary.loadable} == {"", "lz4"}
    from capgap.binaries.compat import judge

    # Hopper kernels only as sm_90a: a Blackwell GPU falls back to JIT-compiling the compute_80 PTX
    verdict = judge(binary.modules(), 12, 0)
    assert (verdict.status, verdict.via) == ("ptx-jit", ("compute_80",))
