"""`capgap fix --values` after a fix without values, and `fix` on chosen tables (issue 15, items
3, 4 and 5), with the real scan on git checkouts and a pip-installed package built here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from capgap.tune.values import build_values
from tests.cli_runner import run_cli
from tests.patches.helpers import commit_all, git, write
from tests.semantic.test_fix_cli import USE
from tests.semantic.test_fix_upgrade import COMM, FIXED, NOTE
from tests.wheel_build import build_wheel, make_venv

REL = "engine/comm.py"
MEASURED = "measured on this machine by capgap tune"
# an unrelated table the scan also finds; its value names its own arch, so fix cannot copy it
KDA = """
SM_ARCHS = {(10, 0): "100a", (10, 3): "103a"}


def kda_arch():
    import torch

    cap = torch.cuda.get_device_capability()
    if cap not in SM_ARCHS:
        raise RuntimeError("kda needs sm_100a")
    return SM_ARCHS[cap]
"""


def _values(path: Path, world_size: int, max_size: int, multimem: bool) -> Path:
    values = build_values(
        cc="12.0", world_size=world_size, max_size=max_size, multimem=multimem, margin=0.05, measured={}
    )
    path.write_text(json.dumps(values))
    return path


@pytest.fixture
def work(tmp_path: Path) -> Path:
    repo = tmp_path / "work"
    repo.mkdir()
    git(repo, "init", "-q")
    write(repo, {REL: COMM + USE, "engine/__init__.py": "", "engine/kda.py": KDA})
    commit_all(repo, "v1")
    return repo


def _fix(work: Path, *args: str):  # noqa: ANN202
    store = str(work.parent / "store")
    return run_cli("fix", str(work), "-a", "12.0", "--store", store, "--device", "RTX PRO 6000", *args)


def _comm_only(work: Path) -> tuple[str, ...]:
    return ("--only", "TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES", "--only", "_WORLD_SIZES_MULTIMEM")


def test_only_and_path_fix_the_chosen_tables_and_exit_0(work: Path) -> None:
    everything = _fix(work, "--dry-run")
    assert everything.code == 1 and "not fixed: engine/kda.py" in everything.err  # the unrelated table
    chosen = _fix(work, *_comm_only(work), "--format", "json")
    assert chosen.code == 0, chosen.err
    data = json.loads(chosen.out)
    assert [e["symbol"] for e in data["entries"]] == [
        "TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES",
        "SymmConfig._WORLD_SIZES_MULTIMEM",
    ]
    assert data["skipped"] == []
    assert (work / REL).read_text() == FIXED + USE
    assert (work / "engine/kda.py").read_text() == KDA
    git(work, "checkout", "--", ".")
    by_path = _fix(work, "--path", "engine/comm.py", "--dry-run")
    assert (
        by_path.code == 0 and "+        12: [6, 8]" in by_path.out and "kda" not in by_path.out + by_path.err
    )
    glob = _fix(work, "--path", str(work / "engine"), "--only", "SM_ARCHS", "--dry-run")
    assert glob.code == 1 and "not fixed: engine/kda.py" in glob.err
    none = _fix(work, "--only", "NO_SUCH_TABLE", "--dry-run")
    assert none.code == 0 and "--only NO_SUCH_TABLE: no table of that name" in none.err


def test_measured_values_replace_the_copied_ones_and_update_the_patch(work: Path, tmp_path: Path) -> None:
    assert _fix(work, *_comm_only(work)).code == 0
    store = work.parent / "store"
    before = json.loads((store / "fix-sm_120" / "meta.json").read_text())
    values = _values(tmp_path / "values.json", world_size=8, max_size=48 << 20, multimem=False)
    res = _fix(work, *_comm_only(work), "--values", str(values), "--format", "json")
    assert res.code == 0, res.err
    assert "patch fix-sm_120 updated in place (its pristine copies kept)" in res.err
    assert [(e["symbol"], e["action"], e["origin"]) for e in json.loads(res.out)["entries"]] == [
        ("TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES", "replaced", "measured"),
        ("SymmConfig._WORLD_SIZES_MULTIMEM", "replaced", "partly-measured"),
    ]
    text = (work / REL).read_text()
    assert f"    12: {{  # {MEASURED}\n        8: 48 * MiB,\n    }},\n" in text
    assert f"        12: [6],  # world size 8 {MEASURED}; 6 {NOTE}\n" in text
    assert NOTE not in text.replace(f"6 {NOTE}", "")  # no entry still claims to be a plain copy
    # the store: still one patch, the same one, now holding the measured values
    assert sorted(p.name for p in store.iterdir() if not p.name.startswith(".")) == ["fix-sm_120"]
    meta = json.loads((store / "fix-sm_120" / "meta.json").read_text())
    assert meta["created"] == before["created"]
    [entry] = meta["files"]
    assert entry["pristine_sha256"] == before["files"][0]["pristine_sha256"]
    assert (store / "fix-sm_120" / "blobs" / entry["patched_sha256"]).read_text() == text
    records = json.loads((store / "fix-sm_120" / "semantic.json").read_text())
    assert [(r["symbol"], r["value"]) for r in records] == [
        ("TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES", "{\n        8: 48 * MiB,\n    }"),
        ("SymmConfig._WORLD_SIZES_MULTIMEM", "[6]"),
    ]
    again = run_cli("upgrade", str(work), "--store", str(store), "--format", "json", "--", "true")
    assert again.code == 0 and json.loads(again.out)["saved_patch"] is None, again.err
    assert (
        _fix(work, "--values", str(values), *_comm_only(work)).err.count("nothing to fix") == 1
    )  # twice = once


@pytest.mark.parametrize("prefer", ["upstream", "ours"])
def test_an_entry_the_user_typed_is_replaced_only_when_asked(work: Path, tmp_path: Path, prefer: str) -> None:
    typed = (COMM + USE).replace("        10: [6, 8],\n", "        10: [6, 8],\n        12: [4, 8],\n")
    (work / REL).write_text(typed)
    store = str(work.parent / "store")
    assert run_cli("patch", "save", "mine", str(work), "--store", store).code == 0
    values = _values(tmp_path / "values.json", world_size=8, max_size=48 << 20, multimem=False)
    res = _fix(work, *_comm_only(work), "--values", str(values), "--prefer", prefer)
    assert res.code == 0, res.err
    text = (work / REL).read_text()
    if prefer == "upstream":
        assert "12: [4, 8],\n" in text
        assert "_WORLD_SIZES_MULTIMEM[12] = [4, 8]: kept (not written by capgap); --prefer ours" in res.err
    else:
        assert f"        12: [4],  # world size 8 {MEASURED}; 4 as they were in your entry\n" in text
    assert f"    12: {{  # {MEASURED}\n        8: 48 * MiB,\n    }},\n" in text  # the missing one: measured


def test_pip_installed_fix_then_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "toyval", "1.0", {"toyval/__init__.py": "", "toyval/comm.py": COMM + USE})
    python, site = make_venv(tmp_path / "venv")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    pip = [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps"]
    subprocess.run([*pip, str(wheels / "toyval-1.0-py3-none-any.whl")], check=True)
    store = str(tmp_path / "store")
    common = ("--arch", "12.0", "--store", store, "--device", "RTX PRO 6000")
    assert run_cli("fix", "toyval", "--python", python, *common).code == 0
    values = _values(tmp_path / "values.json", world_size=2, max_size=16 << 20, multimem=False)
    res = run_cli("fix", "toyval", "--values", str(values), *common)  # the store knows the environment
    assert res.code == 0, res.err
    text = (site / "toyval/comm.py").read_text()
    assert f"    12: {{  # {MEASURED}\n        2: 16 * MiB,\n    }},\n" in text
    assert f"        12: [6, 8],  # world size 2 {MEASURED}; 6, 8 {NOTE}\n" in text
    again = run_cli("upgrade", "toyval", "--store", store, "--format", "json", "--", "true")
    assert again.code == 0 and json.loads(again.out)["saved_patch"] is None, again.err
    rev = run_cli("patch", "apply", "toyval", "--reverse", "--store", store)
    assert rev.code == 0 and (site / "toyval/comm.py").read_text() == COMM + USE
