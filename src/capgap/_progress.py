"""A progress bar on stderr that appears only once a task has run for a second.

Most runs never show it (short, or stderr is a pipe or a file), so rich is imported only when the
delay has passed and the stream may be a terminal: importing rich.console costs ~60 ms.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from types import TracebackType
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID


def may_be_terminal(stream: IO[str], environ: dict[str, str] | os._Environ[str] | None = None) -> bool:
    """False only where rich's Console.is_terminal surely says False for `stream` (without rich).

    The same tests rich makes (TTY_COMPATIBLE, FORCE_COLOR, isatty), answering True when in doubt:
    a Console made afterwards has the last word.
    """
    env = os.environ if environ is None else environ
    tty_compatible = env.get("TTY_COMPATIBLE", "")
    if tty_compatible in ("0", "1"):
        return tty_compatible == "1"
    if env.get("FORCE_COLOR") is not None or env.get("FORCE_TERMINAL") is not None:
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty is not None and isatty())
    except ValueError:  # closed stream
        return False


class DelayedProgress:
    """`console`: a rich Console, or a function making one (called only when the bar may show).

    `may_show`: asked once, when the delay has passed and before `console` is made; False means
    the stream is not a terminal and the bar never shows.
    """

    def __init__(
        self,
        total: int,
        description: str,
        console: Console | Callable[[], Console],
        delay_s: float = 1.0,
        may_show: Callable[[], bool] | None = None,
    ) -> None:
        self._total = total
        self._description = description
        self._console = console
        self._may_show = may_show
        self._delay = delay_s
        self._start = 0.0
        self._done = 0
        self._hidden = False  # decided: this stream shows no bar
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> DelayedProgress:
        self._start = time.monotonic()
        return self

    def advance(self, n: int = 1) -> None:
        self._done += n
        if self._progress is None:
            if self._hidden or time.monotonic() - self._start < self._delay:
                return
            console = self._terminal_console()
            if console is None:
                self._hidden = True
                return
            from rich.progress import Progress

            self._progress = Progress(console=console, transient=True)
            self._progress.start()
            self._task = self._progress.add_task(self._description, total=self._total)
        assert self._task is not None
        self._progress.update(self._task, completed=self._done)

    def _terminal_console(self) -> Console | None:
        if self._may_show is not None and not self._may_show():
            return None
        console = self._console if not callable(self._console) else self._console()
        return console if console.is_terminal else None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()
