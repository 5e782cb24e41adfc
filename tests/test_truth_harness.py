"""benchmarks/truth.py: matching findings to hand-judged cases and the counts behind each ratio."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "truth.py"


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("capgap_truth_harness", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


truth = _load_script()


def case(path: str = "pkg/a.py", span: tuple[int, int] = (10, 12), symbol: str | None = None,
         kind: str = "gap", severity: str | None = "medium"):  # fmt: skip
    return truth.Case(path, span, symbol, kind, severity, f"{kind} at {span[0]}")


def finding(
    path: str = "pkg/a.py",
    line: int = 10,
    symbol: str | None = None,
    severity: str = "medium",
    rule: str = "gate-excludes-arch",
):
    return truth.Finding(path, line, symbol, rule, severity, "major admits 9.0")


def test_line_matches_within_two_lines_of_the_span() -> None:
    judged = case(span=(10, 12))
    assert [truth.matches(finding(line=n), judged) for n in (7, 8, 12, 14, 15)] == [
        False,
        True,
        True,
        True,
        False,
    ]


def test_same_symbol_matches_far_from_the_span_but_another_path_never_does() -> None:
    table = case(span=(3, 16), symbol="MAX_SIZES")
    rule = "table-missing-arch"
    assert truth.matches(finding(line=200, symbol="MAX_SIZES", rule=rule), table)
    assert not truth.matches(finding(line=200, symbol="major", rule=rule), table)
    assert not truth.matches(finding(line=200, rule=rule), table)
    assert not truth.matches(finding(path="pkg/b.py", line=3, symbol="MAX_SIZES", rule=rule), table)


def test_a_gate_finding_matches_by_symbol_only_near_the_case() -> None:
    # `is_sm100` is tested in many places of one file: the name says nothing about which one
    gate = case(span=(40, 44), symbol="is_sm100")
    assert not truth.matches(finding(line=200, symbol="is_sm100"), gate)
    assert truth.matches(finding(line=42, symbol="is_sm100"), gate)
    assert truth.matches(finding(line=34, symbol="is_sm100"), gate)  # a predicate's def line above
    assert not truth.matches(finding(line=34, symbol="major"), gate)


def test_a_finding_without_symbol_falls_back_to_the_line() -> None:
    assert truth.matches(finding(line=4, symbol=None), case(span=(3, 16), symbol="MAX_SIZES"))


def test_best_severity_is_the_highest() -> None:
    found = [finding(severity="low"), finding(severity="high"), finding(severity="medium")]
    assert truth.best_severity(found) == "high"
    assert truth.best_severity([]) is None


def test_score_counts_each_ratio() -> None:
    cases = [
        case(span=(10, 10), severity="medium"),  # found, severity right
        case(span=(30, 30), severity="high"),  # found at medium: severity differs
        case(span=(50, 50)),  # only a low finding: missed
        case(span=(70, 70)),  # no finding: missed
        case(span=(90, 90), kind="not-a-gap", severity=None),  # false alarm
        case(span=(110, 110), kind="not-a-gap", severity=None),  # low only: reported-but-low
        case(span=(130, 130), kind="expected", severity="low"),  # over-rated
        case(span=(150, 150), kind="noise", severity=None),  # silent
    ]
    findings = [
        finding(line=10),
        finding(line=31),
        finding(line=50, severity="low"),
        finding(line=90, severity="high"),
        finding(line=111, severity="low"),
        finding(line=130),
        finding(line=400),  # unjudged
        finding(line=500, severity="low"),  # low and unjudged: not counted
    ]
    s = truth.score(cases, findings)
    assert truth.ratios(s) == {
        "recall": (2, 4),
        "false_alarms": (1, 2),
        "over_rated": (1, 2),
        "severity": (1, 2),
        "judged_precision": (2, 4),
    }
    assert (s.unjudged, s.reported_low) == (1, 2)
    assert [row["span"] for row in s.missed] == [[50, 50], [70, 70]]
    assert [row["span"] for row in s.severity_wrong] == [[30, 30]]
    assert [row["line"] for row in s.unjudged_findings] == [400]
    assert s.missed[0]["findings"] == [truth.asdict(finding(line=50, severity="low"))]


def test_a_finding_near_a_gap_and_a_not_a_gap_counts_for_both() -> None:
    cases = [case(span=(10, 10)), case(span=(13, 13), kind="not-a-gap", severity=None)]
    s = truth.score(cases, [finding(line=11)])
    assert truth.ratios(s)["recall"] == (1, 1)
    assert truth.ratios(s)["false_alarms"] == (1, 1)
    assert truth.ratios(s)["judged_precision"] == (1, 1)


def test_a_gate_finding_inside_one_case_s_span_is_not_matched_to_its_neighbour_by_symbol() -> None:
    # sglang server_args.py: the MHA default (1804-1811) and the MLA default (1821-1833) both test
    # is_sm100_supported; the finding on 1823 speaks of the MLA one only
    mha = case(span=(1804, 1811), symbol="is_sm100_supported", kind="expected", severity="low")
    mla = case(span=(1821, 1833), symbol="is_sm100_supported", severity="high")
    s = truth.score([mha, mla], [finding(line=1823, symbol="is_sm100_supported", severity="high")])
    assert truth.ratios(s)["recall"] == (1, 1)
    assert truth.ratios(s)["over_rated"] == (0, 1)
    # a finding on a def line above, inside no case, is still matched by its symbol nearby
    s = truth.score([mha], [finding(line=1795, symbol="is_sm100_supported")])
    assert truth.ratios(s)["over_rated"] == (1, 1)


def test_a_finding_inside_one_case_s_span_is_not_matched_to_a_neighbour_within_the_slack() -> None:
    # sglang model_override_base.py: `return "fa3"` (337) judged expected, the `elif is_sm100:` chain
    # under it (339-351) judged a gap; the finding on 339 speaks of the chain only
    fa3 = case(span=(337, 337), kind="expected", severity="low")
    chain = case(span=(339, 351), severity="high")
    s = truth.score([fa3, chain], [finding(line=339, symbol="is_sm100", severity="high")])
    assert truth.ratios(s)["recall"] == (1, 1)
    assert truth.ratios(s)["over_rated"] == (0, 1)
    # the same finding two lines off both spans still counts for the one it is near
    s = truth.score([fa3], [finding(line=339, symbol="is_sm100", severity="high")])
    assert truth.ratios(s)["over_rated"] == (1, 1)


def test_totals_add_counts_and_lists() -> None:
    total = truth.Score()
    total.add(truth.score([case()], [finding()]))
    total.add(truth.score([case()], []))
    assert truth.ratios(total)["recall"] == (1, 2)
    assert len(total.missed) == 1


def test_fraction_and_verdict_text() -> None:
    assert truth.fraction(24, 38) == "24/38 (63%)"
    assert truth.fraction(0, 0) == "0/0 (n/a)"
    assert truth.verdict("recall", 8, 10).endswith("met")
    assert truth.verdict("recall", 7, 10).endswith("NOT met")
    assert truth.verdict("false_alarms", 1, 10).endswith(": met")
    assert truth.verdict("judged_precision", 1, 2) == ""


def test_finding_paths_are_made_relative_to_the_unpacked_wheel() -> None:
    report = {
        "targets": [{"root": "/cache/unpacked/eng-1.0"}],
        "findings": [
            {
                "rule": "table-missing-arch",
                "severity": "high",
                "path": "/cache/unpacked/eng-1.0/eng/t.py",
                "line": 3,
                "symbol": "SIZES",
                "message": "m",
            },  # fmt: skip
            {"rule": "gate-excludes-arch", "severity": "low", "path": "eng/g.py", "line": 9, "symbol": None},
        ],
    }
    assert truth.parse_findings(report) == [
        truth.Finding("eng/t.py", 3, "SIZES", "table-missing-arch", "high", "m"),
        truth.Finding("eng/g.py", 9, None, "gate-excludes-arch", "low", ""),
    ]


def test_load_truth_reads_cases_and_maps_the_distribution(tmp_path: Path) -> None:
    path = tmp_path / "flashinfer-0.7.2.json"
    items = [{"path": "flashinfer/x.py", "line": 5, "span": [5, 7], "symbol": None, "kind": "expected",
              "severity": "low", "consequence": "tcgen05", "origin": "finding"}]  # fmt: skip
    path.write_text(json.dumps({"engine": "flashinfer", "version": "0.7.2", "arch": "12.0", "items": items}))
    loaded = truth.load_truth(path)
    assert (loaded.distribution, loaded.version, loaded.arch) == ("flashinfer-python", "0.7.2", "12.0")
    assert loaded.cases == (truth.Case("flashinfer/x.py", (5, 7), None, "expected", "low", "tcgen05"),)
    assert not loaded.binaries and "--no-binaries" in truth.scan_command("python", Path("w.whl"), "12.0")


def test_a_truth_file_of_compiled_libraries_is_scanned_with_them(tmp_path: Path) -> None:
    # fbgemm-gpu-genai's cases are its `.so` files: only the binaries analyzer reads them
    path = tmp_path / "fbgemm-gpu-genai-1.9.0.json"
    items = [{"path": "fbgemm_gpu/gen_ai.so", "line": 0, "kind": "gap", "severity": "high"}]
    path.write_text(
        json.dumps({"engine": "fbgemm-gpu-genai", "version": "1.9.0", "binaries": True, "items": items})
    )
    loaded = truth.load_truth(path)
    assert loaded.binaries
    assert "--no-binaries" not in truth.scan_command("python", Path("w.whl"), loaded.arch, loaded.binaries)


def test_a_bad_truth_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"engine": "x", "version": "1", "items": [{"path": "a.py", "kind": "maybe", "line": 1}]}')
    assert truth.main([str(bad)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {bad}: not a readable truth file")


def test_cached_wheel_is_found_by_distribution_and_version(tmp_path: Path) -> None:
    wheel = tmp_path / "flashinfer_python-0.7.2.post1-py3-none-any.whl"
    wheel.write_bytes(b"")
    (tmp_path / "flashinfer_python-0.7.2-py3-none-any.whl").write_bytes(b"")
    assert truth.fetch_wheel("flashinfer-python", "0.7.2.post1", cache=tmp_path) == wheel


def test_a_cached_wheel_with_a_local_version_label_is_that_version(tmp_path: Path) -> None:
    # pip saves the CPU build of torch 2.13.0 as `torch-2.13.0+cpu-...`
    wheel = tmp_path / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
    wheel.write_bytes(b"")
    (tmp_path / "torch-2.13.1+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    assert truth.fetch_wheel("torch", "2.13.0", cache=tmp_path) == wheel


def test_a_minor_gap_is_found_by_a_low_finding_and_a_medium_one_rates_it_wrong() -> None:
    cases = [case(span=(10, 10), severity="low"), case(span=(30, 30), severity="low")]
    s = truth.score(cases, [finding(line=10, severity="low"), finding(line=30, severity="medium")])
    assert truth.ratios(s)["recall"] == (2, 2)
    assert truth.ratios(s)["severity"] == (1, 2)
    assert [row["span"] for row in s.severity_wrong] == [[30, 30]]


def test_a_table_finding_never_matches_another_table_s_case() -> None:
    custom = case(span=(31, 56), symbol="CUSTOM_ALL_REDUCE_MAX_SIZES")
    rule = "table-missing-arch"
    assert not truth.matches(finding(line=58, symbol="SYMM_MEM_ALL_REDUCE_MAX_SIZES", rule=rule), custom)
    multimem = case(span=(26, 31), symbol="_WORLD_SIZES_MULTIMEM")
    in_class = finding(line=26, symbol="SymmMemCommunicator._WORLD_SIZES_MULTIMEM", rule=rule)
    assert truth.matches(in_class, multimem)


def test_an_inline_table_named_by_its_text_matches_its_case_by_line() -> None:
    gate = case(span=(137, 139), symbol="forward_with_lora")
    rule = "table-missing-arch"
    assert truth.matches(finding(line=138, symbol="{9: 32, 10: 16}", rule=rule), gate)
    assert not truth.matches(finding(line=150, symbol="{9: 32, 10: 16}", rule=rule), gate)
