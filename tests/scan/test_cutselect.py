"""The whole statement cut in C (`_cutscan.select`) against its Python reference
(`chunks._select_python`): the same text, byte for byte, and the same `ends`, on every input."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capgap.reading import chunks

try:
    from capgap.reading import _cutscan
except ImportError:
    _cutscan = None
pytestmark = pytest.mark.skipif(_cutscan is None, reason="capgap.reading._cutscan is not built")

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted(p for top in ("src", "tests", "benchmarks") for p in (ROOT / top).rglob("*.py"))


def reference(data: bytes) -> tuple[bytes, dict[int, int]]:
    cut = chunks._select_python(data)
    return cut.text, cut.ends


def same(data: bytes) -> tuple[bytes, dict[int, int]]:
    """The C cut of `data`, asserted equal to the reference's (and to what `chunks.select` answers)."""
    assert _cutscan is not None
    got = _cutscan.select(data)
    assert got == reference(data)
    assert chunks.select(data) == chunks.Cut(*got)
    return got


def lines(*rows: str, indent: str = "") -> str:
    return "".join(f"{indent}{row}\n" for row in rows)


HIT = "if torch.cuda.get_device_capability()[0] >= 9:"
FILLER = [f"x{k} = compute({k})" for k in range(45)]
BIG_CLASS = "class Big(Base):\n" + lines("MiB = 1024", HIT, "    y = 1", *FILLER, indent="    ")
BIG_DEF = "def big(a, b):\n" + lines(
    "props = get()",
    "ok = props.major >= 9",
    "if ok is None:",
    "    pass",
    "return ok",
    *FILLER,
    indent="    ",
)
BIG_FOR = "for i in range(3):\n" + lines(*FILLER[:14], "v = major >= 9", indent="    ")


def _edge_cases() -> list[bytes]:
    cases = [
        "",
        "x",
        "\n",
        "major >= 9",  # one line, no newline
        "x = 1\n" * 3 + "major >= 9",
        "y = " + "major + " * 3000 + "1\n",  # one long line full of hits
        BIG_CLASS,
        BIG_DEF,
        BIG_FOR,
        "MiB = 1024 * 1024\nSIZES = {9: 228 * MiB, 10: 100 * MiB}\n",  # a table reads MiB
        "@dec\n@other(1)\n" + BIG_DEF,
        "@skipIf(major < 9)\n" + BIG_DEF,  # a decorator with a hit: the def is read whole
        "@dataclass\n" + BIG_CLASS,
        BIG_DEF.replace("def big", "async def big"),
        "def big(\n    a,\n    b,\n) -> int:\n" + BIG_DEF.split("\n", 1)[1],  # a multi-line header
        "class Big(\n    Base,\n):  # note\n" + BIG_CLASS.split("\n", 1)[1],
        BIG_CLASS.replace("class Big(Base):", "class Big(Base):  # a: b"),
        "class Small:\n" + lines(HIT, "    y = 1", *FILLER[:30], indent="    "),  # under the class threshold
        "def small():\n" + lines("ok = major >= 9", *FILLER[:25], indent="    "),  # under the def threshold
        # named for an arch, its body names none: whole up to 400 lines, cut past them
        "def kernel_sm90(a):\n" + lines(*(FILLER * 8)[:300], indent="    "),
        "@cute.kernel\ndef kernel_sm90(a):\n" + lines('"""doc"""', *(FILLER * 10)[:420], indent="    "),
        "def kernel_sm90(a):\n" + lines(*(FILLER * 10)[:420], "return a", indent="    "),
        "for i in x:\n" + lines("v = major >= 9", *FILLER[:10], indent="    "),  # under the block threshold
        "if a:\n"
        + lines(*FILLER[:14], "v = major >= 9", indent="    ")
        + "elif b:\n"
        + lines("c = 1", indent="    ")
        + "else:\n"
        + lines(*FILLER[:13], indent="    "),
        "if major >= 9:\n" + lines(*FILLER[:20], indent="    "),  # a gate: kept whole
        "try:\n"
        + lines(*FILLER[:14], "v = major >= 9", indent="    ")
        + "except ImportError:\n    v = None\n"
        "finally:\n" + lines(*FILLER[:3], indent="    "),
        "while run:\n" + lines(*FILLER[:14], "v = major >= 9", indent="    "),
        "with ctx() as c:  # c\n" + lines(*FILLER[:14], "v = major >= 9", indent="    "),
        "async with ctx():\n" + lines(*FILLER[:14], "v = major >= 9", indent="    "),
        "async for i in x:\n" + lines(*FILLER[:14], "v = major >= 9", indent="    "),
        "# capability table\n# sm_90: hopper\nSIZES = {9: 1}\n",  # comments above a kept statement
        "x = 1\n# one\n# two\n# three\n# four\nSIZES = {9: 1}\n",
        '"""\ndef f():\n    major >= 9\n"""\nx = 1\n',  # code inside a triple-quoted string
        "X = '''\nclass A:\n''' \nv = major >= 9\n",
        "if a:\r\n" + "".join(f"    x{k} = {k}\r\n" for k in range(14)) + "    v = major >= 9\r\n",  # CRLF
        "if a:\n" + lines(*FILLER[:14], "v = major >= 9", indent="\t") + "else:\n\tpass\n",  # tabs
        "class A:\n"
        + lines("class B:", indent="    ")
        + lines("def f(self):", indent="        ")
        + lines("for i in x:", indent="            ")
        + lines(*FILLER[:15], "v = major >= 9", "if q:", indent="                ")
        + lines(*FILLER[:15], "w = major", indent="                    ")
        + lines(*FILLER[:30], indent="            "),  # deeply nested
        "@dec\nfoo(\n    a,\n):\n    v = major >= 9\n"
        + "    y\n" * 40
        + "class A:\n    pass\n",  # reference raises
    ]
    out = [c.encode() for c in cases]
    out.append(b"x = 1\n\xff\xfe = major >= 9\n\x00\n")
    out.append(BIG_DEF.encode().rstrip(b"\n"))  # no trailing newline
    return out


EDGE_CASES = _edge_cases()


@pytest.mark.parametrize("data", EDGE_CASES, ids=range(len(EDGE_CASES)))
def test_hand_written_edge_cases(data: bytes) -> None:
    assert _cutscan is not None
    if _cutscan.select(data) is None:  # where the reference raises: chunks.select raises the same
        with pytest.raises(AttributeError):
            chunks._select_python(data)
        with pytest.raises(AttributeError):
            chunks.select(data)
        return
    same(data)


def test_the_edge_cases_exercise_every_way_of_cutting() -> None:
    """Not only equal: the cases shorten classes, defs and blocks, keep whole, blank and `pass`."""
    cuts = [(d, *reference(d)) for d in EDGE_CASES if not d.startswith(b"@dec\nfoo(")]
    assert sum(bool(ends) for _, _, ends in cuts) >= 15
    assert any(text.count(b"pass") > d.count(b"pass") for d, text, _ in cuts)  # a clause left with `pass`
    assert same(BIG_FOR.encode()) == (
        b"for i in range(3):\n" + b"\n" * 14 + b"    v = major >= 9\n",
        {1: 16},
    )
    text, ends = same(BIG_CLASS.encode())
    assert text.splitlines()[:5] == [b"class Big(Base):", b"", b"    " + HIT.encode(), b"        y = 1", b""]
    assert ends == {1: 49}
    assert same(b"") == (b"", {})


def test_nesting_deeper_than_the_c_walk_goes_to_the_reference() -> None:
    assert _cutscan is not None
    data = b"".join(b" " * k + b"if x:\n" for k in range(120)) + b" " * 120 + b"v = major >= 9\n" * 13
    assert _cutscan.select(data) is None
    assert chunks.select(data) == chunks._select_python(data)


def test_wrong_types() -> None:
    assert _cutscan is not None
    with pytest.raises(TypeError):
        _cutscan.select("text")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _cutscan.select(bytearray(b"x"))  # type: ignore[arg-type]


def test_every_source_file_of_the_project_cuts_the_same() -> None:
    assert len(CORPUS) > 50
    shortened = 0
    for path in CORPUS:
        data = path.read_bytes()
        shortened += bool(same(data)[1])
    assert shortened > 0


# ---- generated sources: Python-like statements nested in blocks over and under the thresholds ----

HEADERS = [
    "class C(Base):",
    "class D:  # c: d",
    "def f(a, b):",
    "async def g(x) -> int:",
    "def k(x):  # note",
    "def h(\n{i}    a,\n{i}):",
    "class E(\n{i}    X,\n{i}):",
    "if x:",
    "if major >= 9:",
    "while y:",
    "for i in z:",
    "with open(f) as h:",
    "try:",
    "async for q in w:",
    "async with m:",
    "match x:",
]
CLAUSES = ["elif y:", "elif major > 9:", "else:", "except E:", "except:", "finally:"]
WORDS = [
    "major >= 9",
    "torch.cuda.get_device_capability()[0] >= 9",
    '{"sm_90": 1}',
    "arch == 'sm_90'",
    "hopper",
    "capability",
    "MiB * 4",
    "x",
    "y",
    "pass",
    "1",
]
NAMES = ["x", "MiB", "props", "self.x", "cls", "self", "y", "major", "sizes"]
SIMPLE = st.one_of(
    st.builds(
        "{}{}{}".format,
        st.sampled_from(NAMES),
        st.sampled_from([" = ", ": int = ", " == ", " += ", "=", ": T=", " := "]),
        st.sampled_from(WORDS + NAMES),
    ),
    st.builds("return {}".format, st.sampled_from(WORDS)),
    st.builds("# {}".format, st.sampled_from(WORDS)),
    st.sampled_from(WORDS),
    st.just(""),
    st.just('"""\ndef q():\n    major >= 9\n"""'),
    st.just("x = (\n    major >= 9,\n)"),
)


@st.composite
def statement(draw: st.DrawFn, indent: str, depth: int) -> str:
    if depth == 0 or not draw(st.booleans()):
        return "".join(f"{indent}{row}\n" for row in draw(SIMPLE).split("\n"))
    out = ""
    if draw(st.integers(0, 3)) == 0:
        out += indent + draw(st.sampled_from(["@dec", "@skipIf(major < 9)", "@property"])) + "\n"
    header = draw(st.sampled_from(HEADERS)).format(i=indent)
    inner = indent + draw(st.sampled_from(["    ", "  ", "\t"]))
    body = draw(st.lists(statement(inner, depth - 1), min_size=1, max_size=4))
    filler = "".join(f"{inner}z{k} = {k}\n" for k in range(draw(st.sampled_from([0, 5, 12, 14, 31, 42]))))
    out += indent + header + "\n" + "".join(body[:1]) + filler + "".join(body[1:])
    if header.startswith(("if", "try")):
        for clause in draw(st.lists(st.sampled_from(CLAUSES), max_size=2)):
            rows = draw(st.lists(statement(inner, depth - 1), min_size=1, max_size=2))
            out += indent + clause + "\n" + "".join(rows) + filler
    return out


@st.composite
def source(draw: st.DrawFn) -> bytes:
    text = "".join(draw(st.lists(statement("", 3), min_size=1, max_size=5))).encode()
    way = draw(st.sampled_from(["as is", "crlf", "no newline", "cut"]))
    if way == "crlf":
        return text.replace(b"\n", b"\r\n")
    if way == "no newline":
        return text.rstrip(b"\n")
    if way == "cut":
        return text[: draw(st.integers(0, len(text)))]
    return text


FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@FUZZ
@given(data=source())
def test_generated_sources_cut_the_same(data: bytes) -> None:
    same(data)


FRAGMENTS = [
    *(bytes([c]) for c in b"acdefilmnorstwxy09\"'#\n\r\t :,()@_=\\)"),
    *b"if elif else except finally try for while with async def class return pass major".split(),
    *(b"    ", b"\n    ", b"\n        ", b'"""', b"'''", b"# ", b"):", b"sm_90", b"MiB = 1\n"),
    *(
        b"\n" + b"x\n" * 13,
        b"\n" + b"    y\n" * 31,
        b"\n" + b"    y\n" * 41,
    ),  # line counts around the thresholds
]


@FUZZ
@given(
    data=st.one_of(st.lists(st.sampled_from(FRAGMENTS), max_size=80).map(b"".join), st.binary(max_size=200))
)
def test_fragments_and_random_bytes_cut_the_same(data: bytes) -> None:
    assert _cutscan is not None
    if _cutscan.select(data) is None:
        with pytest.raises((AttributeError, RecursionError)):
            chunks._select_python(data)
        return
    same(data)


def test_select_leaks_no_references() -> None:
    assert _cutscan is not None
    data = BIG_CLASS.encode()
    _cutscan.select(data)
    before = sys.getrefcount(data)
    for _ in range(50):
        _cutscan.select(data)
    assert sys.getrefcount(data) == before
