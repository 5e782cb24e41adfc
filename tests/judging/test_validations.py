"""A backend a sibling gets by name is judged by the engine's own check of that name."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_OVERRIDE = """
import torch


def default_backend():
    if torch.cuda.get_device_capability()[0] == 10:
        return {"attention_backend": "fast_mha"}
    return {}
"""

_CHECK = """
import torch


def check(backend):
    major = torch.cuda.get_device_capability()[0]
    if backend == "fast_mha" and not ({admitted}):
        raise ValueError("fast_mha needs another GPU")
"""


def test_a_name_the_engine_refuses_on_the_target_is_expected(tmp_path: Path) -> None:
    found = _scan(
        tmp_path, {"eng/override.py": _OVERRIDE, "eng/check.py": _CHECK.format(admitted="major == 10")}
    )
    assert _brief(found) == [("gate-excludes-arch", "low", "eng/override.py", 5)]
    assert found[0].extra["evidence"].startswith("the engine's own check at eng/check.py:6")
    assert "refused this path by the engine itself" in found[0].consequence


def test_a_name_the_engine_accepts_on_the_target_stays_a_loss(tmp_path: Path) -> None:
    admitted = "major == 9 or major == 10 or major == 12"
    found = _scan(tmp_path, {"eng/override.py": _OVERRIDE, "eng/check.py": _CHECK.format(admitted=admitted)})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/override.py", 5)]
    assert found[0].extra["evidence"] == "the engine's own check at eng/check.py:6 lets 12.0 through"


def test_a_check_of_another_name_says_nothing(tmp_path: Path) -> None:
    other = _CHECK.format(admitted="major == 10").replace('"fast_mha"', '"slow_mha"')
    found = _scan(tmp_path, {"eng/override.py": _OVERRIDE, "eng/check.py": other})
    assert _brief(found) == [("gate-excludes-arch", "medium", "eng/override.py", 5)]
    assert "evidence" not in found[0].extra
