"""The patch store: a directory users commit to their infra repo.

Layout (one directory per patch; everything else in the store is dot-named and git-ignored):

    capgap-patches/
      <name>/patch.diff      git-style unified diff, for review (derived from the blobs)
      <name>/meta.json       target kind/name, version or base commit, `for` range, per file the
                             pristine and patched sha256, created, capgap version, note
      <name>/blobs/<sha256>  pristine and patched copies of every touched file (exact reverse,
                             3-way merge base); named by content hash, verified on every read
      <name>/semantic.json   optional: semantic edit records (opaque dicts, see apply.py)
      .lock, .runs/          the lock and the journals/backups of unfinished runs
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from capgap import __version__
from capgap.boundedread import NotRegular, TooLarge, read_regular
from capgap.errors import StoreError
from capgap.patches import targetstate
from capgap.patches.diff import patch_diff
from capgap.patches.journal import atomic_write, crash_point, sha256
from capgap.patches.lock import flock
from capgap.patches.safepath import check_name, check_rel

DEFAULT_DIR = "capgap-patches"
FORMAT = 1
_SHA = re.compile(r"^[0-9a-f]{64}$")
_IGNORE = ".lock\n.runs/\n.tmp-*\n.trash-*\n"


def default_store_dir() -> Path:
    """./capgap-patches (tests replace this with a function that raises)."""
    return Path.cwd() / DEFAULT_DIR


_FROM_CONFIG = Path("<the configuration file's>")


def store_dir(option: str | None = None, configured: Path | None = _FROM_CONFIG) -> Path:
    """--store DIR, else $CAPGAP_STORE, else the configuration's `patch-store` (`configured`;
    by default looked up from the working directory: capgap/settings.py), else the default."""
    if option:
        return Path(option)
    env = os.environ.get("CAPGAP_STORE")
    if env:
        return Path(env)
    if configured is _FROM_CONFIG:
        from capgap.settings import configured_store

        configured = configured_store()
    return configured if configured is not None else default_store_dir()


@dataclass(frozen=True)
class FileEntry:
    path: str
    pristine_sha: str | None  # None: the patch creates the file
    patched_sha: str | None  # None: the patch deletes the file


@dataclass
class Patch:
    name: str
    dir: Path
    meta: dict[str, object]
    files: tuple[FileEntry, ...]
    semantic: list[dict[str, object]] | None = field(default=None)
    _blobs: dict[str, bytes] = field(default_factory=dict, repr=False)  # verified copies, read once

    @property
    def target(self) -> dict[str, object]:
        return dict(self.meta.get("target") or {})  # type: ignore[call-overload]

    @property
    def for_range(self) -> str | None:
        value = self.meta.get("for")
        return str(value) if value else None

    def blob(self, sha: str | None) -> bytes | None:
        """A stored copy by hash; refuses symlinks and content that doesn't match its name."""
        if sha is None:
            return None
        if sha in self._blobs:
            return self._blobs[sha]
        data = _read_regular(self.blob_path(sha), self.name, f"stored copy {sha[:12]}", BLOB_MAX_BYTES)
        if hashlib.sha256(data).hexdigest() != sha:
            raise StoreError(f"patch {self.name}: stored copy {sha[:12]} does not match its hash")
        self._blobs[sha] = data
        return data

    def blob_path(self, sha: str) -> str:
        """Where the stored copy `sha` is (a string: built for every file of a large apply)."""
        return f"{self.dir}/blobs/{sha}"

    def contents(self, entry: FileEntry) -> tuple[bytes | None, bytes | None]:
        return self.blob(entry.pristine_sha), self.blob(entry.patched_sha)

    def diff_text(self) -> str:
        """The diff of what `apply` writes: made from the verified stored copies, never read
        from patch.diff (a store may carry a patch.diff that says something else)."""
        files = {e.path: self.contents(e) for e in self.files}
        return patch_diff(files)

    def stored_diff_differs(self) -> bool:
        """Does the store's patch.diff (what a reviewer of the store's repository reads) say
        something else than the stored copies (what `apply` writes)?"""
        try:
            stored = _read_regular(self.dir / "patch.diff", self.name).decode("utf-8", "surrogateescape")
        except StoreError:
            return True
        return stored != self.diff_text()

    def semantic_for(self, rel: str) -> list[dict[str, object]]:
        return [r for r in self.semantic or [] if r.get("path") == rel]

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, **self.meta}


class _Missing(StoreError):
    def __init__(self, message: str, what: str) -> None:
        super().__init__(message)
        self.what = what


META_MAX_BYTES = 16 << 20  # meta.json, semantic.json, patch.diff: text a person reviews
BLOB_MAX_BYTES = 1 << 30  # a stored copy of one file


def _read_regular(path: str | Path, name: str, what: str = "", limit: int = META_MAX_BYTES) -> bytes:
    """The bytes of a regular file of the store, never through a symlink, never past `limit`."""
    what = what or os.path.basename(path)
    try:
        return read_regular(path, limit, follow=False)
    except FileNotFoundError:
        raise _Missing(f"patch {name}: {what} is missing", what) from None
    except NotRegular as exc:
        raise StoreError(f"patch {name}: {what} is {exc.strerror}; refusing it") from None
    except TooLarge as exc:
        raise StoreError(f"patch {name}: {what} is {exc}; refusing it") from None
    except OSError as exc:
        raise StoreError(f"patch {name}: cannot read {what}: {exc.strerror or exc}") from None


def _json(name: str, pdir: Path, what: str) -> object:
    try:
        return json.loads(_read_regular(f"{pdir}/{what}", name))
    except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, or nested past the parser
        raise StoreError(
            f"patch {name}: {what} is not JSON ({str(exc)[:80] or type(exc).__name__})"
        ) from None


def _valid_name(name: str) -> bool:
    try:
        check_name(name)
    except StoreError:
        return False
    return True


def _write_new(path: Path, data: bytes) -> None:
    """A file inside a patch's temp dir (atomicity comes from renaming the whole dir)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _entries(name: str, meta: dict[str, object]) -> tuple[FileEntry, ...]:
    files = meta.get("files")
    if not isinstance(files, list) or not files:
        raise StoreError(f"patch {name}: meta.json lists no files")
    out = []
    for raw in files:
        if not isinstance(raw, dict) or not isinstance(raw.get("path"), str):
            raise StoreError(f"patch {name}: malformed file entry")
        try:
            rel = check_rel(raw["path"])
        except StoreError as exc:
            raise StoreError(f"patch {name}: {exc}") from None
        shas = raw.get("pristine_sha256"), raw.get("patched_sha256")
        if any(s is not None and not (isinstance(s, str) and _SHA.match(s)) for s in shas) or shas == (
            None,
            None,
        ):
            raise StoreError(f"patch {name}: malformed hashes for {rel}")
        out.append(FileEntry(rel, *shas))  # type: ignore[arg-type]
    return tuple(out)


def _check_meta(name: str, meta: object) -> dict[str, object]:
    """meta.json's fields have the types the pipeline reads (a forged one gives an error, not a
    traceback deep in an apply)."""
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise StoreError(f"patch {name}: unknown meta.json format")
    target = meta.get("target")
    if target is not None and (
        not isinstance(target, dict) or not all(v is None or isinstance(v, str) for v in target.values())
    ):
        raise StoreError(f"patch {name}: malformed target in meta.json")
    for key in ("for", "created", "note", "capgap_version"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise StoreError(f"patch {name}: malformed {key!r} in meta.json")
    if meta.get("for"):
        from packaging.requirements import InvalidRequirement, Requirement

        try:
            Requirement(str(meta["for"]))
        except InvalidRequirement:
            raise StoreError(
                f"patch {name}: its version range {str(meta['for'])[:60]!r} is malformed"
            ) from None
    return meta


def _load(name: str, pdir: Path) -> Patch:
    meta = _check_meta(name, _json(name, pdir, "meta.json"))
    semantic = None
    if os.path.lexists(f"{pdir}/semantic.json"):
        semantic = _json(name, pdir, "semantic.json")
        if not isinstance(semantic, list) or not all(isinstance(r, dict) for r in semantic):
            raise StoreError(f"patch {name}: semantic.json must hold a list of records")
    return Patch(name, pdir, meta, _entries(name, meta), semantic)  # type: ignore[arg-type]


class Store:
    """A directory of saved patches; owns its lock and its atomic updates."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.damaged: dict[str, str] = {}  # name -> why: patches() passed over them

    def _dirs(self) -> list[str]:
        """The names of the store's real (not symlinked), not dot-named directories, sorted."""
        try:
            with os.scandir(self.path) as entries:
                return sorted(e.name for e in entries if e.name[0] != "." and e.is_dir(follow_symlinks=False))
        except (FileNotFoundError, NotADirectoryError):
            return []

    def names(self) -> list[str]:
        return [n for n in self._dirs() if (self.path / n / "meta.json").exists()]

    def exists(self, name: str) -> bool:
        return (self.path / check_name(name) / "meta.json").exists()

    def load(self, name: str) -> Patch:
        pdir = self.path / check_name(name)
        if pdir.is_symlink():
            raise StoreError(f"patch {name}: its directory is a symlink; refusing it")
        if not pdir.is_dir():
            raise StoreError(f"no patch named {name!r} in {self.path}")
        return _load(name, pdir)

    def patches(self) -> list[Patch]:
        """Every patch (a directory without meta.json is not one), each read in one pass. A
        damaged one does not block the others: it is left out and named in `damaged`."""
        out = []
        self.damaged = {}
        for name in self._dirs():
            try:
                out.append(_load(name, Path(f"{self.path}/{name}")))
            except _Missing as exc:
                if exc.what != "meta.json":
                    self.damaged[name] = str(exc)
            except StoreError as exc:
                self.damaged[name] = str(exc)
        return out

    def save_patch(
        self,
        name: str,
        target_desc: dict[str, object],
        files: dict[str, tuple[bytes | None, bytes | None]],
        semantic: list[dict[str, object]] | None = None,
        note: str = "",
        replace: bool = False,
        created: str | None = None,
        extra: dict[str, object] | None = None,
    ) -> Patch:
        """Write a patch atomically (built in a temp dir, then renamed into place).

        `created`: keep an existing patch's place in the apply order (a rebase); `extra`: more
        meta.json fields (where a rebased patch came from)."""
        check_name(name)
        for rel in files:
            check_rel(rel)
        if not files:
            raise StoreError(f"patch {name}: no files")
        if self.exists(name) and not replace:
            raise StoreError(f"a patch named {name!r} already exists (use another name or --force)")
        self._init()
        tmp = self.path / f".tmp-{name}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        entries = []
        for rel, (pristine, patched) in sorted(files.items()):
            for data in (pristine, patched):
                if data is not None:
                    _write_new(tmp / "blobs" / str(sha256(data)), data)
            entries.append(
                {"path": rel, "pristine_sha256": sha256(pristine), "patched_sha256": sha256(patched)}
            )
        target = dict(target_desc)
        meta = {
            "format": FORMAT,
            "target": {k: target.get(k) for k in ("kind", "name", "version", "commit", "root", "python")},
            "for": target.get("for"),
            # microseconds: patches are applied in creation order, and two saved within one
            # second (a local tweak, then `capgap fix`) must keep theirs
            "created": created or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "capgap_version": __version__,
            "note": note,
            "files": entries,
            **(extra or {}),
        }
        _write_new(tmp / "patch.diff", patch_diff(files).encode("utf-8", "surrogateescape"))
        if semantic:
            _write_new(tmp / "semantic.json", json.dumps(semantic, indent=1).encode())
        _write_new(tmp / "meta.json", (json.dumps(meta, indent=1) + "\n").encode())
        crash_point()  # a crash before the rename leaves only a temp dir, removed by the next run
        final = self.path / name
        if final.exists():
            trash = self.path / f".trash-{name}-{os.getpid()}"
            os.rename(final, trash)
            crash_point()
            os.rename(tmp, final)
            shutil.rmtree(trash)
        else:
            os.rename(tmp, final)
        crash_point()
        return self.load(name)

    def drop(self, name: str) -> None:
        """Remove a patch, a damaged one too (its directory need not load, only be a real one)."""
        pdir = self.path / check_name(name)
        if pdir.is_symlink() or not pdir.is_dir():
            raise StoreError(f"no patch named {name!r} in {self.path}")
        trash = self.path / f".trash-{name}-{os.getpid()}"
        os.rename(pdir, trash)
        crash_point()
        shutil.rmtree(trash)

    def find_blob(self, sha: str) -> Path | None:
        """A stored copy of this content in any patch (for pristine look-ups and backups)."""
        for name in self.names():
            path = self.path / name / "blobs" / sha
            if path.is_file() and not path.is_symlink():
                return path
        return None

    def run_dir(self, root: Path) -> Path:
        """Where a run on `root` keeps its journal and backups: with the target, whatever the
        store (targetstate.py), so the next run finds it under any store."""
        return targetstate.run_dir(root)

    def legacy_run_dir(self, root: Path) -> Path:
        """Where capgap before issue 16 kept it, in the store: named to the user, never replayed."""
        key = hashlib.sha256(str(Path(os.path.realpath(root))).encode()).hexdigest()[:16]
        return self.path / ".runs" / key

    def pending_runs(self) -> list[Path]:
        """Unfinished runs an older capgap left in this store (never replayed: see run.recover)."""
        runs = self.path / ".runs"
        return sorted(p for p in runs.iterdir() if (p / "journal.jsonl").exists()) if runs.is_dir() else []

    def _init(self) -> None:
        try:
            self._prepare()
        except OSError as exc:  # the store is a file, not writable, ...
            raise StoreError(f"cannot use the store {self.path}: {exc.strerror or exc}") from None

    def _prepare(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        ignore = self.path / ".gitignore"
        if not ignore.exists():
            atomic_write(ignore, _IGNORE.encode(), 0o644)
        for trash in self.path.glob(".trash-*"):  # a replace/drop died half-way: finish or undo it
            name = trash.name[len(".trash-") :].rsplit("-", 1)[0]
            if trash.is_symlink():  # never followed: not one of ours
                trash.unlink()
            elif _valid_name(name) and (trash / "meta.json").exists() and not (self.path / name).exists():
                os.rename(trash, self.path / name)
            else:
                shutil.rmtree(trash, ignore_errors=True)
        for tmp in self.path.glob(".tmp-*"):
            if tmp.is_symlink():
                tmp.unlink()
            else:
                shutil.rmtree(tmp, ignore_errors=True)

    def lock(self) -> AbstractContextManager[None]:
        """Serialise runs on this store (fails at once, naming the holder, when taken)."""
        self._init()
        return flock(self.path / ".lock", f"{self.path} is locked by another capgap run")


def target_lock(root: Path) -> AbstractContextManager[None]:
    """Serialise runs on one target, whichever store and whichever user they come from: the
    lock lives with the target (targetstate.py)."""
    return flock(targetstate.lock_path(root), f"another capgap run is working on {root}")
