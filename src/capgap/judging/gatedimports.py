"""Imports a module makes only where an `if` holds, read on its text:

    if _use_sheared_bias():
        from vllm.third_party.tml_fa4 import flash_attn_varlen_func

Each is kept as "line\\ttest\\tmodule,module" (the import's first line, the test of the `if` or
`elif` whose block holds it, the modules it may load); judging.unreached asks whether the target
fails the test. An import in any other block (a function body, `try`, `else`, a test written over
several lines) is not kept: nothing is known of when it runs.
"""

from __future__ import annotations

import re

from capgap.judging.callees import import_statements

_INDENT = re.compile(r"[ \t]*")
DYNAMIC = ("import_module", "__import__")  # imports of a module named in a string
_HEADER = re.compile(r"^([ \t]*)(?:el)?if[ \t]+(.+?):[ \t]*(?:#.*)?$")
_MAX_TEST = 200  # characters: a longer test is left unread


def imports(text: str, module: str, is_package: bool) -> list[tuple[int, int, list[str]]]:
    """Each import statement of `text`: its first line, its indentation, the modules it may load
    (`from a.b import c`: `a.b` and `a.b.c`, which may be a module)."""
    out: list[tuple[int, int, list[str]]] = []
    line, at = 1, 0  # statements come in order, `from` ones first: lines counted on from the last
    for start, base, names in import_statements(text, module, is_package):
        if start < at:
            line, at = 1, 0
        line, at = line + text.count("\n", at, start), start
        lead = _INDENT.match(text, start)  # `[ \t]*` always matches
        indent = lead.end() - start if lead else 0
        if base is None:
            dotted = [words[0] for words in names]
        else:
            dotted = [base, *(f"{base}.{words[0]}" for words in names)]
        out.append((line, indent, dotted))
    return out


def read(
    text: str, lines: list[str], module: str, is_package: bool
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The module's imports that sit in the block of an `if` (see the module's docstring), then the
    modules it imports at module level (which load whenever it is imported)."""
    gated: list[str] = []
    top: list[str] = []
    for line, indent, dotted in imports(text, module, is_package):
        if indent == 0:
            top += dotted
            continue
        test = _enclosing_test(lines, line - 1, indent)
        if test:
            gated.append(f"{line}\t{test}\t{','.join(dotted)}")
    return tuple(gated), tuple(dict.fromkeys(top))


def _enclosing_test(lines: list[str], index: int, indent: int) -> str:
    """The test of the `if` / `elif` heading the block line `index` sits in ("" for another block)."""
    for i in range(index - 1, -1, -1):
        raw = lines[i]
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if len(raw) - len(raw.lstrip()) >= indent:
            continue  # a statement of the same block, or deeper
        head = _HEADER.match(raw)
        return head[2] if head is not None and len(head[2]) <= _MAX_TEST else ""
    return ""
