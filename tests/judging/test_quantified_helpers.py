"""A helper that asks about several archs in a loop (`any(family(f) for f in (80, 90, 120))`), and
a guard clause that calls such a helper of its own module, whose name says nothing of archs."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_GUARDED = """
import torch


def _on_portable_path():
    return any(torch.cuda.get_device_capability()[0] == f for f in (8, 9, 12))


def supports_fp4_cache(dtype):
    if _on_portable_path():
        return dtype == "fp4"
    return torch.cuda.get_device_capability()[0] == 10 and dtype.startswith("fp4")
"""


def test_a_guard_through_a_quantified_helper_reaches_the_target_first(tmp_path: Path) -> None:
    # 12.0 takes the first return; the family-10 test below is never its decision
    assert _brief(_scan(tmp_path, {"eng/cache.py": _GUARDED})) == []


def test_all_over_a_tuple_is_a_conjunction(tmp_path: Path) -> None:
    body = """
    import torch


    def _at_least(n):
        return torch.cuda.get_device_capability()[0] >= n


    def fast_path():
        if all(_at_least(m) for m in (9, 10)):
            return "fast"
        return "slow" if torch.cuda.get_device_capability()[0] < 9 else "fast"
    """
    found = _scan(tmp_path, {"eng/pick.py": body})
    assert found == []  # 12.0 is at least 10: it takes the fast path with 10.x


def test_the_same_guard_without_the_target_leaves_it_to_the_family_test(tmp_path: Path) -> None:
    body = _GUARDED.replace("(8, 9, 12)", "(8, 9)")
    found = _scan(tmp_path, {"eng/cache.py": body})
    assert [(f.line, f.present) for f in found] == [(9, ("9.0",)), (11, ("10.0", "10.3"))]
