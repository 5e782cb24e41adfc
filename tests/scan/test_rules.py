"""The source rules over a fixture tree that covers every pattern and its near-misses."""

from __future__ import annotations

from pathlib import Path

import pytest

from capgap.arch import parse_arch
from capgap.scan.analyzers import ScanOptions
from capgap.scan.run import ScanReport, run_scan
from tests.scan.fixture_tree import EXPECTED_12_0, line_of, write_tree


def _scan(root: Path, *archs: str) -> ScanReport:
    options = ScanOptions(archs=tuple(parse_arch(a) for a in archs), use_cache=False, binaries=False)
    return run_scan([str(root)], options)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("toy"))


def _by_symbol(report: ScanReport, rule: str = "table-missing-arch") -> dict[str, object]:
    return {f.symbol: f for f in report.findings if f.rule == rule}


def test_every_pattern_is_found_and_no_near_miss_is(tree: Path) -> None:
    report = _scan(tree, "12.0")
    got = {(f.rule, f.severity, f.path, f.line, f.symbol, f.missing) for f in report.findings}
    expected = {(r, s, p, line_of(tree, p, m), sym, miss) for r, s, p, m, sym, miss in EXPECTED_12_0}
    assert got == expected
    assert report.skipped == []


def test_tables_report_keys_as_written_and_how_the_code_reads_them(tree: Path) -> None:
    tables = _by_symbol(_scan(tree, "12.0"))
    expect = {
        "SYMM_MAX_SIZES": (("9", "10"), "major-int", "get", "toyengine.comm.sizes"),
        "SymmComm._MULTIMEM_SIZES": (("9", "10"), "major-int", "get", "toyengine.comm.symm"),
        "ARCH_BLOCK_CONFIGS": (('"9.0"', '"10.0"'), "dotted-str", "subscript", "toyengine.kernels.configs"),
        "TUNED_TILES": (("(9, 0)", "(10, 0)"), "tuple", "try", "toyengine.kernels.configs"),
        "SM_SPLITS": (("90", "100"), "number-int", "get", "toyengine.kernels.configs"),
        "KERNEL_NAMES": (('"sm_90"', '"sm_100"'), "sm-str", "in", "toyengine.kernels.configs"),
        "pick_stages.stages": (("9", "10"), "major-int", "subscript", "toyengine.kernels.configs"),
    }
    got = {
        sym: (f.present, f.extra["key_style"], f.extra["access"], f.extra["module"])  # type: ignore[attr-defined]
        for sym, f in tables.items()
    }
    assert got == expect


def test_consequences_follow_the_code(tree: Path) -> None:
    tables = _by_symbol(_scan(tree, "12.0"))
    assert tables["SYMM_MAX_SIZES"].consequence == (  # type: ignore[attr-defined]
        ".get() returns None on 12.0: silently disabled (logs 'symmetric memory: capability not supported, "
        "communicator off', returns) (toyengine/comm/symm.py:21)"
    )
    assert tables["SymmComm._MULTIMEM_SIZES"].consequence == (  # type: ignore[attr-defined]
        "expected: _MULTIMEM_SIZES is about NVLS multicast, which 12.0 lacks; .get() returns () on "
        "12.0: the check fails; falls back: returns two_shot_all_reduce(x) "
        "(toyengine/comm/symm.py:29)"
    )
    assert tables["ARCH_BLOCK_CONFIGS"].consequence.startswith("KeyError at run time on 12.0")  # type: ignore[attr-defined]
    assert tables["TUNED_TILES"].consequence.startswith(  # type: ignore[attr-defined]
        "KeyError is caught on 12.0: falls back (returns default_tiles())"
    )


def test_simple_constants_are_resolved_in_table_values(tree: Path) -> None:
    sizes = _by_symbol(_scan(tree, "12.0"))["SYMM_MAX_SIZES"]
    assert sizes.extra["values"] == {  # type: ignore[attr-defined]
        "9": {"2": 67108864, "4": 67108864, "8": 134217728},
        "10": {"2": 67108864, "4": 67108864, "8": 134217728},
    }


@pytest.mark.parametrize("arch", ["9.0", "10.0"])
def test_no_table_reported_for_an_arch_the_tables_have(tree: Path, arch: str) -> None:
    assert _by_symbol(_scan(tree, arch)) == {}


def test_a_major_key_covers_every_minor_but_exact_keys_do_not(tree: Path) -> None:
    tables = _by_symbol(_scan(tree, "12.1"))
    assert "COVERED" not in tables  # keyed 12: covers 12.1
    assert tables["TUNED_TILES"].missing == "(12, 1)"  # type: ignore[attr-defined]
    assert tables["SYMM_MAX_SIZES"].missing == "12"  # type: ignore[attr-defined]


def test_gate_evidence_sets_severity(tree: Path) -> None:
    gates = [f for f in _scan(tree, "12.0").findings if f.rule.startswith("gate-")]
    by_line = {f.line: f for f in gates}
    mla = by_line[line_of(tree, "toyengine/layers/attention.py", "G2")]
    assert (mla.severity, mla.consequence) == (
        "low",
        "expected: that path needs tcgen05 (read from 'trtllm_gen_mla_decode' (line 16)), which 12.0 lacks; "
        "12.0 carries on (returns flashinfer_mla(q))",
    )
    assert mla.extra["evidence"] == "'trtllm_gen_mla_decode' (line 16)"
    fused = by_line[line_of(tree, "toyengine/layers/attention.py", "G3")]
    assert fused.severity == "medium" and fused.consequence == (
        "12.0 never gets this path (returns flashinfer_fused_allreduce(x)); it carries on (returns x) instead"
    )
    assert fused.present == ("10.0", "10.3")
    choose = by_line[line_of(tree, "toyengine/layers/attention.py", "G1")]
    assert choose.consequence == (
        "12.0 never gets this path (returns fused_attention()); it returns slow_attention() instead"
    )
    assert choose.extra["instead"] == "returns slow_attention()"
    hopper = by_line[line_of(tree, "toyengine/layers/attention.py", "G6")]
    # a refusal that names the arch it needs, with nothing read saying otherwise: expected, low
    assert (hopper.severity, hopper.extra["evidence"]) == (
        "low",
        "the refusal naming 9.0 as what it requires ('needs Hopper')",
    )
    assert hopper.consequence.startswith("expected: that path needs wgmma (read from the refusal naming 9.0")


def test_several_archs_each_finding_carries_its_arch(tree: Path) -> None:
    report = _scan(tree, "12.0", "12.1")
    data = report.to_json()
    assert data["arch"] == ["12.0", "12.1"]
    tiles = [(f["arch"], f["missing"]) for f in data["findings"] if f["symbol"] == "TUNED_TILES"]
    assert sorted(tiles) == [("12.0", "(12, 0)"), ("12.1", "(12, 1)")]


def test_a_comment_above_is_evidence_for_a_table_nobody_reads(tmp_path: Path) -> None:
    (tmp_path / "tiles.py").write_text(
        "import os\n\n# compute capability major -> tile size\nTILES = {9: 64, 10: 128}\n"
        "PAGES = {9: 1, 10: 2}\n"
    )
    found = [(f.symbol, f.missing, f.extra["access"]) for f in _scan(tmp_path, "12.0").findings]
    assert found == [("TILES", "12", "unknown")]
