"""Kernel families spelled in the names around a decision (judging.evidence NEEDS)."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_FA3_FACTORY = """
import torch


def create_flashattention_v3_backend(runner):
    major, minor = torch.cuda.get_device_capability()
    assert major == 8 or major == 9, "this backend runs on SM80 to SM90 only"
    return object()
"""


def test_flashattention_v3_spelled_whole_is_hopper_s_wgmma_kernel(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/registry.py": _FA3_FACTORY})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/registry.py", 6)]
    assert found[0].extra["evidence"] == "the name create_flashattention_v3_backend"
