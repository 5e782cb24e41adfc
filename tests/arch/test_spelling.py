"""Every spelling users and engine code write for a compute capability, and the bad ones."""

from __future__ import annotations

import json

import pytest

from capgap.arch import closest, parse_arch, try_parse_arch
from capgap.errors import UsageError
from tests.cli_runner import run_cli

GOOD = [
    # spelling, (major, minor, suffix, kind)
    ("12.0", (12, 0, "", "")),
    ("12", (12, 0, "", "")),
    ("120", (12, 0, "", "")),
    ("sm_120", (12, 0, "", "sm")),
    ("sm120", (12, 0, "", "sm")),
    ("sm_120a", (12, 0, "a", "sm")),
    ("SM_120A", (12, 0, "a", "sm")),
    ("sm_100f", (10, 0, "f", "sm")),
    ("compute_120", (12, 0, "", "compute")),
    ("compute_90a", (9, 0, "a", "compute")),
    ("(12, 0)", (12, 0, "", "")),
    ("(9,0)", (9, 0, "", "")),
    ("[10, 3]", (10, 3, "", "")),
    ("9.0+PTX", (9, 0, "", "")),
    ("8.6 + PTX", (8, 6, "", "")),
    ("120a-real", (12, 0, "a", "sm")),
    ("90-virtual", (9, 0, "", "compute")),
    ('"10.3"', (10, 3, "", "")),
    ("'12.1'", (12, 1, "", "")),
    ("sm_101", (11, 0, "", "sm")),  # CUDA 13 renamed Thor's sm_101 to sm_110
    ("10.1", (11, 0, "", "")),
    ("sm_110f", (11, 0, "f", "sm")),
    ("103", (10, 3, "", "")),
    ("sm_121a", (12, 1, "a", "sm")),
    ("12.0f", (12, 0, "f", "")),
    ("90", (9, 0, "", "")),
    ("sm_88", (8, 8, "", "sm")),
    ("60", (6, 0, "", "")),
    ("  sm_89  ", (8, 9, "", "sm")),
]


@pytest.mark.parametrize(("text", "expected"), GOOD)
def test_spelling_parses(text: str, expected: tuple[int, int, str, str]) -> None:
    spec = parse_arch(text)
    assert (spec.major, spec.minor, spec.suffix, spec.kind) == expected
    assert spec.facts.cc == f"{expected[0]}.{expected[1]}"


def test_spec_renders_its_target_names() -> None:
    spec = parse_arch("sm_120a")
    assert (spec.cc, spec.number, spec.sm, str(spec)) == ("12.0", 120, "sm_120a", "12.0a")


@pytest.mark.parametrize(
    ("text", "closest_named"),
    [
        ("sm_999", "12.1"),
        ("13.0", "12.1"),
        ("sm_125", "12.1"),
        ("9.5", "9.0"),
        ("sm_84", "8.6"),
        ("banana", None),
        ("", None),
        ("sm_12x", None),
    ],
)
def test_unknown_spelling_names_the_closest(text: str, closest_named: str | None) -> None:
    assert try_parse_arch(text) is None
    with pytest.raises(UsageError) as err:
        parse_arch(text)
    message = str(err.value)
    assert message.startswith(f"unknown GPU architecture {text!r}; closest known: ")
    named = message.split("closest known: ")[1].split(", ")
    assert len(named) == 3
    if closest_named:
        assert named[0] == closest_named


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sm_80a", "'sm_80a': arch-specific 'a' targets exist from 9.0 on; closest valid: sm_80, sm_90a"),
        (
            "sm_90f",
            "'sm_90f': family 'f' targets exist from 10.0 on (CUDA 12.9); closest valid: sm_90, sm_100f",
        ),
    ],
)
def test_suffix_on_an_arch_that_lacks_it(text: str, message: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_arch(text)
    assert str(err.value) == message


def test_closest_by_number() -> None:
    assert closest("sm_87") == ["8.7", "8.6", "8.8"]


def test_cli_arch_text_and_json() -> None:
    r = run_cli("arch", "sm_120a")
    assert r.code == 0, r.err
    assert "cc 12.0 (sm_120)" in r.out and "RTX PRO 6000" in r.out and "arch-specific" in r.out
    j = run_cli("arch", "compute_100f", "--format", "json")
    assert j.code == 0
    doc = json.loads(j.out)
    assert (doc["compute_capability"], doc["sm"], doc["spelling"]) == (
        "10.0",
        "sm_100",
        {"suffix": "f", "kind": "compute", "target": "sm_100f"},
    )
    assert doc["features"]["tcgen05"] is True and doc["features"]["wgmma"] is False


def test_cli_unknown_arch_exits_2_naming_the_closest() -> None:
    r = run_cli("arch", "sm_130")
    assert r.code == 2
    assert r.out == ""
    assert r.err.strip() == "error: unknown GPU architecture 'sm_130'; closest known: 12.1, 12.0, 11.0"
