"""Run one step over a list on two cores: a forked child takes the first part, this process the rest.

Judging the gates (~1,700 on an engine tree, helpers followed across files) is the scan's last
long step, ~0.2 s while the other core idles. A forked child inherits every file's facts
without a copy or a pickle; only its findings come back, pickled through a pipe. Without fork
(Windows, macOS's default), or when the child fails, this process does all of it.
"""

from __future__ import annotations

import os
import pickle  # nosec: only a child of this process writes what is read back
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")
MIN_WEIGHT = 300  # below this much work, forking costs more than it saves
CHILD_SHARE = 0.5  # of the weight, to the child


def in_two(
    step: Callable[[list[T]], list[R]], items: list[T], weight: Callable[[T], int], jobs: int
) -> list[R]:
    """`step(items)`, computed as `step(first part) + step(rest)` with the first part in a child
    (when `jobs`, the cores the user allows, is more than one)."""
    weights = [weight(item) for item in items]
    total = sum(weights)
    if jobs < 2 or total < MIN_WEIGHT or not _can_fork() or ahead_running():
        return step(items)  # (a child started ahead holds the other core: no gain in a second one)
    cut, done = 0, 0
    while cut < len(items) and done + weights[cut] <= total * CHILD_SHARE:
        done += weights[cut]
        cut += 1
    pid, read_end = _forked(lambda: step(items[:cut]))
    try:
        rest = step(items[cut:])
    finally:
        with os.fdopen(read_end, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
    if status != 0:  # the child failed: its part is done here
        return step(items[:cut]) + rest
    return pickle.loads(data) + rest  # nosec: written by our own forked child


def _forked(step: Callable[[], object]) -> tuple[int, int]:
    """(pid, read end of a pipe) of a forked child that runs `step`, writes its answer pickled to
    the pipe and leaves without any teardown (exit status 1 where the step failed)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        code = 1
        try:
            data = pickle.dumps(step(), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    return pid, read_end


class Ahead(Generic[R]):
    """`step()` started now in a forked child, its answer taken later (`result`): the native
    analyzer reads and judges FlashInfer's 313 MB of CUDA sources while this process reads its
    Python. A thread drains the pipe as the child writes, so the child ends when it is done (and
    `in_two` can tell the second core is free again). Where the child fails, `result` computes
    the step here."""

    def __init__(self, step: Callable[[], R]) -> None:
        self._step = step
        self._data: list[bytes] = []
        self._pid, read_end = _forked(step)
        self._reader = threading.Thread(target=self._drain, args=(read_end,), daemon=True)
        self._reader.start()
        _AHEAD.append(self)

    def _drain(self, fd: int) -> None:
        with os.fdopen(fd, "rb") as pipe:
            while chunk := pipe.read(1 << 20):
                self._data.append(chunk)

    def running(self) -> bool:
        return self._reader.is_alive()

    def result(self) -> R:
        self._reader.join()
        _, status = os.waitpid(self._pid, 0)
        _AHEAD.remove(self)
        if status != 0:  # the child failed: the step is done here
            return self._step()
        return pickle.loads(b"".join(self._data))  # type: ignore[no-any-return]  # nosec: our own child


_AHEAD: list[Ahead[object]] = []  # children started and not yet answered


def ahead_running() -> bool:
    """Is a child started ahead still at work (the cores it uses are taken)?"""
    return any(a.running() for a in _AHEAD)


def can_fork() -> bool:
    return _can_fork()


def _can_fork() -> bool:
    import multiprocessing

    return hasattr(os, "fork") and "fork" in multiprocessing.get_all_start_methods()
