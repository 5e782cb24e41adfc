"""Keep only the statements that can matter, so the parser reads a fraction of each file.

Top-level statements (and the members of a large class) that neither mention a capability nor
hold a capability-keyed dict are replaced by as many empty lines, which keeps every line number.
Short simple assignments stay when a capability line or a table reads the name they bind
(constants such as `MiB = 1024 * 1024` resolve table values). The cut runs in C
(`_cutscan.select`) when the extension is built; the Python below is its reference, and what runs
without it. If the cut source does not parse (a boundary guessed wrong), the caller parses the
file whole.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

from capgap.reading.prefilter import hit_offsets

try:  # the same byte scans in C (setup.py builds it when a compiler is there); else the Python below
    from capgap.reading import _cutscan
except ImportError:  # pragma: no cover - depends on the build
    _cutscan = None
if getattr(_cutscan, "VERSION", None) != 6:  # a stale build of older C source: not to be trusted
    _cutscan = None  # (fileparse.relevance and hintlines use its other scans: all or none of them)

_SIMPLE_ASSIGN = re.compile(rb"[ \t]*[A-Za-z_][\w.]*[ \t]*(?::[^=\n]+)?=[^=]")
_QUOTES = (re.compile(rb'"""'), re.compile(rb"'''"))  # one literal each: searched by skipping
_BIG_CLASS_LINES = 40
_BIG_DEF_LINES = 30
_BIG_BLOCK_LINES = 12
# A function whose body names no capability (only its name or parameters do) is kept whole up to
# this many lines; a longer one is generated kernel code (FlashInfer's CuTe kernels run to 10,000
# lines): its body is cut as any function's is, to its returns and the assignments hit lines read.
_WHOLE_DEF_LINES = 400
Piece = tuple[int, int, "bytes | None"]  # [a, b) of the source, or a replacement for it
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


def _statement_starts(data: bytes, indent: bytes, begin: int, end: int, quotes: list[int]) -> list[int]:
    if _cutscan is not None:
        return _cutscan.starts(data, indent, begin, end, quotes)
    return _starts(data, indent, begin, end, quotes)


def _has_hit(hits: list[int], a: int, b: int) -> bool:
    i = bisect_left(hits, a)
    return i < len(hits) and hits[i] < b


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
        if data.find(b"#", data.rfind(b"\n", 0, pos) + 1, pos) != -1:
            continue
        out.append(pos)
    return out


def _quote_offsets(data: bytes) -> list[int]:
    """Offsets of every triple quote: the parity of the count before a spot says it is in a string."""
    if _cutscan is not None:
        return _cutscan.quotes(data)
    return sorted(m.start() for q in _QUOTES for m in q.finditer(data))


def _calls_in_code(data: bytes, names: frozenset[bytes], quotes: list[int]) -> list[int]:
    """Offsets of calls of `names` (`name(`, not `def name(` nor `x.name(`) outside comments and strings."""
    alternatives = b"|".join(re.escape(n) for n in sorted(names))
    pattern = re.compile(rb"(?<![\w.])(?:" + alternatives + rb")[ \t]*\(")
    found = [m.start() for m in pattern.finditer(data) if not data.endswith(b"def ", 0, m.start())]
    return _code_hits(data, found, quotes)


def _hits_in_code(data: bytes, quotes: list[int]) -> list[int]:
    if _cutscan is not None:
        return _cutscan.code_hits(data, quotes)
    return _code_hits(data, hit_offsets(data, names=True), quotes)


@dataclass(frozen=True)
class Cut:
    text: bytes  # the kept statements, everything else blank lines (same line count)
    ends: dict[int, int]  # 1-based first line of a statement kept in part -> its last line in the file


def select(data: bytes, also: frozenset[bytes] = frozenset(), gates: tuple[int, ...] = ()) -> Cut:
    """`data` with irrelevant statements replaced by empty lines (same line count). `also`: names
    whose calls count as hits too (a module's own capability helpers whose names say nothing, so
    the lines that call them stay: `if _use_sheared_bias():`). `gates`: offsets that count as hits
    too (the test of an `if` that decides on a flag named for nothing: the gate is kept whole)."""
    if not also and not gates and _cutscan is not None and (answer := _cutscan.select(data)) is not None:
        return Cut(*answer)
    # no extension, extra names or gates, or an input where the reference raises
    return _select_python(data, also, gates)


def _select_python(data: bytes, also: frozenset[bytes] = frozenset(), gates: tuple[int, ...] = ()) -> Cut:
    """The reference of `_cutscan.select`: the same cut, walked in Python."""
    quotes = _quote_offsets(data)
    hits = _hits_in_code(data, quotes)
    if also or gates:
        hits = sorted({*hits, *gates, *(_calls_in_code(data, also, quotes) if also else ())})
    starts = _statement_starts(data, b"", 0, len(data), quotes)
    if not starts:
        return Cut(data, {})
    spans = list(zip(starts, [*starts[1:], len(data)], strict=True))
    tables = [(a, b) for a, b in spans if _has_hit(hits, a, b) and not _COMPOUND.match(data, a)]
    cutter = _Cutter(data, hits, quotes, _needed_names(data, hits, tables))
    keep: list[Piece] = []
    for a, b in spans:
        if cutter.keep_top(a, b):
            keep.extend(cutter.cut(a, b, b""))
    out: list[bytes] = []
    pos = 0
    for a, b, replacement in keep:
        if replacement is None:
            a = _with_comments_above(data, a, pos)  # "# capability major -> ..." speaks for the table below
        out.append(b"\n" * data.count(b"\n", pos, a))
        out.append(data[a:b] if replacement is None else replacement)
        pos = b
    out.append(b"\n" * data.count(b"\n", pos, len(data)))
    return Cut(b"".join(out), _line_spans(data, cutter.shortened))


def _line_spans(data: bytes, spans: list[tuple[int, int]]) -> dict[int, int]:
    """{first line: last line} (1-based) of byte spans, newlines counted once, in one sweep."""
    marks = sorted({pos for a, b in spans for pos in (a, b - 1)})
    line_at: dict[int, int] = {}
    line, prev = 1, 0
    for pos in marks:
        line += data.count(b"\n", prev, pos)
        line_at[pos], prev = line, pos
    return {line_at[a]: line_at[b - 1] for a, b in spans}


_CLASS_HEADER = re.compile(rb"^[ \t]*class\b[^\n]*:[ \t]*(#[^\n]*)?$|^[ \t]*\)[^\n]*:[ \t]*(#[^\n]*)?$", re.M)
_DEF_HEADER = re.compile(
    rb"\)[^\n]*:[ \t]*(#[^\n]*)?$|^[ \t]*(?:async[ \t]+)?def\b[^\n(]*\([^\n]*\)[^\n]*:[ \t]*$", re.M
)
_BODY = re.compile(rb"^([ \t]+)[^ \t\r\n#]", re.M)
_DEF_START = re.compile(rb"(?:@[^\n]*\n[ \t]*)*(?:async[ \t]+)?def\b")
# Compound statements whose blocks are cut like a function's body when large and their header
# holds no hit (a gate's own test keeps it whole, body and all: the evidence it guards).
_BLOCK_START = re.compile(rb"(?:if|while|for|with|try|async[ \t]+(?:for|with))\b")
_DECORATED = re.compile(rb"[ \t]*@")
_KEYWORD_LINE = re.compile(rb"^[ \t]*(?:async[ \t]+)?(?:def|class)\b", re.M)
_HEADER_END = re.compile(rb":[ \t]*(?:#[^\n]*)?\r?\n")
_CLAUSES: dict[bytes, re.Pattern[bytes]] = {}


def _clause_pattern(indent: bytes) -> re.Pattern[bytes]:
    if indent not in _CLAUSES:
        _CLAUSES[indent] = re.compile(rb"\n" + re.escape(indent) + rb"(?=(?:elif|else|except|finally)\b)")
    return _CLAUSES[indent]


_IDENT = re.compile(rb"[A-Za-z_]\w*")
_NOT_NAMES = frozenset((b"self", b"cls"))


_COMPOUND = re.compile(rb"(?:@|def\b|class\b|if\b|for\b|while\b|with\b|try\b|async\b|match\b)")


def _needed_names(data: bytes, hits: list[int], statements: list[tuple[int, int]]) -> frozenset[bytes]:
    """Names read on a line with a hit, or in a module-level statement with one (a table).

    A short assignment stays in the cut only when it binds one of these: the
    `props = torch.cuda.get_device_properties(0)` behind a `props.major >= 9`, the `MiB`
    in a table's values.
    """
    lines: set[int] = set()
    needed: set[bytes] = set()
    for pos in hits:
        start = data.rfind(b"\n", 0, pos) + 1
        if start not in lines:
            lines.add(start)
            end = data.find(b"\n", pos)
            needed.update(_IDENT.findall(data, start, end if end != -1 else len(data)))
    for a, b in statements:  # a table's values, on lines of their own
        needed.update(_IDENT.findall(data, a, b))
    needed -= _NOT_NAMES
    return frozenset(needed)


class _Cutter:
    def __init__(self, data: bytes, hits: list[int], quotes: list[int], needed: frozenset[bytes]) -> None:
        self.data = data
        self.hits = hits
        self.quotes = quotes
        self.needed = needed
        self.shortened: list[tuple[int, int]] = []  # statements kept in part: their whole span

    def cut(self, a: int, b: int, indent: bytes, in_def: bool = False) -> list[Piece]:
        """Pieces to keep of one relevant statement: a large class, def or block is cut further."""
        data = self.data
        lines = data.count(b"\n", a, b)
        start = a + len(indent)
        pieces: list[Piece] = []
        is_class = data.startswith(b"class ", start) or (
            data.startswith(b"@", start) and b"\n" + indent + b"class " in data[a : a + 400]
        )
        first = a  # the line the statement's node starts on: `def`/`class`, not a decorator
        if is_class and lines > _BIG_CLASS_LINES:
            pieces = self._members(a, b, _CLASS_HEADER, in_def=False)
            first = _KEYWORD_LINE.search(data, a, b).start() if pieces else a  # type: ignore[union-attr]
        elif not is_class and lines > _BIG_DEF_LINES and _DEF_START.match(data, start):
            pieces = self._members(a, b, _DEF_HEADER, in_def=True)
            first = _KEYWORD_LINE.search(data, a, b).start() if pieces else a  # type: ignore[union-attr]
        elif lines > _BIG_BLOCK_LINES and _BLOCK_START.match(data, start):
            pieces = self._block(a, b, indent, in_def)
        if pieces:
            self.shortened.append((first, b))
        return pieces or [(a, b, None)]

    def _members(self, a: int, b: int, header_re: re.Pattern[bytes], in_def: bool) -> list[Piece]:
        """The header and the relevant body statements of a class or def ([]: keep it whole)."""
        header = header_re.search(self.data, a, b)
        if header is None:
            return []
        body = _BODY.search(self.data, header.end() + 1, b)
        if body is None:
            return []
        long_unnamed = False  # a long function whose body names no capability: cut all the same
        if in_def and not _has_hit(self.hits, body.start(), b):
            long_unnamed = self.data.count(b"\n", a, b) > _WHOLE_DEF_LINES
            if not long_unnamed:
                return []
        if in_def and self._decorator_hit(a, b):
            return []  # `@skipIf(capability < 9)`: what the function does is read whole
        kept = self._body(body.start(), b, body[1], in_def)
        if kept is None and long_unnamed:  # nothing in it to keep: its first line becomes a `pass`
            eol = self.data.find(b"\n", body.start(), b)
            kept = [(body.start(), b if eol == -1 else eol, body[1] + b"pass")]
        return [(a, body.start(), None), *kept] if kept else []

    def _decorator_hit(self, a: int, b: int) -> bool:
        """Does a decorator of this def (`@skipIf(...)`) hold a hit?"""
        if _DECORATED.match(self.data, a) is None:
            return False
        keyword = _KEYWORD_LINE.search(self.data, a, b)
        return keyword is not None and _has_hit(self.hits, a, keyword.start())

    def _body(self, begin: int, end: int, indent: bytes, in_def: bool) -> list[Piece] | None:
        """The relevant statements of one block (None: nothing relevant, or no statement found).

        In a function, an `if` among the two statements after a hit stays too: what the code
        does when a lookup comes up empty (`if sizes is None: ...`) is where consequences are
        read. What a gate guards is read from the file itself (`Cut.ends`), not from the cut.
        """
        members = _statement_starts(self.data, indent, begin, end, self.quotes)
        if not members or members[0] != begin:
            return None
        spans = list(zip(members, [*members[1:], end], strict=True))
        keep = self._keep_in_def if in_def else self._keep_in_class
        relevant = [i for i, (m, n) in enumerate(spans) if keep(m, n, len(indent))]
        if not relevant:
            return None
        chosen = set(relevant)
        if in_def:  # an `if` right after a hit: what the code does when a lookup comes up empty
            hit = [i for i in relevant if _has_hit(self.hits, *spans[i])]
            chosen |= {
                j
                for i in hit
                for j in (i + 1, i + 2)
                if j < len(spans) and self.data.startswith(b"if ", spans[j][0] + len(indent))
            }
        kept: list[Piece] = []
        for i in sorted(chosen):
            m, n = spans[i]
            kept.extend(self.cut(m, n, indent, in_def))
        return kept

    def _keep_in_class(self, a: int, b: int, indent: int) -> bool:
        """A hit, or a short assignment binding a needed name (a class constant a table reads)."""
        return _has_hit(self.hits, a, b) or self._assigns_needed(a, b)

    def keep_top(self, a: int, b: int) -> bool:
        """A module-level statement with a hit, or a short assignment binding a needed name."""
        return _has_hit(self.hits, a, b) or self._assigns_needed(a, b)

    def _keep_in_def(self, a: int, b: int, indent: int) -> bool:
        """A hit, a return (a helper's answer) or a short assignment binding a needed name."""
        return (
            _has_hit(self.hits, a, b)
            or self.data.startswith(b"return", a + indent)
            or self._assigns_needed(a, b)
        )

    def _assigns_needed(self, a: int, b: int) -> bool:
        """A short assignment (at most 3 lines) whose targets include a needed name."""
        # the anchored match first: it turns most statements away before their lines are counted
        if (m := _SIMPLE_ASSIGN.match(self.data, a)) is None or self.data.count(b"\n", a, b) > 3:
            return False
        targets = _IDENT.findall(self.data, a, m.end() - 1)
        return any(name in self.needed for name in targets if name not in _NOT_NAMES)

    def _block(self, a: int, b: int, indent: bytes, in_def: bool) -> list[Piece]:
        """Header lines and the relevant statements of each clause of a large if/for/while/with/try
        whose header holds no hit; a clause left with nothing keeps a `pass` ([]: keep it whole)."""
        data = self.data
        starts = [a] + [
            m.start() + 1
            for m in _clause_pattern(indent).finditer(data, a, b)
            if not bisect_left(self.quotes, m.start() + 1) % 2
        ]
        kept: list[Piece] = []
        for cs, ce in zip(starts, [*starts[1:], b], strict=True):
            head = _HEADER_END.search(data, cs, ce)
            if head is None:
                return []
            if _has_hit(self.hits, cs, head.end()):
                return []  # a gate (`if`/`elif`/`while` test): kept whole
            body = _BODY.search(data, head.end(), ce)  # its first statement, past comments
            if body is None or len(body[1]) <= len(indent) or not body[1].startswith(indent):
                return []
            body_start = body.start()
            if data.startswith(b"except", cs + len(indent)):  # the fallback is read as it is
                kept.append((cs, ce, None))
                continue
            pieces = self._body(body_start, ce, body[1], in_def)
            kept.append((cs, body_start, None))
            if pieces is None:
                eol = data.find(b"\n", body_start, ce)
                kept.append((body_start, ce if eol == -1 else eol, body[1] + b"pass"))
            else:
                kept.extend(pieces)
        return kept
