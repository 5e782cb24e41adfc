"""The evaluator's verdict against nvcc's own preprocessor, arm by arm, for each arch variant.

Each arm of the fixture holds a marker; `nvcc -gencode arch=compute_X,code=sm_X -E` keeps the
markers of the arms it compiles. Skipped when nvcc is not installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from capgap.arch import parse_arch
from capgap.native import envs, reader
from capgap.native.macros import Table
from tests.native.test_gates import CONFIG_H

NVCC = os.environ.get("CAPGAP_NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
VARIANTS = ["120", "120a", "120f", "90", "90a", "100a", "100f", "103a", "103f", "80"]

GATES = """\
#include "config.h"
#if __CUDA_ARCH__ >= 900 && __CUDA_ARCH__ < 1000
MARK_0_0
#elif __CUDA_ARCH__ >= 1000 && __CUDA_ARCH__ < 1200
MARK_0_1
#else
MARK_0_2
#endif
#ifdef __CUDA_ARCH_FEAT_SM120_ALL
MARK_1_0
#endif
#if defined(__CUDA_ARCH_SPECIFIC__) && __CUDA_ARCH_SPECIFIC__ == 1200
MARK_2_0
#elif defined(__CUDA_ARCH_FAMILY_SPECIFIC__)
MARK_2_1
#else
MARK_2_2
#endif
#if defined(MYLIB_SM90A_ENABLED)
MARK_3_0
#elif defined(MYLIB_SM100F_ENABLED) \\
  || (__CUDA_ARCH__ == 1030 && MY_FAMILY(1030))
MARK_3_1
#endif
#if !defined(__CUDA_ARCH_FEAT_SM90_ALL) /* a comment
  over two lines */
MARK_4_0
#  if __CUDA_ARCH__ / 100 == 12
MARK_5_0
#  endif
#endif
#if __CUDACC_VER_MAJOR__ >= 13 && CUDART_VERSION >= 12080 && __CUDA_ARCH_FAMILY_SPECIFIC__ >= 1000
MARK_6_0
#endif
"""


def _kept(tmp: Path, variant: str) -> set[str]:
    cmd = [
        NVCC,
        "-gencode",
        f"arch=compute_{variant},code=sm_{variant}",
        "-E",
        "-I",
        str(tmp),
        str(tmp / "g.cu"),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    if out.returncode != 0:
        pytest.skip(f"nvcc cannot preprocess for {variant}: {out.stderr.strip()[-200:]}")
    return set(re.findall(r"\bMARK_\d+_\d+\b", out.stdout))


def _ours(tmp: Path, variant: str) -> set[str]:
    files = []
    for name in ("config.h", "g.cu"):
        f = reader.read(name, (tmp / name).read_bytes())
        assert f is not None
        files.append(f)
    table = Table(files)
    spec = parse_arch("sm_" + variant)
    env = envs.env(spec.facts, spec.suffix)
    kept = set()
    for gi in range(len(files[1].groups)):
        r = table.reach(1, gi, env)
        assert len(r) <= 1, (variant, gi, r)  # every condition here is decided
        if r and r[0] >= 0:
            kept.add(f"MARK_{gi}_{r[0]}")
    return kept


@pytest.mark.skipif(not Path(NVCC).exists(), reason="nvcc not installed (set CAPGAP_NVCC)")
@pytest.mark.parametrize("variant", VARIANTS)
def test_evaluator_keeps_what_nvcc_keeps(tmp_path: Path, variant: str) -> None:
    (tmp_path / "config.h").write_text(CONFIG_H)
    (tmp_path / "g.cu").write_text(GATES)
    assert _ours(tmp_path, variant) == _kept(tmp_path, variant)
