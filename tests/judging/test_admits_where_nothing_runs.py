"""gate-admits-unsupported where the target could run no outcome of the decision: `if sm == 90:
return run_sm90_mega(x)`, the SM100 path for everyone else (sglang 0.5.17-0.5.19 mega_moe.py).
Kept out, the target would get Hopper's kernel, which it cannot run either: it loses nothing but
the error it meets (low). Where the other outcome is a path it could run, it stays a loss."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _scan

_RUN = """
import torch


def run(x):
    sm = torch.cuda.get_device_capability()[0] * 10
    if sm == 90:
        return {other}(x)
    from kernels.mega_fwd_sm100 import MegaForward
    return MegaForward()(x)
"""


def _found(tmp_path: Path, other: str) -> list:
    found = _scan(tmp_path, {"eng/mega.py": _RUN.format(other=other)})
    return [f for f in found if f.rule == "gate-admits-unsupported"]


def test_a_hopper_only_other_outcome_leaves_only_the_error(tmp_path: Path) -> None:
    (found,) = _found(tmp_path, "run_sm90_mega")
    assert (found.severity, found.extra["needs"]) == ("low", ["tcgen05"])
    assert "could run no outcome of this decision" in found.consequence
    assert "needs wgmma" in found.consequence


def test_a_portable_other_outcome_keeps_the_loss(tmp_path: Path) -> None:
    (found,) = _found(tmp_path, "run_triton_mega")
    assert found.severity == "medium"
