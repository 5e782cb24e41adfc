"""Lift a textual change to semantic records when all it does is add or change table entries.

`lift(rel_path, pristine, patched)` returns the records, or None as soon as the change does
anything else (removes an entry, touches code outside the tables, adds a table). It proves the
claim instead of guessing: with the touched tables emptied, both modules must have the same AST
and the same comments, and inside each table everything but the lifted entries must be equal.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections import Counter

import libcst as cst

from capgap.semantic.keys import arch_of_key
from capgap.semantic.locate import ScopedTableTransformer, code_of, iter_tables
from capgap.semantic.record import SemanticEdit, module_name
from capgap.semantic.upsert import same_value, style_of_table

Slot = tuple[int, ...]


def _slot(key_src: str, style: str) -> Slot | None:
    spec = arch_of_key(key_src)
    if spec is None:
        return None
    return (spec.major,) if style == "major-int" else (spec.major, spec.minor, ord(spec.suffix or " "))


def entry_comment(table: cst.Dict, i: int) -> str:
    """The end-of-line comment of element `i` (its comma's line, or the line before the `}`)."""
    el = table.elements[i]
    last = i + 1 == len(table.elements)
    ws = table.rbrace.whitespace_before if last else getattr(el.comma, "whitespace_after", None)
    if isinstance(ws, cst.ParenthesizedWhitespace) and ws.first_line.comment is not None:
        return ws.first_line.comment.value.lstrip("#").strip()
    return ""


def split_inner_comment(value: cst.BaseExpression) -> tuple[cst.BaseExpression, str]:
    """`{  # note` -> (the value without the comment, "note"): the place upsert puts a note."""
    if not isinstance(value, (cst.Dict, cst.List, cst.Set)):
        return value, ""
    opening = value.lbracket if isinstance(value, cst.List) else value.lbrace
    ws = opening.whitespace_after
    if not isinstance(ws, cst.ParenthesizedWhitespace) or ws.first_line.comment is None:
        return value, ""
    note = ws.first_line.comment.value.lstrip("#").strip()
    opening = opening.with_changes(whitespace_after=ws.with_changes(first_line=cst.TrailingWhitespace()))
    if isinstance(value, cst.List):
        return value.with_changes(lbracket=opening), note
    return value.with_changes(lbrace=opening), note


def _entries(table: cst.Dict, style: str) -> tuple[dict[Slot, int], Counter[str]]:
    """Arch entries by slot -> element index, and the other elements as a multiset of AST dumps."""
    arch: dict[Slot, int] = {}
    other: Counter[str] = Counter()
    for i, el in enumerate(table.elements):
        slot = _slot(code_of(el.key), style) if isinstance(el, cst.DictElement) else None
        if slot is None or slot in arch:
            other[ast.dump(ast.parse(f"{{{code_of(el)}\n}}", mode="eval"))] += 1
        else:
            arch[slot] = i
    return arch, other


class _EmptyTables(ScopedTableTransformer):
    def __init__(self, symbols: set[str]) -> None:
        super().__init__("")
        self.symbols = symbols

    def _wanted(self, names: list[str]) -> bool:
        return any(n in self.symbols for n in names)

    def transform_table(self, table: cst.Dict) -> cst.Dict:
        return cst.Dict(elements=[])


def _comments(source: str) -> list[str]:
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [t.string for t in tokens if t.type == tokenize.COMMENT]


def _same_outside(pristine: cst.Module, patched: cst.Module, symbols: set[str]) -> bool:
    a = pristine.visit(_EmptyTables(symbols)).code
    b = patched.visit(_EmptyTables(symbols)).code
    try:
        return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b)) and _comments(a) == _comments(b)
    except (SyntaxError, tokenize.TokenError):
        return False


def _unique(module: cst.Module) -> dict[str, cst.Dict | None]:
    sites: dict[str, cst.Dict | None] = {}
    for site in iter_tables(module):
        if site.symbol in sites:
            sites[site.symbol] = None  # defined twice: not liftable
        else:
            sites[site.symbol] = site.table
    return sites


def lift(rel_path: str, pristine_text: str, patched_text: str) -> list[dict] | None:
    """The semantic records of a change that only adds/changes capability-table entries, else None."""
    if not rel_path.endswith(".py") or pristine_text == patched_text:
        return None
    try:
        pristine, patched = cst.parse_module(pristine_text), cst.parse_module(patched_text)
    except (cst.ParserSyntaxError, ValueError):
        return None
    before, after = _unique(pristine), _unique(patched)
    records: list[SemanticEdit] = []
    touched: set[str] = set()
    for symbol, new in after.items():
        old = before.get(symbol)
        if new is None or old is None or code_of(new) == code_of(old):
            continue  # unchanged, new or defined twice: _same_outside decides
        style = style_of_table(new) or style_of_table(old)
        if style is None:
            return None
        old_arch, old_other = _entries(old, style)
        new_arch, new_other = _entries(new, style)
        if old_other != new_other or set(old_arch) - set(new_arch):
            return None  # a non-arch element changed, or an entry was removed
        for slot, i in new_arch.items():
            el = new.elements[i]
            assert isinstance(el, cst.DictElement)
            value = code_of(el.value)
            note = entry_comment(new, i)
            if not note:
                bare, note = split_inner_comment(el.value)
                value = code_of(bare)
            if slot in old_arch:
                old_el = old.elements[old_arch[slot]]
                assert isinstance(old_el, cst.DictElement)
                if same_value(code_of(old_el.value), value):
                    continue
            records.append(
                SemanticEdit(
                    module=module_name(rel_path),
                    path=rel_path,
                    symbol=symbol,
                    key=code_of(el.key),
                    value=value,
                    key_style=style,
                    note=note,
                )
            )
            touched.add(symbol)
    if not records or not _same_outside(pristine, patched, touched):
        return None
    return [r.to_json() for r in records]
