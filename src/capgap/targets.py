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

from capgap.boundedread import open_regular
from capgap.errors import EnvironmentProblem, TargetError
from capgap.paths import cache_dir
from capgap.skipdirs import TOOL_DIRS, VCS_DIRS

# (relative posix path, path, name, not a plain file (a symlink, FIFO, socket or device: grep -r
# reads none of them, the scan's own reader does and reports what it refuses), inside a TOOL_DIRS dir)
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


def query_dist(name: str, python: str | None = None) -> dict[str, object] | None:
    """Metadata of an installed dist (name, version, base dir, RECORD files, direct_url), or None.

    Read from the dist-info files of the environment's site directories (capgap's own, or those
    `--python` names: see interpreters.py); no code of that environment runs."""
    from importlib import metadata

    from capgap.interpreters import site_paths

    paths = site_paths(python)
    try:
        dist = next(iter(metadata.distributions(name=name, path=paths)), None)
        if dist is None:
            return None
        direct = dist.read_text("direct_url.json")
        return {
            "name": dist.metadata["Name"],
            "version": dist.version,
            "base": str(dist.locate_file("")),
            "files": [str(f) for f in (dist.files or [])],
            "direct_url": json.loads(direct) if direct else None,
        }
    except (OSError, ValueError, UnicodeDecodeError) as exc:  # a damaged dist-info (RECORD, JSON)
        raise EnvironmentProblem(f"cannot read the metadata of {name}: {exc}") from exc


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


WHEEL_MAX_UNPACKED = 16 << 30  # the largest engine wheels (torch+cu130) unpack to a few GB
WHEEL_MAX_RATIO = 100  # uncompressed / compressed; real wheels are 2-10x, a zip bomb 1000x
_RATIO_FROM = 64 << 20  # below this much unpacked, no ratio is suspicious


def unpack_wheel(wheel: Path) -> Path:
    """Unpack a wheel into the cache (once per content hash) and return the directory.

    Every failure (not a zip, a corrupt or encrypted member, an unknown compression, a name no
    filesystem takes, more than WHEEL_MAX_UNPACKED or WHEEL_MAX_RATIO) is a TargetError, and
    the temp directory is removed whatever happens."""
    digest = hashlib.sha256()
    try:
        fd, _st = open_regular(wheel)
        with os.fdopen(fd, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as exc:
        raise TargetError(f"{wheel}: cannot read it ({exc.strerror or exc})") from exc
    dest = cache_dir() / "unpacked" / f"{wheel.stem[:100]}-{digest.hexdigest()[:12]}"
    if (dest / ".complete").exists():
        return dest
    _remove_stale_temps(dest)
    tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
    import shutil

    try:
        _extract(wheel, tmp)
        (tmp / ".complete").write_text("")
        if dest.exists():  # another run finished first
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


def _remove_stale_temps(dest: Path) -> None:
    """Temp directories of unpacks whose process is gone (killed half-way)."""
    import shutil

    for stale in dest.parent.glob(f"{dest.name}.tmp*"):
        pid = stale.name.rpartition(".tmp")[2]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def _member_path(tmp: Path, name: str, wheel: Path) -> Path:
    parts = name.split("/")
    if name.startswith("/") or "\\" in name or "\0" in name or any(p in (".", "..") for p in parts):
        raise TargetError(f"{wheel}: member {name[:80]!r} escapes the wheel")
    if any(len(p.encode("utf-8", "surrogateescape")) > 255 for p in parts):
        raise TargetError(f"{wheel}: member name {name[:60]!r}... has a part over 255 bytes")
    return tmp.joinpath(*(p for p in parts if p))


def _extract(wheel: Path, tmp: Path) -> None:
    import zipfile  # only wheels need it: not imported on every scan
    import zlib

    try:
        with zipfile.ZipFile(wheel) as zf:
            members = zf.infolist()
            total = sum(m.file_size for m in members)
            packed = sum(m.compress_size for m in members) or 1
            _check_sizes(wheel, total, packed)
            written = 0
            tmp.mkdir(parents=True)
            for member in members:
                if member.flag_bits & 0x1:
                    raise TargetError(f"{wheel}: member {member.filename[:80]!r} is encrypted")
                out = _member_path(tmp, member.filename, wheel)
                if member.is_dir():
                    out.mkdir(parents=True, exist_ok=True)
                    continue
                out.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(member) as src, open(out, "wb") as dst:
                    while chunk := src.read(1 << 20):
                        written += len(chunk)
                        _check_sizes(wheel, written, packed)
                        dst.write(chunk)
    except TargetError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise TargetError(f"{wheel}: not a wheel, or a corrupt one ({exc})") from exc
    except NotImplementedError as exc:  # an unknown compression method
        raise TargetError(f"{wheel}: a member capgap cannot unpack ({exc})") from exc
    except (OSError, ValueError, RuntimeError) as exc:  # a name the filesystem refuses, a full disk, ...
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise TargetError(f"{wheel}: cannot unpack it ({reason})") from exc


def _check_sizes(wheel: Path, unpacked: int, packed: int) -> None:
    if unpacked > WHEEL_MAX_UNPACKED:
        raise TargetError(f"{wheel}: unpacks to more than {WHEEL_MAX_UNPACKED >> 30} GiB; refusing it")
    if unpacked > _RATIO_FROM and unpacked > WHEEL_MAX_RATIO * packed:
        raise TargetError(
            f"{wheel}: unpacks to more than {WHEEL_MAX_RATIO}x its compressed size (a zip bomb?); refusing it"
        )


def wheel_dir(requirement: str, python: str | None = None, pure: bool = False) -> Path:
    """Where capgap's cache keeps the wheel `download_wheel` fetched for these arguments."""
    key = hashlib.sha256(f"{requirement}|{python or ''}{'|pure' if pure else ''}".encode()).hexdigest()
    return cache_dir() / "wheels" / key[:16]


# pip's tags of a wheel with no compiled code (`py3-none-any`)
_PURE = ["--platform", "any", "--implementation", "py", "--abi", "none"]


def download_wheel(requirement: str, python: str | None = None, pure: bool = False) -> Path:
    """`pip download --no-deps` one wheel into capgap's cache (reused when already there).

    Always capgap's own pip, isolated (`-I`: no `./pip/` from the current directory) and in an
    empty directory; for another interpreter, with that interpreter's tags (its own pip would
    run with its environment's site processing). `pure`: only a wheel without compiled code (a
    release read for its Python modules, never a half-gigabyte of kernels)."""
    dest = wheel_dir(requirement, python, pure)
    existing = sorted(dest.glob("*.whl")) if dest.is_dir() else []
    if existing:
        return existing[0]
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-I", "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q"]
    cmd += [*(_PURE if pure else _tag_options(python)), "-d", str(dest.resolve()), requirement]
    import tempfile

    with tempfile.TemporaryDirectory(prefix="capgap-neutral-") as neutral:
        proc = subprocess.run(cmd, cwd=neutral, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["pip failed"])[-1]
        raise EnvironmentProblem(f"pip download {requirement!r} failed: {last}")
    wheels = sorted(dest.glob("*.whl"))
    if not wheels:
        raise TargetError(f"pip download {requirement!r} produced no wheel (only an sdist?)")
    return wheels[0]


def _tag_options(python: str | None) -> list[str]:
    """pip's --python-version/--implementation/--abi/--platform for another interpreter (none
    when it is this one's version: same machine, same tags)."""
    if python is None:
        return []
    from capgap.interpreters import describe

    other = describe(python)
    impl = {"cpython": "cp", "pypy": "pp"}.get(other.implementation, other.implementation)
    ours = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if other.major_minor == ours and other.implementation == sys.implementation.name:
        return []
    from packaging.tags import platform_tags

    nodot = other.major_minor.replace(".", "")
    abis = [f"{impl}{nodot}", "abi3", "none"]
    out = ["--python-version", other.major_minor, "--implementation", impl]
    out += [opt for abi in abis for opt in ("--abi", abi)]
    out += [opt for tag in dict.fromkeys(platform_tags()) for opt in ("--platform", tag)]
    return out


def resolve_target(spec: str, python: str | None = None) -> Target:
    """Turn a user's TARGET into files: path, wheel, installed dist, or requirement to download."""
    path = Path(spec).expanduser()
    if path.is_symlink() and not path.exists():
        raise TargetError(f"{spec}: a symbolic link that leads nowhere (dangling, or a loop of links)")
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


def files_ending(target: Target, suffixes: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """(path relative to the root, path) of the target's files whose names end in `suffixes`
    (a directory's tool folders, such as a venv, left out)."""
    if target.files is None:
        for rel, path, name, _is_link, in_tool_dir in target.tree:
            if not in_tool_dir and name.endswith(suffixes):
                yield rel, path
        return
    for file in target.files:
        if file.name.endswith(suffixes):
            try:
                yield file.relative_to(target.root).as_posix(), str(file)
            except ValueError:
                yield file.as_posix(), str(file)


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
        else:  # d_type answers both: no stat
            special = entry.is_symlink() or not entry.is_file(follow_symlinks=False)
            yield prefix + entry.name, entry.path, entry.name, special, in_tool_dir
    for entry in dirs:
        yield from list_tree(entry.path, f"{prefix}{entry.name}/", in_tool_dir or entry.name in TOOL_DIRS)
