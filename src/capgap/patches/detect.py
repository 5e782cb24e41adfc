"""What a patch target is, what its upstream (pristine) content is, and what was changed locally.

- git checkout: local changes = working tree vs HEAD (tracked edits, deletions, untracked files
  that .gitignore doesn't hide); upstream content = the HEAD blob.
- installed distribution: local changes = files whose sha256 differs from the dist's RECORD,
  missing ones, and files not in RECORD under its packages (`__pycache__` ignored); upstream
  content comes from a store copy, pip's wheel cache or `pip download` (see pristine.py) and is
  always checked against RECORD's hash. Detection itself needs no network.
"""

from __future__ import annotations

import base64
import csv
import errno
import io
import os
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from capgap.boundedread import read_fd, read_regular
from capgap.errors import EnvironmentProblem, StoreError, TargetError
from capgap.findings import Skipped
from capgap.patches.journal import FILE_MAX_BYTES, read_bytes, sha256
from capgap.patches.safepath import Joiner, check_rel, safe_join
from capgap.patches.targetstate import remember_git_dir

_SKIP_DIRS = {"__pycache__", ".git"}
RECORD_MAX_BYTES = 64 << 20


def git(root: Path, *args: str, data: bytes | None = None, check: bool = True) -> bytes:
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], input=data, capture_output=True, check=False)
    except OSError as exc:
        raise EnvironmentProblem(f"cannot run git: {exc}") from exc
    if check and proc.returncode != 0:
        msg = proc.stderr.decode(errors="replace").strip().splitlines()
        raise TargetError(f"git {args[0]} failed in {root}: {msg[-1] if msg else proc.returncode}")
    return proc.stdout


@dataclass
class PatchTarget:
    kind: str  # "git" | "dist"
    name: str
    root: Path
    version: str | None = None
    commit: str | None = None
    python: str | None = None
    record: dict[str, str | None] = field(default_factory=dict)  # dist: rel -> RECORD sha256 hex
    _upstream: dict[str, bytes | None] = field(default_factory=dict, repr=False)

    def desc(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "name": self.name,
            "version": self.version,
            "commit": self.commit,
            "root": str(self.root) if self.kind == "git" else None,
            # the environment that holds the dist, so later runs need no --python
            "python": (self.python or sys.executable) if self.kind == "dist" else None,
        }

    def label(self) -> str:
        if self.kind == "git":
            return f"{self.name}@{(self.commit or '?')[:10]}"
        return f"{self.name} {self.version}"

    def current(self, rel: str, join: Joiner | None = None) -> bytes | None:
        """The file's content now (None: absent); `join`: a run's Joiner over this root."""
        join = join or Joiner(self.root)
        # One open that refuses a symlink as its last component: a symlink (rare) is checked
        # to lead inside the root, and only then read through; a plain file costs no lstat.
        path = join.parent_checked(rel)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            link = join(rel)
            try:
                return None if link.is_dir() else read_bytes(link)
            except OSError as err:  # a link (inside the root) to a FIFO, a huge file, ...
                raise TargetError(f"{rel} in {self.root}: {err.strerror or err}; refusing it") from None
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                return None
            if not stat.S_ISREG(st.st_mode):  # reading a FIFO or a device could block or never end
                kind = _KINDS.get(stat.S_IFMT(st.st_mode), "special file")
                raise TargetError(f"{rel} in {self.root} is not a regular file ({kind}); refusing it")
            data = read_fd(fd, st.st_size, FILE_MAX_BYTES)
        finally:
            os.close(fd)
        if len(data) > FILE_MAX_BYTES:
            raise TargetError(f"{rel} in {self.root} is larger than {FILE_MAX_BYTES >> 30} GiB; refusing it")
        return data

    def upstream_sha(self, rel: str) -> str | None:
        """sha256 of the file as the current install/HEAD ships it (None: not shipped)."""
        if self.kind == "dist":
            return self.record.get(rel)
        return sha256(self.upstream_content([rel])[rel])

    def upstream_content(self, rels: list[str]) -> dict[str, bytes | None]:
        """git only: HEAD's content of each path (None: not in HEAD), batched."""
        missing = [r for r in rels if r not in self._upstream]
        if missing:
            out = git(self.root, "cat-file", "--batch", data="".join(f"HEAD:{r}\n" for r in missing).encode())
            buf = io.BytesIO(out)
            for rel in missing:
                header = buf.readline().split()
                if len(header) == 3 and header[1] == b"blob":
                    self._upstream[rel] = buf.read(int(header[2]))
                    buf.readline()
                else:
                    self._upstream[rel] = None
        return {r: self._upstream[r] for r in rels}

    def untrackable(self, rels: list[str]) -> dict[str, str]:
        """git: the paths git would not track, and why (ignored, inside a nested repository,
        beyond a symbolic link); a patch never writes them. Nothing for a dist."""
        if self.kind != "git" or not rels:
            return {}
        out: dict[str, str] = {}
        nested: dict[str, bool] = {}
        for rel in rels:
            parts = rel.split("/")[:-1]
            for n in range(1, len(parts) + 1):
                head = "/".join(parts[:n])
                if head not in nested:
                    nested[head] = os.path.lexists(os.path.join(self.root, head, ".git"))
                if nested[head]:
                    out[rel] = f"inside the nested repository {head}"
                    break
        asked = [r for r in rels if r not in out]
        if asked:
            out.update(self._ignored(asked))
        return out

    def _ignored(self, rels: list[str]) -> dict[str, str]:
        data = "".join(f"{r}\0" for r in rels).encode()
        try:
            proc = subprocess.run(
                ["git", "-C", str(self.root), "check-ignore", "-z", "--stdin"],
                input=data,
                capture_output=True,
            )
        except OSError as exc:
            raise EnvironmentProblem(f"cannot run git: {exc}") from exc
        if proc.returncode in (0, 1):
            return {p: "ignored by .gitignore" for p in proc.stdout.decode().split("\0") if p}
        if len(rels) > 1:  # git names no path when it fails (beyond a symlink): ask one at a time
            out: dict[str, str] = {}
            for rel in rels:
                out.update(self._ignored([rel]))
            return out
        why = proc.stderr.decode(errors="replace").strip().splitlines()
        return {rels[0]: (why[-1] if why else "git refuses it").removeprefix("fatal: ")}

    def tracked_files(self) -> list[str]:
        if self.kind == "dist":
            return sorted(self.record)
        return sorted(p for p in git(self.root, "ls-files", "-z").decode().split("\0") if p)


def _git_target(path: Path, name: str | None = None) -> PatchTarget | None:
    # one process: the top level, the git dir (where capgap's lock and journal live: targetstate),
    # then HEAD's commit (exit 1 and no third line: no commit yet)
    asked = ("--show-toplevel", "--absolute-git-dir", "--verify", "-q", "HEAD")
    cmd = ["git", "-C", str(path), "rev-parse", *asked]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise EnvironmentProblem(f"cannot run git: {exc}") from exc
    lines = proc.stdout.splitlines()
    if proc.returncode not in (0, 1) or len(lines) < 2:
        return None
    root = Path(lines[0])
    remember_git_dir(root, lines[1])
    if proc.returncode != 0 or len(lines) < 3:
        raise TargetError(f"{root}: the repository has no commit yet")
    return PatchTarget("git", name or root.name, root, commit=lines[2].strip())


def _record(base: Path, files: list[str]) -> dict[str, str | None]:
    record_rel = next((f for f in files if f.endswith(".dist-info/RECORD")), None)
    if record_rel is None:
        raise TargetError(f"no RECORD in {base}: cannot tell local changes apart (installed by pip?)")
    out: dict[str, str | None] = {}
    try:
        text = read_regular(base / record_rel, RECORD_MAX_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TargetError(
            f"cannot read {base / record_rel}: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        raise TargetError(f"{base / record_rel} is not a RECORD file ({exc})") from None
    for row in rows:
        if not row or row[0].startswith(("../", "/")) or ".dist-info/" in row[0] or "__pycache__" in row[0]:
            continue
        try:  # a path no patch may touch (`a/../../x`, `.git/...`) is not one of the dist's files
            check_rel(row[0])
        except StoreError:
            continue
        value = row[1] if len(row) > 1 else ""
        digest = None
        if value.startswith("sha256="):
            raw = value[len("sha256=") :]
            try:
                digest = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).hex()
            except ValueError:  # a damaged hash: the file counts as changed, as one without a hash
                digest = None
        out[row[0]] = digest
    return out


def interpreter_path(python: str | None) -> str | None:
    """--python as an absolute path (not resolved: a venv's python is a symlink out of the venv),
    so that the store can record it and a later run from another directory finds it."""
    if not python:
        return None
    python = os.path.expanduser(python)
    if os.sep not in python:
        import shutil

        return shutil.which(python) or python
    return os.path.abspath(python)


def not_installed(name: str, python: str | None) -> str:
    """The error for a dist that is not where we looked: name the environment, suggest --python."""
    where = python or f"{sys.executable} (the Python running capgap)"
    other = "another environment's interpreter" if python else "the interpreter of the environment with it"
    hint = f"pass --python PATH with {other}"
    return f"distribution {name!r} is not installed in the environment of {where}; {hint}"


def resolve(spec: str, python: str | None = None) -> PatchTarget:
    """A git checkout (a directory) or an installed dist (a name); not installed is an error."""
    path = Path(spec).expanduser()
    if path.is_dir():
        target = _git_target(path)
        if target is None:
            raise TargetError(f"{spec} is not a git checkout (name a distribution to patch an install)")
        return target
    from packaging.requirements import InvalidRequirement, Requirement

    from capgap.targets import query_dist

    try:
        name = Requirement(spec).name
    except InvalidRequirement as exc:
        raise TargetError(f"{spec!r} is neither a directory nor a distribution name") from exc
    python = interpreter_path(python)
    data = query_dist(name, python)
    if data is None:
        raise TargetError(not_installed(name, python))
    dist_name, version = str(data["name"]), str(data["version"])
    direct = data.get("direct_url")
    if isinstance(direct, dict) and (direct.get("dir_info") or {}).get("editable"):
        from capgap.targets import _editable_root

        src = _editable_root(direct)
        git_target = _git_target(src) if src is not None and src.is_dir() else None
        if git_target is None:
            raise TargetError(f"{dist_name} is an editable install outside git: patch its source directory")
        git_target.version = version
        return git_target
    base = Path(str(data["base"]))
    record = _record(base, [str(f) for f in data["files"]])  # type: ignore[union-attr]
    return PatchTarget("dist", dist_name, base, version=version, python=python, record=record)


def _own_dirs(record: dict[str, str | None]) -> tuple[set[str], set[str]]:
    """Directories whose new files belong to this dist: each top package (the outermost dir
    with an `__init__.py` in RECORD) as a whole tree, and, for files outside any package (in a
    namespace like `nvidia/` that other dists share), only their own directory."""
    inits = {r.rsplit("/", 1)[0] for r in record if r.endswith("/__init__.py")}
    trees: set[str] = set()
    flat: set[str] = set()
    for rel in record:
        if "/" not in rel:
            continue
        parts = rel.split("/")[:-1]
        top = next(
            ("/".join(parts[:n]) for n in range(1, len(parts) + 1) if "/".join(parts[:n]) in inits), None
        )
        if top is not None:
            trees.add(top)
        else:
            flat.add("/".join(parts))
    return trees, flat - trees


Changes = dict[str, tuple[str | None, bytes | None]]


def read_local(path: Path) -> bytes | None:
    """A tree file's bytes; None when it is absent (or a directory stands there). Raises OSError
    when it cannot be read; a FIFO, socket or device is never opened (that could block)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(mode):
        return None
    if not stat.S_ISREG(mode):
        raise OSError(f"not a regular file ({_KINDS.get(stat.S_IFMT(mode), 'special file')})")
    return read_regular(path, FILE_MAX_BYTES)  # refuses it if it became a FIFO meanwhile, or grew huge


_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
}


def local_changes(target: PatchTarget, exclude: Path | None = None) -> tuple[Changes, list[Skipped]]:
    """rel -> (upstream sha256 or None for a new file, current content or None if deleted), and
    the files that could not be read (not in the changes: whether they changed is unknown)."""
    changes: Changes = {}
    skipped: list[Skipped] = []

    def read(rel: str, path: Path) -> tuple[bool, bytes | None]:
        try:
            return True, read_local(path)
        except OSError as exc:
            skipped.append(Skipped(rel, f"cannot read: {exc.strerror or exc}"))
            return False, None

    if target.kind == "git":
        out = git(target.root, "diff", "HEAD", "--name-status", "-z", "--no-renames").decode().split("\0")
        rels = [out[i + 1] for i in range(0, len(out) - 1, 2) if out[i]]
        rels += [
            p
            for p in git(target.root, "ls-files", "--others", "--exclude-standard", "-z").decode().split("\0")
            if p
        ]
        rels = [r for r in rels if ".capgap-tmp" not in r.rsplit("/", 1)[-1]]  # a killed write's leftovers
        if exclude is not None:
            ex = os.path.realpath(exclude)
            rels = [r for r in rels if not os.path.realpath(target.root / r).startswith(ex + os.sep)]
        ups = target.upstream_content(rels)
        for rel in sorted(set(rels)):
            ok, cur = read(rel, safe_join(target.root, rel))
            if ok and cur != ups[rel]:
                changes[rel] = (sha256(ups[rel]), cur)
        return changes, skipped
    for rel, digest in target.record.items():
        ok, cur = read(rel, target.root / rel)
        if ok and digest is not None and sha256(cur) != digest:
            changes[rel] = (digest, cur)
    trees, flat = _own_dirs(target.record)
    for top in sorted(trees | flat):
        for dirpath, dirnames, filenames in os.walk(target.root / top):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS) if top in trees else []
            for fn in filenames:
                rel = os.path.relpath(os.path.join(dirpath, fn), target.root).replace(os.sep, "/")
                if rel not in target.record and not fn.endswith(".pyc") and ".capgap-tmp" not in fn:
                    ok, cur = read(rel, target.root / rel)
                    if ok:
                        changes[rel] = (None, cur)
    return changes, skipped
