"""A condition no arch decides that several arms test alike (`is_cuda` in `if is_cuda and
is_sm100: ... elif is_cuda and sm >= 80: ...`) has one value for the whole chain: an arch whose own
arm comes first never reaches a later one through it."""

from __future__ import annotations

from pathlib import Path

from .test_decisions import _brief, _scan

_OVERRIDES = """
from eng.platform import get_platform


def overrides(cfg):
    out = {}
    if cfg.attention_backend is None:
        if get_platform().is_cuda and get_platform().device_sm >= 100 and get_platform().device_sm < 110:
            out["attention_backend"] = "trtllm_mha"
        elif get_platform().is_cuda and get_platform().device_sm >= 80:
            out["attention_backend"] = "fa3"
        else:
            out["attention_backend"] = "triton"
    return out
"""


def test_an_arch_whose_arm_comes_first_is_not_sent_on_by_a_shared_condition(tmp_path: Path) -> None:
    # a B200 takes trtllm_mha: it never reaches fa3, whatever `is_cuda` is
    assert _scan(tmp_path / "b200", {"eng/o.py": _OVERRIDES}, arch="10.0") == []
    # 12.0 does reach fa3 (Hopper's wgmma kernels), sent there with 8.x, 9.0 and 11.0 but not 10.x
    found = _scan(tmp_path / "rtx", {"eng/o.py": _OVERRIDES}, arch="12.0")
    assert _brief(found) == [("gate-admits-unsupported", "high", "eng/o.py", 9)]
    assert "10.0" not in found[0].message and "9.0, 11.0" in found[0].message
