"""`fix --values`: measured tune values become entries in the module's own units and layout."""

from __future__ import annotations

from pathlib import Path

from capgap.arch import parse_arch
from capgap.semantic.fixer import plan_fix
from capgap.semantic.values import measured_lookup
from tests.semantic.test_fixer import FINDINGS, SYMM, _tree

MEASURED_NOTE = "measured on this machine by capgap tune"
COPIED = "copied from 10 (cc 10.0) by capgap: not measured on this GPU"
VALUES = {
    "format": "capgap.tune.values/1",
    "tables": {"TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES": {"12": {2: 48 * 1024 * 1024}}},
    "multimem_world_sizes": {"12": []},
    "arch": "12.0",
    "world_size": 2,
    "margin": 0.05,
}


def test_measured_sizes_and_multimem(tmp_path: Path) -> None:
    plan = plan_fix(FINDINGS, _tree(tmp_path), parse_arch("12.0"), measured=measured_lookup(VALUES))
    assert [(e.origin, e.edit.value) for e in plan.entries] == [
        ("measured", "{\n        2: 48 * MiB,\n    }"),
        ("partly-measured", "[6, 8]"),  # world size 2 measured (no multimem); 6 and 8 not measured: kept
    ]
    kept = f"world size 2 {MEASURED_NOTE}; 6, 8 {COPIED}"
    expected = SYMM.replace(
        "        4: 32 * MiB,\n    },\n}",
        f"        4: 32 * MiB,\n    }},\n    12: {{  # {MEASURED_NOTE}\n        2: 48 * MiB,\n    }},\n}}",
    ).replace("        10: [6, 8],\n", f"        10: [6, 8],\n        12: [6, 8],  # {kept}\n")
    assert plan.changed == {"pkg/symm.py": expected}


def test_only_the_measured_world_size_is_marked_measured(tmp_path: Path) -> None:
    """The issue's case: multimem [] for world size 8 takes 8 out of 10's [6, 8]; the 6 that is
    left was copied, and the comment says so."""
    values = {**VALUES, "multimem_world_sizes": {"12": []}, "world_size": 8, "tables": {}}
    plan = plan_fix(FINDINGS[1:], _tree(tmp_path), parse_arch("12.0"), measured=measured_lookup(values))
    [entry] = plan.entries
    assert (entry.origin, entry.edit.value, entry.copied_from) == ("partly-measured", "[6]", "10.0")
    assert f"12: [6],  # world size 8 {MEASURED_NOTE}; 6 {COPIED}\n" in plan.changed["pkg/symm.py"]


def test_measured_world_size_with_multimem_is_added(tmp_path: Path) -> None:
    values = {**VALUES, "multimem_world_sizes": {"12": [2]}, "tables": {}}
    plan = plan_fix(FINDINGS[1:], _tree(tmp_path), parse_arch("12.0"), measured=measured_lookup(values))
    assert [(e.origin, e.edit.value) for e in plan.entries] == [("partly-measured", "[2, 6, 8]")]


def test_values_for_another_arch_are_not_used(tmp_path: Path) -> None:
    values = {**VALUES, "arch": "9.0", "tables": {"TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES": {"9": {2: 1}}}}
    plan = plan_fix(FINDINGS[:1], _tree(tmp_path), parse_arch("12.0"), measured=measured_lookup(values))
    assert [(e.origin, e.copied_from) for e in plan.entries] == [("copied", "10.0")]


def test_odd_size_is_written_in_bytes(tmp_path: Path) -> None:
    values = {**VALUES, "tables": {"TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES": {"12": {2: 1000, 4: 2048}}}}
    plan = plan_fix(FINDINGS[:1], _tree(tmp_path), parse_arch("12.0"), measured=measured_lookup(values))
    assert plan.entries[0].edit.value == "{\n        2: 1000,\n        4: 2048,\n    }"
