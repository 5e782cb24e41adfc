"""output.table draws tables that fit without rich's layout engine: the text must be exactly
what rich's Table prints, and styled alike on a terminal."""

from __future__ import annotations

import io
import random
import re

import pytest
from rich.console import Console
from rich.table import Table

from capgap.table_text import table_text

COLUMNS = ("patch", "file", "outcome", "detail")
WORDS = [
    "p000",
    "pkg/mod000.py",
    "[green]applied[/green]",
    "[red]conflict[/red]",
    "exact",
    "3-way merge over upstream changes",
    "",
    "\\\\[not markup]",
    "naïve ünïcödé",
    "全角の文字",
    "a:thumbs_up:b",
    "x" * 30,
]


def _console(width: int, color: bool = False) -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    if color:
        return Console(
            file=buf, width=width, force_terminal=True, color_system="truecolor", highlight=False
        ), buf
    return Console(file=buf, width=width, soft_wrap=False, highlight=False), buf


def _rich(title: str | None, columns: tuple[str, ...], rows: list[list[str]], width: int) -> str:
    console, buf = _console(width)
    t = Table(title=title, title_justify="left", show_lines=False)
    for col in columns:
        t.add_column(col)
    for row in rows:
        t.add_row(*row)
    console.print(t)
    return buf.getvalue()


def _fast(
    title: str | None, columns: tuple[str, ...], rows: list[list[str]], width: int, color: bool = False
):
    console, buf = _console(width, color)
    text = table_text(console, title, columns, rows)
    if text is None:
        return None
    console.print(text, soft_wrap=True)
    return buf.getvalue()


def test_a_result_table_is_exactly_what_rich_prints() -> None:
    rows = [[f"p{i:03d}", f"pkg/mod{i:03d}.py", "[green]applied[/green]", "exact"] for i in range(100)]
    assert _fast("apply on repo@30ed98e943", COLUMNS, rows, 80) == _rich(
        "apply on repo@30ed98e943", COLUMNS, rows, 80
    )


@pytest.mark.parametrize("seed", range(40))
def test_random_tables_that_fit_are_identical_to_rich(seed: int) -> None:
    rng = random.Random(seed)
    ncols = rng.randint(1, 4)
    columns = COLUMNS[:ncols]
    rows = [[rng.choice(WORDS) for _ in range(ncols)] for _ in range(rng.randint(0, 6))]
    title = rng.choice([None, "", "apply on x", "a [bold]title[/bold]", "t" * 70])
    width = rng.choice([40, 80, 120])
    fast = _fast(title, columns, rows, width)
    if fast is not None:
        assert fast == _rich(title, columns, rows, width)


def test_what_would_wrap_or_break_lines_is_left_to_rich() -> None:
    assert _fast(None, COLUMNS, [["a", "b", "c", "d" * 100]], 80) is None  # too wide: rich wraps it
    assert _fast(None, ("a",), [["two\nlines"]], 80) is None
    assert _fast(None, ("a",), [["tab\there"]], 80) is None
    assert _fast("a title far longer than the table", ("a",), [["x"]], 80) is None


def test_on_a_terminal_the_fast_table_has_rich_styles_and_the_same_text() -> None:
    rows = [["p1", "f.py", "[green]applied[/green]", "exact"]]
    coloured = _fast("apply on x", COLUMNS, rows, 80, color=True)
    assert coloured is not None
    assert "\x1b[32mapplied" in coloured  # green outcome
    assert "\x1b[1mpatch" in coloured  # bold header
    assert "\x1b[3mapply on x" in coloured  # italic title
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == _rich("apply on x", COLUMNS, rows, 80)
