"""Run the capgap CLI in-process and capture what it printed, for tests."""

from __future__ import annotations

import io
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass


@dataclass
class Result:
    code: int
    out: str
    err: str


def run_cli(*args: str) -> Result:
    from capgap import output
    from capgap.cli import main

    out, err = io.StringIO(), io.StringIO()
    output.reset_consoles()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    output.reset_consoles()
    sys.stdout.flush()
    return Result(code, out.getvalue(), err.getvalue())
