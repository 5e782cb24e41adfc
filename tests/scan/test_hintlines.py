"""HintLines answers exactly what joining and searching a node's lines answered."""

from __future__ import annotations

import pytest

from capgap.reading.hintlines import HintLines

HINTS = ("capab", "sm_", "major")


def _brute(lines: list[str], first: int, last: int) -> bool:
    text = "\n".join(lines[first - 1 : last]).lower() if first else ""
    return any(h in text for h in HINTS)


@pytest.mark.parametrize(
    "lines",
    [
        ["x = 1", "Major = cap[0]", "", "y = SM_90", "z = 2", "get_device_CAPABILITY()"],
        ["İstanbul = 1", "major = 2", "x = 3"],  # 'İ'.lower() is two characters long
        ["", "", ""],
        ["capab" * 3],
    ],
)
def test_every_span_answers_as_the_joined_text_did(lines: list[str]) -> None:
    hint_lines = HintLines(lines, HINTS)
    for first in range(0, len(lines) + 2):
        for last in range(first, len(lines) + 3):
            assert hint_lines.any_in(first, last) == _brute(lines, first, last), (first, last)


@pytest.mark.parametrize(
    "text",
    [
        "x = 1\nMajor = cap[0]\r\n\ry = SM_90\x0bz\x0cget_device_CAPABILITY()\x1cmaj\x1dor\x1e",
        "İstanbul = 1\nmajor = 2\nx = 3",  # non-ASCII: searched here, not in C
        "\ufeffmajor\n",  # a BOM the caller did not strip
        "",
    ],
)
def test_the_bytes_of_the_text_give_the_same_lines(text: str) -> None:
    """With the bytes the lines were split from (the C scan where built), the same lines."""
    lines = text.splitlines()
    expected = HintLines(lines, HINTS)._lines
    assert HintLines(lines, HINTS, text.encode())._lines == expected
    assert expected == [i for i, line in enumerate(lines) if any(h in line.lower() for h in HINTS)]
