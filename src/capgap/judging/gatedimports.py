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

from capgap.judging.callees import relative_package
from capgap.reading.hintlines import line_matches

_FROM = re.compile(r"^([ \t]*)from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_IMPORT = re.compile(r"^([ \t]*)import[ \t]+([^\n#;]+)", re.M)
_HEADER = re.compile(r"^([ \t]*)(?:el)?if[ \t]+(.+?):[ \t]*(?:#.*)?$")
_MAX_TEST = 200  # characters: a longer test is left unread


def imports(text: str, module: str, is_package: bool) -> list[tuple[int, int, list[str]]]:
    """Each import statement of `text`: its first line, its indentation, the modules it may load
    (`from a.b import c`: `a.b` and `a.b.c`, which may be a module)."""
    out: list[tuple[int, int, list[str]]] = []
    if "import" not in text:
        return out
    line, at = 1, 0  # matches come in order: their lines are counted on from the last one
    for hit in line_matches(_FROM, text, "import"):
        line, at = line + text.count("\n", at, hit.start()), hit.start()
        base = hit[3]
        if hit[2]:
            parts = relative_package(module, is_package, len(hit[2]))
            if parts is None:
                continue
            base = ".".join([*parts, base] if base else parts)
        names = re.sub(r"#[^\n]*", "", hit[4]).strip("()")
        dotted = [base, *(f"{base}.{n.split()[0]}" for n in names.split(",") if n.split())]
        out.append((line, len(hit[1]), dotted))
    line, at = 1, 0
    for hit in line_matches(_IMPORT, text, "import"):
        line, at = line + text.count("\n", at, hit.start()), hit.start()
        dotted = [part.split()[0] for part in hit[2].split(",") if part.split()]
        out.append((line, len(hit[1]), dotted))
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
