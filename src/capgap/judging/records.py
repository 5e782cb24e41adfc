"""What one file contributes to a scan, before any arch is considered.

Extraction is a pure function of a file's bytes, so these records are what the content-hash
cache stores; the rules evaluate them against the target archs afterwards (cheap), across files
(a table defined in one module and read, with a capability key, in another).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from capgap.judging.symbolic import UNKNOWN, Context, Sym, evaluate


@dataclass
class Scope:
    """Assignments visible at a point: `name -> expr` for a function, its class, its module."""

    names: dict[str, ast.expr] = field(default_factory=dict)
    parent: Scope | None = None

    def lookup(self, name: str) -> ast.expr | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        return None


@dataclass
class TableKey:
    text: str  # as written: `9`, `"9.0"`, `(9, 0)`
    cc: str  # "9.0"
    value: Any = None  # the entry's value with simple constants resolved, when JSON-able


@dataclass
class TableDef:
    symbol: str  # qualified within its module: NAME, Class.NAME, func.NAME
    name: str
    line: int
    style: str  # major-int | number-int | dotted-str | sm-str | tuple
    keys: list[TableKey]
    named_like_arch: bool  # the name or a comment beside it speaks of archs
    source: str


@dataclass
class TableUse:
    name: str  # the table's last name (`_WORLD_SIZES_MULTIMEM` for `self._WORLD_SIZES_MULTIMEM`)
    line: int
    access: str  # subscript | get | in | try
    key: ast.expr
    scope: Scope
    consequence: str  # what a missing key does here, "{arch}" left to fill
    denies: bool = False  # `if cap in T: raise/return`: a hit refuses, so a missing key is no gap


@dataclass
class HelperDef:
    """A function or module variable whose value may be a capability predicate."""

    name: str
    kind: str  # "def" | "var"
    params: list[str]
    body: list[ast.stmt]  # var: [ast.Expr(value)]; def: parsed from `source` when first needed
    scope: Scope
    method: bool = False  # a method is only what `obj.name()` calls, never a bare `name()`
    # def: its returns and assignments as source text. A scan finds over a thousand candidate
    # helpers and a few hundred are ever called; text crosses from the worker processes far
    # cheaper than syntax trees, and only the called ones are parsed.
    source: tuple[str, ...] = ()

    def statements(self) -> list[ast.stmt]:
        if not self.body and self.source:
            self.body = [ast.parse(text).body[0] for text in self.source]
        return self.body

    def evaluate(self, args: list[Sym], kwargs: dict[str, Sym], ctx: Context) -> Sym:
        if self.kind == "var":
            return self._evaluate_var(self.body[0].value, ctx)  # type: ignore[attr-defined]
        bound: dict[str, Any] = dict(zip(self.params, args, strict=False))
        bound.update({k: v for k, v in kwargs.items() if k in self.params})
        local = Scope({}, self.scope)
        return self._run(self.statements(), bound, local, ctx)

    def _evaluate_var(self, value: ast.expr, ctx: Context) -> Sym:
        # lru_cache(maxsize=1)(partial(f, majors=[10])) / functools.cache(f) / partial(f, ...)
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Call) and value.args:
            value = value.args[0]
        if isinstance(value, ast.Call) and _last(value.func) == "partial" and value.args:
            target = _last(value.args[0])
            helper = ctx.helper(target)
            if helper is None or helper is self:
                return UNKNOWN
            sub = Context(ctx.lookup, ctx.helper, ctx.depth + 1, ctx.seen)
            args = [evaluate(a, sub) for a in value.args[1:]]
            kwargs = {k.arg: evaluate(k.value, sub) for k in value.keywords if k.arg}
            return helper.evaluate(args, kwargs, sub)
        if isinstance(value, ast.Lambda):
            return self._run([ast.Return(value.body)], {}, Scope({}, self.scope), ctx)
        scope = self.scope
        return evaluate(value, Context(_lookup(scope, {}, ctx), ctx.helper, ctx.depth + 1, ctx.seen))

    def _run(self, body: list[ast.stmt], bound: dict[str, Any], local: Scope, ctx: Context) -> Sym:
        sub = Context(_lookup(local, bound, ctx), ctx.helper, ctx.depth + 1, ctx.seen)
        for stmt in _flatten(body):
            if isinstance(stmt, ast.Assign):
                bind(local, stmt.targets, stmt.value)
            elif isinstance(stmt, ast.Return) and stmt.value is not None:
                result = evaluate(stmt.value, sub)
                if result.kind in {"pred", "cap"}:
                    return result
        return UNKNOWN


def _lookup(scope: Scope, bound: dict[str, Any], ctx: Context) -> Any:
    def find(name: str) -> Any:
        if name in bound:
            return bound[name]
        found = scope.lookup(name)
        return found if found is not None else ctx.lookup(name)

    return find


def _flatten(body: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, (ast.If, ast.With, ast.Try)):
            out.extend(_flatten(stmt.body))
            out.extend(_flatten(getattr(stmt, "orelse", [])))
    return out


def _last(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def bind(scope: Scope, targets: list[ast.expr], value: ast.expr) -> None:
    """Record `name = value`, `a, b = value` (as value[0], value[1]) and `self.x = value`."""
    for target in targets:
        if isinstance(target, ast.Name):
            scope.names.setdefault(target.id, value)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            if target.value.id in {"self", "cls"}:
                scope.names.setdefault(f"{target.value.id}.{target.attr}", value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Name):
                    item = ast.Subscript(value=value, slice=ast.Constant(i), ctx=ast.Load())
                    scope.names.setdefault(elt.id, item)


@dataclass
class GateSite:
    line: int
    test: ast.expr
    negative: bool  # `if not X: return` / `!=` / `not in`: the path the gate selects is the rest
    scope: Scope
    needs: list[tuple[str, ...]]  # features the selected path evidently needs
    fallback: str  # what runs instead ("" when the code does not say)
    source: str
    context: str  # enclosing qualname


@dataclass
class BuildList:
    line: int
    symbol: str  # TORCH_CUDA_ARCH_LIST, -gencode, CMAKE_CUDA_ARCHITECTURES, cuda_archs
    archs: list[str]  # as written
    source: str


@dataclass
class FileFacts:
    path: str  # relative to the target root
    module: str
    tables: list[TableDef] = field(default_factory=list)
    uses: list[TableUse] = field(default_factory=list)
    helpers: list[HelperDef] = field(default_factory=list)
    gates: list[GateSite] = field(default_factory=list)
    builds: list[BuildList] = field(default_factory=list)
    module_scope: Scope = field(default_factory=Scope)
    imports: dict[str, str] = field(default_factory=dict)  # local name -> "pkg.module" it came from
    skipped: str = ""  # reason, when the file could not be read or parsed
