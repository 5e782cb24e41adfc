"""Planning `capgap fix` from table-missing-arch findings (built here; the scan has its own tests)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from capgap.arch import ArchSpec, parse_arch
from capgap.findings import Finding
from capgap.semantic.fixer import RULE, plan_fix, resolve_symbol
from capgap.semantic.hardware import Machine

SYMM = textwrap.dedent("""
    MiB = 1024 * 1024

    TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES = {
        9: {
            2: 64 * MiB,  # 64 MB
            4: 32 * MiB,  # 32 MB
        },
        10: {
            2: 8 * MiB,
            4: 32 * MiB,
        },
    }


    class SymmConfig:
        _WORLD_SIZES_MULTIMEM = {
            9: [4, 6, 8],
            10: [6, 8],
        }
""").lstrip()


def _finding(symbol: str, line: int, path: str = "pkg/symm.py") -> Finding:
    return Finding(
        rule="table-missing-arch",
        severity="high",
        path=path,
        line=line,
        symbol=symbol,
        present=("9", "10"),
        missing="12",
        consequence="",
        message="",
        arch="12.0",
    )


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "symm.py").write_text(SYMM)
    return tmp_path


FINDINGS = [_finding("TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES", 3), _finding("_WORLD_SIZES_MULTIMEM", 16)]
NOTE = "copied from 10 (cc 10.0) by capgap: not measured on this GPU"


def test_plan_inserts_copies_from_sibling_with_comment(tmp_path: Path) -> None:
    plan = plan_fix(FINDINGS, _tree(tmp_path), parse_arch("12.0"))
    expected = SYMM.replace(
        "        4: 32 * MiB,\n    },\n}",
        f"        4: 32 * MiB,\n    }},\n    12: {{  # {NOTE}\n"
        "        2: 8 * MiB,\n        4: 32 * MiB,\n    },\n}",
    ).replace("        10: [6, 8],\n", f"        10: [6, 8],\n        12: [6, 8],  # {NOTE}\n")
    assert plan.changed == {"pkg/symm.py": expected}
    assert [(e.edit.symbol, e.edit.key, e.origin, e.copied_from) for e in plan.entries] == [
        ("TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES", "12", "copied", "10.0"),
        ("SymmConfig._WORLD_SIZES_MULTIMEM", "12", "copied", "10.0"),
    ]
    assert (tmp_path / "pkg" / "symm.py").read_text() == SYMM  # a plan writes nothing


def test_plan_diff_is_unified(tmp_path: Path) -> None:
    diff = plan_fix(FINDINGS[1:], _tree(tmp_path), parse_arch("12.0")).diff()
    assert diff.splitlines()[:2] == ["--- a/pkg/symm.py", "+++ b/pkg/symm.py"]
    changed = [ln for ln in diff.splitlines() if ln.startswith(("+", "-"))][2:]
    assert changed == [f"+        12: [6, 8],  # {NOTE}"]


def test_multimem_entry_on_arch_without_multicast_warns(tmp_path: Path) -> None:
    plan = plan_fix(FINDINGS, _tree(tmp_path), parse_arch("12.0"))
    warnings = plan.warnings()
    assert len(warnings) == 1
    assert warnings[0].startswith("SymmConfig._WORLD_SIZES_MULTIMEM[12.0] = [6, 8]: cc 12.0")


def test_max_size_over_declared_memory_warns(tmp_path: Path) -> None:
    machine = Machine(multicast=False, gpu_memory_bytes=16 << 20, source="declared: tiny")
    root = _tree(tmp_path)
    plan = plan_fix(FINDINGS[:1], root, parse_arch("12.0"), like=parse_arch("9.0"), machine=machine)
    assert plan.warnings() == [
        "TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES[12.0]: 67108864 bytes is more than one GPU's memory "
        "(0 GiB, declared: tiny)"
    ]


def test_like_picks_the_sibling(tmp_path: Path) -> None:
    plan = plan_fix(FINDINGS[1:], _tree(tmp_path), parse_arch("12.0"), like=parse_arch("9.0"))
    got = [(e.edit.value, e.copied_from, e.reason) for e in plan.entries]
    assert got == [("[4, 6, 8]", "9.0", "--like 9.0")]


def test_like_absent_from_table_is_skipped(tmp_path: Path) -> None:
    plan = plan_fix(FINDINGS[1:], _tree(tmp_path), parse_arch("12.0"), like=parse_arch("8.0"))
    assert (plan.entries, plan.changed) == ([], {})
    assert plan.skipped == [("pkg/symm.py:16 _WORLD_SIZES_MULTIMEM", "the table has no entry for --like 8.0")]


def test_measured_value_wins_over_copy(tmp_path: Path) -> None:
    def measured(symbol: str, arch: ArchSpec, sibling: str, module: str) -> str | None:
        return "[]" if symbol.endswith("MULTIMEM") else None

    plan = plan_fix(FINDINGS, _tree(tmp_path), parse_arch("12.0"), measured=measured)
    assert [(e.origin, e.edit.value) for e in plan.entries][1] == ("measured", "[]")
    assert "        12: [],  # measured on this machine by capgap tune\n" in plan.changed["pkg/symm.py"]
    assert plan.warnings() == []


def test_records_describe_each_entry(tmp_path: Path) -> None:
    plan = plan_fix(FINDINGS[1:], _tree(tmp_path), parse_arch("12.0"))
    assert plan.records() == [
        {
            "module": "pkg.symm",
            "path": "pkg/symm.py",
            "symbol": "SymmConfig._WORLD_SIZES_MULTIMEM",
            "key": "12",
            "value": "[6, 8]",
            "key_style": "major-int",
            "note": NOTE,
        }
    ]


def test_resolve_symbol_by_line_when_the_name_is_ambiguous() -> None:
    text = "class A:\n    T = {9: 1}\n\n\nclass B:\n    T = {9: 2}\n"
    assert resolve_symbol(text, "T", 6) == "B.T"
    assert resolve_symbol(text, "T", 2) == "A.T"
    assert resolve_symbol(text, "A.T") == "A.T"
    assert resolve_symbol(text, "U") is None


def test_resolve_symbol_self_attribute() -> None:
    text = "class C:\n    def __init__(self):\n        self.T = {9: 1}\n"
    assert resolve_symbol(text, "C.T") == "C.T"


def test_arch_specific_values_are_not_copied(tmp_path: Path) -> None:
    text = "T = {\n    (9, 0): 'sm_90a',\n    (10, 3): '103a',\n}\n"
    text += "R = {(10, 3): 'Blackwell Ultra is slow'}\n"
    (tmp_path / "m.py").write_text(text)
    findings = [
        Finding(RULE, "high", "m.py", 1, "T", ("(9, 0)", "(10, 3)"), "(12, 0)", "", "", "12.0"),
        Finding(RULE, "high", "m.py", 5, "R", ("(10, 3)",), "(12, 0)", "", "", "12.0"),
    ]
    plan = plan_fix(findings, tmp_path, parse_arch("12.0"))
    assert plan.changed == {}
    assert [reason.split(":")[0] for _, reason in plan.skipped] == [
        "10.3's value names its own arch ('103a')", "10.3's value names its own arch ('Blackwell Ultra')",
    ]
    forced = plan_fix(findings[:1], tmp_path, parse_arch("12.0"), like=parse_arch("10.3"))
    assert [e.edit.value for e in forced.entries] == ["'103a'"]
    assert forced.warnings()[0].startswith("T[12.0]: copied with --like 10.3 although")


def test_arch_specific_detector() -> None:
    from capgap.semantic.sibling import arch_specific

    a100, h100, b300 = parse_arch("8.0"), parse_arch("9.0"), parse_arch("10.3")
    target = parse_arch("12.0")
    assert arch_specific("{'kernel': 'sm_90a'}", h100, target) == "sm_90a"
    assert arch_specific("'tuned on H100 80GB'", h100, target) == "H100"
    assert arch_specific("'Hopper only'", h100, target) == "Hopper"
    assert arch_specific("[6, 8]", h100, target) is None
    assert arch_specific("{'BK': 64, 'num_warps': 8}", b300, target) is None
    assert arch_specific("'block 80'", a100, target) is None  # a bare number is just a number
    assert arch_specific("'compute_80'", a100, target) == "compute_80"
    assert arch_specific("'Blackwell'", parse_arch("10.0"), target) is None  # shared with 12.0: says nothing


def test_unparseable_file_is_skipped_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("T = {9: 1}\ndef (:\n")
    finding = Finding(RULE, "high", "m.py", 1, "T", ("9",), "12", "", "", "12.0")
    plan = plan_fix([finding], tmp_path, parse_arch("12.0"))
    assert plan.changed == {} and len(plan.skipped) == 1
