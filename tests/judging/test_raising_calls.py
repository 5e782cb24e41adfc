"""Calls that raise when their test holds are asserts (judging.raisingcalls): cuDNN frontend 1.32's
`self._not_implemented_error_if(cap != (10, 0), "...")` and `self._runtime_error_if(cc < 100, ...)`,
PyTorch's `torch._check(ok, lambda: "...")`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from capgap.judging import raisingcalls
from tests.judging.test_decisions import _scan

_API = """
import torch


class EngramGate:
    def check_support(self):
        self._capability = torch.cuda.get_device_capability(self._device)
        self.{helper}(self._capability != (10, 0), "Engram gate {words}")
        self._kernel = build_gate_kernel()
        return True
"""


def test_a_raise_if_call_on_the_capability_is_a_refusal(tmp_path: Path) -> None:
    code = _API.format(helper="_not_implemented_error_if", words="runs its kernels with tcgen05 only")
    (found,) = _scan(tmp_path, {"eng/api.py": code})
    said = "self._capability leaves 12.0 out: 10.0 continues, 12.0 raises NotImplementedError"
    assert found.message.startswith(said)
    assert found.line == 7


def test_without_a_raise_if_helper_nothing_is_decided(tmp_path: Path) -> None:
    code = _API.format(helper="_log_if", words="runs its kernels with tcgen05 only")
    assert _scan(tmp_path, {"eng/api.py": code}) == []


_ADMITS = """
import torch


class GemmAmax:
    def check_support(self):
        major, minor = torch.cuda.get_device_capability()
        compute_capability = major * 10 + minor
        self._runtime_error_if(compute_capability < 100, "GemmAmax requires SM100+")
        self._kernel = Sm100BlockScaledPersistentDenseGemmKernel
        return True
"""


def test_a_floor_checked_by_a_raise_if_call_admits_the_target_into_what_follows(tmp_path: Path) -> None:
    (found,) = _scan(tmp_path, {"eng/amax.py": _ADMITS})
    assert (found.rule, found.severity) == ("gate-admits-unsupported", "medium")
    assert "needs tcgen05" in found.message


@pytest.mark.parametrize(
    ("code", "holds", "error"),
    [
        ('self._value_error_if(x < 1, "x must be positive")', "not x < 1", "ValueError"),
        ('raise_if(cc != 90, "needs Hopper")', "not cc != 90", ""),
        ('torch._check(cc >= 90, lambda: "needs Hopper")', "cc >= 90", ""),
        ('check(cc >= 90, "needs Hopper")', "cc >= 90", ""),
    ],
)
def test_what_runs_after_a_raising_call(code: str, holds: str, error: str) -> None:
    read = raisingcalls.read(ast.parse(code).body[0].value)  # type: ignore[attr-defined]
    assert read is not None
    assert (ast.unparse(read[0]), read[1]) == (holds, error)


@pytest.mark.parametrize("code", ["check(x)", "self._log_if(x, 'y')", "torch.cuda.synchronize()"])
def test_calls_that_raise_nothing_of_the_kind(code: str) -> None:
    assert raisingcalls.read(ast.parse(code).body[0].value) is None  # type: ignore[attr-defined]
