"""A capability predicate is judged where it is asked (judging.callers): the caller's decision holds
the path, its evidence and its cost; the definition alone is judged only when nothing asks it."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_PREDICATE = """
from importlib.util import find_spec

import torch


def _fused_on_blackwell() -> bool:
    return torch.cuda.get_device_capability()[0] == 10 and find_spec("fused_ext") is not None
"""

_CALLER = """
from eng.caps import _fused_on_blackwell


def setup(layer):
    if _fused_on_blackwell():
        layer.fused = True
"""


def test_a_predicate_asked_by_a_judged_decision_is_reported_there_only(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/caps.py": _PREDICATE, "eng/layer.py": _CALLER})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/layer.py", 5)]


_OWN_NAMESAKE = """
import torch


def _fused_on_blackwell() -> bool:
    return torch.cuda.get_device_capability()[0] >= 10


def setup(layer):
    if _fused_on_blackwell():
        layer.fused = True
"""


def test_a_namesake_another_module_defines_and_asks_is_not_its_caller(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/caps.py": _PREDICATE, "eng/other.py": _OWN_NAMESAKE})
    assert ("gate-excludes-arch", "medium", "eng/caps.py", 6) in _brief(found)


def test_a_predicate_nothing_asks_is_judged_where_it_is_defined(tmp_path: Path) -> None:
    # called, but by no decision (a private function nothing calls at all is dead: judging.uncalled)
    user = "from eng.caps import _fused_on_blackwell\n\nFUSED = _fused_on_blackwell()\n"
    found = _scan(tmp_path, {"eng/caps.py": _PREDICATE, "eng/user.py": user})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/caps.py", 6)]


_FLAG_THEN_GATE = """
import torch


def _major():
    return torch.cuda.get_device_capability()[0]


def auto_fusion(cfg):
    prefer_custom = cfg.custom and _major() >= 10
    if (
        cfg.fusion is None
        and not prefer_custom
        and _major() in (9, 10)
        and cfg.tp > 1
    ):
        return {"fusion": "auto"}
    return {}
"""


def test_a_finding_names_the_operand_that_shuts_the_target_out(tmp_path: Path) -> None:
    # `prefer_custom` depends on the arch too, but admits 12.0: `_major() in (9, 10)` decides
    found = _scan(tmp_path, {"eng/fusion.py": _FLAG_THEN_GATE})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/fusion.py", 13)]
    assert found[0].symbol == "_major"


_RUN_OF_TESTS = """
import torch


def _sm100():
    return torch.cuda.get_device_capability()[0] == 10


def load_scales(k_scale, v_scale):
    # SM100 kernels expect scales as amax / 448, the checkpoint stores amax / 2688.
    # SM120 uses a different kernel path where scales already include this factor.
    if _sm100() and k_scale != 1.0:
        k_scale *= 6.0
    if _sm100() and v_scale != 1.0:
        v_scale *= 6.0
    return k_scale, v_scale
"""


def test_a_run_of_like_tests_shares_the_comment_above_its_first(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/scales.py": _RUN_OF_TESTS})
    assert _brief(found) == [
        ("gate-excludes-arch", "low", "eng/scales.py", 11),
        ("gate-excludes-arch", "low", "eng/scales.py", 13),
    ]
    assert all("goes its own way" in f.extra["evidence"] for f in found)


def test_a_caller_that_asks_a_helper_of_a_module_reading_the_device_asks_the_device(tmp_path: Path) -> None:
    # eng/layer.py spells no capability query; the helper it asks, in eng/caps.py, does
    found = _scan(tmp_path, {"eng/caps.py": _PREDICATE, "eng/layer.py": _CALLER})
    assert "never asks the GPU" not in found[0].consequence


_IFS_PREDICATE = """
import torch


def fused_verify_on_blackwell(n):
    if torch.cuda.get_device_capability()[0] != 10:
        return False
    if not 2 <= n <= 8:
        return False
    return True
"""


def test_a_predicate_written_with_ifs_no_judged_decision_asks_is_judged_where_defined(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/verify.py": _IFS_PREDICATE})
    assert [(f.rule, f.severity, f.line) for f in found] == [("gate-excludes-arch", "medium", 5)]


def test_a_predicate_written_with_ifs_a_decision_asks_is_judged_there(tmp_path: Path) -> None:
    caller = """
from eng.verify import fused_verify_on_blackwell


def verify(n):
    if fused_verify_on_blackwell(n):
        return fused_verify(n)
    return triton_verify(n)
"""
    found = _scan(tmp_path, {"eng/verify.py": _IFS_PREDICATE, "eng/run.py": caller})
    # (a caller module the scan never reads, one naming no capability, holds no decision)
    assert [f.path for f in found] == ["eng/run.py"]
