"""What a flag handed to a function of the same file decides there.

vLLM's ReplaySSM config: `bw = _is_blackwell()` then `return _mamba2_output_only(dstate, L, bw)`,
whose `if is_blackwell: return 64, 1, ...` / `return 16, 1, ...` picks launch numbers. The flag
itself turns nothing on: what each arch gets is what the function does with its parameter, so
the decision's arms are that function's branches on it (judging.extract.flag_decision).
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

from capgap.judging import callees
from capgap.judging.statements import exits, walk


@dataclass(frozen=True)
class Handed:
    """The function a flag is handed to, and its branches on the parameter that receives it (their
    statements carry the file's line numbers)."""

    function: str
    param: str
    on: list[ast.stmt]  # what it does when the flag is true
    off: list[ast.stmt]  # and when it is false

    @staticmethod
    def span(stmts: list[ast.stmt]) -> tuple[int, int]:
        return stmts[0].lineno, stmts[-1].end_lineno or stmts[-1].lineno


def handed(lines: list[str], flag: str, reads: list[int]) -> Handed | None:
    """When every line of `reads` (1-based) only hands `flag` to one function of the file, as a
    plain argument, and that function's one use of the parameter is an `if` on it: the branches.
    None otherwise (the flag is read some other way, or the function does more with it)."""
    word = re.compile(rf"\b{re.escape(flag)}\b")
    target: tuple[str, int | str] | None = None
    for n in reads:
        line = lines[n - 1].strip()
        if not word.search(line):
            continue
        got = _handed_on(line.removeprefix("return ").strip(), flag)
        if got is None or (target is not None and got != target):
            return None
        target = got
    if target is None:
        return None
    fn, slot = target
    at = callees.top_def(lines, fn)
    if at is None:
        return None
    try:
        tree = ast.parse(textwrap.dedent(callees.def_text(lines, at)))
    except (SyntaxError, ValueError, RecursionError):
        return None
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    ast.increment_lineno(node, at)
    params = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
    if isinstance(slot, int):
        param = params[slot] if slot < len(params) else None
    else:
        param = slot if slot in params or slot in [a.arg for a in node.args.kwonlyargs] else None
    if param is None:
        return None
    return _branches(node, fn, param)


def _handed_on(statement: str, flag: str) -> tuple[str, int | str] | None:
    """`f(a, b, flag)` -> ("f", 2); `x = f(a, is_bw=flag)` -> ("f", "is_bw"): the one call the line
    hands the flag to, when the flag is used nowhere else on it."""
    try:
        tree = ast.parse(statement)
    except (SyntaxError, ValueError, RecursionError):
        return None
    uses = [n for n in walk(tree) if isinstance(n, ast.Name) and n.id == flag]
    found: list[tuple[str, int | str]] = []
    for call in walk(tree):
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
            continue
        for i, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                break
            if isinstance(arg, ast.Name) and arg.id == flag:
                found.append((call.func.id, i))
        for kw in call.keywords:
            if kw.arg is not None and isinstance(kw.value, ast.Name) and kw.value.id == flag:
                found.append((call.func.id, kw.arg))
    return found[0] if len(found) == 1 and len(uses) == 1 else None


def _branches(node: ast.FunctionDef | ast.AsyncFunctionDef, fn: str, param: str) -> Handed | None:
    """The function's `if param:` (or `if not param:`) among its own statements, when that is the
    only read of the parameter: what runs when it is true, and when it is false (the else, or
    the rest of the body after a branch that exits)."""
    reads = [n for n in walk(node) if isinstance(n, ast.Name) and n.id == param]
    if len(reads) != 1:
        return None
    body = node.body
    for i, stmt in enumerate(body):
        if not isinstance(stmt, ast.If):
            continue
        test, negated = stmt.test, False
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, negated = test.operand, True
        if not (isinstance(test, ast.Name) and test.id == param):
            continue
        other = stmt.orelse or (body[i + 1 :] if exits(stmt.body) else [])
        if not stmt.body or not other:
            return None
        on, off = (other, stmt.body) if negated else (stmt.body, other)
        return Handed(fn, param, on, off)
    return None
