"""A module that tests no capability but says in its docstring that it multicasts is still read
for what its callers' paths need (reading.tokens.KERNEL_TOKENS)."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_CALLER = """
import torch

from eng.comm.gather import reserve_workspace


def setup(comm, n):
    if torch.cuda.get_device_capability() == (10, 3):
        reserve_workspace(comm, n)
"""

_GATHER = '''
"""All-gather that multicast-stores each slice into every peer's workspace."""


def reserve_workspace(comm, n):
    comm.reserve(n)
'''

_PLAIN = '''
"""All-gather through peer-to-peer copies."""


def reserve_workspace(comm, n):
    comm.reserve(n)
'''


def test_a_path_whose_callee_multicasts_is_expected(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/setup.py": _CALLER, "eng/comm/gather.py": _GATHER})
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/setup.py", 7)]
    assert "multicast" in found[0].extra["evidence"]


def test_a_path_whose_callee_states_nothing_stays_a_loss(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/setup.py": _CALLER, "eng/comm/gather.py": _PLAIN})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/setup.py", 7)]


_GATE = """
import torch

from eng.topk.kernels import run_topk


def gvr_support_error():
    major, minor = torch.cuda.get_device_capability()
    if major != 10:
        return f"compute capability {major}.{minor} is outside the support set"
    return None


def topk(x):
    if gvr_support_error() is None:
        return run_topk(x)
    return x.topk(8)
"""

_KERNELS = """
from cutlass import cute
from cutlass.experimental import primitives as prims


@cute.kernel
def topk_kernel(x):
    # {comment}
    {code}


def run_topk(x):
    return topk_kernel(x)
"""


def _topk(tmp_path: Path, comment: str, code: str) -> list[tuple[str, str, str, int]]:
    files = {"eng/topk/gate.py": _GATE, "eng/topk/kernels.py": _KERNELS.format(comment=comment, code=code)}
    return _brief(_scan(tmp_path, files))


def test_an_instruction_set_the_kernel_code_spells_is_what_it_needs(tmp_path: Path) -> None:
    """A CuTe kernel that calls `prims.tcgen05_fence(...)` with no tcgen05 import needs tcgen05;
    before, a `@cute.kernel` was taken as read and needing nothing. (FlashInfer 0.7.4's GVR top-k,
    once cited for this, says "no tcgen05" in its docstring: see below.)"""
    found = _topk(tmp_path, "the epilogue", "prims.tcgen05_fence(prims.Tcgen05Fence.AFTER_THREAD_SYNC)")
    assert [(rule, severity) for rule, severity, _, _ in found] == [("gate-excludes-arch", "low")]


def test_a_comment_naming_an_instruction_set_is_no_kernel_code(tmp_path: Path) -> None:
    found = _topk(tmp_path, "unlike the tcgen05 path, a plain reduction", "x.reduce()")
    assert [(rule, severity) for rule, severity, _, _ in found] == [("gate-excludes-arch", "medium")]


def test_a_docstring_naming_an_instruction_set_is_no_kernel_code(tmp_path: Path) -> None:
    """FlashInfer 0.7.4's `gvr2_topk_decode.py`: "it uses only family-portable ops, no tcgen05"."""
    files = {
        "eng/topk/gate.py": _GATE,
        "eng/topk/kernels.py": '"""Top-k kernels: only family-portable ops, no tcgen05."""\n'
        + _KERNELS.format(comment="a plain reduction", code="x.reduce()"),
    }
    found = _brief(_scan(tmp_path, files))
    assert [(rule, severity) for rule, severity, _, _ in found] == [("gate-excludes-arch", "medium")]


def test_an_instruction_in_a_triple_quoted_argument_is_kernel_code(tmp_path: Path) -> None:
    code = 'cute.arch.inline_asm("""tcgen05.commit.cta_group::1.mbarrier""", x)'
    found = _topk(tmp_path, "the commit", code)
    assert [(rule, severity) for rule, severity, _, _ in found] == [("gate-excludes-arch", "low")]
