"""The scan result cache: extracted facts keyed by file content, in capgap's cache dir.

One file per target root holds a manifest `relpath -> (size, mtime_ns, sha1)` (so an unchanged
tree is answered from `stat` alone) and the facts per content hash (so a touched-but-unchanged
or renamed file is not parsed again). Facts are arch-independent: any `--arch` reuses them.
"""

from __future__ import annotations

import hashlib
import os
import pickle  # nosec: our own cache file, written by this module only
from dataclasses import dataclass, field
from pathlib import Path

from capgap.paths import cache_dir
from capgap.scan.records import FileFacts

VERSION = 3  # bump when extraction changes what it records


@dataclass
class ScanCache:
    path: Path | None
    manifest: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    facts: dict[str, FileFacts | None] = field(default_factory=dict)
    dirty: bool = False

    @classmethod
    def open(cls, root: Path, enabled: bool) -> ScanCache:
        if not enabled:
            return cls(None)
        key = hashlib.sha1(str(root.resolve()).encode(), usedforsecurity=False).hexdigest()[:16]
        path = cache_dir() / "scan" / f"{key}-v{VERSION}.pickle"
        try:
            with path.open("rb") as fh:
                manifest, facts = pickle.load(fh)  # nosec: see module docstring
            return cls(path, manifest, facts)
        except (
            OSError,
            EOFError,
            pickle.UnpicklingError,
            ValueError,
            TypeError,
            AttributeError,
            ImportError,
        ):
            return cls(path)

    def lookup(self, rel: str, st: os.stat_result) -> tuple[bool, FileFacts | None]:
        """(hit, facts) for a file whose size and mtime are unchanged since it was cached."""
        entry = self.manifest.get(rel)
        if (
            entry is None
            or entry[0] != st.st_size
            or entry[1] != st.st_mtime_ns
            or entry[2] not in self.facts
        ):
            return False, None
        return True, _rebased(self.facts[entry[2]], rel)

    def by_content(self, digest: str, rel: str) -> tuple[bool, FileFacts | None]:
        if digest in self.facts:
            return True, _rebased(self.facts[digest], rel)
        return False, None

    def store(self, rel: str, st: os.stat_result, digest: str, facts: FileFacts | None) -> None:
        if self.path is None:
            return
        self.manifest[rel] = (st.st_size, st.st_mtime_ns, digest)
        self.facts[digest] = facts
        self.dirty = True

    def save(self, live: set[str]) -> None:
        if self.path is None or not self.dirty:
            return
        manifest = {k: v for k, v in self.manifest.items() if k in live}
        digests = {v[2] for v in manifest.values()}
        facts = {k: v for k, v in self.facts.items() if k in digests}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        try:
            with tmp.open("wb") as fh:
                pickle.dump((manifest, facts), fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.path)
        except (OSError, pickle.PicklingError, RecursionError):
            tmp.unlink(missing_ok=True)  # a cache that cannot be written is only slower next time


def _rebased(facts: FileFacts | None, rel: str) -> FileFacts | None:
    """Cached facts of identical content found under another path speak for this path."""
    if facts is None or facts.path == rel:
        return facts
    from dataclasses import replace

    from capgap.scan.fileparse import module_name

    return replace(facts, path=rel, module=module_name(rel))


def digest(data: bytes) -> str:
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()
