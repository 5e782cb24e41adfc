"""Host-side arch dispatch in C++/CUDA sources, read with a real parser (tree-sitter's C++ grammar).

`if (sm_version >= 90 && sm_version < 100) ... else if ... else TORCH_CHECK(false, ...)`,
`switch (sm) { case 90: ...; default: throw ...; }` and `TORCH_CHECK(major == 9, "...")`: each
decision's arms with their conditions (as text, evaluated later per arch by `native.expr`) and
what each arm does (real code, nothing, an error). Only files a byte test finds a comparison of an
arch-named variable with a number in, or a call that may be an arch helper, are parsed. Each file
also gives the arch helpers it defines (`native.helpers`: `bool isSm90OrLater()`, `static bool
use_x(int sm)`, `int get_arch()`), which the judging follows from any file, and a local that holds
the arch from a call (`int32_t version_num = get_sm_version_num();`) is read through that call.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

from capgap.native import helpers
from capgap.native.helpers import HostHelper

CODE, EMPTY, ERROR = "code", "empty", "error"
# A comparison of an arch-named variable or call with a number: what makes a file worth parsing.
# Or a call that may be an arch helper (`native.helpers`): a no-argument predicate or getter whose
# name names an arch (`isSm90OrLater()`, `is_hopper()`, `get_arch()`, not a constructor such as
# `Sm90Info()`), one given an arch variable (`use_x(sm)`), one compared with a number (`getSM() >=
# 90`), and what computes the number (`major * 10 + minor`). In lowercased text.
_HELPERISH = (
    rb"|\b(?:is|use|has|can|should|supports?|enable|get)_?\w*?(?:sm_?\d{2}|sm_?version|smversion|hopper|blackwell|arch)"
    rb"\w*\(\)|\((?:sm_?version|sm_?ver|sm_?arch|sm|arch)\)"
    rb"|(?:sm|arch)\w*\(\)\s*(?:==|>=|<=|!=|<|>)\s*\d|major\w*\s*\*\s*10\s*\+"
)
# Matched in lowercased text (a pattern under re.I is read several times slower).
_DISPATCH = re.compile(
    rb"(?:sm_?version|smversion|sm_?ver|sm_?arch|getsmversion\(\)|get_sm_version\(\)|\bsm|\bmajor|\barch)"
    rb"\s*(?:==|>=|<=|!=|<|>)\s*\d{1,4}\b" + _HELPERISH
)
# The same, for grep -E -i (the prefilter that picks the files worth this regex).
GREP_PATTERN = (
    r"(sm_?version|sm_?ver|sm_?arch|getsmversion\(\)|get_sm_version\(\)|\bsm|\bmajor|\barch)"
    r"\s*(==|>=|<=|!=|<|>)\s*[0-9]"
    r"|\b(is|use|has|can|should|supports?|enable|get)_?[a-z0-9_]*(sm_?[0-9]{2}|sm_?version|smversion|hopper|blackwell|arch)"
    r"[a-z0-9_]*\(\)|\((sm_?version|sm_?ver|sm_?arch|sm|arch)\)"
    r"|(sm|arch)[a-z0-9_]*\(\)\s*(==|>=|<=|!=|<|>)\s*[0-9]|major[a-z0-9_]*\s*\*\s*10\s*\+"
)
MAX_BYTES = 512 << 10  # a larger source is generated kernels, not host dispatch
_ERROR = re.compile(
    rb"\bthrow\b|TORCH_CHECK\s*\(\s*false|TORCH_CHECK_NOT_IMPLEMENTED|TLLM_THROW|TLLM_CHECK_WITH_INFO\s*\(\s*false"
    rb"|FLASHINFER_ERROR|std::abort|\babort\s*\(|assert\s*\(\s*(?:false|0)\s*\)"
)
_CHECKS = {"TORCH_CHECK", "TLLM_CHECK", "TLLM_CHECK_WITH_INFO", "FLASHINFER_CHECK", "CHECK"}
_ARCH_NAME = re.compile(r"^(?:sm_?version|smversion|sm_?ver|sm_?arch|sm|arch|cc|major|minor)$", re.I)
_ARCH_CALL = re.compile(r"get_?sm_?version|getsmversion|get_sm|(?:sm|arch)\w*\(\)$", re.I)


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
    return _DISPATCH.search(data.lower()) is not None


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
    return read_all(data)[0]


def read_all(data: bytes) -> tuple[list[HostDecision], list[HostHelper]]:
    """The arch decisions of a file and the arch helpers it defines."""
    try:
        parser = _parser()
    except ImportError:
        return [], []
    tree = parser.parse(data)
    marks = _marks(data)
    out: list[HostDecision] = []
    found: list[HostHelper] = []
    no_binds: dict[str, str] = {}
    stack = [(tree.root_node, "", "", no_binds)]
    while stack:
        node, fn, ctx, binds = stack.pop()
        i = bisect_left(marks, node.start_byte)
        if not binds and (i == len(marks) or marks[i] >= node.end_byte):
            continue  # nothing under it can be an arch decision: not walked (most of a file)
        if node.type == "function_definition":
            fn = _function_name(node) or fn
            ctx = _text(node)[:16000]
            binds = _locals(ctx)
            helper = helpers.extract(node, _archish)
            if helper is not None:
                found.append(helper)
        d = None
        if node.type == "if_statement" and not (
            node.parent is not None and node.parent.type == "else_clause"
        ):
            d = _chain(node, fn, binds)
        elif node.type == "switch_statement":
            d = _switch(node, fn, binds)
        elif node.type == "call_expression":
            d = _check(node, fn, binds)
        if d is not None:
            out.append(dataclasses.replace(d, context=ctx))
        stack.extend((c, fn, ctx, binds) for c in reversed(node.children))
    out.sort(key=lambda d: d.line)
    return out, found


# Where an arch decision can be: each place a comparison of an arch-named variable starts (the
# dispatch pattern less its word boundaries, so none is lost to what surrounds a node's text), and
# each `switch` (its variable is tested by name). A node holding neither holds no decision.
_MARK = re.compile(
    rb"(?:sm_?version|smversion|sm_?ver|sm_?arch|getsmversion\(\)|get_sm_version\(\)|sm|major|arch)"
    rb"\s*(?:==|>=|<=|!=|<|>)\s*\d|switch" + _HELPERISH
)


def _marks(data: bytes) -> list[int]:
    """Offsets of `_MARK`'s matches. A decision's condition (a chain's, a check's) is text of its
    node and a _DISPATCH match in it is a _MARK match there; the match finditer reports instead
    can only start earlier in the same identifier (`sm_arch` for `arch`), which no node splits."""
    return [m.start() for m in _MARK.finditer(data.lower())]


# A local that holds the arch under another name: `int32_t version_num = get_sm_version_num();`.
_ARCH_LOCAL = re.compile(
    r"\b([A-Za-z_]\w*)\s*=\s*((?:\w+::)*\w*(?:sm_?version|smversion|get_?sm|get_?arch|compute_?capability)\w*"
    r"\s*\(\s*\w*\s*\))\s*;",
    re.I,
)


# A flag set once from an arch test: `bool is_sm8x = dprops->major == 8 && dprops->minor >= 0;`
_FLAG_LOCAL = re.compile(r"\b(?:const\s+)?bool\s+([A-Za-z_]\w*)\s*=\s*([^;{}=][^;{}]{0,200});")


def _locals(function: str) -> dict[str, str]:
    """The function's locals that hold the arch from a call (each decision reading one is then
    walked and read through that call); arch-named ones (`sm`, `sm_version`) are read as such.
    And its flags set from an arch test (`TORCH_CHECK(is_sm90 || is_sm8x, ...)` reads their tests)."""
    if "=" not in function:
        return {}
    binds = {m[1]: m[2] for m in _ARCH_LOCAL.finditer(function) if not _ARCH_NAME.match(m[1])}
    if "bool" in function:
        for m in _FLAG_LOCAL.finditer(function):
            # (a flag set again later is no one test)
            once = len(re.findall(rf"\b{m[1]}\s*=(?!=)", function)) == 1
            if once and m[1] not in binds and _archish(m[2]):
                binds[m[1]] = m[2].strip()
    return binds


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def _function_name(node: Any) -> str:
    decl = node.child_by_field_name("declarator")
    while decl is not None and decl.type not in {"identifier", "field_identifier", "qualified_identifier"}:
        decl = decl.child_by_field_name("declarator")
    return _text(decl)


def _archish(cond: str) -> bool:
    return _DISPATCH.search(cond.lower().encode()) is not None


def _arm(line: int, cond: str, body: Any, source: str) -> HostArm:
    raw = (body.text or b"") if body is not None else b""
    stripped = raw.strip().strip(b"{}").strip()
    kind = ERROR if _ERROR.search(raw) else EMPTY if not stripped or stripped == b";" else CODE
    return HostArm(line, cond, kind, raw[:8000].decode("utf-8", "replace"), source[:200])


def _chain(node: Any, fn: str, binds: dict[str, str]) -> HostDecision | None:
    arms: list[HostArm] = []
    current = node
    while current is not None:
        cond = helpers.bind(_text(current.child_by_field_name("condition")).strip(), binds)
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


def _switch(node: Any, fn: str, binds: dict[str, str]) -> HostDecision | None:
    var = helpers.bind(_text(node.child_by_field_name("condition")).strip("() "), binds)
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


def _check(node: Any, fn: str, binds: dict[str, str]) -> HostDecision | None:
    name = _text(node.child_by_field_name("function"))
    if name not in _CHECKS:
        return None
    args = node.child_by_field_name("arguments")
    first = next(
        (c for c in (args.children if args is not None else []) if c.type not in {"(", ",", ")"}), None
    )
    cond = helpers.bind(_text(first), binds)
    if not cond or not _archish(cond):
        return None
    line = node.start_point[0] + 1
    src = _first_line(node)
    ok = HostArm(line, cond, CODE, "", src)
    return HostDecision("check", line, fn, (ok, HostArm(line, "1", ERROR, _text(node)[:2000], src)))


def _first_line(node: Any) -> str:
    return _text(node).split("\n", 1)[0].strip()
