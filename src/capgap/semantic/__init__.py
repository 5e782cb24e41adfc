"""Semantic patches: capability-table entries kept by meaning, not by line.

The API the patch pipeline calls:
- `lift(rel_path, pristine_text, patched_text) -> list[dict] | None`
- `reapply(records, root, rel_path, current_text, prefer="upstream") -> Result`
"""

from __future__ import annotations

from capgap.semantic.lift import lift
from capgap.semantic.reapply import OUTCOMES, Result, reapply
from capgap.semantic.record import SemanticEdit
from capgap.semantic.upsert import EntryChange, UpsertEntry, upsert_source

__all__ = [
    "OUTCOMES",
    "EntryChange",
    "Result",
    "SemanticEdit",
    "UpsertEntry",
    "lift",
    "reapply",
    "upsert_source",
]
