"""Find capability tables by qualified symbol: `NAME`, `Class.NAME`, `func.NAME`, `Class.meth.NAME`.

A symbol is the chain of class and function names around an assignment of a dict literal
(plain or annotated). Blocks that are not scopes (`if`, `try`, `with`, `for`) add no name, so a
table guarded by `if TYPE_CHECKING:` or defined in a `try:` is found under its plain name.
`self.NAME = {...}` in a method is the class attribute `Class.NAME` (as the scan names it).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

_EMPTY = cst.Module(body=[])


def code_of(node: cst.CSTNode) -> str:
    """The source text of one node, exactly as it is in its module."""
    return _EMPTY.code_for_node(node)


@dataclass(frozen=True)
class TableSite:
    symbol: str
    table: cst.Dict


def _name_of(target: cst.BaseExpression, in_method: bool) -> str | None:
    """`X` -> "X"; `self.X` inside a method -> "..X" (one scope up: a class attribute)."""
    if isinstance(target, cst.Name):
        return target.value
    if (
        in_method
        and isinstance(target, cst.Attribute)
        and isinstance(target.value, cst.Name)
        and target.value.value == "self"
    ):
        return ".." + target.attr.value
    return None


def _target_names(stmt: cst.CSTNode, in_method: bool = False) -> tuple[list[str], cst.BaseExpression | None]:
    if isinstance(stmt, cst.Assign):
        names = [_name_of(t.target, in_method) for t in stmt.targets]
        return [n for n in names if n], stmt.value
    if isinstance(stmt, cst.AnnAssign):
        name = _name_of(stmt.target, in_method)
        return ([name] if name else []), stmt.value
    return [], None


def qualify(scope: tuple[str, ...] | list[str], name: str) -> str:
    if name.startswith(".."):
        return ".".join((*scope[:-1], name[2:]))
    return ".".join((*scope, name))


def iter_tables(module: cst.Module) -> Iterator[TableSite]:
    """Every dict literal assigned to a name, with its qualified symbol, in source order."""
    yield from _walk(module.body, (), ())


def _walk(body: object, scope: tuple[str, ...], kinds: tuple[str, ...]) -> Iterator[TableSite]:
    in_method = kinds[-2:] == ("class", "def")
    for stmt in _statements(body):
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                names, value = _target_names(small, in_method)
                if isinstance(value, cst.Dict):
                    for name in names:
                        yield TableSite(qualify(scope, name), value)
        elif isinstance(stmt, (cst.ClassDef, cst.FunctionDef)):
            kind = "class" if isinstance(stmt, cst.ClassDef) else "def"
            yield from _walk(stmt.body, (*scope, stmt.name.value), (*kinds, kind))
        elif isinstance(stmt, cst.BaseCompoundStatement):
            for block in _blocks(stmt):
                yield from _walk(block, scope, kinds)


def _statements(body: object) -> list[cst.CSTNode]:
    if isinstance(body, (list, tuple)):
        return list(body)
    if isinstance(body, cst.IndentedBlock):
        return list(body.body)
    if isinstance(body, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=body.body)]
    return []


def _blocks(stmt: cst.BaseCompoundStatement) -> Iterator[object]:
    """The bodies of a non-scope compound statement: if/elif/else, try/except/finally, with, loops."""
    yield stmt.body
    orelse = getattr(stmt, "orelse", None)
    while orelse is not None:
        yield orelse.body
        orelse = getattr(orelse, "orelse", None) if isinstance(orelse, cst.If) else None
    for handler in getattr(stmt, "handlers", ()) or ():
        yield handler.body
    final = getattr(stmt, "finalbody", None)
    if final is not None:
        yield final.body


def find_tables(module: cst.Module, symbol: str) -> list[cst.Dict]:
    return [site.table for site in iter_tables(module) if site.symbol == symbol]


class ScopedTableTransformer(cst.CSTTransformer):
    """Base for transforms of the dict assigned to `symbol`: override `transform_table`.

    A transform may ask for a comment at the end of the statement's line (`self.line_comment`),
    used when the table sits on one line and an inserted entry cannot carry its own comment.
    """

    def __init__(self, symbol: str) -> None:
        super().__init__()
        self.symbol = symbol
        self.scope: list[str] = []
        self.kinds: list[str] = []
        self.matches = 0
        self.line_comment: str | None = None

    def transform_table(self, table: cst.Dict) -> cst.Dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.scope.append(node.name.value)
        self.kinds.append("class")
        return True

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self.scope.pop()
        self.kinds.pop()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.scope.append(node.name.value)
        self.kinds.append("def")
        return True

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self.scope.pop()
        self.kinds.pop()
        return updated

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def _names(self, node: cst.CSTNode) -> tuple[list[str], cst.BaseExpression | None]:
        names, value = _target_names(node, self.kinds[-2:] == ["class", "def"])
        return [qualify(self.scope, n) for n in names], value

    def _wanted(self, names: list[str]) -> bool:
        return self.symbol in names

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        names, value = self._names(updated)
        if isinstance(value, cst.Dict) and self._wanted(names):
            self.matches += 1
            return updated.with_changes(value=self.transform_table(value))
        return updated

    def leave_AnnAssign(self, original: cst.AnnAssign, updated: cst.AnnAssign) -> cst.AnnAssign:
        names, value = self._names(updated)
        if isinstance(value, cst.Dict) and self._wanted(names):
            self.matches += 1
            return updated.with_changes(value=self.transform_table(value))
        return updated

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine:
        if self.line_comment is None:
            return updated
        comment, self.line_comment = self.line_comment, None
        trailing = updated.trailing_whitespace
        if trailing.comment is not None:  # the line has its own comment: leave it alone
            return updated
        return updated.with_changes(
            trailing_whitespace=trailing.with_changes(
                whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(f"# {comment}")
            )
        )
