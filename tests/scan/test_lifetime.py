"""A scan process that ends without teardown keeps its facts and hides them from the collector;
anywhere else (tests, other callers of run_scan) nothing is kept or frozen."""

from __future__ import annotations

import gc

import pytest

from capgap import lifetime
from capgap.reading.nogc import gc_paused


def test_nothing_is_kept_or_frozen_in_a_process_that_ends_normally() -> None:
    kept = list(lifetime._kept)
    frozen = gc.get_freeze_count()
    with gc_paused():
        lifetime.keep_until_exit([object() for _ in range(100)])
    assert lifetime._kept == kept
    assert gc.get_freeze_count() == frozen


def test_a_process_ending_without_teardown_keeps_and_freezes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lifetime, "_ends_hard", True)
    monkeypatch.setattr(lifetime, "_kept", [])
    facts = [[object()] for _ in range(1000)]
    try:
        with gc_paused():
            lifetime.keep_until_exit(facts)
            assert not gc.isenabled()
        assert lifetime._kept == [facts]
        assert gc.isenabled() and gc.get_freeze_count() >= 1000  # out of the collector's sight
    finally:
        gc.unfreeze()
