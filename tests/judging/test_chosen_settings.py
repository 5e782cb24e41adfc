"""An error the target hits only under a setting a user picks is a non-default loss (medium), not
a crash of the default configuration (high): issue 14, point 8."""

from __future__ import annotations

from pathlib import Path

from capgap.reading.fileparse import facts_for_bytes

from .test_decisions import _brief, _scan

_MOE = """
import torch

from eng.utils import get_moe_runner_backend


def is_sm100_supported():
    return torch.cuda.get_device_capability()[0] == 10


def is_sm90_supported():
    return torch.cuda.get_device_capability() == (9, 0)


class Fp8MoEMethod:
    def __init__(self, config):
        self.config = config
        if {test}:
            assert is_sm100_supported() or is_sm90_supported()
"""


def test_an_assert_under_a_picked_backend_is_medium(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/fp8.py": _MOE.format(test="get_moe_runner_backend().is_cutlass()")})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/fp8.py", 18)]
    assert "only when 'cutlass' is asked for" in found[0].consequence


def test_an_assert_under_a_compared_setting_is_medium(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/fp8.py": _MOE.format(test='config.moe_runner_backend == "cutlass"')})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/fp8.py", 18)]


def test_an_assert_under_the_default_value_stays_high(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/fp8.py": _MOE.format(test="get_moe_runner_backend().is_auto()")})
    assert _brief(found) == [("gate-excludes-arch", "high", "eng/fp8.py", 18)]


def test_an_assert_under_a_flag_stays_high(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/fp8.py": _MOE.format(test="config.use_fp8")})
    assert _brief(found) == [("gate-excludes-arch", "high", "eng/fp8.py", 18)]


def test_the_platform_is_no_setting() -> None:
    """`get_platform().is_sm100()` asks the hardware, `get_x_backend().is_y()` a setting."""
    text = _MOE.format(test="get_platform().is_blackwell() and get_moe_runner_backend().is_cutlass()")
    facts = facts_for_bytes("eng/fp8.py", text.encode(), True)
    assert facts is not None
    (assert_,) = [d for d in facts.decisions if d.kind == "assert"]
    assert assert_.within == (("cutlass",),)
