"""An exclusive, non-blocking flock: a second run fails at once with a clear message."""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from capgap.errors import StoreError


@contextmanager
def flock(path: Path, busy_message: str) -> Iterator[None]:
    """Hold `path` locked (released by the kernel even if the process is killed). The lock is
    the same for every user who can read the file: one who cannot write it locks it read-only."""
    # never through a symlink (it would truncate whatever it points to), never a FIFO or a dir
    flags = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    writable = True
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | flags, 0o644)
        except PermissionError:  # another user's lock file: flock needs only a read-only open
            fd, writable = os.open(path, os.O_RDONLY | flags), False
    except OSError as exc:
        raise StoreError(
            f"cannot lock {path}: {exc.strerror or exc} (a directory or a symlink there?)"
        ) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise StoreError(f"cannot lock {path}: not a regular file")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            raise StoreError(f"{busy_message} (pid {holder})") from None
        if writable:
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)
