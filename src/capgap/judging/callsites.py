"""Where a module calls its own private functions: the callers a decision's function has.

FlashInfer's `_pick_tile` picks an occupancy tile for 10.x in a chain of its own; its one caller,
`_run_fused_kda_decode_multitoken`, is called only past `if major != 10: raise` in
`run_fused_kda_decode_multitoken`. 12.0 never reaches the pick, so what it withholds is no loss
of 12.0's: the refusal is where 12.0 is turned away, and that is judged as its own decision.

Read on the module's text: a private name (`_pick_tile`, not a dunder) the module defines once,
every mention of which outside its `def` line is a call (`_pick_tile(`, `self._pick_tile(`), and
whose decorators only cache it. A name handed on uncalled (`submit(_x)`, `fn=_x`), named in a
string or comment, or imported by another module of the tree, has callers this cannot see: it is
left out, and its decisions are judged as before.
"""

from __future__ import annotations

import re

Site = tuple[str, int]  # the qualname of the def the call sits in ("" at module level), its line

_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+(\w+)", re.M)
_PRIVATE = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(_[A-Za-z0-9]\w*)[ \t]*\(", re.M)
# decorators that change nothing about who calls the function
_HARMLESS = re.compile(r"^@(?:functools\.)?(?:cache|lru_cache|cached_property|staticmethod)\b")
_MAX_SITES = 8
# one-line string literals (their brackets and quotes are no code), a triple quote left alone
_STRINGS = re.compile(r"'''|\"\"\"|'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")


def read(text: str) -> dict[str, tuple[Site, ...]]:
    """Each private function the module defines once and only calls -> where it is called."""
    names = [m[1] for m in _PRIVATE.finditer(text)]
    once = {n for n in names if names.count(n) == 1 and not n.endswith("__")}
    if not once:
        return {}
    lines = text.split("\n")
    owners = _owners(lines)
    out: dict[str, tuple[Site, ...]] = {}
    for name in sorted(once):
        sites = _sites(name, lines, owners)
        if sites:
            out[name] = sites
    return out


# `kda_cute._run_prefill(` (not `self._step(` nor `cls._make(`): another module's private function
_ATTRIBUTE_CALL = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\.(_[A-Za-z0-9]\w*)[ \t]*\(")


def private_calls(text: str) -> tuple[str, ...]:
    """The private names the module calls as attributes of another object (a module it imported)."""
    if "._" not in text:
        return ()
    found = _ATTRIBUTE_CALL.finditer(text)
    return tuple(sorted({m[2] for m in found if m[1] not in ("self", "cls") and not m[2].endswith("__")}))


def _owners(lines: list[str]) -> list[str]:
    """For each line, the qualname of the innermost def or class it sits in ("" at module level)."""
    out: list[str] = []
    stack: list[tuple[int, str]] = []  # (indent, name)
    depth = 0  # open brackets: a line inside a signature or a call continues its statement
    quoted = False  # inside a triple-quoted string
    for line in lines:
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        starts = depth == 0 and not quoted
        if starts and stripped and not stripped.startswith("#"):
            while stack and indent <= stack[-1][0]:
                stack.pop()
        m = _DEF.match(line) if starts else None
        out.append(".".join(n for _, n in stack))
        if m is not None:
            stack.append((len(m[1]), m[3]))
        code = _STRINGS.sub(_keep_triple, line)
        if (code.count('"""') + code.count("'''")) % 2:
            quoted = not quoted
        if not quoted:
            code = code.split("#", 1)[0]
            depth = max(0, depth + sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}"))
    return out


def _sites(name: str, lines: list[str], owners: list[str]) -> tuple[Site, ...]:
    """The calls of `name`; () when it is mentioned other than by a call or its own def."""
    word = re.compile(rf"(?<![\w]){re.escape(name)}\b")
    sites: list[Site] = []
    for i, line in enumerate(lines):
        for m in word.finditer(line):
            before = line[: m.start()]
            if re.fullmatch(r"[ \t]*(?:async[ \t]+)?def[ \t]+", before):
                if not _plain_decorators(lines, i):
                    return ()
                continue
            if "#" in before or "'" in before or '"' in before:
                return ()  # in a comment or a string: who knows what calls it
            after = line[m.end() :]
            if not after.lstrip().startswith("(") or before.rstrip().endswith(("@", "def")):
                return ()  # handed on, not called
            if before.endswith(".") and not before.endswith(("self.", "cls.")):
                return ()  # another object's attribute of the same name
            sites.append((owners[i], i + 1))
            if len(sites) > _MAX_SITES:
                return ()
    return tuple(sites)


def _plain_decorators(lines: list[str], at: int) -> bool:
    """Are the decorators above the def on line `at` (0-based) only caches?"""
    i = at - 1
    while i >= 0 and lines[i].lstrip().startswith("@"):
        if _HARMLESS.match(lines[i].lstrip()) is None:
            return False
        i -= 1
    return True


def _keep_triple(m: re.Match[str]) -> str:
    return m[0] if m[0] in ("'''", '"""') else ""
