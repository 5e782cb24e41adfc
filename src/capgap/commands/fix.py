"""`capgap fix TARGET --arch ARCH`: add the arch to every capability table that lacks it."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from capgap.commands import finish
from capgap.output import Format


class Prefer(str, Enum):
    upstream = "upstream"
    ours = "ours"


def register(app: typer.Typer) -> None:
    @app.command("fix")
    def fix(
        target: str = typer.Argument(..., help="A git checkout directory or an installed distribution name."),
        arch: str = typer.Option(..., "--arch", "-a", help="The GPU arch to add (12.0, sm_120, ...)."),
        values: Path | None = typer.Option(None, "--values", help="Values measured by `capgap tune` (JSON)."),
        like: str | None = typer.Option(None, "--like", help="Copy values from this arch's entries."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Print the diff; write nothing."),
        store: str | None = typer.Option(
            None, "--store", help="Patch store directory (default $CAPGAP_STORE or ./capgap-patches)."
        ),
        prefer: Prefer = typer.Option(
            Prefer.upstream, "--prefer", help="When a table already has the entry: keep upstream's or ours."
        ),
        configs: bool = typer.Option(False, "--configs", help="Also add the arch's kernel config files."),
        device: str | None = typer.Option(
            None,
            "--device",
            help="Declare the GPU (e.g. 'NVIDIA RTX PRO 6000 Blackwell Server Edition') instead of probing.",
        ),
        python: str | None = typer.Option(
            None, "--python", help="Interpreter whose environment holds TARGET."
        ),
        name: str | None = typer.Option(None, "--name", help="Name of the saved patch (default fix-sm_XYZ)."),
        only: list[str] = typer.Option(
            [], "--only", help="Fix only this table (NAME or Class.NAME); repeatable. Default: every table."
        ),
        paths: list[str] = typer.Option(
            [], "--path", help="Fix only in this file, directory or glob (relative to TARGET); repeatable."
        ),
        fmt: Format = typer.Option(Format.text, "--format", metavar="<text|json>", help="Output format."),
    ) -> None:
        """Insert the arch's entry into each capability table the scan finds without it.

        Values come from --values when it has them, else from a sibling arch (same family
        first, then the older arch with the most relevant features alike; --like overrides),
        marked in a comment as not measured. With --values, entries capgap copied earlier are
        replaced by the measured values; entries you typed only with --prefer ours. Every edit
        is saved in the patch store as a semantic patch, so `capgap upgrade` carries it over
        upstream changes.
        """
        from capgap import output
        from capgap.commands import text_or_json
        from capgap.semantic.fixrun import FixOptions, run_fix

        text_or_json(fmt, "fix")

        run = run_fix(
            FixOptions(
                target=target,
                arch=arch,
                values=values,
                like=like,
                dry_run=dry_run,
                store=store,
                prefer=prefer.value,
                configs=configs,
                device=device,
                python=python,
                name=name,
                only=tuple(only),
                paths=tuple(paths),
            )
        )
        for message in run.messages:
            output.info(message)
        for warning in run.plan.warnings():
            output.warn(warning)
        if fmt == Format.json:
            output.emit_json(run.to_json())
        else:
            _show(run, dry_run)
        finish(1 if run.plan.skipped else 0)


def _show(run, dry_run: bool) -> None:  # run: capgap.semantic.fixrun.FixRun
    from rich.markup import escape

    from capgap import output

    plan = run.plan
    if run.configs is not None:
        _show_configs(run.configs, dry_run)
    for kept in plan.kept:
        output.info(escape(kept))
    if not plan.entries and not plan.skipped:
        output.info(f"nothing to fix: every capability table has an entry for {plan.arch.cc}")
        return
    lines = [
        f"{e.edit.path}: {e.edit.symbol}[{e.edit.key}] = {_one_line(e.edit.value)}  ({_origin(e)})"
        for e in plan.entries
    ]
    for where, reason in plan.skipped:
        output.warn(f"not fixed: {where}: {reason}")
    for b in run.blockers:  # a chain: the entry alone does not turn the path on
        where = f"{b['path']}:{b['line']} `{b['source']}`"
        output.warn(escape(f"{b['table']}: still off after this fix: {where} ({b['why']})"))
    if dry_run:  # the diff alone on stdout, so it can be piped to `git apply`
        for line in lines:
            output.info(escape(line))
        output.raw(plan.diff())
        output.info("dry run: nothing written")
        return
    output.raw("".join(line + "\n" for line in lines))
    if run.patch:
        output.show(
            f"wrote {len(plan.changed)} file(s); saved as patch [bold]{run.patch}[/bold] in {run.store}"
        )


def _origin(entry) -> str:  # entry: capgap.semantic.fixer.PlannedEntry
    if entry.origin == "measured":
        return "measured" if entry.action != "replaced" else f"measured; {entry.reason}"
    if entry.origin == "partly-measured":
        return entry.edit.note
    return f"copied from {entry.copied_from}: {entry.reason}"


def _one_line(value: str) -> str:
    import ast

    try:
        return ast.unparse(ast.parse(value, mode="eval"))
    except SyntaxError:
        return " ".join(value.split())


def _show_configs(copies: list, dry_run: bool) -> None:  # copies: capgap.configs.fixer.ConfigCopy
    from capgap import output

    if not copies:
        output.info("configs: every tuned-config directory has this GPU's files")
    elif dry_run:  # stdout carries only the diff
        from rich.markup import escape

        for c in copies:
            output.info(escape(f"config {c.target_file}: would be {c.status} ({c.reason})"))
    else:
        from capgap.configs.report import show_config_copies

        show_config_copies(copies, dry_run)
