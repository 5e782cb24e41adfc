"""Which lines of a file mention a hint word, found once per file.

The extractor asks "does this node's source mention a capability hint?" tens of thousands of
times per engine; joining and lowercasing a node's lines each time cost more than the parse.
A hint never spans lines, so "any hint on lines a..b" answers the same question.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from typing import AnyStr

from capgap.reading import chunks

_ENCODED: dict[tuple[str, ...], tuple[bytes, ...]] = {}


class HintLines:
    def __init__(self, lines: list[str], hints: tuple[str, ...], data: bytes | None = None) -> None:
        """`data`: the UTF-8 bytes `lines` were split from (`text.splitlines()`), if at hand. The C
        scan answers from them when they are ASCII (else None, and the lines are searched here)."""
        if data is not None and chunks._cutscan is not None:
            if hints not in _ENCODED:
                _ENCODED[hints] = tuple(h.encode("utf-8") for h in hints)  # non-ASCII: the C scan refuses
            found = chunks._cutscan.hint_lines(data, _ENCODED[hints])
            if found is not None:
                self._lines: list[int] = found
                return
        joined = "\n".join(lines)
        low = joined.lower()
        if len(low) != len(joined):  # a character whose lowercase is longer: offsets shift, go per line
            self._lines = [i for i, line in enumerate(lines) if any(h in line.lower() for h in hints)]
            return
        found: set[int] = set()
        for hint in hints:  # C-level find/count; Python steps only from one hit line to the next
            line, pos = 0, 0
            i = low.find(hint)
            while i != -1:
                line += low.count("\n", pos, i)
                found.add(line)
                eol = low.find("\n", i)
                if eol == -1:
                    break
                line, pos = line + 1, eol + 1
                i = low.find(hint, pos)
        self._lines = sorted(found)

    def any_in(self, first: int, last: int) -> bool:
        """Is a hint on any of the 1-based lines first..last?"""
        if first <= 0:
            return False
        i = bisect_left(self._lines, first - 1)
        return i < len(self._lines) and self._lines[i] <= last - 1


def lines_holding(text: AnyStr, word: AnyStr) -> Iterator[tuple[int, int]]:
    """(start, end) of each line of `text` that holds `word`, once per line, in order: `find`
    jumps to the few lines worth a regex (one led by a character class tries every position)."""
    newline = "\n" if isinstance(text, str) else b"\n"
    at = text.find(word)
    while at != -1:
        start = text.rfind(newline, 0, at) + 1  # type: ignore[arg-type]
        end = text.find(newline, at)  # type: ignore[arg-type]
        end = len(text) if end == -1 else end
        yield start, end
        at = text.find(word, end)


def line_matches(pattern: re.Pattern[str], text: str, word: str) -> Iterator[re.Match[str]]:
    """`pattern.finditer(text)` for a pattern led by `^` (re.M) whose every match holds `word` on
    its first line: tried only at the start of the lines that hold it (a regex led by `^` is
    otherwise tried at every position of the file). A match may run over lines; the lines it
    covers are not tried again, as finditer would not."""
    after = 0
    for start, _ in lines_holding(text, word):
        if start < after:
            continue
        hit = pattern.match(text, start)
        if hit is not None:
            after = hit.end()
            yield hit


def holds_any(low: str | bytes, words: tuple[str, ...]) -> bool:
    """Is any of the lowercase ASCII `words` in `low`, a lowercased text or its lowercased UTF-8
    bytes (`Whole.lowered`)? Bytes take one C pass for all the words (the hint-line scan) where
    `in` would read the file once per word absent."""
    if isinstance(low, str):
        return any(word in low for word in words)
    if chunks._cutscan is not None:
        if words not in _ENCODED:
            _ENCODED[words] = tuple(w.encode("utf-8") for w in words)
        found = chunks._cutscan.hint_lines(_ascii(low), _ENCODED[words])
        if found is not None:
            return bool(found)
    return any(word.encode() in low for word in words)


def lines_with_any(low: bytes, words: tuple[str, ...]) -> list[int] | None:
    """The 0-based lines (as str.splitlines splits ASCII) of `low`, lowercased UTF-8 bytes, that
    hold any of the lowercase ASCII `words`, in one C pass; None without the C scan."""
    if chunks._cutscan is None:
        return None
    if words not in _ENCODED:
        _ENCODED[words] = tuple(w.encode("utf-8") for w in words)
    found: list[int] | None = chunks._cutscan.hint_lines(_ascii(low), _ENCODED[words])
    return found


# Every byte of UTF-8 beyond ASCII as 0x01, a byte no word holds: an ASCII word is where it was.
_ASCII_ONLY = bytes(range(128)) + b"\x01" * 128
_last: tuple[bytes, bytes] = (b"", b"")  # the bytes last asked about, and their ASCII stand-in


def _ascii(low: bytes) -> bytes:
    """`low` with its bytes beyond ASCII replaced one for one (the C scan takes ASCII alone; a file
    is asked about several groups of words in turn, so the last one is kept)."""
    global _last
    kept = _last
    if kept[0] is not low:
        kept = _last = (low, low if low.isascii() else low.translate(_ASCII_ONLY))
    return kept[1]
