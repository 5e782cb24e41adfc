"""A branch that copies a config with features turned off (`dataclasses.replace(cfg,
is_dynamic_persistent=False)`) restricts the GPUs that take it (issue 14, point 2: polarity):
unsloth-zoo's sonic-moe pins the CLC scheduler off on sm100 for a correctness bug."""

from __future__ import annotations

from pathlib import Path

from tests.judging.test_decisions import _brief, _scan

_PINNED = """
import dataclasses

import torch


def pinned_config(module, device):
    cap = torch.cuda.get_device_capability(device)[0]
    cfg = module.default_config(device)
    if cap == 10 and getattr(cfg, "is_dynamic_persistent", False):
        cfg = dataclasses.replace(cfg, {keywords})
    return cfg
"""


def test_a_config_copied_with_a_feature_off_is_a_restriction(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/pinned.py": _PINNED.format(keywords="is_dynamic_persistent=False")})
    assert [f for f in found if f.severity != "low"] == []


def test_a_config_copied_with_a_setting_of_its_own_is_a_path(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/pinned.py": _PINNED.format(keywords="tile_m=256")})
    assert [(f.rule, f.severity, f.line) for f in found] == [("gate-excludes-arch", "medium", 9)], _brief(
        found
    )
