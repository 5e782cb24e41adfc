"""`capgap probe`: what this machine is (GPUs, interconnect, multicast) and what stack is installed."""

from __future__ import annotations

from typing import Optional

import typer

from capgap.commands import finish
from capgap.output import Format


def register(app: typer.Typer) -> None:
    app.command("probe")(probe)


def probe(
    python: Optional[str] = typer.Option(  # noqa: UP045 - older typer needs Optional
        None, "--python", help="Inventory the packages of another environment's interpreter."
    ),
    fmt: Format = typer.Option(
        Format.text, "--format", metavar="<text|json>", help="text (tables) or json (one object)."
    ),
) -> None:
    """Show this machine's GPUs, how they are joined, and the installed inference stack."""
    from capgap.errors import UsageError
    from capgap.probe.gpus import probe_machine
    from capgap.probe.report import render_probe
    from capgap.probe.stack import inventory

    if fmt is Format.sarif:
        raise UsageError("probe reports facts, not findings: use --format text or json")
    stack = inventory(python)
    machine = probe_machine()
    render_probe(machine, stack, fmt)
    finish(0)
