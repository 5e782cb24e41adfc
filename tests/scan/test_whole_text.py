"""The file's own text as the extractor reads it: joined and lowercased without splitting or
str.lower where they give the same answer, and line-bound regexes searched only on their lines."""

from __future__ import annotations

import pytest

from capgap.judging import extract, remarks
from capgap.reading.fileparse import _Whole
from capgap.reading.hintlines import holds_any, line_matches

TEXTS = [
    "",
    "\n",
    "a\n\nb\n\n",
    "x = 1",
    "a\r\nb\rc\x0bd\x0ce\x1cf\x1dg\x1eh\x85i\u2028j\u2029k\n",  # every break splitlines knows
    "# tcgen05 \u212a\u0130 é\nfrom .x import (a, b)\n",
]


@pytest.mark.parametrize("text", TEXTS)
def test_joined_is_the_lines_joined(text: str) -> None:
    whole = _Whole(text, {}, text.encode())
    assert whole.joined() == "\n".join(text.splitlines())


@pytest.mark.parametrize("word", ["tcgen05", "multimem", "nvls", "multicast", "warp-group"])
@pytest.mark.parametrize(
    "text", ["TCGEN05 and MultiMem", "\u212a", "mult\u0130mem", "nvls\u0130", "é warp-group", "plain"]
)
def test_lowered_bytes_hold_an_ascii_word_as_the_lowered_text_does(text: str, word: str) -> None:
    """Kelvin and dotted I are what str.lower makes ASCII letters of ('k', 'i' + a combining dot)."""
    lowered = _Whole(text, {}, text.encode()).lowered()
    assert isinstance(lowered, bytes)
    assert holds_any(lowered, (word,)) == (word in text.lower())
    assert holds_any(lowered, (word, "absent")) == holds_any(text.lower(), (word, "absent"))
    assert remarks.may_state(lowered) == remarks.may_state(text.lower())


def test_a_line_bound_regex_finds_on_its_lines_what_it_finds_in_the_text() -> None:
    text = (
        'a = "k.cu"\nb = 1\nsrc = ["x/{n}_kernel.cu", \'y.cuh\', "z.cu"]  # .cu\n'
        "from .sib import (p, q)\nfrom . import r\n  from .t import s\n.cu"
    )
    for pattern, literal in ((extract._SOURCE_NAME, ".cu"), (extract._SIBLING_IMPORT, "from")):
        found = [(m.span(), m.groups()) for m in extract._on_lines_with(pattern, text, literal)]
        assert found == [(m.span(), m.groups()) for m in pattern.finditer(text)]
        assert found


@pytest.mark.parametrize(
    "text",
    [
        "from cutlass.cute.nvgpu import tcgen05\nx = 1\n  import tmem_alloc as t\nFrom a import UMMA_x\n",
        "\ufefffrom x import wgmma\n",  # a byte-order mark before the first line
        "é = 1\nfrom y import multimem_st\n# from z import warpgroup\n",
        "x = 'tmem'\nimport a, tcgen05",
        "from a import mult\u0131mem\n",  # the dotless i: the regex itself
        '"""\n    from tcgen05 to wgmma, the kernels\n"""\nfrom_tmem = 1\nimporttmem\n\timport\tumma_x\n',
    ],
)
def test_import_lines_are_those_the_regex_finds(text: str) -> None:
    whole = _Whole(text.removeprefix("\ufeff"), {}, text.encode())
    joined, low = whole.joined(), whole.lowered()
    found = [(m.span(), m[1]) for m in extract._import_lines(joined, low)]
    assert found == [(m.span(), m[1]) for m in extract._NEED_IMPORT.finditer(joined)]
    assert found


@pytest.mark.parametrize("text", ["", "#", "#a\n#b", "x\n#c\n y #d\n#e", "\n#", "#x\n\n#y\n"])
def test_top_comments_are_those_the_regex_finds(text: str) -> None:
    assert [m.span() for m in remarks._top_comments(text)] == [
        m.span() for m in remarks._TOP_COMMENT.finditer(text)
    ]


def test_a_regex_led_by_a_caret_is_matched_at_the_lines_that_hold_its_word_as_finditer_would() -> None:
    from capgap.judging import callees

    text = (
        "import a.b as c, d\nx = 'import y'\nfrom .p import (q,\n  import_r as s)\n"
        "   import t\nfrom u import v  # import\nimport"
    )
    for pattern in (callees._FROM, callees._IMPORT):
        found = [(m.span(), m.groups()) for m in line_matches(pattern, text, "import")]
        assert found == [(m.span(), m.groups()) for m in pattern.finditer(text)]


def test_feature_tests_are_found_on_the_lines_with_a_colon_as_in_the_whole_text() -> None:
    text = (
        "if handle.multicast_ptr == 0:\n    x = 1\n  elif not has_NVLS(): # off\nIF mnnvl else y:\n"
        "if multicast\nx = {'nvswitch': 1}\n\tif a and nvswitch_ok(b) :  \nif nvls: pass"
    )
    found = [(m.span(), m[0]) for m in line_matches(extract._FEATURE_TEST, text, ":")]
    assert found == [(m.span(), m[0]) for m in extract._FEATURE_TEST.finditer(text)]
    assert len(found) == 4


@pytest.mark.parametrize(
    "text",
    [
        "needs SM100", "sm_90a only", "compute capability 9.0", "10.x and up", "Hopper", "on H20",
        "B200 or GB300", "plain words", "", "smem bytes", "\u017fm100", "compute capabilities of (8",
    ],
)  # fmt: skip
def test_the_plain_test_before_the_arch_word_regex_passes_every_text_it_matches(text: str) -> None:
    from capgap.judging import prose

    if prose.ARCH_WORD.search(text):
        assert prose.may_name_arch(text)


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("if use_fp8:", "use_fp8"), ("if self.use_fp8:", "use_fp8"), ("x = use_fp8_x", "use_fp8"),
        ("é_use", "use"), ("٣use", "use"), ("use٣ and use", "use"), ("a.b if a.b else 0", "a.b"), ("", "a"),
    ],
)  # fmt: skip
def test_a_whole_name_is_found_where_the_flag_regex_found_it(line: str, name: str) -> None:
    import re

    want = re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", line) is not None
    assert extract._names_whole(line, name) is want
