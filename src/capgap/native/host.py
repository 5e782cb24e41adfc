"""Host-side arch dispatch in C++/CUDA sources, read with a real parser (tree-sitter's C++ grammar).

`if (sm_version >= 90 && sm_version < 100) ... else if ... else TORCH_CHECK(false, ...)`,
`switch (sm) { case 90: ...; default: throw ...; }` and `TORCH_CHECK(major == 9, "...")`: each
decision's arms with their conditions (as text, evaluated later per arch by `native.expr`) and
what each arm does (real code, nothing, an error). Only files a byte test finds a comparison of an
arch-named variable with a number in are parsed.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

CODE, EMPTY, ERROR = "code", "empty", "error"
# A comparison of an arch-named variable or call with a number: what makes a file worth parsing.
_DISPATCH = re.compile(
    rb"(?:sm_?version|smversion|sm_?ver|sm_?arch|getsmversion\(\)|get_sm_version\(\)|\bsm|\bmajor|\barch)"
    rb"\s*(?:==|>=|<=|!=|<|>)\s*\d{1,4}\b",
    re.I,
)
# The same, for grep -E -i (the prefilter that picks the files worth this regex).
GREP_PATTERN = (
    r"(sm_?version|sm_?ver|sm_?arch|getsmversion\(\)|get_sm_version\(\)|\bsm|\bmajor|\barch)"
    r"\s*(==|>=|<=|!=|<|>)\s*[0-9]"
)
MAX_BYTES = 512 << 10  # a larger source is generated kernels, not host dispatch
_ERROR = re.compile(
    rb"\bthrow\b|TORCH_CHECK\s*\(\s*false|TORCH_CHECK_NOT_IMPLEMENTED|TLLM_THROW|TLLM_CHECK_WITH_INFO\s*\(\s*false"
    rb"|FLASHINFER_ERROR|std::abort|\babort\s*\(|assert\s*\(\s*(?:false|0)\s*\)"
)
_CHECKS = {"TORCH_CHECK", "TLLM_CHECK", "TLLM_CHECK_WITH_INFO", "FLASHINFER_CHECK", "CHECK"}
_ARCH_NAME = re.compile(r"^(?:sm_?version|smversion|sm_?ver|sm_?arch|sm|arch|cc|major|minor)$", re.I)
_ARCH_CALL = re.compile(r"get_?sm_?version|getsmversion|get_sm", re.I)


@dataclass(frozen=True)
class HostArm:
    line: int
    cond: str  # a C condition ("1" for else); for a case label: "VAR == N"
    body: str  # CODE | EMPTY | ERROR
    text: str  # the arm's code (bounded), for what it needs
    source: str


@dataclass(frozen=True)
class HostDecision:
    kind: str  # "chain" | "switch" | "check"
    line: int
    function: str
    arms: tuple[HostArm, ...]
    context: str = ""  # the enclosing function's text (bounded): what the decision's code needs


def wanted(data: bytes) -> bool:
    return _DISPATCH.search(data) is not None


_PARSER: Any = None


def _parser() -> Any:
    global _PARSER
    if _PARSER is None:
        import tree_sitter
        import tree_sitter_cpp

        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_cpp.language()))
    return _PARSER


def read(data: bytes) -> list[HostDecision]:
    """The arch decisions of a file (none when tree-sitter is not installed)."""
    try:
        parser = _parser()
    except ImportError:
        return []
    tree = parser.parse(data)
    marks = _marks(data)
    out: list[HostDecision] = []
    stack = [(tree.root_node, "", "")]
    while stack:
        node, fn, ctx = stack.pop()
        i = bisect_left(marks, node.start_byte)
        if i == len(marks) or marks[i] >= node.end_byte:
            continue  # nothing under it can be an arch decision: not walked (most of a file)
        if node.type == "function_definition":
            fn = _function_name(node) or fn
            ctx = _text(node)[:16000]
        d = None
        if node.type == "if_statement" and not (
            node.parent is not None and node.parent.type == "else_clause"
        ):
            d = _chain(node, fn)
        elif node.type == "switch_statement":
            d = _switch(node, fn)
        elif node.type == "call_expression":
            d = _check(node, fn)
        if d is not None:
            out.append(dataclasses.replace(d, context=ctx))
        stack.extend((c, fn, ctx) for c in reversed(node.children))
    out.sort(key=lambda d: d.line)
    return out


# Where an arch decision can be: each place a comparison of an arch-named variable starts (the
# dispatch pattern less its word boundaries, so none is lost to what surrounds a node's text), and
# each `switch` (its variable is tested by name). A node holding neither holds no decision.
_MARK = re.compile(
    rb"(?:sm_?version|smversion|sm_?ver|sm_?arch|getsmversion\(\)|get_sm_version\(\)|sm|major|arch)"
    rb"\s*(?:==|>=|<=|!=|<|>)\s*\d|switch",
    re.I,
)


def _marks(data: bytes) -> list[int]:
    """Offsets of `_MARK`'s matches. A decision's condition (a chain's, a check's) is text of its
    node and a _DISPATCH match in it is a _MARK match there; the match finditer reports instead
    can only start earlier in the same identifier (`sm_arch` for `arch`), which no node splits."""
    return [m.start() for m in _MARK.finditer(data)]


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def _function_name(node: Any) -> str:
    decl = node.child_by_field_name("declarator")
    while decl is not None and decl.type not in {"identifier", "field_identifier", "qualified_identifier"}:
        decl = decl.child_by_field_name("declarator")
    return _text(decl)


def _archish(cond: str) -> bool:
    return _DISPATCH.search(cond.encode()) is not None


def _arm(line: int, cond: str, body: Any, source: str) -> HostArm:
    raw = (body.text or b"") if body is not None else b""
    stripped = raw.strip().strip(b"{}").strip()
    kind = ERROR if _ERROR.search(raw) else EMPTY if not stripped or stripped == b";" else CODE
    return HostArm(line, cond, kind, raw[:8000].decode("utf-8", "replace"), source[:200])


def _chain(node: Any, fn: str) -> HostDecision | None:
    arms: list[HostArm] = []
    current = node
    while current is not None:
        cond = _text(current.child_by_field_name("condition")).strip()
        body = current.child_by_field_name("consequence")
        arms.append(_arm(current.start_point[0] + 1, cond, body, _first_line(current)))
        alt = current.child_by_field_name("alternative")
        current = None
        if alt is not None:
            inner = next((c for c in alt.children if c.type != "else"), None)
            if inner is not None and inner.type == "if_statement":
                current = inner
            elif inner is not None:
                arms.append(_arm(alt.start_point[0] + 1, "1", inner, "else"))
    if not any(_archish(a.cond) for a in arms):
        return None
    return HostDecision("chain", node.start_point[0] + 1, fn, tuple(arms))


def _switch(node: Any, fn: str) -> HostDecision | None:
    var = _text(node.child_by_field_name("condition")).strip("() ")
    if not (_ARCH_NAME.match(var) or _ARCH_CALL.search(var)):
        return None
    body = node.child_by_field_name("body")
    arms: list[HostArm] = []
    for case in (c for c in (body.children if body is not None else []) if c.type == "case_statement"):
        value = case.child_by_field_name("value")
        cond = f"{var} == {_text(value)}" if value is not None else "1"
        stmts = [c for c in case.children if c.type not in {"case", "default", ":"} and c != value]
        text = b"\n".join(c.text or b"" for c in stmts)
        kind = (
            ERROR
            if _ERROR.search(text)
            else EMPTY
            if all(c.type == "break_statement" for c in stmts)
            else CODE
        )
        if not stmts and arms:  # `case 90: case 100:` fall through to the next label's code
            kind = "fallthrough"
        arms.append(
            HostArm(
                case.start_point[0] + 1, cond, kind, text[:8000].decode("utf-8", "replace"), _first_line(case)
            )
        )
    for i in range(len(arms) - 2, -1, -1):  # a label with no statements takes the next one's code
        if arms[i].body == "fallthrough" or (not arms[i].text and i + 1 < len(arms)):
            nxt = arms[i + 1]
            arms[i] = HostArm(arms[i].line, arms[i].cond, nxt.body, nxt.text, arms[i].source)
    if not any(a.cond == "1" for a in arms):
        arms.append(HostArm(node.end_point[0] + 1, "1", EMPTY, "", "(no default)"))
    return HostDecision("switch", node.start_point[0] + 1, fn, tuple(arms)) if len(arms) > 1 else None


def _check(node: Any, fn: str) -> HostDecision | None:
    name = _text(node.child_by_field_name("function"))
    if name not in _CHECKS:
        return None
    args = node.child_by_field_name("arguments")
    first = next(
        (c for c in (args.children if args is not None else []) if c.type not in {"(", ",", ")"}), None
    )
    cond = _text(first)
    if not cond or not _archish(cond):
        return None
    line = node.start_point[0] + 1
    src = _first_line(node)
    ok = HostArm(line, cond, CODE, "", src)
    return HostDecision("check", line, fn, (ok, HostArm(line, "1", ERROR, _text(node)[:2000], src)))


def _first_line(node: Any) -> str:
    return _text(node).split("\n", 1)[0].strip()
