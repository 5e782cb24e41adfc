"""Keep only the statements that can matter, so the parser reads a fraction of each file.

Top-level statements (and the members of a large class) that neither mention a capability nor
hold a capability-keyed dict are blanked out line by line, which keeps every line number. Short
simple assignments stay (constants such as `MiB = 1024 * 1024` resolve table values). If the
cut source does not parse (a statement boundary guessed wrong), the caller parses it whole.
"""

from __future__ import annotations

import re

from capgap.scan.prefilter import worth_parsing

_CONTINUES = (b"else", b"elif", b"except", b"finally", b"case")
_SIMPLE_ASSIGN = re.compile(rb"^[ \t]*[A-Za-z_][\w.]*[ \t]*(?::[^=\n]+)?=[^=]")
_BIG_CLASS_LINES = 60


def _starts(lines: list[bytes], indent: bytes, begin: int, end: int) -> list[int]:
    """Indices of lines in [begin, end) that start a statement at exactly `indent`."""
    out: list[int] = []
    in_string = decorated = False
    n = len(indent)
    for i in range(begin, end):
        line = lines[i]
        quotes = line.count(b'"""') + line.count(b"'''")
        was_in_string = in_string
        if quotes % 2:
            in_string = not in_string
        if was_in_string or not line.strip():
            continue
        if not line.startswith(indent) or line[n : n + 1] in (b" ", b"\t", b"#", b")", b"]", b"}", b""):
            continue
        word = line[n:].split(b" ", 1)[0].split(b":", 1)[0]
        if word in _CONTINUES:
            continue
        if decorated:  # the decorated def belongs to its decorator's statement
            decorated = word.startswith(b"@")
            continue
        decorated = word.startswith(b"@")
        out.append(i)
    return out


def _keep(chunk: list[bytes]) -> bool:
    if len(chunk) <= 3 and _SIMPLE_ASSIGN.match(chunk[0]):
        return True
    return worth_parsing(b"\n".join(chunk))


def select(data: bytes) -> bytes:
    """`data` with irrelevant statements replaced by empty lines (same line count)."""
    lines = data.split(b"\n")
    keep = [False] * len(lines)
    starts = _starts(lines, b"", 0, len(lines))
    if not starts:
        return data
    bounds = list(zip(starts, [*starts[1:], len(lines)], strict=False))
    for a, b in bounds:
        chunk = lines[a:b]
        if not _keep(chunk):
            continue
        head = chunk[0].lstrip()
        is_class = head.startswith(b"class ") or (
            head.startswith(b"@") and b"\nclass " in b"\n".join(chunk[:8])
        )
        if is_class and b - a > _BIG_CLASS_LINES and _keep_members(lines, a, b, keep):
            continue
        for i in range(a, b):
            keep[i] = True
    for i in range(0, starts[0]):  # module docstring / comments / encoding line
        keep[i] = lines[i].lstrip().startswith(b"#")
    return b"\n".join(line if k else b"" for line, k in zip(lines, keep, strict=False))


def _keep_members(lines: list[bytes], a: int, b: int, keep: list[bool]) -> bool:
    """Mark the class header and its relevant members; False when the class must stay whole."""
    header_end = next(
        (
            i
            for i in range(a, b)
            if lines[i].rstrip().endswith(b":") and lines[i].lstrip().startswith(b"class ")
        ),
        None,
    )
    if header_end is None:
        return False
    body = next(
        (i for i in range(header_end + 1, b) if lines[i].strip() and not lines[i].lstrip().startswith(b"#")),
        None,
    )
    if body is None:
        return False
    indent = lines[body][: len(lines[body]) - len(lines[body].lstrip())]
    if not indent:
        return False
    members = _starts(lines, indent, body, b)
    if not members or members[0] != body:
        return False
    kept = False
    for m, n in zip(members, [*members[1:], b], strict=False):
        if _keep(lines[m:n]):
            kept = True
            for i in range(m, n):
                keep[i] = True
    if not kept:
        return False
    for i in range(a, body):
        keep[i] = True
    return True
