"""Upstream (pristine) content of a target's files, always checked against its expected hash.

git: the HEAD blob. Installed dist, in this order: the installed file itself when it still
matches RECORD, a copy saved in the store, the exact wheel in pip's cache, `pip download` of
exactly that version (into capgap's cache).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from capgap.boundedread import read_regular
from capgap.errors import CapgapError, StoreError
from capgap.patches.detect import PatchTarget
from capgap.patches.journal import FILE_MAX_BYTES, sha256
from capgap.patches.store import Store


class PristineUnavailable(StoreError):
    """No source gave the upstream content of a file (so it can't be restored or merged)."""


def _norm(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def _pip_cache_wheel(name: str, version: str) -> Path | None:
    """The wheel pip built and cached for exactly this version (what `pip cache list` shows)."""
    import os

    from platformdirs import user_cache_dir

    base = Path(os.environ.get("PIP_CACHE_DIR") or user_cache_dir("pip", appauthor=False)) / "wheels"
    if not base.is_dir():
        return None
    return next(iter(sorted(base.rglob(f"{_norm(name)}-{version}-*.whl"))), None)


class Pristine:
    def __init__(self, target: PatchTarget, store: Store) -> None:
        self.target, self.store = target, store
        self._wheel: zipfile.ZipFile | None = None
        self._wheel_error: str | None = None

    def get(self, rel: str) -> bytes | None:
        """Upstream content of rel (None: upstream has no such file)."""
        if self.target.kind == "git":
            return self.target.upstream_content([rel])[rel]
        want = self.target.record.get(rel)
        if want is None:
            return None
        current = self.target.current(rel)
        if sha256(current) == want:
            return current
        copy = self.store.find_blob(want)
        if copy is not None:
            try:  # a store's copy is trusted only when its content is the hash it is named by
                data = read_regular(copy, FILE_MAX_BYTES, follow=False)
            except OSError:
                data = None
            if data is not None and sha256(data) == want:
                return data
        data = self._from_wheel(rel)
        if data is not None and sha256(data) == want:
            return data
        why = self._wheel_error or "the wheel's copy does not match RECORD"
        raise PristineUnavailable(
            f"cannot find the pristine {rel} of {self.target.label()}: not in the store, {why}"
        )

    def wheel(self) -> zipfile.ZipFile | None:
        if self._wheel is None and self._wheel_error is None:
            name, version = self.target.name, str(self.target.version)
            path = _pip_cache_wheel(name, version)
            if path is None:
                from capgap.targets import download_wheel

                try:
                    path = download_wheel(f"{name}=={version}")
                except CapgapError as exc:
                    self._wheel_error = f"not in pip's cache, and {exc}"
                    return None
            try:
                self._wheel = zipfile.ZipFile(path)
            except (zipfile.BadZipFile, OSError) as exc:
                self._wheel_error = f"{path} is not a readable wheel ({exc})"
                return None
        return self._wheel

    def _from_wheel(self, rel: str) -> bytes | None:
        zf = self.wheel()
        if zf is None:
            return None
        names = set(zf.namelist())
        data_dir = f"{_norm(self.target.name)}-{self.target.version}.data"
        for member in (rel, f"{data_dir}/purelib/{rel}", f"{data_dir}/platlib/{rel}"):
            if member in names:
                return self._member(zf, member)
        return None

    def _member(self, zf: zipfile.ZipFile, member: str) -> bytes | None:
        """One member's bytes, at most FILE_MAX_BYTES of them; None (and why) for a member that
        is too large, corrupt, encrypted or compressed in a way zipfile cannot read."""
        import zlib

        info = zf.getinfo(member)
        if info.file_size > FILE_MAX_BYTES or info.flag_bits & 0x1:
            self._wheel_error = f"the wheel's {member} is encrypted or larger than {FILE_MAX_BYTES >> 30} GiB"
            return None
        try:
            with zf.open(info) as fh:
                data = fh.read(FILE_MAX_BYTES + 1)
        except (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, OSError, EOFError) as exc:
            self._wheel_error = f"the wheel's {member} cannot be read ({exc})"
            return None
        return data if len(data) <= FILE_MAX_BYTES else None
