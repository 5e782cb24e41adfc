"""A branch saying the target is unsupported, in a tree that holds a port of that very thing for
the target's family, is stale (rules.gate_excludes_arch._says_unsupported): sglang 0.5.18-0.5.23
downgrade an explicit FlashAttention backend on SM12.x to SDPA, "not supported on SM12.x in this
build", beside their own `flash_attention_v4_sm120.py` (judged a medium gap); 0.5.9, which has no
such port, is judged expected."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _scan

_PLATFORM = """
import logging

import torch

logger = logging.getLogger(__name__)


class FlashAttentionResolver:
    @classmethod
    def resolve(cls):
        if torch.cuda.get_device_capability()[0] == 12:
            logger.info(
                "FlashAttention is not supported on SM12.x in this build; falling back to Torch SDPA."
            )
            return "TORCH_SDPA"
        return "FA"
"""

_PORT = """
import torch


def flash_attn_func(q, k, v):
    if torch.cuda.get_device_capability()[0] != 12:
        raise RuntimeError("this forward is the SM120 one")
    return q
"""


def _resolver(found: list) -> object:
    (hit,) = [f for f in found if f.path.endswith("platforms/cuda.py")]
    return hit


def test_words_saying_unsupported_stand_without_a_port(tmp_path: Path) -> None:
    hit = _resolver(_scan(tmp_path, {"eng/platforms/cuda.py": _PLATFORM}))
    assert hit.severity == "low"
    assert "goes its own way" in hit.consequence


def test_a_port_for_the_family_in_the_tree_outdates_them(tmp_path: Path) -> None:
    files = {"eng/platforms/cuda.py": _PLATFORM, "eng/kernels/flash_attention_v4_sm120.py": _PORT}
    hit = _resolver(_scan(tmp_path, files))
    assert hit.severity == "medium"
    assert "the tree holds FlashAttention code for 12.x (eng/kernels/flash_attention_v4_sm120.py)" in (
        hit.consequence
    )


_DEFAULT = """
import logging

import torch

logger = logging.getLogger(__name__)


class Platform:
    @classmethod
    def default_attention_backend(cls):
        if torch.cuda.get_device_capability()[0] == 12:
            # On SM12.x, the FlashAttention wheels may not include support yet.
            # Default to Torch SDPA for correctness.
            logger.info("Defaulting to Torch SDPA backend on SM12.x")
            return "TORCH_SDPA"
        return "FA"
"""


def test_a_branch_of_the_target_s_own_that_its_comment_calls_a_workaround(tmp_path: Path) -> None:
    """sglang 0.5.19-0.5.23's default diffusion backend: the SM12.x branch is the target's own, but
    its comment says it is there for want of support (judged gaps: the tree holds the port)."""
    files = {"eng/platforms/cuda.py": _DEFAULT, "eng/kernels/flash_attention_v4_sm120.py": _PORT}
    hit = _resolver(_scan(tmp_path, files))
    assert hit.severity == "medium"
    assert "may not include support yet" in hit.extra["evidence"]
    assert "eng/kernels/flash_attention_v4_sm120.py" in hit.extra["evidence"]


def test_a_branch_of_the_target_s_own_with_no_such_words_is_its_path(tmp_path: Path) -> None:
    plain = _DEFAULT.replace("may not include support yet", "are slower here")
    files = {"eng/platforms/cuda.py": plain, "eng/kernels/flash_attention_v4_sm120.py": _PORT}
    assert [f for f in _scan(tmp_path, files) if f.path.endswith("platforms/cuda.py")] == []
