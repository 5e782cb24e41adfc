"""Resolve what the user named into files on disk, without importing or running any of it.

A target is a directory or file, an installed distribution (in this interpreter's environment
or the one `--python` names), a pip requirement fetched as a wheel into capgap's cache, or a
wheel file (unpacked into the cache).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from capgap.errors import EnvironmentProblem, TargetError
from capgap.paths import cache_dir
from capgap.skipdirs import TOOL_DIRS, VCS_DIRS

# (relative posix path, path, name, is a symbolic link, inside a TOOL_DIRS directory)
TreeFile = tuple[str, str, str, bool, bool]


@dataclass(frozen=True)
class Target:
    spec: str  # what the user typed
    kind: str  # "path" | "dist" | "requirement" | "wheel"
    root: Path  # finding paths are relative to this
    files: tuple[Path, ...] | None = None  # a dist's own files (absolute); None: walk `root`
    name: str | None = None
    version: str | None = None

    @cached_property
    def tree(self) -> list[TreeFile]:
        """Every file under a directory target's root, listed once for all of one run's analyzers
        (the source scan, the binaries' check and the tuned configs each walked it before)."""
        return list(list_tree(str(self.root)))

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"spec": self.spec, "kind": self.kind, "root": str(self.root)}
        if self.name:
            out["name"] = self.name
            out["version"] = self.version
        return out


# Runs inside the *target* interpreter: stdlib only, reads metadata, imports no package.
_DIST_QUERY = r"""
import json, sys
from importlib import metadata
try:
    d = metadata.distribution(sys.argv[1])
except metadata.PackageNotFoundError:
    print("null"); raise SystemExit(0)
base = d.locate_file("")
direct = d.read_text("direct_url.json")
print(json.dumps({
    "name": d.metadata["Name"], "version": d.version, "base": str(base),
    "files": [str(f) for f in (d.files or [])], "direct_url": json.loads(direct) if direct else None,
}))
"""


def query_dist(name: str, python: str | None = None) -> dict[str, object] | None:
    """Metadata of an installed dist (name, version, base dir, RECORD files, direct_url), or None."""
    exe = python or sys.executable
    try:
        proc = subprocess.run(
            [exe, "-I", "-c", _DIST_QUERY, name], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvironmentProblem(f"cannot run the interpreter {exe}: {exc}") from exc
    if proc.returncode != 0:
        raise EnvironmentProblem(f"{exe} failed to read metadata: {proc.stderr.strip().splitlines()[-1:]}")
    data = json.loads(proc.stdout or "null")
    return data if isinstance(data, dict) else None


def describe(target: Target, python: str | None = None) -> str:
    """What a target resolved to, for the scan's header: version, and where it came from."""
    env = f"the environment of {python or sys.executable}"
    if target.kind == "dist":
        where = "editable install, source" if target.files is None else "installed in " + env + ","
        return f"{target.name} {target.version} ({where} {target.root})"
    if target.kind == "requirement":
        from packaging.requirements import Requirement

        req = Requirement(target.spec)  # it parsed when the target was resolved
        why = f"not installed in {env}, so " if not req.specifier and not req.url else ""
        return f"{target.name} {target.version} ({why}downloaded: the wheel unpacked in {target.root})"
    if target.kind == "wheel":
        return f"{target.spec} (wheel, unpacked in {target.root})"
    if target.files is not None:
        return f"{target.spec} (file)"
    return f"{target.spec} (directory {target.root})"


def _editable_root(direct_url: object) -> Path | None:
    if not isinstance(direct_url, dict):
        return None
    url = str(direct_url.get("url", ""))
    if url.startswith("file://") and (direct_url.get("dir_info") or {}).get("editable"):
        from urllib.parse import unquote, urlparse

        return Path(unquote(urlparse(url).path))
    return None


def _dist_target(spec: str, data: dict[str, object]) -> Target:
    name, version = str(data["name"]), str(data["version"])
    editable = _editable_root(data.get("direct_url"))
    if editable is not None and editable.is_dir():
        return Target(spec, "dist", editable, None, name, version)
    base = Path(str(data["base"]))
    files = tuple(
        (base / f).resolve()
        for f in data["files"]  # type: ignore[union-attr]
        if ".dist-info" not in f and "__pycache__" not in f and not f.startswith("..")
    )
    return Target(spec, "dist", base, files, name, version)


def unpack_wheel(wheel: Path) -> Path:
    """Unpack a wheel into the cache (once per content hash) and return the directory."""
    import zipfile  # only wheels need it: not imported on every scan

    digest = hashlib.sha256()
    with wheel.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    dest = cache_dir() / "unpacked" / f"{wheel.stem}-{digest.hexdigest()[:12]}"
    if (dest / ".complete").exists():
        return dest
    tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
    try:
        with zipfile.ZipFile(wheel) as zf:
            for member in zf.infolist():
                target = (tmp / member.filename).resolve()
                if not str(target).startswith(str(tmp.resolve())):
                    raise TargetError(f"{wheel}: member {member.filename!r} escapes the wheel")
            zf.extractall(tmp)
    except zipfile.BadZipFile as exc:
        raise TargetError(f"{wheel}: not a wheel ({exc})") from exc
    (tmp / ".complete").write_text("")
    if dest.exists():  # another run finished first
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    else:
        tmp.rename(dest)
    return dest


def download_wheel(requirement: str, python: str | None = None) -> Path:
    """`pip download --no-deps` one wheel into capgap's cache (reused when already there)."""
    key = hashlib.sha256(f"{requirement}|{python or ''}".encode()).hexdigest()[:16]
    dest = cache_dir() / "wheels" / key
    existing = sorted(dest.glob("*.whl")) if dest.is_dir() else []
    if existing:
        return existing[0]
    dest.mkdir(parents=True, exist_ok=True)
    exe = python or sys.executable
    cmd = [
        exe,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "-q",
        "-d",
        str(dest),
        requirement,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["pip failed"])[-1]
        raise EnvironmentProblem(f"pip download {requirement!r} failed: {last}")
    wheels = sorted(dest.glob("*.whl"))
    if not wheels:
        raise TargetError(f"pip download {requirement!r} produced no wheel (only an sdist?)")
    return wheels[0]


def resolve_target(spec: str, python: str | None = None) -> Target:
    """Turn a user's TARGET into files: path, wheel, installed dist, or requirement to download."""
    path = Path(spec).expanduser()
    if path.exists():
        if path.is_file() and path.suffix == ".whl":
            return Target(spec, "wheel", unpack_wheel(path))
        return Target(
            spec,
            "path",
            path.resolve() if path.is_dir() else path.resolve().parent,
            None if path.is_dir() else (path.resolve(),),
        )
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(spec)
    except InvalidRequirement as exc:
        raise TargetError(f"{spec!r} is neither a path nor a distribution/requirement") from exc
    if not req.specifier and not req.url:
        data = query_dist(req.name, python)
        if data is not None:
            return _dist_target(spec, data)
    wheel = download_wheel(spec, python)
    name, _, rest = wheel.name.partition("-")
    return Target(spec, "requirement", unpack_wheel(wheel), None, name, rest.split("-")[0])


def iter_files(target: Target, name_filter: Callable[[str], bool] | None = None) -> Iterator[Path]:
    """Every regular file of the target (symlinked directories are not followed: no loops).

    `name_filter`: only files whose name passes (tested before any Path is built: cheap on big trees).
    """
    if target.files is not None:
        yield from (f for f in target.files if (name_filter is None or name_filter(f.name)) and f.is_file())
        return
    yield from (Path(f[1]) for f in target.tree if name_filter is None or name_filter(f[2]))


def list_tree(root: str, prefix: str = "", in_tool_dir: bool = False) -> Iterator[TreeFile]:
    """Each file under `root`, in os.walk's order, by os.scandir alone (os.walk asks `islink` of
    every directory again): files sorted first, then directories sorted and entered unless a link
    or in VCS_DIRS; files under a TOOL_DIRS directory are marked."""
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return
    dirs = []
    for entry in entries:
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            if entry.name not in VCS_DIRS and not entry.is_symlink():
                dirs.append(entry)
        else:
            yield prefix + entry.name, entry.path, entry.name, entry.is_symlink(), in_tool_dir
    for entry in dirs:
        yield from list_tree(entry.path, f"{prefix}{entry.name}/", in_tool_dir or entry.name in TOOL_DIRS)
