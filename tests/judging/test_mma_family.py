"""A gate whose admitted GPUs are exactly those with tcgen05, over more than one generation
(`capability.major in (10, 11)`: datacenter Blackwell and Thor), was written for that instruction
set: a GPU without it is expected to be left out (low, with what it was read from). vLLM's Inkling
`_use_sheared_bias` and `uses_fa4_hd256_kernel` (judged expected in seven held-out sets). One
generation (`major == 10`) says nothing of why, and a decision with a test of its own for the
target (`if cap >= (12, 0): return False, "... not supported ... yet"`) knows of it."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_PICK = """
import torch


def _use_sheared_bias():
    capability = torch.cuda.get_device_capability()
    return capability is not None and {test}


def attend(q, bias):
    if _use_sheared_bias():
        from eng.sheared import attention

        return attention(q, rel_bias=bias)
    from eng.plain import attention

    return attention(q, score_mod=bias)
"""


def _gates(found: list) -> list:
    return [f for f in found if f.rule == "gate-excludes-arch"]


def test_a_gate_admitting_exactly_the_tcgen05_gpus_leaves_the_target_out_as_expected(
    tmp_path: Path,
) -> None:
    found = _gates(_scan(tmp_path, {"eng/pick.py": _PICK.format(test="capability[0] in (10, 11)")}))
    # judged where the predicate is called (tests/judging/test_quiet_predicates.py)
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/pick.py", 10)]
    assert "exactly the GPUs with tcgen05 (10.0, 10.3, 11.0)" in found[0].extra["evidence"]


def test_the_same_gate_read_at_thor_is_no_finding(tmp_path: Path) -> None:
    # (11.0 is admitted: nothing is left out)
    assert (
        _gates(_scan(tmp_path, {"eng/pick.py": _PICK.format(test="capability[0] in (10, 11)")}, arch="11.0"))
        == []
    )


def test_one_generation_says_nothing_of_why(tmp_path: Path) -> None:
    found = _gates(_scan(tmp_path, {"eng/pick.py": _PICK.format(test="capability[0] == 10")}))
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/pick.py", 10)]


def test_a_decision_with_its_own_test_for_the_target_keeps_the_gap(tmp_path: Path) -> None:
    text = """
    import torch


    def mxfp8_support():
        cap = torch.cuda.get_device_capability()
        if cap >= (12, 0):
            return False, "MXFP8 is not supported on 12.0+ architectures yet."
        if cap >= (10, 0):
            return True, ""
        return False, "Device compute capability 10.0 or higher required for MXFP8."
    """
    found = _gates(_scan(tmp_path, {"eng/support.py": text}))
    assert [f.severity for f in found] == ["medium"]
