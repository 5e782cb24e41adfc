"""gate-admits-unsupported: a path selected by the name of a kernel family built for one arch
family only (TRT-LLM-gen, `flashinfer_trtllm`) is direct evidence; the same name read in
passing (a flag of the user's choice) is not."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_RESOLVE = """
import enum

import torch


class Backend(enum.Enum):
    MARLIN = "marlin"
    FLASHINFER_TRTLLM = "flashinfer_trtllm"


def resolve_backend(backend):
    if backend is not None:
        return backend
    if (8, 0) <= torch.cuda.get_device_capability() < (10, 0):
        return Backend.MARLIN
    return Backend.FLASHINFER_TRTLLM
"""

_IN_PASSING = """
import torch


class Method:
    def __init__(self, backend):
        if torch.cuda.get_device_capability()[0] < 10:
            raise ValueError("needs Blackwell and above")
        self.use_flashinfer_trtllm = backend.is_flashinfer_trtllm()
"""


def test_the_default_resolving_to_an_sm100_only_family_on_the_target_is_high(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/moe.py": _RESOLVE})
    assert _brief(found) == [("gate-admits-unsupported", "high", "eng/moe.py", 14)]
    assert found[0].symbol == "get_device_capability"


def test_a_family_named_in_passing_is_no_evidence_of_a_path(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/method.py": _IN_PASSING})
    assert [f for f in found if f.rule == "gate-admits-unsupported"] == []
