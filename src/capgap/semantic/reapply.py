"""Re-apply semantic records by meaning: find the table wherever it is now and upsert the key.

The table is looked up by its qualified symbol in the patched file; when upstream moved it, in
the other `.py` files of the same tree (byte prefilter on the name before any parse), and last
under the same name in another scope (a module constant that became a class attribute).
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from capgap.semantic import hardware
from capgap.semantic.hardware import Machine, check_entry, hardware_relevant
from capgap.semantic.keys import arch_of_key
from capgap.semantic.locate import iter_tables
from capgap.semantic.record import SemanticEdit
from capgap.semantic.upsert import INSERTED, KEPT_UPSTREAM, REPLACED, upsert_source

OUTCOMES = ("semantic", "upstreamed", "applied-already", "not-found")
_SKIP_DIRS = {".git", "__pycache__", ".venv", "node_modules", ".tox", "build", "dist"}


@dataclass
class Result:
    outcome: str  # semantic | upstreamed | applied-already | not-found
    files: dict[str, str] = field(default_factory=dict)  # rel_path -> new text (only files that change)
    detail: str = ""
    warnings: list[str] = field(default_factory=list)


def one_line(value: str | None) -> str:
    """A value's source on one line (details are one line per entry)."""
    if value is None:
        return ""
    try:
        return ast.unparse(ast.parse(value.strip(), mode="eval"))
    except SyntaxError:
        return " ".join(value.split())


def _has_table(text: str, symbol: str) -> str | None:
    """The symbol under which `text` defines the table: exact, else a unique same-named table."""
    try:
        module = cst.parse_module(text)
    except (cst.ParserSyntaxError, ValueError):
        return None
    symbols = [site.symbol for site in iter_tables(module)]
    if symbol in symbols:
        return symbol
    name = symbol.rsplit(".", 1)[-1]
    same_name = {s for s in symbols if s.rsplit(".", 1)[-1] == name}
    return same_name.pop() if len(same_name) == 1 else None


def _search_dirs(root: Path, rel_path: str) -> list[tuple[Path, bool]]:
    """Where "the same tree" is: the top-level package of rel_path (recursively); for a top-level
    module, the root itself, recursively only when it is not a site-packages (has no .dist-info)."""
    parts = Path(rel_path).parts
    if len(parts) > 1:
        return [(root / parts[0], True)]
    site = any(p.name.endswith(".dist-info") for p in root.iterdir()) if root.is_dir() else False
    return [(root, not site)]


def _candidates(root: Path, rel_path: str, name: str) -> list[str]:
    """Other .py files of the tree whose bytes contain the table's name, nearest to rel_path first."""
    needle = name.encode()
    defines = re.compile(rb"(?<![\w.])(?:self\.)?" + re.escape(needle) + rb"\s*(?::[^=\n]*)?=(?!=)")
    here = Path(rel_path).parent.parts
    found: list[str] = []
    for top, recursive in _search_dirs(root, rel_path):
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS) if recursive else []
            for fn in filenames:
                path = Path(dirpath) / fn
                rel = path.relative_to(root).as_posix()
                if not fn.endswith(".py") or rel == rel_path or path.is_symlink():
                    continue
                try:
                    data = path.read_bytes()
                    if needle in data and defines.search(data):  # assigned here, not just read
                        found.append(rel)
                except OSError:
                    continue

    def nearness(rel: str) -> tuple[int, str]:
        common = 0
        for a, b in zip(Path(rel).parent.parts, here, strict=False):
            if a != b:
                break
            common += 1
        return (-common, rel)

    return sorted(found, key=nearness)


def _locate(edit: SemanticEdit, root: Path, rel_path: str, texts: dict[str, str]) -> tuple[str, str] | None:
    """(rel_path, symbol) where the table lives now, reading other files into `texts`."""
    symbol = _has_table(texts[rel_path], edit.symbol) if rel_path in texts else None
    if symbol is not None:
        return rel_path, symbol
    for rel in _candidates(root, rel_path, edit.symbol.rsplit(".", 1)[-1]):
        if rel not in texts:
            try:
                texts[rel] = (root / rel).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
        symbol = _has_table(texts[rel], edit.symbol)
        if symbol is not None:
            return rel, symbol
    return None


def reapply(
    records: list[dict],
    root: Path,
    rel_path: str,
    current_text: str | None,
    prefer: str = "upstream",
    machine: Machine | None = None,
) -> Result:
    """Re-apply `records` (semantic.json entries of one file) to the tree at `root`.

    `current_text` is the file's content now (upstream's; None when upstream removed the file,
    then the table is looked for in the rest of the tree); nothing is written here: the caller
    writes `Result.files` through its safe writer. prefer="upstream" keeps upstream's own entry
    for a key (outcome `upstreamed`, both values in `detail`); prefer="ours" puts ours over it.
    """
    if prefer not in ("upstream", "ours"):
        raise ValueError(f"prefer must be 'upstream' or 'ours', not {prefer!r}")
    edits = [SemanticEdit.from_json(r) for r in records]
    if machine is None and any(hardware_relevant(e.symbol) for e in edits):
        machine = hardware.probed_machine()  # only when a warning could depend on it
    texts = {} if current_text is None else {rel_path: current_text}
    changed: set[str] = set()
    lines: list[str] = []
    missing: list[str] = []
    warnings: list[str] = []
    kept = applied = 0
    for edit in edits:
        spec = arch_of_key(edit.key)
        where = _locate(edit, Path(root), rel_path, texts) if spec is not None else None
        if spec is None or where is None:
            missing.append(f"{edit.symbol}[{edit.key}] (was in {edit.path})")
            continue
        rel, symbol = where
        new_text, changes = upsert_source(
            texts[rel], symbol, spec, edit.value, comment=edit.note or None, prefer=edit.prefer or prefer
        )
        moved = "" if (rel, symbol) == (rel_path, edit.symbol) else f" (now {symbol} in {rel})"
        for change in changes:
            entry, value = f"{symbol}[{change.key}]", one_line(change.value)
            if change.action in (INSERTED, REPLACED):
                applied += 1
                over = f" over upstream's {one_line(change.previous)}" if change.action == REPLACED else ""
                lines.append(f"{entry} = {value}: {change.action}{over}{moved}")
                warnings += check_entry(symbol, spec, change.value, module_source=new_text, machine=machine)
            elif change.action == KEPT_UPSTREAM:
                kept += 1
                lines.append(
                    f"{entry}: upstream has {value}, ours was {one_line(change.previous)}; "
                    f"kept upstream's (fix --prefer ours keeps ours){moved}"
                )
            else:
                lines.append(f"{entry} = {value}: already there{moved}")
        if new_text != texts[rel]:
            texts[rel] = new_text
            changed.add(rel)
    if missing:
        return Result("not-found", {}, "table not found: " + "; ".join(missing), warnings)
    outcome = "semantic" if applied else ("upstreamed" if kept else "applied-already")
    return Result(outcome, {rel: texts[rel] for rel in sorted(changed)}, "\n".join(lines), warnings)
