"""Small readings of statements for extraction: what a block does, which way a test points."""

from __future__ import annotations

import ast
import re
from collections import deque

from capgap.judging.symbolic import call_name

CAPISH = re.compile(r"capab|(^|_)sm|arch|(^|_)cc($|_)|major", re.I)


_NOT_CHILDREN = frozenset(("ctx", "op", "ops"))  # Load/Store, Add, Eq...: leaves no caller looks for
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


_WALKED: dict[int, tuple[ast.AST, list[ast.AST]]] = {}  # id -> (node, its walk): one per tree
_WALKED_MAX = 20_000  # subtrees remembered before the memo starts over (memory stays small)


def walk(node: ast.AST) -> list[ast.AST]:
    """`ast.walk`'s nodes, in its order, less the expression-context and operator leaves (no
    caller looks for a context or an operator; a Compare's ops are read from it). Remembered by
    node: the extractor and the rules read the same tests and statements many times over."""
    hit = _WALKED.get(id(node))
    if hit is not None and hit[0] is node:  # the node is held, so its id is not reused meanwhile
        return hit[1]
    if len(_WALKED) >= _WALKED_MAX:
        _WALKED.clear()
    out = _walked(node)
    _WALKED[id(node)] = (node, out)
    return out


def forget_walks() -> None:
    """Drop the remembered walks: a new file's tree is being read."""
    _WALKED.clear()


def _walked(node: ast.AST) -> list[ast.AST]:
    out: list[ast.AST] = []
    todo = deque([node])
    fields_of = _CHILD_FIELDS
    while todo:
        node = todo.popleft()
        cls = type(node)
        fields = fields_of.get(cls)
        if fields is None:
            fields = fields_of[cls] = tuple(f for f in cls._fields if f not in _NOT_CHILDREN)
        for name in fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                todo.append(value)
            elif isinstance(value, list):
                todo.extend(item for item in value if isinstance(item, ast.AST))
        out.append(node)
    return out


def flat(body: list[ast.stmt]) -> list[ast.stmt]:
    """Statements of a body with if/with/try blocks opened up (not loops or nested defs)."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, (ast.If, ast.With, ast.AsyncWith, ast.Try)):
            out.extend(flat(stmt.body))
            out.extend(flat(getattr(stmt, "orelse", [])))
            for handler in getattr(stmt, "handlers", []):
                out.extend(flat(handler.body))
        else:
            out.append(stmt)
    return out


def summary(stmts: list[ast.stmt]) -> str:
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
                parts.append(f"logs '{short(msg)}'")
            elif name:
                parts.append(f"calls {name}()")
        elif isinstance(stmt, ast.Return):
            parts.append(f"returns {short(ast.unparse(stmt.value))}" if stmt.value else "returns")
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
        elif isinstance(stmt, ast.Try) and exits(stmt.body):
            # `try: import cutlass.cute; return 4 except ImportError: pass`: the imports only probe
            # for a package; what the block does is what its body gives
            inner = summary([s for s in stmt.body if not isinstance(s, (ast.Import, ast.ImportFrom))])
            if inner:
                parts.append(inner)
                break
    return ", ".join(dict.fromkeys(p for p in parts if not p.endswith(" ()")))


def short(text: str, n: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def exits(stmts: list[ast.stmt]) -> bool:
    return bool(stmts) and isinstance(stmts[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))


def capish_key(node: ast.AST, pattern: re.Pattern[str] = CAPISH) -> bool:
    for sub in walk(node):
        name = call_name(sub) if isinstance(sub, (ast.Name, ast.Attribute)) else ""
        if name and pattern.search(name.split(".")[-1]):
            return True
    return False


def refuses(body: list[ast.stmt]) -> bool:
    """Does this branch turn the caller away (raise, continue, a bare / None / False return)?"""
    last = body[-1] if body else None
    if isinstance(last, ast.Return):
        value = last.value
        if value is None:
            return True
        return isinstance(value, ast.Constant) and (value.value is None or value.value is False)
    return isinstance(last, (ast.Raise, ast.Continue))


def made_of_constants(node: ast.expr) -> bool:
    """Only constants, names, arithmetic, tuples and lists: a value table entries can resolve through."""
    if isinstance(node, (ast.Constant, ast.Name)):
        return True
    if isinstance(node, ast.BinOp):
        return made_of_constants(node.left) and made_of_constants(node.right)
    if isinstance(node, ast.UnaryOp):
        return made_of_constants(node.operand)
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(made_of_constants(e) for e in node.elts)
    return False


def none_test(node: ast.AST) -> tuple[ast.expr, bool] | None:
    """`x is None` -> (x, False), `x is not None` -> (x, True); None for any other node."""
    if (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], (ast.Is, ast.IsNot))
        and isinstance(node.comparators[0], ast.Constant)
        and node.comparators[0].value is None
    ):
        return node.left, isinstance(node.ops[0], ast.IsNot)
    return None


_ASKS_UNSET = re.compile(r"^is_(\w+?)_(?:not_set|unset)$|^(\w+?)_(?:is_)?(?:not_set|unset)$")


def unset_settings(test: ast.expr | None) -> list[str]:
    """The settings a test asks to be unset (`self.attention_backend is None`; each operand of an
    `and`): a decision inside picks their defaults."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [name for value in test.values for name in unset_settings(value)]
    asked = none_test(test) if test is not None else None
    if asked is not None and not asked[1] and isinstance(asked[0], (ast.Name, ast.Attribute)):
        return [ast.unparse(asked[0])]
    if isinstance(test, ast.Call) and not test.keywords:
        # `is_attention_backend_not_set(cfg)`: a helper named for the setting it asks to be unset
        hit = _ASKS_UNSET.match(call_name(test.func).rsplit(".", 1)[-1])
        return [hit[1] or hit[2]] if hit is not None else []
    return []


def unset_attributes(test: ast.expr | None) -> list[str]:
    """The attribute settings a test asks to be unset, by last name (`cfg.attention_backend is
    None` -> "attention_backend"): what a default resolver of that setting would answer."""
    return [u.rpartition(".")[2] for u in unset_settings(test) if "." in u]
