"""Files that cannot be read while local changes are detected: reported as skipped with the
reason, the rest is still saved; `upgrade` refuses (their change could be neither saved nor
put back). Root reads chmod-000 files, so those tests use what root cannot read either: a
symlink loop, a socket, a FIFO (never opened: that would block)."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from capgap.findings import Skipped
from capgap.patches.detect import PatchTarget, local_changes
from capgap.patches.journal import sha256
from tests.cli_runner import run_cli
from tests.patches.conftest import GATE_V1, TABLES_V1, Repos, with_local_edit
from tests.patches.helpers import tree_sums

LOOP = "cannot read: Too many levels of symbolic links"


def _loop(repo: Path, rel: str) -> None:
    """rel and rel.other: two symlinks that point at each other."""
    base = rel.rsplit("/", 1)[-1]
    os.symlink(f"{base}.other", repo / rel)
    os.symlink(base, repo / f"{rel}.other")


def test_save_skips_an_unreadable_file_and_saves_the_rest(repos: Repos) -> None:
    (repos.work / "pkg/tables.py").write_text(with_local_edit(TABLES_V1))
    _loop(repos.work, "pkg/loop.py")
    res = run_cli("patch", "save", "fix", str(repos.work), "--store", str(repos.store))
    assert res.code == 1, res.err
    assert f"skipped pkg/loop.py: {LOOP} (not saved)" in res.err.replace("\n", " ")
    meta = json.loads((repos.store / "fix/meta.json").read_text())
    assert [f["path"] for f in meta["files"]] == ["pkg/tables.py"]

    (repos.work / "pkg/gate.py").write_text(GATE_V1.replace("(9, 10)", "(9, 10, 12)"))
    as_json = run_cli(
        "patch", "save", "gate", str(repos.work), "--store", str(repos.store), "--format", "json"
    )
    out = json.loads(as_json.out)
    assert as_json.code == 1 and [f["path"] for f in out["files"]] == ["pkg/gate.py"]
    assert sorted((s["path"], s["reason"]) for s in out["skipped"]) == [
        ("pkg/loop.py", LOOP),
        ("pkg/loop.py.other", LOOP),
    ]


def test_only_unreadable_changes_is_a_clear_error(repos: Repos) -> None:
    _loop(repos.work, "loop.py")
    res = run_cli("patch", "save", "fix", str(repos.work), "--store", str(repos.store))
    assert res.code == 2 and f"skipped loop.py: {LOOP}" in res.err
    assert "Traceback" not in res.err


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads chmod-000 files (the loop tests cover root)")
def test_save_skips_a_chmod_000_edit(repos: Repos) -> None:
    (repos.work / "pkg/tables.py").write_text(with_local_edit(TABLES_V1))
    (repos.work / "pkg/gate.py").write_text(GATE_V1.replace("(9, 10)", "(9, 10, 12)"))
    (repos.work / "pkg/gate.py").chmod(0)
    try:
        res = run_cli(
            "patch", "save", "fix", str(repos.work), "--store", str(repos.store), "--format", "json"
        )
    finally:
        (repos.work / "pkg/gate.py").chmod(0o644)
    out = json.loads(res.out)
    assert res.code == 1 and [f["path"] for f in out["files"]] == ["pkg/tables.py"]
    assert out["skipped"] == [{"path": "pkg/gate.py", "reason": "cannot read: Permission denied"}]


def test_upgrade_refuses_and_touches_nothing_when_a_file_cannot_be_read(repos: Repos) -> None:
    repos.upstream_commit({"README": "engine v2\n"})
    (repos.work / "pkg/tables.py").write_text(with_local_edit(TABLES_V1))
    _loop(repos.work, "loop.py")
    before = tree_sums(repos.work)
    res = run_cli("upgrade", str(repos.work), "--store", str(repos.store), "--", "git", "pull", "-q")
    assert res.code == 2
    assert "refusing to upgrade: 2 file(s) cannot be read (loop.py: " + LOOP in res.err.replace("\n", " ")
    assert tree_sums(repos.work) == before and not list(repos.store.glob("*/meta.json"))
    assert (repos.work / "README").read_text() == "engine\n"


def test_installed_dist_skips_sockets_and_fifos_without_blocking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "site-packages"
    (root / "toy").mkdir(parents=True)
    shipped = {"toy/__init__.py": b"", "toy/a.py": b"A = 1\n", "toy/b.py": b"B = 1\n", "toy/c.py": b"C = 1\n"}
    for rel, data in shipped.items():
        (root / rel).write_bytes(data)
    target = PatchTarget(
        "dist", "toy", root, version="1.0", record={r: sha256(d) for r, d in shipped.items()}
    )
    (root / "toy/a.py").write_bytes(b"A = 2\n")  # a readable edit
    (root / "toy/b.py").unlink()
    os.mkfifo(root / "toy/b.py")  # a FIFO where a shipped file was: opening it would block
    (root / "toy/c.py").unlink()
    (root / "toy/c.py").mkdir()  # a directory where a shipped file was: the file is gone
    os.mkfifo(root / "toy/new_fifo.py")
    sock = socket.socket(socket.AF_UNIX)
    try:
        monkeypatch.chdir(root / "toy")  # a socket's path must be short: bind it relative
        sock.bind("new_sock.py")
        changes, skipped = local_changes(target)
    finally:
        sock.close()
    assert changes == {"toy/a.py": (sha256(b"A = 1\n"), b"A = 2\n"), "toy/c.py": (sha256(b"C = 1\n"), None)}
    assert sorted(skipped, key=lambda s: s.path) == [
        Skipped("toy/b.py", "cannot read: not a regular file (a FIFO)"),
        Skipped("toy/new_fifo.py", "cannot read: not a regular file (a FIFO)"),
        Skipped("toy/new_sock.py", "cannot read: not a regular file (a socket)"),
    ]
