"""Read a file the way every reader of capgap does: one open that cannot block, `fstat` on what
was opened, nothing but a regular file, and never more than a size limit.

A scanned tree, a store or a wheel may hold a symlink to `/dev/zero`, a FIFO or a 10 GB file;
reading any of them whole (or waiting on a FIFO's writer) is a hang or the OOM killer.
"""

from __future__ import annotations

import errno
import os
import stat

_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
    stat.S_IFDIR: "a directory",
    stat.S_IFLNK: "a symlink",
}


class NotRegular(OSError):
    """The path is a FIFO, socket, device or directory (or, with follow=False, a symlink)."""


class TooLarge(OSError):
    """The file is larger than the reader's limit; `size` is its size on disk."""

    def __init__(self, message: str, size: int) -> None:
        super().__init__(message)
        self.size = size


def kind_of(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "a special file")


def open_regular(path: str | os.PathLike[str], *, follow: bool = True) -> tuple[int, os.stat_result]:
    """An fd (the caller closes it) on a regular file, and its stat. Opened O_NONBLOCK, so a
    FIFO without a writer opens at once (and is then refused) instead of waiting forever."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow and exc.errno == errno.ELOOP:
            raise NotRegular(errno.ELOOP, "not a regular file (a symlink)") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(errno.EINVAL, f"not a regular file ({kind_of(st.st_mode)})")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_fd(fd: int, size_hint: int, limit: int) -> bytes:
    """At most `limit` + 1 bytes from fd (one more than allowed tells the caller it was over)."""
    chunks = []
    left = limit + 1
    while left > 0 and (chunk := os.read(fd, min(left, max(size_hint + 1, 1 << 16)))):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_regular(path: str | os.PathLike[str], limit: int, *, follow: bool = True) -> bytes:
    """The bytes of a regular file no larger than `limit`; NotRegular, TooLarge or OSError else.

    The size is checked on what was read, not only on fstat's answer: a file that grows while
    it is read still stops at the limit."""
    fd, st = open_regular(path, follow=follow)
    try:
        if st.st_size > limit:
            raise TooLarge(f"larger than {_human(limit)} ({_human(st.st_size)})", st.st_size)
        data = read_fd(fd, st.st_size, limit)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise TooLarge(f"larger than {_human(limit)} (it grew while being read)", len(data))
    return data


def read_prefix(path: str | os.PathLike[str], limit: int) -> tuple[bytes, int]:
    """(at most `limit` + 1 bytes of a regular file, its size on disk): for a reader that
    reports an over-size file itself, in its own words."""
    fd, st = open_regular(path)
    try:
        return read_fd(fd, min(st.st_size, limit), limit), st.st_size
    finally:
        os.close(fd)


def _human(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.0f} {unit}"
    return f"{n} bytes"
