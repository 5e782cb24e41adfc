"""A decision only reached under a setting the target cannot have is no loss of the target's; nor is
a path the target's own branch says its arch does not support."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_SWAP = """
import torch


def is_sm100():
    return torch.cuda.get_device_capability()[0] == 10


def hicache_decode(decode_backend):
    if decode_backend == {required!r}:
        return "fast_mla" if is_sm100() else "slow_mla"
    return decode_backend
"""

_CHECK = """
import torch


def check(backend):
    major = torch.cuda.get_device_capability()[0]
    if backend == "hopper_attn" and not (major == 9 or major == 10):
        raise ValueError("hopper_attn needs another GPU")
"""


def test_a_decision_under_a_kernel_family_the_target_lacks_is_unreachable(tmp_path: Path) -> None:
    # FA3 is a wgmma kernel family: 12.0 never has decode_backend == "fa3"
    found = _scan(tmp_path, {"eng/swap.py": _SWAP.format(required="fa3")})
    assert [b for b in _brief(found) if b[2] == "eng/swap.py"] == []


def test_a_decision_under_a_name_the_engine_refuses_is_unreachable(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/swap.py": _SWAP.format(required="hopper_attn"), "eng/check.py": _CHECK})
    assert [b for b in _brief(found) if b[2] == "eng/swap.py"] == []


def test_a_decision_under_a_portable_name_stays_a_loss(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/swap.py": _SWAP.format(required="paged")})
    assert ("gate-excludes-arch", "medium", "eng/swap.py", 10) in _brief(found)


_FALLBACK = """
import logging

import torch

logger = logging.getLogger(__name__)


def pick(backend):
    major = torch.cuda.get_device_capability()[0]
    if major == 12:
        logger.info("{words}")
        return None
    elif major == 10:
        set_version(4)
    return backend


def set_version(v):
    pass
"""


def test_the_targets_own_branch_saying_it_is_unsupported_is_expected(tmp_path: Path) -> None:
    words = "FlashAttention is not supported on SM12.x in this build; falling back to SDPA."
    found = _scan(tmp_path, {"eng/pick.py": _FALLBACK.format(words=words)})
    gates = [f for f in found if f.rule == "gate-excludes-arch" and f.path == "eng/pick.py"]
    assert [f.severity for f in gates] == ["low"]
    assert "the branch written for 12.0" in gates[0].consequence


def test_the_targets_own_branch_without_such_words_stays_a_loss(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/pick.py": _FALLBACK.format(words="Using SDPA on this GPU.")})
    gates = [f for f in found if f.rule == "gate-excludes-arch" and f.path == "eng/pick.py"]
    assert [f.severity for f in gates] == ["medium"]


_DEFAULTS = """
import torch


class Args:
    def pick_default(self):
        if self.attention_backend is None:
            if torch.cuda.get_device_capability()[0] == 10:
                self.attention_backend = "{theirs}"
            else:
                self.attention_backend = "{mine}"
"""


def test_a_default_that_gives_the_target_only_the_fallback_is_high(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/args.py": _DEFAULTS.format(theirs="paged_mla", mine="triton")})
    gates = [f for f in found if f.rule == "gate-excludes-arch"]
    assert [f.severity for f in gates] == ["high"]
    assert "this is the default (self.attention_backend unset)" in gates[0].consequence


def test_a_default_that_gives_the_target_a_named_backend_is_no_fallback(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/args.py": _DEFAULTS.format(theirs="paged_mla", mine="flash_mla2")})
    assert all(f.severity != "high" for f in found if f.rule == "gate-excludes-arch")


def test_a_choice_outside_a_default_stays_medium(tmp_path: Path) -> None:
    code = _DEFAULTS.format(theirs="paged_mla", mine="triton").replace("is None", "== 'auto'")
    found = _scan(tmp_path, {"eng/args.py": code})
    assert [f.severity for f in found if f.rule == "gate-excludes-arch"] == ["medium"]


_PADDING = """
import torch

_IS_SM100 = torch.cuda.get_device_capability()[0] == 10


def round_up(x, m):
    return (x + m - 1) // m * m


class Method:
    def create_weights(self, size, has_other):
        padded = size
        if _IS_SM100:
            if self.use_fast:
                padded = round_up(size, 256)
            else:
                padded = round_up(size, 64)
        elif has_other:
            padded = {mine}
        return padded
"""


def test_per_arch_padding_with_the_same_rounding_is_tuning(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/pad.py": _PADDING.format(mine="round_up(size, 32)")})
    gates = [f for f in found if f.rule == "gate-excludes-arch" and f.path == "eng/pad.py"]
    assert [f.severity for f in gates] == ["low"]
    assert gates[0].consequence.startswith("tuning only")


def test_padding_beside_a_call_of_something_else_stays_a_loss(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/pad.py": _PADDING.format(mine="build_layout(size)")})
    gates = [f for f in found if f.rule == "gate-excludes-arch" and f.path == "eng/pad.py"]
    assert [f.severity for f in gates] == ["medium"]
