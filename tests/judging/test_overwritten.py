"""A decision whose outcomes are values the code sets again on every path before reading them decides
nothing (torch 2.13's flex-decode heuristic: `default_config` set for 9.0/10.x, then set again by an
if/else every arch takes)."""

from __future__ import annotations

from pathlib import Path

from .test_decisions import _scan

_HEURISTIC = """
import torch


def flex_decode_configs(head_dim, dtype, configs):
    capability = torch.cuda.get_device_capability()
    default_config = (64, 1, 2)
    if capability in [(9, 0), (10, 0), (10, 3)]:
        if head_dim > 128 and dtype == torch.float32:
            default_config = (64, 1, 2)
        else:
            default_config = (64, 3, 2)
    {between}
    if capability == (11, 0):
        default_config = (16, 1, 2)
    else:
        default_config = (64, 1, 2)
    configs.append(default_config)
    return configs
"""


def test_a_value_set_again_on_every_path_before_it_is_read_decides_nothing(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/heuristics.py": _HEURISTIC.format(between="")})
    assert [f.line for f in found if f.severity != "low"] == []


def test_a_read_in_between_keeps_the_decision(tmp_path: Path) -> None:
    code = _HEURISTIC.format(between="configs.append(default_config)")
    found = _scan(tmp_path, {"eng/heuristics.py": code})
    assert [f.line for f in found if f.rule == "gate-excludes-arch" and f.severity == "medium"] == [7]


def test_a_later_branch_that_sets_it_on_one_path_only_keeps_the_decision(tmp_path: Path) -> None:
    code = _HEURISTIC.format(between="").replace(
        "    else:\n        default_config = (64, 1, 2)\n    configs", "    configs"
    )
    found = _scan(tmp_path, {"eng/heuristics.py": code})
    assert 7 in [f.line for f in found if f.rule == "gate-excludes-arch" and f.severity == "medium"]
