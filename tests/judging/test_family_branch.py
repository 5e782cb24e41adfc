"""A per-arch heuristic that gives the target's family a branch of its own elsewhere in the same
function (bitsandbytes' `_gemm_4bit_use_custom_cuda`: `if is_hbm:` thresholds for 8.0/9.0, then
`if is_sm120:` tiers further down): the thresholds it withholds from the target are a choice."""

from __future__ import annotations

import textwrap
from pathlib import Path

from capgap.arch import parse_arch
from capgap.findings import Finding
from capgap.scan.analyzers import ScanOptions
from capgap.scan.run import run_scan

_HEURISTIC = """
import torch


def use_custom_kernel(M, N, K):
    major, minor = torch.cuda.get_device_capability()
    is_sm90 = major == 9
    is_sm120 = major == 12 and minor == 0
    if N * K < 4 * 1024 * 1024:
        if is_sm90:
            return M <= (512 if N > 4096 else 320)
        return M <= 192
    if OWN:
        return M <= 256
    return M <= 128
"""


def _scan(tmp_path: Path, text: str) -> list[Finding]:
    path = tmp_path / "eng" / "ops.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    options = ScanOptions(archs=(parse_arch("12.0"),), use_cache=False, binaries=False)
    return [f for f in run_scan([str(tmp_path)], options).findings if f.line == 9]


def test_thresholds_withheld_where_the_function_has_a_branch_for_the_target_are_low(tmp_path: Path) -> None:
    (found,) = _scan(tmp_path, _HEURISTIC.replace("OWN", "is_sm120"))
    assert (found.rule, found.severity) == ("gate-excludes-arch", "low")
    assert (
        found.extra["evidence"]
        == "a branch of the same function written for 12.0's family (line 12: `is_sm120`)"
    )


def test_without_that_branch_the_same_thresholds_stay_medium(tmp_path: Path) -> None:
    (found,) = _scan(tmp_path, _HEURISTIC.replace("OWN", "K > 8192"))
    assert (found.rule, found.severity) == ("gate-excludes-arch", "medium")
    assert "evidence" not in found.extra


def test_a_path_withheld_is_no_threshold_and_stays_medium(tmp_path: Path) -> None:
    # a kernel the owners get, not a number: the target's own branch elsewhere says nothing of it
    text = _HEURISTIC.replace("OWN", "is_sm120").replace(
        "return M <= (512 if N > 4096 else 320)", "return fast_kernel(M)"
    )
    (found,) = _scan(tmp_path, text)
    assert found.severity == "medium"
