"""`capgap arch SPELLING`: what the facts say about one GPU architecture."""

from __future__ import annotations

import typer

from capgap.commands import finish
from capgap.output import Format


def register(app: typer.Typer) -> None:
    app.command("arch")(arch)


def arch(
    spelling: str = typer.Argument(..., help="Any spelling: 12.0, 120, sm_120a, compute_100f, '(9, 0)', ..."),
    fmt: Format = typer.Option(
        Format.text, "--format", metavar="<text|json>", help="text (table) or json (one object)."
    ),
) -> None:
    """Show what capgap knows about one compute capability (features, memory, interconnect)."""
    from capgap.arch import parse_arch
    from capgap.errors import UsageError
    from capgap.probe.report import render_arch

    if fmt is Format.sarif:
        raise UsageError("arch reports facts, not findings: use --format text or json")
    render_arch(parse_arch(spelling), fmt)
    finish(0)
