"""What an arm of an arch decision refuses of the call it serves.

flash-attn-4's SM120 forward is its own arm (`elif arch // 10 == 12:`), and in it `assert page_table
is None, "Paged KV not supported on SM 12.0 in this PR"`: the arch has a path, but a feature the
SM90 and SM100 arms accept fails there. Such a refusal is read where it is written, one statement
of the arm's own block (an `assert`, or `if <test>: raise ...`), with the test it puts on the call
and the words it fails with; tests that ask the arch themselves are the decision's business, not a
feature's.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from capgap.judging.outcomes import message_of
from capgap.judging.statements import short

# one refusal: "line\tthe test the call must pass\tthe message it fails with"
Refusal = str
_MAX_MESSAGE = 160


def refused(stmts: list[ast.stmt], asks_arch: Callable[[ast.expr], bool]) -> tuple[Refusal, ...]:
    """The refusals among an arm's own statements (not those of blocks nested in it)."""
    out: list[Refusal] = []
    for stmt in stmts:
        if isinstance(stmt, ast.Assert):
            test, words = stmt.test, _words(stmt.msg)
        elif _raises_only(stmt):
            test, words = _negated(stmt.test), _words(_raised_message(stmt.body[0]))  # type: ignore[attr-defined]
        else:
            continue
        if asks_arch(test) or not _of_options(test) or _ARCH_NAMED.search(ast.unparse(test)):
            continue  # (a test naming an arch asks for that arch's own kernel: `x_sm120 is not None`)
        out.append(f"{stmt.lineno}\t{_text(_plain(test))}\t{words}")
    return tuple(out)


def parse(refusal: Refusal) -> tuple[int, str, str]:
    line, test, words = refusal.split("\t", 2)
    return int(line), test, words


def _raises_only(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.If)
        and not stmt.orelse
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], ast.Raise)
    )


def _negated(test: ast.expr) -> ast.expr:
    """`if x is not None: raise` refuses what `assert x is None` refuses: one spelling for both."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand
    return _plain(ast.UnaryOp(op=ast.Not(), operand=test))


_FLIP: dict[type, Callable[[], ast.cmpop]] = {
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
}


def _plain(test: ast.expr) -> ast.expr:
    """`not (x is not None)` as `x is None`: the test as one would say it."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = test.operand
        if isinstance(inner, ast.Compare) and len(inner.ops) == 1 and type(inner.ops[0]) in _FLIP:
            return ast.Compare(
                left=inner.left, ops=[_FLIP[type(inner.ops[0])]()], comparators=inner.comparators
            )
    return test


def _raised_message(stmt: ast.Raise) -> ast.expr | None:
    exc = stmt.exc
    if isinstance(exc, ast.Call) and exc.args:
        return exc.args[0]
    return None


_ARCH_NAMED = re.compile(r"sm_?\d{2,3}|hopper|blackwell", re.I)


def _of_options(test: ast.expr) -> bool:
    """Does the test only ask what options the call came with (`page_table is None`, `not
    use_block_sparsity`, `num_splits <= 1`, joined with `and`)? A feature is an option; a check of
    a tensor's layout or shape (`w.is_contiguous()`, `q.shape[-1] == 128`) is the path's own
    precondition, and `assert False` refuses every call (an error outcome, read as one)."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    return all(_option_check(p) for p in parts)


def _option_check(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        node = node.operand
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return _option(node.left) and isinstance(node.comparators[0], ast.Constant)
    return _option(node)


def _option(node: ast.expr) -> bool:
    """A name the call was given (`page_table`), or one of the object's settings (`self.causal`)."""
    return isinstance(node, ast.Name) or (
        isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
    )


def _words(msg: ast.expr | None) -> str:
    return short(message_of(msg), _MAX_MESSAGE)


def _text(test: ast.expr) -> str:
    return " ".join(ast.unparse(test).split())
