"""Read one Python module's syntax tree into `FileFacts`: candidate tables, their reads, helpers
that may be capability predicates, and gate sites. Nothing is judged against an arch here."""

from __future__ import annotations

import ast
import re
from typing import Protocol

from capgap.judging import evidence
from capgap.judging.keys import classify_keys, resolve_value
from capgap.judging.records import FileFacts, GateSite, HelperDef, Scope, TableDef, TableUse, bind
from capgap.judging.statements import (
    capish_key,
    exits,
    flat,
    is_negative,
    made_of_constants,
    refuses,
    short,
    summary,
    walk,
)
from capgap.judging.symbolic import CAP_NAME, call_name
from capgap.reading.hintlines import HintLines

_ARCH_WORDS = re.compile(
    r"capabilit|arch|\bsm\b|sm_?\d|\bcc\b|compute|gpu|device|major|hopper|blackwell", re.I
)
# Text that a statement must contain before its expressions are walked for table reads.
_HINTS = (
    "capab",
    "sm_",
    "_sm",
    ".sm",
    "(sm",
    "sm1",
    "sm9",
    "sm8",
    "arch",
    "major",
    "_cc",
    "cc_",
    "(cc",
    ".cc",
)
_GATE_HINTS = ("capab", "sm", "cc", "major", "blackwell", "hopper", "ampere", "arch")
# Names in a test that make it worth evaluating as a gate (helpers are named after archs).
_GATEISH = re.compile(
    r"capab|(^|_)sm_?(\d|$|_|version)|(^|_)cc($|_)|major|blackwell|hopper|ampere|(^|_)arch($|_)", re.I
)
_COMMENT = re.compile(r"#[^\n]*")
_GUARDED_LINES = 400  # what a gate guards is read this far at most
Ranges = tuple[list[tuple[int, int]], list[tuple[int, int]], tuple[int, int]]  # body, else, rest
_GATE_VALUES = (ast.BoolOp, ast.Compare, ast.UnaryOp, ast.Call)


class Whole(Protocol):
    """Where a statement the cut kept in part ends in the file, and the file's own lines."""

    ends: dict[int, int]

    def lines(self) -> list[str]: ...


def extract(
    tree: ast.Module,
    lines: list[str],
    path: str,
    module: str,
    whole: Whole | None = None,
    *,
    data: bytes | None = None,
) -> FileFacts:
    """`data`: the bytes `lines` were split from, if they decode as UTF-8 (finds hint lines in C)."""
    facts = FileFacts(path, module)
    _Walker(facts, lines, whole, data).block(tree.body, [], facts.module_scope, None, is_module=True)
    return facts


class _Walker:
    def __init__(
        self, facts: FileFacts, lines: list[str], whole: Whole | None = None, data: bytes | None = None
    ) -> None:
        self.facts = facts
        self.lines = lines
        self.whole = whole
        self._gate_hints = HintLines(lines, _GATE_HINTS, data)
        self._use_hints = HintLines(lines, _HINTS, data)

    @staticmethod
    def _span(node: ast.AST) -> tuple[int, int]:
        start = getattr(node, "lineno", 0)
        return start, getattr(node, "end_lineno", start) or start

    def _comments_above(self, line: int) -> str:
        """The comment block right above a line, and the line itself (a trailing comment)."""
        out = [self.lines[line - 1]] if 0 < line <= len(self.lines) else []
        i = line - 2
        while i >= 0 and self.lines[i].lstrip().startswith("#"):
            out.append(self.lines[i])
            i -= 1
        return "\n".join(out)

    def _hinted(self, node: ast.AST) -> bool:
        """Could this code read a capability (or call what does)? Keeps helpers and scopes small."""
        return self._gate_hints.any_in(*self._span(node))

    def _worth_binding(self, value: ast.expr) -> bool:
        """Constants (table values resolve through them) and anything that may read a capability."""
        if isinstance(value, ast.Constant):
            return True
        if isinstance(value, ast.Dict):
            return False
        if self._hinted(value):
            return True
        short = (
            getattr(value, "end_lineno", 0) == value.lineno
            and (value.end_col_offset or 0) - value.col_offset < 120
        )
        return short and made_of_constants(value)

    def statement_text(self, st: ast.stmt) -> str:
        """A simple statement's exact source (its columns are UTF-8 byte offsets)."""
        first, last = st.lineno, st.end_lineno or st.lineno
        lines = self.lines[first - 1 : last]
        if first == last:
            return lines[0].encode()[st.col_offset : st.end_col_offset].decode()
        head = lines[0].encode()[st.col_offset :].decode()
        tail = lines[-1].encode()[: st.end_col_offset].decode()
        return "\n".join([head, *lines[1:-1], tail])

    def src(self, line: int) -> str:
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""

    def block(
        self,
        body: list[ast.stmt],
        chain: list[str],
        scope: Scope,
        cls_scope: Scope | None,
        is_module: bool = False,
        end: int = 1 << 30,
    ) -> None:
        """Walk one block; `end`: its last line in the file (what a gate in it guards ends there)."""
        for i, stmt in enumerate(body):
            rest = body[i + 1 :]
            after = (self.end_of(stmt) + 1, end)  # the rest of the block, in the file
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.function(stmt, chain, scope, cls_scope, is_module)
            elif isinstance(stmt, ast.ClassDef):
                inner = Scope({}, scope)
                self.block(stmt.body, [*chain, stmt.name], inner, inner, end=self.end_of(stmt))
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                self.assign(stmt, rest, chain, scope, cls_scope, is_module, after)
            elif isinstance(stmt, ast.ImportFrom) and is_module:
                self.imports(stmt)
            elif isinstance(stmt, ast.If):
                split = self._split(stmt, stmt.orelse)
                ranges = self._ranges(stmt, split, after)
                self.gate(stmt.test, stmt.body, stmt.orelse, rest, chain, scope, stmt.lineno, None, ranges)
                self.exprs(stmt.test, stmt, body, i, scope)
                self.block(stmt.body, chain, scope, cls_scope, is_module, split)
                self.block(stmt.orelse, chain, scope, cls_scope, is_module, self.end_of(stmt))
            elif isinstance(stmt, ast.Assert):  # what follows runs when the test is true, `!=` or not
                self.gate(stmt.test, rest, [], [], chain, scope, stmt.lineno, False, ([after], [], after))
            elif isinstance(stmt, ast.Try):
                clauses = [h.lineno for h in stmt.handlers] + [s.lineno for s in stmt.orelse + stmt.finalbody]
                self.block(stmt.body, chain, scope, cls_scope, is_module, min(clauses, default=1) - 1)
                stmt_end = self.end_of(stmt)
                for handler in stmt.handlers:
                    self.block(handler.body, chain, scope, cls_scope, is_module, stmt_end)
                self.block(stmt.orelse + stmt.finalbody, chain, scope, cls_scope, is_module, stmt_end)
                self.try_uses(stmt, scope)
            elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
                orelse = getattr(stmt, "orelse", [])
                split = self._split(stmt, orelse)
                if isinstance(stmt, ast.While):
                    ranges = self._ranges(stmt, split, after)
                    self.gate(stmt.test, stmt.body, orelse, rest, chain, scope, stmt.lineno, None, ranges)
                for field in ("iter", "test"):
                    if hasattr(stmt, field):
                        self.exprs(getattr(stmt, field), stmt, body, i, scope)
                self.block(stmt.body, chain, scope, cls_scope, is_module, split)
                self.block(orelse, chain, scope, cls_scope, is_module, self.end_of(stmt))
            else:
                self.exprs(stmt, stmt, body, i, scope)

    def end_of(self, stmt: ast.stmt) -> int:
        """A statement's last line in the file (the cut may have kept only part of it)."""
        if self.whole is not None and stmt.lineno in self.whole.ends:
            return self.whole.ends[stmt.lineno]
        return stmt.end_lineno or stmt.lineno

    def _split(self, stmt: ast.stmt, orelse: list[ast.stmt]) -> int:
        """The last file line of a compound statement's body (its `else:` follows)."""
        return orelse[0].lineno - 1 if orelse else self.end_of(stmt)

    def _ranges(self, stmt: ast.If | ast.While, split: int, after: tuple[int, int]) -> Ranges:
        body = [(stmt.body[0].lineno, split)]
        orelse = [(split + 1, self.end_of(stmt))] if stmt.orelse else []
        return body, orelse, after

    def file_text(self, ranges: list[tuple[int, int]]) -> str:
        """The file's own lines in `ranges` (1-based, inclusive), at most _GUARDED_LINES of them."""
        lines = self.whole.lines() if self.whole is not None else self.lines
        out: list[str] = []
        budget = _GUARDED_LINES
        for first, last in ranges:
            last = min(last, len(lines), first + budget - 1)
            if first > last:
                continue
            out.extend(lines[first - 1 : last])
            budget -= last - first + 1
        return "\n".join(out)

    def imports(self, stmt: ast.ImportFrom) -> None:
        base = stmt.module or ""
        if stmt.level:  # relative: resolve against this module's package
            package = self.facts.module.split(".")
            if not self.facts.path.endswith("__init__.py"):
                package = package[:-1]
            package = package[: len(package) - (stmt.level - 1)] if stmt.level > 1 else package
            base = ".".join([*package, base] if base else package)
        for alias in stmt.names:
            self.facts.imports[alias.asname or alias.name] = base

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
        if (is_module or cls_scope is not None) and self._hinted(node):
            is_method = cls_scope is not None and not is_module
            # only what a predicate is made of: its returns and the assignments they may read
            body = [
                self.statement_text(st)
                for st in flat(node.body)
                if isinstance(st, ast.Return)
                or (isinstance(st, ast.Assign) and self._worth_binding(st.value))
            ]
            helper = HelperDef(node.name, "def", params, [], local, is_method, tuple(body))
            self.facts.helpers.append(helper)
        for dec in node.decorator_list:  # @skipIf(get_device_capability()[0] < 9, ...)
            if (
                isinstance(dec, ast.Call)
                and call_name(dec.func) in {"skipIf", "skipif", "skipUnless"}
                and dec.args
            ):
                negative = call_name(dec.func) != "skipUnless"
                body = [(node.body[0].lineno, self.end_of(node))]
                ranges: Ranges = ([], [], (0, 0)) if negative else (body, [], (0, 0))
                qualname = [*chain, node.name]
                self.gate(dec.args[0], node.body, [], [], qualname, scope, dec.lineno, negative, ranges)
        self.block(node.body, [*chain, node.name], local, cls_scope, end=self.end_of(node))

    def assign(
        self,
        stmt: ast.Assign | ast.AnnAssign,
        rest: list[ast.stmt],
        chain: list[str],
        scope: Scope,
        cls_scope: Scope | None,
        is_module: bool,
        after: tuple[int, int] = (0, 0),
    ) -> None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value = stmt.value
        if value is None:
            return
        if self._worth_binding(value):
            bind(scope, targets, value)
            attrs = [t for t in targets if isinstance(t, ast.Attribute)]
            if attrs and cls_scope is not None and cls_scope is not scope:  # self.x = ... in a method
                bind(cls_scope, attrs, value)
        if isinstance(value, ast.Dict):
            for target in targets:
                self.table(target, value, chain, scope, cls_scope, stmt.lineno)
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if (
            is_module
            and names
            and isinstance(value, (*_GATE_VALUES, ast.Lambda, ast.Name))
            and self._hinted(value)
        ):
            for name in names:
                self.facts.helpers.append(HelperDef(name, "var", [], [ast.Expr(value)], scope))
        elif chain and not is_module and cls_scope is not scope and isinstance(value, _GATE_VALUES):
            # `flag = arch != 90` is true where the test is: the value's own polarity, never flipped
            self.gate(value, rest, [], [], chain, scope, stmt.lineno, False, ([after], [], after))
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
        classified = classify_keys(value.keys, self.lines)
        if classified is None:
            return
        style, keys = classified
        for key, node in zip(keys, value.values, strict=False):
            key.value = resolve_value(node, scope)
        above = self._comments_above(line)
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
        ranges: Ranges = ([], [], (0, 0)),
    ) -> None:
        """A capability test. `ranges`: the file lines of its body, its else and the rest of its
        block; what it guards is read there, in the file, whatever the cut kept of it."""
        if not self._gate_hints.any_in(*self._span(test)) or not capish_key(test, _GATEISH):
            return
        if negative is None:
            # `if arch != 90: return` / `elif major not in (8, 12): unsupported.append(...)`: a negated
            # branch handles the archs turned away; what the gate guards runs where the test is false
            negative = is_negative(test)
        guarded, other, after = ranges
        if negative:
            selected = other + ([after] if exits(body) else [])
            fallback = summary(body)
        else:
            selected, fallback = guarded, summary(orelse)
        code = _COMMENT.sub("", self.file_text(selected))  # "no tcgen05 here" is no need
        needs = evidence.needs_in(code.lower())
        self.facts.gates.append(
            GateSite(line, test, negative, scope, needs, fallback, self.src(line), ".".join(chain))
        )

    def exprs(
        self, node: ast.AST, stmt: ast.stmt, siblings: list[ast.stmt], index: int, scope: Scope
    ) -> None:
        """Reads of tables with capability-looking keys, and conditional-expression gates."""
        if not self._use_hints.any_in(*self._span(node)):
            return
        for sub in walk(node):
            if isinstance(sub, ast.Subscript) and isinstance(sub.value, (ast.Name, ast.Attribute)):
                if capish_key(sub.slice):
                    self.use(
                        sub.value, sub.slice, "subscript", sub.lineno, scope, "KeyError at run time on {arch}"
                    )
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "get":
                if (
                    sub.args
                    and capish_key(sub.args[0])
                    and isinstance(sub.func.value, (ast.Name, ast.Attribute))
                ):
                    default = ast.unparse(sub.args[1]) if len(sub.args) > 1 else "None"
                    text = f".get() returns {short(default, 20)} on {{arch}}" + self._after(
                        stmt, siblings, index
                    )
                    self.use(sub.func.value, sub.args[0], "get", sub.lineno, scope, text)
            elif (
                isinstance(sub, ast.Compare)
                and len(sub.ops) == 1
                and isinstance(sub.ops[0], (ast.In, ast.NotIn))
            ):
                table = sub.comparators[0]
                if isinstance(table, (ast.Name, ast.Attribute)) and capish_key(sub.left):
                    missing_runs_body = isinstance(sub.ops[0], ast.NotIn)  # `if cap not in T: raise`
                    text = "the membership test is False on {arch}" + self._after(
                        stmt, siblings, index, missing_runs_body
                    )
                    denies = (
                        isinstance(sub.ops[0], ast.In)
                        and isinstance(stmt, ast.If)
                        and stmt.test is sub
                        and refuses(stmt.body)
                    )
                    self.use(table, sub.left, "in", sub.lineno, scope, text, denies)
            elif isinstance(sub, ast.IfExp):
                self.gate(sub.test, [ast.Expr(sub.body)], [ast.Expr(sub.orelse)], [], [], scope, sub.lineno)

    def _after(self, stmt: ast.stmt, siblings: list[ast.stmt], index: int, body_runs: bool = False) -> str:
        """What the code does when the lookup comes up empty, as far as the code shows."""
        if isinstance(stmt, ast.If) and body_runs:
            what = summary(stmt.body)
            return f": the code {what}" if what else ": the check fails"
        if isinstance(stmt, ast.If):
            what = summary(stmt.orelse)
            return f": the check fails{'; falls back: ' + what if what else ''}"
        following = siblings[index + 1 :] if index >= 0 else siblings
        for nxt in following[:3]:
            if isinstance(nxt, ast.If) and re.search(r"is None|not |== 0|is not None", ast.unparse(nxt.test)):
                what = summary(nxt.body)
                return f": silently disabled{' (' + what + ')' if what else ''}"
        return ": silently disabled"

    def use(
        self,
        table: ast.expr,
        key: ast.expr,
        access: str,
        line: int,
        scope: Scope,
        consequence: str,
        denies: bool = False,
    ) -> None:
        name = table.id if isinstance(table, ast.Name) else table.attr  # type: ignore[union-attr]
        self.facts.uses.append(TableUse(name, line, access, key, scope, consequence, denies))

    def try_uses(self, stmt: ast.Try, scope: Scope) -> None:
        caught = [h for h in stmt.handlers if h.type is None or "KeyError" in ast.unparse(h.type)]
        if not caught:
            return
        what = summary(caught[0].body)
        for sub in walk(ast.Module(body=stmt.body, type_ignores=[])):
            if (
                isinstance(sub, ast.Subscript)
                and isinstance(sub.value, (ast.Name, ast.Attribute))
                and capish_key(sub.slice)
            ):
                text = f"KeyError is caught on {{arch}}: falls back{' (' + what + ')' if what else ''}"
                self.use(sub.value, sub.slice, "try", sub.lineno, scope, text)
