"""The native analyzer's cache: each native source's facts keyed by (size, mtime), and the last
findings per arch set, in capgap's cache dir (a pickle per target root, like the source cache).

An unchanged tree is answered from `stat` alone; a changed file is read again, the others come
from the cache (facts are arch-independent), and the judging runs again over all of them.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle  # nosec: our own cache file, written by this module only
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capgap.native.records import NativeFacts
from capgap.paths import cache_dir

VERSION = 5  # bump when reading records something else


@dataclass
class NativeCache:
    path: Path | None
    files: dict[str, tuple[int, int, NativeFacts | None]] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def open(cls, root: Path, enabled: bool, vendored: bool = False) -> NativeCache:
        """`vendored`: vendored libraries read whole (--all), a cache of its own."""
        if not enabled:
            return cls(None)
        key = hashlib.sha1(str(root.resolve()).encode(), usedforsecurity=False).hexdigest()[:16]
        path = cache_dir() / "native" / f"{key}-{'all' if vendored else 'own'}-v{VERSION}.pickle"
        try:
            with path.open("rb") as fh:
                files, results = pickle.load(fh)  # nosec: see module docstring
            if isinstance(files, dict) and isinstance(results, dict):
                return cls(path, files, results)
        except (
            OSError,
            EOFError,
            pickle.UnpicklingError,
            ValueError,
            TypeError,
            AttributeError,
            ImportError,
        ):
            pass
        return cls(path)

    def lookup(self, rel: str, st: os.stat_result) -> tuple[bool, NativeFacts | None]:
        entry = self.files.get(rel)
        if entry is None or (entry[0], entry[1]) != (st.st_size, st.st_mtime_ns):
            return False, None
        return True, entry[2]

    def save(self, files: dict[str, tuple[int, int, NativeFacts | None]], results: dict[str, Any]) -> None:
        if self.path is None:
            return
        tmp = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with tmp.open("wb") as fh:
                pickle.dump((files, results), fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.path)
        except (
            OSError,
            pickle.PicklingError,
            RecursionError,
        ):  # a cache that cannot be written is only slower
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
