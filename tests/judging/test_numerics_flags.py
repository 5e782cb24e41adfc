"""Compiler flags of rounding (issue 14, point 2: what a branch guards): fast math on 9.0 and
precise math on 10.x and 12.0 compile the same kernels; the target loses no path."""

from __future__ import annotations

from pathlib import Path

from capgap.judging.rules.gate_excludes_arch import _numerics_flags_only

from .test_decisions import _brief, _scan

_FLAGS = """
import torch

def _fast_math_flags():
    # fast-math on SM90, precise on SM100+ (Blackwell needs bit-exact expf)
    if torch.cuda.get_device_capability()[0] >= 10:
        return []
    return ["--use_fast_math"]

def _feature_flags():
    if torch.cuda.get_device_capability()[0] >= 10:
        return []
    return ["-DENABLE_WGMMA_PIPELINE"]
"""


def test_fast_math_for_one_generation_is_a_numerics_choice(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/flags.py": _FLAGS}, arch="12.0")
    by_line = {f.line: f for f in found}
    assert by_line[5].severity == "low"
    assert by_line[5].consequence.startswith("a numerics choice, not a path: 9.0")
    # a flag that turns a feature on is no rounding choice: judged as any path (here by its need)
    assert by_line[10].consequence.startswith("expected: that path needs wgmma")
    assert _brief(found)[0][0] == "gate-excludes-arch"


def test_only_rounding_flags_count() -> None:
    assert _numerics_flags_only("carries on (returns ['--use_fast_math'])", ["returns []"])
    assert _numerics_flags_only("returns ['--ftz=true', '--prec-div=false']", ["returns ['--ftz=false']"])
    assert not _numerics_flags_only("returns ['-DENABLE_WGMMA_PIPELINE']", ["returns []"])
    assert not _numerics_flags_only("returns ['--use_fast_math']", ["returns None"])
    assert not _numerics_flags_only("returns []", ["returns ['--use_fast_math']"])
