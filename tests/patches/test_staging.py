"""`upgrade` on a git checkout keeps the index: files staged before are staged again after the
re-apply, a rollback puts the index entries back exactly, and a partly staged file says where
its staged version is."""

from __future__ import annotations

import json

from tests.cli_runner import run_cli
from tests.patches.conftest import GATE_V1, TABLES_V1, Repos, with_local_edit
from tests.patches.helpers import git

GATE_FIXED = GATE_V1.replace("(9, 10)", "(9, 10, 12)")
UPSTREAM_TABLES = TABLES_V1.replace("9: [4, 6, 8]", "9: [2, 4, 6, 8]")  # next to the local edit


def _upgrade(repos: Repos, *cmd: str) -> dict:
    res = run_cli("upgrade", str(repos.work), "--store", str(repos.store), "--format", "json", "--", *cmd)
    return {"code": res.code, **json.loads(res.out)}


def _index(repos: Repos) -> tuple[str, str]:
    return git(repos.work, "ls-files", "-s").stdout, git(repos.work, "status", "--porcelain").stdout


def test_staged_files_are_staged_again_after_the_upgrade(repos: Repos) -> None:
    repos.upstream_commit({"pkg/tables.py": UPSTREAM_TABLES})
    (repos.work / "pkg/tables.py").write_text(with_local_edit(TABLES_V1))
    (repos.work / "pkg/sm120.py").write_text("SMEM_KB = 99\n")
    git(repos.work, "add", "pkg/tables.py", "pkg/sm120.py")  # staged: an edit and a new file
    (repos.work / "pkg/gate.py").write_text(GATE_FIXED)  # not staged
    report = _upgrade(repos, "git", "pull", "-q")
    assert report["code"] == 0, report
    outcomes = {f["path"]: f["outcome"] for p in report["patches"] for f in p["files"]}
    assert outcomes == {"pkg/gate.py": "applied", "pkg/sm120.py": "applied", "pkg/tables.py": "merged"}
    assert git(repos.work, "status", "--porcelain").stdout.splitlines() == [
        " M pkg/gate.py",
        "A  pkg/sm120.py",
        "M  pkg/tables.py",
    ]
    staged = git(repos.work, "show", ":pkg/tables.py").stdout
    assert staged == (repos.work / "pkg/tables.py").read_text() == with_local_edit(UPSTREAM_TABLES)
    assert report["messages"] == []


def test_a_failed_command_puts_the_index_back_exactly(repos: Repos) -> None:
    (repos.work / "pkg/tables.py").write_text(with_local_edit(TABLES_V1))
    (repos.work / "pkg/sm120.py").write_text("SMEM_KB = 99\n")
    git(repos.work, "add", "pkg/tables.py", "pkg/sm120.py")
    (repos.work / "pkg/tables.py").write_text(with_local_edit(TABLES_V1) + "# more, unstaged\n")  # partly
    git(repos.work, "rm", "-q", "README")  # a staged removal
    before = _index(repos)
    report = _upgrade(repos, "git", "pull", "--no-such-flag")
    assert report["code"] == 1 and report["rolled_back"].startswith("the command failed")
    assert _index(repos) == before


def test_a_partly_staged_file_names_its_staged_version(repos: Repos) -> None:
    repos.upstream_commit({"pkg/tables.py": UPSTREAM_TABLES})
    (repos.work / "pkg/tables.py").write_text(with_local_edit(TABLES_V1))
    git(repos.work, "add", "pkg/tables.py")
    oid = git(repos.work, "rev-parse", ":pkg/tables.py").stdout.strip()
    (repos.work / "pkg/tables.py").write_text(with_local_edit(TABLES_V1) + "# more, unstaged\n")
    report = _upgrade(repos, "git", "pull", "-q")
    assert report["code"] == 0, report
    assert report["messages"] == [
        "pkg/tables.py was partly staged before the upgrade: only the working-tree version was "
        f"carried over; the staged version is `git show {oid}`"
    ]
    assert git(repos.work, "show", oid).stdout == with_local_edit(TABLES_V1)
    assert git(repos.work, "status", "--porcelain").stdout.splitlines() == [" M pkg/tables.py"]


def test_rollback_on_conflict_puts_the_index_back_exactly(repos: Repos) -> None:
    repos.upstream_commit({"pkg/gate.py": GATE_V1.replace("(9, 10)", "(9, 10, 11)")})
    (repos.work / "pkg/gate.py").write_text(GATE_FIXED)
    (repos.work / "pkg/tables.py").write_text(with_local_edit(TABLES_V1))
    git(repos.work, "add", "pkg/gate.py")
    before = _index(repos)
    res = run_cli(
        "upgrade",
        str(repos.work),
        "--store",
        str(repos.store),
        "--rollback-on-conflict",
        "--",
        "git",
        "pull",
        "-q",
    )
    assert res.code == 1 and "pre-upgrade state restored" in res.out
    assert _index(repos) == before
