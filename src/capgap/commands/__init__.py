"""One thin module per CLI verb. Each exposes `register(app)` and ends by calling `finish(code)`."""

from __future__ import annotations

from typing import NoReturn

import typer


def finish(code: int) -> NoReturn:
    """End a command with its exit code (0 fine, 1 findings, 2 usage/environment)."""
    raise typer.Exit(code)
