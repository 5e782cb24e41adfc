"""The typer app: wires verbs to their command modules, nothing else.

Each module under `capgap.commands` exposes `register(app)`; it keeps its top-level imports to
typer and the standard library and imports its library code inside the command body, so that
`capgap --help` stays fast.
"""

from __future__ import annotations

import importlib

import typer

from capgap import __version__
from capgap.cli import VERBS


def _version(value: bool) -> None:
    if value:
        typer.echo(f"capgap {__version__}")
        raise typer.Exit()


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Find and fix what your LLM inference stack lacks for the GPUs it runs on."""


def build_app(verbs: tuple[str, ...] = VERBS) -> typer.Typer:
    """The typer app with these verbs' commands (in VERBS order)."""
    app = typer.Typer(
        name="capgap",
        help="Find and fix what your LLM inference stack lacks for the GPUs it runs on.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        # Plain click help: typer's rich help pulls in rich.markdown, markdown_it and pygments, which
        # cost more than the 150 ms start-up budget (benchmarks/startup.py measures it).
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_root)
    for verb in VERBS:
        if verb not in verbs:
            continue
        try:
            module = importlib.import_module(f"capgap.commands.{verb}")
        except ModuleNotFoundError as exc:  # a verb still being built must not break the others
            if exc.name != f"capgap.commands.{verb}":
                raise
            continue
        module.register(app)
    return app
