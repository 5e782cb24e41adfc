"""`#if` expressions: tokenized and parsed once, evaluated three-valued per compile environment.

A value is an int, or None when it is unknown (a macro the tree does not define and nvcc does
not set: a `-D` flag, a build option). Logic is Kleene's: `0 && unknown` is 0, `1 || unknown`
is 1, anything else touching an unknown is unknown. `defined X` and function-like macros
(`CUDA_ARCH_FAMILY(1000)`) are resolved by the caller's `Resolver`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

Value = int | None
_TOKEN = re.compile(
    r"\s*(?:(?P<num>0[xX][0-9a-fA-F]+|\d+)[uUlL]*|(?P<id>[A-Za-z_]\w*)"
    r"|(?P<op>&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%<>!~&|^?:(),])|(?P<bad>\S))"
)


def answer(value: Value) -> bool | None:
    """A condition's value as a branch reads it: nonzero is true, None is unknown."""
    return None if value is None else bool(value)


class ExprError(ValueError):
    """An expression this evaluator cannot read (its value is then unknown)."""


@dataclass(frozen=True)
class Node:
    op: str  # num | id | defined | call | unary | binary | ternary
    args: tuple[object, ...]


def tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind is None:
            continue
        if kind == "bad":
            raise ExprError(f"unexpected {m['bad']!r}")
        out.append((kind, m[kind]))
    return out


_BINARY = {
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
    "<": 7, ">": 7, "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}  # fmt: skip


class _Parser:
    def __init__(self, toks: list[tuple[str, str]]) -> None:
        self.toks = toks
        self.i = 0

    def peek(self) -> str:
        return self.toks[self.i][1] if self.i < len(self.toks) else ""

    def take(self) -> tuple[str, str]:
        if self.i >= len(self.toks):
            raise ExprError("unexpected end")
        self.i += 1
        return self.toks[self.i - 1]

    def expect(self, text: str) -> None:
        if self.take()[1] != text:
            raise ExprError(f"expected {text!r}")

    def ternary(self) -> Node:
        cond = self.binary(1)
        if self.peek() == "?":
            self.take()
            yes = self.ternary()
            self.expect(":")
            return Node("ternary", (cond, yes, self.ternary()))
        return cond

    def binary(self, floor: int) -> Node:
        left = self.unary()
        while True:
            op = self.peek()
            prec = _BINARY.get(op)
            if prec is None or prec < floor or (self.i < len(self.toks) and self.toks[self.i][0] != "op"):
                return left
            self.take()
            left = Node("binary", (op, left, self.binary(prec + 1)))

    def unary(self) -> Node:
        kind, text = self.take()
        if kind == "op" and text in "!-+~":
            return Node("unary", (text, self.unary()))
        if text == "(":
            inner = self.ternary()
            self.expect(")")
            return inner
        if kind == "num":
            return Node(
                "num",
                (
                    int(text, 0)
                    if not text.startswith("0") or text == "0" or text[1:2] in "xX"
                    else int(text, 8),
                ),
            )
        if kind == "id":
            if text == "defined":
                paren = self.peek() == "("
                if paren:
                    self.take()
                name = self.take()
                if name[0] != "id":
                    raise ExprError("defined needs a name")
                if paren:
                    self.expect(")")
                return Node("defined", (name[1],))
            if self.peek() == "(":
                return Node("call", (text, tuple(self._call_args())))
            return Node("id", (text,))
        raise ExprError(f"unexpected {text!r}")

    def _call_args(self) -> list[str]:
        """A function-like macro's arguments, as text (they are substituted, not evaluated)."""
        self.expect("(")
        args: list[str] = []
        depth, current = 0, []
        while True:
            _, text = self.take()
            if text == "(":
                depth += 1
            elif text == ")":
                if depth == 0:
                    args.append(" ".join(current))
                    return args if args != [""] else []
                depth -= 1
            elif text == "," and depth == 0:
                args.append(" ".join(current))
                current = []
                continue
            current.append(text)


@lru_cache(maxsize=65536)
def parse(text: str) -> Node | None:
    """The expression's tree, or None when it cannot be read."""
    try:
        p = _Parser(tokens(text))
        node = p.ternary()
        if p.i != len(p.toks):
            raise ExprError("trailing tokens")
        return node
    except (ExprError, RecursionError, ValueError):
        return None


class Resolver:
    """How names resolve in one compile environment: `defined(name)` and a macro's value."""

    def defined(self, name: str) -> Value:  # pragma: no cover - interface
        raise NotImplementedError

    def value(self, name: str) -> Value:  # pragma: no cover - interface
        raise NotImplementedError

    def call(self, name: str, args: tuple[str, ...]) -> Value:  # pragma: no cover - interface
        raise NotImplementedError


def evaluate(node: Node | None, env: Resolver) -> Value:
    if node is None:
        return None
    op, a = node.op, node.args
    if op == "num":
        return a[0]  # type: ignore[return-value]
    if op == "id":
        return env.value(a[0])  # type: ignore[arg-type]
    if op == "defined":
        return env.defined(a[0])  # type: ignore[arg-type]
    if op == "call":
        return env.call(a[0], a[1])  # type: ignore[arg-type]
    if op == "unary":
        v = evaluate(a[1], env)  # type: ignore[arg-type]
        if v is None:
            return None
        return {"!": int(not v), "-": -v, "+": v, "~": ~v}[a[0]]  # type: ignore[index]
    if op == "ternary":
        c = evaluate(a[0], env)  # type: ignore[arg-type]
        yes, no = evaluate(a[1], env), evaluate(a[2], env)  # type: ignore[arg-type]
        if c is None:
            return yes if yes == no else None
        return yes if c else no
    sym, left, right = a
    lv = evaluate(left, env)  # type: ignore[arg-type]
    if sym == "&&":
        if lv == 0:
            return 0
        rv = evaluate(right, env)  # type: ignore[arg-type]
        return 0 if rv == 0 else None if lv is None or rv is None else 1
    if sym == "||":
        if lv is not None and lv != 0:
            return 1
        rv = evaluate(right, env)  # type: ignore[arg-type]
        return 1 if rv not in (0, None) else None if lv is None or rv is None else 0
    rv = evaluate(right, env)  # type: ignore[arg-type]
    if lv is None or rv is None:
        return None
    return _ARITH[sym](lv, rv)  # type: ignore[index]


def _div(x: int, y: int) -> Value:
    return None if y == 0 else int(x / y)


def _mod(x: int, y: int) -> Value:
    return None if y == 0 else x - y * int(x / y)


_ARITH: dict[str, Callable[[int, int], Value]] = {
    "|": lambda x, y: x | y, "^": lambda x, y: x ^ y, "&": lambda x, y: x & y,
    "==": lambda x, y: int(x == y), "!=": lambda x, y: int(x != y), "<": lambda x, y: int(x < y),
    ">": lambda x, y: int(x > y), "<=": lambda x, y: int(x <= y), ">=": lambda x, y: int(x >= y),
    "<<": lambda x, y: x << min(y, 64) if y >= 0 else None, ">>": lambda x, y: x >> y if y >= 0 else None,
    "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y, "/": _div, "%": _mod,
}  # fmt: skip
