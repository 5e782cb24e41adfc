"""A function that says what its callers are required to do (`get_required_kv_cache_layout`)
answers with a constraint put on the archs it names (10.x's trtllm-gen cubins read head-major
blocks: "HND"); the target, given no requirement, goes without nothing (vLLM 0.28.0
v1/attention/backends/flashinfer.py:565). A function of another name keeps the loss."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_BACKEND = """
import torch


class Backend:
    @classmethod
    def {name}(cls):
        capability = torch.cuda.get_device_capability()
        if capability[0] == 10:
            return "HND"
        return None
"""


def test_a_requirement_only_the_owners_have_is_no_loss(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/backend.py": _BACKEND.format(name="get_required_kv_cache_layout")})
    assert _brief(found) == []


def test_a_choice_of_layout_is_still_a_path(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/backend.py": _BACKEND.format(name="get_preferred_kv_cache_layout")})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/backend.py", 8)]
