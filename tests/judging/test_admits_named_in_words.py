"""A gate that lets the target into an arm giving a setting a name the words of the decision's other
arm call another generation's only ("MegaMoE ... are SM100-only; neither is selected here"): the
target is let into what it cannot run, and the engine's own choice fails (high)."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_OVERRIDES = """
from eng.platform import get_platform


def overrides(cfg):
    out = {{}}
    if not get_platform().is_blackwell:
        # {words}
        out.update(moe_runner_backend="marlin")
        return out
    out.update(moe_a2a_backend="megamoe")
    return out
"""

_PLATFORM = """
import torch


class Platform:
    @property
    def is_blackwell(self) -> bool:
        return torch.cuda.get_device_capability()[0] in (10, 12)


def get_platform() -> Platform:
    return Platform()
"""


def _found(tmp_path: Path, words: str) -> list[tuple[str, str, str, int]]:
    tree = {"eng/overrides.py": _OVERRIDES.format(words=words), "eng/platform.py": _PLATFORM}
    return [b for b in _brief(_scan(tmp_path, tree)) if b[2] == "eng/overrides.py"]


def test_a_name_the_other_arm_calls_sm100_only_is_a_path_the_target_cannot_run(tmp_path: Path) -> None:
    found = _found(tmp_path, "MegaMoE is SM100-only; it is not selected here.")
    assert found == [("gate-admits-unsupported", "high", "eng/overrides.py", 6)]


def test_words_that_name_no_value_of_the_arm_say_nothing_of_it(tmp_path: Path) -> None:
    found = _found(tmp_path, "The packed NVFP4 KV cache is SM100-only.")
    assert [b for b in found if b[0] == "gate-admits-unsupported"] == []


def test_words_naming_the_value_without_an_arch_say_nothing_of_it(tmp_path: Path) -> None:
    found = _found(tmp_path, "MegaMoE only pays off at large expert counts.")
    assert [b for b in found if b[0] == "gate-admits-unsupported"] == []
