"""Shared test fixtures. No test writes to the user's cache, store or home."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_capgap_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path_factory.mktemp("capgap-cache")
    monkeypatch.setenv("CAPGAP_CACHE_DIR", str(cache))
    from capgap import output

    output.reset_consoles()


@pytest.fixture(autouse=True)
def _no_default_patch_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """Like pre-commit's store fixture: the default ./capgap-patches raises, so no test writes to the cwd."""
    monkeypatch.delenv("CAPGAP_STORE", raising=False)

    def _forbidden() -> Path:
        raise AssertionError("a test used the default patch store (./capgap-patches); pass --store")

    monkeypatch.setattr("capgap.patches.store.default_store_dir", _forbidden)


@pytest.fixture(scope="session")
def wheel_cache() -> Path:
    """A cache for real wheels downloaded by integration tests, kept between runs."""
    base = Path(os.environ.get("CAPGAP_TEST_WHEELS", Path.home() / ".cache" / "capgap-test-wheels"))
    base.mkdir(parents=True, exist_ok=True)
    return base


@pytest.fixture
def no_hang() -> object:
    """Fail (instead of hanging the suite) when the test has not ended within 60 s: for tests
    that put a FIFO or a device where a reader that regressed would wait forever."""
    import signal

    def _hung(_signum: int, _frame: object) -> None:
        raise TimeoutError("still running after 60 s: a read that blocks?")

    previous = signal.signal(signal.SIGALRM, _hung)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)
