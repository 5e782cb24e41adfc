"""`capgap upgrade TARGET -- CMD...`: save local changes, run the upgrade, re-apply them."""

from __future__ import annotations

import typer

from capgap.commands import finish
from capgap.output import Format


def upgrade(
    target: str = typer.Argument(..., help="A git checkout directory or an installed distribution name."),
    cmd: list[str] = typer.Argument(
        None, help="The upgrade command, after `--` (git pull, pip install -U ...)."
    ),
    name: str | None = typer.Option(None, "--name", help="Name for the patch of unsaved local changes."),
    rollback_on_conflict: bool = typer.Option(
        False, "--rollback-on-conflict", help="Restore the pre-upgrade state when a patch conflicts."
    ),
    conflict: str = typer.Option("untouched", "--conflict", help="untouched | markers"),
    strict: bool = typer.Option(False, "--strict", help="Warnings are failures: exit 1."),
    store: str | None = typer.Option(None, "--store", help="Patch store directory."),
    python: str | None = typer.Option(None, "--python", help="Interpreter whose environment holds the dist."),
    fmt: Format = typer.Option(Format.text, "--format", metavar="<text|json>", help="Output format."),
) -> None:
    """Save every local change, put pristine files back, run CMD, re-apply every patch.

    CMD's own output is shown as it runs, on stderr, between capgap's lines (`capgap: ...`)."""
    from capgap import output
    from capgap.commands import text_or_json
    from capgap.errors import UsageError

    text_or_json(fmt, "upgrade")
    from capgap.patches.report import exit_code, print_results
    from capgap.patches.store import Store, store_dir
    from capgap.patches.upgrade import upgrade as do_upgrade

    if conflict not in {"untouched", "markers"}:
        raise UsageError("--conflict must be 'untouched' or 'markers'")
    report = do_upgrade(
        Store(store_dir(store)),
        target,
        list(cmd or []),
        python=python,
        name=name,
        rollback_on_conflict=rollback_on_conflict,
        markers=conflict == "markers",
    )
    for note in report.notes:
        output.info(note)
    for msg in report.messages:
        output.warn(msg)
    if fmt == Format.json:
        output.emit_json(report.to_json())
    else:
        if report.saved:
            output.show(f"saved unsaved local changes as patch [bold]{report.saved}[/bold]")
        names = sorted(set(report.versions_before) | set(report.versions_after))
        rows = [(n, report.versions_before.get(n, "-"), report.versions_after.get(n, "-")) for n in names]
        output.table(f"upgrade of {report.target}", ("package", "before", "after"), rows)
        if report.results:
            print_results(report.results, "patches")
        if report.rolled_back:
            output.show(f"[yellow]pre-upgrade state restored[/yellow]: {report.rolled_back}")
    code = exit_code(report.results, strict)
    finish(1 if report.rolled_back else code)


def register(app: typer.Typer) -> None:
    app.command("upgrade")(upgrade)
