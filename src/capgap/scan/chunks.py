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

_SIMPLE_ASSIGN = re.compile(rb"[ \t]*[A-Za-z_][\w.]*[ \t]*(?::[^=\n]+)?=[^=]")
_QUOTES = (re.compile(rb'"""'), re.compile(rb"'''"))  # one literal each: searched by skipping
_BIG_CLASS_LINES = 40
_BIG_DEF_LINES = 30
_STARTS: dict[bytes, re.Pattern[bytes]] = {}


def _start_pattern(indent: bytes) -> re.Pattern[bytes]:
    # Led by the literal newline + indent: the regex engine jumps between candidates (a `^` with
    # re.M would make it try every byte). A continuation keyword (`else:`) starts no statement.
    if indent not in _STARTS:
        not_continuation = rb"(?!(?:else|elif|except|finally|case)(?:[ :(\r\n]|\Z))"
        _STARTS[indent] = re.compile(rb"\n" + re.escape(indent) + rb"(?=[^ \t\r\n#)\]}])" + not_continuation)
    return _STARTS[indent]


def _starts(data: bytes, indent: bytes, begin: int, end: int, quotes: list[int]) -> list[int]:
    """Byte offsets in [begin, end) of lines that start a statement at exactly `indent`.

    `begin` is 0 or the start of a line.
    """
    out: list[int] = []
    decorated = False
    n = len(indent)
    pattern = _start_pattern(indent)
    found = [m.start() + 1 for m in pattern.finditer(data, max(begin - 1, 0), end)]
    if begin == 0 and (m := pattern.match(b"\n" + data[: n + 16])) and m.end() <= end + 1:
        found.insert(0, 0)
    for pos in found:
        if bisect_left(quotes, pos) % 2:  # inside a triple-quoted string
            continue
        at = data[pos + n : pos + n + 1] == b"@"
        if decorated:  # the decorated def belongs to its decorator's statement
            decorated = at
            continue
        decorated = at
        out.append(pos)
    return out


def _has_hit(hits: list[int], a: int, b: int) -> bool:
    i = bisect_left(hits, a)
    return i < len(hits) and hits[i] < b


def _keep(data: bytes, hits: list[int], a: int, b: int) -> bool:
    if _has_hit(hits, a, b):
        return True
    return data.count(b"\n", a, b) <= 3 and _SIMPLE_ASSIGN.match(data, a) is not None


def _with_comments_above(data: bytes, a: int, floor: int) -> int:
    """Move a kept statement's start up over the comment lines right above it (not below `floor`)."""
    for _ in range(3):
        prev_end = a - 1
        if prev_end <= floor:
            break
        prev_start = data.rfind(b"\n", 0, prev_end) + 1
        if prev_start < floor or not data[prev_start:prev_end].lstrip().startswith(b"#"):
            break
        a = prev_start
    return a


def _code_hits(data: bytes, hits: list[int], quotes: list[int]) -> list[int]:
    """Hits in code: a word in a comment or a docstring makes no statement relevant."""
    out = []
    for pos in hits:
        if bisect_left(quotes, pos) % 2:
            continue
        line_start = data.rfind(b"\n", 0, pos) + 1
        if b"#" in data[line_start:pos]:
            continue
        out.append(pos)
    return out


def select(data: bytes) -> bytes:
    """`data` with irrelevant statements replaced by empty lines (same line count)."""
    # parity of the count before a spot: in a string
    quotes = sorted(m.start() for q in _QUOTES for m in q.finditer(data))
    hits = _code_hits(data, hit_offsets(data), quotes)
    starts = _starts(data, b"", 0, len(data), quotes)
    if not starts:
        return data
    keep: list[tuple[int, int]] = []
    for a, b in zip(starts, [*starts[1:], len(data)], strict=True):
        if _keep(data, hits, a, b):
            keep.extend(_cut(data, hits, a, b, b"", quotes))
    out: list[bytes] = []
    pos = 0
    for a, b in keep:
        a = _with_comments_above(data, a, pos)  # "# capability major -> ..." speaks for the table below
        out.append(b"\n" * data.count(b"\n", pos, a))
        out.append(data[a:b])
        pos = b
    out.append(b"\n" * data.count(b"\n", pos, len(data)))
    return b"".join(out)


_CLASS_HEADER = re.compile(rb"^[ \t]*class\b[^\n]*:[ \t]*(#[^\n]*)?$|^[ \t]*\)[^\n]*:[ \t]*(#[^\n]*)?$", re.M)
_DEF_HEADER = re.compile(
    rb"\)[^\n]*:[ \t]*(#[^\n]*)?$|^[ \t]*(?:async[ \t]+)?def\b[^\n(]*\([^\n]*\)[^\n]*:[ \t]*$", re.M
)
_BODY = re.compile(rb"^([ \t]+)[^ \t\r\n#]", re.M)
_DEF_START = re.compile(rb"(?:@[^\n]*\n[ \t]*)*(?:async[ \t]+)?def\b")


def _cut(
    data: bytes, hits: list[int], a: int, b: int, indent: bytes, quotes: list[int]
) -> list[tuple[int, int]]:
    """Ranges to keep of one relevant statement: a large class or function is cut further."""
    lines = data.count(b"\n", a, b)
    start = a + len(indent)
    is_class = data.startswith(b"class ", start) or (
        data.startswith(b"@", start) and b"\n" + indent + b"class " in data[a : a + 400]
    )
    if is_class and lines > _BIG_CLASS_LINES:
        return _members(data, hits, a, b, _CLASS_HEADER, quotes, in_def=False) or [(a, b)]
    if not is_class and lines > _BIG_DEF_LINES and _DEF_START.match(data, start):
        return _members(data, hits, a, b, _DEF_HEADER, quotes, in_def=True) or [(a, b)]
    return [(a, b)]


def _members(
    data: bytes,
    hits: list[int],
    a: int,
    b: int,
    header_re: re.Pattern[bytes],
    quotes: list[int],
    in_def: bool,
) -> list[tuple[int, int]]:
    """The header and the relevant body statements of a class or def ([]: keep it whole).

    In a function, the two statements after each relevant one stay too: what the code does
    when a lookup comes up empty (`if sizes is None: ...`) is where consequences are read.
    """
    header = header_re.search(data, a, b)
    if header is None:
        return []
    body = _BODY.search(data, header.end() + 1, b)
    if body is None:
        return []
    members = _starts(data, body[1], body.start(), b, quotes)
    if not members or members[0] != body.start():
        return []
    spans = list(zip(members, [*members[1:], b], strict=True))
    relevant = [i for i, (m, n) in enumerate(spans) if _keep(data, hits, m, n)]
    if not relevant or (in_def and not any(_has_hit(hits, m, n) for m, n in spans)):
        return []
    chosen = set(relevant)
    if in_def:
        chosen |= {j for i in relevant for j in (i + 1, i + 2) if j < len(spans)}
    kept: list[tuple[int, int]] = [(a, body.start())]
    for i in sorted(chosen):
        m, n = spans[i]
        kept.extend([(m, n)] if in_def else _cut(data, hits, m, n, body[1], quotes))
    return kept
