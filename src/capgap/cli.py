"""The entry point: `main` runs the verb a command line names.

The typer app lives in `capgap.app`; this module imports nothing heavy, so that `capgap scan DIR`
can start grep over DIR (grepfilter.prefetch_command_line) before typer and the rest of capgap
load: grep then reads the tree on the idle core during the ~0.1 s of start-up. `main` registers
only the verb a command line starts with (all of them for help or anything else).
"""

from __future__ import annotations

import sys

from capgap.errors import EXIT_USAGE, CapgapError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing before grep starts
if TYPE_CHECKING:
    from typing import Any

    import typer

# Order here is the order `capgap --help` lists them.
VERBS = ("probe", "arch", "scan", "binaries", "fix", "patch", "upgrade", "tune")


def build_app(verbs: tuple[str, ...] = VERBS) -> typer.Typer:
    """The typer app with these verbs' commands (in VERBS order)."""
    from capgap.app import build_app as build

    return build(verbs)


def _verbs_needed(args: list[str]) -> tuple[str, ...]:
    """Only the verb a command line runs, when it comes first (the root takes no arguments but
    --version and --help, which come before any verb): importing every command module and
    building every verb's click command costs ~20 ms. Anything else (help, a typo) gets all."""
    return (args[0],) if args and args[0] in VERBS else VERBS


def __getattr__(name: str) -> Any:
    if name == "app":  # the whole app, for whoever imports it
        return build_app()
    raise AttributeError(name)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; CapgapError becomes one line on stderr and its exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    scanning = args[:1] == ["scan"]
    if scanning:
        from capgap.reading.grepfilter import prefetch_command_line

        prefetch_command_line(args[1:])
        if argv is None:  # this process ends in _exit_now: what it allocated need not be freed
            from capgap.lifetime import ends_without_teardown

            ends_without_teardown()
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
    if scanning:  # a grep nobody collected (a usage error came first): stop it
        from capgap.reading.grepfilter import discard_all

        discard_all()
    if argv is None:
        if scanning:
            _exit_now(code)
        sys.exit(code)
    return code


def _exit_now(code: int) -> None:
    """End a scan process without the interpreter's teardown, as mypy does: tearing down every
    module and collecting what is left took 70-100 ms of a ~2 s scan (10 ms this way). A scan
    writes its cache files in `with` blocks and has joined its workers and grep by now, so only
    the standard streams hold unwritten data."""
    import contextlib
    import os

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe (`| head`): nothing to save
            stream.flush()
    os._exit(code)
