"""What a registered requirement guards: the path of the function it is registered on.

FlashInfer declares per-backend requirements apart from the kernels they guard:

    @supported_compute_capability([100, 103])
    def _cutlass_requirement(...): ...          # validates arguments only

    @backend_requirement({"cutlass": _cutlass_requirement, "cudnn": ...}, common_check=_check)
    def mm_bf16(..., backend="cudnn"):
        if backend == "cutile": return mm_cutile(...)
        ...
        bf16_gemm_sm100(...)                    # what the cutlass backend runs

A requirement's own body names no kernel; what it lets run is the decorated function's body for
its key: the arms that test `backend == "cutlass"`, and the code every backend runs, without the
arms of the other keys. A common check (`common_check=`) guards the whole body.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections import defaultdict

# `"cutlass": _cutlass_requirement` or `common_check=_check` (None: every key)
_ENTRY = re.compile(r"""(?:(["'])([\w\-.]+)\1\s*:\s*|\b\w*check\w*\s*=\s*)([A-Za-z_]\w*)\b(?!\s*\()""")
_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+\w+")
_SEARCH_LINES = 80  # a decorator's dict ends this close to the def it decorates
_MAX_DEF_LINES = 1500


class Registrations:
    """A file's registrations of functions under keys, found once per file on first use."""

    def __init__(self, lines: list[str]) -> None:
        self._lines = lines
        self._by_name: dict[str, list[tuple[str | None, int]]] | None = None

    def _index(self) -> dict[str, list[tuple[str | None, int]]]:
        if self._by_name is None:
            self._by_name = defaultdict(list)
            for i, line in enumerate(self._lines):
                if ":" not in line and "check" not in line:
                    continue
                for hit in _ENTRY.finditer(line):
                    self._by_name[hit[3]].append((hit[2], i))
        return self._by_name

    def guarded(self, name: str) -> list[tuple[int, int]]:
        """The file lines (1-based, inclusive) of what `name` is registered to guard."""
        out: list[tuple[int, int]] = []
        for key, at in self._index().get(name, ()):
            if not _in_decorator(self._lines, at):
                continue
            out.extend(_path_for(self._lines, at, key))
        return out


def _in_decorator(lines: list[str], at: int) -> bool:
    """Is line `at` inside a decorator's arguments (a `@` line above it, before any statement)?"""
    for j in range(at, max(-1, at - _SEARCH_LINES), -1):
        text = lines[j].lstrip()
        if text.startswith("@"):
            return True
        if j < at and _DEF.match(lines[j]) or text.startswith(("class ", "return ")):
            return False
    return False


def _path_for(lines: list[str], at: int, key: str | None) -> list[tuple[int, int]]:
    start = next((j for j in range(at, min(len(lines), at + _SEARCH_LINES)) if _DEF.match(lines[j])), None)
    if start is None:
        return []
    end = _def_end(lines, start)
    try:
        tree = ast.parse(textwrap.dedent("\n".join(lines[start:end])))
    except (SyntaxError, ValueError, RecursionError):
        return []
    node = tree.body[0] if tree.body else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    body = node.body[1:] if _docstring(node.body[0]) else node.body
    return [(start + a, start + b) for a, b in _for_key(body, key)]


def _def_end(lines: list[str], start: int) -> int:
    """The index past a def's last line: the first line after it that is code at the def's
    indentation or less (a signature's closing `) -> T:` aside)."""
    indent = len(lines[start]) - len(lines[start].lstrip())
    limit = min(len(lines), start + _MAX_DEF_LINES)
    for j in range(start + 1, limit):
        text = lines[j].strip()
        if not text or text.startswith(("#", ")", "]")):
            continue
        if len(lines[j]) - len(lines[j].lstrip()) <= indent:
            return j
    return limit


def _docstring(stmt: ast.stmt) -> bool:
    value = stmt.value if isinstance(stmt, ast.Expr) else None
    return isinstance(value, ast.Constant) and isinstance(value.value, str)


def _for_key(body: list[ast.stmt], key: str | None) -> list[tuple[int, int]]:
    """The lines of `body` a call with `key` runs: without the arms that test for other keys
    (`if backend == "cutile":`, `if list(backends) == ["cake"]:`) and the entries of other keys in
    a dispatch dict (`{"cudnn": ..., "trtllm": ...}[backend]`)."""
    if key is None:
        return [(stmt.lineno, stmt.end_lineno or stmt.lineno) for stmt in body]
    body = _until_own_exit(body, key)
    spans = [(stmt.lineno, stmt.end_lineno or stmt.lineno) for stmt in body]
    dropped: list[tuple[int, int]] = []
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.If) and node.body:
                keys = _compared(node.test)
                if keys is not None and key not in keys:
                    dropped.append((node.lineno, node.body[-1].end_lineno or node.body[-1].lineno))
            elif isinstance(node, ast.Dict) and _string_keys(node) and key in _string_keys(node):
                for k, v in zip(node.keys, node.values, strict=True):
                    if isinstance(k, ast.Constant) and k.value != key:
                        dropped.append((k.lineno, v.end_lineno or v.lineno))
    return _minus(spans, dropped)


def _until_own_exit(body: list[ast.stmt], key: str) -> list[ast.stmt]:
    """`body` up to the `if backend == key:` whose arm returns or raises: what follows it is
    what the other keys run."""
    for i, stmt in enumerate(body):
        if not (isinstance(stmt, ast.If) and isinstance(stmt.body[-1], (ast.Return, ast.Raise))):
            continue
        if key in (_compared(stmt.test) or ()):
            return body[: i + 1]
    return body


def _string_keys(node: ast.Dict) -> set[str]:
    keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    return set(keys) if len(keys) == len(node.keys) else set()


def _compared(test: ast.expr) -> set[str] | None:
    """The strings a test compares something with (`backend == "x"`, `b in ("x", "y")`)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    op, right = test.ops[0], test.comparators[0]
    if not isinstance(op, (ast.Eq, ast.In)):
        return None
    if isinstance(right, ast.Constant) and isinstance(right.value, str):
        return {right.value}
    if isinstance(right, (ast.Tuple, ast.List, ast.Set)) and right.elts:
        values = [e.value for e in right.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return set(values) if len(values) == len(right.elts) else None
    return None


def _minus(spans: list[tuple[int, int]], dropped: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The lines of `spans` outside every range of `dropped`."""
    out: list[tuple[int, int]] = []
    for first, last in spans:
        at = first
        for a, b in sorted(dropped):
            if b < at or a > last:
                continue
            if a > at:
                out.append((at, a - 1))
            at = max(at, b + 1)
        if at <= last:
            out.append((at, last))
    return out
