"""The C byte scans of the statement cut (capgap.reading._cutscan) against their Python reference:
the same lists for every input, and the same cut of every file either way."""

from __future__ import annotations

import pickle
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capgap.judging import builds, extract
from capgap.reading import chunks, fileparse
from capgap.reading.hintlines import HintLines
from capgap.reading.prefilter import _NARROWED_NAMES, hit_offsets, name_hit_counts, worth_parsing
from capgap.reading.tokens import CAP_TOKENS, CC_KEY_TOKENS

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted(p for top in ("src", "tests") for p in (ROOT / top).rglob("*.py"))
INDENTS = (b"", b" ", b"    ", b"\t", b"        ")


def _can_build() -> bool:
    has_compiler = any(shutil.which(cc) for cc in ("cc", "gcc", "clang"))
    return has_compiler and (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file()


def test_the_extension_is_built_wherever_a_compiler_is_there() -> None:
    if not _can_build():
        pytest.skip("no C compiler or no Python headers here: capgap runs on its Python reference")
    from capgap.reading import _cutscan  # noqa: F401 - a missing build fails here

    assert chunks._cutscan is not None, "a stale build of older source: rebuild with `pip install -e .`"


try:
    from capgap.reading import _cutscan
except ImportError:
    _cutscan = None
needs_ext = pytest.mark.skipif(_cutscan is None, reason="capgap.reading._cutscan is not built")


def ref_quotes(data: bytes) -> list[int]:
    return sorted(m.start() for q in chunks._QUOTES for m in q.finditer(data))


def ref_code_hits(data: bytes, quotes: list[int]) -> list[int]:
    return chunks._code_hits(data, hit_offsets(data, names=True), quotes)


def _same_everywhere(data: bytes) -> None:
    """All three scans agree with the reference on `data` (starts: several indents and ranges)."""
    assert _cutscan is not None
    quotes = ref_quotes(data)
    assert _cutscan.quotes(data) == quotes
    assert _cutscan.code_hits(data, quotes) == ref_code_hits(data, quotes)
    n = len(data)
    bounds = [(0, n), (0, n + 5), (-4, n), (1, n - 1), (0, 0), (0, 1), (n // 2, n), (0, n // 2)]
    for indent in INDENTS:
        for begin, end in bounds:
            args = (data, indent, begin, end, quotes)
            assert _cutscan.starts(*args) == chunks._starts(*args), (indent, begin, end)


EDGE_CASES = [
    b"",
    b"x",
    b"\n",
    b"import os\nx = 1\n",  # a statement at offset 0
    b"if a:\r\n    b = 1\r\nelse:\r\n    c = 2\r\n",  # CRLF
    b"if a:\n\tb\n\tc\nelif d:\n\te\n",  # tabs
    b"try:\n    x\nexcept ValueError:\n    y\nfinally:\n    z\n",
    b"match x:\n    case 1:\n        y\n    case(2):\n        z\ncase_x = 3\nelse_ = 1\n",
    b"x = 1\nelse",  # a continuation keyword at the very end
    b"x = 1\nelse:",
    b"x = 1\nelsewhere = 2\nfinally_ = 3\nexcept",
    b"@dec\ndef f():\n    pass\n@a\n@b\nclass C:\n    @property\n    def p(self):\n        pass\n",
    b'"""doc\nmajor = 9\n"""\nmajor = 9\n',
    b"'''doc\narch\n'''\ncc = 1\n",
    b'""""""\n"""" x\n""""\'\'\'\'\'',  # odd quote runs
    b"x = \"\"\"a'''b\"\"\"\ny = '''\"\"\"'''\n",
    b"x = 1  # major gate\n# sm_90\ny = major\n",
    b"9: 1\n10: 2\n{9: 3, 10: 4}\ny[9: ]\n19: 5\n",
    b'K = {"sm_90": 1, \'sm1000a\': 2, "sm_100a"  :3, "sm100f":\n4, "sm_1000": 5, "sm9": 6}\n',
    # `\s` of a bytes regex: ASCII spaces only
    b'{"sm_90"\t:1, "sm_80"\r\n:2, "sm_70"\x0b\x0c:3, "sm_60"\x1c:4, "sm_50"\xa0:5}',
    b"x = sm_9",
    b"x = sm_90",
    b"x = sm",
    b"SM_90 = ARCH\nMajor = CC_X\nAmpere Hopper BLACKWELL Capability GENCODE CUDA_ARCH\n",
    b"lackwellackwell blackwell\nsm_versionsm_version\n",
    b"cute.arch.sync()\ngpu_arch = arch_list\narch.x = cc.y\nnum_sm = sm.z\nsmx\nsm_\n",
    b"\xc3\xa9major = 1\n\xff\xfesm_90 = \xe2\x80\x99arch\n",
    b"D = {\"9.0\": 1, '8.0': 2, (9, 0): 3}\n",
    b"    x = 1\n    y = 2\nz = 3\n",  # the first line indented
    b"\n\n\nx\n",
    b")\n]\n}\n#\n \n\tx\nx\n",
    # names that count only where a test could read them (prefilter.name_hit_counts)
    b"arch: ModelArchConfig,\nhidden = arch.ffn_hidden_size\nif arch >= 90:\n    major = cc[0]\n",
    b"x = f(device_arch)\nx = device_arch\nf(arch=1)\na, b: T = g(sm)\nx =(cc)\n",
    b"get_arch(\nis_arch_support_pdl (\narch\n(\narch_arch_arch_\r\n\x0b(\nsm\n",
    b"major\r\narch in \r\narch in\r\na = b <\r cc\r\n# major < 9\n'''arch == 9'''\nx.get(sm)",
]


@needs_ext
@pytest.mark.parametrize("data", EDGE_CASES)
def test_hand_written_edge_cases(data: bytes) -> None:
    _same_everywhere(data)


@needs_ext
def test_exact_offsets_on_known_input() -> None:
    """Not only equal to the reference: the values themselves, so the reference stays honest too."""
    assert _cutscan is not None
    assert _cutscan.quotes(b'""""""') == [0, 3]
    assert _cutscan.quotes(b'""""') == [0]
    assert _cutscan.quotes(b"'''\"\"\"") == [0, 3]
    assert _cutscan.code_hits(b'x = sm_90; "sm_100a" :', []) == [4, 11, 12]
    assert _cutscan.code_hits(b"lackwellackwell", []) == [0]  # finditer: no overlapping match
    assert _cutscan.code_hits(b"9: x # major", []) == [0]
    assert _cutscan.starts(b"a\nb\n  c\nelse:\nd", b"", 0, 100, []) == [0, 2, 14]
    assert _cutscan.starts(b"a\nelse", b"", 0, 6, []) == [0]  # `else` at the end: `\Z` at `end`
    assert _cutscan.starts(b"a\nelsewhere", b"", 0, 6, []) == [0]  # cut at `end`, it reads `else`
    assert _cutscan.starts(b"a\nelsewhere", b"", 0, 11, []) == [0, 2]


# `major`, `arch`, `cc`, `sm`: only on a line that compares, indexes or looks up (1), where a call
# starts at the name (2), or after the `(` of an assignment's value (3). Other names and tokens: always.
NAME_RULES = [
    *((b"arch " + op + b"x", [0]) for op in (b"<", b">", b"[", b"==", b"!=", b" in ", b".get(")),
    (b"arch", []),  # offset 0 and the end of the data
    (b"x = arch", []),
    (b"y = cfg.arch\n", []),
    (b"x = arch.size", []),  # not even a match: `arch.` is a module or an object
    (b"arch: ModelArchConfig,", []),
    (b"for arch in\tarchs", []),  # ` in ` wants a space on either side
    (b"d.GET (arch)", []),
    (b"d.GET(arch)", [6]),  # on the lowercased bytes
    (b"x = 1\nmajor\ny < 2", []),  # the operator is on another line
    (b"y < 2\nmajor", []),
    (b"major < 9", [0]),
    (b"ok = arch in \r\n", [5]),  # `\r` is part of the line
    (b"ok = arch in\r\n", []),
    (b"a = b <\r c\rarch", [11]),  # only `\n` ends a line
    (b"get_arch()", [4]),
    (b"is_arch_support_pdl (x)", [3]),
    (b"arch\n(x)", [0]),  # `\s*` crosses the newline
    (b"arch\r\n\t\x0b(x)", [0]),
    (b"arch_arch_arch_(", [0, 5, 10]),  # one word, three hits, one call
    (b"cc_major(", [0, 3]),
    (b"x = f(device_arch)", [13]),
    (b"x = device_arch", []),
    (b"f(arch=1)", []),  # a call, but no assignment: the keyword is not a test
    (b"arch = f(x)", []),  # the name comes before the `(`
    (b"x = (arch)", [5]),
    (b"x =(arch)", []),  # the value's first byte is that `(`: another one must follow
    (b"x += f(arch)", []),  # not a simple assignment
    (b"x = 1; y = f(arch)", [13]),
    (b"a, b = f(arch)", [9]),
    (b"a.b ,c.d :int= f(arch)", [17]),  # several targets, an annotation
    (b"x: Config = make(arch)", [17]),
    (b"x, = f(arch)", []),
    (b"x\n= f(sm)", []),
    (b"x = ampere_sm\n", [4]),  # `ampere` always counts, `sm` here does not
    (b"y = capability", [4, 5]),  # `capab` and the `apabilit` token
    (b"x = sm_90", [4]),  # a token, not a name
    (b"# arch < 9\n'''arch < 9'''\nx = 1", []),  # comments and strings as before
]


@pytest.mark.parametrize(("data", "expected"), NAME_RULES)
def test_names_count_only_where_a_test_could_read_them(data: bytes, expected: list[int]) -> None:
    quotes = ref_quotes(data)
    assert ref_code_hits(data, quotes) == expected
    if _cutscan is not None:
        assert _cutscan.code_hits(data, quotes) == expected


@needs_ext
def test_wrong_types_and_wild_bounds() -> None:
    assert _cutscan is not None
    with pytest.raises(TypeError):
        _cutscan.quotes("text")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _cutscan.code_hits(b"x", (1, 2))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _cutscan.code_hits(b"x", ["1"])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        _cutscan.starts(b"x", "", 0, 1, [])  # type: ignore[arg-type]
    data = b"a\nb\n"
    for begin, end in [(10, 2), (-(2**40), 2**40), (3, 3), (5, 100), (0, -1)]:
        assert _cutscan.starts(data, b"", begin, end, []) == chunks._starts(data, b"", begin, end, [])
    huge = [-(2**80), 2**80]  # beyond a C integer: only their order counts
    assert _cutscan.code_hits(b"major", huge) == ref_code_hits(b"major", huge)


# Fragments a statement cut cares about: token letters, digits, quotes, comments, layout.
FRAGMENTS = [
    *(bytes([c]) for c in b"acdeghilmoprsuvwxyzACHMS0123456789\"'#\n\r\t :,{}()[].@_\\"),
    *b"sm sm_ arch cc major ampere capab apabilit lackwell hopper device_sm rch_list cuda_arch".split(),
    *b"sm_version gencode else elif except finally case \"sm_90\" 'sm100a'".split(),
    *(b"9: ", b"10: ", b'.0": ', b".0': ", b", 0): ", b'"""', b"'''", b"    ", b"\n    ", b"\n@"),
    *(b"\xc3\xa9", b"\xff", b"\x0b", b"\x0c", b"\x1c"),
    # what decides whether a name counts: operators, calls, assignments, annotations
    *(b"<", b">", b"[", b"==", b"!=", b" in ", b".get(", b".GET(", b"=", b" = ", b"x = ", b"a, b = "),
    *(b"x: T = ", b"f(", b" (", b"\r\n", b"get_arch", b"device_arch", b"num_sm", b"cc_", b"+="),
]
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
source_bytes = st.lists(st.sampled_from(FRAGMENTS), max_size=60).map(b"".join)
# Lines of a name beside an operator, a call or an assignment, or none of them
LINE_PARTS = [
    st.sampled_from([b"", b"    ", b"\t", b" \t"]),
    st.sampled_from([b"", b"x = ", b"a, b = ", b"a.b: T = ", b"x =", b"x == ", b"x += ", b"f(", b"x = f("]),
    st.sampled_from([b"", b"(", b"cfg.", b"get_", b"gpu_", b"x", b"is_"]),
    st.sampled_from([b"arch", b"ARCH", b"major", b"cc", b"sm", b"arch_", b"cc_", b"sm_", b"smx", b"ampere"]),
    st.sampled_from([b"", b"(", b" (", b"\n(", b"_x(", b".x", b"[0]", b" >= 9", b" in s", b"=1)", b")"]),
    st.sampled_from([b"\n", b"\r\n", b"", b"  # < 9\n", b" < 9\n", b".get(k)\n"]),
]
name_lines = st.lists(st.tuples(*LINE_PARTS).map(b"".join), max_size=8).map(b"".join)


@needs_ext
@FUZZ
@given(data=st.one_of(source_bytes, name_lines, st.binary(max_size=80)))
def test_quotes_and_hits_match_the_reference(data: bytes) -> None:
    assert _cutscan is not None
    quotes = ref_quotes(data)
    assert _cutscan.quotes(data) == quotes
    assert _cutscan.code_hits(data, quotes) == ref_code_hits(data, quotes)


@needs_ext
@FUZZ
@given(
    data=source_bytes,
    indent=st.sampled_from(INDENTS),
    begin=st.integers(-3, 250),
    end=st.integers(-3, 250),
)
def test_starts_match_the_reference(data: bytes, indent: bytes, begin: int, end: int) -> None:
    assert _cutscan is not None
    quotes = ref_quotes(data)
    args = (data, indent, begin, end, quotes)
    assert _cutscan.starts(*args) == chunks._starts(*args)


@needs_ext
def test_every_source_file_of_the_project_scans_the_same() -> None:
    assert len(CORPUS) > 50
    # the corpus holds names of both kinds: those that count and those that no longer do
    verdicts = {
        name_hit_counts(low, m.start())
        for low in (p.read_bytes().lower() for p in CORPUS)
        for pattern in _NARROWED_NAMES
        for m in pattern.finditer(low)
    }
    assert verdicts == {True, False}
    for path in CORPUS:
        data = path.read_bytes()
        quotes = ref_quotes(data)
        assert _cutscan is not None
        assert _cutscan.quotes(data) == quotes, path
        assert _cutscan.code_hits(data, quotes) == ref_code_hits(data, quotes), path
        lines = [0, *(i + 1 for i, c in enumerate(data) if c == 10)]
        for indent in (b"", b"    ", b"        "):
            for begin, end in [(0, len(data)), (lines[len(lines) // 3], lines[2 * len(lines) // 3])]:
                args = (data, indent, begin, end, quotes)
                assert _cutscan.starts(*args) == chunks._starts(*args), (path, indent, begin, end)


@needs_ext
def test_the_cut_of_every_source_file_is_the_same_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    data = [p.read_bytes() for p in CORPUS]
    with_c = [chunks.select(d) for d in data]
    monkeypatch.setattr(chunks, "_cutscan", None)
    for path, d, cut in zip(CORPUS, data, with_c, strict=True):
        assert chunks.select(d) == cut, path


FAKE = "import sys, types; sys.modules['capgap.reading._cutscan'] = old = types.ModuleType('_cutscan')\n"


@pytest.mark.parametrize(
    "block",
    [
        "import sys; sys.modules['capgap.reading._cutscan'] = None\n",  # an import of it raises ImportError
        FAKE,  # a build from before the version mark
        FAKE + "old.VERSION = 0\n",  # a build of older source
    ],
    ids=["absent", "unmarked", "stale"],
)
def test_without_a_current_extension_the_python_reference_cuts(block: str) -> None:
    """A fresh interpreter where the extension is absent or an older build: chunks runs on the
    Python scans."""
    source = b"import torch\n\nX = 1\n\nif torch.cuda.get_device_capability()[0] >= 9:\n    y = 2\n"
    script = block + (
        "from capgap.reading import chunks\n"
        "assert chunks._cutscan is None\n"
        f"print(chunks.select({source!r}).text)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == repr(b"\n\n\n\nif torch.cuda.get_device_capability()[0] >= 9:\n    y = 2\n")


# ---- relevance: (prefilter.worth_parsing, any build token) in one pass ----


def ref_relevance(data: bytes) -> tuple[bool, bool]:
    return worth_parsing(data), any(tok in data for tok in builds.BUILD_TOKENS)


ALL_TOKENS = CAP_TOKENS + CC_KEY_TOKENS + builds.BUILD_TOKENS
_NOT_KEYS = b"x9: " * 64  # 64 occurrences of `9: ` that start no key: has_cc_key gives up on `9: `
RELEVANCE_CASES = [
    b"",
    b"s",
    b"sm",
    b"\x00\xff\x80sm_90\xfe",
    *(tok.lower() for tok in ALL_TOKENS),
    *(tok.upper() for tok in ALL_TOKENS),
    *(b"x" + tok[:-1] for tok in CAP_TOKENS + builds.BUILD_TOKENS),  # cut short at the end
    *(b"gENCODE", b"Arch_List", b"cuda_ARCHS", b"Generate-Code"),  # build tokens: raw bytes only
    b"9: x",
    b"10: x",
    *(bytes([c]) + tok + b"1" for tok in (b"9: ", b"10: ") for c in b" \t{,\nx(\r[:"),
    _NOT_KEYS + b"{9: 1}",  # the 65th is a key, but no longer looked at
    _NOT_KEYS[4:] + b"{9: 1}",  # the 64th
    _NOT_KEYS + b"{10: 1}",  # another token: its own 64
    _NOT_KEYS + b'{".0": 1}',
    b"x10: " * 70 + b"\n10: 1",
    b'"sm_90":',
    b"'sm1000a':",
    b"'sm100a':",
    b'"sm90":',  # `sm_` nowhere: not a key
    b'"sm90": 1, sm_',
    b'sm_x, "SM90" \t: 1',
    b'"sm9":',
    b"'sm100f'\x0b:",
    b'"sm_90"x:',
    b"sm_9",
    b"x = sm9",
    b"x = SM_9",
    b"sm_90",
    b"sm90",
    b"sm__90",
    b"ssm_90",
    b"'sm_1000':",
    b"HOPPER + gencode",
    # a build token after the answer to worth_parsing is known, at every alignment of the sampling
    *(b"hopper" + b"x" * k + tok + b"y" * m for k in range(8) for m in (0, 1) for tok in builds.BUILD_TOKENS),
    *(b"hopper" + b"x" * k + tok[:-1] for k in range(8) for tok in builds.BUILD_TOKENS),
    b"ARCH_LIST and blackwell",
]


@needs_ext
@pytest.mark.parametrize("data", RELEVANCE_CASES)
def test_relevance_edge_cases(data: bytes) -> None:
    assert _cutscan is not None
    assert _cutscan.relevance(data) == ref_relevance(data)


@needs_ext
def test_relevance_exact_answers() -> None:
    """The values themselves, so the reference stays honest too."""
    assert _cutscan is not None
    assert _cutscan.relevance(b"") == (False, False)
    assert _cutscan.relevance(_NOT_KEYS + b"{9: 1}") == (False, False)
    assert _cutscan.relevance(_NOT_KEYS[4:] + b"{9: 1}") == (True, False)
    assert _cutscan.relevance(b"9: x") == (True, False)
    assert _cutscan.relevance(b"(9: x") == (False, False)
    assert _cutscan.relevance(b'"sm9": 1') == (False, False)
    assert _cutscan.relevance(b'"sm90": 1') == (True, False)
    assert _cutscan.relevance(b"GENCODE") == (True, False)
    assert _cutscan.relevance(b"x gencode") == (True, True)
    assert _cutscan.relevance(b"ARCHITECTURES") == (False, True)
    with pytest.raises(TypeError):
        _cutscan.relevance("text")  # type: ignore[arg-type]


@needs_ext
def test_fileparse_relevance_is_the_same_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only Python files are worth parsing; a Python file's build tokens count only where it is."""
    cases = [*RELEVANCE_CASES, b"hopper gencode", b"ARCHITECTURES", b"x = 1"]
    with_c = [fileparse.relevance(data, is_python) for data in cases for is_python in (True, False)]
    monkeypatch.setattr(chunks, "_cutscan", None)
    assert with_c == [fileparse.relevance(data, is_python) for data in cases for is_python in (True, False)]
    assert fileparse.relevance(b"ARCHITECTURES", True) == (False, False)
    assert fileparse.relevance(b"ARCHITECTURES", False) == (False, True)
    assert fileparse.relevance(b"hopper gencode", True) == (True, True)
    assert fileparse.relevance(b"hopper gencode", False) == (False, True)


RELEVANCE_FRAGMENTS = [
    *(bytes([c]) for c in b"sSmM_09185afAF\"' \t\n\r\x0b{,:.()x"),
    *CAP_TOKENS,
    *CC_KEY_TOKENS,
    *builds.BUILD_TOKENS,
    *(tok.upper() for tok in ALL_TOKENS),
    *(b"sm", b"sm_", b"SM_", b'"sm', b"'sm", b"x9: ", b"\xff", b"\xc3\xa9", b"\x00"),
]
relevance_bytes = st.lists(st.sampled_from(RELEVANCE_FRAGMENTS), max_size=40).map(b"".join)
# Long runs of `9: ` / `10: ` that start no key, then maybe one that does: the 64-occurrence limit
not_key_runs = st.tuples(
    st.sampled_from([b"9: ", b"10: "]), st.integers(60, 68), st.sampled_from([b"x", b"(", b""]), st.booleans()
).map(lambda t: (t[2] + t[0]) * t[1] + (b" " + t[0] if t[3] else b""))


@needs_ext
@FUZZ
@given(data=st.one_of(relevance_bytes, not_key_runs, st.binary(max_size=60)))
def test_relevance_matches_the_reference(data: bytes) -> None:
    assert _cutscan is not None
    assert _cutscan.relevance(data) == ref_relevance(data)


@needs_ext
def test_relevance_of_every_source_file_of_the_project() -> None:
    assert _cutscan is not None
    answers = set()
    for path in CORPUS:
        data = path.read_bytes()
        answer = _cutscan.relevance(data)
        assert answer == ref_relevance(data), path
        answers.add(answer)
    assert len(answers) >= 3  # the corpus holds files of several kinds


# ---- hint_lines: HintLines over the bytes of ASCII text ----

HINT_SETS = [tuple(h.encode() for h in hs) for hs in (extract._GATE_HINTS, extract._HINTS, ("x", "a_b"))]


def ref_hint_lines(data: bytes, hints: tuple[bytes, ...]) -> list[int]:
    return HintLines(data.decode("ascii").splitlines(), tuple(h.decode() for h in hints))._lines


HINT_CASES = [
    b"",
    b"\n",
    b"sm",
    b"x\n",
    b"x = 1\nSM = 2\r\ncc\rmajor\x0bARCH\x0cblackwell\x1chopper\x1dampere\x1ecapab\n\nx",
    b"\r\n\r\n\rsm\n\n",
    b"s\nm\nc\rc\nma\r\njor\x0bar\x0cch",  # a hint across a break is no hint
    b"ssm cc\n_sm_\n.sm\n(sm\nsm1 sm9 sm8\n_cc cc_ (cc .cc\n",
    b"a\x1fsm\x85x\n",  # \x1f is no break in str.splitlines
    b"\x00sm\x00\n\tCC",
    b"aaxa_bx\nA_B",
    b"no hint here\nnor here",
]


@needs_ext
@pytest.mark.parametrize("data", HINT_CASES)
@pytest.mark.parametrize("hints", HINT_SETS)
def test_hint_lines_edge_cases(data: bytes, hints: tuple[bytes, ...]) -> None:
    assert _cutscan is not None
    if any(c >= 0x80 for c in data):
        assert _cutscan.hint_lines(data, hints) is None
    else:
        assert _cutscan.hint_lines(data, hints) == ref_hint_lines(data, hints)


@needs_ext
def test_hint_lines_exact_answers_and_refusals() -> None:
    assert _cutscan is not None
    hints = (b"sm", b"major")
    assert _cutscan.hint_lines(b"x\r\nSM\rx\x0bmaj\nor\x1emajor\n", hints) == [1, 5]
    assert _cutscan.hint_lines(b"", hints) == []
    # non-ASCII text (str.lower() may make ASCII letters of it), a BOM included: the caller searches
    assert _cutscan.hint_lines("\u0130sm\n".encode(), hints) is None
    assert _cutscan.hint_lines(b"\xef\xbb\xbfsm\n", hints) is None
    assert _cutscan.hint_lines(b"sm\n", (b"",)) is None  # an empty hint matches where no line is
    assert _cutscan.hint_lines(b"sm\n", (b"s\nm",)) is None  # a break in a hint: it may span lines
    assert _cutscan.hint_lines(b"sm\n", ("sm\xe9".encode(),)) is None
    assert _cutscan.hint_lines(b"sm\n", tuple(b"h%d" % k for k in range(65))) is None  # over 64 hints
    assert _cutscan.hint_lines(b"SM\n", (b"SM",)) == []  # the text is lowercased, the hints not
    with pytest.raises(TypeError):
        _cutscan.hint_lines(b"x", ("sm",))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _cutscan.hint_lines(b"x", [b"sm"])  # type: ignore[arg-type]


def test_hint_lines_fall_back_for_text_the_c_scan_refuses() -> None:
    text = "\u0130 = major\nx\nSM_90 = 1\n"  # 'İ'.lower() is two characters long
    lines = text.splitlines()
    assert HintLines(lines, ("major", "sm_"), text.encode())._lines == [0, 2]
    assert HintLines(lines, ("major", "sm_"))._lines == [0, 2]


HINT_FRAGMENTS = [
    *(bytes([c]) for c in b"smcajorSMCA_.(x 189\n\r\x0b\x0c\x1c\x1d\x1e\x1f\t"),
    *(h.encode() for h in extract._HINTS + extract._GATE_HINTS),
    *(h.upper().encode() for h in extract._GATE_HINTS),
    *(b"\r\n", b"\n\n", b"a_b", b"A_B"),
]
hint_text = st.lists(st.sampled_from(HINT_FRAGMENTS), max_size=50).map(b"".join)


@needs_ext
@FUZZ
@given(data=st.one_of(hint_text, st.binary(max_size=60)), hints=st.sampled_from(HINT_SETS))
def test_hint_lines_match_the_reference(data: bytes, hints: tuple[bytes, ...]) -> None:
    assert _cutscan is not None
    if data.isascii():
        assert _cutscan.hint_lines(data, hints) == ref_hint_lines(data, hints)
    else:
        assert _cutscan.hint_lines(data, hints) is None


@needs_ext
def test_hint_lines_of_every_source_file_of_the_project() -> None:
    assert _cutscan is not None
    refused = 0
    for path in CORPUS:
        data = path.read_bytes()
        for hints in HINT_SETS:
            found = _cutscan.hint_lines(data, hints)
            if found is None:
                assert any(c >= 0x80 for c in data), path
                refused += 1
            else:
                assert found == ref_hint_lines(data, hints), path
    assert refused < len(CORPUS) * len(HINT_SETS)


@needs_ext
def test_the_facts_of_every_source_file_are_the_same_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """relevance and hint_lines in place in fileparse: the same FileFacts with and without C."""
    assert _cutscan is not None
    calls = {"relevance": 0, "hint_lines": 0}

    class Counting:  # the extension, counting the calls fileparse and hintlines make
        def __getattr__(self, name: str) -> object:
            if name in calls:
                calls[name] += 1
            return getattr(_cutscan, name)

    monkeypatch.setattr(chunks, "_cutscan", Counting())
    files = [(str(p.relative_to(ROOT)), p.read_bytes()) for p in CORPUS]
    with_c = [pickle.dumps(fileparse.facts_for_bytes(rel, data, True)) for rel, data in files]
    assert sum(f != pickle.dumps(None) for f in with_c) > 10
    assert calls["relevance"] == len(files) - sum(b"\0" in data for _, data in files)
    assert calls["hint_lines"] > 20
    monkeypatch.setattr(chunks, "_cutscan", None)
    for (rel, data), facts in zip(files, with_c, strict=True):
        assert pickle.dumps(fileparse.facts_for_bytes(rel, data, True)) == facts, rel
