"""Run one step over a list on two cores: a forked child takes the first part, this process the rest.

Judging the gates (~1,700 on an engine tree, helpers followed across files) is the scan's last
long step, ~0.2 s while the other core idles. A forked child inherits every file's facts
without a copy or a pickle; only its findings come back, pickled through a pipe. Without fork
(Windows, macOS's default), or when the child fails, this process does all of it.
"""

from __future__ import annotations

import os
import pickle  # nosec: only a child of this process writes what is read back
from collections.abc import Callable
from typing import TypeVar

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
    if jobs < 2 or total < MIN_WEIGHT or not _can_fork():
        return step(items)
    cut, done = 0, 0
    while cut < len(items) and done + weights[cut] <= total * CHILD_SHARE:
        done += weights[cut]
        cut += 1
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its part, pickled to the pipe, then out without any teardown
        os.close(read_end)
        code = 1
        try:
            data = pickle.dumps(step(items[:cut]), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    try:
        rest = step(items[cut:])
    finally:
        with os.fdopen(read_end, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
    if status != 0:  # the child failed: its part is done here
        return step(items[:cut]) + rest
    return pickle.loads(data) + rest  # nosec: written by our own forked child


def _can_fork() -> bool:
    import multiprocessing

    return hasattr(os, "fork") and "fork" in multiprocessing.get_all_start_methods()
