"""Remember what each binary holds, keyed by its identity on disk, so a rescan costs one stat().

One small JSON file per binary under capgap's cache directory, written atomically; a file whose
size, mtime, ctime or inode changed is read again. A cache that cannot be written is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from capgap.binaries.fatbin import FatbinEntry
from capgap.binaries.reader import CudaBinary

SCHEMA = 2
MISS = object()  # get(): not cached (None is a cached "not a binary")


def identity_file(root: Path, path: Path, st: os.stat_result) -> Path:
    """The cache file of what `path` held when it was as `st` says (a changed file gets a new one)."""
    ident = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|{st.st_ctime_ns}|{st.st_ino}|{st.st_dev}"
    key = hashlib.sha256(ident.encode()).hexdigest()
    return root / key[:2] / f"{key}.json"


def write_atomically(target: Path, data: object) -> None:
    """`data` as JSON at `target`, whole or not at all; a cache that cannot be written only costs speed."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(data, separators=(",", ":")))
        os.replace(tmp, target)
    except OSError:
        pass


class BinaryCache:
    def __init__(self, root: Path) -> None:
        self.root = root / f"binaries-v{SCHEMA}"

    def _file(self, path: Path, st: os.stat_result) -> Path:
        return identity_file(self.root, path, st)

    def get(self, path: Path, st: os.stat_result) -> CudaBinary | str | None | object:
        """The cached CudaBinary, None (not a binary), an unreadable reason (str), or MISS."""
        try:
            data = json.loads(self._file(path, st).read_text())
        except (OSError, ValueError):
            return MISS
        if data.get("unreadable") is not None:
            return str(data["unreadable"])
        if data.get("binary") is None:
            return None
        b = data["binary"]
        entries = tuple(
            (
                section,
                FatbinEntry(kind, sm, suffix, comp, psize, size, tuple(ptx) if ptx else None, cont, off),
            )
            for section, kind, sm, suffix, comp, psize, size, ptx, cont, off in b["entries"]
        )
        return CudaBinary(path, int(b["size"]), str(b["format"]), entries)  # type: ignore[arg-type]

    def put(self, path: Path, st: os.stat_result, result: CudaBinary | str | None) -> None:
        if isinstance(result, CudaBinary):
            entries = [
                [
                    s,
                    e.kind,
                    e.sm,
                    e.suffix,
                    e.compression,
                    e.payload_size,
                    e.size,
                    e.ptx_version,
                    e.container,
                    e.offset,
                ]
                for s, e in result.entries
            ]
            data: dict[str, object] = {
                "binary": {"size": result.size, "format": result.format, "entries": entries}
            }
        else:
            data = {"binary": None, "unreadable": result}
        write_atomically(self._file(path, st), data)
