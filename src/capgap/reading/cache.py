"""The scan result cache: extracted facts keyed by file content, in capgap's cache dir.

Per target root: a manifest `relpath -> (size, mtime_ns, sha1)` with the finished results per
arch set (an unchanged tree is answered from `stat` alone), and the facts per content hash (a
touched-but-unchanged or renamed file is not parsed again; facts are arch-independent, so any
`--arch` reuses them).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle  # nosec: our own cache file, written by this module only
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capgap.judging.records import FileFacts
from capgap.paths import cache_dir

VERSION = 133  # bump when extraction changes what it records


@functools.lru_cache(maxsize=1)
def code_stamp() -> str:
    """What capgap's own code is: its modules' names, sizes and mtimes. Findings are kept per
    stamp, so an edited or upgraded capgap judges an unchanged tree again (its file facts, which
    only VERSION changes, are reused)."""
    h = hashlib.sha1(usedforsecurity=False)
    todo = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
    while todo:
        with os.scandir(todo.pop()) as entries:
            for e in sorted(entries, key=lambda e: e.name):
                if e.is_dir(follow_symlinks=False) and e.name != "__pycache__":
                    todo.append(e.path)
                elif e.name.endswith((".py", ".so")):
                    st = e.stat()
                    h.update(f"{e.path}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()[:12]


@dataclass
class ScanCache:
    """`<key>.index` (manifest + finished results, small) and `<key>.facts` (loaded only on a miss)."""

    path: Path | None
    manifest: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)  # archs key -> (findings, skipped)
    _facts: dict[str, FileFacts | None] | None = None
    dirty: bool = False

    @classmethod
    def open(cls, root: Path, enabled: bool) -> ScanCache:
        if not enabled:
            return cls(None, _facts={})
        key = hashlib.sha1(str(root.resolve()).encode(), usedforsecurity=False).hexdigest()[:16]
        path = cache_dir() / "scan" / f"{key}-v{VERSION}"
        loaded = _load(path.with_suffix(".index"))
        if not isinstance(loaded, tuple) or len(loaded) != 2:
            return cls(path)
        return cls(path, loaded[0], loaded[1])

    @property
    def facts(self) -> dict[str, FileFacts | None]:
        if self._facts is None:
            loaded = _load(self.path.with_suffix(".facts")) if self.path else None
            self._facts = loaded if isinstance(loaded, dict) else {}
        return self._facts

    def unchanged(self, stats: dict[str, os.stat_result]) -> bool:
        """Is every file exactly as cached (same set of paths, sizes and mtimes)?"""
        if self.path is None or set(stats) != set(self.manifest):
            return False
        return all((st.st_size, st.st_mtime_ns) == self.manifest[rel][:2] for rel, st in stats.items())

    def lookup(self, rel: str, st: os.stat_result) -> tuple[bool, FileFacts | None]:
        """(hit, facts) for a file whose size and mtime are unchanged since it was cached."""
        entry = self.manifest.get(rel)
        same = entry is not None and (entry[0], entry[1]) == (st.st_size, st.st_mtime_ns)
        if entry is None or not same or entry[2] not in self.facts:
            return False, None
        return True, _rebased(self.facts[entry[2]], rel)

    def store(self, rel: str, st: os.stat_result, digest: str, facts: FileFacts | None) -> None:
        if self.path is None:
            return
        self.manifest[rel] = (st.st_size, st.st_mtime_ns, digest)
        self.facts[digest] = facts
        self.dirty = True

    def save(self, live: set[str], results: dict[str, Any]) -> None:
        if self.path is None:
            return
        manifest = {k: v for k, v in self.manifest.items() if k in live}
        if self.dirty or manifest != self.manifest:
            digests = {v[2] for v in manifest.values()}
            _dump(self.path.with_suffix(".facts"), {k: v for k, v in self.facts.items() if k in digests})
            self.results = {}
        self.results.update(results)
        _dump(self.path.with_suffix(".index"), (manifest, self.results))


def _load(path: Path) -> Any:
    try:
        with path.open("rb") as fh:
            return pickle.load(fh)  # nosec: see module docstring
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError, ImportError):
        return None


def _dump(path: Path, obj: Any) -> None:
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("wb") as fh:
            pickle.dump(obj, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except (OSError, pickle.PicklingError, RecursionError):  # a cache that cannot be written is only slower
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def _rebased(facts: FileFacts | None, rel: str) -> FileFacts | None:
    """Cached facts of identical content found under another path speak for this path."""
    if facts is None or facts.path == rel:
        return facts
    from dataclasses import replace

    from capgap.reading.fileparse import module_name

    return replace(facts, path=rel, module=module_name(rel))


def digest(data: bytes) -> str:
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()
