"""Crafted stores and trees: `..`, absolute paths and symlink escapes are refused; nothing is
written outside the target root. Plus the semantic slot's contract, at its boundary."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

import capgap
from capgap.errors import StoreError
from capgap.patches.safepath import check_rel
from capgap.patches.store import Store, store_dir
from tests.cli_runner import run_cli
from tests.patches.conftest import TABLES_V1, Repos, with_local_edit
from tests.patches.helpers import tree_sums


@pytest.mark.parametrize(
    "rel", ["../x.py", "a/../../x.py", "/etc/passwd", "C:/x", "a//b", "a/./b", "", "a\\b"]
)
def test_paths_that_leave_the_root_are_refused(rel: str) -> None:
    with pytest.raises(StoreError):
        check_rel(rel)


def test_default_store_is_off_limits_in_tests() -> None:
    with pytest.raises(AssertionError, match="default patch store"):
        store_dir(None)


def _saved(repos: Repos) -> Path:
    (repos.work / "pkg/tables.py").write_text(with_local_edit(TABLES_V1))
    assert run_cli("patch", "save", "bw", str(repos.work), "--store", str(repos.store)).code == 0
    (repos.work / "pkg/tables.py").write_text(TABLES_V1)
    return repos.store / "bw"


@pytest.mark.parametrize("evil", ["../outside.py", "/tmp/capgap-evil-abs.py", "pkg/../../outside.py"])
def test_crafted_meta_paths_are_refused_and_nothing_is_written(repos: Repos, evil: str) -> None:
    pdir = _saved(repos)
    meta = json.loads((pdir / "meta.json").read_text())
    meta["files"][0]["path"] = evil
    (pdir / "meta.json").write_text(json.dumps(meta))
    outside = tree_sums(repos.work.parent, skip=(".git", "store"))
    res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store))
    # the damaged patch is named and passed over (exit 1), the store's other patches still apply
    assert res.code == 1 and "refusing path" in res.err and "not applied" in res.err
    assert tree_sums(repos.work.parent, skip=(".git", "store")) == outside
    assert not Path("/tmp/capgap-evil-abs.py").exists()
    res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store), "--patch", "bw")
    assert res.code == 2 and "refusing path" in res.err  # named: an error


def test_symlinked_blob_and_patch_dir_are_refused(repos: Repos, tmp_path: Path) -> None:
    pdir = _saved(repos)
    secret = tmp_path / "secret.txt"
    secret.write_text("not yours\n")
    blob = next((pdir / "blobs").iterdir())
    blob.unlink()
    blob.symlink_to(secret)
    res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store))
    assert res.code == 2 and "not a regular file" in res.err
    (repos.store / "linked").symlink_to(pdir)
    assert "linked" not in Store(repos.store).names()
    res = run_cli("patch", "show", "linked", "--store", str(repos.store))
    assert res.code == 2 and "symlink" in res.err


def test_symlink_in_the_tree_leading_outside_is_refused(repos: Repos, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (repos.work / "pkg/out").symlink_to(outside)
    Store(repos.store).save_patch(
        "evil",
        {"kind": "git", "name": "work", "root": str(repos.work)},
        {"pkg/out/evil.py": (None, b"print('pwned')\n")},
    )
    res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store))
    assert res.code == 2 and "outside" in res.err
    assert list(outside.iterdir()) == []


def test_semantic_slot_calls_reapply_and_writes_its_files(
    repos: Repos, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The boundary to capgap.semantic (another package): lift at save, reapply on conflict."""
    calls: list[tuple[str, object]] = []

    def lift(rel: str, pristine: str, patched: str) -> list[dict[str, object]]:
        calls.append(("lift", rel))
        return [{"table": "TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES", "key": 12}]

    def reapply(records: list[dict[str, object]], *, root: Path, rel_path: str, current_text: str | None):  # noqa: ANN202
        calls.append(("reapply", (records, rel_path)))
        return {
            "outcome": "semantic",
            "detail": "key 12 re-added",
            "files": {"pkg/moved.py": "T = {12: 1}\n"},
        }

    fake = types.SimpleNamespace(lift=lift, reapply=reapply)
    monkeypatch.setitem(sys.modules, "capgap.semantic", fake)
    # `import capgap.semantic` reads the package attribute first once the real one was imported
    monkeypatch.setattr(capgap, "semantic", fake, raising=False)
    pdir = _saved(repos)
    assert json.loads((pdir / "semantic.json").read_text()) == [
        {"table": "TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES", "key": 12, "path": "pkg/tables.py"}
    ]
    # upstream rewrote the neighbouring line: git merge-file conflicts, the semantic step takes over
    (repos.work / "pkg/tables.py").write_text(TABLES_V1.replace("    10: {2: 64", "    10: {2: 128"))
    res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store), "--format", "json")
    assert res.code == 0, res.out
    f = json.loads(res.out)["targets"][0]["patches"][0]["files"][0]
    assert (f["outcome"], f["detail"], f["written"]) == ("semantic", "key 12 re-added", ["pkg/moved.py"])
    assert (repos.work / "pkg/moved.py").read_text() == "T = {12: 1}\n"
    assert [c for c in calls if c[0] == "reapply"][-1] == (
        "reapply",
        (
            [{"table": "TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES", "key": 12, "path": "pkg/tables.py"}],
            "pkg/tables.py",
        ),
    )

    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("bad record")

    fake = types.SimpleNamespace(lift=lift, reapply=broken)
    monkeypatch.setitem(sys.modules, "capgap.semantic", fake)
    monkeypatch.setattr(capgap, "semantic", fake, raising=False)
    (repos.work / "pkg/moved.py").unlink()
    res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store), "--format", "json")
    f = json.loads(res.out)["targets"][0]["patches"][0]["files"][0]
    assert res.code == 1 and f["outcome"] == "conflict"
    assert (
        f["detail"]
        == "1 conflicting region(s) in pkg/tables.py; semantic step failed: ValueError: bad record"
    )
