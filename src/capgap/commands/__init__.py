"""One thin module per CLI verb. Each exposes `register(app)` and ends by calling `finish(code)`."""

from __future__ import annotations

from typing import NoReturn

import typer


def text_or_json(fmt: object, verb: str) -> None:
    """A --format this verb cannot write is a usage error (not text in its place)."""
    value = getattr(fmt, "value", fmt)
    if value not in ("text", "json"):
        from capgap.errors import UsageError

        raise UsageError(f"--format {value}: capgap {verb} writes text or json (sarif is for scan)")


def finish(code: int) -> NoReturn:
    """End a command with its exit code (0 fine, 1 findings, 2 usage/environment)."""
    raise typer.Exit(code)
