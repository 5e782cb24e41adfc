"""Recognise compute-capability keys in their engines' spellings, and write new ones alike.

Styles: `major-int` (9, 10: SGLang), `number-int` (90, 100), `dotted-str` ("9.0": vLLM),
`sm-str` ("sm_90"), `tuple` ((9, 0)). A table is a capability table only when *every* key
reads as a known arch in one style: world sizes (2, 4, 8) and batch sizes (1, 16, 64) do not.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from capgap.arch import ArchSpec, all_facts
from capgap.arch.keys import format_key
from capgap.judging.foldbound import add as _add
from capgap.judging.foldbound import lshift as _lshift
from capgap.judging.foldbound import mul as bounded_mul
from capgap.judging.foldbound import pow_ as _pow
from capgap.judging.records import Scope, TableKey

_SM = re.compile(r"^(sm|SM)_?(\d{2,3})[af]?$")
_DOTTED = re.compile(r"^(\d{1,2})\.(\d)$")
# Keys a capability table may carry besides archs.
_NEUTRAL = {"default", "other", "others", "*", "fallback", "unknown"}


def _majors() -> set[int]:
    return {f.major for f in all_facts().values()}


def _cc_of_number(n: int) -> str | None:
    cc = f"{n // 10}.{n % 10}"
    return cc if cc in all_facts() else None


def _key_cc(node: ast.expr) -> tuple[str, str] | None:
    """(style, cc) for one key node, or None."""
    if isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool):
            return None
        if isinstance(v, int):
            if v in _majors():
                return "major-int", f"{v}.0"
            cc = _cc_of_number(v) if v >= 20 else None
            if cc is None and f"{v // 10}.0" in all_facts() and v % 10 <= 7:
                cc = f"{v // 10}.{v % 10}"  # `107` (an arch the facts do not list yet), as `"10.7"`
            return ("number-int", cc) if cc else None
        if isinstance(v, str):
            if m := _DOTTED.match(v):
                cc = f"{int(m[1])}.{m[2]}"
                # `"10.7"` (an arch the facts do not list yet) is still a capability key
                return ("dotted-str", cc) if cc in all_facts() or 7 <= int(m[1]) <= 15 else None
            if m := _SM.match(v):
                cc = _cc_of_number(int(m[2])) or _unlisted(int(m[2]) // 10, int(m[2]) % 10)
                return ("sm-str", cc) if cc else None
        return None
    if isinstance(node, ast.Tuple) and len(node.elts) == 2:
        a, b = node.elts
        ints = isinstance(a, ast.Constant) and isinstance(b, ast.Constant)
        if ints and type(a.value) is int and type(b.value) is int:  # type: ignore[union-attr]
            cc = f"{a.value}.{b.value}"  # type: ignore[union-attr]
            cc = cc if cc in all_facts() else _unlisted(a.value, b.value)  # type: ignore[union-attr]
            return ("tuple", cc) if cc else None
    return None


def _unlisted(major: int, minor: int) -> str | None:
    """`(10, 9)`, `"sm_107"`: an arch of a known major the facts do not list yet, which must not
    hide the table it keys (a table needs one listed arch besides: classify_keys)."""
    return f"{major}.{minor}" if major in _majors() and 0 <= minor <= 9 else None


def _as_written(node: ast.expr, lines: list[str] | None) -> str:
    end = getattr(node, "end_lineno", None)
    if lines and end == node.lineno and 0 < node.lineno <= len(lines):
        text = lines[node.lineno - 1][node.col_offset : node.end_col_offset]
        if text:
            return text
    return ast.unparse(node)


def classify_keys(
    nodes: list[ast.expr | None], lines: list[str] | None = None
) -> tuple[str, list[TableKey]] | None:
    """(style, keys) when every key of a dict literal is an arch in one style; else None."""
    keys: list[TableKey] = []
    styles: set[str] = set()
    for node in nodes:
        if node is None:  # **spread
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lower() in _NEUTRAL:
            continue
        got = _key_cc(node)
        if got is None:
            return None
        styles.add(got[0])
        keys.append(TableKey(_as_written(node, lines), got[1]))
    if len(styles) != 1 or not keys or not any(k.cc in all_facts() for k in keys):
        return None
    return styles.pop(), keys


def key_for(style: str, arch: ArchSpec, present: list[str]) -> str:
    """The key to add for `arch`, written as the table writes its keys (no a/f suffix)."""
    return format_key(ArchSpec(arch.major, arch.minor), style, present[0] if present else None)


def covers(style: str, key_cc: str, arch: ArchSpec) -> bool:
    """Does a key (its cc) cover the arch? A major-int key covers every minor of its major."""
    if style == "major-int":
        return int(key_cc.split(".")[0]) == arch.major
    return key_cc == arch.cc


def resolve_value(node: ast.expr, scope: Scope, depth: int = 0) -> Any:
    """A table entry's value with simple constants resolved (`64 * MiB` -> 67108864), or None."""
    try:
        return _resolve(node, scope, depth)
    except (ValueError, TypeError, ZeroDivisionError, OverflowError, RecursionError, MemoryError):
        return None


_OPS = {
    ast.Add: _add,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: bounded_mul,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: _pow,
    ast.LShift: _lshift,
}


def _resolve(node: ast.expr, scope: Scope, depth: int) -> Any:
    if depth > 6:
        raise ValueError("too deep")
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool, type(None))):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_resolve(e, scope, depth + 1) for e in node.elts]
    if isinstance(node, ast.Dict):
        out = {}
        for k, v in zip(node.keys, node.values, strict=False):
            if k is None:
                raise ValueError("spread")
            key = _resolve(k, scope, depth + 1)
            out[str(key) if not isinstance(key, str) else key] = _resolve(v, scope, depth + 1)
        return out
    if isinstance(node, ast.Name):
        found = scope.lookup(node.id)
        if found is None:
            raise ValueError(node.id)
        return _resolve(found, scope, depth + 1)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        result = _OPS[type(node.op)](
            _resolve(node.left, scope, depth + 1), _resolve(node.right, scope, depth + 1)
        )
        if result is None:
            raise ValueError("too large")
        return result
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_resolve(node.operand, scope, depth + 1)
    raise ValueError(type(node).__name__)
