"""HintLines answers exactly what joining and searching a node's lines answered."""

from __future__ import annotations

import pytest

from capgap.scan.hintlines import HintLines

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
