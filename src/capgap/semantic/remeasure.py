"""`fix --values` over entries that are there already: measured values replace copied ones.

The scan reports only tables that lack the arch, so after a fix without values the tables the
values file speaks of are found here, in the target's own `.py` files (git: tracked files; an
installed dist: its RECORD), by a byte test on the names before any parse. For each such table
with an entry for the arch:
- an entry capgap wrote (a `fix-*` patch of the store records exactly that value) is replaced
  by the measured value, its comment saying what was measured and where the rest came from;
- an entry the user typed is replaced only with `--prefer ours`; otherwise it is kept, and the
  run says so (`FixPlan.kept`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import libcst as cst

from capgap.arch import ArchSpec
from capgap.semantic.fixer import FixPlan, MeasuredValue, PlannedEntry, ValueLookup, measured_note
from capgap.semantic.hardware import Machine, check_entry
from capgap.semantic.lift import entry_comment, split_inner_comment
from capgap.semantic.locate import code_of, iter_tables
from capgap.semantic.reapply import one_line
from capgap.semantic.record import SemanticEdit, module_name
from capgap.semantic.upsert import REPLACED, arch_keys, same_arch, same_value, style_of_table, upsert_source

# (path, symbol, key source) -> the value capgap wrote there, with its note
Written = dict[tuple[str, str, str], tuple[str, str]]


def written_by_capgap(store: Any, target: Any) -> Written:
    """The entries the store's `fix-*` patches for this target wrote."""
    from capgap.patches.apply import select

    out: Written = {}
    for patch in select(store, target):
        if patch.name.startswith("fix-"):
            for rec in patch.semantic or []:
                key = (str(rec.get("path")), str(rec.get("symbol")), str(rec.get("key")))
                out[key] = (str(rec.get("value")), str(rec.get("note") or ""))
    return out


def _needles(values: dict[str, Any]) -> list[bytes]:
    names = [k.rsplit(".", 1)[-1].lower().encode() for k in values.get("tables") or {}]
    return [*names, b"multimem"] if values.get("multimem_world_sizes") else names


def value_tables(
    root: Path, files: list[str], values: dict[str, Any], has: Callable[[str], bool]
) -> list[tuple[str, str, str]]:
    """(rel path, symbol, module text) of every table in `files` the values file has values for."""
    needles = _needles(values)
    out = []
    for rel in files:
        if not rel.endswith(".py"):
            continue
        try:
            data = (root / rel).read_bytes()
        except OSError:
            continue
        low = data.lower()
        if not any(n in low for n in needles):
            continue
        try:
            text = data.decode("utf-8")
            module = cst.parse_module(text)
        except (UnicodeDecodeError, cst.ParserSyntaxError, ValueError):
            continue
        symbols = dict.fromkeys(site.symbol for site in iter_tables(module) if has(site.symbol))
        out += [(rel, symbol, text) for symbol in symbols]
    return out


def _base_origin(note: str, by_capgap: bool) -> str:
    """Where the world sizes that were not measured come from, for the new comment."""
    copied = re.search(r"copied from .*", note)
    if copied:
        return copied.group(0)
    return "as capgap wrote them before" if by_capgap else "as they were in your entry"


def plan_measured(
    plan: FixPlan,
    tables: list[tuple[str, str, str]],
    lookup: ValueLookup,
    written: Written,
    *,
    prefer: str = "upstream",
    machine: Machine | None = None,
) -> None:
    """Add to `plan` the measured values for entries that exist already (see the module doc)."""
    arch: ArchSpec = plan.arch
    done = {(e.edit.path, e.edit.symbol) for e in plan.entries}
    for rel, symbol, text in tables:
        if (rel, symbol) in done:
            continue
        current = plan.updated.get(rel, text)
        module = cst.parse_module(current)
        table = next((s.table for s in iter_tables(module) if s.symbol == symbol), None)
        style = style_of_table(table) if table is not None else None
        if table is None or style is None:
            continue
        index = next((i for i, spec in arch_keys(table) if same_arch(spec, arch, style)), None)
        if index is None:
            continue  # no entry: the scan's finding covers it
        el = table.elements[index]
        assert isinstance(el, cst.DictElement)
        key = code_of(el.key)
        value, note = code_of(el.value), entry_comment(table, index)
        if not note:
            bare, note = split_inner_comment(el.value)
            value = code_of(bare)
        found = lookup(symbol, arch, value, current)
        if isinstance(found, str):
            found = MeasuredValue(found)
        if found is None:
            continue
        ours = written.get((rel, symbol, key))
        by_capgap = ours is not None and same_value(ours[0], value)
        new_note = measured_note(found, _base_origin(note, by_capgap))
        if same_value(found.value, value) and (not by_capgap or note == new_note):
            continue  # nothing to change (an equal entry capgap wrote gets the true comment)
        entry = f"{rel}: {symbol}[{key}]"
        if not by_capgap and prefer != "ours":
            plan.kept.append(
                f"{entry} = {one_line(value)}: kept (not written by capgap); --prefer ours replaces it "
                f"with the measured {one_line(found.value)}"
            )
            continue
        new_text, changes = upsert_source(
            current, symbol, arch, found.value, style=style, comment=new_note, prefer="ours", recomment=True
        )
        if not changes or changes[0].action != REPLACED:
            continue
        plan.originals.setdefault(rel, text)
        plan.updated[rel] = new_text
        edit = SemanticEdit(
            module=module_name(rel),
            path=rel,
            symbol=symbol,
            key=key,
            value=found.value,
            key_style=style,
            note=new_note,
            prefer="ours" if prefer == "ours" else "",
        )
        what = "the entry capgap copied" if by_capgap else "your entry (--prefer ours)"
        origin = "partly-measured" if found.kept else "measured"
        warnings = tuple(check_entry(symbol, arch, found.value, module_source=new_text, machine=machine))
        plan.entries.append(
            PlannedEntry(edit, origin, "", f"--values, over {what} {one_line(value)}", REPLACED, warnings)
        )
