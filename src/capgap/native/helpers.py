"""C++ host helpers that answer an arch question, followed across functions and files.

`bool isSm90OrLater() { return getSMVersion() >= 90; }`, `static bool use_x(int sm) { if (sm ==
90) return true; return sm >= 100 && sm < 110; }`, `int get_arch() { ...; return prop.major * 10 +
prop.minor; }`: a short function (or method) whose statements are declarations, guard clauses
that return, and a last return, read as its ordered (condition, value) pairs - the C++ side of
the Python analyzer's `HelperDef` (judging.records). A dispatch that calls one
(`if (isSm90OrLater() && !use_x(sm_version))`) is evaluated per arch through it: parameters are
bound to the call's arguments, locals to their initializers (and `cudaDeviceGetAttribute(&m,
cudaDevAttrComputeCapabilityMajor, ...)` to the major), the guards are walked in order,
three-valued (a guard that may go either way gives a value only when both ways give the same).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from capgap.native import expr

MAX_LINES = 60  # a longer function is no predicate
_OUT_PARAM = re.compile(
    r"(?:cudaDeviceGetAttribute|cuDeviceGetAttribute)\s*\(\s*&\s*(\w+)\s*,\s*"
    r"(?:cudaDevAttrComputeCapability|CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_)(Major|Minor|MAJOR|MINOR)"
)
_ARCHY = re.compile(r"\b(?:major|minor)\b")
_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_NUMBER = re.compile(r"\b\d{1,4}\b")


@dataclass(frozen=True)
class HostHelper:
    name: str
    params: tuple[str, ...]
    defaults: tuple[str, ...]  # each parameter's default value as written ("" when it has none)
    returns: tuple[tuple[str, str], ...]  # (condition, value) in order; "1": unconditional
    line: int

    @property
    def required(self) -> int:
        return sum(1 for d in self.defaults if not d)

    @property
    def scale(self) -> int:
        """10 when its numbers are `__CUDA_ARCH__`-like (900, 1000), else 1 (90, 100)."""
        texts = (t for pair in self.returns for t in pair)
        return 10 if any(int(n) >= 200 for t in texts for n in _NUMBER.findall(t)) else 1


def extract(node: Any, archish: Callable[[str], bool]) -> HostHelper | None:
    """The helper a tree-sitter `function_definition` is, or None (`archish`: does a text test
    or compute the arch?)."""
    kind = node.child_by_field_name("type")
    body = node.child_by_field_name("body")
    if body is None or (kind is not None and _text(kind) == "void"):
        return None
    if body.end_point[0] - body.start_point[0] > MAX_LINES:
        return None
    declarator = _function_declarator(node)
    if declarator is None:
        return None
    name = _text(declarator.child_by_field_name("declarator")).split("::")[-1].strip()
    params, defaults = _params(declarator.child_by_field_name("parameters"))
    returns = _returns(body)
    if not name or not returns:
        return None
    if not any(archish(t) or _ARCHY.search(t) for pair in returns for t in pair):
        return None
    return HostHelper(name, params, defaults, returns, node.start_point[0] + 1)


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def _function_declarator(node: Any) -> Any:
    d = node.child_by_field_name("declarator")
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_name("declarator")
    return d


def _params(plist: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    names: list[str] = []
    defaults: list[str] = []
    for p in plist.named_children if plist is not None else []:
        if p.type not in ("parameter_declaration", "optional_parameter_declaration"):
            continue
        d = p.child_by_field_name("declarator")
        while d is not None and d.type != "identifier":
            inner = d.child_by_field_name("declarator")
            d = (
                inner
                if inner is not None
                else next((c for c in d.named_children if c.type == "identifier"), None)
            )
        names.append(_text(d) or f"_{len(names)}")
        defaults.append(
            _text(p.child_by_field_name("default_value"))
            or ("?" if p.type != "parameter_declaration" else "")
        )
    return tuple(names), tuple(defaults)


def _returns(body: Any) -> tuple[tuple[str, str], ...]:
    """The body's (condition, value) pairs, or () when a statement it cannot read may return."""
    binds: dict[str, str] = {}
    out: list[tuple[str, str]] = []
    for st in body.named_children:
        kind = st.type
        if kind == "comment":
            continue
        if kind == "declaration":
            for d in st.children_by_field_name("declarator"):
                target, value = d.child_by_field_name("declarator"), d.child_by_field_name("value")
                if d.type == "init_declarator" and target is not None and target.type == "identifier":
                    binds[_text(target)] = bind(_text(value).strip("{} ") or "0", binds)
            continue
        if kind == "return_statement":
            out.append(("1", bind(_value(st), binds)))
            return tuple(out)
        if kind == "if_statement":
            arms = _guard(st)
            if arms is None:
                return ()
            out.extend((bind(c, binds), bind(v, binds)) for c, v in arms)
            if arms[-1][0] == "1":
                return tuple(out)
            continue
        text = _text(st)
        if re.search(r"\breturn\b", text):
            return ()  # a loop or a switch that returns: not a predicate read here
        for m in _OUT_PARAM.finditer(text):
            binds[m[1]] = m[2].lower()
        assign = st.named_children[0] if kind == "expression_statement" and st.named_children else None
        if (
            assign is not None
            and assign.type == "assignment_expression"
            and _text(assign.child_by_field_name("operator")) == "="
        ):
            left = assign.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                binds[_text(left)] = bind(_text(assign.child_by_field_name("right")), binds)
    return tuple(out)


def _guard(node: Any) -> list[tuple[str, str]] | None:
    """An if / else-if / else whose every arm only returns, as (condition, value) pairs."""
    out: list[tuple[str, str]] = []
    while node is not None:
        value = _only_return(node.child_by_field_name("consequence"))
        if value is None:
            return None
        out.append((_text(node.child_by_field_name("condition")).strip(), value))
        alt = node.child_by_field_name("alternative")
        inner = next((c for c in alt.named_children), None) if alt is not None else None
        if inner is None:
            return out
        if inner.type == "if_statement":
            node = inner
            continue
        value = _only_return(inner)
        if value is None:
            return None
        out.append(("1", value))
        return out
    return out


def _only_return(node: Any) -> str | None:
    if node is not None and node.type == "compound_statement":
        inner = [c for c in node.named_children if c.type != "comment"]
        node = inner[0] if len(inner) == 1 else None
    return _value(node) if node is not None and node.type == "return_statement" else None


def _value(ret: Any) -> str:
    inner = [c for c in ret.named_children if c.type != "comment"]
    return _text(inner[0]) if inner else ""


def bind(text: str, binds: dict[str, str]) -> str:
    """`text` with each bound name replaced by its value, parenthesized (not a member, not a call)."""
    if not binds:
        return text
    pattern = re.compile(r"(?<![\w.>])(" + "|".join(map(re.escape, binds)) + r")\b(?!\s*\()")
    return pattern.sub(lambda m: f"({binds[m[1]]})", text)


class HelperTable:
    """Every helper of the tree by name; a call resolves to the caller's file's own definition,
    else to the only one (several that differ: unknown)."""

    def __init__(self, files: Iterable[tuple[str, list[HostHelper]]]) -> None:
        self.by_name: dict[str, list[tuple[str, HostHelper]]] = defaultdict(list)
        for path, found in files:
            for h in found:
                self.by_name[h.name].append((path, h))

    def __bool__(self) -> bool:
        return bool(self.by_name)

    def find(self, name: str, nargs: int, path: str) -> tuple[str, HostHelper] | None:
        """The helper a call from `path` means, with the file it is defined in."""
        short = name.split("::")[-1]
        fits = [(p, h) for p, h in self.by_name.get(short, ()) if h.required <= nargs <= len(h.params)]
        mine = [(p, h) for p, h in fits if p == path]
        if mine:
            return mine[0]
        return fits[0] if fits and len({h.returns for _, h in fits}) == 1 else None

    def expanded(self, text: str, path: str, depth: int = 3) -> str:
        """`text` and the conditions and values of the helpers it calls (for what names an arch)."""
        parts = [text]
        for name in dict.fromkeys(_CALLED.findall(text)) if depth else ():
            found = self.by_name.get(name)
            if found:
                h = next((h for p, h in found if p == path), found[0][1])
                inner = " ".join(t for pair in h.returns for t in pair)
                parts.append(self.expanded(inner, path, depth - 1))
        return " ".join(parts)


def evaluate(h: HostHelper, args: tuple[str, ...], value_of: Callable[[str], expr.Value]) -> expr.Value:
    """The helper's value for these arguments; `value_of` evaluates a text inside it."""
    names = {p: a or d for p, a, d in zip(h.params, (*args, *[""] * len(h.params)), h.defaults, strict=False)}
    names = {p: v for p, v in names.items() if v and v != "?"}
    bound = [(bind(c, names), bind(v, names)) for c, v in h.returns]

    def walk(i: int) -> expr.Value:
        if i >= len(bound):
            return None  # it may fall off its end
        cond, value = bound[i]
        c = 1 if cond == "1" else value_of(cond)
        if c is None:
            yes, no = value_of(value), walk(i + 1)
            return yes if yes == no else None
        return value_of(value) if c else walk(i + 1)

    return walk(0)
