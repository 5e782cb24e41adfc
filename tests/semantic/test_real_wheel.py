"""`capgap fix` on SGLang's real all-reduce tables (the wheel is downloaded at test time, never
committed): the distributed package of sglang 0.5.23 is unpacked into a git checkout made here."""

from __future__ import annotations

import ast
import json
import zipfile
from pathlib import Path

import pytest

from capgap.semantic import lift
from tests.cli_runner import run_cli
from tests.configs.test_real_wheels import _wheel
from tests.patches.helpers import commit_all, git

pytestmark = pytest.mark.network

PACKAGE = "sglang/srt/distributed/"
TABLES = {
    "sglang/srt/distributed/device_communicators/all_reduce_utils.py": "TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES",
    "sglang/srt/distributed/device_communicators/torch_symm_mem.py": (
        "TorchSymmMemCommunicator._WORLD_SIZES_MULTIMEM"
    ),
}


@pytest.fixture
def checkout(wheel_cache: Path, tmp_path: Path) -> Path:
    wheel = _wheel(wheel_cache, "sglang==0.5.23")
    repo = tmp_path / "sglang"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(repo, [m for m in zf.namelist() if m.startswith(PACKAGE) and m.endswith(".py")])
    git(repo, "init", "-q")
    commit_all(repo, "sglang 0.5.23 distributed package")
    return repo


def test_fix_adds_key_12_to_both_allreduce_tables(checkout: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    res = run_cli("fix", str(checkout), "--arch", "12.0", "--store", str(store),
                  "--device", "RTX PRO 6000", "--format", "json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    entries = {(e["path"], e["symbol"], e["key"]) for e in data["entries"]}
    assert entries == {(p, s, "12") for p, s in TABLES.items()}
    assert [w for w in data["warnings"] if "_WORLD_SIZES_MULTIMEM[12.0]" in w and "no NVLink multicast" in w]
    records = json.loads((store / "fix-sm_120" / "semantic.json").read_text())
    for rel in TABLES:
        pristine = git(checkout, "show", f"HEAD:{rel}").stdout
        patched = (checkout / rel).read_text()
        ast.parse(patched)
        # what fix wrote is exactly what its records say
        assert lift(rel, pristine, patched) == [r for r in records if r["path"] == rel]
    again = run_cli("fix", str(checkout), "--arch", "12.0", "--store", str(store), "--device", "RTX PRO 6000")
    assert again.code == 0 and "nothing to fix" in again.err
