"""Capability bounds written as class attributes and compared in a base class.

xFormers' attention operators each say which GPUs they serve in their class body
(`CUDA_MAXIMUM_COMPUTE_CAPABILITY = (9, 0)` on `cutlass.FwOp`), and one method of the base class
refuses a device outside them (`if device_capability > cls.CUDA_MAXIMUM_COMPUTE_CAPABILITY:
reasons.append(...)`). Read here: the bounds (a two-int tuple, `90`, or `"9.0"`, under a name that
says capability), and the side each name bounds, from how a method compares it with a capability.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from capgap.judging import evidence
from capgap.judging.records import ClassBound, FileFacts

_CAPABILITY_NAME = re.compile(r"capab|(?:^|_)sm(?:_|$)|(?:^|_)cc(?:_|$)|arch", re.I)
# `device_capability > cls.CUDA_MAXIMUM_COMPUTE_CAPABILITY`, and the same written the other way:
# found from each `cls.` / `self.` (a `find` jumps between them), the operator and the operand on
# the other side read from a few characters around it
_NAME = re.compile(r"[A-Z][A-Z0-9_]*\b")
_BEFORE = re.compile(r"(\w+)[ \t]*(<=|>=|<|>)[ \t]*$")
_AFTER = re.compile(r"[ \t]*(<=|>=|<|>)[ \t]*(\w+)")
_AROUND = 80


def arch_value(node: ast.expr | None) -> tuple[int, int] | None:
    """(9, 0) from `(9, 0)`, `90` or `"9.0"`; None for anything else."""
    if isinstance(node, ast.Tuple) and len(node.elts) == 2:
        parts = [e.value for e in node.elts if isinstance(e, ast.Constant) and type(e.value) is int]
        return (parts[0], parts[1]) if len(parts) == 2 and 3 <= parts[0] <= 30 else None
    if isinstance(node, ast.Constant) and type(node.value) is int and 30 <= node.value < 300:
        return divmod(node.value, 10)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        major, _, minor = node.value.partition(".")
        if major.isdigit() and minor.isdigit() and 3 <= int(major) <= 30:
            return int(major), int(minor)
    return None


def read_class(facts: FileFacts, node: ast.ClassDef, source: str) -> None:
    """The capability bounds `node`'s body assigns (`source`: the class's text, for their lines)."""
    for stmt in node.body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
        target = stmt.target if isinstance(stmt, ast.AnnAssign) else target
        if not (isinstance(target, ast.Name) and _CAPABILITY_NAME.search(target.id)):
            continue
        value = arch_value(stmt.value)
        if value is None:
            continue
        line = source.split("\n")[stmt.lineno - node.lineno] if stmt.lineno >= node.lineno else target.id
        facts.class_bounds.append(ClassBound(node.name, target.id, value, stmt.lineno, line.strip()))


def add_needs(facts: FileFacts, low: str) -> None:
    """What the module of the bounds evidently needs (`torch.ops.flash_attn_3`: wgmma), on each."""
    needs, seen = evidence.needs_with_evidence(low, 1, limit=None)
    facts.class_bounds = [replace(b, needs=tuple(needs), needs_from=tuple(seen)) for b in facts.class_bounds]


def read_checks(facts: FileFacts, text: str) -> None:
    """How the module's methods compare a capability with a class's bound: `cap > cls.MAX` makes
    MAX an upper bound, `cap < cls.MIN` a lower one."""
    for prefix in ("cls.", "self."):
        at = text.find(prefix)
        while at != -1:
            name = _NAME.match(text, at + len(prefix))
            if name is not None and _CAPABILITY_NAME.search(name[0]):
                side = _side(text, at, name)
                if side:
                    facts.bound_checks.setdefault(name[0], (side, text.count("\n", 0, at) + 1))
            at = text.find(prefix, at + len(prefix))


def _side(text: str, at: int, name: re.Match[str]) -> str:
    """ "upper" for `cap > cls.NAME` / `cls.NAME < cap`, "lower" for the other way, "" else."""
    before = _BEFORE.search(text, max(0, at - _AROUND), at)
    if before is not None and _CAPABILITY_NAME.search(before[1]):
        return "upper" if before[2].startswith(">") else "lower"
    after = _AFTER.match(text, name.end())
    if after is not None and _CAPABILITY_NAME.search(after[2]):
        return "upper" if after[1].startswith("<") else "lower"
    return ""
