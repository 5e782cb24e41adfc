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
from bisect import bisect_left, bisect_right
from itertools import accumulate

from capgap.judging.uncalled import decorators

Site = tuple[str, int]  # the qualname of the def the call sits in ("" at module level), its line

# decorators that change nothing about who calls the function
_HARMLESS = re.compile(r"^@(?:functools\.)?(?:cache|lru_cache|cached_property|staticmethod)\b")
_MAX_SITES = 8


def read(text: str) -> dict[str, tuple[Site, ...]]:
    """Each private function the module defines once and only calls -> where it is called."""
    if "def _" not in text:
        return {}
    found = _def_lines(text)
    names = [name for _, kind, name, _ in found if kind == "def" and name[0] == "_"]
    once = {n for n in set(names) if names.count(n) == 1 and not n.endswith("__")}
    if not once:
        return {}
    lines = text.split("\n")
    starts = list(accumulate((len(line) + 1 for line in lines), initial=0))
    defs = _Defs(found, starts)
    sites: dict[str, list[Site]] = {n: [] for n in once}
    for m in _PRIVATE_NAME.finditer(text):
        name, at = m[0], m.start()
        if name not in sites or (at > 0 and (text[at - 1].isalnum() or text[at - 1] == "_")):
            continue
        i = bisect_right(starts, at) - 1
        site = _site(lines[i], at - starts[i], m.end() - starts[i], lines, i, defs)
        if site is None or len(sites[name]) >= _MAX_SITES:
            del sites[name]
        elif site != _DEF_LINE:
            sites[name].append(site)
    return {name: tuple(found) for name, found in sorted(sites.items()) if found}


_DEF_NAME = re.compile(r"[ \t]+(\w+)")
_PRIVATE_NAME = re.compile(r"_[A-Za-z0-9]\w*")


def _def_lines(text: str) -> list[tuple[int, str, str, int]]:
    """Each `def` and `class` statement, in order: its keyword's offset, the keyword, the name and
    the indentation of its line (a keyword that only indentation, or `async`, precedes)."""
    out: list[tuple[int, str, str, int]] = []
    for kind in ("def", "class"):
        at = text.find(kind)
        while at >= 0:
            named = _DEF_NAME.match(text, at + len(kind))
            if named is not None and (at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "_")):
                line_start = text.rfind("\n", 0, at) + 1
                head = text[line_start:at]
                if not head.strip() or head.strip() == "async":
                    out.append((at, kind, named[1], len(head) - len(head.lstrip())))
            at = text.find(kind, at + len(kind))
    return sorted(out)


class _Defs:
    """The module's `def` and `class` lines (0-based index, indentation, name), for what a line sits in."""

    def __init__(self, found: list[tuple[int, str, str, int]], starts: list[int]) -> None:
        self.at = [bisect_right(starts, at) - 1 for at, *_ in found]
        self.rows = [(indent, name) for _, _, name, indent in found]

    def owner(self, i: int, indent: int) -> str:
        """The qualname of the defs and classes line `i` sits in, at `indent` ("" at module level):
        the nearest less indented def or class above it, then theirs (a signature or call that runs
        on over lines keeps its body's indentation, so continuation lines say nothing)."""
        names: list[str] = []
        k = bisect_left(self.at, i) - 1
        while k >= 0 and indent > 0:
            depth, name = self.rows[k]
            if depth < indent:
                names.append(name)
                indent = depth
            k -= 1
        return ".".join(reversed(names))


_DEF_LINE: Site = ("", 0)


def _site(line: str, start: int, end: int, lines: list[str], i: int, defs: _Defs) -> Site | None:
    """What a mention of a private name is: a call (its site), the name's own def line (_DEF_LINE),
    or None for anything else (handed on, in a comment or string, decorated by other than a cache)."""
    before = line[:start]
    if re.fullmatch(r"[ \t]*(?:async[ \t]+)?def[ \t]+", before):
        return _DEF_LINE if _plain_decorators(lines, i) else None
    if "#" in before or "'" in before or '"' in before:
        return None  # in a comment or a string: who knows what calls it
    if not line[end:].lstrip().startswith("(") or before.rstrip().endswith("@"):
        return None  # handed on, not called
    if before.endswith(".") and not before.endswith(("self.", "cls.")):
        return None  # another object's attribute of the same name
    return (defs.owner(i, len(line) - len(line.lstrip())), i + 1)


# `kda_cute._run_prefill(` (not `self._step(` nor `cls._make(`): another module's private function
_CALLED = re.compile(r"(_[A-Za-z0-9]\w*)[ \t]*\(")
_OWNER = re.compile(r"[A-Za-z_][\w.]*$")  # what the attribute is read from (`kda_cute`, `a.b`)


def private_calls(text: str) -> tuple[str, ...]:
    """The private names the module calls as attributes of another object (a module it imported)."""
    out: set[str] = set()
    at = text.find("._")
    while at > 0:
        call = _CALLED.match(text, at + 1)
        if call is not None and not call[1].endswith("__"):
            owner = _OWNER.search(text, max(0, at - 80), at)
            if owner is not None and owner[0] not in ("self", "cls"):
                out.add(call[1])
        at = text.find("._", at + 2)
    return tuple(sorted(out))


def _plain_decorators(lines: list[str], at: int) -> bool:
    """Are the decorators above the def on line `at` (0-based) only caches? (A decorator's call
    may run over lines: judging.uncalled reads them.)"""
    return all(_HARMLESS.match(d) for d in decorators(lines, at))
