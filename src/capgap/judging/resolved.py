"""The values a function of the tree can return on each arch, read from its source.

vLLM picks its FlashAttention version in one function: 3 on 9.x, 4 on 10.x, else 2, then a
configured override, then `assert is_fa_version_supported(fa_version)`, whose FA4 check refuses
12.x. Read statement by statement for one arch, with what each variable may hold so far (an `if`
the arch decides takes one branch, one it does not decide joins both; an assert of a predicate
keeps the values the predicate may accept), that function returns 2 or None on 12.0 and never 4:
a path that also asks `fa_version == 4` is shut to 12.0 before any arch test of its own.

Only what is read for certain narrows a value; anything else leaves it unknown (`ANY`), so an
answer here is never more than the code says. Functions are found through the module's imports
(at any depth: engines import lazily) and read from the tree's files, never imported.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from capgap.arch import ArchFacts
from capgap.judging.callees import import_map
from capgap.judging.symbolic import Context, Sym, evaluate, tri

ANY = None  # a value that is not known (the type of a value set is `frozenset | None`)
Values = frozenset[Any] | None
_MAX_DEPTH = 4  # calls followed from the function asked
_MAX_VALUES = 16  # a set larger than this says too little: unknown


class _Unknown:
    """An item of a returned tuple that is not known (`return False, f"... {x}"`)."""

    def __repr__(self) -> str:
        return "?"


UNKNOWN_ITEM = _Unknown()


class _Other:
    """An argument unlike every constant the function compares it with (to see what a predicate
    does with a value it does not name)."""

    def __eq__(self, other: object) -> bool:
        return other is self

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return "<other>"


OTHER = _Other()


class Module:
    """A module of the tree: its text, and, parsed when first asked, its functions by name,
    its module-level assignments and what its imports bind."""

    def __init__(self, name: str, path: str, text: str) -> None:
        self.name, self.path, self.text = name, path, text
        self._parsed: tuple[ast.Module, dict[str, Function], dict[str, ast.expr]] | None = None
        self._imports: dict[str, str] | None = None
        self._local: dict[int, dict[str, str]] = {}

    @property
    def imports(self) -> dict[str, str]:
        if self._imports is None:
            self._imports = import_map(self.text, self.name, self.path.endswith("__init__.py"))
        return self._imports

    def local_imports(self, within: ast.AST) -> dict[str, str]:
        """What the imports inside a function of this module bind, read from its lines as the
        module's are (`from .interface import is_supported as _supported` in its body)."""
        first, last = getattr(within, "lineno", 0), getattr(within, "end_lineno", 0) or 0
        if first not in self._local:
            lines = self.text.splitlines()[first - 1 : last] if first else []
            self._local[first] = import_map("\n".join(lines), self.name, self.path.endswith("__init__.py"))
        return self._local[first]

    @property
    def functions(self) -> dict[str, Function]:
        return self._parse()[1]

    @property
    def names(self) -> dict[str, ast.expr]:
        return self._parse()[2]

    def _parse(self) -> tuple[ast.Module, dict[str, Function], dict[str, ast.expr]]:
        if self._parsed is None:
            try:
                tree = ast.parse(self.text)
            except (SyntaxError, ValueError, RecursionError):
                tree = ast.Module(body=[], type_ignores=[])  # unparseable: nothing is read from it
            functions = {n.name: n for n in tree.body if isinstance(n, Function)}
            names = {
                t.id: n.value
                for n in tree.body
                if isinstance(n, ast.Assign)
                for t in n.targets
                if isinstance(t, ast.Name)
            }
            self._parsed = (tree, functions, names)
        return self._parsed

    def block_at(self, line: int, outer: bool = False) -> ast.Module | None:
        """The innermost `def` holding `line` (`outer`: the top-level `def` or `class`, its
        decorators with it), parsed alone with the module's line numbers: a scan asks about a few
        lines of many long modules. None at module level."""
        lines = self.text.splitlines()
        if not 0 < line <= len(lines):
            return None
        floor = _indent(lines[line - 1])  # a head encloses the line only if indented less
        start = None
        for i in range(line - 1, -1, -1):
            text = lines[i]
            head = _BLOCK_HEAD.match(text)
            if head is not None and (len(head[1]) < floor or i == line - 1):
                if head[2] == "class" and not outer and i != line - 1:
                    return None  # a statement of a class body: in no function
                if not outer or not head[1]:
                    start = i
                    break
            if text.strip() and not text.lstrip().startswith("#") and not _CLOSING.match(text.lstrip()):
                floor = min(floor, _indent(text))
        if start is None:
            return None
        depth = _indent(lines[start])
        while start > 0 and lines[start - 1].strip().startswith("@") and _indent(lines[start - 1]) == depth:
            start -= 1
        end = next(
            (i for i in range(line, len(lines)) if lines[i].strip() and not lines[i].lstrip().startswith("#")
             and _indent(lines[i]) <= depth and not _CLOSING.match(lines[i].lstrip())),
            len(lines),
        )  # fmt: skip
        body = [text[depth:] if text[:depth].isspace() else text for text in lines[start:end]]
        try:  # (blank lines in front keep the module's line numbers)
            return ast.parse("\n" * start + "\n".join(body))
        except (SyntaxError, ValueError, RecursionError):
            # (a string of the block starts a line further left): the whole module then
            return self._parse()[0]


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


Function = ast.FunctionDef | ast.AsyncFunctionDef
# a line that starts a def or class (its indentation first); one that closes brackets
_BLOCK_HEAD = re.compile(r"([ \t]*)(?:async\s+)?(def|class)\s")
_CLOSING = re.compile(r"[)\]}]")


@dataclass
class Resolver:
    """Read functions of the tree on demand. `read(module)` -> (relative path, text) or None;
    `helper(module, imports)`: the scan's resolver of capability helpers (judging.registry)."""

    read: Callable[[str], tuple[str, str] | None]
    helper: Callable[[str, dict[str, str]], Callable[[str], Any]] | None = None
    _modules: dict[str, Module | None] = field(default_factory=dict)
    _memo: dict[tuple[Any, ...], Values] = field(default_factory=dict)

    def module(self, name: str) -> Module | None:
        if name not in self._modules:
            found = self.read(name)
            self._modules[name] = Module(name, found[0], found[1]) if found is not None else None
        return self._modules[name]

    def function(
        self, module: Module, name: str, within: ast.AST | None = None
    ) -> tuple[Module, ast.FunctionDef | ast.AsyncFunctionDef] | None:
        """The function a plain name means in `module` (inside the function `within`, whose own
        imports come first: `from .interface import is_supported` in its body): its own, else
        the one it imports."""
        dotted = module.local_imports(within).get(name) if within is not None else None
        if dotted is None and name in module.functions:
            return module, module.functions[name]
        dotted = dotted or module.imports.get(name)
        if not dotted or "." not in dotted:
            return None
        owner, _, short = dotted.rpartition(".")
        other = self.module(owner)
        if other is None or short not in other.functions:
            return None
        return other, other.functions[short]

    def values(
        self,
        module: Module,
        func: ast.FunctionDef | ast.AsyncFunctionDef,
        args: tuple[Any, ...],
        arch: ArchFacts,
        depth: int = 0,
    ) -> Values:
        """What `func` may return on `arch` called with `args` (positional; OTHER or
        UNKNOWN_ITEM for one not known): a set of constants, or ANY."""
        key = (module.name, func.name, func.lineno, args, arch.cc)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = ANY  # (a recursive call asks again: unknown)
        if depth > _MAX_DEPTH:
            return ANY
        params = [a.arg for a in func.args.posonlyargs + func.args.args]
        env: dict[str, Values] = {p: ANY for p in params + [a.arg for a in func.args.kwonlyargs]}
        for p, v in zip(params, args, strict=False):
            env[p] = ANY if v is UNKNOWN_ITEM else frozenset({v})
        run = _Run(self, module, arch, depth, {}, func)
        run.block(func.body, env)
        result = run.returned
        self._memo[key] = result
        return result


def join_values(a: Values, b: Values) -> Values:
    if a is ANY or b is ANY:
        return ANY
    joined = a | b
    return joined if len(joined) <= _MAX_VALUES else ANY


def _join_envs(envs: Iterable[dict[str, Values] | None]) -> dict[str, Values] | None:
    live = [e for e in envs if e is not None]
    if not live:
        return None
    out = dict(live[0])
    for e in live[1:]:
        for name in set(out) | set(e):
            out[name] = join_values(out.get(name, ANY), e.get(name, ANY))
    return out


def truthiness(values: Values) -> bool | None:
    """True when every value is truthy, False when none is, else None."""
    if values is ANY or not values:
        return None
    if any(v is UNKNOWN_ITEM or v is OTHER for v in values):
        return None
    kinds = {bool(v) for v in values}
    return kinds.pop() if len(kinds) == 1 else None


class _Run:
    """One reading of a function's body for one arch."""

    def __init__(
        self,
        resolver: Resolver,
        module: Module,
        arch: ArchFacts,
        depth: int,
        asts: dict[str, ast.expr],
        func: ast.AST,
    ) -> None:
        self.resolver, self.module, self.arch, self.depth, self.func = resolver, module, arch, depth, func
        self.asts = asts  # what a variable was assigned, for the capability reading of a test
        self.returned: Values = frozenset()

    def block(self, body: list[ast.stmt], env: dict[str, Values] | None) -> dict[str, Values] | None:  # noqa: C901
        for st in body:
            if env is None:
                return None
            if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None:
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                value = self.value(st.value, env)
                for t in targets:
                    if isinstance(t, ast.Name):
                        env[t.id] = value
                        self.asts[t.id] = st.value
                    else:
                        self._forget(t, env)
            elif isinstance(st, ast.Return):
                value = self.value(st.value, env) if st.value is not None else frozenset({None})
                self.returned = join_values(self.returned, value)
                env = None
            elif isinstance(st, ast.Raise):
                env = None
            elif isinstance(st, ast.If):
                taken = self.truth(st.test, env)
                then = self.block(st.body, dict(env)) if taken is not False else None
                other = self.block(st.orelse, dict(env)) if taken is not True else None
                if taken is None and not st.orelse:
                    other = self._refined(st.test, dict(env), holds=False)
                env = _join_envs([then, other])
            elif isinstance(st, ast.Assert):
                failed = self.truth(st.test, env) is False
                env = None if failed else self._refined(st.test, env, holds=True)
            elif isinstance(st, ast.Try):
                before = dict(env)
                body = self.block(st.body + st.orelse, dict(env))
                handlers = [self.block(h.body, self._forgetting(st.body, before)) for h in st.handlers]
                env = _join_envs([body, *handlers])
                if env is not None and st.finalbody:
                    env = self.block(st.finalbody, env)
            elif isinstance(st, (ast.With, ast.AsyncWith)):
                env = self.block(st.body, env)
            elif isinstance(st, (ast.For, ast.AsyncFor, ast.While)):
                # the body may run any number of times: what it assigns is unknown after it
                looped = self._forgetting([st], env)
                self.block(st.body, dict(looped))
                env = _join_envs([looped, self.block(st.orelse, dict(looped))])
            elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                env[st.name] = ANY
            else:
                self._forget(st, env)
        return env

    def _forget(self, node: ast.AST, env: dict[str, Values]) -> None:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                env[sub.id] = ANY
                self.asts.pop(sub.id, None)

    def _forgetting(self, body: list[ast.stmt], env: dict[str, Values]) -> dict[str, Values]:
        out = dict(env)
        for st in body:
            self._forget(st, out)
        return out

    def _refined(self, test: ast.expr, env: dict[str, Values], holds: bool) -> dict[str, Values]:
        """`assert P(x)` (holds) / past `if not P(x): raise` (holds=False of `not P(x)`): x keeps
        the values P may accept."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._refined(test.operand, env, not holds)
        if (
            not holds
            or not isinstance(test, ast.Call)
            or not isinstance(test.func, ast.Name)
            or len(test.args) != 1
        ):
            return env
        arg = test.args[0]
        found = self.resolver.function(self.module, test.func.id, self.func)
        if not isinstance(arg, ast.Name) or found is None:
            return env
        owner, func = found
        current = env.get(arg.id, ANY)
        if current is ANY:
            current = _compared_constants(self.resolver, owner, func)
            if not current:
                return env
            outside = self.resolver.values(owner, func, (OTHER,), self.arch, self.depth + 1)
            if outside is ANY or truthiness(outside) is not False and outside:
                return env  # P may accept a value it does not name: nothing is narrowed
        kept = frozenset(
            v
            for v in current
            if truthiness(self.resolver.values(owner, func, (v,), self.arch, self.depth + 1)) is not False
        )
        return {**env, arg.id: kept}

    def value(self, node: ast.expr, env: dict[str, Values]) -> Values:  # noqa: C901
        if isinstance(node, ast.Constant):
            return frozenset({node.value})
        if isinstance(node, ast.Name) and node.id in env:
            return env[node.id]
        if isinstance(node, ast.IfExp):
            taken = self.truth(node.test, env)
            if taken is True:
                return self.value(node.body, env)
            if taken is False:
                return self.value(node.orelse, env)
            return join_values(self.value(node.body, env), self.value(node.orelse, env))
        if isinstance(node, ast.Tuple):
            items = []
            for elt in node.elts:
                got = self.value(elt, env)
                items.append(next(iter(got)) if got is not ANY and len(got) == 1 else UNKNOWN_ITEM)
            return frozenset({tuple(items)})
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            index = node.slice.value
            base = self.value(node.value, env)
            if base is ANY or not isinstance(index, int):
                return ANY
            items = set()
            for v in base:
                if not isinstance(v, tuple) or not -len(v) <= index < len(v) or v[index] is UNKNOWN_ITEM:
                    return ANY
                items.add(v[index])
            return frozenset(items)
        if isinstance(node, ast.Call):
            called = self.call(node, env)
            if called is not ANY:
                return called
        if isinstance(node, ast.BoolOp):
            # `configured() or n` gives one of its operands: a bool only where every one is one
            parts = [self.value(v, env) for v in node.values]
            if all(p is not ANY and all(isinstance(v, bool) for v in p) for p in parts):
                truth = self.truth(node, env)
                return frozenset({truth}) if truth is not None else frozenset({True, False})
            joined: Values = frozenset()
            for p in parts:
                joined = join_values(joined, p)
            return joined
        if isinstance(node, (ast.Compare, ast.UnaryOp, ast.Call)):
            truth = self.truth(node, env)
            if truth is not None:
                return frozenset({truth})
        return ANY

    def call(self, node: ast.Call, env: dict[str, Values]) -> Values:
        """A call of a plain-named function of the tree, with what its arguments are known to be."""
        if not isinstance(node.func, ast.Name) or node.func.id in env or node.keywords and not node.args:
            return ANY
        found = self.resolver.function(self.module, node.func.id, self.func)
        if found is None:
            return ANY
        args = []
        for a in node.args:
            got = self.value(a, env) if not isinstance(a, ast.Starred) else ANY
            args.append(next(iter(got)) if got is not ANY and len(got) == 1 else UNKNOWN_ITEM)
        owner, func = found
        return self.resolver.values(owner, func, tuple(args), self.arch, self.depth + 1)

    def truth(self, node: ast.expr, env: dict[str, Values]) -> bool | None:
        """The test's truth on this arch: True, False, or None (it depends on more)."""
        if isinstance(node, ast.BoolOp):
            parts = [self.truth(v, env) for v in node.values]
            deciding = isinstance(node.op, ast.Or)
            if deciding in parts:
                return deciding
            return None if None in parts else not deciding
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self.truth(node.operand, env)
            return None if inner is None else not inner
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            compared = self._compared(node, env)
            if compared is not None:
                return compared
        if isinstance(node, ast.Name) and node.id in env and env[node.id] is not ANY:
            return truthiness(env[node.id])
        if isinstance(node, ast.Call):
            got = self.call(node, env)
            if got is not ANY:
                return truthiness(got)
        return self._capability(node, env)

    def _compared(self, node: ast.Compare, env: dict[str, Values]) -> bool | None:
        """`x == 4`, `x in (3, 4)`, `x is None` with x's values known."""
        op = node.ops[0]
        left, right = node.left, node.comparators[0]
        if not (isinstance(left, ast.Name) and left.id in env and env[left.id] is not ANY):
            return None
        try:
            other = ast.literal_eval(right)
        except (ValueError, TypeError, SyntaxError, RecursionError):
            return None
        values = env[left.id]
        assert values is not None
        outcomes = set()
        for v in values:
            if v is UNKNOWN_ITEM:
                return None
            if isinstance(op, ast.Eq):
                outcomes.add(v == other if v is not OTHER else False)
            elif isinstance(op, ast.NotEq):
                outcomes.add(v != other if v is not OTHER else True)
            elif isinstance(op, ast.In) and isinstance(other, (tuple, list, set, frozenset)):
                outcomes.add(v in other if v is not OTHER else False)
            elif isinstance(op, ast.NotIn) and isinstance(other, (tuple, list, set, frozenset)):
                outcomes.add(v not in other if v is not OTHER else True)
            elif isinstance(op, ast.Is) and other is None:
                outcomes.add(v is None)
            elif isinstance(op, ast.IsNot) and other is None:
                outcomes.add(v is not None)
            else:
                return None
        return outcomes.pop() if len(outcomes) == 1 else None

    def _capability(self, node: ast.expr, env: dict[str, Values]) -> bool | None:
        """The test read as a capability expression (judging.symbolic), with the names known here."""
        module = self.module

        def lookup(name: str) -> object:
            known = env.get(name, ANY)
            if known is not ANY and len(known) == 1:
                value = next(iter(known))
                if value is not UNKNOWN_ITEM and value is not OTHER:
                    return Sym("const", value)
            if name in self.asts:
                return self.asts[name]
            return module.names.get(name) if name not in env else None

        helper = (
            self.resolver.helper(module.name, module.imports) if self.resolver.helper else (lambda n: None)
        )
        try:
            return tri(evaluate(node, Context(lookup, helper)))(self.arch)
        except (TypeError, ValueError, AttributeError, RecursionError):
            return None


def _compared_constants(
    resolver: Resolver, module: Module, func: ast.FunctionDef | ast.AsyncFunctionDef, depth: int = 0
) -> frozenset[Any]:
    """The constants a function compares its first parameter with (`if fa_version == 4:`), or,
    of a wrapper handing it on whole (`return _is_supported(fa_version)`), those the callee does."""
    params = [a.arg for a in func.args.posonlyargs + func.args.args]
    if not params:
        return frozenset()
    first = params[0]
    out: set[Any] = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == first:
            for op, right in zip(node.ops, node.comparators, strict=True):
                try:
                    value = ast.literal_eval(right)
                except (ValueError, TypeError, SyntaxError, RecursionError):
                    continue
                if isinstance(op, ast.Eq) and isinstance(value, (int, str)):
                    out.add(value)
                elif isinstance(op, ast.In) and isinstance(value, (tuple, list, set, frozenset)):
                    out.update(v for v in value if isinstance(v, (int, str)))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id == first
            and depth < _MAX_DEPTH
        ):
            found = resolver.function(module, node.func.id, func)
            if found is not None and found[1] is not func:
                out.update(_compared_constants(resolver, found[0], found[1], depth + 1))
    return frozenset(out)
