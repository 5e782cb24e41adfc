"""The one place that prints.

Results go to stdout (rich text, or one JSON object); messages, warnings and progress go to
stderr, so `capgap ... --format json | jq` always sees clean JSON.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rich is imported lazily: `capgap --help` must start fast
    from rich.console import Console, RenderableType

    from capgap._progress import DelayedProgress


class Format(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"


_stdout: Console | None = None
_stderr: Console | None = None
# Into a pipe or a file nothing is folded or cut: rich would lay results out for 80 columns
# (wrapped table cells, paths cut to `sglang/srt/distributed/d...`); so the console is as wide
# as any line can be, and tables take their natural width.
PIPE_WIDTH = 100_000


def stdout() -> Console:
    global _stdout
    if _stdout is None:
        from rich.console import Console

        _stdout = Console(soft_wrap=False, highlight=False)
        if not _stdout.is_terminal:
            _stdout = Console(soft_wrap=False, highlight=False, width=PIPE_WIDTH)
    return _stdout


def stdout_is_terminal() -> bool:
    return stdout().is_terminal


def stderr() -> Console:
    global _stderr
    if _stderr is None:
        from rich.console import Console

        _stderr = Console(stderr=True, highlight=False, soft_wrap=True)  # one message, one line
    return _stderr


def reset_consoles() -> None:
    """Forget cached consoles (tests swap sys.stdout/sys.stderr under us)."""
    global _stdout, _stderr
    _stdout = _stderr = None


def emit_json(obj: Any) -> None:
    """Write one JSON object to stdout."""
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False, default=_json_default) + "\n")
    sys.stdout.flush()


def _json_default(value: Any) -> Any:
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    return str(value)


def raw(text: str) -> None:
    """Write text to stdout exactly as it is: no markup, no wrapping (diffs users pipe to `patch`)."""
    sys.stdout.write(text)
    sys.stdout.flush()


def passthrough(text: str) -> None:
    """Another program's output, as it comes (the upgrade command's): raw, on stderr."""
    sys.stderr.write(text)
    sys.stderr.flush()


def show(renderable: RenderableType | str, soft_wrap: bool = False) -> None:
    """Print a result (a rich renderable or markup string) to stdout; soft_wrap: never fold lines."""
    stdout().print(renderable, soft_wrap=soft_wrap)


def table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """Print a rich table of plain cells to stdout (drawn directly when it fits: table_text.py)."""
    from capgap.table_text import table_text

    cells = [["" if c is None else str(c) for c in row] for row in rows]
    fast = table_text(stdout(), title, columns, cells)
    if fast is not None:
        stdout().print(fast, soft_wrap=True)
        return
    from rich.table import Table

    t = Table(title=title, title_justify="left", show_lines=False)
    for col in columns:
        t.add_column(col)
    for row in cells:
        t.add_row(*row)
    stdout().print(t)


def info(message: str) -> None:
    stderr().print(message)


def warn(message: str) -> None:
    stderr().print(f"[yellow]warning:[/yellow] {message}")


def error(message: str) -> None:
    stderr().print(f"[red]error:[/red] {message}", markup=True, highlight=False)


def progress(total: int, description: str, delay_s: float = 1.0) -> DelayedProgress:
    """A progress bar on stderr that shows up only when the work runs longer than `delay_s`.

    The stderr Console (and rich) is made only once the bar may show: not at all when stderr is
    a pipe or a file, which is most runs.
    """
    from capgap._progress import DelayedProgress, may_be_terminal

    if _stderr is not None:
        return DelayedProgress(total, description, _stderr, delay_s)
    return DelayedProgress(total, description, stderr, delay_s, lambda: may_be_terminal(sys.stderr))
