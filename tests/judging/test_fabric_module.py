"""An entry point gated by a decorator in a module whose code uses one fabric (issue 14, "a need only
with evidence"): FlashInfer's `comm/mixed_comm.py` gates `_common_check` with
`@supported_compute_capability([90, 100])`, and its handler always creates NVLS multicast objects
(`cuMulticastCreate`): leaving 12.0 (PCIe, no multicast) out is expected. An instruction set the
module's code names is no such evidence (`_sm100_module`, another function's import)."""

from __future__ import annotations

from pathlib import Path

from .test_decisions import _scan

_COMM = """
from cuda.bindings import driver as cuda

from eng.utils import supported_compute_capability


class Handler:
    def __init__(self, prop):
        self.mc_handle = cuda.{call}(prop)


@supported_compute_capability([90, 100])
def _common_check(handler, x):
    return x is not None
"""


def test_a_module_that_uses_a_fabric_is_the_path_its_decorator_gates(tmp_path: Path) -> None:
    (found,) = _scan(tmp_path / "mc", {"eng/comm/mixed.py": _COMM.format(call="cuMulticastCreate")})
    assert found.severity == "low"
    assert found.extra["evidence"] == "'multicastcreate' (line 8) in the module's code"
    assert "needs NVLS multicast" in found.consequence


def test_an_instruction_set_the_module_names_is_no_such_evidence(tmp_path: Path) -> None:
    (found,) = _scan(tmp_path / "sm", {"eng/comm/mixed.py": _COMM.format(call="load_sm100_module")})
    assert found.severity == "medium"
