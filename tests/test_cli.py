from __future__ import annotations

import subprocess
import sys

from capgap import __version__
from tests.cli_runner import run_cli


def test_version_prints_package_version() -> None:
    r = run_cli("--version")
    assert r.code == 0
    assert r.out.strip() == f"capgap {__version__}"


def test_unknown_verb_is_a_usage_error() -> None:
    r = run_cli("no-such-verb")
    assert r.code == 2


def test_module_entry_point_runs_without_install() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "capgap", "--version"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0
    assert __version__ in proc.stdout
