"""The typer app: wires verbs to their command modules, nothing else.

Each module under `capgap.commands` exposes `register(app)`; it keeps its top-level imports to
typer and the standard library and imports its library code inside the command body, so that
`capgap --help` stays fast. `main` registers only the verb a command line starts with (all of them
for help or anything else).
"""

from __future__ import annotations

import importlib
import sys

import typer

from capgap import __version__
from capgap.errors import EXIT_USAGE, CapgapError

# Order here is the order `capgap --help` lists them.
VERBS = ("probe", "arch", "scan", "binaries", "fix", "patch", "upgrade", "tune")


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


def _verbs_needed(args: list[str]) -> tuple[str, ...]:
    """Only the verb a command line runs, when it comes first (the root takes no arguments but
    --version and --help, which come before any verb): importing every command module and
    building every verb's click command costs ~20 ms. Anything else (help, a typo) gets all."""
    return (args[0],) if args and args[0] in VERBS else VERBS


def __getattr__(name: str) -> typer.Typer:
    if name == "app":  # the whole app, for whoever imports it
        return build_app()
    raise AttributeError(name)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; CapgapError becomes one line on stderr and its exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        build_app(_verbs_needed(args))(args=args, prog_name="capgap")  # standalone: ends in SystemExit
        code = 0
    except CapgapError as exc:
        from capgap import output

        output.error(str(exc))
        code = exc.exit_code
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_USAGE)
    except KeyboardInterrupt:
        code = 130
    if argv is None:
        sys.exit(code)
    return code
