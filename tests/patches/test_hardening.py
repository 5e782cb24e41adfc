"""Issue 16, rows 1, 4, 5, 8, 9 and 11: hostile stores and journals, and runs from other stores
and other users. Each test builds the attack of its row by hand and runs the real CLI."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from capgap.patches.store import Store
from tests.cli_runner import run_cli
from tests.patches.conftest import TABLES_V1, Repos, with_local_edit
from tests.patches.helpers import git, tree_sums
from tests.patches.test_crash import CRASHED, TABLES_UP, _capgap_killed_at

FSMONITOR = "[core]\n\tfsmonitor = touch {marker}\n"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _save(repos: Repos, name: str = "bw", store: Path | None = None) -> Path:
    store = store or repos.store
    (repos.work / "pkg/tables.py").write_text(with_local_edit(TABLES_V1))
    assert run_cli("patch", "save", name, str(repos.work), "--store", str(store)).code == 0
    (repos.work / "pkg/tables.py").write_text(TABLES_V1)
    return store / name


def _forge_entry(pdir: Path, rel: str, pristine: bytes | None, patched: bytes) -> None:
    """A meta.json entry with matching blobs, as a store that was tampered with would hold."""
    meta = json.loads((pdir / "meta.json").read_text())
    for data in (pristine, patched):
        if data is not None:
            (pdir / "blobs" / _sha(data)).write_bytes(data)
    meta["files"] = [
        {"path": rel, "pristine_sha256": pristine and _sha(pristine), "patched_sha256": _sha(patched)}
    ]
    (pdir / "meta.json").write_text(json.dumps(meta))


# --- row 1: a stored patch writes into .git; `show` is not what `apply` writes --------------


@pytest.mark.parametrize("rel", [".git/config", ".GIT/config", ".git./config", "pkg/.git/config"])
def test_a_patch_into_git_s_own_directory_is_refused(repos: Repos, tmp_path: Path, rel: str) -> None:
    marker = tmp_path / "fsmonitor-ran"
    config = repos.work / ".git" / "config"
    before = config.read_bytes()
    pdir = _save(repos)
    _forge_entry(pdir, rel, before, before + FSMONITOR.format(marker=marker).encode())
    res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store))
    assert res.code == 1 and "inside git's own directory" in res.err and "not applied" in res.err
    assert "applied" not in res.out
    assert config.read_bytes() == before
    git(repos.work, "status")
    assert not marker.exists()
    listed = run_cli("patch", "list", "--store", str(repos.store), "--format", "json")
    assert json.loads(listed.out)["patches"][0]["status"].startswith("damaged: refusing path")


def test_apply_writes_no_path_git_would_not_track(repos: Repos) -> None:
    (repos.work / ".gitignore").write_text("build/\n")
    git(repos.work, "add", ".gitignore")
    git(repos.work, "commit", "-q", "-m", "ignore build")
    git(repos.work, "init", "-q", str(repos.work / "vendored"))  # a nested repository
    store = Store(repos.store)
    desc = {"kind": "git", "name": "work", "root": str(repos.work)}
    store.save_patch("ignored", desc, {"build/run.py": (None, b"import os\n")})
    store.save_patch("nested", desc, {"vendored/hook.py": (None, b"import os\n")})
    before = tree_sums(repos.work)
    for name, why in (
        ("ignored", "ignored by .gitignore"),
        ("nested", "inside the nested repository vendored"),
    ):
        res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store), "--patch", name)
        assert res.code == 2, res.err
        assert "git would not track it" in res.err and why in res.err
    assert tree_sums(repos.work) == before


def test_show_prints_what_apply_writes_not_the_stored_diff(repos: Repos) -> None:
    pdir = _save(repos)
    honest = (pdir / "patch.diff").read_text()
    (pdir / "patch.diff").write_text("diff --git a/README b/README\n-engine\n+a harmless typo fix\n")
    res = run_cli("patch", "show", "bw", "--store", str(repos.store), "--format", "json")
    assert res.code == 0
    assert json.loads(res.out)["diff"] == honest  # made from the blobs `apply` writes
    assert "does not match its stored copies" in res.err
    assert "harmless" not in res.out
    (pdir / "patch.diff").write_text(honest)
    quiet = run_cli("patch", "show", "bw", "--store", str(repos.store))
    assert quiet.code == 0 and "does not match" not in quiet.err


# --- row 4: the target lock, whatever the store and whoever the user ------------------------


def _child_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CAPGAP_", "XDG_"))}
    return {**env, "HOME": str(home), "PYTHONPATH": str(Path(__file__).parents[2] / "src")}


def test_two_upgrades_with_other_stores_and_homes_do_not_both_run(repos: Repos, tmp_path: Path) -> None:
    """Two `upgrade CHECKOUT --store A/B -- git pull` with HOME=h1/h2, the second started while
    the first runs: the second is refused at once, the first ends with edits and upstream."""
    (repos.work / "pkg/tables.py").write_text(with_local_edit(TABLES_V1))
    repos.upstream_commit({"pkg/tables.py": TABLES_UP})
    homes = [tmp_path / "h1", tmp_path / "h2"]
    for home in homes:
        home.mkdir()
    slow_pull = ["--", "sh", "-c", "sleep 1.5; git pull -q"]

    def upgrade(store: str, home: Path) -> subprocess.Popen[str]:
        cmd = [sys.executable, "-m", "capgap", "upgrade", str(repos.work), "--store", store, *slow_pull]
        return subprocess.Popen(
            cmd, env=_child_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    first = upgrade(str(tmp_path / "A"), homes[0])
    deadline = time.monotonic() + 30
    while not (repos.work / ".git" / "capgap" / "run" / "journal.jsonl").exists():  # A is in its command
        assert time.monotonic() < deadline and first.poll() is None, first.communicate()
        time.sleep(0.05)
    second = upgrade(str(tmp_path / "B"), homes[1])
    out2, err2 = second.communicate(timeout=60)
    out1, err1 = first.communicate(timeout=60)
    assert second.returncode == 2 and "another capgap run is working on" in err2, (out2, err2)
    assert first.returncode == 0, (out1, err1)
    assert (repos.work / "pkg/tables.py").read_text() == with_local_edit(TABLES_UP)
    assert git(repos.work, "rev-parse", "HEAD").stdout == git(repos.upstream, "rev-parse", "HEAD").stdout
    assert not (tmp_path / "B").exists() or Store(tmp_path / "B").names() == []


def test_the_lock_is_shared_with_a_user_who_cannot_write_it(
    repos: Repos, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another user's lock file (read-only to this one) still locks: flock needs only a read.
    Root may write any file, so the refused write is faked at that one boundary (os.open)."""
    import fcntl

    from capgap.patches.lock import flock
    from capgap.patches.targetstate import lock_path

    path = lock_path(repos.work)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("4242")
    real_open = os.open

    def not_writable(file: object, flags: int, *args: object) -> int:
        if str(file) == str(path) and flags & (os.O_RDWR | os.O_WRONLY):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", not_writable)
    holder = real_open(path, os.O_RDONLY)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)  # the other user's run holds it
        res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store))
        assert res.code == 2 and "another capgap run is working on" in res.err and "4242" in res.err
    finally:
        os.close(holder)
    with flock(path, "busy"):  # free again: taken through a read-only open
        assert path.read_text() == "4242"  # not ours to rewrite


# --- rows 5 and 11: journals are the target's, and trusted only inside their run directory ---


def _forged_journal(run_dir: Path, root: Path, rel: str, backup: str, after: bytes) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    before = Path(backup).read_bytes() if Path(backup).is_file() else b""
    records = [
        {"op": "begin", "kind": "apply", "root": str(root), "time": 0},
        {"op": "write", "path": rel, "before": _sha(before), "after": _sha(after), "backup": backup},
    ]
    (run_dir / "journal.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


@pytest.mark.parametrize("where", ["target", "legacy-store"])
def test_a_forged_journal_copies_no_file_into_the_target(repos: Repos, where: str) -> None:
    """A journal record whose backup is /etc/passwd made the next run copy it into a.py."""
    store = Store(repos.store)
    tables = (repos.work / "pkg/tables.py").read_bytes()
    run_dir = store.run_dir(repos.work) if where == "target" else store.legacy_run_dir(repos.work)
    _forged_journal(run_dir, repos.work, "pkg/tables.py", "/etc/passwd", tables)
    res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store))
    if where == "legacy-store":  # a journal in a store is never replayed, only named
        assert "is not replayed" in res.err, res.err
        assert (repos.work / "pkg/tables.py").read_bytes() == tables
        inside = run_dir / "blobs" / "b"
        inside.parent.mkdir(parents=True)
        inside.write_bytes(b"A = 'injected'\n")
        _forged_journal(run_dir, repos.work, "pkg/tables.py", str(inside), tables)
        res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store))
        assert "is not replayed" in res.err and (repos.work / "pkg/tables.py").read_bytes() == tables
        return
    assert "backup is not inside the run's directory" in res.err, res.err
    assert (repos.work / "pkg/tables.py").read_bytes() == tables
    # a backup inside the run directory that is a symlink out of it is refused the same way
    (run_dir / "blobs").mkdir(parents=True)
    link = run_dir / "blobs" / _sha(Path("/etc/passwd").read_bytes())
    link.symlink_to("/etc/passwd")
    _forged_journal(run_dir, repos.work, "pkg/tables.py", str(link), tables)
    res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store))
    assert "backup is not inside the run's directory" in res.err, res.err
    assert (repos.work / "pkg/tables.py").read_bytes() == tables


@pytest.mark.parametrize(
    "record",
    [
        ["write", "pkg/tables.py"],
        {"op": "write", "path": "../outside.py", "before": None, "after": None, "backup": None},
        {"op": "write", "path": "pkg/tables.py", "before": 7, "after": None, "backup": None},
        {"op": "begin"},
    ],
)
def test_a_malformed_journal_is_refused_in_one_line(repos: Repos, record: object) -> None:
    run_dir = Store(repos.store).run_dir(repos.work)
    run_dir.mkdir(parents=True)
    begin = {"op": "begin", "kind": "apply", "root": str(repos.work), "time": 0}
    (run_dir / "journal.jsonl").write_text(json.dumps(begin) + "\n" + json.dumps(record) + "\n")
    before = tree_sums(repos.work.parent, skip=(".git", "store"))
    res = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store))
    assert res.code == 2 and "malformed record" in res.err and "Traceback" not in res.err
    assert tree_sums(repos.work.parent, skip=(".git", "store")) == before


def test_a_run_killed_under_one_store_is_recovered_under_another(repos: Repos, tmp_path: Path) -> None:
    """Row 11: the tree stayed half-done until store A was used again."""
    _save(repos)
    clean = tree_sums(repos.work)
    for n in range(3, 12):  # somewhere among the renames of the apply
        rc = _capgap_killed_at(n, "patch", "apply", str(repos.work), "--store", str(repos.store))
        if rc == CRASHED and (repos.work / ".git" / "capgap" / "run" / "journal.jsonl").exists():
            break
        git(repos.work, "checkout", "-q", "--", ".")
    else:
        pytest.fail("no kill left a journal")
    other = tmp_path / "other-store"
    res = run_cli("patch", "apply", str(repos.work), "--store", str(other))
    assert "rolled back an interrupted apply" in res.err, res.err
    assert tree_sums(repos.work) == clean
    assert not (repos.work / ".git" / "capgap" / "run").exists()


def test_an_upgrade_killed_after_its_command_is_finished_under_another_store(
    repos: Repos, tmp_path: Path
) -> None:
    (repos.work / "pkg/tables.py").write_text(with_local_edit(TABLES_V1))
    repos.upstream_commit({"pkg/tables.py": TABLES_UP})
    args = [
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
    ]
    n = 0
    while True:  # the first kill after the command ran: the edit is only in store A now
        n += 1
        head = git(repos.work, "rev-parse", "HEAD").stdout.strip()
        rc = _capgap_killed_at(n, *args)
        moved = git(repos.work, "rev-parse", "HEAD").stdout.strip() != head
        if rc == CRASHED and moved:
            break
        assert rc == CRASHED and n < 60, rc
    res = run_cli("patch", "apply", str(repos.work), "--store", str(tmp_path / "B"))
    assert f"re-applying the patches of {repos.store}" in res.err, res.err
    assert (repos.work / "pkg/tables.py").read_text() == with_local_edit(TABLES_UP)


# --- rows 8 and 9: a damaged store gives one line, and one damaged patch blocks nothing else --


def _damage(repos: Repos, how: str) -> None:
    pdir = repos.store / "bw"
    if how == "meta-random":
        (pdir / "meta.json").write_bytes(os.urandom(4096))
    elif how == "meta-nested":
        (pdir / "meta.json").write_text("[" * 100_000)
    elif how == "meta-types":
        meta = json.loads((pdir / "meta.json").read_text())
        meta.update({"files": 7, "target": ["x"], "for": {"a": 1}})
        (pdir / "meta.json").write_text(json.dumps(meta))
    elif how == "meta-fifo":
        (pdir / "meta.json").unlink()
        os.mkfifo(pdir / "meta.json")
    elif how == "meta-huge":
        with (pdir / "meta.json").open("r+b") as fh:
            fh.truncate(64 << 20)
    elif how == "bad-range":
        meta = json.loads((pdir / "meta.json").read_text())
        meta["for"] = "not a === range"
        (pdir / "meta.json").write_text(json.dumps(meta))
    elif how == "semantic-not-json":
        (pdir / "semantic.json").write_bytes(b"\xff{not json")
    elif how == "lock-dir":
        (repos.store / ".lock").unlink()
        (repos.store / ".lock").mkdir()
    elif how == "leftovers":  # a died replace/drop, as a forged store may carry them
        (repos.store / ".trash-..-1").mkdir()
        (repos.store / ".trash-..-1" / "meta.json").write_text("{}")
        (repos.store / ".trash-bw-2").symlink_to(repos.store.parent / "outside", target_is_directory=True)
        (repos.store / ".tmp-bw-3").symlink_to(repos.store.parent / "outside", target_is_directory=True)
    elif how == "store-is-a-file":
        import shutil

        shutil.rmtree(repos.store)
        repos.store.write_text("not a directory\n")
    elif how == "lock-symlink":  # flock used to open it O_CREAT and truncate what it points to
        (repos.store / ".lock").unlink()
        (repos.store / ".lock").symlink_to(repos.store.parent / "victim")


DAMAGE = [
    "meta-random",
    "meta-nested",
    "meta-types",
    "meta-fifo",
    "meta-huge",
    "bad-range",
    "semantic-not-json",
    "lock-dir",
    "lock-symlink",
    "leftovers",
    "store-is-a-file",
]


def _verbs(repos: Repos, tmp_path: Path) -> list[list[str]]:
    store = ["--store", str(repos.store)]
    (repos.work / "README").write_text("local edit\n")  # something for `save` to save
    edit_dir = tmp_path / "edit"
    return [
        ["patch", "save", "new", str(repos.work), *store],
        ["patch", "list", *store],
        ["patch", "show", "bw", *store],
        ["patch", "apply", str(repos.work), *store],
        ["patch", "apply", *store],
        ["patch", "drop", "bw", *store],
        ["patch", "edit", "no-such-dist-capgap", "--dir", str(edit_dir), *store],
        ["patch", "commit", str(edit_dir), *store],
        ["upgrade", str(repos.work), *store, "--", "true"],
    ]


@pytest.mark.usefixtures("no_hang")
@pytest.mark.parametrize("how", DAMAGE)
def test_every_verb_on_a_damaged_store_is_one_line_never_a_traceback(
    repos: Repos, tmp_path: Path, how: str
) -> None:
    _save(repos)
    victim = tmp_path / "victim"
    victim.write_text("not capgap's\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "keep").write_text("mine\n")
    _damage(repos, how)
    for args in _verbs(repos, tmp_path):
        res = run_cli(*args)
        assert "Traceback" not in res.err, (args, res.err)
        assert res.code in (0, 1, 2), (args, res.code)
        if res.code == 2:
            errors = [line for line in res.err.splitlines() if line.startswith("error:")]
            assert len(errors) == 1, (args, res.err)
        (repos.work / "README").write_bytes(b"local edit\n")
    assert victim.read_text() == "not capgap's\n"
    assert [p.name for p in (tmp_path / "outside").iterdir()] == ["keep"]


def test_one_damaged_patch_blocks_nothing_else(repos: Repos) -> None:
    """Row 9: `patch list` and `patch drop` of the damaged patch itself exited 2."""
    _save(repos, "good")
    bad = repos.store / "bad"
    (bad / "blobs").mkdir(parents=True)
    meta = json.loads((repos.store / "good" / "meta.json").read_text())
    meta["files"] = [{"path": "../../etc/x", "pristine_sha256": None, "patched_sha256": "0" * 64}]
    (bad / "meta.json").write_text(json.dumps(meta))
    listed = run_cli("patch", "list", "--store", str(repos.store), "--format", "json")
    assert listed.code == 0, listed.err
    rows = {r["name"]: r["status"] for r in json.loads(listed.out)["patches"]}
    assert rows["good"] == "not applied" and rows["bad"].startswith("damaged: refusing path '../../etc/x'")
    applied = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store), "--format", "json")
    assert applied.code == 1 and "patch bad:" in applied.err and "not applied" in applied.err
    assert list(json.loads(applied.out)["damaged"]) == ["bad"]
    assert (repos.work / "pkg/tables.py").read_text() == with_local_edit(TABLES_V1)  # good was applied
    dropped = run_cli("patch", "drop", "bad", "--store", str(repos.store))
    assert dropped.code == 0, dropped.err
    assert Store(repos.store).names() == ["good"] and not bad.exists()
    again = run_cli("patch", "apply", str(repos.work), "--store", str(repos.store))
    assert again.code == 0 and "damaged" not in again.err
