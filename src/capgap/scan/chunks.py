"""Keep only the statements that can matter, so the parser reads a fraction of each file.

Top-level statements (and the members of a large class) that neither mention a capability nor
hold a capability-keyed dict are replaced by as many empty lines, which keeps every line number.
Short simple assignments stay (constants such as `MiB = 1024 * 1024` resolve table values). All
searching is done by C-level byte searches; Python only walks statement boundaries. If the cut
source does not parse (a boundary guessed wrong), the caller parses the file whole.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from capgap.scan.prefilter import hit_offsets

_CONTINUES = (b"else", b"elif", b"except", b"finally", b"case")
_SIMPLE_ASSIGN = re.compile(rb"[ \t]*[A-Za-z_][\w.]*[ \t]*(?::[^=\n]+)?=[^=]")
_QUOTES = re.compile(rb"\"\"\"|'''")
_BIG_CLASS_LINES = 40
_STARTS: dict[bytes, re.Pattern[bytes]] = {}


def _start_pattern(indent: bytes) -> re.Pattern[bytes]:
    if indent not in _STARTS:
        _STARTS[indent] = re.compile(rb"^" + re.escape(indent) + rb"(?=[^ \t\r\n#)\]}])", re.M)
    return _STARTS[indent]


def _starts(data: bytes, indent: bytes, begin: int, end: int) -> list[int]:
    """Byte offsets in [begin, end) of lines that start a statement at exactly `indent`."""
    quotes = [m.start() for m in _QUOTES.finditer(data, begin, end)]
    out: list[int] = []
    decorated = False
    n = len(indent)
    for m in _start_pattern(indent).finditer(data, begin, end):
        pos = m.start()
        if bisect_left(quotes, pos) % 2:  # inside a triple-quoted string
            continue
        head = data[pos + n : pos + n + 9]
        word = re.split(rb"[ :(\r\n]", head, maxsplit=1)[0]
        if word in _CONTINUES:
            continue
        if decorated:  # the decorated def belongs to its decorator's statement
            decorated = word.startswith(b"@")
            continue
        decorated = word.startswith(b"@")
        out.append(pos)
    return out


def _has_hit(hits: list[int], a: int, b: int) -> bool:
    i = bisect_left(hits, a)
    return i < len(hits) and hits[i] < b


def _keep(data: bytes, hits: list[int], a: int, b: int) -> bool:
    if _has_hit(hits, a, b):
        return True
    return data.count(b"\n", a, b) <= 3 and _SIMPLE_ASSIGN.match(data, a) is not None


def select(data: bytes) -> bytes:
    """`data` with irrelevant statements replaced by empty lines (same line count)."""
    hits = hit_offsets(data)
    starts = _starts(data, b"", 0, len(data))
    if not starts:
        return data
    keep: list[tuple[int, int]] = []
    for a, b in zip(starts, [*starts[1:], len(data)], strict=True):
        if not _keep(data, hits, a, b):
            continue
        is_class = data.startswith(b"class ", a) or (
            data.startswith(b"@", a) and b"\nclass " in data[a : a + 400]
        )
        if is_class and data.count(b"\n", a, b) > _BIG_CLASS_LINES:
            members = _class_members(data, hits, a, b)
            if members:
                keep.extend(members)
                continue
        keep.append((a, b))
    out: list[bytes] = []
    pos = 0
    for a, b in keep:
        out.append(b"\n" * data.count(b"\n", pos, a))
        out.append(data[a:b])
        pos = b
    out.append(b"\n" * data.count(b"\n", pos, len(data)))
    return b"".join(out)


def _class_members(data: bytes, hits: list[int], a: int, b: int) -> list[tuple[int, int]]:
    """Ranges to keep of a large class: its header and relevant members ([] keeps it whole)."""
    header = re.compile(rb"^[ \t]*class\b[^\n]*:[ \t]*(#[^\n]*)?$", re.M).search(data, a, b)
    if header is None:
        return []
    body = re.compile(rb"^([ \t]+)[^ \t\r\n#]", re.M).search(data, header.end() + 1, b)
    if body is None:
        return []
    members = _starts(data, body[1], body.start(), b)
    if not members or members[0] != body.start():
        return []
    kept = [(m, n) for m, n in zip(members, [*members[1:], b], strict=True) if _keep(data, hits, m, n)]
    if not kept:
        return []
    return [(a, body.start()), *kept]
