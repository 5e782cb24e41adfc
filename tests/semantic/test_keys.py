"""Key styles: every engine spelling read as an arch and written back in the same style."""

from __future__ import annotations

import pytest

from capgap.arch import parse_arch
from capgap.semantic.keys import arch_of_key, format_key, key_style_of, table_style


@pytest.mark.parametrize(
    "key, style, cc",
    [
        ("12", "major-int", "12.0"),
        ("120", "number-int", "12.0"),
        ("103", "number-int", "10.3"),
        ('"12.0"', "dotted-str", "12.0"),
        ("'10.3'", "dotted-str", "10.3"),
        ('"sm_120"', "sm-str", "12.0"),
        ("'sm90a'", "sm-str", "9.0"),
        ("(12, 0)", "tuple", "12.0"),
        ("(10,3)", "tuple", "10.3"),
    ],
)
def test_key_style_and_arch(key: str, style: str, cc: str) -> None:
    assert key_style_of(key) == style
    spec = arch_of_key(key)
    assert spec is not None and spec.cc == cc


@pytest.mark.parametrize("key", ["2", "64", "'default'", "(2, 4, 8)", "True", "x", '"13.0"', "None"])
def test_non_arch_keys(key: str) -> None:
    assert key_style_of(key) is None


@pytest.mark.parametrize(
    "style, template, expected",
    [
        ("major-int", None, "12"),
        ("number-int", None, "120"),
        ("dotted-str", "'9.0'", "'12.0'"),
        ("dotted-str", None, '"12.0"'),
        ("sm-str", '"sm90"', '"sm120"'),
        ("sm-str", '"sm_90"', '"sm_120"'),
        ("tuple", None, "(12, 0)"),
    ],
)
def test_format_key(style: str, template: str | None, expected: str) -> None:
    assert format_key(parse_arch("12.0"), style, template) == expected


def test_table_style_needs_one_style_of_arch_keys() -> None:
    assert table_style(["9", "10"]) == "major-int"
    assert table_style(['"9.0"', "10"]) is None
    assert table_style(["2", "4", "8"]) is None  # world sizes, not archs
