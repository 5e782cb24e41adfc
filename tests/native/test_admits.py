"""gate-admits-unsupported for preprocessor gates: a gate that lets 12.0 into tcgen05 / wgmma code
beside a sibling that runs it, on fixture kernels written here; where nvcc is installed, the
verdicts are checked against what it actually compiles for sm_120, sm_120a and sm_120f."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from capgap.arch import parse_arch
from capgap.native import direct, reader
from capgap.native.judge import findings

NVCC = os.environ.get("CAPGAP_NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"

ALLOC = 'asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;" :: "r"(s[0]));'
FENCE = 'asm volatile("wgmma.fence.sync.aligned;\\n");'

# Each kernel alone in its own translation unit, so nvcc's verdict is per kernel.
KERNELS = {
    # >= 1000 lets every 12.0 build into tcgen05 PTX: ptxas refuses it (high).
    "ge1000": f"""\
        __global__ void ge1000(unsigned* s) {{
        #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
          {ALLOC}
        #else
          s[0] = 0;
        #endif
        }}
        """,
    # the family macro admits sm_120a and sm_120f (1200 >= 1000), not plain sm_120.
    "family": f"""\
        __global__ void family(unsigned* s) {{
        #if defined(__CUDA_ARCH_FAMILY_SPECIFIC__) && __CUDA_ARCH_FAMILY_SPECIFIC__ >= 1000
          {ALLOC}
        #else
          s[0] = 0;
        #endif
        }}
        """,
    # written right: only the 10.x feature sets get the PTX.
    "feat": f"""\
        __global__ void feat(unsigned* s) {{
        #if defined(__CUDA_ARCH_FEAT_SM100_ALL) || \\
            (defined(__CUDA_ARCH_FAMILY_SPECIFIC__) && __CUDA_ARCH_FAMILY_SPECIFIC__ == 1030)
          {ALLOC}
        #else
          s[0] = 0;
        #endif
        }}
        """,
    # Hopper's wgmma behind >= 900: 12.0 is let in with 9.0a.
    "hopper": f"""\
        __global__ void hopper(unsigned* s) {{
        #if __CUDA_ARCH__ >= 900
          {FENCE}
          s[0] = 1;
        #else
          s[0] = 0;
        #endif
        }}
        """,
    # the PTX sits in a nested arm 12.0 does not take: what it compiles is clean.
    "nested": f"""\
        __global__ void nested(unsigned* s) {{
        #if __CUDA_ARCH__ >= 1000
        #if __CUDA_ARCH__ < 1200
          {ALLOC}
        #else
          s[0] = 2;
        #endif
        #else
          s[0] = 0;
        #endif
        }}
        """,
    # two tcgen05 variants (== 1000 / else): no gate about tcgen05, the whole kernel needs it.
    "variants": f"""\
        __global__ void variants(unsigned* s) {{
        #if __CUDA_ARCH__ == 1000
          {ALLOC}
        #else
          {ALLOC.replace("32", "64")}
        #endif
        }}
        """,
    # a message that names wgmma is no evidence.
    "message": """\
        #include <cstdio>
        __global__ void message(unsigned* s) {
        #if __CUDA_ARCH__ >= 900
          printf("Attempting to use wgmma.fence without sm_90a\\n");
        #else
          s[0] = 0;
        #endif
        }
        """,
}

# CuTe-style atom: compiles everywhere, fails when run (medium); no nvcc check (needs CuTe).
ATOM = """\
#include "atoms.hpp"  // SM100_MMA_F16BF16_SS, Portable
__global__ void atom(float* out) {
#if __CUDA_ARCH__ >= 1000
  using Mma = SM100_MMA_F16BF16_SS;
#else
  using Mma = Portable;
#endif
  Mma::fma();
}
"""


def _files(tmp_path: Path, sources: dict[str, str]) -> list:
    out = []
    for rel, text in sorted(sources.items()):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
        f = reader.read(rel, p.read_bytes())
        assert f is not None
        f.source = str(p)
        out.append(f)
    return out


def _admits(tmp_path: Path, sources: dict[str, str]) -> dict[str, object]:
    got = findings(_files(tmp_path, sources), (parse_arch("12.0"),), vendored=False)
    return {f.symbol: f for f in got if f.rule == "gate-admits-unsupported"}


def test_gates_that_let_12_0_into_tcgen05_or_wgmma(tmp_path: Path) -> None:
    got = _admits(tmp_path, {f"csrc/{name}.cu": text for name, text in KERNELS.items()})
    assert set(got) == {"ge1000", "family", "hopper"}
    ge = got["ge1000"]
    assert ge.severity == "high" and ge.line == 2 and set(ge.present) == {"10.0", "10.3", "11.0"}
    assert ge.extra["fails"] == "compile" and ge.extra["compiles"] == ["sm_120", "sm_120a", "sm_120f"]
    assert ge.extra["evidence"] == "'tcgen05.alloc' (line 3)" and "9.0" in ge.consequence
    assert got["family"].extra["compiles"] == ["sm_120a", "sm_120f"]
    assert got["hopper"].present == ("9.0",) and got["hopper"].extra["needs"] == ["wgmma"]


def test_a_library_atom_is_a_failure_at_run_time(tmp_path: Path) -> None:
    atom = _admits(tmp_path, {"csrc/atom.cu": ATOM})["atom"]
    assert atom.severity == "medium" and atom.extra["fails"] == "run"
    assert atom.extra["evidence"] == "'SM100_MMA_F16BF16_SS' (line 4)"


def test_silent_where_the_file_is_built_for_another_arch_or_needs_it_anyway(tmp_path: Path) -> None:
    ungated = "__device__ void setup(unsigned* s) { " + ALLOC + " }\n"
    assert _admits(tmp_path, {"csrc/sm_100a/k.cu": KERNELS["ge1000"]}) == {}
    assert _admits(tmp_path, {"csrc/k.cu": ungated + textwrap.dedent(KERNELS["ge1000"])}) == {}
    low = _admits(tmp_path, {"tests/k.cu": KERNELS["ge1000"]})["ge1000"]
    assert low.severity == "low"


def test_the_excluded_gate_finding_gives_way(tmp_path: Path) -> None:
    """A group judged gate-admits-unsupported is not judged gate-excludes-arch as well."""
    got = findings(_files(tmp_path, {"csrc/k.cu": KERNELS["ge1000"]}), (parse_arch("12.0"),), False)
    assert [f.rule for f in got] == ["gate-admits-unsupported"]


def test_direct_evidence_is_code_not_messages() -> None:
    code = textwrap.dedent(
        """\
        asm volatile("{\\n .reg .b32 r;\\n"
                     "wgmma.fence.sync.aligned;\\n}");
        printf("tcgen05.alloc is not here");
        cuda::ptx::tcgen05_alloc(cuda::ptx::cta_group_1, &slot, 32);
        summary(umma_count);
        cutlass::arch::warpgroup_reg_alloc<232>();
        """
    ).encode()
    got = [(d.spelling, d.line, d.fails) for d in direct.read(code, 10)]
    assert got == [
        ("wgmma.fence", 11, "compile"),
        ("ptx::tcgen05_alloc", 13, "compile"),
        ("tcgen05_alloc", 13, "run"),
    ]


def _nvcc_fails(path: Path, variant: str) -> bool:
    done = subprocess.run(
        [NVCC, "-gencode", f"arch=compute_{variant},code=sm_{variant}", "-c", str(path), "-o", os.devnull],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return done.returncode != 0


@pytest.mark.skipif(not Path(NVCC).is_file(), reason="nvcc is not installed")
def test_nvcc_fails_exactly_where_the_rule_says_high(tmp_path: Path) -> None:
    got = _admits(tmp_path, {f"csrc/{name}.cu": text for name, text in KERNELS.items()})
    for name in ("ge1000", "family", "feat", "nested", "message"):
        path = tmp_path / "csrc" / f"{name}.cu"
        for variant in ("120", "120a", "120f"):
            expected = name in got and f"sm_{variant}" in got[name].extra["compiles"]
            assert _nvcc_fails(path, variant) == expected, (name, variant)
    # the siblings the findings name do compile it
    assert not _nvcc_fails(tmp_path / "csrc" / "ge1000.cu", "100a")
    assert not _nvcc_fails(tmp_path / "csrc" / "hopper.cu", "90a")
