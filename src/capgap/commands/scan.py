"""`capgap scan TARGET... --arch ARCH`: where the target lacks an entry for a GPU architecture."""

from __future__ import annotations

import os
from typing import Optional

import typer

from capgap.commands import finish

FORMATS = ("text", "json", "sarif")
SEVERITIES = ("low", "medium", "high")


def scan(
    targets: list[str] = typer.Argument(
        ..., metavar="TARGET...", help="Directory, file, installed dist, pip requirement or wheel."
    ),
    arch: Optional[list[str]] = typer.Option(  # noqa: UP045 - typer reads the annotation
        None,
        "--arch",
        "-a",
        help="Target arch in any spelling (12.0, sm_120, 120); repeatable. "
        "Default: the archs of this machine's GPUs.",
    ),
    python: Optional[str] = typer.Option(  # noqa: UP045
        None, "--python", help="Interpreter whose environment holds installed-dist targets."
    ),
    fmt: str = typer.Option("text", "--format", "-f", help="text | json | sarif"),
    fail_on: str = typer.Option("high", "--fail-on", help="Exit 1 when a finding is at least this severe."),
    show_all: bool = typer.Option(False, "--all", help="Also show low (expected) gate findings in text."),
    no_binaries: bool = typer.Option(False, "--no-binaries", help="Skip compiled-library checks."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Parse every file again; ignore the cache."),
    device: Optional[list[str]] = typer.Option(  # noqa: UP045
        None, "--device", help="GPU name for tuned-config coverage (repeatable). Default: probed GPUs."
    ),
    jobs: int = typer.Option(0, "--jobs", "-j", help="Worker processes (0: one per core)."),
) -> None:
    """Find tables, gates and build lists in a target that have no entry for your GPU's arch."""
    from capgap.reading.grepfilter import prefetch

    for spec in targets:  # a directory: grep starts reading it while the rest of capgap loads
        prefetch(os.path.realpath(os.path.expanduser(spec)))  # a loop of links: resolve_target says so
    from capgap import output
    from capgap.errors import UsageError
    from capgap.scan.analyzers import ScanOptions
    from capgap.scan.machine import resolve_archs_and_devices
    from capgap.scan.run import run_scan

    if fmt not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if fail_on not in SEVERITIES:
        raise UsageError(f"--fail-on must be one of {', '.join(SEVERITIES)}, not {fail_on!r}")
    archs, devices = resolve_archs_and_devices(arch or [], device or [])
    options = ScanOptions(
        archs=archs,
        binaries=not no_binaries,
        use_cache=not no_cache,
        devices=devices,
        jobs=max(jobs, 0),
        vendored=show_all,
    )
    report = run_scan(targets, options, python)
    if fmt == "json":
        output.emit_json(report.to_json())
    elif fmt == "sarif":
        from capgap.scan.sarif import to_sarif

        output.emit_json(to_sarif(report))
    else:
        from capgap.scan.render import render_text

        render_text(report, show_all)
    finish(1 if report.worst_at_or_above(fail_on) else 0)


def register(app: typer.Typer) -> None:
    app.command("scan")(scan)
