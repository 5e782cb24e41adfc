"""Calls that raise when their test holds, read as the asserts they are.

cuDNN frontend's APIs refuse through helpers: `self._not_implemented_error_if(cap != (10, 0),
"Engram saved-state gate currently supports SM100")`, `self._runtime_error_if(cc < 100, "...
requires SM100+")`. PyTorch's `torch._check(cond, lambda: msg)` raises when its test fails. Each
is one decision: what follows runs where the call does not raise.
"""

from __future__ import annotations

import ast
import re

from capgap.judging.statements import short
from capgap.judging.symbolic import call_name

# `raise_if`, `error_if`, `_value_error_if`, `_not_implemented_error_if`, `fail_if`: raise when true
_RAISE_IF = re.compile(r"^_*(?:(?P<error>[a-z]+(?:_[a-z]+)*)_error|raise|error|fail)_if$")
# `torch._check`, `_check`, `check_or_raise`: raise when false (a test of what must hold)
_CHECK = re.compile(r"^_*check(?:_or_raise)?$")


def read(call: ast.expr) -> tuple[ast.expr, str, ast.expr | None] | None:
    """For a raising call: the test under which what follows runs, the error it raises ("" when
    unnamed) and its words (None when it gives none)."""
    if not isinstance(call, ast.Call) or not call.args:
        return None
    name = call_name(call.func).rsplit(".", 1)[-1]
    words = call.args[1] if len(call.args) > 1 else None
    if isinstance(words, ast.Lambda):
        words = words.body  # `torch._check(ok, lambda: "...")`
    if (hit := _RAISE_IF.match(name)) is not None:
        holds = ast.copy_location(ast.UnaryOp(op=ast.Not(), operand=call.args[0]), call.args[0])
        ast.fix_missing_locations(holds)
        kind = hit["error"]
        error = "".join(part.capitalize() for part in kind.split("_")) + "Error" if kind else ""
        return holds, error, words
    worded = isinstance(words, (ast.Constant, ast.JoinedStr))
    if _CHECK.match(name) and (name != "check" or worded):
        return call.args[0], "", words  # (a bare `check(x)` with no words may be anything)
    return None


def summary(error: str, words: str) -> str:
    """The refusal's summary, as a raise's is worded (`raises NotImplementedError '...'`)."""
    said = f" '{short(words, 80)}'" if words else ""
    return f"raises {error or 'an exception'}{said}"
