"""The delayed progress bar: drawn on a terminal once the delay has passed, never otherwise, and
rich is not even imported when stderr is not a terminal."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time

import pytest
from rich.console import Console

from capgap._progress import DelayedProgress, may_be_terminal


def _terminal(buf: io.StringIO) -> Console:
    return Console(file=buf, force_terminal=True, width=80, color_system=None)


def test_bar_shows_on_a_terminal_after_the_delay() -> None:
    buf = io.StringIO()
    with DelayedProgress(10, "reading files", _terminal(buf), delay_s=0.05) as bar:
        bar.advance()
        assert buf.getvalue() == ""  # still inside the delay
        time.sleep(0.06)
        for _ in range(9):
            bar.advance()
    out = buf.getvalue()
    assert "reading files" in out
    assert "100%" in out  # the last update drew the finished bar


def test_no_bar_before_the_delay() -> None:
    buf = io.StringIO()
    with DelayedProgress(1000, "reading files", _terminal(buf), delay_s=60) as bar:
        for _ in range(1000):
            bar.advance()
    assert buf.getvalue() == ""


def test_no_bar_when_not_a_terminal() -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False, width=80)
    with DelayedProgress(10, "reading files", console, delay_s=0) as bar:
        for _ in range(10):
            bar.advance()
    assert buf.getvalue() == ""


def test_console_factory_is_not_called_when_the_stream_is_no_terminal() -> None:
    made: list[Console] = []

    def factory() -> Console:
        made.append(Console(file=io.StringIO()))
        return made[-1]

    with DelayedProgress(5, "x", factory, delay_s=0, may_show=lambda: False) as bar:
        for _ in range(5):
            bar.advance()
    assert made == []


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("stream", [io.StringIO, _Tty])
@pytest.mark.parametrize(
    "env",
    [{}, {"TTY_COMPATIBLE": "0"}, {"TTY_COMPATIBLE": "1"}, {"FORCE_COLOR": "1"}, {"FORCE_COLOR": ""}],
)
def test_may_be_terminal_never_says_no_where_rich_says_terminal(stream: type, env: dict[str, str]) -> None:
    rich_says = Console(file=stream(), _environ=env).is_terminal
    ours = may_be_terminal(stream(), env)
    if rich_says:
        assert ours
    if not env and stream is io.StringIO:
        assert not ours  # the case that matters: a pipe or a file, nothing forced


_CHILD = """
import json, sys
from capgap import output
with output.progress(3, "capgap scan", delay_s=0) as bar:
    for _ in range(3):
        bar.advance()
print(json.dumps(sorted(m for m in sys.modules if m == "rich" or m.startswith("rich."))))
"""


def _child(env_extra: dict[str, str]) -> tuple[list[str], str]:
    forcing = ("TTY_COMPATIBLE", "FORCE_COLOR", "FORCE_TERMINAL")
    env = {k: v for k, v in os.environ.items() if k not in forcing}
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD], capture_output=True, text=True, env={**env, **env_extra}, check=True
    )
    return json.loads(proc.stdout), proc.stderr


def test_rich_is_not_imported_when_stderr_is_a_pipe() -> None:
    modules, err = _child({})
    assert modules == []
    assert err == ""


def test_rich_draws_the_bar_when_stderr_counts_as_a_terminal() -> None:
    modules, err = _child({"TTY_COMPATIBLE": "1"})  # rich's own switch: treat the pipe as a terminal
    assert "rich.progress" in modules
    assert "capgap scan" in err
