"""A module's own capability predicate named for what it means (`_use_sheared_bias()`, no arch word
in the name) is judged where it is called: the statement cut keeps those calls too, or nothing of
the decision would be reported. A predicate that asks more than the GPU is judged at its
definition, as before, and its calls stay cut."""

from __future__ import annotations

from pathlib import Path

from capgap.reading import chunks
from capgap.reading.fileparse import facts_for_bytes
from tests.judging.test_decisions import _brief, _scan

_QUIET = """
import torch


def _fast_rope_ok() -> bool:
    if not torch.cuda.is_available():
        return False
    major, _ = torch.cuda.get_device_capability()
    return major == 9


def rope(x):
    y = x + 1
    if _fast_rope_ok():
        return fused_rope_kernel(y)
    return plain_rope(y)
"""


def test_the_cut_keeps_calls_of_names_it_is_given() -> None:
    data = _QUIET.encode()
    assert b"if _fast_rope_ok():" not in chunks.select(data).text  # no hint word on the line
    kept = chunks.select(data, frozenset({b"_fast_rope_ok"})).text
    assert b"if _fast_rope_ok():" in kept and b"return plain_rope(y)" in kept
    assert kept.count(b"\n") == data.count(b"\n")  # line numbers stay


def test_a_quiet_predicate_is_judged_where_it_is_called(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/rope.py": _QUIET})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/rope.py", 13)]
    assert "_fast_rope_ok leaves 12.0 out" in found[0].message
    assert "plain_rope(y)" in found[0].message


def test_a_predicate_that_asks_more_keeps_its_calls_cut() -> None:
    text = _QUIET.replace("return major == 9", "return major == 9 and has_deep_gemm()")
    facts = facts_for_bytes("eng/rope.py", text.encode(), True)
    assert facts is not None
    assert not any(d.line == 13 for d in facts.decisions)  # judged at its definition instead


def test_a_predicate_named_for_an_arch_needs_no_second_cut(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/rope.py": _QUIET.replace("_fast_rope_ok", "_is_sm90")})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/rope.py", 13)]


_SUPPORTED = """
import torch

SUPPORTED_CUDA_ARCHS = ((9, 0), (10, 0), (10, 3))


def {name}() -> bool:
    if torch.version.cuda is None or not torch.cuda.is_available():
        return False
    major, minor = torch.cuda.get_device_capability()
    return (major, minor) in SUPPORTED_CUDA_ARCHS
"""
_CALLER = """
from eng.select import {name}


def top_k(x, k):
    if {name}():
        return deep_select(x, k)
    return x.topk(k)
"""


def test_a_predicate_whose_calls_no_decision_holds_is_judged_where_it_is_written(tmp_path: Path) -> None:
    """sglang's `is_deep_select_supported()`, called from another module on a line with no hint
    word: no decision of the scan asks it, so its own answer is the finding (it was none)."""
    name = "is_deep_select_supported"
    files = {"eng/select.py": _SUPPORTED.format(name=name), "eng/topk.py": _CALLER.format(name=name)}
    found = [f for f in _scan(tmp_path, files) if f.rule == "gate-excludes-arch"]
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/select.py", 10)]


def test_a_predicate_named_for_a_gpu_is_left_to_its_callers(tmp_path: Path) -> None:
    files = {"eng/select.py": _SUPPORTED.format(name="using_h100_or_b200")}
    assert [f for f in _scan(tmp_path, files) if f.rule == "gate-excludes-arch"] == []
