"""Evidence read inside a later decision of the function, nested in the path, speaks for the GPUs
that decision sends there, not for the target: axolotl 0.19.0's `fa4_usable` lets 9.x, 10.x and
11.x through `if major not in (9, 10, 11): return False`, and only 10.x/11.x go on to
`_sm100_backward_supported()`. 12.0, let in, would run what 9.0 runs: the tcgen05 read from the
SM100 check is no reason it was left out."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _scan

_USABLE = """
import torch


def fa4_usable():
    major, _ = torch.cuda.get_device_capability()
    if major not in {archs}:
        return False
    try:
        from flash_attn.cute import flash_attn_func  # noqa: F401
    except ImportError:
        return False
    if major in (10, 11):
        if not _sm100_backward_supported():
            return False
    return True


def _sm100_backward_supported():
    return True


def attention(q):
    return q if fa4_usable() else -q
"""


def _gate(tmp_path: Path, archs: str) -> list:
    found = _scan(tmp_path, {"eng/fa4.py": _USABLE.format(archs=archs)})
    return [(f.severity, f.line) for f in found if f.rule == "gate-excludes-arch" and f.line == 6]


def test_a_check_only_some_gpus_of_the_path_take_is_no_need_of_the_path(tmp_path: Path) -> None:
    assert _gate(tmp_path, "(9, 10, 11)") == [("medium", 6)]


def test_a_check_every_gpu_of_the_path_takes_still_speaks_for_it(tmp_path: Path) -> None:
    # only 10.x and 11.0 get the path, and each of them goes on to the SM100 check
    assert _gate(tmp_path, "(10, 11)") == [("low", 6)]
