"""What a process that ends without teardown (cli._exit_now: os._exit) need never free.

A scan's facts are a million small syntax nodes; dropping them when the analyzer returns took
~25 ms of a ~2 s scan, spent only to hand memory back to a process about to end. A process that
will end that way says so first (`ends_without_teardown`); anywhere else, such as the tests and
other callers of `run_scan`, `keep_until_exit` keeps nothing.
"""

from __future__ import annotations

_ends_hard = False
_kept: list[object] = []


def ends_without_teardown() -> None:
    global _ends_hard
    _ends_hard = True


def ends_hard() -> bool:
    return _ends_hard


def keep_until_exit(obj: object) -> None:
    if _ends_hard:
        _kept.append(obj)
