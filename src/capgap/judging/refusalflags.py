"""A branch that only raises a flag, which its function then refuses on, is itself a restriction.

unsloth 2026.10.9's `check_vllm_torch_sm100_compatibility` looks for a GPU of major 10
(`if major == 10: has_sm100 = True; ... break`), then `if not has_sm100: return`, and past that
raises "vLLM's distributed module crashes with std::bad_alloc on SM100 GPUs". What the flag's yes
leads to is the raise alone: 12.0, left out of it, is not refused and loses nothing (issue 14,
point 2: being left out of a refusal is good for the target).

Read on the function's own text (the statement cut may keep only part of it). Anything that reads
the flag other than a test whose yes refuses, or inside the refusal itself, keeps the branch a path.

The other way round, a flag whose value a later guard lets through leads to what follows that
guard: vLLM's Kimi-K3 `else: reason = None` after a chain of reasons, `if reason is not None:
return False`, then the import of tcgen05 GEMM-RS kernels. Those lines are the branch's path, where
what it needs is read (`path_past_gate`).
"""

from __future__ import annotations

import ast
import functools
import textwrap
from dataclasses import dataclass

from capgap.judging.outcomes import classify, is_filler
from capgap.judging.statements import short

_REFUSING = {"error", "reject", "nothing"}  # a raise, a refusal or a log line: no path for anyone


def flags_set(stmts: list[ast.stmt]) -> set[str] | None:
    """The plain names a branch sets, when setting them (and leaving a loop, and logging why:
    `if verbose: self.warning(...)`) is all it does."""
    names: set[str] = set()
    for stmt in stmts:
        if is_filler(stmt) or isinstance(stmt, (ast.Break, ast.Pass)) or _only_logs(stmt):
            continue
        targets = (
            stmt.targets
            if isinstance(stmt, ast.Assign)
            else [stmt.target]
            if isinstance(stmt, ast.AnnAssign)
            else []
        )
        if not targets or not all(isinstance(t, ast.Name) for t in targets):
            return None
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names or None


def _only_logs(stmt: ast.stmt) -> bool:
    """A log line, or an `if` (no else) of log lines only (`if verbose: self.warning(...)`)."""
    if isinstance(stmt, ast.Expr):
        return classify([stmt])[0] == "nothing"
    return isinstance(stmt, ast.If) and not stmt.orelse and all(_only_logs(s) for s in stmt.body)


def falsy_only(stmts: list[ast.stmt]) -> bool:
    """Does every assignment of the branch set its names to False or None (`cuda_okay = False`)?"""
    values = [s.value for s in stmts if isinstance(s, ast.Assign)]
    return bool(values) and all(isinstance(v, ast.Constant) and v.value in (False, None) for v in values)


def refusal_it_leads_to(
    source: str, def_line: int, line: int, names: set[str], falsy: bool = False
) -> str | None:
    """`source`: a function's own lines, its `def` on file line `def_line`; `line`: the decision's
    first line; `names`: the flags one of its branches sets (`falsy`: each to False or None). The
    refusal every later reader of the flags leads into ("raises RuntimeError '...' (line N)"; a
    falsy flag the function returns as its answer, `return ok and cuda_okay`: "returns False"), or
    None when a reader does anything else."""
    fn = _parsed(source, def_line)
    if fn is None or names & fn.declared:
        return None
    decision = fn.ifs.get(line)
    if decision is None:
        return None
    inside = {id(n) for n in ast.walk(decision)}
    refusal = None
    for node in fn.loads:
        if node.id not in names or id(node) in inside:
            continue
        if node.lineno <= (decision.end_lineno or decision.lineno):
            return None  # read before the decision (a loop's next round): no plain sequence
        if _within_refusal(node, fn.parents):
            continue
        words = _gate_refuses(node, fn.parents) or (_returned(node, fn.parents) if falsy else None)
        if words is None:
            return None
        refusal = refusal or words
    return refusal


@dataclass(frozen=True)
class _Function:
    """A function read once for all its decisions (read-only)."""

    node: ast.FunctionDef | ast.AsyncFunctionDef
    parents: dict[ast.AST, ast.AST]  # each node's parent
    ifs: dict[int, ast.If]  # by first line
    loads: list[ast.Name]  # every read of a plain name, in walk order
    declared: frozenset[str]  # names made global or nonlocal (set elsewhere too)


@functools.lru_cache(maxsize=8)  # a function's decisions ask about it one after another
def _parsed(source: str, def_line: int) -> _Function | None:
    """The function, its lines numbered as in its file."""
    try:  # (blank lines before it number its lines as in the file)
        tree = ast.parse("\n" * (def_line - 1) + textwrap.dedent(source))
    except (SyntaxError, ValueError):
        return None
    fn = tree.body[0] if tree.body else None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.lineno != def_line:
        return None
    parents: dict[ast.AST, ast.AST] = {}
    ifs: dict[int, ast.If] = {}
    loads: list[ast.Name] = []
    declared: set[str] = set()
    for node in ast.walk(fn):
        parents.update((child, node) for child in ast.iter_child_nodes(node))
        if isinstance(node, ast.If):
            ifs.setdefault(node.lineno, node)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loads.append(node)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
    return _Function(fn, parents, ifs, loads, frozenset(declared))


def _returned(node: ast.Name, parents: dict[ast.AST, ast.AST]) -> str | None:
    """The read is the function's answer, alone or and-ed with others (`return base and flag`):
    a flag set False makes that answer no."""
    at: ast.AST = node
    while isinstance(parents.get(at), ast.BoolOp) and isinstance(parents[at].op, ast.And):  # type: ignore[attr-defined]
        at = parents[at]
    ret = parents.get(at)
    return f"returns False (line {ret.lineno})" if isinstance(ret, ast.Return) else None


def _within_refusal(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Is the read part of a raise or a log line (the flag's words in the message)?"""
    at: ast.AST | None = node
    while at is not None and not isinstance(at, ast.stmt):
        at = parents.get(at)
    return isinstance(at, (ast.Raise, ast.Expr)) and classify([at])[0] in _REFUSING  # type: ignore[list-item]


def _gate_refuses(node: ast.Name, parents: dict[ast.AST, ast.AST]) -> str | None:
    """The read is the test of an `if`: its yes refuses (`if flag: raise`), or its no leaves and
    what runs after it on the flag's yes is a refusal (`if not flag: return` ... `raise`)."""
    negated = isinstance(parents.get(node), ast.UnaryOp) and isinstance(parents[node].op, ast.Not)  # type: ignore[attr-defined]
    test: ast.AST = parents[node] if negated else node
    gate = parents.get(test)
    if not negated and isinstance(gate, ast.BoolOp) and isinstance(gate.op, ast.And):
        test, gate = gate, parents.get(gate)  # `if flag and old_torch: raise`: its yes needs the flag
    if not isinstance(gate, ast.If) or gate.test is not test:
        return None
    if not negated:
        action, what = classify(gate.body)
        return f"{what} (line {gate.body[-1].lineno})" if action in _REFUSING else None
    if gate.orelse or not gate.body or not isinstance(gate.body[-1], (ast.Return, ast.Continue)):
        return None
    if isinstance(gate.body[-1], ast.Continue):
        return None  # (the loop goes on: what follows is the next round's)
    return _next_refusal(gate, parents)


def _next_refusal(stmt: ast.stmt, parents: dict[ast.AST, ast.AST]) -> str | None:
    """What runs after `stmt` until the function ends: a raise, past statements that only set
    names or log (None when anything else runs, or the function ends without one)."""
    at: ast.AST = stmt
    while True:
        parent = parents.get(at)
        if parent is None:
            return None
        block = next((b for b in _blocks(parent) if at in b), None)
        if block is None:
            return None
        for later in block[block.index(at) + 1 :]:  # type: ignore[arg-type]
            if isinstance(later, ast.Raise):
                return f"{classify([later])[1]} (line {later.lineno})"
            if not _only_sets_or_logs(later):
                return None
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None  # the function returns: nothing refused
        if isinstance(parent, ast.Try) and (block is not parent.body or parent.orelse or parent.finalbody):
            return None
        if not isinstance(parent, (ast.Try, ast.If, ast.With)):
            return None  # (a loop's body runs again; a handler runs on a failure)
        at = parent


def _blocks(node: ast.AST) -> list[list[ast.stmt]]:
    return [
        getattr(node, field)
        for field in ("body", "orelse", "finalbody")
        if isinstance(getattr(node, field, None), list)
    ]


def _only_sets_or_logs(stmt: ast.stmt) -> bool:
    if is_filler(stmt) or isinstance(
        stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Import, ast.ImportFrom)
    ):
        return True
    if isinstance(stmt, ast.Expr):
        return classify([stmt])[0] == "nothing"  # a log line
    if isinstance(stmt, ast.Try):  # `try: v = version("x") except Exception: v = "unknown"`
        handlers = [s for h in stmt.handlers for s in h.body]
        return all(_only_sets_or_logs(s) for s in [*stmt.body, *handlers, *stmt.orelse, *stmt.finalbody])
    return False


def said(names: set[str], refusal: str) -> str:
    return f"sets {', '.join(sorted(names))}, which leads only to: {short(refusal, 120)}"


def path_past_gate(
    source: str, def_line: int, line: int, values: dict[str, object]
) -> tuple[int, int] | None:
    """The lines that run for a branch that only sets flags (`values`: name -> the constant it
    sets) past a later guard of the same block that turns the other values away: vLLM's Kimi-K3
    `reason = None` in an elif chain of reasons, then `if reason is not None: return False`, then
    the import of the GEMM-RS kernels. What those lines need is what the branch leads to."""
    parsed = _parsed(source, def_line)
    if parsed is None:
        return None
    fn = parsed.node
    for block in _all_blocks(fn):
        at = next((k for k, s in enumerate(block) if isinstance(s, ast.If) and s.lineno == line), None)
        if at is None:
            continue
        for later in block[at + 1 :]:
            if not isinstance(later, ast.If) or later.orelse or not later.body:
                continue
            if not isinstance(later.body[-1], (ast.Return, ast.Raise)):
                continue
            runs = _runs_for(later.test, values)
            if runs is False:
                return ((later.end_lineno or later.lineno) + 1, fn.end_lineno or fn.lineno)
            if runs is True:
                return None  # the branch's own value is turned away
        return None
    return None


def _all_blocks(fn: ast.AST) -> list[list[ast.stmt]]:
    return [b for node in ast.walk(fn) for b in _blocks(node)]


def _runs_for(test: ast.expr, values: dict[str, object]) -> bool | None:
    """Does the test hold for the flags' values (`x`, `not x`, `x is None`, `x is not None`)? None:
    the test asks something else."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    inner = test.operand if negated else test  # type: ignore[attr-defined]
    if isinstance(inner, ast.Name) and inner.id in values:
        return bool(values[inner.id]) != negated
    if (
        not negated
        and isinstance(inner, ast.Compare)
        and isinstance(inner.left, ast.Name)
        and inner.left.id in values
        and len(inner.ops) == 1
        and isinstance(inner.ops[0], (ast.Is, ast.IsNot))
        and isinstance(inner.comparators[0], ast.Constant)
        and inner.comparators[0].value is None
    ):
        return (values[inner.left.id] is None) == isinstance(inner.ops[0], ast.Is)
    return None


def constants_set(stmts: list[ast.stmt]) -> dict[str, object] | None:
    """name -> value of the plain names a branch sets to constants (None when it does more)."""
    out: dict[str, object] = {}
    for stmt in stmts:
        if is_filler(stmt) or isinstance(stmt, (ast.Break, ast.Pass)):
            continue
        if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant)):
            return None
        if not all(isinstance(t, ast.Name) for t in stmt.targets):
            return None
        out.update({t.id: stmt.value.value for t in stmt.targets if isinstance(t, ast.Name)})
    return out or None
