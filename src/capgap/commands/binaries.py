"""`capgap binaries`: which GPU architectures each compiled library of a target can run on."""

from __future__ import annotations

from typing import Optional

import typer

from capgap.commands import finish
from capgap.output import Format  # stdlib-only at import time: startup stays fast


def register(app: typer.Typer) -> None:
    app.command("binaries")(binaries)


def binaries(
    targets: list[str] = typer.Argument(
        ..., metavar="TARGET...", help="Directory, file, dist, requirement or wheel."
    ),
    arch: list[str] = typer.Option(
        [], "--arch", "-a", help="GPU arch (12.0, sm_120, ...); repeatable. Default: this machine's GPUs."
    ),
    python: Optional[str] = typer.Option(  # noqa: UP045 - older typer needs Optional
        None, "--python", help="Interpreter whose environment holds installed targets."
    ),
    fmt: Format = typer.Option(
        Format.text, "--format", metavar="<text|json>", help="text (a table) or json (one object)."
    ),
    no_cache: bool = typer.Option(
        False, "--no-cache", help="Read every binary again (ignore capgap's cache)."
    ),
) -> None:
    """List each library's SASS and PTX archs and whether --arch runs it natively, via PTX JIT, or not
    at all ("no kernel image is available for execution on the device"). Needs no CUDA toolkit."""
    from capgap.binaries.report import audit_targets, render_json, render_text, resolve_archs
    from capgap.errors import EXIT_FINDINGS, EXIT_OK, UsageError

    if fmt == Format.sarif:
        raise UsageError("capgap binaries prints text or json")
    archs = resolve_archs(arch)
    results = audit_targets(targets, archs, python, use_cache=not no_cache)
    if fmt == Format.json:
        render_json(results, archs)
    else:
        render_text(results, archs)
    missing = any(lib.missing for _, audit in results for lib in audit.libraries)
    finish(EXIT_FINDINGS if missing else EXIT_OK)
