"""A predicate judged where it is written reads what its callers say when its answer is no
(issue 14, "a need only with evidence"): FlashInfer 0.7.4's Prims-TS MoE support check
`_device_supports_prims_ts()` (10.0/10.3/10.7), whose callers refuse with `return False,
_UNSUPPORTED_DEVICE_REASON`, a module sentence "requires an SM100, SM103, or SM107 CUDA device"."""

from __future__ import annotations

from pathlib import Path

from .test_decisions import _scan

_SUPPORT = """
import torch

_ARCHS = ((10, 0), (10, 3), (10, 7))
_REASON = (
    {reason}
    "that the installed DSL can natively target"
)


def _device_supports_moe(device) -> bool:
    if device.type != "cuda":
        return False
    cc = torch.cuda.get_device_capability(device)
    return cc in _ARCHS and dsl_available(*cc)


def check_bf16(runner, hidden_states):
    if not _device_supports_moe(hidden_states.device):
        return False, _REASON
    return True, ""
"""


def test_a_caller_s_refusal_naming_the_archs_required_is_the_evidence(tmp_path: Path) -> None:
    text = _SUPPORT.format(reason='"requires an SM100, SM103, or SM107 CUDA device "')
    (found,) = _scan(tmp_path / "named", {"eng/support.py": text})
    assert (found.line, found.severity) == (14, "low")
    assert "requires an SM100, SM103, or SM107 CUDA device" in found.consequence
    assert "needs tcgen05" in found.consequence


def test_a_refusal_that_names_no_arch_states_no_need(tmp_path: Path) -> None:
    text = _SUPPORT.format(reason='"requires a supported CUDA device "')
    (found,) = _scan(tmp_path / "unnamed", {"eng/support.py": text})
    assert (found.line, found.severity) == (14, "medium")
