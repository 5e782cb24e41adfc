"""Real CUDA libraries from PyPI wheels agree, arch by arch, with recorded cuobjdump listings.

The listings in data/ were recorded with cuobjdump 13.5 on the exact wheels pinned here; the
wheels are downloaded at test time into the persistent wheel cache (skipped when unreachable).
"""

from __future__ import annotations

import gzip
import os
import zipfile
from pathlib import Path

import pytest

from capgap.binaries.compat import MISSING, NATIVE
from capgap.binaries.crosscheck import capgap_listing, compare, parse_listing
from capgap.binaries.reader import read_binary
from tests.real_wheels import fetch_wheel

pytestmark = pytest.mark.network

NCCL = ("nvidia-nccl-cu13==2.30.7", [], "nvidia/nccl/lib/libnccl.so.2")
CUFFT = ("nvidia-cufft==12.0.0.61", [], "nvidia/cu13/lib/libcufft.so.12")
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
    """One file of a pinned wheel, downloaded and extracted once into the test wheel cache.

    Each step writes to a per-process temporary name and renames it into place, so parallel
    test workers (pytest -n) never see a half-written wheel or library.
    """
    wheel = fetch_wheel(cache, requirement, pip_args)
    out = wheel.parent / "extracted" / member
    if not out.exists():
        part = out.with_name(f"{out.name}.part{os.getpid()}")
        part.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel) as zf, zf.open(member) as src, part.open("wb") as dst:
            while chunk := src.read(1 << 22):
                dst.write(chunk)
        os.replace(part, out)
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
@pytest.mark.skipif(
    os.environ.get("CAPGAP_TEST_BIG_WHEELS") != "1",
    reason="downloads the 555 MB torch wheel: set CAPGAP_TEST_BIG_WHEELS=1 to run",
)
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


def test_cufft_kernels_embedded_in_ldata_are_judged(wheel_cache: Path) -> None:
    """cuobjdump lists one stub sm_75 cubin for libcufft; its real kernels sit in .ldata."""
    lib = fetch_member(wheel_cache, *CUFFT)
    binary = read_binary(lib)
    assert binary is not None
    assert capgap_listing(binary) == [("sass", "sm_75")]  # what `cuobjdump --list-elf` prints
    assert {s for s, _ in binary.entries} == {".nv_fatbin", ".ldata"}
    assert len(binary.embedded) == 11255
    from capgap.binaries.compat import judge

    modules = binary.modules()
    assert judge(modules, 9, 0).via[0] == "sm_90"  # without .ldata this read NO IMAGE: a false alarm
    assert judge(modules, 12, 0).via[0] == "sm_120"


def test_cufftw_has_only_a_kernel_less_module_and_no_finding(wheel_cache: Path) -> None:
    """cuobjdump lists one sm_75 cubin for libcufftw; it holds no kernel, so no GPU can lack it."""
    from capgap.binaries.audit import audit_files

    lib = fetch_member(wheel_cache, CUFFT[0], CUFFT[1], "nvidia/cu13/lib/libcufftw.so.12")
    binary = read_binary(lib)
    assert binary is not None
    assert capgap_listing(binary) == [("sass", "sm_75")]
    assert [e.empty for e in binary.listed] == [True]
    audit = audit_files([lib], lib.parent, [(12, 0)])
    assert (audit.libraries, audit.skipped, audit.files) == ([], [], 1)
