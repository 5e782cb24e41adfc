"""Before/after pairs for the upsert transform: layout, comments and key style kept."""

from __future__ import annotations

import textwrap

import pytest

from capgap.arch import parse_arch
from capgap.semantic.upsert import INSERTED, KEPT_UPSTREAM, REPLACED, SAME, upsert_source

NOTE = "copied from 10 (cc 10.0) by capgap: not measured on this GPU"


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


PAIRS = [
    pytest.param(
        "Cfg._WORLD_SIZES_MULTIMEM",
        "12.0",
        "[6, 8]",
        None,
        """
        class Cfg:
            _WORLD_SIZES_MULTIMEM = {
                9: [4, 6, 8],
                10: [6, 8],
            }
        """,
        """
        class Cfg:
            _WORLD_SIZES_MULTIMEM = {
                9: [4, 6, 8],
                10: [6, 8],
                12: [6, 8],
            }
        """,
        id="class-attribute-trailing-comma",
    ),
    pytest.param(
        "SIZES",
        "12.0",
        "{\n        2: 64 * MiB,  # 64 MB\n    }",
        NOTE,
        """
        MiB = 1024 * 1024
        SIZES = {
            9: {
                2: 64 * MiB,  # 64 MB
            },
            10: {
                2: 32 * MiB,
            },
        }
        """,
        f"""
        MiB = 1024 * 1024
        SIZES = {{
            9: {{
                2: 64 * MiB,  # 64 MB
            }},
            10: {{
                2: 32 * MiB,
            }},
            12: {{  # {NOTE}
                2: 64 * MiB,  # 64 MB
            }},
        }}
        """,
        id="nested-value-expression-comment-after-brace",
    ),
    pytest.param(
        "X",
        "12.0",
        "3",
        "new",
        """
        X = {
            9: 1,  # hopper
            # datacenter blackwell
            10: 2
        }
        """,
        """
        X = {
            9: 1,  # hopper
            # datacenter blackwell
            10: 2,
            12: 3  # new
        }
        """,
        id="no-trailing-comma-keeps-none",
    ),
    pytest.param(
        "X",
        "10.0",
        "5",
        "new",
        """
        X = {
            9: 1,  # hopper
            # rtx blackwell
            12: 2,  # rtx
        }
        """,
        """
        X = {
            9: 1,  # hopper
            10: 5,  # new
            # rtx blackwell
            12: 2,  # rtx
        }
        """,
        id="between-siblings-comment-lines-stay-with-next",
    ),
    pytest.param(
        "X",
        "8.0",
        "0",
        None,
        """
        X = {
            # hopper first
            9: 1,
        }
        """,
        """
        X = {
            8: 0,
            # hopper first
            9: 1,
        }
        """,
        id="lowest-key-goes-first",
    ),
    pytest.param(
        "T",
        "12.0",
        "3",
        NOTE,
        """
        T = {'9.0': 1, '10.0': 2}
        """,
        f"""
        T = {{'9.0': 1, '10.0': 2, '12.0': 3}}  # {NOTE}
        """,
        id="one-line-dotted-str-single-quotes",
    ),
    pytest.param(
        "f.T",
        "12.0",
        "7",
        None,
        """
        def f():
            T = {
                (9, 0): 1,
                (10, 0): 2,
                (10, 3): 3,
            }
            return T
        """,
        """
        def f():
            T = {
                (9, 0): 1,
                (10, 0): 2,
                (10, 3): 3,
                (12, 0): 7,
            }
            return T
        """,
        id="function-local-tuple-keys",
    ),
    pytest.param(
        "A.B.T",
        "12.0",
        '"x"',
        None,
        """
        class A:
            class B:
                T: dict[str, str] = {"sm_90": "a", "sm_100": "b"}
        T = {"sm_90": "other"}
        """,
        """
        class A:
            class B:
                T: dict[str, str] = {"sm_90": "a", "sm_100": "b", "sm_120": "x"}
        T = {"sm_90": "other"}
        """,
        id="annotated-nested-class-sm-str-other-scope-untouched",
    ),
    pytest.param(
        "N",
        "12.0",
        "1",
        None,
        """
        N = {90: 0, 100: 1}  # sm numbers
        """,
        """
        N = {90: 0, 100: 1, 120: 1}  # sm numbers
        """,
        id="number-int-existing-line-comment-kept",
    ),
    pytest.param(
        "D", "12.0", "3", None,
        """
        D = {
            10: 2,
            9: 1,
        }
        """,
        """
        D = {
            12: 3,
            10: 2,
            9: 1,
        }
        """,
        id="descending-stays-descending",
    ),
    pytest.param(
        "U", "12.0", "P121", None,
        """
        U = {
            (10, 3): P103,
            (10, 0): P100,
            (9, 0): P90,
            (12, 1): P121,
        }
        """,
        """
        U = {
            (10, 3): P103,
            (10, 0): P100,
            (9, 0): P90,
            (12, 0): P121,
            (12, 1): P121,
        }
        """,
        id="no-order-next-to-the-closest-arch",
    ),
    pytest.param(
        "X",
        "12.0",
        "3",
        None,
        """
        try:
            X = {
              9: 1,
              10: 2,
            }
        except ImportError:
            X = {}
        """,
        """
        try:
            X = {
              9: 1,
              10: 2,
              12: 3,
            }
        except ImportError:
            X = {12: 3}
        """,
        id="two-space-indent-in-try-and-empty-fallback",
    ),
]


@pytest.mark.parametrize("symbol, arch, value, note, before, after", PAIRS)
def test_upsert_before_after(
    symbol: str, arch: str, value: str, note: str | None, before: str, after: str
) -> None:
    out, changes = upsert_source(_d(before), symbol, parse_arch(arch), value, comment=note)
    assert out == _d(after)
    assert changes and all(c.action == INSERTED for c in changes)


@pytest.mark.parametrize("symbol, arch, value, note, before, after", PAIRS)
def test_upsert_twice_is_once(
    symbol: str, arch: str, value: str, note: str | None, before: str, after: str
) -> None:
    once, _ = upsert_source(_d(before), symbol, parse_arch(arch), value, comment=note)
    twice, changes = upsert_source(once, symbol, parse_arch(arch), value, comment=note)
    assert twice == once
    assert {c.action for c in changes} == {SAME}


EXISTING = _d("""
    X = {
        9: [4, 6, 8],
        12: [4],  # upstream's own
    }
""")


def test_existing_different_entry_kept_when_upstream_preferred() -> None:
    out, changes = upsert_source(EXISTING, "X", parse_arch("12.0"), "[6, 8]", prefer="upstream")
    assert out == EXISTING
    got = [(c.action, c.key, c.value, c.previous) for c in changes]
    assert got == [(KEPT_UPSTREAM, "12", "[4]", "[6, 8]")]


def test_existing_different_entry_replaced_when_ours_preferred() -> None:
    out, changes = upsert_source(EXISTING, "X", parse_arch("12.0"), "[6, 8]", prefer="ours")
    assert out == EXISTING.replace("12: [4],", "12: [6, 8],")
    assert [(c.action, c.previous) for c in changes] == [(REPLACED, "[4]")]


def test_equal_value_in_other_formatting_is_same() -> None:
    out, changes = upsert_source(EXISTING, "X", parse_arch("9.0"), "[4,6,8]")
    assert out == EXISTING
    assert [c.action for c in changes] == [SAME]


def test_major_int_table_treats_12_1_as_slot_12() -> None:
    out, changes = upsert_source(EXISTING, "X", parse_arch("12.1"), "[4]")
    assert out == EXISTING
    assert [c.action for c in changes] == [SAME]


def test_unknown_symbol_changes_nothing() -> None:
    out, changes = upsert_source(EXISTING, "Y", parse_arch("12.0"), "[4]")
    assert (out, changes) == (EXISTING, [])


def test_self_attribute_in_method_is_the_class_table() -> None:
    before = _d("""
        class Comm:
            def __init__(self):
                self.sizes = {
                    9: 1,
                }
    """)
    out, changes = upsert_source(before, "Comm.sizes", parse_arch("12.0"), "2")
    assert out == before.replace("            9: 1,\n", "            9: 1,\n            12: 2,\n")
    assert [c.action for c in changes] == [INSERTED]
