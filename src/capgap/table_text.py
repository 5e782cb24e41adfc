"""A result table as one styled Text, drawn like rich's default Table, without its layout engine.

rich's Table measures, wraps and crops every cell through its renderer: about 4 ms a row, so a
100-row table took longer to print than `capgap patch apply` took to apply 100 patches. When
the table fits the console as it is (one line per cell, no wrapping), the layout is trivial:
each column as wide as its widest cell. `table_text` draws that case with the same box
characters, padding and styles (tests compare it with rich's output), and returns None for
anything else (too wide, multi-line or control characters, an ASCII-only console), which
output.table leaves to rich.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text


def table_text(
    console: Console, title: str | None, columns: Sequence[str], rows: list[list[str]]
) -> Text | None:
    from rich.box import HEAVY_HEAD
    from rich.text import Text

    if console.legacy_windows or console.options.ascii_only:
        return None
    if any(len(row) != len(columns) for row in rows):
        return None
    header = [console.render_str(c, style="table.header", highlight=False) for c in columns]
    body = [[console.render_str(c, highlight=False) for c in row] for row in rows]
    cells = [header, *body]
    if not all(_single_line(t.plain) for row in cells for t in row):
        return None
    inner = [max(cell.cell_len for cell in col) for col in zip(*cells, strict=True)] if columns else []
    widths = [w + 2 for w in inner]  # padding (0, 1)
    table_width = sum(widths) + len(widths) + 1
    if not columns or table_width > console.width:
        return None

    lines: list[Text] = []
    if title:
        heading = console.render_str(title, style="table.title", highlight=False)
        if not _single_line(heading.plain) or heading.cell_len > table_width:
            return None
        heading.append(" " * (table_width - heading.cell_len), style="table.title")
        lines.append(heading)
    box = HEAVY_HEAD
    lines.append(Text(box.get_top(widths)))
    for index, row in enumerate(cells):
        if index == 0:
            left, divider, right = box.head_left, box.head_vertical, box.head_right
        elif index == len(cells) - 1:
            left, divider, right = box.foot_left, box.foot_vertical, box.foot_right
        else:
            left, divider, right = box.mid_left, box.mid_vertical, box.mid_right
        line = Text(left)
        for n, (cell, width) in enumerate(zip(row, inner, strict=True)):
            if n:
                line.append(divider)
            style = "table.header" if index == 0 else ""
            line.append(" ", style=style)
            line.append_text(cell)
            line.append(" " * (width - cell.cell_len + 1), style=style)
        line.append(right)
        lines.append(line)
        if index == 0:
            lines.append(Text(box.get_row(widths, "head", edge=True).rstrip("\n")))
    lines.append(Text(box.get_bottom(widths)))
    return Text("\n").join(lines)


def _single_line(text: str) -> bool:
    """No newline, tab or other control character (rich would wrap, expand or strip them)."""
    return text.isprintable()
