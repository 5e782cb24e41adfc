"""The text around a decision that says what its paths are, beyond its own lines.

A predicate (`def _supports_current_device(): return family(100) and ...`) rarely says what it
guards; its authors say it nearby: the docstring or leading comments of the function or class it
sits in ("Page sizes >= 128 only run on the trtllm-gen dynamic kernel"), the comment above the
allow-list its test reads ("It is built for sm100/sm103"), the module's docstring ("... DeepGEMM's
sparse MQA logits kernels, SM100 only"). Extraction keeps the sentences that name archs (read
as `judging.prose` reads them) and the instruction-level needs those texts state (read as
`judging.remarks` reads comments); the rules decide what they mean.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from capgap.judging import callees, prose, remarks
from capgap.judging.records import Scope
from capgap.judging.statements import walk


@dataclass
class Opening:
    """What the docstring and leading comments of one enclosing def or class say."""

    sentences: tuple[str, ...] = ()  # "where\tsentence", each naming an arch
    needs: list[tuple[str, ...]] = field(default_factory=list)  # instruction-level needs it states
    needs_from: list[str] = field(default_factory=list)


def opening(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> Opening:
    """The arch sentences and stated needs of a def's or class's docstring and leading comments."""
    text, first = prose.opening(lines, node.lineno)
    sentences = tuple(f"{node.name} (line {first})\t{s}" for s in prose.arch_sentences(text))
    if not text or not remarks.may_state(text.lower()):
        return Opening(sentences)
    needs, where = remarks.stated(text, first)
    return Opening(sentences, needs, [f"{w} in the words opening {node.name}" for w in where])


def module_sentences(lines: list[str]) -> tuple[str, ...]:
    """The sentences of the module's docstring that name an arch ("where\tsentence")."""
    doc = remarks.docstring(lines)
    if doc is None:
        return ()
    text, first = doc
    return tuple(f"the module's docstring (line {first})\t{s}" for s in prose.arch_sentences(text))


def constant_sentences(lines: list[str], tests: list[ast.expr], scope: Scope, line: int) -> list[str]:
    """The arch sentences of the comment above each constant the tests read that is assigned
    before the decision (`# It is built for sm100/sm103.` above `_CAPS = frozenset({100, 103})`)."""
    out: list[str] = []
    seen: set[int] = set()
    for test in tests:
        for node in walk(test):  # ast.walk's Names, in its order
            if not isinstance(node, ast.Name):
                continue
            bound = scope.lookup(node.id)
            at = getattr(bound, "lineno", 0) if bound is not None else _assigned_at(lines, node.id, line)
            if not 0 < at < line or at in seen or (bound is not None and not _literal(bound)):
                continue
            seen.add(at)
            above, start = remarks.comment_block(lines, _statement_line(lines, at))
            above = above.rpartition("\n")[0]  # the comment on its own line restates it
            out += [f"the comment above {node.id} (line {start})\t{s}" for s in prose.arch_sentences(above)]
    return out


def _assigned_at(lines: list[str], name: str, before: int) -> int:
    """The line of a module-level `NAME = <number or string>` above line `before` (0: none), for
    a constant the statement cut left out (it names no capability: `QMUL4_MIN_PTX_VERSION = 94`)."""
    at = constant_lines(lines, name) if name.isupper() else None
    if at is None or at[0] >= before:
        return 0
    value = lines[at[0] - 1].partition("=")[2].lstrip()
    return at[0] if value[:1] and value[0] in "-+0123456789\"'" else 0


_CONSTANT_LINES = 6


def constant_lines(lines: list[str], name: str) -> tuple[int, int] | None:
    """The 1-based lines of the module's `NAME = "..."` / `NAME = (\n "..." "...")`."""
    head = re.compile(rf"^{re.escape(name)}\s*(?::[^=]*)?=\s*(.*)$")
    for i, line in enumerate(lines):
        hit = head.match(line)
        if hit is None:
            continue
        if hit[1].strip() != "(":
            return (i + 1, i + 1)
        for j in range(i + 1, min(i + _CONSTANT_LINES, len(lines))):
            if lines[j].strip().startswith(")"):
                return (i + 1, j + 1)
        return None
    return None


_ASSIGNS = re.compile(r"^\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*(?::[^=]+)?=(?!=)")
_SETUP_STATEMENTS = 3  # one-line statements between a comment and the test it speaks for


def setup_sentences(lines: list[str], line: int, tests: list[ast.expr]) -> list[str]:
    """The arch sentences of the comment above the one-line statements right before the decision
    that set what its tests read (`# Prefer CuTe-DSL W4A16 on SM100/103, otherwise Marlin.` above
    `cutedsl_ok, _ = Kernel.is_supported(cc)`, then `if cc in (100, 103) and cutedsl_ok:`)."""
    read = {n.id for t in tests for n in walk(t) if isinstance(n, ast.Name)}
    first = line
    while line - first < _SETUP_STATEMENTS and first > 1:
        text = lines[first - 2]
        set_here = _ASSIGNS.match(text)
        if set_here is None or text.rstrip().endswith(("(", "[", "{", ",", "\\")):
            break
        if not {name.strip() for name in set_here[1].split(",")} & read:
            break
        first -= 1
    if first == line:
        return []
    above, start = remarks.comment_block(lines, first)
    above = above.rpartition("\n")[0]  # (the comment on the statement's own line speaks of it alone)
    return [f"the comment above (line {start})\t{s}" for s in prose.arch_sentences(above)]


def helper_sentences(lines: list[str], tests: list[ast.expr], defs: dict[str, int]) -> list[str]:
    """The arch sentences of the docstring and leading comments of each module-level function of
    the file the tests call (`if not _fp8_tma_gemm_arch_at(i):`, whose comment says why only 10.x
    gets the path). `defs` maps a name to its `def` line, filled here (0: the file has none)."""
    out: list[str] = []
    for test in tests:
        for node in walk(test):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            name = node.func.id
            if name not in defs:
                at = callees.top_def(lines, name)
                defs[name] = 0 if at is None else at + 1
            if defs[name]:
                text, first = prose.opening(lines, defs[name])
                out += [f"the words opening {name} (line {first})\t{s}" for s in prose.arch_sentences(text)]
    return out


def _literal(node: object) -> bool:
    """Is the value a literal, or a call of literals (`frozenset({100, 103})`)?"""
    if not isinstance(node, ast.expr):
        return False
    return all(
        isinstance(n, (ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Call, ast.Name, ast.Load, ast.Dict))
        for n in ast.walk(node)
    ) and any(isinstance(n, ast.Constant) for n in ast.walk(node))


def _statement_line(lines: list[str], at: int) -> int:
    """The line the assignment whose value starts at `at` starts on (a value may open a line later
    than its name: `X = (` then the value)."""
    i = at
    while i > 1 and "=" not in lines[i - 1] and lines[i - 2].rstrip().endswith(("(", "=", "\\")):
        i -= 1
    return i
