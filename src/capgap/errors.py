"""The error hierarchy and its exit codes; `handle` is the one top-level handler.

Exit codes shared by every verb: 0 fine, 1 findings/problems, 2 usage or environment error.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


class CapgapError(Exception):
    """Base of every error capgap reports as one line and an exit code (never a traceback)."""

    exit_code = EXIT_USAGE


class UsageError(CapgapError):
    """The user asked for something malformed: a bad spelling, a missing option, a bad file."""


class EnvironmentProblem(CapgapError):
    """The environment can't do what was asked: no pip, no git, an unreachable index."""


class TargetError(CapgapError):
    """A scan/patch target could not be resolved (no such path, dist or wheel)."""


class StoreError(CapgapError):
    """The patch store is missing, locked, malformed or would lead outside its root."""


class ConflictError(CapgapError):
    """A patch could not be applied; the tree was left untouched or rolled back."""

    exit_code = EXIT_FINDINGS
