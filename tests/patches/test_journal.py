"""The journal on its own: rollback restores from backups and never clobbers a third party's edit."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

import pytest

from capgap.patches.journal import Journal, load_pending, sha256


def test_rollback_restores_backups_and_leaves_files_changed_since_alone(tmp_path: Path) -> None:
    root, run = tmp_path / "root", tmp_path / "run"
    root.mkdir()
    (root / "a.py").write_bytes(b"a0\n")
    (root / "b.py").write_bytes(b"b0\n")
    journal = Journal.start(run, root, "apply")
    journal.write_files([("a.py", b"a0\n", b"a1\n"), ("b.py", b"b0\n", b"b1\n"), ("new.py", None, b"n\n")])
    assert (root / "a.py").read_bytes() == b"a1\n" and (root / "new.py").exists()
    (root / "b.py").write_bytes(b"someone else\n")  # changed after our write

    pending = load_pending(run)  # as the next process sees it
    assert pending is not None and [r["path"] for r in pending.records if r["op"] == "write"] == [
        "a.py",
        "b.py",
        "new.py",
    ]
    warnings = pending.rollback()
    assert (root / "a.py").read_bytes() == b"a0\n"
    assert not (root / "new.py").exists()
    assert (root / "b.py").read_bytes() == b"someone else\n"
    assert warnings == ["b.py: changed by someone else since the run; left as it is"]
    assert sha256(b"a0\n") in {r.get("before") for r in pending.records}


def test_finished_run_leaves_no_journal_or_backup(tmp_path: Path) -> None:
    root, run = tmp_path / "root", tmp_path / "run"
    root.mkdir()
    (root / "a.py").write_bytes(b"a0\n")
    journal = Journal.start(run, root, "apply")
    journal.write_files([("a.py", b"a0\n", b"a1\n")])
    assert (run / "blobs" / str(sha256(b"a0\n"))).read_bytes() == b"a0\n"  # backup kept while running
    journal.finish()
    assert not run.exists() and load_pending(run) is None
    assert [p.name for p in root.iterdir()] == ["a.py"]  # no temp file left behind


def test_backup_is_a_hard_link_to_the_replaced_file_and_rollback_restores_it(tmp_path: Path) -> None:
    root, run = tmp_path / "root", tmp_path / "run"
    root.mkdir()
    (root / "a.py").write_bytes(b"a0\n")
    inode = (root / "a.py").stat().st_ino
    journal = Journal.start(run, root, "apply")
    journal.write_files([("a.py", b"a0\n", b"a1\n")])
    backup = run / "blobs" / str(sha256(b"a0\n"))
    assert backup.stat().st_ino == inode and backup.read_bytes() == b"a0\n"  # no copy was made
    assert (root / "a.py").stat().st_ino != inode and (root / "a.py").read_bytes() == b"a1\n"
    pending = load_pending(run)
    assert pending is not None and pending.rollback() == []
    assert (root / "a.py").read_bytes() == b"a0\n"


def test_backup_is_a_copy_when_no_link_can_be_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_link(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    root, run = tmp_path / "root", tmp_path / "run"
    root.mkdir()
    (root / "a.py").write_bytes(b"a0\n")
    inode = (root / "a.py").stat().st_ino
    monkeypatch.setattr(os, "link", no_link)
    journal = Journal.start(run, root, "apply")
    journal.write_files([("a.py", b"a0\n", b"a1\n")])
    backup = run / "blobs" / str(sha256(b"a0\n"))
    assert backup.stat().st_ino != inode and backup.read_bytes() == b"a0\n"
    pending = load_pending(run)
    assert pending is not None and pending.rollback() == []
    assert (root / "a.py").read_bytes() == b"a0\n"


def test_backup_holds_what_was_read_when_the_file_changed_since(tmp_path: Path) -> None:
    root, run = tmp_path / "root", tmp_path / "run"
    root.mkdir()
    (root / "a.py").write_bytes(b"changed after capgap read it\n")
    journal = Journal.start(run, root, "apply")
    journal.write_files([("a.py", b"a0\n", b"a1\n")])  # planned from a read that saw a0
    backup = run / "blobs" / str(sha256(b"a0\n"))
    assert backup.read_bytes() == b"a0\n"  # a copy of what the journal calls "before", not a link
    assert [p.name for p in backup.parent.iterdir()] == [backup.name]


def test_lazy_journal_writes_its_begin_with_the_first_records(tmp_path: Path) -> None:
    root, run = tmp_path / "root", tmp_path / "run"
    root.mkdir()
    (root / "a.py").write_bytes(b"a0\n")
    journal = Journal.start(run, root, "apply", lazy=True)
    assert not run.exists()  # dying here leaves nothing to recover: nothing was written
    journal.write_files([("a.py", b"a0\n", b"a1\n")])
    pending = load_pending(run)
    assert pending is not None and [r["op"] for r in pending.records] == ["begin", "write"]
    assert pending.rollback() == [] and (root / "a.py").read_bytes() == b"a0\n"

    idle = Journal.start(tmp_path / "idle", root, "apply", lazy=True)
    idle.finish()
    assert not (tmp_path / "idle").exists()


def _wait_gone(path: Path, seconds: float = 10.0) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return not path.exists()


def test_a_finished_run_is_set_aside_at_once_and_deleted_in_the_background(tmp_path: Path) -> None:
    from capgap.patches.journal import DONE

    root, run = tmp_path / "root", tmp_path / "runs" / "key"
    root.mkdir()
    (root / "a.py").write_bytes(b"a0\n")
    journal = Journal.start(run, root, "apply")
    journal.write_files([("a.py", b"a0\n", b"a1\n")])
    journal.finish()
    assert not run.exists()  # a next run sees no journal, at once
    aside = list((tmp_path / "runs" / DONE).iterdir())
    assert len(aside) <= 1 and all(_wait_gone(p) for p in aside)  # the detached rm deletes it
    assert (root / "a.py").read_bytes() == b"a1\n"


def test_without_rm_the_run_is_deleted_inline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from capgap.patches import journal as journal_mod

    monkeypatch.setattr(journal_mod.shutil, "which", lambda name: None)
    run = tmp_path / "runs" / "key"
    (run / "blobs").mkdir(parents=True)
    (run / "blobs" / "x").write_bytes(b"x")
    journal_mod.discard(run)
    assert not run.exists() and list((tmp_path / "runs" / journal_mod.DONE).iterdir()) == []


def test_sweep_finishes_only_deletions_that_died(tmp_path: Path) -> None:
    from capgap.patches.journal import DONE, sweep_done

    done = tmp_path / DONE
    stale, fresh = done / "key-1-1", done / "key-2-2"
    for path in (stale, fresh):
        (path / "blobs").mkdir(parents=True)
        (path / "journal.jsonl").write_text('{"op": "end"}\n')
    os.utime(stale, (0, 0))
    sweep_done(tmp_path)
    assert not stale.exists() and fresh.exists()


def test_set_aside_runs_are_not_pending(tmp_path: Path) -> None:
    from capgap.patches.journal import DONE
    from capgap.patches.store import Store

    store = Store(tmp_path / "store")
    aside = store.path / ".runs" / DONE / "key-1-1"
    aside.mkdir(parents=True)
    (aside / "journal.jsonl").write_text('{"op": "begin"}\n')
    assert store.pending_runs() == []


def test_new_contents_are_staged_in_the_run_and_a_new_directory_is_made(tmp_path: Path) -> None:
    root, run = tmp_path / "root", tmp_path / "run"
    root.mkdir()
    (root / "a.py").write_bytes(b"a0\n")
    journal = Journal.start(run, root, "apply")
    assert journal._staging() == str(run / "new")  # same filesystem as the tree
    journal.write_files([("a.py", b"a0\n", b"a1\n"), ("sub/dir/n.py", None, b"n1\n")])
    assert (root / "a.py").read_bytes() == b"a1\n" and (root / "sub/dir/n.py").read_bytes() == b"n1\n"
    assert list((run / "new").iterdir()) == []  # every staged content was moved into place
    assert sorted(p.name for p in root.rglob("*")) == ["a.py", "dir", "n.py", "sub"]  # no temp beside


@pytest.mark.skipif(
    not os.path.isdir("/dev/shm") or os.stat("/dev/shm").st_dev == os.stat(tempfile.gettempdir()).st_dev,
    reason="needs /dev/shm on another filesystem than the temp directory",
)
def test_a_run_on_another_filesystem_writes_temps_beside_the_files(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.py").write_bytes(b"a0\n")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as other:
        journal = Journal.start(Path(other) / "run", root, "apply")
        assert journal._staging() is None
        journal.write_files([("a.py", b"a0\n", b"a1\n")])
        journal.finish()
    assert (root / "a.py").read_bytes() == b"a1\n" and [p.name for p in root.iterdir()] == ["a.py"]


def test_a_path_on_another_mount_gets_a_temp_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mounting needs privileges a test should not take: rename's EXDEV is faked at that boundary."""
    from capgap.patches import journal as journal_mod

    root, run = tmp_path / "root", tmp_path / "run"
    root.mkdir()
    (root / "a.py").write_bytes(b"a0\n")
    real_replace = os.replace

    def replace(src: str, dst: str) -> None:
        if "/run/new/" in str(src):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        real_replace(src, dst)

    monkeypatch.setattr(journal_mod.os, "replace", replace)
    journal = Journal.start(run, root, "apply")
    journal.write_files([("a.py", b"a0\n", b"a1\n")])
    assert (root / "a.py").read_bytes() == b"a1\n" and [p.name for p in root.iterdir()] == ["a.py"]
    assert list((run / "new").iterdir()) == []
