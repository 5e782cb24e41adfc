"""Plan `capgap fix`: one entry per `table-missing-arch` finding, in memory, nothing written.

Each entry's value is measured (from `--values`) when the values file has it, else copied from
`--like ARCH` or from the sibling `choose_sibling` picks, with a comment saying so. The plan
holds the files before and after, the semantic records and the hardware warnings; writing it
is the caller's business (through the patch store's safe writer).
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst

from capgap.arch import ArchSpec
from capgap.findings import Finding
from capgap.semantic.hardware import Machine, check_entry
from capgap.semantic.locate import code_of, find_tables, qualify
from capgap.semantic.record import SemanticEdit, module_name
from capgap.semantic.sibling import arch_specific, choose_sibling
from capgap.semantic.upsert import INSERTED, REPLACED, arch_keys, same_arch, style_of_table, upsert_source

RULE = "table-missing-arch"
MEASURED_NOTE = "measured on this machine by capgap tune"


@dataclass(frozen=True)
class MeasuredValue:
    """A value from `--values`; `kept`: world sizes in it that were not measured but taken over
    from the entry it was built on (a multimem list), so the comment can say which is which."""

    value: str
    measured: tuple[int, ...] = ()
    kept: tuple[int, ...] = ()


# (symbol, arch, base value source, module source) -> the measured value, or None; the base is
# the sibling's value for a new entry, the entry itself when a measured value replaces it
ValueLookup = Callable[[str, ArchSpec, str, str], "MeasuredValue | str | None"]


def measured_note(found: MeasuredValue, base_origin: str) -> str:
    """The entry's comment: what was measured, and where the rest came from (`base_origin`)."""
    if not found.kept:
        return MEASURED_NOTE
    sizes = ", ".join(map(str, found.measured))
    kept = ", ".join(map(str, found.kept))
    return f"world size {sizes} {MEASURED_NOTE}; {kept} {base_origin}"


@dataclass(frozen=True)
class PlannedEntry:
    edit: SemanticEdit
    origin: str  # "measured" | "partly-measured" (a multimem list) | "copied"
    copied_from: str  # the sibling's cc ("" when measured)
    reason: str  # why this sibling / where the value came from
    action: str  # inserted | replaced | same | kept-upstream
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            **self.edit.to_json(),
            "origin": self.origin,
            "copied_from": self.copied_from,
            "reason": self.reason,
            "action": self.action,
            "warnings": list(self.warnings),
        }


@dataclass
class FixPlan:
    root: Path
    arch: ArchSpec
    originals: dict[str, str] = field(default_factory=dict)
    updated: dict[str, str] = field(default_factory=dict)
    entries: list[PlannedEntry] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path:symbol, reason)
    kept: list[str] = field(default_factory=list)  # entries the user typed that --values left alone

    @property
    def changed(self) -> dict[str, str]:
        return {rel: text for rel, text in self.updated.items() if text != self.originals.get(rel)}

    def records(self) -> list[dict[str, Any]]:
        return [e.edit.to_json() for e in self.entries if e.action in (INSERTED, REPLACED)]

    def warnings(self) -> list[str]:
        return [w for e in self.entries for w in e.warnings]

    def diff(self) -> str:
        out: list[str] = []
        for rel, text in sorted(self.changed.items()):
            out += difflib.unified_diff(
                self.originals[rel].splitlines(keepends=True),
                text.splitlines(keepends=True),
                fromfile=f"a/{rel}",
                tofile=f"b/{rel}",
            )
        return "".join(out)

    def to_json(self) -> dict[str, Any]:
        return {
            "arch": self.arch.cc,
            "root": str(self.root),
            "entries": [e.to_json() for e in self.entries],
            "files": sorted(self.changed),
            "skipped": [{"where": w, "reason": r} for w, r in self.skipped],
            "kept": self.kept,
            "warnings": self.warnings(),
        }


def _scoped_symbols(text: str) -> list[tuple[str, int, int]]:
    """(qualified symbol, first line, last line) of every dict assignment, via the stdlib AST."""
    out: list[tuple[str, int, int]] = []

    def walk(body: list[ast.stmt], scope: tuple[str, ...], kinds: tuple[str, ...]) -> None:
        for node in body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                kind = "class" if isinstance(node, ast.ClassDef) else "def"
                walk(node.body, (*scope, node.name), (*kinds, kind))
                continue
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
                targets = node.targets
            elif isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Dict):
                targets = [node.target]
            for t in targets:
                name = t.id if isinstance(t, ast.Name) else None
                if (
                    kinds[-2:] == ("class", "def")
                    and isinstance(t, ast.Attribute)
                    and isinstance(t.value, ast.Name)
                    and t.value.id == "self"
                ):
                    name = ".." + t.attr
                if name:
                    out.append((qualify(scope, name), node.lineno, node.end_lineno or node.lineno))
            for attr in ("body", "orelse", "finalbody"):  # if/try/with/for blocks add no scope
                sub = getattr(node, attr, None)
                if isinstance(sub, list):
                    walk(sub, scope, kinds)
            for handler in getattr(node, "handlers", None) or ():
                walk(handler.body, scope, kinds)

    try:
        walk(ast.parse(text).body, (), ())
    except SyntaxError:
        return []
    return out


def resolve_symbol(text: str, symbol: str, line: int = 0) -> str | None:
    """The qualified symbol of the table a finding names (by name, disambiguated by line)."""
    sites = _scoped_symbols(text)
    if any(s == symbol for s, _, _ in sites):
        return symbol
    name = symbol.rsplit(".", 1)[-1]
    same = [(s, a, b) for s, a, b in sites if s.rsplit(".", 1)[-1] == name]
    if len({s for s, _, _ in same}) == 1:
        return same[0][0]
    if same and line:
        return min(same, key=lambda x: 0 if x[1] <= line <= x[2] else abs(x[1] - line))[0]
    return None


def copied_note(key: str, spec: ArchSpec) -> str:
    return f"copied from {key} (cc {spec.cc}) by capgap: not measured on this GPU"


def plan_fix(
    findings: Iterable[Finding],
    root: Path,
    arch: ArchSpec,
    *,
    like: ArchSpec | None = None,
    measured: ValueLookup | None = None,
    machine: Machine | None = None,
    prefer: str = "upstream",
) -> FixPlan:
    plan = FixPlan(root=root, arch=arch)
    for f in findings:
        if f.rule != RULE or (f.arch and f.arch != arch.cc):
            continue
        where = f"{f.path}:{f.line} {f.symbol}"
        if f.path not in plan.originals:
            try:
                plan.originals[f.path] = (root / f.path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                plan.skipped.append((where, f"cannot read: {exc}"))
                continue
            plan.updated[f.path] = plan.originals[f.path]
        current = plan.updated[f.path]
        symbol = resolve_symbol(current, f.symbol, f.line)
        try:
            tables = find_tables(cst.parse_module(current), symbol) if symbol else []
        except (cst.ParserSyntaxError, ValueError) as exc:  # syntax libcst does not know (yet)
            plan.skipped.append((where, f"cannot parse for editing: {str(exc).splitlines()[0]}"))
            continue
        if not symbol or not tables:
            plan.skipped.append((where, "no dict literal assigned to this name"))
            continue
        entry = _plan_entry(plan, f.path, symbol, tables[0], like, measured, machine, prefer)
        if isinstance(entry, str):
            plan.skipped.append((where, entry))
    return plan


def _plan_entry(
    plan: FixPlan,
    rel: str,
    symbol: str,
    table: cst.Dict,
    like: ArchSpec | None,
    measured: ValueLookup | None,
    machine: Machine | None,
    prefer: str,
) -> PlannedEntry | str:
    style = style_of_table(table) or "major-int"
    keyed = [(table.elements[i], spec) for i, spec in arch_keys(table)]
    if like is not None:
        sibling = next(((el, s) for el, s in keyed if same_arch(s, like, style)), None)
        if sibling is None:
            return f"the table has no entry for --like {like.cc}"
        reason = f"--like {like.cc}"
    else:
        choice = choose_sibling(plan.arch, [s for _, s in keyed], symbol)
        if choice is None:
            return "the table has no arch key to copy from"
        sibling = next((el, s) for el, s in keyed if s == choice[0])
        reason = choice[1]
    el, sib_spec = sibling
    assert isinstance(el, cst.DictElement)
    current = plan.updated[rel]
    sib_value = code_of(el.value)
    found = measured(symbol, plan.arch, sib_value, current) if measured else None
    if isinstance(found, str):
        found = MeasuredValue(found)
    extra: tuple[str, ...] = ()
    if found is not None:
        value = found.value
        note = measured_note(found, copied_note(code_of(el.key), sib_spec))
        if found.kept:
            origin, copied_from, reason = "partly-measured", sib_spec.cc, f"--values; the rest: {reason}"
        else:
            origin, copied_from, reason = "measured", "", "--values"
    else:
        origin, copied_from, value = "copied", sib_spec.cc, sib_value
        note = copied_note(code_of(el.key), sib_spec)
        named = arch_specific(sib_value, sib_spec, plan.arch)
        if named is not None:
            why = f"{sib_spec.cc}'s value names its own arch ({named!r}): it holds for that arch only"
            if like is None:
                return why + "; not copied (add the entry by hand, or force it with --like)"
            extra = (f"{symbol}[{plan.arch.cc}]: copied with --like {like.cc} although {why}",)
    new_text, changes = upsert_source(
        current, symbol, plan.arch, value, style=style, comment=note, prefer=prefer
    )
    plan.updated[rel] = new_text
    change = changes[0]
    edit = SemanticEdit(
        module=module_name(rel),
        path=rel,
        symbol=symbol,
        key=change.key,
        value=value,
        key_style=style,
        note=note,
        prefer="ours" if prefer == "ours" else "",
    )
    warnings = extra + tuple(check_entry(symbol, plan.arch, value, module_source=new_text, machine=machine))
    entry = PlannedEntry(edit, origin, copied_from, reason, change.action, warnings)
    plan.entries.append(entry)
    return entry
