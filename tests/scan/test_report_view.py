"""build_view: which findings the reports show, in which order, and what hid why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from capgap.findings import Finding
from capgap.scan.run import ScanReport, TargetReport
from capgap.scan.view import TOP_PER_SUBSYSTEM, ViewOptions, build_view, hidden_text
from capgap.targets import Target


def _f(path: str, severity: str = "medium", line: int = 1, **extra: Any) -> Finding:
    return Finding("gate-excludes-arch", severity, path, line, "cap", ("10.0",), "12.0", "off", "m", "12.0",
                   "", {"where": "runtime", **extra})


def _report(findings: list[Finding], root: Path) -> ScanReport:
    report = ScanReport(("12.0",), [TargetReport(Target(str(root), "path", root), 1)])
    report.findings, report.finding_targets = findings, [0] * len(findings)
    return report


def test_the_opening_block_stays_short(tmp_path: Path) -> None:
    highs = [_f(f"eng/moe/k{i}.py", "high") for i in range(TOP_PER_SUBSYSTEM + 3)]
    view = build_view(_report([*highs, _f("eng/attention/a.py", "high"), _f("eng/x.py")], tmp_path),
                      ViewOptions())
    assert [i.subsystem for i in view.top] == ["attention"] + ["MoE"] * TOP_PER_SUBSYSTEM
    # the highs past the block are not lost: they lead the by-file list's MoE files
    assert sum(1 for i in view.rest if i.finding.severity == "high") == 3
    assert view.shown == len(highs) + 2


def test_backward_passes_are_runtime_code_and_examples_are_not(tmp_path: Path) -> None:
    findings = [_f("a.py", where="backward"), _f("b.py", where="example"), _f("c.py", where="benchmark")]
    view = build_view(_report(findings, tmp_path), ViewOptions())
    assert [i.finding.path for i in view.rest] == ["a.py"]
    assert view.hidden == {"where": 2}
    tests = build_view(_report(findings, tmp_path), ViewOptions(where="test"))
    assert [i.finding.path for i in tests.rest] == ["b.py", "c.py"]


def test_each_hidden_finding_counts_once_by_the_first_filter(tmp_path: Path) -> None:
    findings = [_f("t.py", "low", where="test", model="m2"), _f("m.py", "low", model="m2"),
                _f("l.py", "low"), _f("k.py"), _f("j.py"), _f("i.py", model="m1")]
    view = build_view(_report(findings, tmp_path), ViewOptions(model="M1", max=1))
    assert view.hidden == {"where": 1, "model": 1, "low": 1, "max": 2}
    assert view.shown == 1
    assert hidden_text(view) == (
        "1 outside the runtime (tests, benchmarks, examples; --where all shows them), "
        "1 of other models (dropping --model shows them), 1 low (expected gaps; --all shows them), "
        "2 past --max (--max 0 shows them)"
    )


def test_the_fix_command_only_where_the_fixer_plans_an_entry(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text("T = {(9, 0): 'sm_90a', (10, 0): 'sm_100a'}\nU = make()\n")
    names_its_arch = Finding("table-missing-arch", "high", "t.py", 1, "T", ("(9, 0)", "(10, 0)"), "(12, 0)",
                             "KeyError", "T lacks 12.0", "12.0")
    no_literal = Finding("table-missing-arch", "high", "t.py", 2, "U", ("9",), "12", "KeyError", "U", "12.0")
    view = build_view(_report([names_its_arch, no_literal], tmp_path), ViewOptions())
    assert [i.fix for i in view.top] == ["", ""]  # 10.0's value names its own arch; U is no dict
