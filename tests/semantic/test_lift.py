"""Lifting: a textual change becomes semantic records only when it just adds/changes table entries."""

from __future__ import annotations

import textwrap

from capgap.semantic import SemanticEdit, lift

PRISTINE = textwrap.dedent("""
    import os

    MiB = 1024 * 1024


    class SymmConfig:
        # world sizes that use multimem
        _WORLD_SIZES_MULTIMEM = {
            9: [4, 6, 8],
            10: [6, 8],
        }

        def enabled(self, major):
            return major in self._WORLD_SIZES_MULTIMEM
""").lstrip()

ADDED = PRISTINE.replace("        10: [6, 8],\n", "        10: [6, 8],\n        12: [6, 8],  # mine\n")


def test_added_entry_is_lifted_with_its_comment() -> None:
    assert lift("pkg/symm.py", PRISTINE, ADDED) == [
        {
            "module": "pkg.symm",
            "path": "pkg/symm.py",
            "symbol": "SymmConfig._WORLD_SIZES_MULTIMEM",
            "key": "12",
            "value": "[6, 8]",
            "key_style": "major-int",
            "note": "mine",
        }
    ]


def test_changed_entry_is_lifted() -> None:
    records = lift("src/pkg/symm.py", PRISTINE, PRISTINE.replace("9: [4, 6, 8]", "9: [4, 8]"))
    assert records is not None
    assert [(r["module"], r["key"], r["value"]) for r in records] == [("pkg.symm", "9", "[4, 8]")]


def test_records_round_trip_through_json() -> None:
    records = lift("pkg/symm.py", PRISTINE, ADDED)
    assert records is not None
    assert [SemanticEdit.from_json(r).to_json() for r in records] == records


def test_change_outside_tables_is_not_lifted() -> None:
    assert lift("pkg/symm.py", PRISTINE, ADDED.replace("import os", "import sys")) is None


def test_comment_change_outside_tables_is_not_lifted() -> None:
    assert lift("pkg/symm.py", PRISTINE, ADDED.replace("# world sizes", "# The world sizes")) is None


def test_removed_entry_is_not_lifted() -> None:
    assert lift("pkg/symm.py", PRISTINE, PRISTINE.replace("        9: [4, 6, 8],\n", "")) is None


def test_non_capability_dict_is_not_lifted() -> None:
    before = "SIZES = {2: 1, 4: 2}\n"
    assert lift("pkg/a.py", before, "SIZES = {2: 1, 4: 2, 8: 3}\n") is None


def test_unparseable_or_non_python_is_not_lifted() -> None:
    assert lift("pkg/a.py", PRISTINE, ADDED + "def (:\n") is None
    assert lift("pkg/a.txt", PRISTINE, ADDED) is None
    assert lift("pkg/a.py", PRISTINE, PRISTINE) is None


def test_new_table_is_not_lifted() -> None:
    assert lift("pkg/a.py", PRISTINE, PRISTINE + "\nNEW = {9: 1, 12: 2}\n") is None
