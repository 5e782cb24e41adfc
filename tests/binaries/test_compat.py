"""The SASS/PTX compatibility rules, table-driven, including what was measured on an H200."""

from __future__ import annotations

import pytest

from capgap.binaries.compat import MISSING, NATIVE, PTX_JIT, Image, judge


def img(name: str) -> Image:
    kind, _, rest = name.partition("_")
    digits = rest.rstrip("af")
    return Image.from_sm("ptx" if kind == "compute" else "sass", int(digits), rest[len(digits) :])


RUNS = [
    # H200 (9.0), measured (design.md): sm_80 cubin -> 209; compute_80 PTX runs; sm_90a cubin runs;
    # sm_100, compute_100 PTX, sm_120, compute_120f -> 209.
    ("sm_80", "9.0", False),
    ("compute_80", "9.0", True),
    ("sm_90a", "9.0", True),
    ("sm_100", "9.0", False),
    ("compute_100", "9.0", False),
    ("sm_120", "9.0", False),
    ("compute_120f", "9.0", False),
    # plain SASS: same major, minor >= its own
    ("sm_80", "8.0", True),
    ("sm_80", "8.6", True),
    ("sm_80", "8.9", True),
    ("sm_86", "8.0", False),
    ("sm_80", "7.5", False),
    ("sm_90", "9.0", True),
    ("sm_100", "10.3", True),
    ("sm_100", "11.0", False),
    ("sm_100", "12.0", False),
    ("sm_120", "12.0", True),
    ("sm_120", "12.1", True),
    ("sm_121", "12.0", False),
    # sm_XYf is an alias of sm_XY
    ("sm_100f", "10.3", True),
    ("sm_100f", "12.0", False),
    # arch-specific SASS: exactly that cc
    ("sm_90a", "10.0", False),
    ("sm_100a", "10.3", False),
    ("sm_120a", "12.0", True),
    ("sm_120a", "12.1", False),
    ("sm_121a", "12.0", False),
    # plain PTX: any cc at or above, across majors
    ("compute_75", "12.0", True),
    ("compute_90", "10.0", True),
    ("compute_120", "12.1", True),
    ("compute_120", "11.0", False),
    # arch-specific PTX: exactly that cc
    ("compute_90a", "9.0", True),
    ("compute_90a", "10.0", False),
    ("compute_100a", "10.3", False),
    # family PTX: same major, minor >= its own
    ("compute_100f", "10.0", True),
    ("compute_100f", "10.3", True),
    ("compute_100f", "11.0", False),
    ("compute_100f", "12.0", False),
    ("compute_103f", "10.0", False),
    ("compute_103f", "10.3", True),
    ("compute_110f", "11.0", True),
    ("compute_110f", "12.0", False),
    ("compute_120f", "12.0", True),
    ("compute_120f", "12.1", True),
    ("compute_121f", "12.0", False),
    ("compute_121f", "12.1", True),
]


@pytest.mark.parametrize(("image", "cc", "runs"), RUNS)
def test_image_runs_on(image: str, cc: str, runs: bool) -> None:
    major, minor = (int(p) for p in cc.split("."))
    assert img(image).runs_on(major, minor) is runs


def test_sass_family_suffix_is_an_alias_but_ptx_keeps_it() -> None:
    assert img("sm_100f") == img("sm_100")
    assert img("sm_100f").name == "sm_100"
    assert img("compute_100f").name == "compute_100f"


@pytest.mark.parametrize(
    ("modules", "cc", "status", "via", "lacking"),
    [
        ([["sm_80", "sm_90", "compute_90"]], "9.0", NATIVE, ("sm_90", "compute_90"), 0),
        ([["sm_80", "compute_90"]], "12.0", PTX_JIT, ("compute_90",), 0),
        ([["sm_80", "compute_80", "compute_90"]], "9.0", PTX_JIT, ("compute_90", "compute_80"), 0),
        ([["sm_80", "sm_90a", "sm_100"]], "12.0", MISSING, (), 1),
        ([["sm_90a"], ["sm_80", "sm_90"]], "9.0", NATIVE, ("sm_90", "sm_90a"), 0),
        # one module only for Hopper: the library as a whole still runs on 12.0
        ([["sm_90a"], ["sm_80", "sm_120"]], "12.0", NATIVE, ("sm_120",), 1),
        ([["sm_120a", "sm_120"]], "12.0", NATIVE, ("sm_120", "sm_120a"), 0),
        ([["sm_120"]], "12.1", NATIVE, ("sm_120",), 0),
    ],
)
def test_judge_library(
    modules: list[list[str]], cc: str, status: str, via: tuple[str, ...], lacking: int
) -> None:
    major, minor = (int(p) for p in cc.split("."))
    verdict = judge([[img(n) for n in m] for m in modules], major, minor)
    assert (verdict.status, verdict.via, verdict.modules_without_image) == (status, via, lacking)
    assert verdict.modules == len(modules)


def test_verdict_texts() -> None:
    assert judge([[img("sm_120")]], 12, 0).text == "native sm_120"
    assert judge([[img("compute_90")]], 12, 0).text == "PTX JIT from compute_90 (first launch compiles)"
    assert judge([[img("sm_90a")]], 12, 0).text == "NO IMAGE"
