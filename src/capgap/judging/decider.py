"""Which part of a compound test decides an arch's outcome: the name a finding should give.

`if fusion is None and not prefer_custom and (is_sm90 or is_sm100) and tp > 1:` turns 12.0 away
on its third operand; the flag `prefer_custom` (set by `is_blackwell` a few lines up) depends on
the arch too, but admits 12.0. A finding names the operand that shuts the target out where the
siblings get through, and the line it is written on, not the first arch-dependent name of the
test.
"""

from __future__ import annotations

import ast
import re

from capgap.arch import ArchFacts, all_facts
from capgap.judging.symbolic import Context, evaluate, tri


def _operands(test: ast.expr, op: type[ast.boolop]) -> list[ast.expr]:
    """The operands of a chain of `op` (`a and (b and c)` -> a, b, c)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, op):
        return [leaf for value in test.values for leaf in _operands(value, op)]
    return [test]


def deciding(
    test: ast.expr, ctx: Context, target: str, owners: list[str]
) -> tuple[tuple[str, ...], int] | None:
    """(names, line) of the operand of `test` that decides against the target: in an `and`
    the target fails, the first operand false for it and not false for every owner; in an `or`
    it passes (a guard that turns it away), the first operand true for it and not true for every
    owner. None when the test is no such chain, or no single operand tells them apart."""
    facts = all_facts()
    if not isinstance(test, ast.BoolOp) or target not in facts:
        return None
    refuse = isinstance(test.op, ast.And)  # the target fails an `and`, passes an `or`
    for operand in _operands(test, type(test.op)):
        sym = evaluate(operand, ctx)
        if sym.kind != "pred" or not sym.names:
            continue
        judge = tri(sym)
        mine = judge(facts[target])
        if mine is not (not refuse):
            continue
        if all(judge(facts[cc]) is (not refuse) for cc in owners if cc in facts):
            continue  # the owners are decided the same way here: not what tells them apart
        return sym.names, operand.lineno
    return None


# A number or name that means the target's own family in a test's text: `120`, `12`, `sm_12x`
def _names_family(text: str, major: int) -> bool:
    return re.search(rf"(?<![\w.])(?:{major}|{major}\d)(?![\w.])|sm_?{major}", text, re.I) is not None


def _negation(test: ast.expr) -> bool:
    """`not is_sm120`, `not use_sm120_dsa_indexer()`: a flag or a helper's answer negated, the way
    code says which family it leaves out (a comparison, `major != 9`, reads as any other bound)."""
    return (
        isinstance(test, ast.UnaryOp)
        and isinstance(test.op, ast.Not)
        and isinstance(test.operand, (ast.Name, ast.Attribute, ast.Call))
    )


def carve_out(test: ast.expr, ctx: Context, target: str, unequal: bool = True) -> tuple[str, int] | None:
    """(source, line) of an operand of the `and` chain `test` (or the whole test) that the target
    fails and that names the target's own family to shut it out (`has_device_capability(90) and
    not family(120)`, `major >= 10 and major != 12`, `not use_sm120_dsa_indexer()`): false for
    every GPU of that family, true for every other GPU since Hopper. A deliberate exclusion, not a
    path left unlisted. `unequal`: a test alone that leaves the GPUs it names out (`cap != (12, 0)`)
    counts too."""
    facts = all_facts()
    if isinstance(test, ast.Name):  # `use_sparse = not is_sm120 and (...)`, then `if use_sparse:`
        bound = ctx.lookup(test.id)
        test = bound if isinstance(bound, ast.expr) else test
    if target not in facts:
        return None
    major = facts[target].major
    # `elif not use_sm120_dsa_indexer():` alone carves the family out as an operand of an `and`
    # does; a test alone must negate a flag or helper (`cap < (12, 0)` is a ceiling on every newer GPU)
    anded = isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)
    if not anded and not _negation(test) and not (unequal and _unequal(test)):
        return None
    for operand in _operands(test, ast.And) if anded else [test]:
        source = ast.unparse(operand)
        if not _names_family(source, major):
            continue
        sym = evaluate(operand, ctx)
        if sym.kind != "pred":
            continue
        judge = tri(sym)
        if all(judge(a) is (a.major != major) for a in facts.values() if a.major >= 9):
            return source, operand.lineno
        # `cap != (12, 0)`: the one GPU named is turned away, every other since Hopper let in
        others = [a for a in facts.values() if a.major >= 9 and a.major != major]
        if unequal and _unequal(operand) and judge(facts[target]) is False and all(judge(a) for a in others):
            return source, operand.lineno
    return None


def _unequal(test: ast.expr) -> bool:
    """`cap != (12, 0)`, `major not in (12,)`: GPUs named to be left out (no bound: `cap < (12, 0)`
    shuts out every newer GPU as well)."""
    return isinstance(test, ast.Compare) and all(isinstance(op, (ast.NotEq, ast.NotIn)) for op in test.ops)


_ARCH_WORD = re.compile(r"major|capab|arch|\bcc\b|\bsm|_sm|device_sm|\bcap\b|_cap\b", re.I)


_LETS_IN: tuple[type[ast.cmpop], ...] = (ast.Eq, ast.In)
NAMES: tuple[type[ast.cmpop], ...] = (ast.Eq, ast.In, ast.NotEq, ast.NotIn)


def names_generation(
    test: ast.expr | None, target: ArchFacts, ops: tuple[type[ast.cmpop], ...] = _LETS_IN
) -> bool:
    """Does the test let GPUs in by naming the target's major or arch as such (`major == 8`, `cap in
    (80, 89)`, `(8, 9)`), not by a bound (`>= 80`) that happens to hold for it? With `ops=NAMES`,
    naming it to leave it out counts too (`arch not in ((9, 0), (12, 0))`)."""
    if test is None:
        return False
    major, number = target.major, target.number
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare) or not all(isinstance(op, ops) for op in node.ops):
            continue
        if not _ARCH_WORD.search(ast.unparse(node.left)):
            continue  # `head_dim == 8` names no GPU
        for side in node.comparators:
            values = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
            for v in values:
                if (
                    isinstance(v, ast.Constant)
                    and v.value in (major, number)
                    and not isinstance(v.value, bool)
                ):
                    return True
                if isinstance(v, ast.Tuple) and [getattr(e, "value", None) for e in v.elts][:1] == [major]:
                    return True
    return False
