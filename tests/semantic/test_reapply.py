"""Re-apply by meaning after simulated upstream changes; every result is compared in full."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from capgap.semantic import lift, reapply
from capgap.semantic.hardware import Machine

PRISTINE = textwrap.dedent("""
    class SymmConfig:
        _WORLD_SIZES_MULTIMEM = {
            9: [4, 6, 8],
            10: [6, 8],
        }
""").lstrip()
OURS = PRISTINE.replace("        10: [6, 8],\n", "        10: [6, 8],\n        12: [6, 8],\n")
REL = "pkg/symm.py"


@pytest.fixture
def records() -> list[dict]:
    recs = lift(REL, PRISTINE, OURS)
    assert recs is not None
    return recs


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_adjacent_line_changed_upstream(records: list[dict], tmp_path: Path) -> None:
    upstream = PRISTINE.replace("10: [6, 8]", "10: [4, 6, 8]")
    result = reapply(records, tmp_path, REL, upstream)
    assert result.outcome == "semantic"
    assert result.files == {REL: OURS.replace("10: [6, 8]", "10: [4, 6, 8]")}


def test_reformatted_and_reindented_table(records: list[dict], tmp_path: Path) -> None:
    upstream = textwrap.dedent("""
        class SymmConfig:

          # reformatted upstream
          _WORLD_SIZES_MULTIMEM = {9: [4, 6, 8], 10: [6, 8]}
    """).lstrip()
    result = reapply(records, tmp_path, REL, upstream)
    assert result.files == {REL: upstream.replace("10: [6, 8]}", "10: [6, 8], 12: [6, 8]}")}


def test_table_moved_within_file(records: list[dict], tmp_path: Path) -> None:
    upstream = "import os\n\n\nclass Other:\n    pass\n\n\n" + PRISTINE
    result = reapply(records, tmp_path, REL, upstream)
    assert result.files == {REL: "import os\n\n\nclass Other:\n    pass\n\n\n" + OURS}


def test_table_moved_to_another_module(records: list[dict], tmp_path: Path) -> None:
    stub = "from pkg.config.symm_tables import SymmConfig\n"
    moved = PRISTINE.replace("class SymmConfig:", "class SymmConfig:  # moved here")
    root = _tree(tmp_path, {REL: stub, "pkg/config/symm_tables.py": moved, "other/x.py": "Y = 1\n"})
    result = reapply(records, root, REL, stub)
    assert result.outcome == "semantic"
    expected = OURS.replace("class SymmConfig:", "class SymmConfig:  # moved here")
    assert result.files == {"pkg/config/symm_tables.py": expected}
    assert "now SymmConfig._WORLD_SIZES_MULTIMEM in pkg/config/symm_tables.py" in result.detail


def test_module_constant_that_became_class_attribute(tmp_path: Path) -> None:
    pristine = "X = {\n    9: 1,\n}\n"
    recs = lift("m.py", pristine, "X = {\n    9: 1,\n    12: 2,\n}\n")
    assert recs is not None
    upstream = "class Holder:\n    X = {\n        9: 1,\n    }\n"
    result = reapply(recs, tmp_path, "m.py", upstream)
    assert result.files == {"m.py": "class Holder:\n    X = {\n        9: 1,\n        12: 2,\n    }\n"}


def test_upstream_has_own_entry(records: list[dict], tmp_path: Path) -> None:
    upstream = PRISTINE.replace("        10: [6, 8],\n", "        10: [6, 8],\n        12: [8],\n")
    result = reapply(records, tmp_path, REL, upstream)
    assert (result.outcome, result.files) == ("upstreamed", {})
    assert "upstream has [8], ours was [6, 8]" in result.detail


def test_prefer_ours_over_upstream_entry(records: list[dict], tmp_path: Path) -> None:
    upstream = PRISTINE.replace("        10: [6, 8],\n", "        10: [6, 8],\n        12: [8],\n")
    result = reapply(records, tmp_path, REL, upstream, prefer="ours")
    assert result.outcome == "semantic"
    assert result.files == {REL: upstream.replace("12: [8]", "12: [6, 8]")}


def test_applied_already(records: list[dict], tmp_path: Path) -> None:
    result = reapply(records, tmp_path, REL, OURS)
    assert (result.outcome, result.files) == ("applied-already", {})


def test_table_gone(records: list[dict], tmp_path: Path) -> None:
    root = _tree(tmp_path, {"pkg/other.py": "Z = {9: 1}\n"})
    result = reapply(records, root, REL, "class SymmConfig:\n    pass\n")
    assert (result.outcome, result.files) == ("not-found", {})
    assert "SymmConfig._WORLD_SIZES_MULTIMEM[12]" in result.detail


def test_multimem_entry_for_arch_without_multicast_warns(records: list[dict], tmp_path: Path) -> None:
    result = reapply(records, tmp_path, REL, PRISTINE)
    assert len(result.warnings) == 1
    assert "cc 12.0" in result.warnings[0] and "no NVLink multicast" in result.warnings[0]


def test_max_size_larger_than_gpu_memory_warns(tmp_path: Path) -> None:
    pristine = "GiB = 1 << 30\nMAX_SIZES = {\n    9: {2: 1 * GiB},\n}\n"
    ours = pristine.replace("    9: {2: 1 * GiB},\n", "    9: {2: 1 * GiB},\n    12: {2: 200 * GiB},\n")
    recs = lift("m.py", pristine, ours)
    assert recs is not None
    machine = Machine(multicast=False, gpu_memory_bytes=96 << 30, source="declared: RTX PRO 6000")
    result = reapply(recs, tmp_path, "m.py", pristine, machine=machine)
    assert result.outcome == "semantic"
    assert result.warnings == [
        "MAX_SIZES[12.0]: 214748364800 bytes is more than one GPU's memory (96 GiB, declared: RTX PRO 6000)"
    ]


def test_file_removed_upstream_and_table_moved(records: list[dict], tmp_path: Path) -> None:
    root = _tree(tmp_path, {"pkg/tables.py": PRISTINE})
    result = reapply(records, root=root, rel_path=REL, current_text=None)
    assert (result.outcome, result.files) == ("semantic", {"pkg/tables.py": OURS})


def test_search_stays_inside_the_package(records: list[dict], tmp_path: Path) -> None:
    root = _tree(tmp_path, {"otherpkg/tables.py": PRISTINE, "pkg/__init__.py": ""})
    result = reapply(records, root=root, rel_path=REL, current_text=None)
    assert (result.outcome, result.files) == ("not-found", {})


def test_upstream_changed_key_style(records: list[dict], tmp_path: Path) -> None:
    upstream = PRISTINE.replace("9: [", '"9.0": [').replace("10: [", '"10.0": [')
    result = reapply(records, tmp_path, REL, upstream)
    anchor = '        "10.0": [6, 8],\n'
    expected = upstream.replace(anchor, anchor + '        "12.0": [6, 8],\n')
    assert result.files == {REL: expected}


def test_reapply_twice_is_once(records: list[dict], tmp_path: Path) -> None:
    upstream = PRISTINE.replace("10: [6, 8]", "10: [4, 6, 8]")
    once = reapply(records, tmp_path, REL, upstream).files[REL]
    again = reapply(records, tmp_path, REL, once)
    assert (again.outcome, again.files) == ("applied-already", {})


def test_records_for_two_tables_in_one_file(tmp_path: Path) -> None:
    pristine = "A = {\n    9: 1,\n}\nB = {'9.0': 'x'}\n"
    ours = "A = {\n    9: 1,\n    12: 2,\n}\nB = {'9.0': 'x', '12.0': 'y'}\n"
    recs = lift("m.py", pristine, ours)
    assert recs is not None and [r["symbol"] for r in recs] == ["A", "B"]
    upstream = "import os\n" + pristine.replace("9: 1", "9: 3")
    result = reapply(recs, tmp_path, "m.py", upstream)
    assert result.files == {"m.py": "import os\n" + ours.replace("9: 1", "9: 3")}


def test_constant_folding_never_fails_on_odd_modules() -> None:
    from capgap.semantic.hardware import fold, module_constants

    source = "A = {[1]: 2, (1, 2): 3}\nB = 1 << 10**9\nC = 2 ** 1000\nMiB = 1 << 20\nD = 3 * MiB\n"
    assert module_constants(source) == {"MiB": 1 << 20, "D": 3 << 20}
    import ast

    assert fold(ast.parse("{(9, 0): [1, 2]}", mode="eval").body, {}) == {"[9, 0]": [1, 2]}


def test_reapply_asks_the_probe_for_hardware_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from capgap.semantic import hardware

    pristine = "class C:\n    _WORLD_SIZES_MULTIMEM = {\n        9: [4],\n    }\n"
    ours = pristine.replace("        9: [4],\n", "        9: [4],\n        10: [8],\n")
    recs = lift("m.py", pristine, ours)
    assert recs is not None
    calls = []

    def probe() -> Machine:  # the probe's boundary: an H200 host with multicast off
        calls.append(1)
        return Machine(multicast=False, gpu_memory_bytes=141 << 30, source="probed")

    monkeypatch.setattr(hardware, "probed_machine", probe)
    result = reapply(recs, tmp_path, "m.py", pristine)
    assert calls == [1]
    assert result.warnings == [
        "C._WORLD_SIZES_MULTIMEM[10.0] = [8]: this machine (probed) reports no multicast support"
    ]


def test_declared_devices() -> None:
    from capgap.semantic.hardware import declared_machine

    rtx = declared_machine("NVIDIA RTX PRO 6000 Blackwell Server Edition")
    assert (rtx.multicast, rtx.gpu_memory_bytes) == (False, 96 << 30)
    assert declared_machine("GH200").gpu_memory_bytes == 96 << 30
    assert declared_machine("H200").multicast is True
    unknown = declared_machine("Mystery 9000")
    assert (unknown.multicast, unknown.gpu_memory_bytes) == (None, None)
