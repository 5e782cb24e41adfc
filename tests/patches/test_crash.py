"""Crash injection: kill capgap (os._exit via CAPGAP_CRASH_AT) at every durable write of an
apply and of an upgrade, then prove by checksums that nothing was lost and the next run ends in
a complete state."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from capgap.cli import main
from capgap.patches import journal
from capgap.patches.store import Store
from tests.cli_runner import run_cli
from tests.patches.conftest import GATE_V1, TABLES_V1, Repos, with_local_edit
from tests.patches.helpers import git, tree_sums

CRASHED = 86
TABLES_UP = TABLES_V1.replace("9: [4, 6, 8]", "9: [2, 4, 6, 8]")  # upstream, two lines from the edit
GATE_FIXED = GATE_V1.replace("(9, 10)", "(9, 10, 12)")


def _capgap_killed_at(n: int, *args: str) -> int:
    """Run capgap in a forked child that dies at its nth durable step; its exit status."""
    pid = os.fork()
    if pid == 0:  # the child: capgap as the CLI runs it, killed from inside by the hook
        code = 3
        try:
            os.environ["CAPGAP_CRASH_AT"] = str(n)
            journal._steps = 0
            with open(os.devnull, "w") as sink:
                sys.stdout = sys.stderr = sink
                code = main(list(args))
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_crash_hook_kills_the_real_cli_process(repos: Repos) -> None:
    (repos.work / "README").write_text("edited\n")
    env = {**os.environ, "CAPGAP_CRASH_AT": "1", "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    args = ["patch", "save", "x", str(repos.work), "--store", str(repos.store)]
    proc = subprocess.run([sys.executable, "-m", "capgap", *args], env=env, capture_output=True)
    assert proc.returncode == CRASHED
    assert Store(repos.store).names() == []  # died before the patch was renamed into place
    assert run_cli(*args).code == 0 and Store(repos.store).names() == ["x"]


def _store_intact(store: Path) -> None:
    st = Store(store)
    for patch in st.patches():  # every blob exists and matches its hash
        for entry in patch.files:
            patch.contents(entry)


def _reset(repos: Repos, head: str, edits: dict[str, str]) -> None:
    git(repos.work, "reset", "-q", "--hard", head)
    git(repos.work, "clean", "-q", "-fdx")
    for rel, text in edits.items():
        (repos.work / rel).write_text(text)


def test_apply_killed_at_every_write_loses_nothing_and_next_run_completes(repos: Repos) -> None:
    edits = {
        "pkg/tables.py": with_local_edit(TABLES_V1),
        "pkg/gate.py": GATE_FIXED,
        "pkg/sm120.py": "X = 1\n",
    }
    for rel, text in edits.items():
        (repos.work / rel).write_text(text)
    assert run_cli("patch", "save", "bw", str(repos.work), "--store", str(repos.store)).code == 0
    repos.upstream_commit({"pkg/tables.py": TABLES_UP})
    head = git(repos.work, "rev-parse", "HEAD").stdout.strip()
    _reset(repos, head, {})
    git(repos.work, "pull", "-q")
    new_head = git(repos.work, "rev-parse", "HEAD").stdout.strip()
    before = tree_sums(repos.work)
    assert run_cli("patch", "apply", str(repos.work), "--store", str(repos.store)).code == 0
    after = tree_sums(repos.work)
    assert after["pkg/tables.py"] != before["pkg/tables.py"]
    store_before = tree_sums(repos.store, skip=(".runs", ".lock"))

    n = 0
    while True:
        n += 1
        _reset(repos, new_head, {})
        rc = _capgap_killed_at(n, "patch", "apply", str(repos.work), "--store", str(repos.store))
        if rc != CRASHED:
            assert rc == 0 and tree_sums(repos.work) == after
            break
        # killed: every file holds its old or its new content, never anything else
        now = tree_sums(repos.work)
        for rel in set(before) | set(after):
            assert now.get(rel) in {before.get(rel), after.get(rel)}, (n, rel)
        _store_intact(repos.store)
        res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store))
        assert res.code == 0, (n, res.err)
        assert tree_sums(repos.work) == after, n
        assert tree_sums(repos.store, skip=(".runs", ".lock")) == store_before
    assert n > 6  # journal, backup, three files (temp + rename each), end


def test_upgrade_killed_at_every_write_loses_no_edit_and_next_run_completes(repos: Repos) -> None:
    head = git(repos.work, "rev-parse", "HEAD").stdout.strip()
    repos.upstream_commit({"pkg/tables.py": TABLES_UP})
    edits = {"pkg/tables.py": with_local_edit(TABLES_V1), "pkg/sm120.py": "X = 1\n"}
    _reset(repos, head, edits)
    pre_upgrade = tree_sums(repos.work)
    args = (
        "upgrade",
        str(repos.work),
        "--store",
        str(repos.store),
        "--name",
        "bw",
        "--",
        "git",
        "pull",
        "-q",
    )
    assert run_cli(*args).code == 0
    post_upgrade = tree_sums(repos.work)
    assert (repos.work / "pkg/tables.py").read_text() == with_local_edit(TABLES_UP)
    edit_sums = {rel: pre_upgrade[rel] for rel in edits}

    n = 0
    while True:
        n += 1
        _reset(repos, head, edits)
        shutil.rmtree(repos.store)
        rc = _capgap_killed_at(n, *args)
        if rc != CRASHED:
            assert rc == 0 and tree_sums(repos.work) == post_upgrade
            break
        # killed: each local edit is still in the tree or saved in the store (by checksum), or,
        # once the re-applied patch was recorded against the new upstream (rebase.py), the tree's
        # file is exactly that patch's patched copy; first what every next run does to the store
        # (finish or undo a half-done replace of a patch)
        with Store(repos.store).lock():
            pass
        _store_intact(repos.store)
        now = tree_sums(repos.work)
        saved = {(e.path, e.patched_sha) for p in Store(repos.store).patches() for e in p.files}
        for rel, digest in edit_sums.items():
            assert now.get(rel) == digest or {(rel, digest), (rel, now.get(rel))} & saved, (n, rel)
        # the next run on the target finishes the upgrade or rolls it back, to an exact state
        res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store))
        assert res.code == 0, (n, res.err)
        now = tree_sums(repos.work)
        now_head = git(repos.work, "rev-parse", "HEAD").stdout.strip()
        new_head = git(repos.upstream, "rev-parse", "HEAD").stdout.strip()
        assert (now_head, now) in [(head, pre_upgrade), (new_head, post_upgrade)], n
        assert not (repos.work / ".git" / "capgap" / "run" / "journal.jsonl").exists()
    assert n > 15
