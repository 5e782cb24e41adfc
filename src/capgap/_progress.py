"""A progress bar on stderr that appears only once a task has run for a second."""

from __future__ import annotations

import time
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID


class DelayedProgress:
    def __init__(self, total: int, description: str, console: Console, delay_s: float = 1.0) -> None:
        self._total = total
        self._description = description
        self._console = console
        self._delay = delay_s
        self._start = 0.0
        self._done = 0
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> DelayedProgress:
        self._start = time.monotonic()
        return self

    def advance(self, n: int = 1) -> None:
        self._done += n
        if self._progress is None:
            if time.monotonic() - self._start < self._delay or not self._console.is_terminal:
                return
            from rich.progress import Progress

            self._progress = Progress(console=self._console, transient=True)
            self._progress.start()
            self._task = self._progress.add_task(self._description, total=self._total)
        assert self._task is not None
        self._progress.update(self._task, completed=self._done)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()
