"""Atomic, journaled file writes, and recovery after a crash.

Every write is atomic (temp file in the same directory, fsync, rename, fsync of the directory).
A run first makes a backup of each file it will replace, in its run directory (a hard link to
a store blob of that content, or to the file itself, as files are only ever replaced by rename;
else a copy), then appends one journal record per planned write (path, sha256 before and after),
and only then touches the tree. If the process dies anywhere, the next run on that target reads
the journal and puts back every file whose content is the run's "after" (from its backup); a
file whose content is neither "before" nor "after" was changed by someone else and is left alone.
Recovery trusts a record's backup only inside its own run directory, and its path only inside
the target: a journal may be forged.
Backups and journal are removed only when the run completes.

`CAPGAP_CRASH_AT=N` makes the process `os._exit` at the Nth durable step (tests kill runs there).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from capgap.boundedread import read_regular
from capgap.errors import StoreError
from capgap.patches.safepath import Joiner, check_rel, safe_join

_steps = 0
FILE_MAX_BYTES = 1 << 30  # one file of a target (a patch holds source, not data sets)
BACKUP_MAX_BYTES = FILE_MAX_BYTES
JOURNAL_MAX_BYTES = 256 << 20
_SHA = re.compile(r"^[0-9a-f]{64}$")


def crash_point() -> None:
    """Test hook: die (like kill -9) at the CAPGAP_CRASH_AT-th durable step."""
    global _steps
    at = os.environ.get("CAPGAP_CRASH_AT")
    if at:
        _steps += 1
        if _steps == int(at):
            os._exit(86)


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def read_bytes(path: Path) -> bytes | None:
    """A regular file's bytes (None: absent); OSError for a FIFO, a device or one over 1 GiB."""
    try:
        return read_regular(path, FILE_MAX_BYTES)
    except FileNotFoundError:
        return None


def _fsync_dir(path: str | Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_temp(path: str | Path, data: bytes, mode: int | None = None, tmp: str | None = None) -> str:
    """The new content in a temp file next to `path` (or at `tmp`), same mode, not yet in place."""
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
    head, name = os.path.split(path)
    tmp = tmp or os.path.join(head, f".{name}.capgap-tmp{os.getpid()}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    try:
        fd = os.open(tmp, flags, mode)
    except FileNotFoundError:  # a new file in a new directory
        os.makedirs(head, exist_ok=True)
        fd = os.open(tmp, flags, mode)
    try:
        os.fchmod(fd, mode)  # umask may have narrowed it
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return tmp


def _move_into_place(tmp: str, path: str) -> None:
    """Rename a staged new content onto `path`: a new file's directory is made first, and a
    path on another filesystem than the staging (a mount inside the tree) gets a temp of its own."""
    try:
        os.replace(tmp, path)
        return
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), exist_ok=True)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        with open(tmp, "rb") as fh:
            atomic_write(Path(path), fh.read())
        os.unlink(tmp)
        return
    os.replace(tmp, path)


def _link_backup(path: Path, blob: Path, digest: str) -> bool:
    """Keep the file about to be replaced as its own backup: a hard link to it, no copy. Files
    are only ever replaced by rename, never rewritten in place, so the linked content stays as
    it is; and the rename then frees nothing, the backup's removal does (once, not twice).
    False (and nothing left behind) when linking isn't possible or the content isn't `digest`."""
    try:
        os.link(path, blob)
    except OSError:  # another filesystem, no hard links there, not ours to link, ...
        return False
    if sha256(read_bytes(blob)) == digest:
        return True
    blob.unlink()  # changed since it was read: back up what was read instead
    return False


def _link_known(known: str | Path | None, blob: Path) -> bool:
    """A hard link to a verified, immutable copy of the content (a store blob named by its
    hash): no read, no copy. False when there is none or it is on another filesystem."""
    if known is None:
        return False
    try:
        os.link(known, blob, follow_symlinks=False)
    except OSError:
        return False
    return True


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write via a temp file in the same directory (fsync, rename): readers see old or new."""
    tmp = _write_temp(path, data, mode)
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    crash_point()  # dying here leaves a temp file: recovery removes it
    os.replace(tmp, path)
    _fsync_dir(path.parent)
    crash_point()


def atomic_remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        return
    _fsync_dir(path.parent)
    crash_point()


def set_content(root: Path, rel: str, data: bytes | None) -> None:
    """Make root/rel hold `data` (None: remove it), atomically, never outside root."""
    path = safe_join(root, rel)
    if data is None:
        atomic_remove(path)
    else:
        atomic_write(path, data)


@dataclass
class Journal:
    """One run's journal and backups under `run_dir` (inside the store)."""

    run_dir: Path
    root: Path
    records: list[dict[str, object]] = field(default_factory=list)
    _unwritten: list[dict[str, object]] = field(default_factory=list, repr=False)

    @property
    def path(self) -> Path:
        return self.run_dir / "journal.jsonl"

    @classmethod
    def start(cls, run_dir: Path, root: Path, kind: str, *, lazy: bool = False, **extra: object) -> Journal:
        """lazy: the begin record goes to disk with the first records that follow it (one
        flush, not two; a run that dies before writing anything leaves no journal to undo)."""
        journal = cls(run_dir, root)
        begin = {"op": "begin", "kind": kind, "root": str(root), "time": time.time(), **extra}
        if lazy:
            journal._unwritten.append(begin)
        else:
            journal._append([begin])
        return journal

    def _append(self, records: list[dict[str, object]], *, flush: bool = True) -> None:
        """flush=False: the caller syncs before anything depends on these records (a crash
        before that leaves the tree untouched, and a torn last line is ignored on reading)."""
        records = self._unwritten + records
        self._unwritten = []
        self.run_dir.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(r) + "\n" for r in records))
            fh.flush()
            if flush:
                os.fsync(fh.fileno())
        self.records.extend(records)
        crash_point()

    def phase(self, name: str) -> None:
        self._append([{"op": "phase", "phase": name}])

    def write_files(
        self,
        changes: list[tuple[str, bytes | None, bytes | None]],
        known_copy: Callable[[str], str | Path | None] = lambda sha: None,
    ) -> None:
        """Journal, back up, then write each (rel, before, after); None means absent.

        Order: journal records -> backups (hard links to the files, else copies) and temp files
        -> one os.sync() (journal, backups and temps together) -> renames -> one fsync per
        directory. One flush for the batch instead of one per file or step: nothing in the tree
        changes before it, and a crash at any point leaves every file at its before or after
        content, and the journal knows both.
        """
        if not changes:
            return
        records: list[dict[str, object]] = []
        backups: list[tuple[Path, str, bytes, str]] = []
        for rel, before, after in changes:
            before_sha, backup = sha256(before), None
            if before is not None:  # backups live in the run directory: recovery trusts no other
                blob = self.run_dir / "blobs" / str(before_sha)
                backups.append((blob, rel, before, str(before_sha)))
                backup = str(blob)
            records.append(
                {"op": "write", "path": rel, "before": before_sha, "after": sha256(after), "backup": backup}
            )
        self._append(records, flush=False)  # made durable by the os.sync() below
        join = Joiner(self.root)
        if backups:
            (self.run_dir / "blobs").mkdir(exist_ok=True)
        done: set[str] = set()
        for blob, rel, data, digest in backups:
            if digest in done or blob.exists():
                continue
            done.add(digest)
            if not _link_known(known_copy(digest), blob) and not _link_backup(join(rel), blob, digest):
                os.replace(_write_temp(blob, data, 0o644), blob)
        paths = [join.checked(rel) for rel, _b, _a in changes]
        staging = self._staging()
        temps = [
            None if after is None else _write_temp(path, after, None, staging and f"{staging}/{i}")
            for i, (path, (_r, _b, after)) in enumerate(zip(paths, changes, strict=True))
        ]
        os.sync()  # journal, backups and new contents are on disk before any file is replaced
        crash_point()
        for path, tmp in zip(paths, temps, strict=True):
            if tmp is None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
            else:
                _move_into_place(tmp, path)
            crash_point()
        for parent in sorted({os.path.dirname(p) for p in paths}):
            if os.path.exists(parent):
                _fsync_dir(parent)

    def _staging(self) -> str | None:
        """A directory of this run's on the target's filesystem, for the new contents: creating
        them there is cheaper than beside files a tree has churned through (ext4 slows down on
        directories full of recently deleted entries), and a rename moves them into place all
        the same. None (temp files beside their targets) when the store is on another
        filesystem."""
        staging = self.run_dir / "new"
        try:
            staging.mkdir(exist_ok=True)
            if os.stat(staging).st_dev != os.stat(self.root).st_dev:
                return None
        except OSError:
            return None
        return str(staging)

    def finish(self) -> None:
        """The run completed: drop backups and journal."""
        if self.records:  # else (lazy, nothing written) there is nothing on disk to close
            self._append([{"op": "end"}])
        discard(self.run_dir)

    def remove_temps(self) -> None:
        """Temp files a killed write left next to its target (never renamed into place)."""
        for rec in self.records:
            if rec["op"] == "write":
                path = safe_join(self.root, str(rec["path"]))
                for tmp in path.parent.glob(f".{path.name}.capgap-tmp*"):
                    tmp.unlink(missing_ok=True)

    def _backup(self, backup: object) -> bytes | None:
        """A backup's bytes, only from a regular file inside this run's directory (a forged
        journal naming /etc/passwd must not copy it into the tree); b"" when it is unreadable."""
        if not isinstance(backup, str):
            return None
        real_run = os.path.realpath(self.run_dir)
        if os.path.dirname(os.path.realpath(backup)) != os.path.join(real_run, "blobs"):
            return None
        try:
            return read_regular(backup, BACKUP_MAX_BYTES, follow=False)
        except OSError:
            return b""  # missing or damaged: its hash says so

    def rollback(self, on_phase: Callable[[str], None] | None = None) -> list[str]:
        """Undo this run's writes, newest first; returns warnings about files left alone."""
        self.remove_temps()
        warnings: list[str] = []
        for rec in reversed(self.records):
            if rec["op"] == "phase" and on_phase is not None:
                on_phase(str(rec["phase"]))
            if rec["op"] != "write":
                continue
            rel = str(rec["path"])
            try:
                current = sha256(read_bytes(safe_join(self.root, rel)))
            except OSError as exc:  # a FIFO or a device stands there now: not ours to touch
                warnings.append(f"{rel}: {exc.strerror or exc}; left as it is")
                continue
            if current == rec["before"]:
                continue
            if current != rec["after"]:
                warnings.append(f"{rel}: changed by someone else since the run; left as it is")
                continue
            if rec["before"] is None:
                set_content(self.root, rel, None)
                continue
            data = self._backup(rec.get("backup"))
            if data is None:
                warnings.append(f"{rel}: its backup is not inside the run's directory; left as it is")
                continue
            if sha256(data) != rec["before"]:
                warnings.append(f"{rel}: its backup is missing or damaged; left as it is")
                continue
            set_content(self.root, rel, data)
        return warnings


DONE = ".done"  # beside the runs: finished runs' directories, being deleted
_DONE_STALE_S = 600  # one left this long is a deletion that died: the next run finishes it


def discard(run_dir: Path) -> None:
    """Remove a finished run's directory: renamed aside at once, deleted by a detached `rm`.

    The run is complete and its end is on disk; deleting its backups frees one inode per
    replaced file, which cost as much as a third of a 100-file apply. Nobody waits for that.
    Without `rm` (or a rename that fails) it is deleted here and now.
    """
    if not run_dir.exists():
        return
    done = run_dir.parent / DONE
    trash = done / f"{run_dir.name}-{os.getpid()}-{time.monotonic_ns()}"
    try:
        done.mkdir(exist_ok=True)
        os.rename(run_dir, trash)
    except OSError:
        shutil.rmtree(run_dir, ignore_errors=True)
        return
    rm = shutil.which("rm") if os.name == "posix" else None
    try:
        if rm is None:
            raise OSError("no rm")
        import subprocess

        subprocess.Popen(  # nosec: a fixed rm of our own directory, no shell
            [rm, "-rf", "--", str(trash)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        shutil.rmtree(trash, ignore_errors=True)


def sweep_done(runs: Path) -> None:
    """Finish deletions of finished runs that died (a machine that went down meanwhile)."""
    done = runs / DONE
    if not done.is_dir():
        return
    now = time.time()
    for entry in os.scandir(done):
        with contextlib.suppress(OSError):
            if now - entry.stat(follow_symlinks=False).st_mtime > _DONE_STALE_S:
                shutil.rmtree(entry.path, ignore_errors=True)


def load_pending(run_dir: Path) -> Journal | None:
    """The journal of an unfinished run, or None (a finished run's leftovers are removed)."""
    path = run_dir / "journal.jsonl"
    if not path.exists():
        if run_dir.exists():
            shutil.rmtree(run_dir, ignore_errors=True)
        return None
    try:
        text = read_regular(path, JOURNAL_MAX_BYTES, follow=False).decode("utf-8", "replace")
    except OSError as exc:
        raise StoreError(f"the journal {path} cannot be read ({exc.strerror or exc}); refusing it") from None
    records: list[dict[str, object]] = []
    for line in text.splitlines():
        try:
            records.append(json.loads(line))
        except (ValueError, RecursionError):  # a line torn by the crash: the write after it never began
            break
    bad = next((r for r in records if not _valid_record(r)), None)
    if bad is not None:
        raise StoreError(f"the journal {path} holds a malformed record ({str(bad)[:80]}); refusing it")
    if not records or records[0].get("op") != "begin" or records[-1].get("op") == "end":
        shutil.rmtree(run_dir, ignore_errors=True)
        return None
    return Journal(run_dir, Path(str(records[0]["root"])), records)


def _valid_record(rec: object) -> bool:
    """A record of the shape this module writes (a journal may be forged or damaged)."""
    if not isinstance(rec, dict) or not isinstance(rec.get("op"), str):
        return False
    if rec["op"] == "begin":
        return isinstance(rec.get("root"), str) and isinstance(rec.get("kind"), str)
    if rec["op"] == "phase":
        return isinstance(rec.get("phase"), str)
    if rec["op"] != "write" or not isinstance(rec.get("path"), str):
        return rec["op"] == "end"
    try:
        check_rel(rec["path"])
    except StoreError:
        return False
    shas = rec.get("before"), rec.get("after")
    return all(s is None or (isinstance(s, str) and _SHA.match(s)) for s in shas) and (
        rec.get("backup") is None or isinstance(rec.get("backup"), str)
    )


def last_phase(journal: Journal) -> str | None:
    phases = [str(r["phase"]) for r in journal.records if r["op"] == "phase"]
    return phases[-1] if phases else None
