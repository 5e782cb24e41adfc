"""The packages a target pins (`Requires-Dist: flashinfer-python==0.7.2.post1`), read where a
path of the target calls into them.

vLLM's `_supports_current_device` asks `family(100) and has_flashinfer_cutedsl_grouped_gemm_nt_masked()`;
what the FlashInfer kernel behind it needs (tcgen05) is written in FlashInfer, not in vLLM. The
pinned release is the one the engine runs with: its modules are read as the target's own are
(never imported), only where judging asks for one (`judging.callees`).

Where a pinned release comes from: the site directory of an installed target (what runs beside it);
else capgap's cache of wheels; else, for a target that was itself downloaded or
given as a wheel, `pip download --no-deps` of that exact release, a pure-Python wheel only (the
modules are what is read; sgl-kernel's 535 MB of kernels is not fetched for them); a directory on
disk fetches nothing. Whatever cannot be had leaves the evidence unread, as before.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import re
import time
from email.parser import HeaderParser
from pathlib import Path

from capgap.boundedread import read_regular
from capgap.errors import CapgapError
from capgap.judging import callees, remarks
from capgap.judging.records import FileFacts
from capgap.paths import cache_dir
from capgap.reading.fileparse import facts_for_bytes
from capgap.targets import Target, download_wheel, unpack_wheel, wheel_dir

# `flashinfer-python==0.7.2.post1`, `flashinfer_python[cu13]==0.7.2` (no marker: markers are extras
# and platforms a default install may leave out)
_PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*==\s*([A-Za-z0-9.+!_-]+)\s*$")
_MAX_METADATA = 4 << 20
_MAX_MODULE = 2 << 20  # a hand-written module is far smaller; what is larger is read no further


def pins(root: Path, files: tuple[Path, ...] | None = None, name: str | None = None) -> dict[str, str]:
    """The exact releases the target's METADATA requires, by normalised name (`flashinfer_python`):
    a tree's own `*.dist-info`, or, for an installed dist (`files`, its site directory as `root`),
    the dist-info of that dist (`name`)."""
    metadata = sorted(root.glob("*.dist-info/METADATA"))
    if files is not None:
        own = _normal(name or "")
        metadata = [m for m in metadata if _normal(m.parent.name.partition("-")[0]) == own]
    out: dict[str, str] = {}
    for path in metadata[:1]:
        try:
            text = read_regular(path, _MAX_METADATA).decode("utf-8", "replace")
        except OSError:  # (NotRegular, TooLarge too)
            continue
        for value in HeaderParser().parsestr(text).get_all("Requires-Dist") or []:
            found = _PIN.match(value)
            if found is not None:
                out[_normal(found[1])] = found[2]
    return out


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


class Dependencies:
    """The modules of the releases a target pins, by dotted name, read on first use."""

    def __init__(self, target: Target, fetch: bool, tops: frozenset[str]) -> None:
        """`fetch`: may pip download a release capgap has not cached; `tops`: the target's own
        top-level packages (never looked for elsewhere)."""
        self.target = target
        self.fetch = fetch
        self.tops = tops
        self.pinned = pins(target.root, target.files, target.name)
        self.read: list[str] = []  # "flashinfer-python 0.7.2.post1": the releases whose modules were read
        self.missing: list[str] = []  # the releases that could not be had (offline, no wheel)
        self._roots: dict[str, Path | None] = {}
        self._facts: dict[str, FileFacts | None] = {}

    def stamp(self) -> str:
        """What the pins are, for the key of a cached answer."""
        return ",".join(f"{n}=={v}" for n, v in sorted(self.pinned.items()))

    def facts(self, module: str) -> FileFacts | None:
        """The facts of module `module` of a pinned release (None when no pin provides it)."""
        if module in self._facts:
            return self._facts[module]
        found = None
        top = module.partition(".")[0]
        root = self._root(top) if top and top not in self.tops else None
        if root is not None:
            found = _module_facts(root, module)
        self._facts[module] = found
        return found

    def _root(self, top: str) -> Path | None:
        """The directory holding package `top` of the release that provides it."""
        if top in self._roots:
            return self._roots[top]
        self._roots[top] = None
        for name, version in self.pinned.items():
            if name != top and not name.startswith(top + "_"):
                continue
            root = self._release(name, version)
            if root is not None and ((root / top).is_dir() or (root / f"{top}.py").is_file()):
                self._roots[top] = root
                self.read.append(f"{name} {version}")
                break
        return self._roots[top]

    def _release(self, name: str, version: str) -> Path | None:
        if self.target.kind == "dist":
            # installed: what runs beside it is what its site directory holds (of whichever
            # environment `--python` named), whatever version that is
            return self.target.root if self.target.files is not None else None
        spec = f"{name}=={version}"
        try:
            cached = _cached(name, version)
        except (CapgapError, OSError):  # a damaged wheel in the cache: as if it were not there
            cached = None
        if cached is not None or not self.fetch:
            return cached
        tried = _beside(spec, ".unavailable")
        if tried.is_file() and time.time() - tried.stat().st_mtime < _RETRY_AFTER_S:
            self.missing.append(spec)  # not to be had a moment ago (no such wheel, or offline)
            return None
        try:
            with _locked(spec):
                return _cached(name, version) or unpack_wheel(download_wheel(spec, pure=True))
        except (CapgapError, OSError):
            self.missing.append(spec)
            with contextlib.suppress(OSError):
                tried.parent.mkdir(parents=True, exist_ok=True)
                tried.write_text("")
            return None


def _cached(name: str, version: str) -> Path | None:
    """The release unpacked in capgap's cache, or its downloaded wheel unpacked now."""
    wheels = sorted(wheel_dir(f"{name}=={version}", pure=True).glob("*.whl"))
    if wheels:
        return unpack_wheel(wheels[0])
    for unpacked in sorted((cache_dir() / "unpacked").glob(f"{name}-{version}-*")):
        if (unpacked / ".complete").is_file():
            return unpacked
    return None


_RETRY_AFTER_S = 24 * 3600  # a release pip could not get is not asked for again before this


def _beside(spec: str, suffix: str) -> Path:
    """A file of capgap's wheel cache about the download of `spec`: its lock (`.lock`), or the
    memory of a failed one (`.unavailable`: rescans offline do not wait on pip again)."""
    return cache_dir() / "wheels" / f".{hashlib.sha256(spec.encode()).hexdigest()[:16]}{suffix}"


class _locked:
    """One download of a release at a time (the scan judges in two processes)."""

    def __init__(self, spec: str) -> None:
        self.path = _beside(spec, ".lock")

    def __enter__(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = open(self.path, "a")  # noqa: SIM115 - held until __exit__
        fcntl.flock(self.fh, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fh, fcntl.LOCK_UN)
        self.fh.close()


def _module_facts(root: Path, module: str) -> FileFacts | None:
    """Facts of module `a.b.c` (`a/b/c.py` or `a/b/c/__init__.py` under `root`), read as a scanned
    file is; None when there is no such module."""
    base = root.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if not path.is_file():
            continue
        try:
            data = read_regular(path, _MAX_MODULE)
        except OSError:  # (NotRegular, TooLarge too)
            return None
        rel = path.relative_to(root).as_posix()
        found = facts_for_bytes(rel, data, True)
        if found is None:  # nothing the scan would keep: what its path says still counts
            found = FileFacts(rel, module)
            remarks.add_path_needs(found)
        _own_imports(found, data.decode("utf-8", "replace"), rel.endswith("__init__.py"))
        return found
    return None


def _own_imports(facts: FileFacts, text: str, is_package: bool) -> None:
    """What the module imports, and which of those are its release's own modules, absolute imports
    included (`from flashinfer.gemm.kernels.grouped_gemm_masked_blackwell import ...`): the kernels
    a wrapper of the release drives live there."""
    if not facts.imports:
        facts.imports = callees.import_map(text, facts.module, is_package)
    top = facts.module.partition(".")[0]
    for _start, base, names in callees.import_statements(text, facts.module, is_package):
        bases = [base] if base is not None else [words[0] for words in names]
        for dotted in bases:
            own = dotted and dotted.partition(".")[0] == top and dotted != facts.module
            if own and dotted not in facts.siblings:
                facts.siblings.append(dotted)
