"""Read one Python module's syntax tree into `FileFacts`: candidate tables, their reads, helpers
that may be capability predicates, and gate sites. Nothing is judged against an arch here."""

from __future__ import annotations

import ast
import re

from capgap.scan import evidence
from capgap.scan.keys import classify_keys, resolve_value
from capgap.scan.records import FileFacts, GateSite, HelperDef, Scope, TableDef, TableUse, bind
from capgap.scan.symbolic import CAP_NAME, call_name

_ARCH_WORDS = re.compile(
    r"capabilit|arch|\bsm\b|sm_?\d|\bcc\b|compute|gpu|device|major|hopper|blackwell", re.I
)
_CAPISH = re.compile(r"capab|(^|_)sm|arch|(^|_)cc($|_)|major", re.I)
# Names in a test that make it worth evaluating as a gate (helpers are named after archs).
_GATEISH = re.compile(
    r"capab|(^|_)sm_?(\d|$|_|version)|(^|_)cc($|_)|major|blackwell|hopper|ampere|(^|_)arch($|_)", re.I
)
_NEGATIVE_OPS = (ast.NotEq, ast.NotIn, ast.Lt, ast.LtE)
_GATE_VALUES = (ast.BoolOp, ast.Compare, ast.UnaryOp, ast.Call)


def extract(tree: ast.Module, lines: list[str], path: str, module: str) -> FileFacts:
    facts = FileFacts(path, module)
    _Walker(facts, lines).block(tree.body, [], facts.module_scope, None, is_module=True)
    return facts


def _summary(stmts: list[ast.stmt]) -> str:
    """A few words for what a block does: logs '...', returns X, raises E, calls f()."""
    parts: list[str] = []
    for stmt in stmts[:6]:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            name = call_name(call.func)
            msg = next(
                (a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)), None
            )
            if name in {"warning", "warn", "info", "debug", "error", "warning_once", "info_once"} and msg:
                parts.append(f"logs '{_short(msg)}'")
            elif name:
                parts.append(f"calls {name}()")
        elif isinstance(stmt, ast.Return):
            parts.append(f"returns {_short(ast.unparse(stmt.value))}" if stmt.value else "returns")
            break
        elif isinstance(stmt, ast.Raise):
            exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
            parts.append(f"raises {call_name(exc) if exc is not None else 'again'}")
            break
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            parts.append(f"calls {call_name(stmt.value.func)}()")
        elif isinstance(stmt, (ast.Continue, ast.Break)):
            parts.append("skips this item" if isinstance(stmt, ast.Continue) else "stops the loop")
            break
    return ", ".join(dict.fromkeys(p for p in parts if not p.endswith(" ()")))


def _short(text: str, n: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _exits(stmts: list[ast.stmt]) -> bool:
    return bool(stmts) and isinstance(stmts[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))


def _capish_key(node: ast.AST, pattern: re.Pattern[str] = _CAPISH) -> bool:
    for sub in ast.walk(node):
        name = call_name(sub) if isinstance(sub, (ast.Name, ast.Attribute)) else ""
        if name and pattern.search(name.split(".")[-1]):
            return True
    return False


def _is_negative(test: ast.expr) -> bool:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return True
    return isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], _NEGATIVE_OPS)


class _Walker:
    def __init__(self, facts: FileFacts, lines: list[str]) -> None:
        self.facts = facts
        self.lines = lines

    def src(self, line: int) -> str:
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""

    def block(
        self,
        body: list[ast.stmt],
        chain: list[str],
        scope: Scope,
        cls_scope: Scope | None,
        is_module: bool = False,
    ) -> None:
        for i, stmt in enumerate(body):
            rest = body[i + 1 :]
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.function(stmt, chain, scope, cls_scope, is_module)
            elif isinstance(stmt, ast.ClassDef):
                inner = Scope({}, scope)
                self.block(stmt.body, [*chain, stmt.name], inner, inner)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                self.assign(stmt, rest, chain, scope, cls_scope, is_module)
            elif isinstance(stmt, ast.If):
                self.gate(stmt.test, stmt.body, stmt.orelse, rest, chain, scope, stmt.lineno)
                self.exprs(stmt.test, stmt, body, i, scope)
                self.block(stmt.body, chain, scope, cls_scope, is_module)
                self.block(stmt.orelse, chain, scope, cls_scope, is_module)
            elif isinstance(stmt, ast.Assert):
                self.gate(stmt.test, rest, [], [], chain, scope, stmt.lineno)
            elif isinstance(stmt, ast.Try):
                self.block(stmt.body, chain, scope, cls_scope, is_module)
                for handler in stmt.handlers:
                    self.block(handler.body, chain, scope, cls_scope, is_module)
                self.block(stmt.orelse + stmt.finalbody, chain, scope, cls_scope, is_module)
                self.try_uses(stmt, scope)
            elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
                if isinstance(stmt, ast.While):
                    self.gate(stmt.test, stmt.body, stmt.orelse, rest, chain, scope, stmt.lineno)
                for field in ("iter", "test"):
                    if hasattr(stmt, field):
                        self.exprs(getattr(stmt, field), stmt, body, i, scope)
                self.block(stmt.body, chain, scope, cls_scope, is_module)
                self.block(getattr(stmt, "orelse", []), chain, scope, cls_scope, is_module)
            else:
                self.exprs(stmt, stmt, body, i, scope)

    def function(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef,
        chain: list[str],
        scope: Scope,
        cls_scope: Scope | None,
        is_module: bool,
    ) -> None:
        params = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
        if params and params[0] in {"self", "cls"}:
            params = params[1:]
        local = Scope({}, cls_scope or scope)
        if is_module or cls_scope is not None:
            self.facts.helpers.append(HelperDef(node.name, "def", params, node.body, local))
        for dec in node.decorator_list:  # @skipIf(get_device_capability()[0] < 9, ...)
            if (
                isinstance(dec, ast.Call)
                and call_name(dec.func) in {"skipIf", "skipif", "skipUnless"}
                and dec.args
            ):
                negative = call_name(dec.func) != "skipUnless"
                self.gate(dec.args[0], node.body, [], [], [*chain, node.name], scope, dec.lineno, negative)
        self._function_body(node.body, [*chain, node.name], local, cls_scope)

    def _function_body(
        self, body: list[ast.stmt], chain: list[str], local: Scope, cls_scope: Scope | None
    ) -> None:
        # Every assignment in the function, nested blocks included, so gates can see `major, _ = ...`.
        for sub in ast.walk(ast.Module(body=body, type_ignores=[])):
            if isinstance(sub, ast.Assign):
                attrs = [t for t in sub.targets if isinstance(t, ast.Attribute)]
                if attrs and cls_scope is not None:
                    bind(cls_scope, attrs, sub.value)
                bind(local, sub.targets, sub.value)
        self.block(body, chain, local, cls_scope)

    def assign(
        self,
        stmt: ast.Assign | ast.AnnAssign,
        rest: list[ast.stmt],
        chain: list[str],
        scope: Scope,
        cls_scope: Scope | None,
        is_module: bool,
    ) -> None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value = stmt.value
        if value is None:
            return
        if is_module or (cls_scope is scope):
            bind(scope, targets, value)
        if isinstance(value, ast.Dict):
            for target in targets:
                self.table(target, value, chain, scope, cls_scope, stmt.lineno)
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if is_module and names and isinstance(value, (*_GATE_VALUES, ast.Lambda, ast.Name)):
            for name in names:
                self.facts.helpers.append(HelperDef(name, "var", [], [ast.Expr(value)], scope))
        elif chain and not is_module and cls_scope is not scope and isinstance(value, _GATE_VALUES):
            self.gate(value, rest, [], [], chain, scope, stmt.lineno)
        self.exprs(value, stmt, rest, -1, scope)

    def table(
        self,
        target: ast.expr,
        value: ast.Dict,
        chain: list[str],
        scope: Scope,
        cls_scope: Scope | None,
        line: int,
    ) -> None:
        if isinstance(target, ast.Name):
            name = target.id
        elif (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
        ):
            name = target.attr
            chain = chain[:-1]  # self.X in a method: a class attribute
        else:
            return
        classified = classify_keys(value.keys)
        if classified is None:
            return
        style, keys = classified
        for key, node in zip(keys, value.values, strict=False):
            key.value = resolve_value(node, scope)
        above = "\n".join(self.lines[max(0, line - 4) : line])
        named = bool(CAP_NAME.search(name) or re.search(r"ARCH|(^|_)SM(_|$)|CAPAB|(^|_)CC(_|$)", name))
        self.facts.tables.append(
            TableDef(
                ".".join([*chain, name]),
                name,
                line,
                style,
                keys,
                named or bool(_ARCH_WORDS.search(above)),
                self.src(line),
            )
        )

    def gate(
        self,
        test: ast.expr,
        body: list[ast.stmt],
        orelse: list[ast.stmt],
        rest: list[ast.stmt],
        chain: list[str],
        scope: Scope,
        line: int,
        negative: bool | None = None,
    ) -> None:
        if not _capish_key(test, _GATEISH):
            return
        negative = _is_negative(test) if negative is None else negative
        if negative:
            selected = orelse + (rest if _exits(body) else [])
            fallback = _summary(body)
        else:
            selected, fallback = body, _summary(orelse)
        needs = evidence.needs_in(evidence.tokens(selected[:40]))
        self.facts.gates.append(
            GateSite(line, test, negative, scope, needs, fallback, self.src(line), ".".join(chain))
        )

    def exprs(
        self, node: ast.AST, stmt: ast.stmt, siblings: list[ast.stmt], index: int, scope: Scope
    ) -> None:
        """Reads of tables with capability-looking keys, and conditional-expression gates."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.Subscript) and isinstance(sub.value, (ast.Name, ast.Attribute)):
                if _capish_key(sub.slice):
                    self.use(
                        sub.value, sub.slice, "subscript", sub.lineno, scope, "KeyError at run time on {arch}"
                    )
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "get":
                if (
                    sub.args
                    and _capish_key(sub.args[0])
                    and isinstance(sub.func.value, (ast.Name, ast.Attribute))
                ):
                    default = ast.unparse(sub.args[1]) if len(sub.args) > 1 else "None"
                    text = f".get() returns {_short(default, 20)} on {{arch}}" + self._after(
                        stmt, siblings, index
                    )
                    self.use(sub.func.value, sub.args[0], "get", sub.lineno, scope, text)
            elif (
                isinstance(sub, ast.Compare)
                and len(sub.ops) == 1
                and isinstance(sub.ops[0], (ast.In, ast.NotIn))
            ):
                table = sub.comparators[0]
                if isinstance(table, (ast.Name, ast.Attribute)) and _capish_key(sub.left):
                    text = "the membership test is False on {arch}" + self._after(stmt, siblings, index)
                    self.use(table, sub.left, "in", sub.lineno, scope, text)
            elif isinstance(sub, ast.IfExp):
                self.gate(sub.test, [ast.Expr(sub.body)], [ast.Expr(sub.orelse)], [], [], scope, sub.lineno)

    def _after(self, stmt: ast.stmt, siblings: list[ast.stmt], index: int) -> str:
        """What the code does when the lookup comes up empty, as far as the code shows."""
        if isinstance(stmt, ast.If):
            what = _summary(stmt.orelse)
            return f": the feature is skipped{' and the code ' + what if what else ''}"
        following = siblings[index + 1 :] if index >= 0 else siblings
        for nxt in following[:3]:
            if isinstance(nxt, ast.If) and re.search(r"is None|not |== 0|is not None", ast.unparse(nxt.test)):
                what = _summary(nxt.body)
                return f": silently disabled{' (' + what + ')' if what else ''}"
        return ": silently disabled"

    def use(
        self, table: ast.expr, key: ast.expr, access: str, line: int, scope: Scope, consequence: str
    ) -> None:
        name = table.id if isinstance(table, ast.Name) else table.attr  # type: ignore[union-attr]
        self.facts.uses.append(TableUse(name, line, access, key, scope, consequence))

    def try_uses(self, stmt: ast.Try, scope: Scope) -> None:
        caught = [h for h in stmt.handlers if h.type is None or "KeyError" in ast.unparse(h.type)]
        if not caught:
            return
        what = _summary(caught[0].body)
        for sub in ast.walk(ast.Module(body=stmt.body, type_ignores=[])):
            if (
                isinstance(sub, ast.Subscript)
                and isinstance(sub.value, (ast.Name, ast.Attribute))
                and _capish_key(sub.slice)
            ):
                text = f"KeyError is caught on {{arch}}: falls back{' (' + what + ')' if what else ''}"
                self.use(sub.value, sub.slice, "try", sub.lineno, scope, text)
