"""What a missing table entry does where the table is read, and what the authors wrote beside a
table: read at extraction, judged by `rules.table_missing_arch`.

A missing key is no loss when the entry could only have restricted the path: `bound =
T.get(cap)` followed by `if bound is not None and n > bound: return False` (no entry: no bound),
or `if cap in T: size = min(T[cap], size)` (no entry: the default is kept). That is a lifted
restriction, as being left out of a refusal is for a gate.
"""

from __future__ import annotations

import ast
import re

from capgap.judging import outcomes
from capgap.judging.records import TableUse

LIFTED = "lifted"  # TableUse.effect: a missing key only skips a restriction
PICKS = "picks"  # TableUse.effect: the value only picks a variant of a call (`use_oneshot=n <= bound`)
_LOOK_AHEAD = 3  # statements after a read searched for the test of what it returned
_REMARK_CHARS = 1500
_SKIPPED_CODE = 2  # one-line statements between a table and the comment paragraph it belongs to


def after_get(assigned: ast.expr | None, default: ast.expr | None, following: list[ast.stmt]) -> str:
    """The effect of `name = T.get(key[, default])` missing the key, read on the first of the
    following statements that tests `name`: LIFTED when that test is false for the default and
    its branch only restricts; "" when the code does not show."""
    if not isinstance(assigned, ast.Name):
        return ""
    name = assigned.id
    missing = default.value if isinstance(default, ast.Constant) else None if default is None else ...
    if missing is ...:
        return ""
    for stmt in following[:_LOOK_AHEAD]:
        if isinstance(stmt, ast.Return) and stmt.value is not None and _reads(stmt.value, name):
            # `return bound is None or size <= bound * MiB`: no entry, no bound
            return LIFTED if missing is None and _unbounded_when_none(stmt.value, name) else ""
        if not isinstance(stmt, ast.If) or not _reads(stmt.test, name):
            continue
        if stmt.orelse or _truth(stmt.test, name, missing) is not False:
            return ""
        return LIFTED if outcomes.classify(stmt.body)[0] in {"reject", "error"} else ""
    return ""


# `use_oneshot=input_2d.nbytes <= self._one_shot_max_size`: a keyword that picks a variant of
# the call, set by comparing with the value
_PICKING_KEYWORD = re.compile(r"\b(?:use|prefer|enable)_\w+\s*=(?!=)[^\n=]*(?:<=?|>=?)")


def picks_only(lines: list[str], assigned: ast.expr | None, line: int, last: int) -> str:
    """PICKS when every later read of what `self.x = T.get(...)` (line `line`) assigned, up to
    file line `last`, compares it to set a keyword that picks a variant of a call (`use_oneshot=n
    <= self.x`): the entry tunes the call, its absence keeps the other variant. "" otherwise."""
    if not (isinstance(assigned, ast.Attribute) and isinstance(assigned.value, ast.Name)):
        return ""
    word = re.compile(rf"\b{re.escape(assigned.value.id)}\.{re.escape(assigned.attr)}\b")
    reads = [text for text in lines[line : max(line, last)] if word.search(text)]
    if reads and all(_PICKING_KEYWORD.search(text) for text in reads):
        return PICKS
    return ""


def after_membership(stmt: ast.stmt, compare: ast.Compare) -> str:
    """The effect of `if key in T [and ...]: body` missing the key: LIFTED when the body only
    narrows a value the code already holds (`size = min(T[key][n], size)`)."""
    if not isinstance(stmt, ast.If) or stmt.orelse or not isinstance(compare.ops[0], ast.In):
        return ""
    test = stmt.test
    conjuncts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    if not any(c is compare for c in conjuncts):
        return ""
    return LIFTED if stmt.body and all(_narrows(s) for s in stmt.body) else ""


def lift_inside(uses: list[TableUse], tree: ast.Module) -> None:
    """The other reads of a table inside an `if key in T:` whose missing key is LIFTED (`size =
    min(T[key][n], size)` in its body) are lifted with it: they run only when the key is there."""
    lifted = {(u.name, u.line) for u in uses if u.effect == LIFTED and u.access == "in"}
    if not lifted:
        return
    spans: list[tuple[str, int, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            first, last = node.test.lineno, node.test.end_lineno or node.test.lineno
            for name, line in lifted:
                if first <= line <= last:
                    spans.append((name, node.lineno, node.end_lineno or node.lineno))
    for use in uses:
        if any(use.name == name and start <= use.line <= end for name, start, end in spans):
            use.effect = LIFTED


def _narrows(stmt: ast.stmt) -> bool:
    """`x = min(..., x)`: a value that can only shrink."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call)):
        return False
    call = stmt.value
    if not (isinstance(call.func, ast.Name) and call.func.id == "min"):
        return False
    target = ast.unparse(stmt.targets[0])
    return any(ast.unparse(arg) == target for arg in call.args)


def _unbounded_when_none(value: ast.expr, name: str) -> bool:
    """`name is None or <comparisons of name>`: the answer is yes without a bound, and the bound
    only ever turns it to no."""
    if not (isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or)):
        return False
    first, *rest = value.values
    return (
        _truth(first, name, None) is True
        and bool(rest)
        and all(isinstance(v, ast.Compare) and _reads(v, name) for v in rest)
    )


def _reads(node: ast.expr, name: str) -> bool:
    return any(isinstance(sub, ast.Name) and sub.id == name for sub in ast.walk(node))


def _truth(node: ast.expr, name: str, value: object) -> bool | None:
    """Is `node` true when `name` holds `value`? None when that depends on more."""
    if isinstance(node, ast.BoolOp):
        parts = [_truth(v, name, value) for v in node.values]
        if isinstance(node.op, ast.And):
            return False if False in parts else True if all(p is True for p in parts) else None
        return True if True in parts else False if all(p is False for p in parts) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _truth(node.operand, name, value)
        return None if inner is None else not inner
    if isinstance(node, ast.Name):
        return bool(value) if node.id == name else None
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.left, ast.Name):
        other = node.comparators[0]
        if node.left.id != name or not isinstance(other, ast.Constant):
            return None
        op = node.ops[0]
        if isinstance(op, ast.Is):
            return value is other.value
        if isinstance(op, ast.IsNot):
            return value is not other.value
        if isinstance(op, ast.Eq):
            return bool(value == other.value)
        if isinstance(op, ast.NotEq):
            return bool(value != other.value)
    return None


def remark(lines: list[str], first: int, last: int) -> str:
    """The comment paragraph a table sits under (over at most _SKIPPED_CODE one-line statements:
    `_FLAG = 1024` between the words and the table they explain) and the comments on its own
    lines (`"10.7": {  # reuse 10.3`), joined; "" when there is none."""
    out: list[str] = []
    i, skipped = first - 2, 0
    while i >= 0:
        text = lines[i].strip()
        if text.startswith("#"):
            out.append(text)
        elif out or skipped >= _SKIPPED_CODE or not text or text.endswith(("(", "[", "{", ",", "\\")):
            break
        else:
            skipped += 1
        i -= 1
    out.reverse()
    for line in lines[first - 1 : last]:
        at = line.find("#")
        if at >= 0 and line[:at].count('"') % 2 == 0 and line[:at].count("'") % 2 == 0:
            out.append(line[at:].strip())
    return "\n".join(out)[:_REMARK_CHARS]


_NEGATIVE = re.compile(r"==\s*0\b|\bnot\b|\bis\s+None\b|==\s*False\b|\bis\s+False\b")
_LEAVES = re.compile(r"^(?:return\b|raise\b|continue\b|break\b)|\bdisabled\s*=\s*True\b")
_BLOCK_LINES = 12


def turns_off(lines: list[str], line: int) -> bool:
    """Does the `if` on `line` (1-based) turn the path off by itself: one negative check (`if
    handle.multicast_ptr == 0:`, not `if not same_node and not ptr:`, whose other half is a
    configuration), and a block that leaves (returns, raises, sets `disabled = True`)?"""
    head = lines[line - 1]
    test = head.strip().split("if", 1)[-1].rsplit(":", 1)[0]
    if re.search(r"\band\b|\bor\b", test) or not _NEGATIVE.search(test):
        return False
    indent = len(head) - len(head.lstrip())
    last = ""
    for text in lines[line : line + _BLOCK_LINES]:
        code = text.strip()
        if not code or code.startswith("#"):
            continue
        if len(text) - len(text.lstrip()) <= indent:
            break
        last = code
        if _LEAVES.search(code):
            return True
    return bool(_LEAVES.search(last))
