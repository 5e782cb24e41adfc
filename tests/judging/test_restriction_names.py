"""A predicate named for a restriction (`is_deprecated`, `_is_unsupported`, `should_skip_x`) says
yes to restrict (issue 14, point 2: being left out of a deprecation is good for the target)."""

from __future__ import annotations

from pathlib import Path

from .test_decisions import _scan

_SCHEMA = """
import torch

def pick(dtype, allow_fallback):
    sm_version = torch.cuda.get_device_capability()[0] * 10

    def {name}(dtype):
        if dtype is None:
            return False
        return dtype == "int4" and sm_version >= 90

    if {name}(dtype) and not allow_fallback:
        log("int4 activations are slow here")
    return run(dtype)
"""


def test_a_deprecation_predicate_leaves_no_gap_for_the_arch_it_spares(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/schema.py": _SCHEMA.format(name="is_deprecated")}, arch="8.9")
    assert [f for f in found if f.severity != "low"] == []


def test_the_same_predicate_named_for_a_capability_is_still_read_as_a_path(tmp_path: Path) -> None:
    found = _scan(tmp_path, {"eng/schema.py": _SCHEMA.format(name="is_fast")}, arch="8.9")
    said = "sm_version leaves 8.9 out: 9.0, 10.0, 10.3, 11.0, 12.0, 12.1 returns True, 8.9 returns False"
    assert [(f.severity, f.message) for f in found if f.line == 9] == [("medium", said)]


def test_an_if_chain_predicate_named_for_a_restriction_restricts_with_true(tmp_path: Path) -> None:
    tree = {
        "eng/quirks.py": """
import torch

def _is_broken_driver(version):
    major, minor = torch.cuda.get_device_capability()
    if major == 10 and version >= 595:
        return True
    return False
"""
    }
    assert [f for f in _scan(tmp_path, tree, arch="12.0") if f.severity != "low"] == []
