"""`fix` writes through the patch store; then upstream changes (reformat, adjacent edit, table moved
to another module) and `capgap upgrade` / `patch apply` leave exactly the fix's entries, nothing else.

The scan is taken as given here (its findings are built by `_scanner`); test_fix_cli runs the real one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capgap.arch import ArchSpec
from capgap.findings import Finding
from capgap.semantic.fixrun import FixOptions, run_fix
from tests.cli_runner import run_cli
from tests.patches.helpers import commit_all, git, write
from tests.semantic.test_fixer import SYMM

COMM = SYMM  # the two all-reduce tables, keyed 9 and 10 (shared with the fixer tests)
REL = "engine/comm.py"
NOTE = "copied from 10 (cc 10.0) by capgap: not measured on this GPU"
MAX_ENTRY = f"    12: {{  # {NOTE}\n        2: 8 * MiB,\n        4: 32 * MiB,\n    }},\n"
MULTIMEM_ENTRY = f"        12: [6, 8],  # {NOTE}\n"


def _scanner(root_rel: str = REL):
    def scan(spec: str, arch: ArchSpec, python: str | None) -> tuple[Path, list[Finding]]:
        common = dict(
            rule="table-missing-arch",
            severity="high",
            path=root_rel,
            present=("9", "10"),
            missing="12",
            consequence="",
            message="",
            arch=arch.cc,
        )
        return Path(spec), [
            Finding(line=3, symbol="TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES", **common),  # type: ignore[arg-type]
            Finding(line=16, symbol="SymmConfig._WORLD_SIZES_MULTIMEM", **common),  # type: ignore[arg-type]
        ]

    return scan


_TAIL = "        4: 32 * MiB,\n    },\n"
FIXED = COMM.replace(_TAIL + "}", _TAIL + MAX_ENTRY + "}").replace(
    "        10: [6, 8],\n", "        10: [6, 8],\n" + MULTIMEM_ENTRY
)


@pytest.fixture
def repos(tmp_path: Path) -> tuple[Path, Path, Path]:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q")
    write(upstream, {REL: COMM, "engine/__init__.py": ""})
    commit_all(upstream, "v1")
    git(tmp_path, "clone", "-q", str(upstream), "work")
    return upstream, tmp_path / "work", tmp_path / "store"


def _fix(work: Path, store: Path):  # noqa: ANN202
    return run_fix(
        FixOptions(target=str(work), arch="12.0", store=str(store), device="RTX PRO 6000"), scan=_scanner()
    )


def _added_lines(work: Path) -> list[str]:
    diff = git(work, "diff", "-U0").stdout
    return [ln for ln in diff.splitlines() if ln.startswith(("+", "-")) and ln[:3] not in ("+++", "---")]


ENTRY_LINES = [
    f"+    12: {{  # {NOTE}",
    "+        2: 8 * MiB,",
    "+        4: 32 * MiB,",
    "+    },",
    f"+        12: [6, 8],  # {NOTE}",
]


def test_fix_writes_and_records_a_semantic_patch(repos: tuple[Path, Path, Path]) -> None:
    _, work, store = repos
    run = _fix(work, store)
    assert (work / REL).read_text() == FIXED
    assert run.patch == "fix-sm_120"
    semantic = json.loads((store / "fix-sm_120" / "semantic.json").read_text())
    assert [(r["symbol"], r["key"], r["note"]) for r in semantic] == [
        ("TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES", "12", NOTE),
        ("SymmConfig._WORLD_SIZES_MULTIMEM", "12", NOTE),
    ]
    meta = json.loads((store / "fix-sm_120" / "meta.json").read_text())
    assert [f["path"] for f in meta["files"]] == [REL]
    assert len(run.plan.warnings()) == 1 and "no NVLink multicast" in run.plan.warnings()[0]


def test_fix_twice_is_once(repos: tuple[Path, Path, Path]) -> None:
    _, work, store = repos
    _fix(work, store)
    again = _fix(work, store)  # the same findings again: every entry is already there
    assert (again.patch, again.plan.changed) == (None, {})
    assert [e.action for e in again.plan.entries] == ["same", "same"]
    assert (work / REL).read_text() == FIXED
    assert sorted(p.name for p in store.iterdir() if not p.name.startswith(".")) == ["fix-sm_120"]


MOVED_STUB = "from engine.config.symm import TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES, SymmConfig  # noqa: F401\n"
ONE_LINE = "    _WORLD_SIZES_MULTIMEM = {9: [4, 6, 8], 10: [6, 8]}\n"
UPSTREAM_CHANGES = {
    # the neighbouring lines change: `patch` and a 3-way merge both conflict
    "adjacent-edit": COMM.replace("        10: [6, 8],\n", "        10: [4, 6, 8],\n").replace(
        "            2: 8 * MiB,\n", "            2: 16 * MiB,\n"
    ),
    # a formatter collapses the tables and the file gains a header: the entry follows the new layout
    "reformat": "import os\n\n"
    + COMM.replace(
        "    _WORLD_SIZES_MULTIMEM = {\n        9: [4, 6, 8],\n        10: [6, 8],\n    }\n", ONE_LINE
    ).replace(
        "    9: {\n        2: 64 * MiB,  # 64 MB\n        4: 32 * MiB,  # 32 MB\n    },\n",
        "    9: {2: 64 * MiB, 4: 32 * MiB},  # 64 MB / 32 MB\n",
    ),
}
EXPECTED_LINES = {
    "adjacent-edit": ENTRY_LINES,
    "reformat": ENTRY_LINES[:4]
    + [
        "-" + ONE_LINE.rstrip("\n"),
        "+    _WORLD_SIZES_MULTIMEM = {9: [4, 6, 8], 10: [6, 8], 12: [6, 8]}  # " + NOTE,
    ],
}


@pytest.mark.parametrize("change", sorted(UPSTREAM_CHANGES))
def test_upgrade_after_fix_keeps_exactly_the_entries(repos: tuple[Path, Path, Path], change: str) -> None:
    upstream, work, store = repos
    _fix(work, store)
    write(upstream, {REL: UPSTREAM_CHANGES[change]})
    commit_all(upstream, change)
    res = run_cli("upgrade", str(work), "--store", str(store), "--format", "json", "--", "git", "pull", "-q")
    assert res.code == 0, res.err + res.out
    report = json.loads(res.out)
    assert [f["outcome"] for p in report["patches"] for f in p["files"]] == ["semantic"]
    assert _added_lines(work) == EXPECTED_LINES[change]


def test_upgrade_after_fix_when_the_table_moved_to_another_module(repos: tuple[Path, Path, Path]) -> None:
    upstream, work, store = repos
    _fix(work, store)
    stub = MOVED_STUB
    write(upstream, {REL: stub, "engine/config/__init__.py": "", "engine/config/symm.py": COMM})
    commit_all(upstream, "move the tables")
    res = run_cli("upgrade", str(work), "--store", str(store), "--format", "json", "--", "git", "pull", "-q")
    assert res.code == 0, res.err + res.out
    report = json.loads(res.out)
    assert [f["outcome"] for p in report["patches"] for f in p["files"]] == ["semantic"]
    assert (work / REL).read_text() == stub
    assert (work / "engine/config/symm.py").read_text() == FIXED
    assert _added_lines(work) == ENTRY_LINES


@pytest.mark.parametrize("change", ["adjacent-edit", "reformat", "moved"])
def test_patch_apply_after_fix_and_a_pull(repos: tuple[Path, Path, Path], change: str) -> None:
    upstream, work, store = repos
    _fix(work, store)
    git(work, "checkout", "--", ".")  # the user drops the edit to pull; the patch is in the store
    if change == "moved":
        files = {REL: MOVED_STUB, "engine/config/__init__.py": "", "engine/config/symm.py": COMM}
    else:
        files = {REL: UPSTREAM_CHANGES[change]}
    write(upstream, files)
    commit_all(upstream, change)
    git(work, "pull", "-q")
    res = run_cli("patch", "apply", str(work), "--store", str(store), "--format", "json")
    assert res.code == 0, res.err + res.out
    expected = ENTRY_LINES if change == "moved" else EXPECTED_LINES[change]
    assert _added_lines(work) == expected
    again = run_cli("patch", "apply", str(work), "--store", str(store), "--format", "json")
    assert again.code == 0 and _added_lines(work) == expected  # twice = once


@pytest.mark.parametrize("prefer", ["upstream", "ours"])
def test_upstream_adds_its_own_entry(repos: tuple[Path, Path, Path], prefer: str) -> None:
    upstream, work, store = repos
    opts = FixOptions(target=str(work), arch="12.0", store=str(store), device="RTX PRO 6000", prefer=prefer)
    run_fix(opts, scan=_scanner())
    anchor = "        10: [6, 8],\n"
    theirs = COMM.replace(anchor, anchor + "        12: [],  # no multicast on 12.x\n")
    write(upstream, {REL: theirs})
    commit_all(upstream, "upstream supports 12.0")
    res = run_cli("upgrade", str(work), "--store", str(store), "--format", "json", "--", "git", "pull")
    assert res.code == 0, res.err + res.out
    [file] = [f for p in json.loads(res.out)["patches"] for f in p["files"]]
    if prefer == "upstream":
        assert file["outcome"] == "semantic"  # the max-size entry is still ours; the multimem one is theirs
        assert "upstream has [], ours was [6, 8]; kept upstream's" in file["detail"]
        assert (work / REL).read_text() == theirs.replace(_TAIL + "}", _TAIL + MAX_ENTRY + "}")
    else:
        assert file["outcome"] == "semantic"
        assert "SymmConfig._WORLD_SIZES_MULTIMEM[12] = [6, 8]: replaced over upstream's []" in file["detail"]
        assert (work / REL).read_text() == theirs.replace(_TAIL + "}", _TAIL + MAX_ENTRY + "}").replace(
            "12: [],", "12: [6, 8],")
