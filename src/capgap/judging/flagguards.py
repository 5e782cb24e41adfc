"""What a flag set on an object guards: the imports a method makes past `if not self.flag: raise`.

sglang 0.5.17's CuTe KDA kernel sets `self.supports_prefill = _is_blackwell()` (major >= 10) in
`__init__`; `_ensure_extend_loaded` refuses with `if not self.supports_prefill: raise ...` and then
imports `kda_blackwell.chunk_kda_cutedsl`, tcgen05 kernels. What the flag's yes lets the target
into is what those imports need (judging.rules.gate_admits_unsupported reads them).
"""

from __future__ import annotations

import re

from capgap.judging.gatedimports import imports

# `if not self.supports_prefill:` on a line of its own (a method's guard clause)
_GUARD = re.compile(r"^([ \t]+)if not self\.(\w+)[ \t]*:[ \t]*(?:#.*)?$", re.M)
_REFUSES = re.compile(r"^[ \t]*(?:raise|return)\b")


def _indent(line: str) -> int:
    """Columns, tabs expanded as Python reads them (a tab-indented file's guard and body compare)."""
    wide = line.expandtabs()
    return len(wide) - len(wide.lstrip(" "))


def read(text: str, module: str, is_package: bool) -> dict[str, tuple[str, ...]]:
    """Each flag `self.X` some method refuses without (`if not self.X:` whose block raises or
    returns) -> the names that method imports after that guard (`a.b.c` for `from a.b import c`)."""
    if "if not self." not in text:
        return {}
    lines = text.split("\n")
    found: dict[str, list[str]] = {}
    loaded: list[tuple[int, int, list[str]]] | None = None
    for hit in _GUARD.finditer(text):
        first = text.count("\n", 0, hit.start())  # the guard's line, 0-based
        indent = _indent(hit[1])
        end = first + 1
        refuses = False
        while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > indent):
            refuses = refuses or bool(_REFUSES.match(lines[end]))
            end += 1
        if not refuses:
            continue
        last = end  # the rest of the function: lines indented as the guard is, or more
        while last < len(lines) and (not lines[last].strip() or _indent(lines[last]) >= indent):
            last += 1
        loaded = imports(text, module, is_package) if loaded is None else loaded
        # (imports' lines are 1-based: past the guard's block, up to the function's end)
        names = [name for line, _, dotted in loaded if end < line <= last for name in dotted[1:] or dotted]
        if names:
            found.setdefault(hit[2], []).extend(names)
    return {flag: tuple(dict.fromkeys(names)) for flag, names in found.items()}
