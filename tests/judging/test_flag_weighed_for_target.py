"""A flag a gate sets for the owners, read again a line later beside the target's arch by name
(`if not self._supports_tc and arch not in ((9, 0), (12, 0)): raise`): the authors let the target
in without the flag on purpose, so going without it is no path it was left out of."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_RUNNER = """
import torch


class Runner:
    def check(self, device):
        arch = torch.cuda.get_device_capability(device)
        self._supports_tc = arch in ((10, 0), (10, 3))
        if not self._supports_tc and arch not in {others}:
            raise NotImplementedError("runner requires SM90, SM100, SM103 or SM120")
        return self._supports_tc
"""


def test_the_target_named_beside_the_flag_is_the_authors_choice(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/runner.py": _RUNNER.format(others="((9, 0), (12, 0))")})
    assert _brief(found) == []


def test_a_flag_read_beside_other_archs_only_still_leaves_the_target_out(tmp_path: Path) -> None:
    # 12.0 is not named: it raises without the flag, the loss stands
    found = _scan(tmp_path, {"eng/runner.py": _RUNNER.format(others="((9, 0), (8, 0))")})
    assert _brief(found) == [
        ("gate-excludes-arch", "medium", "eng/runner.py", 7),
        ("gate-excludes-arch", "medium", "eng/runner.py", 8),
    ]
