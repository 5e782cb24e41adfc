"""`capgap scan TARGET... --arch ARCH`: where the target lacks an entry for a GPU architecture."""

from __future__ import annotations

import os
from typing import Optional

import typer

from capgap.commands import finish

FORMATS = ("text", "json", "sarif", "html")
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
    fmt: str = typer.Option(
        "text", "--format", "-f", help="text | json | sarif | html (one self-contained page)"
    ),
    fail_on: Optional[str] = typer.Option(  # noqa: UP045
        None, "--fail-on", help="Exit 1 when a finding is at least this severe (default: high)."
    ),
    show_all: bool = typer.Option(False, "--all", help="Also show low (expected) gate findings in text."),
    no_binaries: bool = typer.Option(False, "--no-binaries", help="Skip compiled-library checks."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Parse every file again; ignore the cache."),
    device: Optional[list[str]] = typer.Option(  # noqa: UP045
        None, "--device", help="GPU name for tuned-config coverage (repeatable). Default: probed GPUs."
    ),
    jobs: int = typer.Option(0, "--jobs", "-j", help="Worker processes (0: one per core)."),
    max_shown: int = typer.Option(
        0, "--max", help="Text: show at most N findings (0: all); the summary says how many hid."
    ),
    where: str = typer.Option(
        "runtime", "--where", help="Text, html: runtime (no tests, benchmarks, examples) | test | all."
    ),
    model: Optional[str] = typer.Option(  # noqa: UP045
        None, "--model", help="Text, html: the runtime's findings plus only this model's files (deepseek_v2)."
    ),
    config: Optional[str] = typer.Option(  # noqa: UP045
        None, "--config", help="Configuration file (default: capgap.toml or pyproject.toml, upward)."
    ),
    no_config: bool = typer.Option(False, "--no-config", help="Read no configuration file."),
    select: Optional[list[str]] = typer.Option(  # noqa: UP045
        None, "--select", help="Report only these rule ids (comma-separated; replaces the config's)."
    ),
    ignore: Optional[list[str]] = typer.Option(  # noqa: UP045
        None, "--ignore", help="Do not report these rule ids (comma-separated; replaces the config's)."
    ),
    baseline: Optional[str] = typer.Option(  # noqa: UP045
        None, "--baseline", help="Compare with an earlier scan's JSON: new, gone, unchanged."
    ),
    write_baseline: Optional[str] = typer.Option(  # noqa: UP045
        None, "--write-baseline", help="Write this scan's findings to FILE, for --baseline."
    ),
    against: Optional[str] = typer.Option(  # noqa: UP045
        None, "--against", help="Compare with an older target (version, wheel, directory, dist)."
    ),
    store: Optional[str] = typer.Option(  # noqa: UP045
        None, "--store", help="Patch store whose patches --against checks (default: as `capgap patch`)."
    ),
) -> None:
    """Find tables, gates and build lists in a target that have no entry for your GPU's arch."""
    from capgap.reading.grepfilter import prefetch

    for spec in targets:  # a directory: grep starts reading it while the rest of capgap loads
        prefetch(os.path.realpath(os.path.expanduser(spec)))  # a loop of links: resolve_target says so
    from capgap import output
    from capgap.errors import UsageError
    from capgap.scan.analyzers import ScanOptions
    from capgap.scan.living import Comparison
    from capgap.scan.machine import resolve_archs_and_devices
    from capgap.scan.run import run_scan
    from capgap.settings import discover, with_rules

    if fmt not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    settings = with_rules(discover(config, no_config), select or [], ignore or [])
    fail_on = fail_on or settings.fail_on or "high"
    if fail_on not in SEVERITIES:
        raise UsageError(f"--fail-on must be one of {', '.join(SEVERITIES)}, not {fail_on!r}")
    from capgap.scan.view import ViewOptions, check_options

    view = ViewOptions(show_all=show_all, where=where, model=model, max=max_shown)
    check_options(view)  # a bad filter fails before the scan, not after it
    comparison = Comparison(baseline, write_baseline, against, store)
    old = comparison.check(len(targets))  # a bad baseline fails before any work
    archs, devices = resolve_archs_and_devices(arch or list(settings.arch), device or list(settings.device))
    options = ScanOptions(
        archs=archs,
        binaries=not no_binaries,
        use_cache=not no_cache,
        devices=devices,
        jobs=max(jobs, 0),
        vendored=show_all,
    )
    report = run_scan(targets, options, python)
    comparison.apply(report, old, options, settings, python)
    if fmt == "json":
        output.emit_json(report.to_json())
    elif fmt == "sarif":
        from capgap.scan.sarif import to_sarif

        output.emit_json(to_sarif(report))
    elif fmt == "html":
        from capgap.scan.html import render_html

        output.raw(render_html(report, view))
    else:
        from capgap.scan.render import render_text

        render_text(report, view)
    finish(1 if report.worst_at_or_above(fail_on) else 0)


def register(app: typer.Typer) -> None:
    app.command("scan")(scan)
