"""Upsert one entry of a capability table, keeping the table's layout.

The new entry goes right after its nearest lower sibling key (or before the lowest key when it
is the lowest), takes that sibling's indentation, colon spacing and comma style, and can carry a
trailing comment. Comments of the neighbours stay where they were: a sibling's end-of-line comment
stays on the sibling's line, comment lines that introduced the next entry still introduce it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from capgap.arch import ArchSpec
from capgap.semantic.keys import arch_of_key, format_key, order_of, same_arch, table_style
from capgap.semantic.locate import ScopedTableTransformer, code_of

INSERTED, REPLACED, SAME, KEPT_UPSTREAM = "inserted", "replaced", "same", "kept-upstream"


def same_value(a: str, b: str) -> bool:
    """Whether two value expressions are the same code, whatever their formatting."""
    try:
        return ast.dump(ast.parse(a.strip(), mode="eval")) == ast.dump(ast.parse(b.strip(), mode="eval"))
    except SyntaxError:
        return a.strip() == b.strip()


@dataclass(frozen=True)
class EntryChange:
    """What an upsert did to one table: `action` is inserted/replaced/same/kept-upstream."""

    action: str
    key: str  # the key as written in the table
    value: str  # the value now in the table
    previous: str | None = None  # the value that was there (replaced, kept-upstream: ours)


def arch_keys(table: cst.Dict) -> list[tuple[int, ArchSpec]]:
    """(index, arch) of every element whose key names an arch."""
    out = []
    for i, el in enumerate(table.elements):
        if isinstance(el, cst.DictElement):
            spec = arch_of_key(code_of(el.key))
            if spec is not None:
                out.append((i, spec))
    return out


def style_of_table(table: cst.Dict) -> str | None:
    keys = [code_of(el.key) for el in table.elements if isinstance(el, cst.DictElement)]
    return table_style(keys) if keys else None


def _ws_before(table: cst.Dict, i: int) -> cst.BaseParenthesizableWhitespace:
    if i == 0:
        return table.lbrace.whitespace_after
    prev = table.elements[i - 1]
    return prev.comma.whitespace_after if isinstance(prev.comma, cst.Comma) else cst.SimpleWhitespace(" ")


def _indent_of(table: cst.Dict, i: int) -> tuple[bool, cst.SimpleWhitespace]:
    """The indentation the element at `i` sits at (for multi-line tables)."""
    for ws in (_ws_before(table, i), table.lbrace.whitespace_after):
        if isinstance(ws, cst.ParenthesizedWhitespace):
            return ws.indent, ws.last_line
    return True, cst.SimpleWhitespace("    ")


def _eol(comment: str | None) -> cst.TrailingWhitespace:
    if comment is None:
        return cst.TrailingWhitespace()
    return cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(f"# {comment}"))


def _new_element(like: cst.DictElement | None, key: str, value: cst.BaseExpression) -> cst.DictElement:
    el = cst.DictElement(key=cst.parse_expression(key), value=value)
    if like is not None:
        el = el.with_changes(
            whitespace_before_colon=like.whitespace_before_colon,
            whitespace_after_colon=like.whitespace_after_colon,
        )
    return el


def _comment_inside(value: cst.BaseExpression, comment: str | None) -> tuple[cst.BaseExpression, bool]:
    """Put `comment` after the opening bracket of a multi-line value (`12: {  # ...`), if it is one."""
    if comment is None or not isinstance(value, (cst.Dict, cst.List, cst.Set)):
        return value, False
    opening = value.lbrace if isinstance(value, (cst.Dict, cst.Set)) else value.lbracket
    ws = opening.whitespace_after
    if not isinstance(ws, cst.ParenthesizedWhitespace) or ws.first_line.comment is not None:
        return value, False
    opening = opening.with_changes(whitespace_after=ws.with_changes(first_line=_eol(comment)))
    if isinstance(value, cst.List):
        return value.with_changes(lbracket=opening), True
    return value.with_changes(lbrace=opening), True


_NONE = cst.SimpleWhitespace("")


def _comma(before: cst.BaseParenthesizableWhitespace, after: cst.BaseParenthesizableWhitespace) -> cst.Comma:
    return cst.Comma(whitespace_before=before, whitespace_after=after)


class _Inserter:
    """Splices a new element into a dict's elements with the whitespace of its neighbours."""

    def __init__(self, table: cst.Dict, comment: str | None) -> None:
        self.table = table
        self.comment = comment
        self.line_comment: str | None = None  # set when the comment must go at the end of the line

    def after(self, i: int, new: cst.DictElement) -> cst.Dict:
        t = self.table
        el = t.elements[i]
        last = i + 1 == len(t.elements)
        comma = el.comma if isinstance(el.comma, cst.Comma) else None
        ws_before_comma = comma.whitespace_before if comma else _NONE
        # The line break after an element lives in its comma, or, for the last one, before the "}".
        old_ws = t.rbrace.whitespace_before if last else comma.whitespace_after  # type: ignore[union-attr]
        rbrace = t.rbrace
        if isinstance(old_ws, cst.ParenthesizedWhitespace):
            indent, last_line = _indent_of(t, i)
            between = cst.ParenthesizedWhitespace(
                first_line=old_ws.first_line, empty_lines=[], indent=indent, last_line=last_line
            )
            after_new = old_ws.with_changes(first_line=_eol(self.comment))
            el = el.with_changes(comma=_comma(ws_before_comma, between))
            if last:
                rbrace = rbrace.with_changes(whitespace_before=after_new)
                tail = _comma(ws_before_comma, _NONE) if comma else cst.MaybeSentinel.DEFAULT
                new = new.with_changes(comma=tail)
            else:
                new = new.with_changes(comma=_comma(ws_before_comma, after_new))
        else:  # one line: `{9: 1, 10: 2}`; the comment goes to the end of the statement's line
            self.line_comment = self.comment
            new = new.with_changes(comma=comma if comma else cst.MaybeSentinel.DEFAULT)
            if last:
                el = el.with_changes(comma=_comma(ws_before_comma, cst.SimpleWhitespace(" ")))
                if comma:
                    new = new.with_changes(comma=_comma(ws_before_comma, _NONE))
        elements = [*t.elements[:i], el, new, *t.elements[i + 1 :]]
        return t.with_changes(elements=elements, rbrace=rbrace)

    def before(self, j: int, new: cst.DictElement) -> cst.Dict:
        t = self.table
        ws = _ws_before(t, j)
        if isinstance(ws, cst.ParenthesizedWhitespace):
            indent, last_line = _indent_of(t, j)
            new_ws: cst.BaseParenthesizableWhitespace = cst.ParenthesizedWhitespace(
                first_line=_eol(self.comment), empty_lines=ws.empty_lines, indent=indent, last_line=last_line
            )
            ws = ws.with_changes(empty_lines=[])
        else:
            new_ws = cst.SimpleWhitespace(" ")
            self.line_comment = self.comment
        new = new.with_changes(comma=cst.Comma(whitespace_after=new_ws))
        elements = list(t.elements)
        lbrace = t.lbrace
        if j == 0:
            lbrace = lbrace.with_changes(whitespace_after=ws)
        else:
            prev = elements[j - 1]
            comma = prev.comma if isinstance(prev.comma, cst.Comma) else cst.Comma()  # not last: has one
            elements[j - 1] = prev.with_changes(comma=comma.with_changes(whitespace_after=ws))
        elements.insert(j, new)
        return t.with_changes(elements=elements, lbrace=lbrace)


def _position(keyed: list[tuple[int, ArchSpec]], spec: ArchSpec, n: int) -> tuple[str, int]:
    """Where the new key goes: ("after" | "before", element index).

    Ascending tables (the usual): right after the nearest lower key, or before the lowest.
    Descending: right after the nearest higher key (the order stays descending). Tables in no
    order: next to the closest arch, after it when it is lower, before it when it is higher.
    """
    if not keyed:
        return "after", n - 1  # no arch key at all: at the end
    orders = [order_of(s) for _, s in keyed]
    lower = [(i, s) for i, s in keyed if order_of(s) < order_of(spec)]
    higher = [(i, s) for i, s in keyed if order_of(s) > order_of(spec)]
    nearest_lower = max(lower, key=lambda p: order_of(p[1]))[0] if lower else None
    nearest_higher = min(higher, key=lambda p: order_of(p[1]))[0] if higher else None
    if orders == sorted(orders) or len(keyed) == 1:
        return ("after", nearest_lower) if nearest_lower is not None else ("before", nearest_higher or 0)
    if orders == sorted(orders, reverse=True):
        return ("after", nearest_higher) if nearest_higher is not None else ("before", nearest_lower or 0)

    def distance(p: tuple[int, ArchSpec]) -> int:
        return abs(p[1].number - spec.number)

    i, closest = min(keyed, key=distance)
    return ("after" if order_of(closest) < order_of(spec) else "before"), i


def _replace_with_comment(
    table: cst.Dict, i: int, value: str, comment: str | None
) -> tuple[cst.Dict, str | None]:
    """Element `i` with `value` and `comment` instead of its own (the comment inside a multi-line
    value's bracket, else at the end of the entry's line); (table, end-of-statement comment)."""
    el = table.elements[i]
    value_node, consumed = _comment_inside(cst.parse_expression(value), comment)
    el = el.with_changes(value=value_node)
    rbrace, line_comment = table.rbrace, None
    if comment is not None and not consumed:
        last = i + 1 == len(table.elements)
        ws = table.rbrace.whitespace_before if last else getattr(el.comma, "whitespace_after", None)
        if isinstance(ws, cst.ParenthesizedWhitespace):
            ws = ws.with_changes(first_line=_eol(comment))
            if last:
                rbrace = rbrace.with_changes(whitespace_before=ws)
            else:
                el = el.with_changes(comma=el.comma.with_changes(whitespace_after=ws))  # type: ignore[union-attr]
        else:  # a one-line table: the statement's line
            line_comment = comment
    elements = [*table.elements[:i], el, *table.elements[i + 1 :]]
    return table.with_changes(elements=elements, rbrace=rbrace), line_comment


def upsert(
    table: cst.Dict,
    spec: ArchSpec,
    value: str,
    *,
    style: str | None = None,
    comment: str | None = None,
    prefer: str = "ours",
    recomment: bool = False,
) -> tuple[cst.Dict, EntryChange, str | None]:
    """Put `spec`'s entry with `value` into `table`; returns (table, change, end-of-line comment).

    `prefer="upstream"` leaves an existing, different entry alone (KEPT_UPSTREAM);
    `prefer="ours"` replaces its value (REPLACED), and with `recomment` its comment by `comment`
    (a measured value over a copied one must not keep "copied from"). An equal entry is SAME:
    nothing changes, which makes every upsert idempotent.
    """
    style = style or style_of_table(table) or "major-int"
    keyed = arch_keys(table)
    for i, have in keyed:
        if same_arch(have, spec, style):
            el = table.elements[i]
            assert isinstance(el, cst.DictElement)
            key, existing = code_of(el.key), code_of(el.value)
            if same_value(existing, value) and not recomment:
                return table, EntryChange(SAME, key, existing), None
            if prefer == "upstream":
                return table, EntryChange(KEPT_UPSTREAM, key, existing, previous=value), None
            change = EntryChange(REPLACED, key, value, existing)
            if recomment:
                new_table, line_comment = _replace_with_comment(table, i, value, comment)
                return new_table, change, line_comment
            elements = list(table.elements)
            elements[i] = el.with_changes(value=cst.parse_expression(value))
            return table.with_changes(elements=elements), change, None
    where, at = _position(keyed, spec, len(table.elements))
    like = table.elements[at] if at >= 0 else None
    like_el = like if isinstance(like, cst.DictElement) else None
    key = format_key(spec, style, code_of(like_el.key) if like_el and keyed else None)
    value_node, consumed = _comment_inside(cst.parse_expression(value), comment)
    inserter = _Inserter(table, None if consumed else comment)
    new = _new_element(like_el, key, value_node)
    if at < 0:
        new_table = table.with_changes(elements=[new])
        inserter.line_comment = inserter.comment
    elif where == "after":
        new_table = inserter.after(at, new)
    else:
        new_table = inserter.before(at, new)
    return new_table, EntryChange(INSERTED, key, value), inserter.line_comment


class UpsertEntry(ScopedTableTransformer):
    """Transform: upsert one entry into the table `symbol` (every definition of it in the module)."""

    def __init__(
        self,
        symbol: str,
        spec: ArchSpec,
        value: str,
        *,
        style: str | None = None,
        comment: str | None = None,
        prefer: str = "ours",
        recomment: bool = False,
    ) -> None:
        super().__init__(symbol)
        self.spec, self.value, self.style = spec, value, style
        self.comment, self.prefer, self.recomment = comment, prefer, recomment
        self.changes: list[EntryChange] = []

    def transform_table(self, table: cst.Dict) -> cst.Dict:
        new_table, change, line_comment = upsert(
            table,
            self.spec,
            self.value,
            style=self.style,
            comment=self.comment,
            prefer=self.prefer,
            recomment=self.recomment,
        )
        self.changes.append(change)
        if line_comment is not None:
            self.line_comment = line_comment
        return new_table


def upsert_source(
    source: str,
    symbol: str,
    spec: ArchSpec,
    value: str,
    *,
    style: str | None = None,
    comment: str | None = None,
    prefer: str = "ours",
    recomment: bool = False,
) -> tuple[str, list[EntryChange]]:
    """Upsert into the module text `source`; ([] changes) when the symbol has no dict table."""
    module = cst.parse_module(source)
    transform = UpsertEntry(
        symbol, spec, value, style=style, comment=comment, prefer=prefer, recomment=recomment
    )
    new_module = module.visit(transform)
    return new_module.code, transform.changes
