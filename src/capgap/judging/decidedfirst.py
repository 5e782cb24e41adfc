"""Gates the target never gets to: the path they guard also asks for a value that the tree's
own resolver never gives the target.

`return fa_version == 4 and not quantized` past `if not is_device_capability_family(100): return
False`: on 12.0 `fa_version` comes from `get_flash_attn_version()`, which never returns 4 there
(judging.resolved). Letting 12.0 past the family test would change nothing: the version shuts it
out first, and that is decided (and judged) in the resolver. A gate finding whose path asks such a
value is demoted to low and names the resolver and what it gives the target.
"""

from __future__ import annotations

import ast
from typing import Any

from capgap.arch import ArchSpec, all_facts
from capgap.findings import Finding, lowered
from capgap.judging.resolved import ANY, UNKNOWN_ITEM, Module, Resolver, Values, join_values
from capgap.judging.symbolic import CAP_NAME

_RULES = frozenset({"gate-excludes-arch", "gate-admits-unsupported"})
_SEVERE = ("medium", "high")
Function = ast.FunctionDef | ast.AsyncFunctionDef


def demote(findings: list[Finding], archs: tuple[ArchSpec, ...], resolver: Resolver) -> list[Finding]:
    """The findings, those on a gate whose path asks a value the target is never given demoted to low."""
    facts = all_facts()
    out: list[Finding] = []
    for finding in findings:
        said = ""
        module = finding.extra.get("module") if finding.extra else None
        if finding.rule in _RULES and finding.severity in _SEVERE and isinstance(module, str):
            parsed = resolver.module(module)
            arch = facts.get(finding.arch)
            if parsed is not None and arch is not None:
                try:
                    said = _never_given(parsed, finding.line, resolver, arch)
                except RecursionError:  # a statement nested too deep to read: nothing is said
                    said = ""
        if said:
            finding = lowered(finding, f"{finding.arch} never takes this path: {said}", "decided_first", said)
        out.append(finding)
    return out


def _never_given(module: Module, line: int, resolver: Resolver, arch: Any) -> str:
    """Why the path the statement at `line` guards is shut to `arch` by a resolved value, or ""."""
    block = module.block_at(line)
    found = _enclosing(block, line) if block is not None else None
    if found is None:
        return ""
    func = found[0]
    cls: ast.ClassDef | None = None
    for part in _path_conjuncts(func, line):
        if cls is None and _of_self(part):
            # `self.x == 4`: what the class's methods assign `self.x`, read in the class whole
            outer = module.block_at(line, outer=True)
            whole = _enclosing(outer, line) if outer is not None else None
            func, cls = whole if whole is not None else (func, None)
        said = _refused_conjunct(part, func, cls, module, resolver, arch)
        if said:
            return said
    return ""


def _of_self(part: ast.expr) -> bool:
    left = part.left if isinstance(part, ast.Compare) else None
    return isinstance(left, ast.Attribute) and isinstance(left.value, ast.Name) and left.value.id == "self"


def _enclosing(tree: ast.Module, line: int) -> tuple[Function, ast.ClassDef | None] | None:
    """The innermost function holding `line`, and the class it is a method of (or None)."""
    best: tuple[Function, ast.ClassDef | None] | None = None

    def visit(node: ast.AST, cls: ast.ClassDef | None) -> None:
        nonlocal best
        for child in ast.iter_child_nodes(node):
            if not hasattr(child, "lineno") or not child.lineno <= line <= (child.end_lineno or child.lineno):
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                best = (child, cls if node is cls else None)
                visit(child, None)
            elif isinstance(child, ast.ClassDef):
                visit(child, child)
            else:
                visit(child, cls)

    visit(tree, None)
    return best


def _path_conjuncts(func: Function, line: int) -> list[ast.expr]:
    """The conditions the path at `line` asks all of: the conjuncts of the `if` test or the
    return there; past a guard clause (`if not ok: return False`), those of the function's
    final return."""
    out: list[ast.expr] = []
    for node in ast.walk(func):
        if not isinstance(node, (ast.If, ast.Return)) or not node.lineno <= line <= (node.end_lineno or 0):
            continue
        if isinstance(node, ast.Return) and node.value is not None:
            out += _conjuncts(node.value)
        elif isinstance(node, ast.If) and node.test.lineno <= line <= (node.test.end_lineno or 0):
            out += _conjuncts(node.test)
            if node.body and isinstance(node.body[-1], (ast.Return, ast.Raise)) and not node.orelse:
                last = func.body[-1]
                if isinstance(last, ast.Return) and last.value is not None and last is not node:
                    out += _conjuncts(last.value)
    return out


def _conjuncts(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return [c for v in node.values for c in _conjuncts(v)]
    return [node]


def _refused_conjunct(
    part: ast.expr, func: Function, cls: ast.ClassDef | None, module: Module, resolver: Resolver, arch: Any
) -> str:
    """`x == 4` / `self.x in (3, 4)` where every assignment of x calls a function of the tree that
    never returns such a value on `arch`: the reason, else ""."""
    if not (
        isinstance(part, ast.Compare) and len(part.ops) == 1 and isinstance(part.ops[0], (ast.Eq, ast.In))
    ):
        return ""
    try:
        wanted = ast.literal_eval(part.comparators[0])
        if isinstance(part.ops[0], ast.In):
            accepted = set(wanted) if isinstance(wanted, (tuple, list, set, frozenset)) else None
        else:
            accepted = {wanted}
    except (ValueError, TypeError, SyntaxError, RecursionError):  # (TypeError: `x == [1, 2]`)
        return ""
    if not accepted:
        return ""
    if any(isinstance(v, bool) or v is None for v in accepted):
        return ""  # `x == True`, `x is None`: no value a resolver picks among
    if CAP_NAME.search(ast.unparse(part.left).rpartition(".")[2]):
        return ""  # `capability == (10, 3)`: the arch test itself, whatever function reads it
    calls = _assigned_calls(part.left, func, cls)
    if not calls:
        return ""
    given: Values = frozenset()
    names: list[str] = []
    for call in calls:
        found = resolver.function(module, call.func.id)  # type: ignore[attr-defined]
        if found is None:
            return ""
        owner, callee = found
        args = tuple(UNKNOWN_ITEM for _ in call.args)
        given = join_values(given, resolver.values(owner, callee, args, arch))
        names.append(f"{callee.name}() ({owner.path}:{callee.lineno})")
    if given is ANY or not given or not all(_known(v) for v in given) or given & accepted:
        return ""
    shown = ", ".join(sorted(repr(v) for v in given))
    return (
        f"'{ast.unparse(part)}' never holds there: {', '.join(dict.fromkeys(names))} gives {arch.cc} "
        f"{shown} only; the target is decided there"
    )


def _known(value: Any) -> bool:
    """A value with no unknown part (`(?, ?)`: a capability read, no choice of the tree's)."""
    if isinstance(value, tuple):
        return all(_known(v) for v in value)
    return value is not UNKNOWN_ITEM


def _assigned_calls(target: ast.expr, func: Function, cls: ast.ClassDef | None) -> list[ast.Call]:
    """The calls every assignment of the local `target` (in `func`), or of `self.target` (in any
    method of `cls`), assigns; [] when one assigns anything else or none is found."""
    if isinstance(target, ast.Name):
        where: list[ast.AST] = [func]
        if target.id in {a.arg for a in func.args.args + func.args.kwonlyargs + func.args.posonlyargs}:
            return []  # a parameter: what the caller passes
        matches = lambda t: isinstance(t, ast.Name) and t.id == target.id  # noqa: E731
    elif (
        isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == "self"
        and cls is not None
    ):
        where = [cls]
        matches = lambda t: (  # noqa: E731
            isinstance(t, ast.Attribute)
            and isinstance(t.value, ast.Name)
            and t.value.id == "self"
            and t.attr == target.attr
        )
    else:
        return []
    calls: list[ast.Call] = []
    for scope in where:
        for node in ast.walk(scope):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr))
                else [t for item in node.items if (t := item.optional_vars) is not None]
                if isinstance(node, (ast.With, ast.AsyncWith))
                else [node.target]
                if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension))
                else []
            )
            for t in targets:
                for sub in ast.walk(t):
                    if not matches(sub):
                        continue
                    value = getattr(node, "value", None)
                    if (
                        not isinstance(node, (ast.Assign, ast.AnnAssign))
                        or t is not sub
                        or not isinstance(value, ast.Call)
                        or not isinstance(value.func, ast.Name)
                    ):
                        return []
                    calls.append(value)
    return calls
