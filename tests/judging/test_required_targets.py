"""A predicate a path reaches that requires an arch-specific target (`is_sm100a_supported()`):
what the path runs is built for that target's features (vLLM's `is_flashinfer_cutedsl_bf16_gemm_
supported` returning `is_cute_dsl_available() and is_sm100a_supported(dev)`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from capgap.arch import parse_arch
from capgap.findings import Finding
from capgap.scan.analyzers import ScanOptions
from capgap.scan.run import run_scan

_UTILS = """
import torch


def is_sm100a_supported():
    return torch.cuda.get_device_capability() == (10, 0)


def cute_available():
    return True


def cutedsl_gemm_supported():
    return cute_available() and REQUIRED
"""

_LAYER = """
import torch

from eng.utils import cutedsl_gemm_supported


def can_use_cutedsl(x):
    if torch.cuda.get_device_capability()[0] != 10:
        return False
    return cutedsl_gemm_supported() and x.is_contiguous()
"""


def _scan(tmp_path: Path, required: str) -> Finding:
    for rel, text in {"eng/utils.py": _UTILS.replace("REQUIRED", required), "eng/layer.py": _LAYER}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    options = ScanOptions(archs=(parse_arch("12.0"),), use_cache=False, binaries=False)
    (found,) = [f for f in run_scan([str(tmp_path)], options).findings if f.path == "eng/layer.py"]
    return found


def test_a_reached_predicate_requiring_sm100a_makes_the_path_need_tcgen05(tmp_path: Path) -> None:
    found = _scan(tmp_path, "is_sm100a_supported()")
    assert found.severity == "low"
    assert found.consequence.startswith(
        "expected: that path needs tcgen05 (read from is_sm100a_supported(), which "
        "eng.utils.cutedsl_gemm_supported requires), which 12.0 lacks"
    )


def test_a_predicate_requiring_no_arch_specific_target_says_nothing(tmp_path: Path) -> None:
    assert _scan(tmp_path, "torch.cuda.is_available()").severity == "medium"
