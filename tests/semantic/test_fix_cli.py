"""`capgap fix` through the CLI, with the real scan, on git checkouts the tests build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capgap.tune.values import build_values, load_values
from tests.cli_runner import run_cli
from tests.patches.helpers import commit_all, git, write
from tests.semantic.test_fix_upgrade import COMM, FIXED, NOTE

USE = '''

def use(world_size):
    import torch

    major, _ = torch.cuda.get_device_capability()
    if world_size in SymmConfig._WORLD_SIZES_MULTIMEM.get(major, []):
        return "multimem"
    return TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES[major][world_size]
'''
REL = "engine/comm.py"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    repo = tmp_path / "work"
    repo.mkdir()
    git(repo, "init", "-q")
    write(repo, {REL: COMM + USE, "engine/__init__.py": ""})
    commit_all(repo, "v1")
    return repo


def _fix(work: Path, *args: str):  # noqa: ANN202
    return run_cli("fix", str(work), "--arch", "12.0", "--store", str(work.parent / "store"),
                   "--device", "RTX PRO 6000", *args)


def test_fix_twice_is_once(work: Path) -> None:
    first = _fix(work)
    assert first.code == 0, first.err
    assert (work / REL).read_text() == FIXED + USE
    assert "saved as patch fix-sm_120" in first.out
    assert "has no NVLink multicast" in first.err  # the multimem entry on a PCIe Blackwell board
    second = _fix(work)
    assert second.code == 0, second.err
    assert "nothing to fix" in second.err
    assert (work / REL).read_text() == FIXED + USE
    store = work.parent / "store"
    assert sorted(p.name for p in store.iterdir() if not p.name.startswith(".")) == ["fix-sm_120"]


def test_dry_run_prints_the_diff_and_writes_nothing(work: Path) -> None:
    res = _fix(work, "--dry-run")
    assert res.code == 0, res.err
    assert (work / REL).read_text() == COMM + USE
    assert not (work.parent / "store").exists()
    (work / "fix.diff").write_text(res.out)
    applied = git(work, "apply", "fix.diff", check=False)
    assert applied.returncode == 0, applied.stderr
    assert (work / REL).read_text() == FIXED + USE


def test_json_output(work: Path) -> None:
    res = _fix(work, "--format", "json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert (data["arch"], data["patch"], data["files"]) == ("12.0", "fix-sm_120", [REL])
    assert data["dry_run"] is False
    assert [(e["symbol"], e["key"], e["origin"], e["copied_from"]) for e in data["entries"]] == [
        ("TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES", "12", "copied", "10.0"),
        ("SymmConfig._WORLD_SIZES_MULTIMEM", "12", "copied", "10.0"),
    ]
    assert data["machine"]["gpu_memory_bytes"] == 96 << 30
    assert len(data["warnings"]) == 1


def test_values_from_tune(work: Path, tmp_path: Path) -> None:
    values = build_values(
        cc="12.0", world_size=2, max_size=48 << 20, multimem=False, margin=0.05, measured={}
    )
    path = tmp_path / "values.json"
    path.write_text(json.dumps(values))
    assert load_values(path)["tables"]  # the file is what tune writes
    res = _fix(work, "--values", str(path))
    assert res.code == 0, res.err
    text = (work / REL).read_text()
    assert "    12: {  # measured on this machine by capgap tune\n        2: 48 * MiB,\n    },\n" in text
    # world size 2 was measured (no multimem there); 6 and 8 were not: they stay, marked as copied
    measured = "world size 2 measured on this machine by capgap tune"
    assert f"        12: [6, 8],  # {measured}; 6, 8 {NOTE}\n" in text


def test_like(work: Path) -> None:
    res = _fix(work, "--like", "9.0", "--dry-run")
    assert res.code == 0, res.err
    assert "+        12: [4, 6, 8],  # copied from 9 (cc 9.0) by capgap: not measured on this GPU" in res.out


def test_bad_arch_is_a_usage_error(work: Path) -> None:
    res = run_cli("fix", str(work), "--arch", "sm_999", "--store", str(work.parent / "s2"))
    assert res.code == 2 and "unknown GPU architecture" in res.err


def test_plain_directory_needs_dry_run(tmp_path: Path) -> None:
    write(tmp_path / "plain", {REL: COMM + USE})
    res = run_cli("fix", str(tmp_path / "plain"), "--arch", "12.0", "--store", str(tmp_path / "store"))
    assert res.code == 2 and "--dry-run shows the diff" in res.err
    dry = run_cli("fix", str(tmp_path / "plain"), "--arch", "12.0", "--dry-run", "--device", "RTX PRO 6000")
    assert dry.code == 0 and f"+        12: [6, 8],  # {NOTE}" in dry.out


def test_configs_are_copied_and_kept_in_the_store_too(work: Path) -> None:
    from tests.configs.test_fixer import RTX_FILE, D, _tree

    _tree(work)
    commit_all(work, "tuned configs")
    res = run_cli("fix", str(work), "--arch", "12.0", "--store", str(work.parent / "store"),
                  "--device", "NVIDIA RTX PRO 6000 Blackwell Server Edition", "--configs", "--format", "json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    copied = sorted(c["target_file"] for c in data["configs"] if c["status"] == "copied")
    assert copied == [f"{D}/E=32,N=512,device_name={RTX_FILE},dtype=fp8_w8a8.json",
                      f"{D}/E=8,N=7168,device_name={RTX_FILE}.json"]
    assert all((work / rel).exists() for rel in copied)
    assert (work / REL).read_text() == FIXED + USE
    store = work.parent / "store"
    names = sorted(p.name for p in store.iterdir() if not p.name.startswith("."))
    assert names[0].startswith("configs-") and names[1] == "fix-sm_120"


def test_unsaved_local_edits_in_the_file_are_refused_until_saved(work: Path) -> None:
    (work / REL).write_text("# my own tweak\n" + COMM + USE)
    res = _fix(work)
    assert res.code == 2 and "local edits that no saved patch holds" in res.err
    assert (work / REL).read_text() == "# my own tweak\n" + COMM + USE
    saved = run_cli("patch", "save", "tweak", str(work), "--store", str(work.parent / "store"))
    assert saved.code == 0, saved.err
    res = _fix(work)
    assert res.code == 0, res.err
    assert (work / REL).read_text() == "# my own tweak\n" + FIXED + USE
    store = str(work.parent / "store")
    up = run_cli("upgrade", str(work), "--store", store, "--format", "json", "--", "true")
    assert up.code == 0, up.err + up.out
    # both patches come back (their order is the store's: by creation second, then name)
    outcomes = {p["name"]: p["outcome"] for p in json.loads(up.out)["patches"]}
    assert sorted(outcomes) == ["fix-sm_120", "tweak"] and set(outcomes.values()) <= {"applied", "merged"}
    assert (work / REL).read_text() == "# my own tweak\n" + FIXED + USE


def test_a_subdirectory_of_the_checkout(work: Path) -> None:
    res = run_cli("fix", str(work / "engine"), "--arch", "12.0", "--store", str(work.parent / "store"),
                  "--device", "RTX PRO 6000", "--format", "json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["files"] == [REL]  # paths are the checkout's, as the patch store keeps them
    assert (work / REL).read_text() == FIXED + USE


def test_table_read_with_a_dict_default(tmp_path: Path) -> None:
    """`.get(cap, {})`: the scan's consequence text holds braces (it once crashed the scan)."""
    src = (
        "import torch\n\nPLANS = {\n    (9, 0): 'p90',\n    (10, 0): 'p100',\n}\n\n\n"
        "def plans():\n    return PLANS.get(torch.cuda.get_device_capability(), {})\n"
    )
    write(tmp_path / "plain", {"m.py": src})
    res = run_cli("fix", str(tmp_path / "plain"), "--arch", "12.0", "--dry-run", "--device", "RTX PRO 6000")
    assert res.code == 0, res.err
    note = "# copied from (10, 0) (cc 10.0) by capgap: not measured on this GPU"
    assert f"+    (12, 0): 'p100',  {note}" in res.out
